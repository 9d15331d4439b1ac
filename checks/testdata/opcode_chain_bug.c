// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: the REG_MR request chained before the command. */
struct tc_request {
	struct ib_mr *mr;
	struct ib_reg_wr reg_wr;
	struct ib_sge sge[2];
	int num_sge;
};

struct tc_qe {
	void *data;
	u64 dma;
};

struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init_attr = {};
	int ret;

	init_attr.cap.max_inline_data = 64;
	ret = rdma_create_qp(id, queue->pd, &init_attr);
	queue->max_inline_data = ret ? 0 : init_attr.cap.max_inline_data;
	return ret;
}

static int tc_map_sg_fr(struct tc_queue *queue, struct tc_request *req)
{
	req->reg_wr.wr.opcode = IB_WR_REG_MR;
	req->reg_wr.wr.send_flags = IB_SEND_SIGNALED;
	req->reg_wr.wr.num_sge = 0;
	req->reg_wr.mr = req->mr;
	return 0;
}

static int tc_post_send(struct tc_queue *queue, struct tc_qe *qe, struct tc_request *req)
{
	struct ib_send_wr wr, *first;
	struct ib_sge *sge = &req->sge[0];

	sge->addr = qe->dma;
	sge->length = 64;
	wr.next = NULL;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.send_flags = IB_SEND_SIGNALED;
	if (sge->length <= queue->max_inline_data) {
		sge->addr = (uintptr_t)qe->data;
		wr.send_flags |= IB_SEND_INLINE;
	}
	if (req->mr) {
		first = &req->reg_wr.wr;
		first->send_flags |= wr.send_flags & IB_SEND_INLINE;
		req->reg_wr.wr.next = &wr;
	} else {
		first = &wr;
	}
	return ib_post_send(queue->qp, first, NULL); /* want: inline-on-registration */
}

static void tc_map_qe(struct ib_device *dev, struct tc_qe *qe)
{
	qe->dma = ib_dma_map_single(dev, qe->data, 64, DMA_TO_DEVICE);
}
