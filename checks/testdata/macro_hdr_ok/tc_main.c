// SPDX-License-Identifier: GPL-2.0
/* The SGE is filled through a macro from the module's header: the inline
 * path hands it the header's virtual address. */
#include "tc_sge.h"

struct tc_h {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *hdr;
	u64 hdr_dma;
	u32 max_inline;
};

static int tc_h_qp(struct tc_h *h, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = TC_HDR_LEN;
	rc = rdma_create_qp(id, h->pd, &qa);
	if (rc)
		return rc;
	h->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void tc_h_map(struct ib_device *dev, struct tc_h *h)
{
	h->hdr_dma = ib_dma_map_single(dev, h->hdr, TC_HDR_LEN, DMA_TO_DEVICE);
}

static int tc_h_send(struct tc_h *h)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (TC_HDR_LEN <= h->max_inline) {
		TC_SGE_FILL(&sge, (uintptr_t)h->hdr, TC_HDR_LEN, h->pd->local_dma_lkey);
		wr.send_flags = IB_SEND_INLINE;
	} else {
		TC_SGE_FILL(&sge, h->hdr_dma, TC_HDR_LEN, h->pd->local_dma_lkey);
	}
	return ib_post_send(h->qp, &wr, NULL);
}
