// SPDX-License-Identifier: GPL-2.0
/* smc-style: work requests are copied from a file-scope template. */
struct tc_link {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u8 ctrl_buf[48];
	dma_addr_t ctrl_dma;
	struct ib_sge ctrl_sge;
	struct ib_send_wr ctrl_wr;
	u32 max_inline;
};

static const struct ib_send_wr tc_ctrl_tmpl = {
	.opcode = IB_WR_SEND,
	.num_sge = 1,
	.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE,
};

static int tc_link_create(struct tc_link *lnk, struct ib_qp_init_attr *qp_attr)
{
	qp_attr->cap.max_inline_data = sizeof(lnk->ctrl_buf);
	lnk->qp = ib_create_qp(lnk->pd, qp_attr);
	if (IS_ERR(lnk->qp))
		return PTR_ERR(lnk->qp);
	lnk->max_inline = qp_attr->cap.max_inline_data;
	return 0;
}

static int tc_send_ctrl(struct tc_link *lnk)
{
	struct ib_send_wr wr;

	if (sizeof(lnk->ctrl_buf) > lnk->max_inline)
		return -EINVAL;
	wr = tc_ctrl_tmpl;
	lnk->ctrl_sge.addr = lnk->ctrl_dma;
	lnk->ctrl_sge.length = sizeof(lnk->ctrl_buf);
	wr.sg_list = &lnk->ctrl_sge;
	return ib_post_send(lnk->qp, &wr, NULL); /* want: inline-sge-addr */
}
