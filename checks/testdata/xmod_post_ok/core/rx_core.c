// SPDX-License-Identifier: GPL-2.0
/* The core creates the QP, records the granted inline size and posts
 * the requests its users hand it. It never sets IB_SEND_INLINE. */
#include "rx_core.h"

int rx_create_qp(struct rx_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 64;
	rc = rdma_create_qp(id, c->pd, &qa);
	c->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}
EXPORT_SYMBOL(rx_create_qp);

int rx_post_send(struct rx_conn *c, struct ib_send_wr *wr)
{
	wr->next = NULL;
	return ib_post_send(c->qp, wr, NULL);
}
EXPORT_SYMBOL(rx_post_send);
