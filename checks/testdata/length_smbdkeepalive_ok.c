// SPDX-License-Identifier: GPL-2.0
/* smbdirect-style keepalive, posted inline with no size check. It carries no SGE: zero bytes fit any
 * grant. */
struct smbd_connection {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u8 packet[24];
};

static int smbd_create_qp(struct smbd_connection *info, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qp_attr = {};

	qp_attr.cap.max_send_wr = 16;
	qp_attr.cap.max_send_sge = 1;
	return rdma_create_qp(id, info->pd, &qp_attr);
}

static int smbd_post_keepalive(struct smbd_connection *info)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	wr.sg_list = NULL;
	wr.num_sge = 0;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	return ib_post_send(info->qp, &wr, NULL);
}
