// SPDX-License-Identifier: GPL-2.0
/* rds-ib-style header send: the helper or-s the inline bit into the caller's flags. */

static void rds_ib_xmit_send_flags(struct rds_ib_connection *ic, u32 len,
				   int *send_flags)
{
	*send_flags |= IB_SEND_SIGNALED;
	if (len <= ic->i_max_inline)
		*send_flags |= IB_SEND_INLINE;
}

int rds_ib_setup_qp(struct rds_connection *conn)
{
	struct rds_ib_connection *ic = conn->c_transport_data;
	struct ib_qp_init_attr attr;
	int ret, i;

	memset(&attr, 0, sizeof(attr));
	attr.event_handler = rds_ib_qp_event_handler;
	attr.qp_context = conn;
	attr.cap.max_send_wr = ic->i_send_ring.w_nr + 1;
	attr.cap.max_recv_wr = ic->i_recv_ring.w_nr + 1;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = RDS_IB_RECV_SGE;
	attr.cap.max_inline_data = sizeof(struct rds_header);
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = ic->i_send_cq;
	attr.recv_cq = ic->i_recv_cq;

	ret = rdma_create_qp(ic->i_cm_id, ic->i_pd, &attr);
	if (ret) {
		rdsdebug("rdma_create_qp failed: %d\n", ret);
		return ret;
	}
	ic->i_max_inline = attr.cap.max_inline_data;

	for (i = 0; i < ic->i_send_ring.w_nr; i++) {
		ic->i_send_hdrs_dma[i] = ib_dma_map_single(ic->i_cm_id->device,
							   ic->i_send_hdrs[i],
							   sizeof(struct rds_header),
							   DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ic->i_cm_id->device,
					 ic->i_send_hdrs_dma[i]))
			return -ENOMEM;
	}
	return 0;
}

static int rds_ib_xmit_header(struct rds_ib_connection *ic,
			      struct rds_ib_send_work *send, u32 pos)
{
	struct ib_sge *sge = &send->s_sge[0];
	const struct ib_send_wr *failed_wr;
	int send_flags = 0;
	int ret;

	rds_ib_xmit_send_flags(ic, sizeof(struct rds_header), &send_flags);

	sge->addr = (send_flags & IB_SEND_INLINE) ?
		(u64)(uintptr_t)ic->i_send_hdrs[pos] : ic->i_send_hdrs_dma[pos];
	sge->length = sizeof(struct rds_header);
	sge->lkey = ic->i_pd->local_dma_lkey;

	send->s_wr.opcode = IB_WR_SEND;
	send->s_wr.num_sge = 1;
	send->s_wr.sg_list = sge;
	send->s_wr.next = NULL;
	send->s_wr.send_flags = send_flags;

	spin_lock_irq(&ic->i_send_lock);
	ret = ib_post_send(ic->i_cm_id->qp, &send->s_wr, &failed_wr);
	spin_unlock_irq(&ic->i_send_lock);
	if (ret) {
		printk(KERN_WARNING "RDS/IB: ib_post_send returned %d\n", ret);
		rds_ib_ring_unalloc(&ic->i_send_ring, 1);
		return ret;
	}
	return 0;
}
