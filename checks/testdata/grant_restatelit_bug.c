// SPDX-License-Identifier: GPL-2.0
/* A heartbeat goes inline with no guard: the QP asks for 32 bytes, but
 * the heartbeat grew to 48. One defect: reported where the flag is set,
 * the request as its evidence. */
struct gl_link {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u8 beat[64];
};

static int gl_link_up(struct gl_link *l, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init = {};
	int err;

	init.cap.max_send_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_inline_data = 32;
	err = rdma_create_qp(id, l->pd, &init);
	if (err)
		return err;
	l->qp = id->qp;
	return 0;
}

static int gl_beat(struct gl_link *l)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = (u64)(uintptr_t)l->beat;
	sge.length = 48;
	sge.lkey = l->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE; /* want: inline-size */
	return ib_post_send(l->qp, &wr, NULL);
}
