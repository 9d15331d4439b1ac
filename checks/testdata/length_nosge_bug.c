// SPDX-License-Identifier: GPL-2.0
/* A credit update is an RDMA write with immediate. This one also
 * carries the credit count as a payload, inline and unguarded. */
struct tc_peer {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u64 remote_addr;
	u32 rkey;
	u32 credits;
	u32 max_inline;
};

static int tc_peer_qp(struct tc_peer *p, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 32;
	rc = rdma_create_qp(id, p->pd, &qa);
	p->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static int tc_send_credits(struct tc_peer *p)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)&p->credits;
	sge.length = sizeof(p->credits);
	sge.lkey = p->pd->local_dma_lkey;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(p->credits);
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED; /* want: inline-size */
	wr.remote_addr = p->remote_addr;
	wr.rkey = p->rkey;
	return ib_post_send(p->qp, &wr.wr, NULL);
}
