// SPDX-License-Identifier: GPL-2.0
/* srp-style immediate-data command: header, data and protection SGEs go inline when they fit. */

static int srp_create_ch_ib(struct srp_rdma_ch *ch)
{
	struct srp_target_port *target = ch->target;
	struct srp_device *dev = target->srp_host->srp_dev;
	struct ib_qp_init_attr *init_attr;
	int ret;

	init_attr = kzalloc(sizeof(*init_attr), GFP_KERNEL);
	if (!init_attr)
		return -ENOMEM;

	init_attr->event_handler       = srp_qp_event;
	init_attr->cap.max_send_wr     = target->queue_size * 2;
	init_attr->cap.max_recv_wr     = target->queue_size + 1;
	init_attr->cap.max_recv_sge    = 1;
	init_attr->cap.max_send_sge    = 3;
	init_attr->cap.max_inline_data = 256;
	init_attr->sq_sig_type         = IB_SIGNAL_REQ_WR;
	init_attr->qp_type             = IB_QPT_RC;
	init_attr->send_cq             = ch->send_cq;
	init_attr->recv_cq             = ch->recv_cq;

	ret = rdma_create_qp(ch->rdma_cm.cm_id, dev->pd, init_attr);
	if (ret)
		goto err_free;

	ch->qp = ch->rdma_cm.cm_id->qp;
	ch->max_inline = init_attr->cap.max_inline_data;

err_free:
	kfree(init_attr);
	return ret;
}

static int srp_post_send_imm(struct srp_rdma_ch *ch, struct srp_iu *iu,
			     void *data, u32 dlen, void *prot, u32 plen)
{
	struct srp_target_port *target = ch->target;
	u32 lkey = target->lkey;
	u32 hlen = sizeof(struct srp_cmd);
	struct ib_send_wr wr;

	iu->sge[0].addr   = (u64)(uintptr_t)iu->buf;
	iu->sge[0].length = hlen;
	iu->sge[0].lkey   = lkey;
	iu->sge[1].addr   = (u64)(uintptr_t)data;
	iu->sge[1].length = dlen;
	iu->sge[1].lkey   = lkey;
	iu->sge[2].addr   = (u64)(uintptr_t)prot;
	iu->sge[2].length = plen;
	iu->sge[2].lkey   = lkey;

	iu->cqe.done = srp_send_done;

	wr.next       = NULL;
	wr.wr_cqe     = &iu->cqe;
	wr.sg_list    = &iu->sge[0];
	wr.num_sge    = 3;
	wr.opcode     = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (hlen + dlen <= ch->max_inline)
		wr.send_flags |= IB_SEND_INLINE; /* want: inline-size */

	return ib_post_send(ch->qp, &wr, NULL);
}
