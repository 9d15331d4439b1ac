// SPDX-License-Identifier: GPL-2.0
/* A notify message goes inline from one of two buffers: the large one
 * when the message is long, the slot otherwise. The long path gives the
 * mapping (a DMA address), the short one an integer the module never
 * shows to be an address: one wrong post, reported once. */
#define RP_SLOT 32

struct rp_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	void *big;
	void *slot;
	u64 big_dma;
	u64 slot_addr;
};

static int rp_qp(struct rp_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, c->pd, &qa);
	if (rc)
		return rc;
	c->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void rp_map(struct ib_device *dev, struct rp_conn *c)
{
	c->big_dma = ib_dma_map_single(dev, c->big, 512, DMA_TO_DEVICE);
}

static int rp_notify(struct rp_conn *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > c->max_inline)
		return -EMSGSIZE;
	if (len > RP_SLOT)
		sge.addr = c->big_dma;
	else
		sge.addr = c->slot_addr;
	sge.length = len;
	sge.lkey = c->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(c->qp, &wr, NULL); /* want: inline-sge-addr */
}
