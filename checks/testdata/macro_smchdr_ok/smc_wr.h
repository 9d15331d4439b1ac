/* SPDX-License-Identifier: GPL-2.0 */
/* smc-style header: a statement-expression macro points an SGE, a static
 * inline helper marks a request inline. */
#define SMC_WR_SGE(s, a, l, k) ({ (s)->addr = (a); (s)->length = (l); (s)->lkey = (k); 0; })

static inline void smc_wr_tx_inline(struct ib_send_wr *wr)
{
	wr->send_flags |= IB_SEND_INLINE;
}

struct smc_cdc_msg {
	u8 type;
	u8 len;
	__be16 seqno;
	__be32 token;
	__be64 prod;
};

struct smc_link {
	struct ib_qp *roce_qp;
	struct ib_pd *roce_pd;
	struct smc_cdc_msg *wr_tx_buf;
	u64 wr_tx_dma_addr;
	u32 max_inline;
};
