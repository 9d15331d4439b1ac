// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: a bool helper holds the inline guard. */
struct tc_qe {
	void *data;
	u64 dma;
};

struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

#define TC_INLINE_REQ 64

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = TC_INLINE_REQ;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	queue->max_inline_data = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static bool tc_can_inline(struct tc_queue *queue, u32 len)
{
	return len <= TC_INLINE_REQ;
}

static int tc_post_send(struct tc_queue *queue, struct tc_qe *qe, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = qe->dma;
	sge.length = len;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IB_SEND_SIGNALED;
	if (tc_can_inline(queue, len)) {
		sge.addr = (uintptr_t)qe->data;
		wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
	}
	return ib_post_send(queue->qp, &wr, NULL);
}

static void tc_map_qe(struct ib_device *ibdev, struct tc_qe *qe)
{
	qe->dma = ib_dma_map_single(ibdev, qe->data, TC_INLINE_REQ, DMA_TO_DEVICE);
}
