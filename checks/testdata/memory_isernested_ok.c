// SPDX-License-Identifier: GPL-2.0
/* iser-style: the inline flag lives in a field of a nested connection
 * struct, set once the QP is created; the login path copies it into the
 * request through a pointer to the inner struct. The login buffer's virtual address
 * goes into the inline SGE. */
struct iser_ib_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	int inline_flag;
};

struct iser_conn {
	struct iser_ib_conn ib_conn;
	void *login_buf;
	u64 login_dma;
};

static int iser_create_ib_conn_res(struct iser_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = 256;
	ret = rdma_create_qp(id, c->ib_conn.pd, &attr);
	if (ret)
		return ret;
	c->ib_conn.max_inline = attr.cap.max_inline_data;
	c->ib_conn.inline_flag = IB_SEND_INLINE;
	return 0;
}

static void iser_map_login(struct ib_device *dev, struct iser_conn *c)
{
	c->login_dma = ib_dma_map_single(dev, c->login_buf, 256, DMA_TO_DEVICE);
}

static int iser_post_login(struct iser_conn *c, u32 len)
{
	struct iser_ib_conn *ib_conn = &c->ib_conn;
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	if (len > ib_conn->max_inline)
		return -EINVAL;
	sge.addr = (uintptr_t)c->login_buf;
	sge.length = len;
	sge.lkey = ib_conn->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = ib_conn->inline_flag | IB_SEND_SIGNALED;
	return ib_post_send(ib_conn->qp, &wr, NULL);
}
