// SPDX-License-Identifier: GPL-2.0
/* rds-ib-style credit update: an immediate-only send, posted inline. */

static int rds_ib_send_credit_update(struct rds_ib_connection *ic, u32 credits)
{
	struct ib_send_wr wr;
	unsigned long flags;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = RDS_IB_CREDIT_WR_ID;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(credits);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED;
	wr.send_flags |= IB_SEND_INLINE;

	spin_lock_irqsave(&ic->i_ack_lock, flags);
	ret = ib_post_send(ic->i_cm_id->qp, &wr, NULL);
	spin_unlock_irqrestore(&ic->i_ack_lock, flags);
	if (unlikely(ret)) {
		clear_bit(IB_ACK_IN_FLIGHT, &ic->i_ack_flags);
		rds_ib_stats_inc(s_ib_ack_send_failure);
		rds_ib_conn_error(ic->conn, "sending credit update failed\n");
	}
	return ret;
}
