// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style queue: the inline decision is made once and kept in the queue. */

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
	queue->inline_flags = 0;
	if (init_attr.cap.max_inline_data >= sizeof(struct nvme_command))
		queue->inline_flags = IB_SEND_INLINE;
	return 0;
}

static int nvme_rdma_post_send(struct nvme_rdma_queue *queue,
			       struct nvme_rdma_qe *qe, struct ib_sge *sge,
			       u32 num_sge, struct ib_send_wr *first)
{
	struct ib_send_wr wr;
	int ret;

	wr.next       = NULL;
	wr.wr_cqe     = &qe->cqe;
	wr.sg_list    = sge;
	wr.num_sge    = num_sge;
	wr.opcode     = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | queue->inline_flags;

	if (first)
		first->next = &wr;
	else
		first = &wr;

	ret = ib_post_send(queue->qp, first, NULL);
	if (unlikely(ret)) {
		dev_err(queue->ctrl->ctrl.device,
			"%s failed with error code %d\n", __func__, ret);
	}
	return ret;
}

static void nvme_rdma_submit_async_event(struct nvme_rdma_queue *queue,
					 struct nvme_rdma_qe *sqe)
{
	struct ib_device *dev = queue->device->dev;
	struct nvme_command *cmd = sqe->data;
	struct ib_sge sge;
	int ret;

	ib_dma_sync_single_for_cpu(dev, sqe->dma, sizeof(*cmd), DMA_TO_DEVICE);
	memset(cmd, 0, sizeof(*cmd));
	cmd->common.opcode = nvme_admin_async_event;
	cmd->common.command_id = NVME_AQ_BLK_MQ_DEPTH;
	cmd->common.flags |= NVME_CMD_SGL_METABUF;
	nvme_rdma_set_sg_null(cmd);
	sqe->cqe.done = nvme_rdma_async_done;
	ib_dma_sync_single_for_device(dev, sqe->dma, sizeof(*cmd), DMA_TO_DEVICE);

	sge.length = sizeof(struct nvme_command);
	sge.lkey   = queue->device->pd->local_dma_lkey;
	sge.addr = (u64)(uintptr_t)qe->data;
	ret = nvme_rdma_post_send(queue, sqe, &sge, 1, NULL);
	WARN_ON_ONCE(ret);
}
