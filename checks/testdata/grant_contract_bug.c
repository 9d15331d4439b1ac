// SPDX-License-Identifier: GPL-2.0
/* Fixed-size acknowledgements posted inline with no guard: the QP asks
 * for the ack's size and fails setup when creation fails, so by the
 * verbs contract an ack fits. This one posts the larger status block:
 * reported where the flag is set, the request that does not cover it as
 * evidence. */
struct tc_ack {
	__be32 seq;
	__be32 credits;
};

struct tc_status_blk {
	__be32 seq;
	__be32 credits;
	__be64 stamp[6];
};

struct tc_sess {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct tc_ack ack;
	struct tc_status_blk blk;
};

static int tc_sess_qp(struct tc_sess *s, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = sizeof(struct tc_ack);
	rc = rdma_create_qp(id, s->pd, &qa);
	if (rc)
		return rc;
	return 0;
}

static int tc_sess_ack(struct tc_sess *s)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)&s->blk;
	sge.length = sizeof(struct tc_status_blk);
	sge.lkey = s->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED; /* want: inline-size */
	return ib_post_send(s->qp, &wr, NULL);
}
