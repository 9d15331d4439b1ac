// SPDX-License-Identifier: GPL-2.0
/* iser-style: sg_list = an array (it decays), its elements set as [0]. */
struct tc_tx_desc {
	u8 hdr[64];
	u64 dma_addr;
	struct ib_sge tx_sg[2];
	int num_sge;
	struct ib_send_wr send_wr;
};

struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_create(struct tc_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = sizeof(((struct tc_tx_desc *)0)->hdr);
	ret = rdma_create_qp(id, c->pd, &attr);
	if (ret)
		goto out_err;
	c->max_inline = attr.cap.max_inline_data;
	return 0;
out_err:
	c->max_inline = 0;
	return ret;
}

static int tc_init_tx(struct ib_device *dev, struct tc_tx_desc *tx_desc)
{
	tx_desc->dma_addr = ib_dma_map_single(dev, tx_desc->hdr, 64, DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, tx_desc->dma_addr);
}

static int tc_post(struct tc_conn *c, struct tc_tx_desc *tx_desc, u32 len)
{
	struct ib_send_wr *wr = &tx_desc->send_wr;

	tx_desc->tx_sg[0].addr = tx_desc->dma_addr;
	tx_desc->tx_sg[0].length = len;
	wr->next = NULL;
	wr->sg_list = tx_desc->tx_sg;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
	if (len <= c->max_inline) {
		wr->sg_list->addr = (uintptr_t)tx_desc->hdr;
		wr->send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(c->qp, wr, NULL);
}
