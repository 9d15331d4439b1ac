// SPDX-License-Identifier: GPL-2.0
/* The queue keeps IB_SEND_INLINE, or 0, in a field chosen when the QP is
 * created; the sender picks the SGE address by testing that field, but
 * the test is inverted: the inline send gets the DMA address. */
struct mq {
	struct ib_qp *qp;
	int inl_bits;
	void *cmd;
	dma_addr_t cmd_dma;
	u32 lkey;
};

static int mq_create(struct mq *q, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr ia = {};
	int ret;

	ia.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, pd, &ia);
	if (ret) {
		q->inl_bits = 0;
		return ret;
	}
	q->qp = id->qp;
	if (ia.cap.max_inline_data >= 64)
		q->inl_bits = IB_SEND_INLINE;
	else
		q->inl_bits = 0;
	return 0;
}

int mq_submit(struct mq *q)
{
	struct ib_send_wr wr = {};
	struct ib_sge sg;

	if (!q->inl_bits)
		sg.addr = (uintptr_t)q->cmd;
	else
		sg.addr = q->cmd_dma;
	sg.length = 64;
	sg.lkey = q->lkey;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | q->inl_bits;
	return ib_post_send(q->qp, &wr, NULL); /* want: inline-sge-addr */
}
