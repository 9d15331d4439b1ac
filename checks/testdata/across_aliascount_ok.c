// SPDX-License-Identifier: GPL-2.0
/* Two helpers each append one SGE to the message's request through an
 * alias and bump num_sge; the message goes inline when short. The
 * second helper appends the payload by its virtual address. */
struct msg {
	struct ib_send_wr req;
	struct ib_sge sgl[2];
	void *head;
	u32 head_len;
	dma_addr_t pay_dma;
	void *pay;
	u32 pay_len;
	u32 lkey;
};

struct chan {
	struct ib_qp *qp;
	u32 inline_max;
};

static int chan_create(struct chan *ch, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr a = {};
	int rc;

	a.cap.max_send_sge = 2;
	a.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, pd, &a);
	if (rc)
		return rc;
	ch->qp = id->qp;
	ch->inline_max = a.cap.max_inline_data;
	return 0;
}

static void msg_add_head(struct msg *m)
{
	struct ib_send_wr *r = &m->req;
	struct ib_sge *sg = &m->sgl[r->num_sge++];

	sg->addr = (uintptr_t)m->head;
	sg->length = m->head_len;
	sg->lkey = m->lkey;
	r->sg_list = m->sgl;
}

static void msg_add_payload(struct msg *m)
{
	struct ib_send_wr *r = &m->req;
	struct ib_sge *sg = &m->sgl[r->num_sge++];

	sg->addr = (uintptr_t)m->pay;
	sg->length = m->pay_len;
	sg->lkey = m->lkey;
}

int chan_send(struct chan *ch, struct msg *m)
{
	m->req.num_sge = 0;
	m->req.opcode = IB_WR_SEND;
	m->req.send_flags = 0;
	msg_add_head(m);
	msg_add_payload(m);
	if (m->head_len + m->pay_len <= ch->inline_max)
		m->req.send_flags = IB_SEND_INLINE;
	return ib_post_send(ch->qp, &m->req, NULL);
}
