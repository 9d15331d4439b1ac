// SPDX-License-Identifier: GPL-2.0
/* rds-ib-style atomic/ack header: the inline bit is set through a function-like macro. */

#define RDS_IB_MAYBE_INLINE(wr, len, ic) \
	((wr)->send_flags |= ((len) <= (ic)->i_max_inline ? IB_SEND_INLINE : 0))

int rds_ib_setup_qp(struct rds_connection *conn)
{
	struct rds_ib_connection *ic = conn->c_transport_data;
	struct ib_qp_init_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.event_handler = rds_ib_qp_event_handler;
	attr.qp_context = conn;
	attr.cap.max_send_wr = ic->i_send_ring.w_nr + 1;
	attr.cap.max_recv_wr = ic->i_recv_ring.w_nr + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = RDS_IB_RECV_SGE;
	attr.cap.max_inline_data = 64;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = ic->i_send_cq;
	attr.recv_cq = ic->i_recv_cq;

	ret = rdma_create_qp(ic->i_cm_id, ic->i_pd, &attr);
	if (ret) {
		rdsdebug("rdma_create_qp failed: %d\n", ret);
		goto out;
	}
	ic->i_max_inline = attr.cap.max_inline_data;

	ic->i_send_hdrs_dma[0] = ib_dma_map_single(ic->i_cm_id->device,
						   ic->i_send_hdrs[0],
						   sizeof(struct rds_header),
						   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ic->i_cm_id->device, ic->i_send_hdrs_dma[0]))
		ret = -ENOMEM;
out:
	return ret;
}

int rds_ib_xmit_hdr_only(struct rds_ib_connection *ic,
			 struct rds_ib_send_work *send, u32 pos)
{
	int ret;

	send->s_sge[0].addr = sizeof(struct rds_header) <= ic->i_max_inline ?
		(u64)(uintptr_t)ic->i_send_hdrs[pos] : ic->i_send_hdrs_dma[pos];
	send->s_sge[0].length = sizeof(struct rds_header);
	send->s_sge[0].lkey = ic->i_pd->local_dma_lkey;
	send->s_wr.sg_list = send->s_sge;
	send->s_wr.num_sge = 1;
	send->s_wr.opcode = IB_WR_SEND;
	send->s_wr.next = NULL;
	send->s_wr.send_flags = IB_SEND_SIGNALED;
	RDS_IB_MAYBE_INLINE(&send->s_wr, sizeof(struct rds_header), ic);

	ret = ib_post_send(ic->i_cm_id->qp, &send->s_wr, NULL);
	if (ret)
		rds_ib_ring_unalloc(&ic->i_send_ring, 1);
	return ret;
}
