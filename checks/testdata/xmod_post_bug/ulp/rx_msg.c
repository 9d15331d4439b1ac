// SPDX-License-Identifier: GPL-2.0
/* A user of the core sends a small message inline through the core's
 * posting function; the SGE holds the message's DMA address: the CPU would copy from a bus address. */
#include "../core/rx_core.h"

struct rx_msg {
	void *buf;
	u64 dma;
	u32 len;
};

static int rx_msg_map(struct ib_device *dev, struct rx_msg *m)
{
	m->dma = ib_dma_map_single(dev, m->buf, m->len, DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, m->dma);
}

static int rx_msg_send(struct rx_conn *c, struct rx_msg *m)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (m->len > c->max_inline)
		return -EMSGSIZE;
	sge.addr = m->dma;
	sge.length = m->len;
	sge.lkey = c->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return rx_post_send(c, &wr); /* want: inline-sge-addr */
}
