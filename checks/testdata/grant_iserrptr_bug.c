// SPDX-License-Identifier: GPL-2.0
/* ib_create_qp returns an ERR_PTR on failure. The grant is recorded
 * before the IS_ERR test: a failed creation leaves the request in it. */
struct tc_ch {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	void *cmd;
};

static int tc_ch_create(struct tc_ch *ch)
{
	struct ib_qp_init_attr attr = {};
	struct ib_qp *qp;

	attr.cap.max_inline_data = 160;
	qp = ib_create_qp(ch->pd, &attr);
	ch->max_inline = attr.cap.max_inline_data; /* want: inline-size */
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ch->qp = qp;
	return 0;
}

static int tc_ch_send(struct tc_ch *ch, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > ch->max_inline)
		return -EMSGSIZE;
	sge.addr = (uintptr_t)ch->cmd;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(ch->qp, &wr, NULL);
}
