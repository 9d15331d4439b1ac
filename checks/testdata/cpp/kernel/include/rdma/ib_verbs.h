/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IB_VERBS_H
#define IB_VERBS_H
#include <linux/types.h>
enum ib_send_flags {
	IB_SEND_FENCE = 1,
	IB_SEND_SIGNALED = 2,
	IB_SEND_SOLICITED = 4,
	IB_SEND_INLINE = 8,
};
enum ib_wr_opcode { IB_WR_SEND };
enum dma_data_direction { DMA_TO_DEVICE = 1 };
struct ib_sge { u64 addr; u32 length; u32 lkey; };
struct ib_pd { u32 local_dma_lkey; };
struct ib_qp;
struct ib_device;
struct rdma_cm_id;
struct ib_qp_cap { u32 max_send_wr; u32 max_inline_data; };
struct ib_qp_init_attr { struct ib_qp_cap cap; };
struct ib_send_wr {
	struct ib_send_wr *next;
	struct ib_sge *sg_list;
	int num_sge;
	enum ib_wr_opcode opcode;
	int send_flags;
};
int ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr, const struct ib_send_wr **bad);
u64 ib_dma_map_single(struct ib_device *dev, void *cpu_addr, unsigned long size, enum dma_data_direction dir);
int rdma_create_qp(struct rdma_cm_id *id, struct ib_pd *pd, struct ib_qp_init_attr *attr);
#endif
