// SPDX-License-Identifier: GPL-2.0
/* iser-style: a helper sets the flags on the request it is given. */
struct tc_tx {
	struct ib_send_wr wr;
	struct ib_sge sge;
	void *hdr;
	u64 hdr_dma;
	u32 len;
};

struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_conn_create(struct tc_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, conn->pd, &attr);
	if (ret)
		return ret;
	conn->max_inline = attr.cap.max_inline_data;
	return 0;
}

static void tc_tx_map(struct ib_device *dev, struct tc_tx *tx)
{
	tx->hdr_dma = ib_dma_map_single(dev, tx->hdr, tx->len, DMA_TO_DEVICE);
}

static void tc_tx_make_inline(struct tc_conn *conn, struct tc_tx *tx)
{
	if (tx->len <= conn->max_inline)
		tx->wr.send_flags |= IB_SEND_INLINE;
}

static int tc_tx_post(struct tc_conn *conn, struct tc_tx *tx)
{
	tx->sge.addr = tx->hdr_dma;
	tx->sge.length = tx->len;
	tx->wr.sg_list = &tx->sge;
	tx->wr.num_sge = 1;
	tx->wr.opcode = IB_WR_SEND;
	tx->wr.send_flags = IB_SEND_SIGNALED;
	tc_tx_make_inline(conn, tx);
	return ib_post_send(conn->qp, &tx->wr, NULL); /* want: inline-sge-addr */
}
