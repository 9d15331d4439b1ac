// SPDX-License-Identifier: GPL-2.0
/* The core posts for its users; whether a request goes inline is the
 * user's decision, passed in as a bool. */
#include "bp_core.h"

int bp_create_qp(struct bp_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, c->pd, &qa);
	c->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}
EXPORT_SYMBOL(bp_create_qp);

int bp_post(struct bp_conn *c, struct ib_send_wr *wr, struct ib_sge *sge, bool small)
{
	if (small) {
		sge->addr = (uintptr_t)c->buf;
		wr->send_flags |= IB_SEND_INLINE; /* want: inline-size */
	}
	return ib_post_send(c->qp, wr, NULL);
}
EXPORT_SYMBOL(bp_post);
