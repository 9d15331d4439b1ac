// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-host-style in-capsule completion data check (out-of-tree variant). */

static int nvme_rdma_check_inline(struct nvme_rdma_queue *queue,
				  struct nvme_sgl_desc *sgl)
{
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);
	u64 end;

	if (sgl->type != (NVME_SGL_FMT_DATA_DESC << 4 | NVME_SGL_FMT_OFFSET))
		return -EINVAL;

	check_add_overflow(off, (u64)len, &end);
	if (end > queue->inline_data_size) { /* want: incapsule-bounds */
		dev_err(queue->ctrl->ctrl.device,
			"in-capsule data %llu+%u beyond %zu\n",
			off, len, queue->inline_data_size);
		return -EINVAL;
	}
	return 0;
}
