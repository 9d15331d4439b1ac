// SPDX-License-Identifier: GPL-2.0
/* The inline decision is applied through a function-like macro. This one
 * only sets the flag: the SGE keeps its DMA address. */
#define TC_GO_INLINE(w, s, p) ((w)->send_flags |= IB_SEND_INLINE)

struct tc_m {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *buf;
	u64 buf_dma;
	u32 max_inline;
};

static int tc_m_qp(struct tc_m *m, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 96;
	rc = rdma_create_qp(id, m->pd, &qa);
	m->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static void tc_m_map(struct ib_device *dev, struct tc_m *m)
{
	m->buf_dma = ib_dma_map_single(dev, m->buf, 96, DMA_TO_DEVICE);
}

static int tc_m_send(struct tc_m *m, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = m->buf_dma;
	sge.length = len;
	sge.lkey = m->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (len <= m->max_inline)
		TC_GO_INLINE(&wr, &sge,
			     m->buf);
	return ib_post_send(m->qp, &wr, NULL); /* want: inline-sge-addr */
}
