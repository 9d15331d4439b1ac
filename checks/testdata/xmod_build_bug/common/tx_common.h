/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the client and the common code (smbdirect-style: the
 * transport's common folder builds requests, each user posts them). */
struct tx_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	void *hdr;
	u64 hdr_dma;
	u32 max_inline;
};

void tx_build_hdr(struct tx_conn *c, struct ib_send_wr *wr, struct ib_sge *sge, u32 len);
