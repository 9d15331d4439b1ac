// SPDX-License-Identifier: GPL-2.0
/* A function-like macro of a kernel header fills the SGE: with a DMA mapping (bug) or the buffer itself (twin). */
#include <rdma/ib_verbs.h>
#include <rdma/tc_helpers.h>

struct tc_q {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_device *dev;
	void *buf;
	u32 max_inline;
};

static int tc_q_create(struct tc_q *q, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, q->pd, &qa);
	q->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static int tc_q_send(struct tc_q *q, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > q->max_inline)
		return -22;
	TC_SGE_FILL(&sge, (uintptr_t)q->buf, len, q->pd->local_dma_lkey);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(q->qp, &wr, NULL);
}
