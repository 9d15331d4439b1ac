// SPDX-License-Identifier: GPL-2.0
/* The queue asks for inline space for its command capsule, sized from
 * what the member points at; the response is mapped by its own size. */
struct tc_capsule {
	u8 opcode;
	u8 flags;
	u16 cid;
	__le32 nsid;
	__le64 rsvd[7];
};

struct tc_q {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct tc_capsule *cmd;
	u64 cmd_dma;
	u32 capsule_len;
	u32 max_inline;
};

static int tc_q_create(struct tc_q *q, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	q->capsule_len = sizeof(*q->cmd);
	qa.cap.max_inline_data = q->capsule_len;
	rc = rdma_create_qp(id, q->pd, &qa);
	q->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static void tc_q_map_rsp(struct ib_device *dev, struct tc_q *q, struct tc_capsule *rsp, u64 *dma)
{
	*dma = ib_dma_map_single(dev, rsp, sizeof(*rsp), DMA_FROM_DEVICE);
}

static int tc_q_send(struct tc_q *q)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = q->cmd_dma;
	sge.length = q->capsule_len;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (q->capsule_len <= q->max_inline) {
		sge.addr = (uintptr_t)q->cmd;
		wr.send_flags = IB_SEND_INLINE;
	}
	return ib_post_send(q->qp, &wr, NULL);
}
