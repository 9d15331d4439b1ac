// SPDX-License-Identifier: GPL-2.0
/* The client creates its QP, has the common code build the header
 * request and posts it inline (a header that does not fit the
 * granted size is refused): the request's SGE holds
 * the header's DMA address (the common code's build), and the inline
 * flag set here makes the CPU copy from it. */
#include "../common/tx_common.h"

int tx_create_qp(struct tx_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, c->pd, &qa);
	c->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

int tx_client_send_hdr(struct tx_conn *c, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > c->max_inline)
		return -EMSGSIZE;
	tx_build_hdr(c, &wr, &sge, len);
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(c->qp, &wr, NULL); /* want: inline-sge-addr */
}
