// SPDX-License-Identifier: GPL-2.0
/* xprtrdma-style send: the request is a compound literal with the inline decision inside. */

static inline u64 rdmab_addr(struct rpcrdma_regbuf *rb)
{
	return rb->rg_iov.addr;
}

static inline void *rdmab_data(const struct rpcrdma_regbuf *rb)
{
	return rb->rg_data;
}

static bool rpcrdma_regbuf_dma_map(struct rpcrdma_xprt *r_xprt,
				   struct rpcrdma_regbuf *rb)
{
	struct ib_device *device = r_xprt->rx_ep->re_id->device;

	rb->rg_iov.addr = ib_dma_map_single(device, rdmab_data(rb),
					    rb->rg_iov.length, rb->rg_direction);
	if (ib_dma_mapping_error(device, rb->rg_iov.addr))
		return false;
	rb->rg_device = device;
	rb->rg_iov.lkey = r_xprt->rx_ep->re_pd->local_dma_lkey;
	return true;
}

static int rpcrdma_ep_create_qp(struct rpcrdma_ep *ep, struct rdma_cm_id *id)
{
	int rc;

	ep->re_attr.cap.max_send_wr = ep->re_max_requests;
	ep->re_attr.cap.max_recv_wr = ep->re_max_requests;
	ep->re_attr.cap.max_send_sge = RPCRDMA_MAX_SEND_SGES;
	ep->re_attr.cap.max_recv_sge = 1;
	ep->re_attr.cap.max_inline_data = 128;
	ep->re_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	ep->re_attr.qp_type = IB_QPT_RC;

	rc = rdma_create_qp(id, ep->re_pd, &ep->re_attr);
	if (rc)
		goto out_destroy;
	ep->re_max_inline_send = ep->re_attr.cap.max_inline_data;
	return 0;

out_destroy:
	ep->re_max_inline_send = 0;
	return rc;
}

static int rpcrdma_post_header(struct rpcrdma_xprt *r_xprt,
			       struct rpcrdma_req *req, u32 hdrlen)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	struct rpcrdma_sendctx *sc = req->rl_sendctx;
	struct rpcrdma_regbuf *rb = req->rl_rdmabuf;
	struct ib_send_wr *send_wr = &req->rl_wr;

	if (!rpcrdma_regbuf_dma_map(r_xprt, rb))
		return -EIO;

	if (hdrlen) {
		sc->sc_sges[0].addr = hdrlen <= ep->re_max_inline_send ?
			(u64)(uintptr_t)rdmab_data(rb) : rdmab_addr(rb);
		sc->sc_sges[0].length = hdrlen;
		sc->sc_sges[0].lkey = rb->rg_iov.lkey;
	}

	*send_wr = (struct ib_send_wr) {
		.wr_cqe		= &sc->sc_cqe,
		.sg_list	= sc->sc_sges,
		.num_sge	= hdrlen ? 1 : 0,
		.opcode		= IB_WR_SEND,
		.send_flags	= hdrlen <= ep->re_max_inline_send ?
					IB_SEND_INLINE | IB_SEND_SIGNALED :
					IB_SEND_SIGNALED,
	};

	return ib_post_send(ep->re_id->qp, send_wr, NULL);
}
