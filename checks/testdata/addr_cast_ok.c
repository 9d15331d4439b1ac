// SPDX-License-Identifier: GPL-2.0
/* rtrs-style: a cast of a value nobody can place proves nothing. */
struct tc_con {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_con_create(struct tc_con *con, struct rdma_cm_id *cm_id)
{
	struct ib_qp_init_attr init_attr = {};
	int err;

	init_attr.cap.max_inline_data = 32;
	err = rdma_create_qp(cm_id, con->pd, &init_attr);
	if (err)
		return err;
	con->max_inline = init_attr.cap.max_inline_data;
	return 0;
}

static int tc_post_imm(struct tc_con *con, u64 cookie, void *msg, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > con->max_inline)
		return -EMSGSIZE;
	sge.addr = (u64)(uintptr_t)msg;
	sge.length = len;
	sge.lkey = con->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(con->qp, &wr, NULL);
}
