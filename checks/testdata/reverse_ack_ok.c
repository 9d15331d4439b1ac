// SPDX-License-Identifier: GPL-2.0
/* Two SGEs: a header mapped for DMA and a small trailer. Data goes
 * inline; the acknowledgement built by another function is never inline
 * and points its second SGE at the trailer's DMA mapping. */
struct tc_trailer {
	u32 seq;
	u32 crc;
};

struct tc_link {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *hdr;
	u64 hdr_dma;
	struct tc_trailer tr;
	u64 tr_dma;
	struct ib_sge sge[2];
	u32 max_inline;
};

static int tc_link_qp(struct tc_link *l, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 64;
	rc = rdma_create_qp(id, l->pd, &qa);
	if (rc)
		return rc;
	l->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void tc_link_map(struct ib_device *dev, struct tc_link *l)
{
	l->hdr_dma = ib_dma_map_single(dev, l->hdr, 32, DMA_TO_DEVICE);
	l->tr_dma = ib_dma_map_single(dev, &l->tr, sizeof(l->tr), DMA_TO_DEVICE);
}

static int tc_link_data(struct tc_link *l, void *data, u32 len)
{
	struct ib_send_wr wr = {};

	if (len > l->max_inline)
		return -EMSGSIZE;
	l->sge[0].addr = (uintptr_t)data;
	l->sge[0].length = len;
	wr.sg_list = l->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(l->qp, &wr, NULL);
}

static int tc_link_ack(struct tc_link *l)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	l->sge[0].addr = l->hdr_dma;
	l->sge[0].length = 32;
	l->sge[1].addr = l->tr_dma;
	l->sge[1].length = sizeof(l->tr);
	wr.sg_list = l->sge;
	wr.num_sge = 2;
	return ib_post_send(l->qp, &wr, NULL);
}
