// SPDX-License-Identifier: GPL-2.0
/* A credit update is posted inline, signalled, with no guard: the QP
 * asks for the short credit message's size but the extended one is
 * posted. One defect: reported where the flag is set, the request as its
 * evidence. */
struct gs_credit {
	__be32 seq;
	__be32 credits;
};

struct gs_credit_ext {
	__be32 seq;
	__be32 credits;
	__be64 window[4];
};

struct gs_peer {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct gs_credit cr;
	struct gs_credit_ext crx;
};

static int gs_peer_qp(struct gs_peer *p, struct ib_pd *pd)
{
	struct ib_qp_init_attr qa = {};
	struct ib_qp *qp;

	qa.cap.max_send_wr = 8;
	qa.cap.max_send_sge = 1;
	qa.cap.max_inline_data = sizeof(struct gs_credit);
	qp = ib_create_qp(pd, &qa);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	p->qp = qp;
	return 0;
}

static int gs_send_credit(struct gs_peer *p)
{
	struct ib_send_wr wr = {};
	struct ib_sge sges[1];

	sges[0].addr = (u64)(uintptr_t)&p->crx;
	sges[0].length = sizeof(struct gs_credit_ext);
	sges[0].lkey = p->pd->local_dma_lkey;
	wr.sg_list = sges;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */
	return ib_post_send(p->qp, &wr, NULL);
}
