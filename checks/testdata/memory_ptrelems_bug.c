// SPDX-License-Identifier: GPL-2.0
/* A three-part message (header, body, trailer) is a chain of requests
 * kept in an array of pointers filled one element at a time; once the
 * body is known to fit, a loop flags every request inline, and the chain is
 * posted through its first element. The body goes by its mapping. */
struct pe_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	u8 hdr[16];
	u8 *body;
	u8 trailer[8];
	u64 body_dma;
};

static int pe_connect(struct pe_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 256;
	rc = rdma_create_qp(id, c->pd, &qa);
	if (rc)
		return rc;
	c->max_inline = qa.cap.max_inline_data;
	return 0;
}

static void pe_map(struct ib_device *dev, struct pe_conn *c)
{
	c->body_dma = ib_dma_map_single(dev, c->body, 1024, DMA_TO_DEVICE);
}

static int pe_send(struct pe_conn *c, u32 blen)
{
	struct ib_send_wr hw = {}, bw = {}, tw = {};
	struct ib_send_wr *chain[3];
	struct ib_sge hs, bs, ts;
	int i;

	if (blen > c->max_inline)
		return -EMSGSIZE;
	hs.addr = (u64)(uintptr_t)c->hdr;
	hs.length = sizeof(c->hdr);
	bs.addr = c->body_dma;
	bs.length = blen;
	ts.addr = (u64)(uintptr_t)c->trailer;
	ts.length = sizeof(c->trailer);
	hw.sg_list = &hs;
	bw.sg_list = &bs;
	tw.sg_list = &ts;
	hw.next = &bw;
	bw.next = &tw;
	chain[0] = &hw;
	chain[1] = &bw;
	chain[2] = &tw;
	for (i = 0; i < 3; i++) {
		chain[i]->num_sge = 1;
		chain[i]->opcode = IB_WR_SEND;
		chain[i]->send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(c->qp, chain[0], NULL); /* want: inline-sge-addr */
}
