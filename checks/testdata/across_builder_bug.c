// SPDX-License-Identifier: GPL-2.0
/* A builder (ipoib_build_sge()-style) fills a header SGE with the
 * buffer's virtual address and a data SGE with a DMA address, and sets
 * num_sge. Only the header may go inline;
 * this caller passes data too. */
struct tc_c {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *buf;
	u64 buf_dma;
	u32 max_inline;
	int txflags;
};

static int tc_qp(struct tc_c *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, c->pd, &qa);
	c->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static void tc_map(struct ib_device *dev, struct tc_c *c)
{
	c->buf_dma = ib_dma_map_single(dev, c->buf, 64, DMA_TO_DEVICE);
}
static void tc_build(struct tc_c *c, struct ib_send_wr *wr, struct ib_sge *sge, u32 hlen, u32 dlen)
{
	sge[0].addr = (uintptr_t)c->buf;
	sge[0].length = hlen;
	sge[0].lkey = c->pd->local_dma_lkey;
	sge[1].addr = c->buf_dma;
	sge[1].length = dlen;
	sge[1].lkey = c->pd->local_dma_lkey;
	wr->sg_list = sge;
	wr->num_sge = 2;
}

static int tc_send_hdr(struct tc_c *c, u32 hlen, u32 dlen)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge[2];

	if (hlen > c->max_inline)
		return -EMSGSIZE;
	tc_build(c, &wr, sge, hlen, dlen);
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE; /* want: inline-size */
	return ib_post_send(c->qp, &wr, NULL); /* want: inline-sge-addr */
}
