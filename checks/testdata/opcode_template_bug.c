// SPDX-License-Identifier: GPL-2.0
/* rds-style: the registration request comes from a file-scope template. */
struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	u8 hdr[32];
	struct ib_sge hdr_sge;
};

static const struct ib_reg_wr tc_reg_tmpl = {
	.wr = {
		.opcode = IB_WR_REG_MR,
		.num_sge = 0,
		.send_flags = IB_SEND_SIGNALED,
	},
	.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
};

static int tc_conn_qp(struct tc_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = sizeof(conn->hdr);
	ret = rdma_create_qp(id, conn->pd, &attr);
	conn->max_inline = ret ? 0 : attr.cap.max_inline_data;
	return ret;
}

static int tc_fast_reg(struct tc_conn *conn, struct ib_mr *mr, u32 len)
{
	struct ib_reg_wr reg;
	struct ib_send_wr wr = {};

	reg = tc_reg_tmpl;
	reg.mr = mr;
	reg.key = mr->rkey;
	conn->hdr_sge.addr = (uintptr_t)conn->hdr;
	conn->hdr_sge.length = len;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &conn->hdr_sge;
	wr.num_sge = 1;
	reg.wr.next = &wr;
	if (len > conn->max_inline)
		return -EMSGSIZE;
	reg.wr.send_flags |= IB_SEND_INLINE;
	/* wr, never flagged, then carries a virtual address to the HCA too */
	return ib_post_send(conn->qp, &reg.wr, NULL); /* want: inline-on-registration want: noninline-sge-virt */
}
