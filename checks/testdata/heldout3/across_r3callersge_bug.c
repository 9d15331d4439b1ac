// SPDX-License-Identifier: GPL-2.0
/* iser-initiator-style control send: the poster sets inline on the SGE its caller filled. */

static int iser_create_ib_conn_res(struct ib_conn *ib_conn)
{
	struct iser_device *device = ib_conn->device;
	struct ib_qp_init_attr init_attr;
	int ret;

	memset(&init_attr, 0, sizeof(init_attr));
	init_attr.event_handler = iser_qp_event_callback;
	init_attr.qp_context = (void *)ib_conn;
	init_attr.send_cq = ib_conn->cq;
	init_attr.recv_cq = ib_conn->cq;
	init_attr.cap.max_recv_wr = ISER_QP_MAX_RECV_DTOS;
	init_attr.cap.max_send_sge = 2;
	init_attr.cap.max_recv_sge = 1;
	init_attr.cap.max_send_wr = ISER_QP_MAX_REQ_DTOS + 1;
	init_attr.cap.max_inline_data = ISER_HEADERS_LEN;
	init_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	init_attr.qp_type = IB_QPT_RC;

	ret = rdma_create_qp(ib_conn->cma_id, device->pd, &init_attr);
	if (ret)
		goto out_err;

	ib_conn->qp = ib_conn->cma_id->qp;
	ib_conn->max_inline = init_attr.cap.max_inline_data;
	return 0;

out_err:
	iser_err("unable to alloc mem or create resource, err %d\n", ret);
	return ret;
}

int iser_initialize_task_headers(struct iscsi_task *task,
				 struct iser_tx_desc *tx_desc)
{
	struct iser_conn *iser_conn = task->conn->dd_data;
	struct iser_device *device = iser_conn->ib_conn.device;
	u64 dma_addr;

	dma_addr = ib_dma_map_single(device->ib_device, (void *)tx_desc,
				     ISER_HEADERS_LEN, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(device->ib_device, dma_addr))
		return -ENOMEM;

	tx_desc->inv_wr.next = NULL;
	tx_desc->reg_wr.wr.next = NULL;
	tx_desc->mapped = true;
	tx_desc->dma_addr = dma_addr;
	return 0;
}

static int iser_post_inline(struct ib_conn *ib_conn, struct ib_sge *sg,
			    struct ib_cqe *cqe)
{
	struct ib_send_wr wr;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_cqe = cqe;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	if (sg->length <= ib_conn->max_inline)
		wr.send_flags |= IB_SEND_INLINE;

	ret = ib_post_send(ib_conn->qp, &wr, NULL);
	if (unlikely(ret))
		iser_err("ib_post_send failed, ret:%d opcode:%d\n",
			 ret, wr.opcode);
	return ret;
}

int iser_send_control(struct iscsi_conn *conn, struct iscsi_task *task)
{
	struct iscsi_iser_task *iser_task = task->dd_data;
	struct iser_tx_desc *tx_desc = &iser_task->desc;
	struct iser_conn *iser_conn = conn->dd_data;
	struct ib_conn *ib_conn = &iser_conn->ib_conn;
	struct iser_device *device = ib_conn->device;
	struct ib_sge *sge = &tx_desc->tx_sg[0];
	int err;

	tx_desc->type = ISCSI_TX_CONTROL;
	tx_desc->cqe.done = iser_ctrl_comp;
	ib_dma_sync_single_for_cpu(device->ib_device, tx_desc->dma_addr,
				   ISER_HEADERS_LEN, DMA_TO_DEVICE);
	memset(&tx_desc->iser_header, 0, sizeof(struct iser_ctrl));
	tx_desc->iser_header.flags = ISER_VER;

	sge->addr = tx_desc->dma_addr;
	sge->length = ISER_HEADERS_LEN;
	sge->lkey = device->pd->local_dma_lkey;

	err = iser_post_inline(ib_conn, sge, &tx_desc->cqe); /* want: inline-sge-addr */
	if (!err)
		return 0;

	iser_err("conn %p failed err %d\n", conn, err);
	return err;
}
