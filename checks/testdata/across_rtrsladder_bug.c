// SPDX-License-Identifier: GPL-2.0
/* rtrs-style goto ladder: the failure check jumps to the cleanup label.
 * The grant is recorded after the label, where the failing path
 * arrives too. */
struct rtrs_con {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u32 max_inline;
	void *hdr;
};

static int rtrs_create_qp(struct rtrs_con *con, struct rdma_cm_id *cm_id, u32 max_send_wr)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_send_wr = max_send_wr;
	init_attr.cap.max_inline_data = 96;
	init_attr.send_cq = con->cq;
	ret = rdma_create_qp(cm_id, con->pd, &init_attr);
	if (ret) {
		pr_err("failed to create qp: %d\n", ret);
		goto out;
	}
	con->qp = cm_id->qp;
out:
	con->max_inline = init_attr.cap.max_inline_data; /* want: inline-size */
	return ret;
}

static int rtrs_send_hdr(struct rtrs_con *con, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > con->max_inline)
		return -EMSGSIZE;
	sge.addr = (uintptr_t)con->hdr;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(con->qp, &wr, NULL);
}
