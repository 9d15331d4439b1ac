// SPDX-License-Identifier: GPL-2.0
/* Builds the inline ping. Its SGE is given the DMA address: reported at
 * the post in tc_post.c, with this exit as evidence (one defect, one
 * report). */
#include "tc_xfer.h"

void tc_build_ping(struct tc_xreq *req, struct tc_xconn *c)
{
	req->sge.addr = c->ping_dma;
	req->sge.length = sizeof(struct tc_ping);
	req->sge.lkey = c->pd->local_dma_lkey;
	req->wr.sg_list = &req->sge;
	req->wr.num_sge = 1;
	req->wr.opcode = IB_WR_SEND;
	req->wr.send_flags = IB_SEND_INLINE;
}
