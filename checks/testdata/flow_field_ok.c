// SPDX-License-Identifier: GPL-2.0
/* srp-style: the inline decision tests iu->num_sge == 1, a field. */
struct tc_iu {
	struct ib_sge sge[3];
	void *buf;
	u64 dma;
	u64 ext_dma;
	int num_sge;
	u32 len;
};

struct tc_ch {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_ch_qp(struct tc_ch *ch, struct rdma_cm_id *id, struct ib_qp_init_attr *init)
{
	int ret;

	init->cap.max_inline_data = 96;
	ret = rdma_create_qp(id, ch->pd, init);
	if (ret)
		return ret;
	ch->max_inline = init->cap.max_inline_data;
	return 0;
}

static void tc_iu_map(struct ib_device *dev, struct tc_iu *iu)
{
	iu->dma = ib_dma_map_single(dev, iu->buf, iu->len, DMA_TO_DEVICE);
	iu->ext_dma = ib_dma_map_page(dev, NULL, 0, iu->len, DMA_TO_DEVICE);
}

static int tc_post(struct tc_ch *ch, struct tc_iu *iu)
{
	struct ib_send_wr wr = {};

	iu->sge[0].addr = iu->dma;
	iu->sge[1].addr = iu->ext_dma;
	wr.sg_list = iu->sge;
	wr.num_sge = iu->num_sge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (iu->num_sge != 1 || iu->len > ch->max_inline)
		goto post;
	iu->sge[0].addr = (uintptr_t)iu->buf;
	wr.send_flags |= IB_SEND_INLINE;
post:
	return ib_post_send(ch->qp, &wr, NULL);
}
