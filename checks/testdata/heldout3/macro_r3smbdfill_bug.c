// SPDX-License-Identifier: GPL-2.0
/* smbdirect-style negotiate request: the SGE is filled by a macro. */

#define SMBD_FILL_SGE(sge, a, l, k)	\
	do {				\
		(sge)->addr = (a);	\
		(sge)->length = (l);	\
		(sge)->lkey = (k);	\
	} while (0)

static int smbd_post_send_negotiate_req(struct smbd_connection *info)
{
	struct ib_send_wr send_wr;
	int rc = -ENOMEM;
	struct smbd_request *request;
	struct smbd_negotiate_req *packet;

	request = mempool_alloc(info->request_mempool, GFP_KERNEL);
	if (!request)
		return rc;

	request->info = info;
	packet = smbd_request_payload(request);
	packet->min_version = cpu_to_le16(SMBD_V1);
	packet->max_version = cpu_to_le16(SMBD_V1);
	packet->credits_requested = cpu_to_le16(info->send_credit_target);

	request->num_sge = 1;
	request->sge[0].addr = ib_dma_map_single(info->id->device, (void *)packet,
						 sizeof(*packet), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(info->id->device, request->sge[0].addr)) {
		rc = -EIO;
		goto dma_mapping_failed;
	}
	SMBD_FILL_SGE(&request->sge[0], request->sge[0].addr, sizeof(*packet),
		      info->pd->local_dma_lkey);

	request->cqe.done = send_done;
	send_wr.next = NULL;
	send_wr.wr_cqe = &request->cqe;
	send_wr.sg_list = request->sge;
	send_wr.num_sge = request->num_sge;
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;
	if (sizeof(*packet) <= info->max_inline_send)
		send_wr.send_flags |= IB_SEND_INLINE;

	atomic_inc(&info->send_pending);
	rc = ib_post_send(info->id->qp, &send_wr, NULL); /* want: inline-sge-addr */
	if (!rc)
		return 0;

	atomic_dec(&info->send_pending);
	ib_dma_unmap_single(info->id->device, request->sge[0].addr,
			    request->sge[0].length, DMA_TO_DEVICE);
dma_mapping_failed:
	mempool_free(request, info->request_mempool);
	return rc;
}

static int smbd_create_qp(struct smbd_connection *info)
{
	struct ib_qp_init_attr qp_attr;
	int rc;

	memset(&qp_attr, 0, sizeof(qp_attr));
	qp_attr.event_handler = smbd_qp_async_error_upcall;
	qp_attr.qp_context = info;
	qp_attr.cap.max_send_wr = info->send_credit_target;
	qp_attr.cap.max_recv_wr = info->receive_credit_max;
	qp_attr.cap.max_send_sge = SMBDIRECT_MAX_SEND_SGE;
	qp_attr.cap.max_recv_sge = SMBDIRECT_MAX_RECV_SGE;
	qp_attr.cap.max_inline_data = 64;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = IB_QPT_RC;
	qp_attr.send_cq = info->send_cq;
	qp_attr.recv_cq = info->recv_cq;

	rc = rdma_create_qp(info->id, info->pd, &qp_attr);
	if (rc) {
		log_rdma_event(ERR, "rdma_create_qp failed %i\n", rc);
		return rc;
	}
	info->max_inline_send = qp_attr.cap.max_inline_data;
	return 0;
}
