// SPDX-License-Identifier: GPL-2.0
/* Creates the QP (asking for the ping's size, failing setup otherwise)
 * and posts what tc_build.c built. */
#include "tc_xfer.h"

int tc_xconn_create(struct tc_xconn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = sizeof(struct tc_ping);
	ret = rdma_create_qp(id, c->pd, &attr);
	if (ret)
		return ret;
	c->qp = id->qp;
	return 0;
}

void tc_xconn_map(struct ib_device *dev, struct tc_xconn *c)
{
	c->ping_dma = ib_dma_map_single(dev, c->ping, sizeof(*c->ping), DMA_TO_DEVICE);
}

int tc_send_ping(struct tc_xconn *c, struct tc_xreq *req)
{
	tc_build_ping(req, c);
	return ib_post_send(c->qp, &req->wr, NULL);
}
