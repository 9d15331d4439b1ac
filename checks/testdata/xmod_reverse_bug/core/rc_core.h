/* SPDX-License-Identifier: GPL-2.0 */
struct rc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
};

int rc_post(struct rc_conn *c, struct ib_send_wr *wr);
