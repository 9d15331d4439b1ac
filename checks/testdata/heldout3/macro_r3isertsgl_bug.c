// SPDX-License-Identifier: GPL-2.0
/* isert-style login response: the request is re-pointed by a macro. */

#define ISERT_SET_SGL(wr, sgl, n)		\
	do {					\
		(wr)->sg_list = (sgl);		\
		(wr)->num_sge = (n);		\
	} while (0)

static void isert_init_tx_hdrs(struct isert_conn *isert_conn,
			       struct iser_tx_desc *tx_desc)
{
	struct ib_device *ib_dev = isert_conn->cm_id->device;
	u64 dma_addr;

	dma_addr = ib_dma_map_single(ib_dev, (void *)tx_desc,
				     ISER_HEADERS_LEN, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, dma_addr)) {
		isert_err("ib_dma_mapping_error() failed\n");
		return;
	}
	tx_desc->dma_addr = dma_addr;
	tx_desc->tx_sg[0].addr = tx_desc->dma_addr;
	tx_desc->tx_sg[0].length = ISER_HEADERS_LEN;
	tx_desc->tx_sg[0].lkey = isert_conn->device->pd->local_dma_lkey;
}

static int isert_login_post_send(struct isert_conn *isert_conn,
				 struct iser_tx_desc *tx_desc)
{
	struct ib_send_wr send_wr;
	int ret;

	isert_init_tx_hdrs(isert_conn, tx_desc);

	tx_desc->tx_cqe.done = isert_login_send_done;
	send_wr.next = NULL;
	send_wr.wr_cqe = &tx_desc->tx_cqe;
	ISERT_SET_SGL(&send_wr, tx_desc->tx_sg, tx_desc->num_sge);
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;
	if (ISER_HEADERS_LEN <= isert_conn->max_inline)
		send_wr.send_flags |= IB_SEND_INLINE;

	ret = ib_post_send(isert_conn->qp, &send_wr, NULL); /* want: inline-sge-addr */
	if (ret)
		isert_err("ib_post_send() failed, ret: %d\n", ret);

	return ret;
}

static int isert_create_qp(struct isert_conn *isert_conn,
			   struct rdma_cm_id *cma_id)
{
	struct isert_device *device = isert_conn->device;
	struct ib_qp_init_attr attr;
	int ret;

	memset(&attr, 0, sizeof(struct ib_qp_init_attr));
	attr.event_handler = isert_qp_event_callback;
	attr.qp_context = isert_conn;
	attr.send_cq = isert_conn->cq;
	attr.recv_cq = isert_conn->cq;
	attr.cap.max_send_wr = ISERT_QP_MAX_REQ_DTOS + 1;
	attr.cap.max_recv_wr = ISERT_QP_MAX_RECV_DTOS + 1;
	attr.cap.max_send_sge = device->ib_device->attrs.max_send_sge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = 128;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;

	ret = rdma_create_qp(cma_id, device->pd, &attr);
	if (ret) {
		isert_err("rdma_create_qp failed for cma_id %d\n", ret);
		return ret;
	}
	isert_conn->max_inline = attr.cap.max_inline_data;
	isert_conn->qp = cma_id->qp;
	return 0;
}
