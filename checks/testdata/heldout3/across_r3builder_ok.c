// SPDX-License-Identifier: GPL-2.0
/* ipoib-style datagram send: the SGE list and its count are built by a helper. */

static int ipoib_transport_dev_init(struct net_device *dev, struct ib_device *ca)
{
	struct ipoib_dev_priv *priv = ipoib_priv(dev);
	struct ib_qp_init_attr init_attr = {
		.cap = {
			.max_send_wr  = ipoib_sendq_size,
			.max_recv_wr  = ipoib_recvq_size,
			.max_send_sge = min_t(u32, priv->ca->attrs.max_send_sge,
					      MAX_SKB_FRAGS + 1),
			.max_recv_sge = IPOIB_UD_RX_SG,
			.max_inline_data = IPOIB_MAX_INLINE,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type     = IB_QPT_UD
	};

	priv->qp = ib_create_qp(priv->pd, &init_attr);
	if (IS_ERR(priv->qp)) {
		pr_warn("%s: failed to create QP\n", ca->name);
		goto out_free_send_cq;
	}
	priv->max_inline = init_attr.cap.max_inline_data;
	return 0;

out_free_send_cq:
	ib_destroy_cq(priv->send_cq);
	return -ENODEV;
}

static void ipoib_build_sge(struct ipoib_dev_priv *priv,
			    struct ipoib_tx_buf *tx_req, bool inline_hdr)
{
	int i, off;
	struct sk_buff *skb = tx_req->skb;
	skb_frag_t *frags = skb_shinfo(skb)->frags;
	int nr_frags = skb_shinfo(skb)->nr_frags;
	u64 *mapping = tx_req->mapping;

	if (inline_hdr) {
		priv->tx_sge[0].addr = (u64)(uintptr_t)skb->data;
		priv->tx_sge[0].length = skb_headlen(skb);
		priv->tx_wr.wr.num_sge = 1;
		return;
	}
	if (skb_headlen(skb)) {
		priv->tx_sge[0].addr = mapping[0];
		priv->tx_sge[0].length = skb_headlen(skb);
		off = 1;
	} else {
		off = 0;
	}

	for (i = 0; i < nr_frags; ++i) {
		priv->tx_sge[i + off].addr = mapping[i + off];
		priv->tx_sge[i + off].length = skb_frag_size(&frags[i]);
	}
	priv->tx_wr.wr.num_sge = nr_frags + off;
}

int ipoib_dma_map_tx(struct ib_device *ca, struct ipoib_tx_buf *tx_req)
{
	struct sk_buff *skb = tx_req->skb;
	u64 *mapping = tx_req->mapping;

	mapping[0] = ib_dma_map_single(ca, skb->data, skb_headlen(skb),
				       DMA_TO_DEVICE);
	if (unlikely(ib_dma_mapping_error(ca, mapping[0])))
		return -EIO;
	return 0;
}

static int post_send(struct ipoib_dev_priv *priv, unsigned int wr_id,
		     struct ib_ah *address, u32 dqpn,
		     struct ipoib_tx_buf *tx_req)
{
	struct sk_buff *skb = tx_req->skb;
	bool small = !skb_shinfo(skb)->nr_frags &&
		     skb_headlen(skb) <= priv->max_inline;

	priv->tx_wr.wr.sg_list = priv->tx_sge;
	ipoib_build_sge(priv, tx_req, small);

	priv->tx_wr.wr.wr_id	= wr_id;
	priv->tx_wr.remote_qpn	= dqpn;
	priv->tx_wr.ah		= address;
	priv->tx_wr.wr.send_flags = IB_SEND_SIGNALED;
	if (small)
		priv->tx_wr.wr.send_flags |= IB_SEND_INLINE;

	return ib_post_send(priv->qp, &priv->tx_wr.wr, NULL);
}
