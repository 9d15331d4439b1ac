// SPDX-License-Identifier: GPL-2.0
/* A helper sets IB_SEND_INLINE only when the length fits the granted
 * size; the caller does not ask first, so a long request leaves the
 * helper without the flag and its virtual address is posted for the
 * HCA to DMA from. */
struct sx_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

int sx_create_qp(struct sx_queue *queue, struct rdma_cm_id *id);
void sx_set_inline(struct sx_queue *queue, struct ib_send_wr *wr, u32 len);
// SPDX-License-Identifier: GPL-2.0

static int sx_create_qp(struct sx_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	queue->max_inline_data = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}
EXPORT_SYMBOL(sx_create_qp);

static void sx_set_inline(struct sx_queue *queue, struct ib_send_wr *wr, u32 len)
{
	if (len <= queue->max_inline_data)
		wr->send_flags |= IB_SEND_INLINE;
}
EXPORT_SYMBOL(sx_set_inline);
// SPDX-License-Identifier: GPL-2.0

struct sx_buf {
	void *va;
	u64 dma;
};

static int sx_buf_map(struct ib_device *dev, struct sx_buf *b, u32 len)
{
	b->dma = ib_dma_map_single(dev, b->va, len, DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, b->dma);
}

static int sx_ulp_send(struct sx_queue *queue, struct sx_buf *b, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)b->va;
	sge.length = len;
	sge.lkey = queue->pd->local_dma_lkey;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IB_SEND_SIGNALED;
	sx_set_inline(queue, &wr, len);
	return ib_post_send(queue->qp, &wr, NULL); /* want: noninline-sge-virt */
}
