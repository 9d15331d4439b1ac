// SPDX-License-Identifier: GPL-2.0
/* Two pieces, their lengths in locals, the decision in a bool: the bool
 * looks at their sum. */
struct tc_pipe {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_pipe_qp(struct tc_pipe *pp, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 220;
	rc = rdma_create_qp(id, pp->pd, &qa);
	pp->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static int tc_pipe_push(struct tc_pipe *pp, void *a, u32 alen, void *b, u32 blen,
			u64 a_dma, u64 b_dma)
{
	struct ib_send_wr wr = {};
	struct ib_sge sg[2];
	bool small = alen + blen <= pp->max_inline;

	sg[0].addr = a_dma;
	sg[0].length = alen;
	sg[1].addr = b_dma;
	sg[1].length = blen;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IB_WR_SEND;
	if (small) {
		sg[0].addr = (uintptr_t)a;
		sg[1].addr = (uintptr_t)b;
		wr.send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(pp->qp, &wr, NULL);
}
