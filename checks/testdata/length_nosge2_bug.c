// SPDX-License-Identifier: GPL-2.0
/* A wake-up send: built with a designated initializer. The buggy one
 * names an SGE (a status word) and posts it inline with no size check. */
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
		.sg_list = &r->status_sge,
		.num_sge = 1,
		.send_flags = IB_SEND_INLINE, /* want: inline-size */
	};

	r->status_sge.addr = (uintptr_t)&r->status;
	r->status_sge.length = sizeof(r->status);
	return ib_post_send(r->qp, &wr, NULL);
}
