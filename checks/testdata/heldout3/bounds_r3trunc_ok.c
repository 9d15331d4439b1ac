// SPDX-License-Identifier: GPL-2.0
/* nvmet-rdma-style in-capsule data: the host names an offset into the capsule. */

static u16 nvmet_rdma_map_sgl_inline(struct nvmet_rdma_rsp *rsp)
{
	struct nvmet_rdma_queue *queue = rsp->queue;
	struct nvme_sgl_desc *sgl = &rsp->req.cmd->common.dptr.sgl;
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);
	u64 end;

	if (!nvme_is_write(rsp->req.cmd)) {
		rsp->req.error_loc =
			offsetof(struct nvme_common_command, opcode);
		return NVME_SC_INVALID_FIELD | NVME_STATUS_DNR;
	}

	if (check_add_overflow(off, (u64)len, &end) ||
	    end > queue->dev->inline_data_size) {
		rsp->req.error_loc =
			offsetof(struct nvme_common_command, dptr);
		return NVME_SC_SGL_INVALID_OFFSET | NVME_STATUS_DNR;
	}

	/* no data command? */
	if (!len)
		return 0;

	nvmet_rdma_use_inline_sg(rsp, len, off);
	rsp->flags |= NVMET_RDMA_REQ_INLINE_DATA;
	rsp->req.transfer_len += len;
	return 0;
}
