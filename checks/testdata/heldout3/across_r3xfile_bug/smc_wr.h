/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SMC_WR_H
#define SMC_WR_H

#define SMC_WR_BUF_SIZE		48
#define SMC_WR_TX_SIZE		44

struct smc_link;

int smc_wr_create_link(struct smc_link *lnk);
int smc_wr_tx_send(struct smc_link *link, struct smc_wr_tx_pend_priv *priv);

#endif
