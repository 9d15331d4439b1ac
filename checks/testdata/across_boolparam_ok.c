// SPDX-License-Identifier: GPL-2.0
/* The inline decision is passed to the posting helper as a bool. Two
 * callers: the data path compares with the granted size, so does the
 * ping path. */
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
static int tc_post(struct tc_c *c, struct ib_send_wr *wr, struct ib_sge *sge, bool small)
{
	if (small) {
		sge->addr = (uintptr_t)c->buf;
		wr->send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(c->qp, wr, NULL);
}

static int tc_send(struct tc_c *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = c->buf_dma;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	return tc_post(c, &wr, &sge, len <= c->max_inline);
}

static int tc_ping(struct tc_c *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = c->buf_dma;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	return tc_post(c, &wr, &sge, len <= c->max_inline);
}
