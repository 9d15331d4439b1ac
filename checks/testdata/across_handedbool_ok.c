// SPDX-License-Identifier: GPL-2.0
/* The poster sends inline when its caller says so. The status reply
 * asks for inline with the status buffer's virtual address; the bulk
 * reply passes false (a DMA address is right without inline). */
struct rep_conn {
	struct ib_qp *qp;
	struct ib_device *dev;
	u32 max_inline;
	u8 status[16];
	dma_addr_t bulk_dma;
	u32 bulk_len;
	u32 status_lkey;
};

static int rep_create_qp(struct rep_conn *c, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, pd, &attr);
	if (ret)
		return ret;
	c->qp = id->qp;
	c->max_inline = attr.cap.max_inline_data;
	return 0;
}

static int rep_post_sg(struct rep_conn *c, struct ib_sge *sg, bool inl)
{
	struct ib_send_wr wr = {};

	wr.opcode = IB_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = inl ? IB_SEND_INLINE : 0;
	return ib_post_send(c->qp, &wr, NULL);
}

int rep_send_status(struct rep_conn *c, u32 len)
{
	struct ib_sge sge;

	sge.addr = (uintptr_t)c->status;
	sge.length = len;
	sge.lkey = c->status_lkey;
	return rep_post_sg(c, &sge, len <= c->max_inline);
}

int rep_send_bulk(struct rep_conn *c)
{
	struct ib_sge sge;

	sge.addr = c->bulk_dma;
	sge.length = c->bulk_len;
	sge.lkey = c->status_lkey;
	return rep_post_sg(c, &sge, false);
}
