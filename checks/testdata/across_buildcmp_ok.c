// SPDX-License-Identifier: GPL-2.0
/* A status sender hands its builder the comparison itself (whether the
 * status fits the granted inline size); the builder returns early with the
 * status's virtual address when it does. The caller repeats the same
 * comparison to set IB_SEND_INLINE. */
struct bc_ep {
	struct ib_qp *qp;
	struct ib_pd *pd;
	unsigned int inline_sz;
	struct bc_status *st;
	dma_addr_t st_dma;
};

struct bc_status {
	__be16 code;
	__be16 flags;
	__be32 tag;
	u8 sense[96];
};

static int bc_ep_qp(struct bc_ep *ep, struct ib_pd *pd, struct ib_qp_init_attr *qa)
{
	struct ib_qp *qp;

	qa->cap.max_inline_data = 128;
	qp = ib_create_qp(pd, qa);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ep->qp = qp;
	ep->inline_sz = qa->cap.max_inline_data;
	return 0;
}

static void bc_fill(struct bc_ep *ep, struct ib_sge *sge, u32 len, int direct)
{
	sge->length = len;
	sge->lkey = ep->pd->local_dma_lkey;
	if (direct) {
		sge->addr = (u64)(uintptr_t)ep->st;
		return;
	}
	sge->addr = ep->st_dma;
}

static int bc_send_status(struct bc_ep *ep, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	bc_fill(ep, &sge, len, len <= ep->inline_sz);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= ep->inline_sz)
		wr.send_flags |= IB_SEND_INLINE;
	return ib_post_send(ep->qp, &wr, NULL);
}
