// SPDX-License-Identifier: GPL-2.0
/* Out-of-tree-style offload module: a fixed-size doorbell message, always inline. */

#define XOFF_MAX_INLINE		64

struct xoff_doorbell {
	__be32	magic;
	__be32	seq;
	__be64	ring_addr;
	__be32	ring_rkey;
	__be32	count;
	u8	opaque[40];
};

struct xoff_ctx {
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	struct xoff_doorbell	db;
	struct ib_cqe		db_cqe;
	spinlock_t		lock;
};

static int xoff_create_qp(struct xoff_ctx *ctx)
{
	struct ib_qp_init_attr attr = {};

	attr.send_cq = ctx->cq;
	attr.recv_cq = ctx->cq;
	attr.cap.max_send_wr = 16;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = XOFF_MAX_INLINE;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;

	ctx->qp = ib_create_qp(ctx->pd, &attr);
	if (IS_ERR(ctx->qp)) {
		int ret = PTR_ERR(ctx->qp);

		ctx->qp = NULL;
		pr_err("xoff: ib_create_qp failed: %d\n", ret);
		return ret;
	}
	return 0;
}

static int xoff_ring_doorbell(struct xoff_ctx *ctx, u32 seq)
{
	struct ib_sge sge;
	struct ib_send_wr wr = {};
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->db.seq = cpu_to_be32(seq);
	sge.addr = (u64)(uintptr_t)&ctx->db;
	sge.length = sizeof(struct xoff_doorbell);
	sge.lkey = ctx->pd->local_dma_lkey;

	wr.wr_cqe = &ctx->db_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;

	ret = ib_post_send(ctx->qp, &wr, NULL);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return ret;
}
