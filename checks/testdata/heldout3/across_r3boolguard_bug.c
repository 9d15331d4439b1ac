// SPDX-License-Identifier: GPL-2.0
/* nvmet-rdma-style response: the caller decides whether the response may go inline. */

static int nvmet_rdma_create_queue_ib(struct nvmet_rdma_queue *queue)
{
	struct ib_qp_init_attr qp_attr = { };
	struct nvmet_rdma_device *ndev = queue->dev;
	int ret;

	qp_attr.qp_context = queue;
	qp_attr.event_handler = nvmet_rdma_qp_event;
	qp_attr.send_cq = queue->cq;
	qp_attr.recv_cq = queue->cq;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = IB_QPT_RC;
	qp_attr.cap.max_send_wr = queue->send_queue_size + 1;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1 + ndev->inline_page_count;
	qp_attr.cap.max_inline_data = 32;

	ret = rdma_create_qp(queue->cm_id, ndev->pd, &qp_attr);
	if (ret) {
		pr_err("failed to create_qp ret= %d\n", ret);
		goto err_destroy_cq;
	}
	queue->max_inline = qp_attr.cap.max_inline_data;
	queue->qp = queue->cm_id->qp;
	return 0;

err_destroy_cq:
	ib_cq_pool_put(queue->cq, queue->send_queue_size + 1);
	return ret;
}

static void nvmet_rdma_prep_rsp(struct nvmet_rdma_queue *queue,
				struct nvmet_rdma_rsp *rsp, bool inline_ok)
{
	rsp->send_sge.addr = inline_ok ? (u64)(uintptr_t)rsp->req.cqe :
					 rsp->send_sge_dma;
	rsp->send_sge.lkey = queue->dev->pd->local_dma_lkey;

	rsp->send_wr.next = NULL;
	rsp->send_wr.wr_cqe = &rsp->send_cqe;
	rsp->send_wr.sg_list = &rsp->send_sge;
	rsp->send_wr.num_sge = 1;
	rsp->send_wr.opcode = IB_WR_SEND;
	rsp->send_wr.send_flags = IB_SEND_SIGNALED;
	if (inline_ok)
		rsp->send_wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
}

static void nvmet_rdma_queue_response(struct nvmet_req *req)
{
	struct nvmet_rdma_rsp *rsp =
		container_of(req, struct nvmet_rdma_rsp, req);
	struct nvmet_rdma_queue *queue = rsp->queue;

	/* the completion may carry an extended status: length decided by the core */
	rsp->send_sge.length = req->rsp_len;
	nvmet_rdma_prep_rsp(queue, rsp, true);

	if (unlikely(ib_post_send(queue->qp, &rsp->send_wr, NULL))) {
		pr_err("sending cmd response failed\n");
		nvmet_rdma_release_rsp(rsp);
	}
}
