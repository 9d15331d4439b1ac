// SPDX-License-Identifier: GPL-2.0
/* iser-style: the control poster takes the SGEs its callers built and
 * decides inline itself; the MR key makes a non-inline post of a
 * virtual address legal. The NOP path hands it a DMA address. */
struct iser_tx_desc {
	u8 hdr[48];
	u64 dma_addr;
};

struct iser_ib_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_mr *mr;
	u32 max_inline;
};

static int iser_create_qp(struct iser_ib_conn *ib_conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, ib_conn->pd, &init_attr);
	ib_conn->max_inline = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static void iser_map_tx(struct ib_device *dev, struct iser_tx_desc *tx)
{
	tx->dma_addr = ib_dma_map_single(dev, tx->hdr, sizeof(tx->hdr), DMA_TO_DEVICE);
}

static int iser_post_ctrl(struct iser_ib_conn *ib_conn, struct ib_sge *sges, int nsge, u32 len)
{
	struct ib_send_wr wr = {};

	wr.sg_list = sges;
	wr.num_sge = nsge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len <= ib_conn->max_inline)
		wr.send_flags |= IB_SEND_INLINE;
	return ib_post_send(ib_conn->qp, &wr, NULL);
}

static int iser_send_nop(struct iser_ib_conn *ib_conn, struct iser_tx_desc *tx)
{
	struct ib_sge sge;

	sge.addr = tx->dma_addr;
	sge.length = sizeof(tx->hdr);
	sge.lkey = ib_conn->mr->lkey;
	return iser_post_ctrl(ib_conn, &sge, 1, sge.length); /* want: inline-sge-addr */
}

static int iser_send_login(struct iser_ib_conn *ib_conn, struct iser_tx_desc *tx, u32 len)
{
	struct ib_sge sge;

	sge.addr = (uintptr_t)tx->hdr;
	sge.length = len;
	sge.lkey = ib_conn->mr->lkey;
	return iser_post_ctrl(ib_conn, &sge, 1, len);
}
