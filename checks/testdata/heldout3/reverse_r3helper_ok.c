// SPDX-License-Identifier: GPL-2.0
/* 9p-rdma-style request send: a helper fills the SGE for a posted (not inline) send. */

static int p9_rdma_fill_sge(struct p9_trans_rdma *rdma, struct ib_sge *sge,
			    void *buf, u32 len)
{
	sge->length = len;
	sge->lkey = rdma->pd->local_dma_lkey;
	sge->addr = ib_dma_map_single(rdma->cm_id->device, buf, len,
				      DMA_TO_DEVICE);
	if (ib_dma_mapping_error(rdma->cm_id->device, sge->addr))
		return -EIO;
	return 0;
}

static int rdma_request(struct p9_client *client, struct p9_req_t *req)
{
	struct p9_trans_rdma *rdma = client->trans;
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct p9_rdma_context *c;
	int err;

	c = kmalloc(sizeof *c, GFP_NOFS);
	if (!c) {
		err = -ENOMEM;
		goto send_error;
	}
	c->req = req;

	err = p9_rdma_fill_sge(rdma, &sge, c->req->tc.sdata, c->req->tc.size);
	if (err)
		goto mapping_error;

	c->cqe.done = send_done;
	wr.next = NULL;
	wr.wr_cqe = &c->cqe;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;

	if (down_interruptible(&rdma->sq_sem)) {
		err = -EINTR;
		goto dma_unmap;
	}

	req->status = REQ_STATUS_SENT;
	err = ib_post_send(rdma->qp, &wr, NULL);
	if (err)
		goto dma_unmap;
	return 0;

dma_unmap:
	ib_dma_unmap_single(rdma->cm_id->device, c->busa,
			    c->req->tc.size, DMA_TO_DEVICE);
mapping_error:
	kfree(c);
send_error:
	return err;
}
