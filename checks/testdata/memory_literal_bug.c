// SPDX-License-Identifier: GPL-2.0
/* The request is filled by assigning a compound literal whose send_flags
 * is a ternary. */
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
static int tc_send(struct tc_c *c, struct ib_send_wr *wr, struct ib_sge *sge, u32 len)
{
	sge->addr = c->buf_dma;
	sge->length = len;
	*wr = (struct ib_send_wr) {
		.opcode = IB_WR_SEND,
		.sg_list = sge,
		.num_sge = 1,
		.send_flags = len <= c->max_inline ? IB_SEND_INLINE : 0,
	};
	return ib_post_send(c->qp, wr, NULL); /* want: inline-sge-addr */
}
