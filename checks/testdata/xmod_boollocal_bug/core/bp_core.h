/* SPDX-License-Identifier: GPL-2.0 */
struct bp_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *buf;
	u64 buf_dma;
	u32 max_inline;
};

int bp_post(struct bp_conn *c, struct ib_send_wr *wr, struct ib_sge *sge, bool small);
