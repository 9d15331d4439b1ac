// SPDX-License-Identifier: GPL-2.0
/* rds-style: a do-while statement macro fills the header SGE and marks
 * the request inline in one go, after the size was checked against the
 * grant; the other branch fills it for a DMA send. The inline branch is
 * handed the header's DMA address. */
#define RDS_IB_FILL_INLINE(wr, sge, a, l)			\
	do {							\
		(sge)->addr = (a);				\
		(sge)->length = (l);				\
		(wr)->send_flags |= IB_SEND_INLINE;		\
	} while (0)
#define RDS_IB_FILL(sge, a, l, k)				\
	do {							\
		(sge)->addr = (a);				\
		(sge)->length = (l);				\
		(sge)->lkey = (k);				\
	} while (0)

struct rds_ib_hdr {
	__be32 h_len;
	__be32 h_seq;
	__be64 h_ack;
};

struct rds_ib_connection {
	struct ib_qp *i_cm_qp;
	struct ib_pd *i_pd;
	struct rds_ib_hdr *i_hdr;
	u64 i_hdr_dma;
	u32 i_max_inline;
};

static int rds_ib_setup_qp(struct rds_ib_connection *ic, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = sizeof(struct rds_ib_hdr);
	ret = rdma_create_qp(id, ic->i_pd, &attr);
	ic->i_max_inline = ret ? 0 : attr.cap.max_inline_data;
	return ret;
}

static int rds_ib_map_hdr(struct ib_device *dev, struct rds_ib_connection *ic)
{
	ic->i_hdr_dma = ib_dma_map_single(dev, ic->i_hdr, sizeof(*ic->i_hdr), DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, ic->i_hdr_dma);
}

static int rds_ib_xmit_hdr(struct rds_ib_connection *ic, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (len <= ic->i_max_inline)
		RDS_IB_FILL_INLINE(&wr, &sge, ic->i_hdr_dma, len);
	else
		RDS_IB_FILL(&sge, ic->i_hdr_dma, len, ic->i_pd->local_dma_lkey);
	return ib_post_send(ic->i_cm_qp, &wr, NULL); /* want: inline-sge-addr */
}
