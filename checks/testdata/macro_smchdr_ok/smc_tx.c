// SPDX-License-Identifier: GPL-2.0
/* The CDC message goes inline when it fits; the SGE is pointed by the
 * header's macro. It is pointed at
 * the message itself. */
#include "smc_wr.h"

static int smc_ib_create_qp(struct smc_link *lnk, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qp_attr = {};
	int rc;

	qp_attr.cap.max_inline_data = sizeof(struct smc_cdc_msg);
	rc = rdma_create_qp(id, lnk->roce_pd, &qp_attr);
	if (rc)
		return rc;
	lnk->max_inline = qp_attr.cap.max_inline_data;
	return 0;
}

static void smc_wr_map(struct ib_device *dev, struct smc_link *lnk)
{
	lnk->wr_tx_dma_addr = ib_dma_map_single(dev, lnk->wr_tx_buf, sizeof(*lnk->wr_tx_buf), DMA_TO_DEVICE);
}

static int smc_cdc_send(struct smc_link *lnk, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > lnk->max_inline)
		return -EMSGSIZE;
	SMC_WR_SGE(&sge, (uintptr_t)lnk->wr_tx_buf, len, lnk->roce_pd->local_dma_lkey);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	smc_wr_tx_inline(&wr);
	return ib_post_send(lnk->roce_qp, &wr, NULL);
}
