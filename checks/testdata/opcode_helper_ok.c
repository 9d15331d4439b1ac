// SPDX-License-Identifier: GPL-2.0
/* rtrs-style: a helper sets the opcode of the request it is handed. */
struct tc_inv {
	struct ib_send_wr inv_wr;
	u32 rkey;
};

struct tc_con {
	struct ib_qp *qp;
	struct ib_pd *pd;
};

static void tc_init_inv(struct ib_send_wr *wr, u32 rkey)
{
	wr->opcode = IB_WR_LOCAL_INV;
	wr->ex.invalidate_rkey = rkey;
	wr->num_sge = 0;
}

static int tc_inv_rkey(struct tc_con *con, struct tc_inv *inv)
{
	tc_init_inv(&inv->inv_wr, inv->rkey);
	inv->inv_wr.next = NULL;
	inv->inv_wr.send_flags = IB_SEND_SIGNALED;
	return ib_post_send(con->qp, &inv->inv_wr, NULL);
}
