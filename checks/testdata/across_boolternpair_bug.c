// SPDX-License-Identifier: GPL-2.0
/* A completion sender's helper is told by a bool whether the completion
 * goes inline; it uses the bool twice: a ternary sets the flag, and an
 * if/else picks the address, but the arms are swapped: the mapping goes
 * inline, the virtual address to the HCA. */
struct bt_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 granted_inline;
};

struct bt_cqe_msg {
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct bt_cqe *cqe;
	dma_addr_t cqe_dma;
	u32 len;
};

static int bt_create(struct bt_queue *q, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_send_sge = 1;
	attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, q->pd, &attr);
	if (ret)
		return ret;
	q->granted_inline = attr.cap.max_inline_data;
	return 0;
}

static void bt_prep(struct bt_queue *q, struct bt_cqe_msg *m, bool direct)
{
	m->wr.send_flags = direct ? IB_SEND_INLINE : IB_SEND_SIGNALED;
	m->wr.opcode = IB_WR_SEND;
	m->wr.sg_list = &m->sge;
	m->wr.num_sge = 1;
	m->sge.length = m->len;
	m->sge.lkey = q->pd->local_dma_lkey;
	if (direct)
		m->sge.addr = m->cqe_dma;
	else
		m->sge.addr = (u64)(uintptr_t)m->cqe;
}

static int bt_complete(struct bt_queue *q, struct bt_cqe_msg *m)
{
	bool small = m->len <= q->granted_inline;

	bt_prep(q, m, small);
	return ib_post_send(q->qp, &m->wr, NULL); /* want: inline-sge-addr */ /* want: noninline-sge-virt */
}
