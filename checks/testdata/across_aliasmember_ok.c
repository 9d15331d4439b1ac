// SPDX-License-Identifier: GPL-2.0
/* The request lives in the context object; a helper adds the header
 * SGE through its own pointer to the request and counts it with
 * num_sge++. The header SGE gets the header's virtual address. */
struct snd_ctx {
	struct ib_send_wr wr;
	struct ib_sge sges[4];
	u8 hdr[24];
	u64 hdr_dma;
	u32 lkey;
};

struct snd_ep {
	struct ib_qp *qp;
	u32 max_inline;
};

static int snd_ep_create(struct snd_ep *ep, struct rdma_cm_id *id, struct ib_pd *pd)
{
	struct ib_qp_init_attr init = {};
	int err;

	init.cap.max_inline_data = 64;
	err = rdma_create_qp(id, pd, &init);
	if (err)
		return err;
	ep->qp = id->qp;
	ep->max_inline = init.cap.max_inline_data;
	return 0;
}

static void snd_map_hdr(struct ib_device *dev, struct snd_ctx *ctx)
{
	ctx->hdr_dma = ib_dma_map_single(dev, ctx->hdr, sizeof(ctx->hdr), DMA_TO_DEVICE);
}

static void snd_add_hdr(struct snd_ctx *ctx)
{
	struct ib_send_wr *w = &ctx->wr;
	struct ib_sge *s = &ctx->sges[w->num_sge++];

	s->addr = (uintptr_t)ctx->hdr;
	s->length = sizeof(ctx->hdr);
	s->lkey = ctx->lkey;
	w->sg_list = ctx->sges;
}

int snd_send(struct snd_ep *ep, struct snd_ctx *ctx)
{
	ctx->wr.num_sge = 0;
	ctx->wr.opcode = IB_WR_SEND;
	snd_add_hdr(ctx);
	ctx->wr.send_flags = IB_SEND_SIGNALED;
	if (sizeof(ctx->hdr) <= ep->max_inline)
		ctx->wr.send_flags |= IB_SEND_INLINE;
	return ib_post_send(ep->qp, &ctx->wr, NULL);
}
