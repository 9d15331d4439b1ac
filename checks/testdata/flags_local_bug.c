// SPDX-License-Identifier: GPL-2.0
/* iser-style login send: the flags are built in a local first. */
struct tc_tx_desc {
	struct ib_sge tx_sg[2];
	void *hdr;
	dma_addr_t dma_addr;
	unsigned int len;
};

struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_create_qp(struct tc_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, conn->pd, &attr);
	if (ret)
		return ret;
	conn->max_inline = attr.cap.max_inline_data;
	return 0;
}

static int tc_post_login(struct tc_conn *conn, struct tc_tx_desc *desc)
{
	struct ib_send_wr wr = {};
	u32 flags = IB_SEND_SIGNALED;

	desc->tx_sg[0].addr = desc->dma_addr;
	desc->tx_sg[0].length = desc->len;
	if (desc->len <= conn->max_inline)
		flags |= IB_SEND_INLINE;
	wr.sg_list = desc->tx_sg;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = flags;
	return ib_post_send(conn->qp, &wr, NULL); /* want: inline-sge-addr */
}
