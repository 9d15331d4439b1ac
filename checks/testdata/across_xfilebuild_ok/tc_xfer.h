/* SPDX-License-Identifier: GPL-2.0 */
/* A ping request built by one file of the module, posted by another. */
struct tc_ping {
	__be32 magic;
	__be32 seq;
	__be64 stamp;
};

struct tc_xconn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct tc_ping *ping;
	u64 ping_dma;
};

struct tc_xreq {
	struct ib_send_wr wr;
	struct ib_sge sge;
};

void tc_build_ping(struct tc_xreq *req, struct tc_xconn *c);
