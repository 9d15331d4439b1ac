// SPDX-License-Identifier: GPL-2.0
/* rtrs-style: two chained requests marked inline through an array of
 * request pointers in a loop. The second one's SGE holds a DMA
 * address. */
struct rtrs_iu {
	struct ib_send_wr wr;
	struct ib_sge sge;
	void *buf;
	u64 dma_addr;
};

struct rtrs_con {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int rtrs_cq_qp_create(struct rtrs_con *con, struct rdma_cm_id *cm_id)
{
	struct ib_qp_init_attr init_attr = {};
	int err;

	init_attr.cap.max_inline_data = 128;
	err = rdma_create_qp(cm_id, con->pd, &init_attr);
	con->max_inline = err ? 0 : init_attr.cap.max_inline_data;
	return err;
}

static void rtrs_iu_map(struct ib_device *dev, struct rtrs_iu *iu)
{
	iu->dma_addr = ib_dma_map_single(dev, iu->buf, 128, DMA_TO_DEVICE);
}

static int rtrs_post_pair(struct rtrs_con *con, struct rtrs_iu *a, struct rtrs_iu *b, u32 len)
{
	struct ib_send_wr *wrs[] = { &a->wr, &b->wr };
	int i;

	if (len > con->max_inline)
		return -EMSGSIZE;
	a->sge.addr = (uintptr_t)a->buf;
	b->sge.addr = b->dma_addr;
	a->sge.length = len;
	b->sge.length = len;
	a->wr.sg_list = &a->sge;
	b->wr.sg_list = &b->sge;
	a->wr.next = &b->wr;
	b->wr.next = NULL;
	for (i = 0; i < ARRAY_SIZE(wrs); i++) {
		wrs[i]->num_sge = 1;
		wrs[i]->opcode = IB_WR_SEND;
		wrs[i]->send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(con->qp, &a->wr, NULL); /* want: inline-sge-addr */
}
