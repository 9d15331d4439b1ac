// SPDX-License-Identifier: GPL-2.0
/* rtrs-clt-style write with registration: the requests are chained from an array. */

static int rtrs_clt_create_qp(struct rtrs_clt_con *con, u32 max_send_wr)
{
	struct rtrs_path *s = con->c.path;
	struct ib_qp_init_attr init_attr = {};
	struct rdma_cm_id *cm_id = con->c.cm_id;
	int ret;

	init_attr.cap.max_send_wr = max_send_wr;
	init_attr.cap.max_recv_wr = max_send_wr;
	init_attr.cap.max_recv_sge = 1;
	init_attr.cap.max_send_sge = 1;
	init_attr.cap.max_inline_data = 64;
	init_attr.event_handler = qp_event_handler;
	init_attr.qp_context = con;
	init_attr.send_cq = con->c.cq;
	init_attr.recv_cq = con->c.cq;
	init_attr.qp_type = IB_QPT_RC;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;

	ret = rdma_create_qp(cm_id, s->dev->ib_pd, &init_attr);
	if (ret) {
		rtrs_err(s, "Creating QP failed, err: %d\n", ret);
		return ret;
	}
	con->c.qp = cm_id->qp;
	con->max_inline = init_attr.cap.max_inline_data;
	return 0;
}

static int rtrs_post_rdma_write_reg(struct rtrs_clt_con *con,
				    struct rtrs_clt_io_req *req,
				    struct rtrs_rbuf *rbuf, u32 size, u32 imm)
{
	struct rtrs_clt_path *clt_path = to_clt_path(con->c.path);
	struct ib_send_wr *wrs[2];
	struct ib_rdma_wr imm_wr;
	struct ib_reg_wr rwr;
	struct ib_sge sge;
	int i, n;

	sge.addr = (u64)(uintptr_t)req->iu->buf;
	sge.length = size;
	sge.lkey = clt_path->s.dev->ib_pd->local_dma_lkey;

	memset(&rwr, 0, sizeof(rwr));
	rwr.wr.opcode = IB_WR_REG_MR;
	rwr.wr.wr_cqe = &fast_reg_cqe;
	rwr.mr = req->mr;
	rwr.key = req->mr->rkey;
	rwr.access = IB_ACCESS_LOCAL_WRITE;

	memset(&imm_wr, 0, sizeof(imm_wr));
	imm_wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	imm_wr.wr.wr_cqe = &req->iu->cqe;
	imm_wr.wr.sg_list = &sge;
	imm_wr.wr.num_sge = 1;
	imm_wr.wr.ex.imm_data = cpu_to_be32(imm);
	imm_wr.remote_addr = rbuf->addr;
	imm_wr.rkey = rbuf->rkey;

	wrs[0] = &imm_wr.wr;
	n = 1;
	rwr.wr.next = wrs[0];
	for (i = 0; i < n; i++) {
		wrs[i]->send_flags = IB_SEND_SIGNALED;
		if (size <= con->max_inline)
			wrs[i]->send_flags |= IB_SEND_INLINE;
		wrs[i]->next = i + 1 < n ? wrs[i + 1] : NULL;
	}

	return ib_post_send(con->c.qp, &rwr.wr, NULL);
}
