// SPDX-License-Identifier: GPL-2.0
/* A transfer helper takes an int that says whether the small payload
 * goes inline: it first picks the payload's address into a local with a
 * ternary on the int, fills the SGE later, and sets IB_SEND_INLINE under
 * an if on the same int. The caller passes the comparison with the
 * granted size directly. */
struct ig_chan {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inl;
	void *payload;
	u64 payload_dma;
};

static int ig_open(struct ig_chan *ch, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init = {};
	int rc;

	init.cap.max_inline_data = 96;
	init.cap.max_send_sge = 1;
	rc = rdma_create_qp(id, ch->pd, &init);
	if (rc)
		return rc;
	ch->max_inl = init.cap.max_inline_data;
	return 0;
}

static void ig_map(struct ig_chan *ch, struct ib_device *dev)
{
	ch->payload_dma = ib_dma_map_single(dev, ch->payload, 4096, DMA_TO_DEVICE);
}

static void ig_xfer_prep(struct ig_chan *ch, struct ib_send_wr *wr, struct ib_sge *sge, u32 len, int inl)
{
	u64 a = inl ? (u64)(uintptr_t)ch->payload : ch->payload_dma;

	sge->addr = a;
	sge->length = len;
	sge->lkey = ch->pd->local_dma_lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
	if (inl)
		wr->send_flags |= IB_SEND_INLINE;
}

static int ig_xfer(struct ig_chan *ch, u32 len)
{
	struct ib_send_wr wr;
	struct ib_sge sge;

	ig_xfer_prep(ch, &wr, &sge, len, len <= ch->max_inl);
	return ib_post_send(ch->qp, &wr, NULL);
}
