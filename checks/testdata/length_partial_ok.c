// SPDX-License-Identifier: GPL-2.0
/* A fixed header SGE and a payload SGE go inline together; the guard
 * measures both against the granted size. */
struct tc_msg_hdr {
	__be32 type;
	__be32 len;
	__be64 cookie;
};

struct tc_ep {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct tc_msg_hdr hdr;
	struct ib_sge sge[2];
	u32 max_inline;
};

static int tc_ep_qp(struct tc_ep *ep, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, ep->pd, &qa);
	if (rc)
		return rc;
	ep->max_inline = qa.cap.max_inline_data;
	return 0;
}

static int tc_ep_send(struct tc_ep *ep, void *payload, u32 plen)
{
	struct ib_send_wr wr = {};

	if (sizeof(ep->hdr) + plen > ep->max_inline)
		return -EMSGSIZE;
	ep->sge[0].addr = (uintptr_t)&ep->hdr;
	ep->sge[0].length = sizeof(ep->hdr);
	ep->sge[1].addr = (uintptr_t)payload;
	ep->sge[1].length = plen;
	wr.sg_list = ep->sge;
	wr.num_sge = 2;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(ep->qp, &wr, NULL);
}
