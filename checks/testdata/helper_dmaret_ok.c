// SPDX-License-Identifier: GPL-2.0
/* nvmet-rdma-style: a helper returns the address; its result is cast. */
struct tc_cmd {
	struct ib_sge sge[1];
	void *buf;
	dma_addr_t buf_dma;
	u32 len;
};

struct tc_q {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 inline_size;
};

static int tc_q_create(struct tc_q *q, struct ib_device *dev, struct ib_qp_init_attr *qp_attr)
{
	int ret;

	qp_attr->cap.max_inline_data = 256;
	ret = ib_create_qp_kernel(q->pd, qp_attr);
	if (ret < 0)
		return ret;
	q->inline_size = qp_attr->cap.max_inline_data;
	return 0;
}

static dma_addr_t tc_cmd_addr(struct tc_cmd *cmd)
{
	return cmd->buf_dma;
}

static void *tc_cmd_buf(struct tc_cmd *cmd)
{
	return cmd->buf;
}

static int tc_send_rsp(struct tc_q *q, struct tc_cmd *cmd)
{
	struct ib_send_wr wr = {};

	wr.sg_list = cmd->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	cmd->sge[0].addr = (u64)tc_cmd_addr(cmd);
	if (cmd->len <= q->inline_size) {
		cmd->sge[0].addr = (u64)(uintptr_t)tc_cmd_buf(cmd);
		wr.send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(q->qp, &wr, NULL);
}
