// SPDX-License-Identifier: GPL-2.0
/* ksmbd-style negotiate response: the response is mapped for the HCA. */

static int smb_direct_send_negotiate_response(struct smb_direct_transport *t,
					      int failed)
{
	struct smb_direct_sendmsg *sendmsg;
	struct smb_direct_negotiate_resp *resp;
	struct ib_send_wr wr;
	int ret;

	sendmsg = smb_direct_alloc_sendmsg(t);
	if (IS_ERR(sendmsg))
		return -ENOMEM;

	resp = (struct smb_direct_negotiate_resp *)sendmsg->packet;
	resp->min_version = cpu_to_le16(SMB_DIRECT_VERSION_LE);
	resp->max_version = cpu_to_le16(SMB_DIRECT_VERSION_LE);
	resp->credits_requested = cpu_to_le16(t->send_credit_target);
	resp->max_readwrite_size = cpu_to_le32(t->max_rdma_rw_size);

	sendmsg->sge[0].addr = ib_dma_map_single(t->cm_id->device,
						 (void *)resp, sizeof(*resp),
						 DMA_TO_DEVICE);
	ret = ib_dma_mapping_error(t->cm_id->device, sendmsg->sge[0].addr);
	if (ret) {
		smb_direct_free_sendmsg(t, sendmsg);
		return ret;
	}
	sendmsg->num_sge = 1;
	sendmsg->sge[0].length = sizeof(*resp);
	sendmsg->sge[0].lkey = t->pd->local_dma_lkey;

	sendmsg->cqe.done = send_done;
	wr.next = NULL;
	wr.wr_cqe = &sendmsg->cqe;
	wr.sg_list = sendmsg->sge;
	wr.num_sge = sendmsg->num_sge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;

	ret = ib_post_send(t->qp, &wr, NULL);
	if (ret) {
		ib_dma_unmap_single(t->cm_id->device, sendmsg->sge[0].addr,
				    sendmsg->sge[0].length, DMA_TO_DEVICE);
		smb_direct_free_sendmsg(t, sendmsg);
		return ret;
	}
	return 0;
}

/* small credit-only messages go inline */
static int smb_direct_post_empty(struct smb_direct_transport *t,
				 struct smb_direct_sendmsg *msg)
{
	struct ib_send_wr wr = {
		.wr_cqe		= &msg->cqe,
		.opcode		= IB_WR_SEND,
		.num_sge	= 0,
		.send_flags	= IB_SEND_SIGNALED | IB_SEND_INLINE,
	};

	return ib_post_send(t->qp, &wr, NULL);
}
