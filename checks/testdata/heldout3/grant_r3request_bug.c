// SPDX-License-Identifier: GPL-2.0
/* Out-of-tree-style messaging ULP: small messages go inline up to the size the QP was asked for. */

#define MLX_ULP_INLINE	128

static int ulp_conn_create_qp(struct ulp_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr;
	int ret;

	memset(&init_attr, 0, sizeof(init_attr));
	init_attr.qp_context = conn;
	init_attr.send_cq = conn->cq;
	init_attr.recv_cq = conn->cq;
	init_attr.cap.max_send_wr = conn->depth;
	init_attr.cap.max_recv_wr = conn->depth;
	init_attr.cap.max_send_sge = 1;
	init_attr.cap.max_recv_sge = 1;
	init_attr.cap.max_inline_data = MLX_ULP_INLINE;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;

	ret = rdma_create_qp(id, conn->pd, &init_attr);
	if (ret)
		goto out;
	conn->qp = id->qp;
out:
	return ret;
}

static int ulp_send_msg(struct ulp_conn *conn, struct ulp_msg *msg, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.length = len;
	sge.lkey = conn->pd->local_dma_lkey;

	wr.wr_cqe = &msg->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= 256) {
		wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
		sge.addr = (u64)(uintptr_t)msg->buf;
	} else {
		sge.addr = msg->dma;
	}

	return ib_post_send(conn->qp, &wr, NULL);
}
