// SPDX-License-Identifier: GPL-2.0
/* ipoib-style: the request's SGE list and count are set once when the
 * tx ring is allocated; the send path fills the SGEs it uses and marks
 * the request inline. The ring gives each request two SGEs, and the
 * second holds the payload's DMA address. */
struct ipoib_tx_buf {
	struct ib_send_wr wr;
	struct ib_sge sge[2];
	void *hdr;
	u64 pay_dma;
};

struct ipoib_dev_priv {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ipoib_tx_buf *tx_ring;
	u32 max_inline;
};

static int ipoib_transport_dev_init(struct ipoib_dev_priv *priv, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, priv->pd, &init_attr);
	priv->max_inline = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static void ipoib_init_tx(struct ipoib_tx_buf *tx)
{
	tx->wr.sg_list = tx->sge;
	tx->wr.num_sge = 2;
	tx->wr.opcode = IB_WR_SEND;
}

static int ipoib_send_hdr(struct ib_device *dev, struct ipoib_dev_priv *priv, struct ipoib_tx_buf *tx, void *pay, u32 len)
{
	if (len > priv->max_inline)
		return -E2BIG;
	tx->pay_dma = ib_dma_map_single(dev, pay, 16, DMA_TO_DEVICE);
	tx->sge[0].addr = (uintptr_t)tx->hdr;
	tx->sge[0].length = len;
	tx->sge[1].addr = tx->pay_dma;
	tx->sge[1].length = 0;
	tx->wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(priv->qp, &tx->wr, NULL); /* want: inline-sge-addr */
}
