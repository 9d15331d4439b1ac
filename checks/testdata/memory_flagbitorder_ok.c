// SPDX-License-Identifier: GPL-2.0
/* A header sender builds its flags in a local (signaled, plus inline when
 * the header fits the granted size) and picks the SGE's address with a
 * ternary on the local's inline bit, after the bit is decided. */
struct fo_link {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 inline_max;
	struct fo_hdr *hdr;
	dma_addr_t hdr_dma;
};

struct fo_hdr {
	__be32 type;
	__be32 len;
	__be64 cookie;
};

static int fo_link_qp(struct fo_link *l, struct ib_pd *pd, struct ib_qp_init_attr *qa)
{
	struct ib_qp *qp;

	qa->cap.max_inline_data = 64;
	qp = ib_create_qp(pd, qa);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	l->qp = qp;
	l->inline_max = qa->cap.max_inline_data;
	return 0;
}

static int fo_send_hdr(struct fo_link *l, u32 hlen)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	unsigned int flags = IB_SEND_SIGNALED;

	if (hlen <= l->inline_max)
		flags |= IB_SEND_INLINE;
	sge.addr = flags & IB_SEND_INLINE ? (u64)(uintptr_t)l->hdr : l->hdr_dma;
	sge.length = hlen;
	sge.lkey = l->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = flags;
	return ib_post_send(l->qp, &wr, NULL);
}
