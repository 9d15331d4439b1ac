// SPDX-License-Identifier: GPL-2.0
/* smc-style: __pa() is a physical address, not a kernel virtual one. */
struct tc_buf_desc {
	void *cpu_addr;
	u64 dma_addr;
	u32 len;
};

struct tc_link {
	struct ib_qp *roce_qp;
	struct ib_pd *pd;
	struct ib_qp_init_attr qp_attr;
	struct ib_sge sge;
};

static int tc_link_qp(struct tc_link *lnk)
{
	struct ib_qp *qp;

	lnk->qp_attr.cap.max_inline_data = 64;
	qp = ib_create_qp(lnk->pd, &lnk->qp_attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	lnk->roce_qp = qp;
	return 0;
}

static int tc_write(struct tc_link *lnk, struct tc_buf_desc *buf, u32 len)
{
	struct ib_send_wr wr = {};

	wr.opcode = IB_WR_SEND;
	wr.sg_list = &lnk->sge;
	wr.num_sge = 1;
	lnk->sge.length = len;
	if (len < lnk->qp_attr.cap.max_inline_data) {
		lnk->sge.addr = (uintptr_t)buf->cpu_addr;
		wr.send_flags |= IB_SEND_INLINE;
	} else {
		lnk->sge.addr = buf->dma_addr;
	}
	return ib_post_send(lnk->roce_qp, &wr, NULL);
}
