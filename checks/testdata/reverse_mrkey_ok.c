// SPDX-License-Identifier: GPL-2.0
/* A ring in vmalloc memory is written to the peer with RDMA WRITE. Small
 * pieces go inline; the rest is described by the ring's virtual address
 * with the key of the region that registered the ring by that address
 * (its I/O virtual address), as smc does for vmalloc'ed send buffers. */
struct tc_ring {
	void *vaddr;
	struct ib_mr *mr;
	u32 len;
};

struct tc_xfer {
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct tc_ring *ring;
	u64 raddr;
	u32 rkey;
	u32 max_inline;
};

static int tc_xfer_qp(struct tc_xfer *x, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 128;
	rc = rdma_create_qp(id, x->pd, &qa);
	x->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static int tc_xfer_write(struct tc_xfer *x, u32 off, u32 len)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;

	sge.addr = (uintptr_t)x->ring->vaddr + off;
	sge.length = len;
	if (len < x->max_inline) {
		sge.lkey = x->pd->local_dma_lkey;
		wr.wr.send_flags = IB_SEND_INLINE;
	} else {
		sge.lkey = x->ring->mr->lkey;
		wr.wr.send_flags = 0;
	}
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = x->raddr + off;
	wr.rkey = x->rkey;
	return ib_post_send(x->qp, &wr.wr, NULL);
}
