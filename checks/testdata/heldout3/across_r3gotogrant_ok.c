// SPDX-License-Identifier: GPL-2.0
/* rtrs-srv-style connection setup: inline is asked for, and dropped when the device refuses. */

static int create_con_cq_qp(struct rtrs_srv_con *con, u32 max_send_wr)
{
	struct rtrs_srv_path *srv_path = to_srv_path(con->c.path);
	struct ib_qp_init_attr init_attr = {};
	struct rdma_cm_id *cm_id = con->c.cm_id;
	int err;

	init_attr.cap.max_send_wr = max_send_wr;
	init_attr.cap.max_recv_wr = max_send_wr;
	init_attr.cap.max_recv_sge = 1;
	init_attr.cap.max_send_sge = 1;
	init_attr.cap.max_inline_data = 128;
	init_attr.qp_type = IB_QPT_RC;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.send_cq = con->c.cq;
	init_attr.recv_cq = con->c.cq;
	init_attr.event_handler = qp_event_handler;
	init_attr.qp_context = con;

	err = rdma_create_qp(cm_id, srv_path->s.dev->ib_pd, &init_attr);
	if (err) {
		/* some HCAs refuse inline data on this QP type: retry without */
		init_attr.cap.max_inline_data = 0;
		err = rdma_create_qp(cm_id, srv_path->s.dev->ib_pd, &init_attr);
		if (err) {
			rtrs_err(con->c.path, "Creating QP failed, err: %d\n", err);
			goto err_destroy_cq;
		}
	}
	con->max_inline = init_attr.cap.max_inline_data;
	con->c.qp = cm_id->qp;
	return 0;

err_destroy_cq:
	rtrs_cq_qp_destroy(&con->c);
	return err;
}

static int send_io_resp_imm(struct rtrs_srv_con *con, struct rtrs_srv_op *id,
			    int errno)
{
	struct rtrs_srv_path *srv_path = to_srv_path(con->c.path);
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u32 len = id->rd_msg_len;

	sge.length = len;
	sge.lkey = srv_path->s.dev->ib_pd->local_dma_lkey;

	wr.wr_cqe = &io_comp_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(rtrs_to_io_rsp_imm(id->msg_id, errno, false));
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= con->max_inline) {
		wr.send_flags |= IB_SEND_INLINE;
		sge.addr = (u64)(uintptr_t)id->rd_msg;
	} else {
		sge.addr = id->rd_msg_dma;
	}

	return ib_post_send(con->c.qp, &wr, NULL);
}
