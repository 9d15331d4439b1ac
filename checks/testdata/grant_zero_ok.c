// SPDX-License-Identifier: GPL-2.0
/* srp-style: a retry without inline data is fine; asking for 0 first is not. */
struct tc_rsp {
	u8 buf[64];
	u64 dma;
	struct ib_sge sge;
};

struct tc_ch {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_ch_create(struct tc_ch *ch, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr;
	int ret;

	memset(&init_attr, 0, sizeof(init_attr));
	init_attr.cap.max_send_wr = 64;
	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, ch->pd, &init_attr);
	if (ret == -EINVAL) {
		init_attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(id, ch->pd, &init_attr);
	}
	if (ret)
		return ret;
	ch->max_inline = init_attr.cap.max_inline_data;
	return 0;
}

static int tc_send_rsp(struct tc_ch *ch, struct tc_rsp *rsp)
{
	struct ib_send_wr wr = {};

	rsp->sge.addr = rsp->dma;
	rsp->sge.length = 64;
	wr.sg_list = &rsp->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (sizeof(rsp->buf) <= ch->max_inline) {
		rsp->sge.addr = (uintptr_t)rsp->buf;
		wr.send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(ch->qp, &wr, NULL);
}
