// SPDX-License-Identifier: GPL-2.0
/* A signalled send of a scatterlist entry, keyed with the PD's DMA key.
 * The SGE is given the entry's virtual address (sg_virt). */
struct tc_sconn {
	struct ib_qp *qp;
	struct ib_pd *pd;
};

static int tc_send_sg(struct ib_device *dev, struct tc_sconn *c, struct scatterlist *sg)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (!ib_dma_map_sg(dev, sg, 1, DMA_TO_DEVICE))
		return -ENOMEM;
	sge.addr = (u64)(uintptr_t)sg_virt(sg);
	sge.length = sg_dma_len(sg);
	sge.lkey = c->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	return ib_post_send(c->qp, &wr, NULL); /* want: noninline-sge-virt */
}
