// SPDX-License-Identifier: GPL-2.0
/* ipoib-cm-style send: a helper says whether it put the request inline. */

static struct ib_qp *ipoib_cm_create_tx_qp(struct net_device *dev,
					   struct ipoib_cm_tx *tx)
{
	struct ipoib_dev_priv *priv = ipoib_priv(dev);
	struct ib_qp_init_attr attr = {
		.send_cq		= priv->send_cq,
		.recv_cq		= priv->recv_cq,
		.srq			= priv->cm.srq,
		.cap.max_send_wr	= ipoib_sendq_size,
		.cap.max_send_sge	= 1,
		.cap.max_inline_data	= IPOIB_CM_MAX_INLINE,
		.sq_sig_type		= IB_SIGNAL_ALL_WR,
		.qp_type		= IB_QPT_RC,
		.qp_context		= tx,
	};
	struct ib_qp *tx_qp;

	tx_qp = ib_create_qp(priv->pd, &attr);
	if (IS_ERR(tx_qp))
		return tx_qp;
	tx->max_inline = attr.cap.max_inline_data;
	return tx_qp;
}

static bool ipoib_cm_tx_inline(struct ipoib_cm_tx *tx, unsigned int len,
			       struct ib_send_wr *wr)
{
	if (len > tx->max_inline) {
		wr->send_flags &= ~IB_SEND_INLINE;
		return false;
	}
	wr->send_flags |= IB_SEND_INLINE;
	return true;
}

static int ipoib_cm_post_send(struct net_device *dev, struct sk_buff *skb,
			      struct ipoib_cm_tx *tx, unsigned int wr_id)
{
	struct ipoib_dev_priv *priv = ipoib_priv(dev);
	struct ipoib_tx_buf *tx_req = &tx->tx_ring[wr_id];
	u64 addr;
	int rc;

	if (!ipoib_cm_tx_inline(tx, skb->len, &priv->tx_wr.wr)) {
		addr = ib_dma_map_single(priv->ca, skb->data, skb->len, DMA_TO_DEVICE);
		if (unlikely(ib_dma_mapping_error(priv->ca, addr))) {
			++dev->stats.tx_errors;
			dev_kfree_skb_any(skb);
			return -EIO;
		}
		tx_req->mapping[0] = addr;
	} else {
		addr = (u64)(uintptr_t)skb->data;
	}

	priv->tx_sge[0].addr = addr;
	priv->tx_sge[0].length = skb->len;
	priv->tx_sge[0].lkey = priv->pd->local_dma_lkey;
	priv->tx_wr.wr.sg_list = priv->tx_sge;
	priv->tx_wr.wr.num_sge = 1;
	priv->tx_wr.wr.wr_id = wr_id | IPOIB_OP_CM;
	priv->tx_wr.wr.opcode = IB_WR_SEND;

	rc = ib_post_send(tx->qp, &priv->tx_wr.wr, NULL);
	if (unlikely(rc))
		ipoib_warn(priv, "post send failed, error %d\n", rc);
	return rc;
}
