// SPDX-License-Identifier: GPL-2.0
/* rds-style: a helper gives the address of ring entry i for the SGE of
 * a DMA send. It returns the entry's virtual address. */
struct rds_ib_conn {
	struct ib_qp *i_qp;
	struct ib_pd *i_pd;
	void *i_bufs[8];
	u64 i_dma[8];
};

static void rds_ib_map_ring(struct ib_device *dev, struct rds_ib_conn *ic)
{
	int i;

	for (i = 0; i < 8; i++)
		ic->i_dma[i] = ib_dma_map_single(dev, ic->i_bufs[i], 512, DMA_TO_DEVICE);
}

static u64 rds_ib_buf_addr(struct rds_ib_conn *ic, int i)
{
	return (u64)(unsigned long)ic->i_bufs[i];
}

static int rds_ib_xmit_ring(struct rds_ib_conn *ic, int i, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = rds_ib_buf_addr(ic, i);
	sge.length = len;
	sge.lkey = ic->i_pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	return ib_post_send(ic->i_qp, &wr, NULL); /* want: noninline-sge-virt */
}
