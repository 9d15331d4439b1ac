// SPDX-License-Identifier: GPL-2.0
/* iser-style: the grant is recorded after the failure check jumps away. */
struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	void *login_buf;
	u64 login_dma;
	struct ib_sge sge;
};

static int tc_create_ib_conn(struct tc_conn *conn, struct rdma_cm_id *cma_id)
{
	struct ib_qp_init_attr init_attr;
	int ret;

	memset(&init_attr, 0, sizeof(init_attr));
	init_attr.cap.max_inline_data = 128;
	ret = rdma_create_qp(cma_id, conn->pd, &init_attr);
	if (ret)
		goto out_err;
	conn->max_inline = init_attr.cap.max_inline_data;
	conn->qp = cma_id->qp;
	return 0;
out_err:
	return ret;
}

static void tc_login_map(struct ib_device *dev, struct tc_conn *conn)
{
	conn->login_dma = ib_dma_map_single(dev, conn->login_buf, 128, DMA_TO_DEVICE);
}

static int tc_post_login(struct tc_conn *conn, u32 len)
{
	struct ib_send_wr wr = {};

	conn->sge.addr = conn->login_dma;
	conn->sge.length = len;
	wr.sg_list = &conn->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (len <= conn->max_inline) {
		conn->sge.addr = (uintptr_t)conn->login_buf;
		wr.send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(conn->qp, &wr, NULL);
}
