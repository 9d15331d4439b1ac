// SPDX-License-Identifier: GPL-2.0
/* A reply builder fills the request's SGE from a bool its caller passes:
 * the reply's virtual address (and a single SGE) when it will go inline,
 * the mapped reply and trailer otherwise. The caller sets the flag from
 * the bool but passes its negation: the mapped reply goes inline, and
 * with its trailer, a second SGE the guard does not count. */
struct bb_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	void *reply;
	u64 reply_dma;
	u64 trailer_dma;
	struct ib_sge sge[2];
	struct ib_send_wr wr;
};

static int bb_setup(struct bb_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int err;

	qa.cap.max_send_sge = 2;
	qa.cap.max_inline_data = 220;
	err = rdma_create_qp(id, c->pd, &qa);
	if (err)
		return err;
	c->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void bb_map(struct ib_device *dev, struct bb_conn *c)
{
	c->reply_dma = ib_dma_map_single(dev, c->reply, 256, DMA_TO_DEVICE);
	c->trailer_dma = ib_dma_map_single(dev, c->reply + 256, 32, DMA_TO_DEVICE);
}

static void bb_build(struct bb_conn *c, struct ib_send_wr *wr, u32 len, bool small)
{
	wr->sg_list = c->sge;
	c->sge[0].length = len;
	c->sge[0].lkey = c->pd->local_dma_lkey;
	if (small) {
		c->sge[0].addr = (u64)(uintptr_t)c->reply;
		wr->num_sge = 1;
		return;
	}
	c->sge[0].addr = c->reply_dma;
	c->sge[1].addr = c->trailer_dma;
	c->sge[1].length = 32;
	c->sge[1].lkey = c->pd->local_dma_lkey;
	wr->num_sge = 2;
}

static int bb_reply(struct bb_conn *c, u32 len)
{
	bool fits = len <= c->max_inline;

	bb_build(c, &c->wr, len, !fits);
	c->wr.opcode = IB_WR_SEND;
	c->wr.send_flags = IB_SEND_SIGNALED | (fits ? IB_SEND_INLINE : 0); /* want: inline-size */
	return ib_post_send(c->qp, &c->wr, NULL); /* want: inline-sge-addr */ /* want: noninline-sge-virt */
}
