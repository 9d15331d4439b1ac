// SPDX-License-Identifier: GPL-2.0
/* iser-style: likely() and a bound on a field decide the inline path. */
struct tc_desc {
	struct ib_sge sge[4];
	void *hdr;
	u64 hdr_dma;
	u64 data_dma;
	int num_sge;
	u32 len;
};

struct tc_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_conn_qp(struct tc_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.cap.max_inline_data = 128;
	err = rdma_create_qp(id, c->pd, &attr);
	c->max_inline = err ? 0 : attr.cap.max_inline_data;
	return err;
}

static void tc_map(struct ib_device *dev, struct tc_desc *d, void *data)
{
	d->hdr_dma = ib_dma_map_single(dev, d->hdr, 48, DMA_TO_DEVICE);
	d->data_dma = ib_dma_map_single(dev, data, d->len, DMA_TO_DEVICE);
}

static int tc_send(struct tc_conn *c, struct tc_desc *d)
{
	struct ib_send_wr wr = {};

	d->sge[0].addr = d->hdr_dma;
	d->sge[1].addr = d->data_dma;
	wr.sg_list = d->sge;
	wr.num_sge = d->num_sge;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (likely(d->num_sge <= 2) && d->len <= c->max_inline) {
		d->sge[0].addr = (uintptr_t)d->hdr;
		wr.send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(c->qp, &wr, NULL); /* want: inline-sge-addr */
}
