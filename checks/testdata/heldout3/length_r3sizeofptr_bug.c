// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style command capsule: the command SGE's length is the command's size. */

static int nvme_rdma_create_qp(struct nvme_rdma_queue *queue, const int factor)
{
	struct nvme_rdma_device *dev = queue->device;
	struct ib_qp_init_attr init_attr;
	int ret;

	memset(&init_attr, 0, sizeof(init_attr));
	init_attr.event_handler = nvme_rdma_qp_event;
	init_attr.cap.max_send_wr = factor * queue->queue_size + 1;
	init_attr.cap.max_recv_wr = queue->queue_size + 1;
	init_attr.cap.max_recv_sge = 1;
	init_attr.cap.max_send_sge = 1 + dev->num_inline_segments;
	init_attr.cap.max_inline_data = 64;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;
	init_attr.send_cq = queue->ib_cq;
	init_attr.recv_cq = queue->ib_cq;

	ret = rdma_create_qp(queue->cm_id, dev->pd, &init_attr);
	if (ret)
		return ret;
	queue->qp = queue->cm_id->qp;
	queue->max_inline = init_attr.cap.max_inline_data;
	return 0;
}

static blk_status_t nvme_rdma_queue_cmd(struct nvme_rdma_queue *queue,
					struct nvme_rdma_request *req)
{
	struct nvme_rdma_qe *sqe = &req->sqe;
	struct nvme_command *cmd = sqe->data;
	struct ib_sge *sge = &req->sge[0];
	struct ib_send_wr wr;
	int ret;

	sge->addr = (u64)(uintptr_t)cmd;
	sge->length = sizeof(cmd); /* want: sizeof-pointer */
	sge->lkey = queue->device->pd->local_dma_lkey;

	sqe->cqe.done = nvme_rdma_send_done;
	wr.next = NULL;
	wr.wr_cqe = &sqe->cqe;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (sge->length <= queue->max_inline)
		wr.send_flags |= IB_SEND_INLINE;
	else
		sge->addr = sqe->dma;

	ret = ib_post_send(queue->qp, &wr, NULL);
	if (unlikely(ret)) {
		dev_err(queue->ctrl->ctrl.device,
			"%s failed with error code %d\n", __func__, ret);
		return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}
