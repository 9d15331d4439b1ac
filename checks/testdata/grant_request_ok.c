// SPDX-License-Identifier: GPL-2.0
/* Messages up to a constant go inline. The guard's constant is what
 * the QP asked for: a successful creation grants at least that. */
#define TC_INLINE_REQ 256
#define TC_MSG_MAX 512

struct tc_port {
	struct ib_qp *qp;
	struct ib_pd *pd;
	bool ready;
};

static int tc_port_qp(struct tc_port *p, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.cap.max_send_wr = 64;
	qa.cap.max_inline_data = TC_INLINE_REQ;
	rc = rdma_create_qp(id, p->pd, &qa);
	if (rc)
		goto fail;
	p->ready = true;
	return 0;
fail:
	p->ready = false;
	return rc;
}

static int tc_port_send(struct tc_port *p, void *msg, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (!p->ready)
		return -ENOTCONN;
	sge.addr = (uintptr_t)msg;
	sge.length = len;
	sge.lkey = p->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (len > TC_INLINE_REQ)
		return -EMSGSIZE;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(p->qp, &wr, NULL);
}
