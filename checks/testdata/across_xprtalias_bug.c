// SPDX-License-Identifier: GPL-2.0
/* xprtrdma-style aliases: the request is filled through send_wr (a
 * pointer to req->rl_wr) and posted as &req->rl_wr. The count through
 * the alias takes in the second SGE, which holds a DMA address. */
struct rpcrdma_xprt {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 re_max_inline;
};

struct rpcrdma_req {
	struct ib_send_wr rl_wr;
	struct ib_sge rl_sges[2];
	void *rl_hdr;
	u64 rl_pay_dma;
};

static int rpcrdma_create_ep(struct rpcrdma_xprt *rx, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr ia = {};
	int rc;

	ia.cap.max_inline_data = 256;
	rc = rdma_create_qp(id, rx->pd, &ia);
	rx->re_max_inline = rc ? 0 : ia.cap.max_inline_data;
	return rc;
}

static void rpcrdma_map_pay(struct ib_device *dev, struct rpcrdma_req *req, void *pay)
{
	req->rl_pay_dma = ib_dma_map_single(dev, pay, 4096, DMA_TO_DEVICE);
}

static int rpcrdma_prepare_msg(struct rpcrdma_xprt *rx, struct rpcrdma_req *req, u32 hlen, u32 plen)
{
	struct ib_send_wr *send_wr = &req->rl_wr;
	struct ib_sge *sge = req->rl_sges;

	if (hlen + plen > rx->re_max_inline)
		return -EIO;
	sge[0].addr = (uintptr_t)req->rl_hdr;
	sge[0].length = hlen;
	sge[0].lkey = rx->pd->local_dma_lkey;
	sge[1].addr = req->rl_pay_dma;
	sge[1].length = plen;
	sge[1].lkey = rx->pd->local_dma_lkey;
	send_wr->sg_list = sge;
	send_wr->num_sge = 2;
	send_wr->opcode = IB_WR_SEND;
	send_wr->send_flags = IB_SEND_INLINE;
	return ib_post_send(rx->qp, &req->rl_wr, NULL); /* want: inline-sge-addr */
}
