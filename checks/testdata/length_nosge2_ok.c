// SPDX-License-Identifier: GPL-2.0
/* A wake-up send: built with a designated initializer. It names no
 * SGE (num_sge is 0), so the inline flag copies nothing. */
struct tc_ring {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_sge status_sge;
	u32 status;
};

static int tc_ring_qp(struct tc_ring *r, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};

	qa.cap.max_inline_data = 0;
	return rdma_create_qp(id, r->pd, &qa);
}

static int tc_ring_wake(struct tc_ring *r, u32 tag)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.ex.imm_data = cpu_to_be32(tag),
		.send_flags = IB_SEND_INLINE,
	};

	return ib_post_send(r->qp, &wr, NULL);
}
