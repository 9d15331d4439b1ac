// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: the inline lines are guarded by a goto, not an if. */
struct tc_qe {
	void *data;
	u64 dma;
};

struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

#define TC_CAPSULE_SIZE 64

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = TC_CAPSULE_SIZE;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	if (ret)
		goto out;
	queue->max_inline_data = init_attr.cap.max_inline_data;
out:
	return ret;
}

static int tc_post_send(struct tc_queue *queue, struct tc_qe *qe, u32 len, int num_sge)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = qe->dma;
	sge.length = len;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = num_sge;
	wr.send_flags = IB_SEND_SIGNALED;
	if (num_sge != 1 || len > TC_CAPSULE_SIZE)
		goto post;
	sge.addr = (uintptr_t)qe->data;
	wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
post:
	return ib_post_send(queue->qp, &wr, NULL);
}

static void tc_map_qe(struct ib_device *ibdev, struct tc_qe *qe)
{
	qe->dma = ib_dma_map_single(ibdev, qe->data, TC_CAPSULE_SIZE, DMA_TO_DEVICE);
}
