// SPDX-License-Identifier: GPL-2.0
/* The host takes its send flags from the core: inline when the command
 * fits the granted size. The SGE holds the DMA address on every path. */
#include "../core/sx_core.h"

struct sx_qe {
	void *data;
	u64 dma;
};

static int sx_alloc_qe(struct ib_device *ibdev, struct sx_qe *qe, size_t size)
{
	qe->data = kzalloc(size, GFP_KERNEL);
	if (!qe->data)
		return -ENOMEM;
	qe->dma = ib_dma_map_single(ibdev, qe->data, size, DMA_TO_DEVICE);
	return ib_dma_mapping_error(ibdev, qe->dma);
}

static int sx_post_cmd(struct sx_queue *queue, struct sx_qe *qe, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = qe->dma;
	sge.length = len;
	sge.lkey = queue->pd->local_dma_lkey;

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = sx_send_flags(queue, len);
	return ib_post_send(queue->qp, &wr, NULL); /* want: inline-sge-addr */
}
