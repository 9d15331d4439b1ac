// SPDX-License-Identifier: GPL-2.0
/* xprtrdma-style marshal and send: the request is reached through two names. */

static inline u64 rdmab_addr(struct rpcrdma_regbuf *rb)
{
	return rb->rg_iov.addr;
}

static inline void *rdmab_data(const struct rpcrdma_regbuf *rb)
{
	return rb->rg_data;
}

static bool __rpcrdma_regbuf_dma_map(struct rpcrdma_xprt *r_xprt,
				     struct rpcrdma_regbuf *rb)
{
	struct ib_device *device = r_xprt->rx_ep->re_id->device;

	rb->rg_iov.addr = ib_dma_map_single(device, rdmab_data(rb),
					    rb->rg_iov.length, rb->rg_direction);
	if (ib_dma_mapping_error(device, rb->rg_iov.addr)) {
		trace_xprtrdma_dma_maperr(rb->rg_iov.addr);
		return false;
	}
	rb->rg_device = device;
	return true;
}

static int rpcrdma_ep_create(struct rpcrdma_xprt *r_xprt)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	int rc;

	ep->re_attr.cap.max_send_wr = ep->re_max_requests;
	ep->re_attr.cap.max_send_sge = 1 + RPCRDMA_MIN_SEND_SGES;
	ep->re_attr.cap.max_recv_sge = 1;
	ep->re_attr.cap.max_inline_data = 256;
	ep->re_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	ep->re_attr.qp_type = IB_QPT_RC;

	rc = rdma_create_qp(ep->re_id, ep->re_pd, &ep->re_attr);
	if (rc)
		goto out_destroy;
	ep->re_max_inline_send = ep->re_attr.cap.max_inline_data;
	return 0;

out_destroy:
	rdma_destroy_id(ep->re_id);
	return rc;
}

static bool rpcrdma_prepare_hdr_sge(struct rpcrdma_xprt *r_xprt,
				    struct rpcrdma_req *req, u32 len)
{
	struct rpcrdma_sendctx *sc = req->rl_sendctx;
	struct rpcrdma_regbuf *rb = req->rl_rdmabuf;
	struct ib_send_wr *send_wr = &req->rl_wr;
	struct ib_sge *sge;

	if (!__rpcrdma_regbuf_dma_map(r_xprt, rb))
		return false;

	sge = &sc->sc_sges[send_wr->num_sge++];
	sge->addr = rdmab_addr(rb);
	sge->length = len;
	sge->lkey = rb->rg_iov.lkey;
	send_wr->sg_list = sc->sc_sges;
	return true;
}

int rpcrdma_post_sends(struct rpcrdma_xprt *r_xprt, struct rpcrdma_req *req,
		       u32 hdrlen)
{
	struct rpcrdma_ep *ep = r_xprt->rx_ep;
	int rc;

	req->rl_wr.num_sge = 0;
	req->rl_wr.opcode = IB_WR_SEND;
	req->rl_wr.next = NULL;
	if (!rpcrdma_prepare_hdr_sge(r_xprt, req, hdrlen))
		return -EIO;

	req->rl_wr.send_flags = IB_SEND_SIGNALED;
	if (hdrlen <= ep->re_max_inline_send)
		req->rl_wr.send_flags |= IB_SEND_INLINE;

	rc = ib_post_send(ep->re_id->qp, &req->rl_wr, NULL); /* want: inline-sge-addr */
	if (rc)
		trace_xprtrdma_post_send_err(r_xprt, req, rc);
	return rc;
}
