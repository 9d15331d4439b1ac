// SPDX-License-Identifier: GPL-2.0
/* A control message goes inline when it fits; the large path maps it again: the
 * inline path keeps the
 * virtual address it pointed the SGE at for the inline copy. */
struct tc_ctrl {
	void *buf;
	u64 buf_dma;
	u32 len;
};

struct tc_chan {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_chan_qp(struct tc_chan *ch, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 256;
	rc = rdma_create_qp(id, ch->pd, &qa);
	ch->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static void tc_ctrl_map(struct ib_device *dev, struct tc_ctrl *m)
{
	m->buf_dma = ib_dma_map_single(dev, m->buf, m->len, DMA_TO_DEVICE);
}

static int tc_ctrl_send(struct tc_chan *ch, struct tc_ctrl *m)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)m->buf;
	sge.length = m->len;
	sge.lkey = ch->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (m->len <= ch->max_inline)
		wr.send_flags |= IB_SEND_INLINE;
	else
		sge.addr = m->buf_dma;
	return ib_post_send(ch->qp, &wr, NULL);
}
