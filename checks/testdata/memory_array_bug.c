// SPDX-License-Identifier: GPL-2.0
/* Two requests handled through an array of pointers in a loop, posted as
 * a chain. */
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
	struct ib_send_wr a = {}, b = {};
	struct ib_send_wr *wrs[2] = { &a, &b };
	struct ib_sge sge[2];
	int i;

	for (i = 0; i < 2; i++) {
		sge[i].addr = c->buf_dma;
		sge[i].length = len;
		wrs[i]->sg_list = &sge[i];
		wrs[i]->num_sge = 1;
		wrs[i]->opcode = IB_WR_SEND;
		if (len <= c->max_inline)
			wrs[i]->send_flags |= IB_SEND_INLINE;
	}
	a.next = &b;
	return ib_post_send(c->qp, &a, NULL); /* want: inline-sge-addr */
}
