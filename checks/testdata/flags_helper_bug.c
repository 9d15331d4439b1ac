// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: a helper decides the send flags. */
struct tc_qe {
	void *data;
	u64 dma;
};

struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	queue->max_inline_data = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static int tc_alloc_qe(struct ib_device *ibdev, struct tc_qe *qe, size_t size)
{
	qe->data = kzalloc(size, GFP_KERNEL);
	if (!qe->data)
		return -ENOMEM;
	qe->dma = ib_dma_map_single(ibdev, qe->data, size, DMA_TO_DEVICE);
	return ib_dma_mapping_error(ibdev, qe->dma);
}

static u32 tc_send_flags(struct tc_queue *queue, u32 len)
{
	if (len > queue->max_inline_data)
		return IB_SEND_SIGNALED;
	return IB_SEND_SIGNALED | IB_SEND_INLINE;
}

static int tc_post_cmd(struct tc_queue *queue, struct tc_qe *qe, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = qe->dma;
	sge.length = len;
	sge.lkey = queue->pd->local_dma_lkey;

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = tc_send_flags(queue, len);
	return ib_post_send(queue->qp, &wr, NULL); /* want: inline-sge-addr */
}
