// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: the bound is read once into a local, but it is the
 * largest message, not the inline size requested or granted. */
struct tc_qe {
	void *data;
	u64 dma;
};

struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

#define TC_REQ_INLINE 64
#define TC_MAX_MSG 128

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = TC_REQ_INLINE;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	if (ret)
		goto out;
	WRITE_ONCE(queue->max_inline_data, init_attr.cap.max_inline_data);
	queue->max_inline_data = init_attr.cap.max_inline_data;
out:
	return ret;
}

static void tc_map(struct ib_device *dev, struct tc_qe *qe)
{
	qe->dma = ib_dma_map_single(dev, qe->data, TC_REQ_INLINE, DMA_TO_DEVICE);
}

static int tc_post(struct tc_queue *queue, struct tc_qe *qe, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u32 max = TC_MAX_MSG;

	sge.addr = qe->dma;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= max) {
		sge.addr = (uintptr_t)qe->data;
		wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
	}
	return ib_post_send(queue->qp, &wr, NULL);
}
