// SPDX-License-Identifier: GPL-2.0
/* An invalidate-then-reply sequence: the LOCAL_INV of the client's
 * region and the reply are put in an array of request pointers one
 * element at a time; the loop that signals them also flags every one
 * inline, the LOCAL_INV included. The sequence is posted through its
 * first element. */
struct pi_ctx {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	struct pi_reply *rep;
};

struct pi_reply {
	__be32 status;
	__be32 tag;
};

static int pi_qp(struct pi_ctx *x, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 64;
	rc = rdma_create_qp(id, x->pd, &qa);
	if (rc)
		return rc;
	x->max_inline = qa.cap.max_inline_data;
	return 0;
}

static int pi_reply_inv(struct pi_ctx *x, u32 rkey)
{
	struct ib_send_wr inv = {}, rep = {};
	struct ib_send_wr *seq[2];
	struct ib_sge sge;
	int i;

	if (sizeof(struct pi_reply) > x->max_inline)
		return -EINVAL;
	inv.opcode = IB_WR_LOCAL_INV;
	inv.ex.invalidate_rkey = rkey;
	inv.next = &rep;
	sge.addr = (u64)(uintptr_t)x->rep;
	sge.length = sizeof(struct pi_reply);
	sge.lkey = x->pd->local_dma_lkey;
	rep.opcode = IB_WR_SEND;
	rep.sg_list = &sge;
	rep.num_sge = 1;
	seq[0] = &inv;
	seq[1] = &rep;
	for (i = 0; i < 2; i++) {
		seq[i]->send_flags = IB_SEND_SIGNALED;
		seq[i]->send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(x->qp, seq[0], NULL); /* want: inline-on-registration */
}
