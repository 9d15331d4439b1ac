// SPDX-License-Identifier: GPL-2.0
/* smc-style: a helper sets IB_SEND_INLINE when the message fits and
 * says so in its bool return; the caller picks the address from it.
 * The inline path gets the message's address. */
struct smc_cdc_msg {
	u8 type;
	u8 len;
	__be16 seqno;
	__be32 token;
};

struct smc_link {
	struct ib_qp *roce_qp;
	struct ib_pd *roce_pd;
	struct smc_cdc_msg *msg;
	u64 msg_dma;
	u32 max_inline;
};

static int smc_link_qp(struct smc_link *lnk, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qp_attr = {};
	int rc;

	qp_attr.cap.max_inline_data = 64;
	rc = rdma_create_qp(id, lnk->roce_pd, &qp_attr);
	lnk->max_inline = rc ? 0 : qp_attr.cap.max_inline_data;
	return rc;
}

static void smc_link_map(struct ib_device *dev, struct smc_link *lnk)
{
	lnk->msg_dma = ib_dma_map_single(dev, lnk->msg, sizeof(*lnk->msg), DMA_TO_DEVICE);
}

static bool smc_wr_try_inline(struct smc_link *lnk, struct ib_send_wr *wr, u32 len)
{
	if (len > lnk->max_inline)
		return false;
	wr->send_flags |= IB_SEND_INLINE;
	return true;
}

static int smc_tx_cdc(struct smc_link *lnk, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.length = len;
	sge.lkey = lnk->roce_pd->local_dma_lkey;
	if (smc_wr_try_inline(lnk, &wr, len))
		sge.addr = (uintptr_t)lnk->msg;
	else
		sge.addr = lnk->msg_dma;
	return ib_post_send(lnk->roce_qp, &wr, NULL);
}
