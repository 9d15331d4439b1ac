// SPDX-License-Identifier: GPL-2.0
/* srp-style: a goto jumps over the re-pointing of the SGE. */
struct tc_iu {
	void *buf;
	u64 dma;
	u32 size;
	struct ib_sge sge[1];
	int num_sge;
};

struct tc_target {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	bool immediate;
};

static int tc_create_ch_ib(struct tc_target *target, struct ib_qp_init_attr *init_attr)
{
	struct ib_qp *qp;

	init_attr->cap.max_inline_data = 64;
	qp = ib_create_qp(target->pd, init_attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	target->qp = qp;
	target->max_inline = init_attr->cap.max_inline_data;
	return 0;
}

static int tc_alloc_iu(struct ib_device *dev, struct tc_iu *iu)
{
	iu->dma = ib_dma_map_single(dev, iu->buf, iu->size, DMA_TO_DEVICE);
	return 0;
}

static int tc_post_send(struct tc_target *target, struct tc_iu *iu, u32 len)
{
	struct ib_send_wr wr;

	iu->sge[0].addr = iu->dma;
	iu->sge[0].length = len;
	wr.next = NULL;
	wr.sg_list = iu->sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (len > target->max_inline)
		goto post;
	if (target->immediate)
		goto post;
	wr.send_flags |= IB_SEND_INLINE;
	iu->sge[0].addr = (uintptr_t)iu->buf;
post:
	return ib_post_send(target->qp, &wr, NULL);
}
