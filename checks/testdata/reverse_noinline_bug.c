// SPDX-License-Identifier: GPL-2.0
/* A module that never posts inline (no IB_SEND_INLINE anywhere): its
 * control message is mapped, but the SGE is given the message's virtual address: the
 * HCA reads it by DMA. */
struct rn_conn {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u64 msg_dma;
};

struct rn_msg {
	__be32 op;
	__be32 len;
};

static int rn_send_ctrl(struct ib_device *dev, struct rn_conn *c, struct rn_msg *msg)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	c->msg_dma = ib_dma_map_single(dev, msg, sizeof(*msg), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, c->msg_dma))
		return -ENOMEM;
	sge.addr = (uintptr_t)msg;
	sge.length = sizeof(*msg);
	sge.lkey = c->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	return ib_post_send(c->qp, &wr, NULL); /* want: noninline-sge-virt */
}
