// SPDX-License-Identifier: GPL-2.0
/* A user has the core mark its small requests inline; its SGE holds the buffer's kernel virtual
 * address (small requests only). */
#include "../core/sx_core.h"

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
	if (len <= queue->max_inline_data)
		sx_set_inline(queue, &wr, len);
	else
		return -EMSGSIZE;
	return ib_post_send(queue->qp, &wr, NULL);
}
