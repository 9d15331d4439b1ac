// SPDX-License-Identifier: GPL-2.0
/* The core creates the queue's QP and or-s IB_SEND_INLINE into its users'
 * requests that fit the granted size. */
#include "sx_core.h"

int sx_create_qp(struct sx_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	queue->max_inline_data = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}
EXPORT_SYMBOL(sx_create_qp);

void sx_set_inline(struct sx_queue *queue, struct ib_send_wr *wr, u32 len)
{
	if (len <= queue->max_inline_data)
		wr->send_flags |= IB_SEND_INLINE;
}
EXPORT_SYMBOL(sx_set_inline);
