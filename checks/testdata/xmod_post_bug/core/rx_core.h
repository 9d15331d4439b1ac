/* SPDX-License-Identifier: GPL-2.0 */
/* The core's connection and its posting entry point (rtrs-style: a
 * core module posts what its users build). */
struct rx_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

int rx_post_send(struct rx_conn *c, struct ib_send_wr *wr);
int rx_create_qp(struct rx_conn *c, struct rdma_cm_id *id);
