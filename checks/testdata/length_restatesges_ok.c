// SPDX-License-Identifier: GPL-2.0
/* A two-part inline event (a fixed header and a short body) posts both
 * parts by their virtual addresses, guarded by their sum. */
struct rs_hdr {
	__be32 kind;
	__be32 len;
};

struct rs_ep {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 inline_max;
	struct rs_hdr hdr;
	u64 hdr_dma;
	u8 *body;
	u64 body_cookie;
	struct ib_sge sg[2];
};

static int rs_qp(struct rs_ep *ep, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_send_sge = 2;
	qa.cap.max_inline_data = 160;
	rc = rdma_create_qp(id, ep->pd, &qa);
	if (rc)
		return rc;
	ep->qp = id->qp;
	ep->inline_max = qa.cap.max_inline_data;
	return 0;
}

static void rs_map(struct ib_device *dev, struct rs_ep *ep)
{
	ep->hdr_dma = ib_dma_map_single(dev, &ep->hdr, sizeof(ep->hdr), DMA_TO_DEVICE);
}

static int rs_event(struct rs_ep *ep, u32 blen)
{
	struct ib_send_wr wr = {};

	if (sizeof(struct rs_hdr) + blen > ep->inline_max)
		return -E2BIG;
	ep->sg[0].addr = (u64)(uintptr_t)&ep->hdr;
	ep->sg[0].length = sizeof(struct rs_hdr);
	ep->sg[0].lkey = ep->pd->local_dma_lkey;
	ep->sg[1].addr = (u64)(uintptr_t)ep->body;
	ep->sg[1].length = blen;
	ep->sg[1].lkey = ep->pd->local_dma_lkey;
	wr.sg_list = ep->sg;
	wr.num_sge = 2;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	return ib_post_send(ep->qp, &wr, NULL);
}
