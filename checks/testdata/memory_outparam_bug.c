// SPDX-License-Identifier: GPL-2.0
/* A helper or-s IB_SEND_INLINE into the caller's flags through an int
 * pointer. */
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
static void tc_pick(struct tc_c *c, u32 len, int *flags)
{
	if (len <= c->max_inline)
		*flags |= IB_SEND_INLINE;
}

static int tc_send(struct tc_c *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int flags = IB_SEND_SIGNALED;

	tc_pick(c, len, &flags);
	sge.addr = c->buf_dma;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = flags;
	return ib_post_send(c->qp, &wr, NULL); /* want: inline-sge-addr */
}
