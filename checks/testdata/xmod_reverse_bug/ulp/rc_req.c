// SPDX-License-Identifier: GPL-2.0
/* A user hands the core a request whose SGE holds the header's virtual address: the core posts it
 * without the inline flag, so the HCA would DMA from it. */
#include "../core/rc_core.h"

struct rc_req {
	void *hdr;
	u64 hdr_dma;
	u32 len;
};

static int rc_req_map(struct ib_device *dev, struct rc_req *r)
{
	r->hdr_dma = ib_dma_map_single(dev, r->hdr, r->len, DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, r->hdr_dma);
}

static int rc_req_send(struct rc_conn *c, struct rc_req *r)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)r->hdr;
	sge.length = r->len;
	sge.lkey = c->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	return rc_post(c, &wr); /* want: noninline-sge-virt */
}
