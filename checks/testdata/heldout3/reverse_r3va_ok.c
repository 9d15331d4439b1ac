// SPDX-License-Identifier: GPL-2.0
/* smbdirect-style data transfer header: a plain (not inline) send of the header. */

static int smbd_post_send_header(struct smbd_connection *info, int data_length)
{
	struct smbdirect_socket *sc = &info->socket;
	struct smbd_request *request;
	struct smbdirect_data_transfer *packet;
	struct ib_send_wr send_wr;
	int rc;

	request = mempool_alloc(sc->send_io.mem.pool, GFP_KERNEL);
	if (!request)
		return -ENOMEM;
	request->info = info;

	packet = smbd_request_payload(request);
	packet->credits_requested = cpu_to_le16(sc->send_io.credits.target);
	packet->flags = 0;
	packet->remaining_data_length = 0;
	packet->data_offset = 0;
	packet->data_length = cpu_to_le32(data_length);

	request->sge[0].addr = ib_dma_map_single(sc->ib_dev, (void *)packet,
						 sizeof(*packet), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(sc->ib_dev, request->sge[0].addr)) {
		rc = -EIO;
		goto err_free;
	}
	request->sge[0].length = sizeof(*packet);
	request->sge[0].lkey = sc->ib.pd->local_dma_lkey;
	request->num_sge = 1;

	request->cqe.done = send_done;
	send_wr.next = NULL;
	send_wr.wr_cqe = &request->cqe;
	send_wr.sg_list = request->sge;
	send_wr.num_sge = request->num_sge;
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;

	atomic_inc(&sc->send_io.pending.count);
	rc = ib_post_send(sc->ib.qp, &send_wr, NULL);
	if (!rc)
		return 0;

	atomic_dec(&sc->send_io.pending.count);
err_free:
	mempool_free(request, sc->send_io.mem.pool);
	return rc;
}
