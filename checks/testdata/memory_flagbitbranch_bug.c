// SPDX-License-Identifier: GPL-2.0
/* A control-message sender decides the inline flag on the request first,
 * then reads the request's own flag bit back in an if/else to choose the
 * SGE's address, but the test is inverted: the mapping goes inline and
 * the virtual address to the HCA by DMA. */
struct fb_chan {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	void *ctl;
	u64 ctl_dma;
};

static int fb_chan_create(struct fb_chan *ch, struct rdma_cm_id *id, struct ib_device *dev)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_send_wr = 32;
	qa.cap.max_send_sge = 1;
	qa.cap.max_inline_data = 256;
	rc = rdma_create_qp(id, ch->pd, &qa);
	if (rc)
		return rc;
	ch->max_inline = qa.cap.max_inline_data;
	ch->ctl_dma = ib_dma_map_single(dev, ch->ctl, 512, DMA_TO_DEVICE);
	return 0;
}

static int fb_chan_send(struct fb_chan *ch, struct ib_send_wr *wr, struct ib_sge *sge, u32 len)
{
	wr->opcode = IB_WR_SEND;
	wr->send_flags = len <= ch->max_inline ? IB_SEND_INLINE : 0;
	if (!(wr->send_flags & IB_SEND_INLINE))
		sge->addr = (u64)(uintptr_t)ch->ctl;
	else
		sge->addr = ch->ctl_dma;
	sge->length = len;
	sge->lkey = ch->pd->local_dma_lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	return ib_post_send(ch->qp, wr, NULL); /* want: inline-sge-addr */ /* want: noninline-sge-virt */
}
