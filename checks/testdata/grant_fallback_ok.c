// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: retry without inline data when the device refuses. */
struct tc_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
	void *rsp;
	u64 rsp_dma;
};

static int tc_create_qp(struct tc_queue *queue, struct rdma_cm_id *cm_id, u32 qsize)
{
	struct ib_qp_init_attr attr, init_attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = qsize;
	attr.cap.max_inline_data = 64;
	init_attr = attr;
	ret = rdma_create_qp(cm_id, queue->pd, &init_attr);
	if (ret == -EINVAL) {
		init_attr = attr;
		init_attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(cm_id, queue->pd, &init_attr);
	}
	if (ret)
		return ret;
	queue->max_inline_data = init_attr.cap.max_inline_data;
	queue->qp = cm_id->qp;
	return 0;
}

static int tc_post_rsp(struct tc_queue *queue, u32 len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = queue->rsp_dma;
	sge.length = len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (len <= queue->max_inline_data) {
		sge.addr = (uintptr_t)queue->rsp;
		wr.send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(queue->qp, &wr, NULL);
}
