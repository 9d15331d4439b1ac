// SPDX-License-Identifier: GPL-2.0
/* The link decides once, at QP setup, whether its small messages go
 * inline, and keeps the decision in a flag word; the sender or-s it in.
 * The message's SGE carries the buffer's DMA handle. */
struct lnk {
	struct ib_qp *qp;
	struct ib_device *dev;
	u32 send_opts;
	u8 buf[48];
	u64 buf_map;
	u32 lkey;
};

#define LNK_MSG_SIZE 48

static int lnk_setup(struct lnk *l, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr qp_attr = {};
	int rc;

	qp_attr.cap.max_inline_data = LNK_MSG_SIZE;
	rc = rdma_create_qp(id, pd, &qp_attr);
	if (rc)
		return rc;
	l->qp = id->qp;
	l->send_opts = 0;
	if (qp_attr.cap.max_inline_data >= LNK_MSG_SIZE)
		l->send_opts = IB_SEND_INLINE;
	l->buf_map = ib_dma_map_single(l->dev, l->buf, LNK_MSG_SIZE, DMA_TO_DEVICE);
	return 0;
}

int lnk_send_msg(struct lnk *l)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = l->buf_map;
	sge.length = LNK_MSG_SIZE;
	sge.lkey = l->lkey;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.send_flags |= l->send_opts;
	return ib_post_send(l->qp, &wr, NULL); /* want: inline-sge-addr */
}
