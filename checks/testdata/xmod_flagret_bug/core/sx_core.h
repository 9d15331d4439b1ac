/* SPDX-License-Identifier: GPL-2.0 */
struct sx_queue {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline_data;
};

int sx_create_qp(struct sx_queue *queue, struct rdma_cm_id *id);
u32 sx_send_flags(struct sx_queue *queue, u32 len);
