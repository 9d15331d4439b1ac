// SPDX-License-Identifier: GPL-2.0
/* xprtrdma-style: the request is written whole by a compound literal
 * whose send_flags is a ternary on a bool computed from the grant.
 * The SGE's address is
 * chosen by the same bool. */
struct rpcrdma_ep {
	struct ib_qp *re_qp;
	struct ib_pd *re_pd;
	u32 re_max_inline_send;
};

struct rpcrdma_req {
	struct ib_send_wr rl_wr;
	struct ib_sge rl_sge;
	void *rl_buf;
	u64 rl_dma;
};

static int rpcrdma_ep_create(struct rpcrdma_ep *ep, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qp_init_attr = {};
	int rc;

	qp_init_attr.cap.max_inline_data = 192;
	rc = rdma_create_qp(id, ep->re_pd, &qp_init_attr);
	if (rc)
		return rc;
	ep->re_max_inline_send = qp_init_attr.cap.max_inline_data;
	return 0;
}

static void rpcrdma_req_map(struct ib_device *dev, struct rpcrdma_req *req)
{
	req->rl_dma = ib_dma_map_single(dev, req->rl_buf, 1024, DMA_TO_DEVICE);
}

static int rpcrdma_post_short(struct rpcrdma_ep *ep, struct rpcrdma_req *req, u32 len)
{
	bool inl = len <= ep->re_max_inline_send;
	struct ib_sge *sge = &req->rl_sge;

	sge->addr = inl ? (uintptr_t)req->rl_buf : req->rl_dma;
	sge->length = len;
	sge->lkey = ep->re_pd->local_dma_lkey;
	req->rl_wr = (struct ib_send_wr){
		.opcode = IB_WR_SEND,
		.sg_list = sge,
		.num_sge = 1,
		.send_flags = inl ? IB_SEND_INLINE : IB_SEND_SIGNALED,
	};
	return ib_post_send(ep->re_qp, &req->rl_wr, NULL);
}
