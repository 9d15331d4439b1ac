// SPDX-License-Identifier: GPL-2.0
/* srp-style: a helper writes the send flags through a u32 out-parameter
 * (assigned, then or-ed), and the response SGE is keyed with a
 * registered MR. The SGE holds the DMA address. */
struct srp_iu {
	void *buf;
	u64 dma;
	struct ib_sge sge;
};

struct srp_rdma_ch {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_mr *mr;
	u32 max_inline;
};

static int srp_create_ch_ib(struct srp_rdma_ch *ch, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, ch->pd, &init_attr);
	ch->max_inline = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static void srp_map_iu(struct ib_device *dev, struct srp_iu *iu)
{
	iu->dma = ib_dma_map_single(dev, iu->buf, 64, DMA_TO_DEVICE);
}

static void srp_choose_flags(struct srp_rdma_ch *ch, u32 len, u32 *send_flags)
{
	*send_flags = IB_SEND_SIGNALED;
	if (len <= ch->max_inline)
		*send_flags |= IB_SEND_INLINE;
}

static int srp_post_rsp(struct srp_rdma_ch *ch, struct srp_iu *iu, u32 len)
{
	struct ib_send_wr wr = {};
	u32 flags;

	srp_choose_flags(ch, len, &flags);
	iu->sge.addr = iu->dma;
	iu->sge.length = len;
	iu->sge.lkey = ch->mr->lkey;
	wr.sg_list = &iu->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = flags;
	return ib_post_send(ch->qp, &wr, NULL); /* want: inline-sge-addr */
}
