// SPDX-License-Identifier: GPL-2.0
/* rds-style: a switch on the message type with fall-through. */
struct tc_msg {
	void *hdr;
	u64 hdr_dma;
	u32 len;
	int type;
};

struct tc_ic {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	struct ib_sge sge;
};

static int tc_ic_setup(struct tc_ic *ic, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, ic->pd, &attr);
	if (!ret)
		ic->max_inline = attr.cap.max_inline_data;
	return ret;
}

static void tc_msg_map(struct ib_device *dev, struct tc_msg *m)
{
	m->hdr_dma = ib_dma_map_single(dev, m->hdr, m->len, DMA_TO_DEVICE);
}

static int tc_xmit(struct tc_ic *ic, struct tc_msg *m)
{
	struct ib_send_wr wr = {};

	ic->sge.addr = m->hdr_dma;
	ic->sge.length = m->len;
	wr.sg_list = &ic->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	switch (m->type) {
	case 1:
		if (m->len > ic->max_inline)
			break;
		wr.send_flags |= IB_SEND_INLINE;
		fallthrough;
	case 2:
		if (m->len > ic->max_inline)
			break;
		wr.send_flags |= IB_SEND_INLINE;
		ic->sge.addr = (uintptr_t)m->hdr;
		break;
	case 3:
		if (m->len <= ic->max_inline)
			wr.send_flags |= IB_SEND_INLINE;
		break;
	default:
		break;
	}
	return ib_post_send(ic->qp, &wr, NULL); /* want: inline-sge-addr */
}
