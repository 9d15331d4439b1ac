// SPDX-License-Identifier: GPL-2.0
/* nvmet-rdma-style: the response poster takes the inline decision as a
 * bool and applies it with ternaries. The caller decides with a
 * constant larger than the QP asked for. */
struct nvmet_rdma_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

struct nvmet_rdma_rsp {
	struct ib_send_wr send_wr;
	struct ib_sge send_sge;
	void *cqe;
	u64 cqe_dma;
};

static int nvmet_rdma_create_queue_ib(struct nvmet_rdma_queue *q, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qp_attr = {};
	int ret;

	qp_attr.cap.max_inline_data = 32;
	ret = rdma_create_qp(id, q->pd, &qp_attr);
	q->max_inline = ret ? 0 : qp_attr.cap.max_inline_data;
	return ret;
}

static void nvmet_rdma_map_rsp(struct ib_device *dev, struct nvmet_rdma_rsp *rsp)
{
	rsp->cqe_dma = ib_dma_map_single(dev, rsp->cqe, 128, DMA_TO_DEVICE);
}

static int nvmet_rdma_post_rsp(struct nvmet_rdma_queue *q, struct nvmet_rdma_rsp *rsp, u32 len, bool inl)
{
	rsp->send_sge.addr = inl ? (uintptr_t)rsp->cqe : rsp->cqe_dma;
	rsp->send_sge.length = len;
	rsp->send_sge.lkey = q->pd->local_dma_lkey;
	rsp->send_wr.sg_list = &rsp->send_sge;
	rsp->send_wr.num_sge = 1;
	rsp->send_wr.opcode = IB_WR_SEND;
	rsp->send_wr.send_flags = inl ? IB_SEND_INLINE | IB_SEND_SIGNALED : IB_SEND_SIGNALED; /* want: inline-size */
	return ib_post_send(q->qp, &rsp->send_wr, NULL);
}

static int nvmet_rdma_queue_response(struct nvmet_rdma_queue *q, struct nvmet_rdma_rsp *rsp, u32 len)
{
	return nvmet_rdma_post_rsp(q, rsp, len, len <= 64);
}
