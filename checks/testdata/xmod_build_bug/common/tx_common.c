// SPDX-License-Identifier: GPL-2.0
/* The common code maps the header buffer and builds the header request:
 * its SGE and its list. It neither sets IB_SEND_INLINE nor posts. */
#include "tx_common.h"

int tx_map_hdr(struct ib_device *dev, struct tx_conn *c)
{
	c->hdr_dma = ib_dma_map_single(dev, c->hdr, 128, DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, c->hdr_dma);
}

void tx_build_hdr(struct tx_conn *c, struct ib_send_wr *wr, struct ib_sge *sge, u32 len)
{
	sge->addr = c->hdr_dma;
	sge->length = len;
	sge->lkey = c->pd->local_dma_lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
}
