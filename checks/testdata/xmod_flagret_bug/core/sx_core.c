// SPDX-License-Identifier: GPL-2.0
/* The core creates the queue's QP and decides the send flags for its users
 * (nvme-rdma-style, in a shared folder). */
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

u32 sx_send_flags(struct sx_queue *queue, u32 len)
{
	if (len > queue->max_inline_data)
		return IB_SEND_SIGNALED;
	return IB_SEND_SIGNALED | IB_SEND_INLINE;
}
EXPORT_SYMBOL(sx_send_flags);
