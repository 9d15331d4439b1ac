// SPDX-License-Identifier: GPL-2.0
/* A two-SGE control message: the sender fills both SGEs and hands the
 * array through a middle helper to the poster, which sends inline. The
 * payload SGE carries the mapping's DMA address. */
struct ctl_conn {
	struct ib_qp *qp;
	struct ib_device *dev;
	u32 max_inline;
};

struct ctl_msg {
	u8 hdr[32];
	u8 body[64];
};

static int ctl_create_qp(struct ctl_conn *c, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_send_sge = 2;
	attr.cap.max_inline_data = 128;
	ret = rdma_create_qp(id, pd, &attr);
	if (ret)
		return ret;
	c->qp = id->qp;
	c->max_inline = attr.cap.max_inline_data;
	return 0;
}

static int ctl_post(struct ctl_conn *c, struct ib_sge *sgl, u32 len)
{
	struct ib_send_wr wr = {};

	wr.opcode = IB_WR_SEND;
	wr.sg_list = sgl;
	wr.num_sge = 2;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= c->max_inline)
		wr.send_flags |= IB_SEND_INLINE;
	return ib_post_send(c->qp, &wr, NULL);
}

static int ctl_send_sgl(struct ctl_conn *c, struct ib_sge *list, u32 len)
{
	if (!c->qp)
		return -ENOTCONN;
	return ctl_post(c, list, len);
}

int ctl_send(struct ctl_conn *c, struct ctl_msg *m)
{
	struct ib_sge sges[2];
	u64 body_dma;

	body_dma = ib_dma_map_single(c->dev, m->body, sizeof(m->body), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(c->dev, body_dma))
		return -ENOMEM;
	sges[0].addr = (uintptr_t)m->hdr;
	sges[0].length = sizeof(m->hdr);
	sges[1].addr = body_dma;
	sges[1].length = sizeof(m->body);
	return ctl_send_sgl(c, sges, sizeof(*m)); /* want: inline-sge-addr */
}
