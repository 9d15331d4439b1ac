// SPDX-License-Identifier: GPL-2.0
/* srp-style: the QP asks for SRP_MAX_INLINE and setup fails when the
 * creation does, so by the verbs contract that much fits; the post path
 * checks its length against a define, not the granted size. It checks against the
 * request. */
#define SRP_MAX_INLINE 96
#define SRP_MAX_IMM 128

struct srp_target {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *imm_buf;
};

static int srp_create_target_ib(struct srp_target *t)
{
	struct ib_qp_init_attr *init_attr;
	struct ib_qp *qp;

	init_attr = kzalloc(sizeof(*init_attr), GFP_KERNEL);
	if (!init_attr)
		return -ENOMEM;
	init_attr->cap.max_inline_data = SRP_MAX_INLINE;
	qp = ib_create_qp(t->pd, init_attr);
	kfree(init_attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	t->qp = qp;
	return 0;
}

static int srp_post_imm(struct srp_target *t, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > SRP_MAX_INLINE)
		return -EINVAL;
	sge.addr = (uintptr_t)t->imm_buf;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(t->qp, &wr, NULL);
}
