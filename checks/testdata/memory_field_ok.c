// SPDX-License-Identifier: GPL-2.0
/* The flags are kept in a field of the connection, decided and then copied
 * into the request in the same function. The
 * inline path points the SGE at the buffer. */
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
static int tc_send(struct tc_c *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	c->txflags = IB_SEND_SIGNALED;
	sge.addr = c->buf_dma;
	if (len <= c->max_inline) {
		c->txflags |= IB_SEND_INLINE;
		sge.addr = (uintptr_t)c->buf;
	}
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = c->txflags;
	return ib_post_send(c->qp, &wr, NULL);
}
