// SPDX-License-Identifier: GPL-2.0
/* rds-style: the flag is or-ed into an existing send_flags local. */
struct tc_send {
	struct ib_send_wr s_wr;
	struct ib_sge s_sge[2];
	void *s_hdr;
	u64 s_hdr_dma;
	u32 s_len;
};

struct tc_ic {
	struct ib_qp *i_cm_qp;
	struct ib_pd *i_pd;
	u32 i_max_inline;
	struct tc_send *i_sends;
};

static int tc_ib_setup_qp(struct tc_ic *ic, struct rdma_cm_id *cm_id)
{
	struct ib_qp_init_attr qp_attr;
	int ret;

	memset(&qp_attr, 0, sizeof(qp_attr));
	qp_attr.cap.max_inline_data = 128;
	ret = rdma_create_qp(cm_id, ic->i_pd, &qp_attr);
	if (ret)
		goto out;
	ic->i_max_inline = qp_attr.cap.max_inline_data;
out:
	return ret;
}

static void tc_ib_send_init(struct ib_device *dev, struct tc_send *send)
{
	send->s_hdr_dma = ib_dma_map_single(dev, send->s_hdr, 64, DMA_TO_DEVICE);
}

static int tc_ib_xmit_hdr(struct tc_ic *ic, struct tc_send *send, int solicited)
{
	int send_flags = 0;

	if (solicited)
		send_flags |= IB_SEND_SOLICITED;
	send->s_sge[0].addr = send->s_hdr_dma;
	send->s_sge[0].length = send->s_len;
	if (send->s_len <= ic->i_max_inline)
		send_flags |= IB_SEND_INLINE;
	send->s_wr.send_flags = send_flags;
	send->s_wr.sg_list = send->s_sge;
	send->s_wr.num_sge = 1;
	send->s_wr.opcode = IB_WR_SEND;
	return ib_post_send(ic->i_cm_qp, &send->s_wr, NULL); /* want: inline-sge-addr */
}
