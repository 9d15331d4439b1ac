// SPDX-License-Identifier: GPL-2.0
/* nvmet-tcp-style: in-capsule data described by an SGL from the wire. */
struct tc_cmd {
	struct nvme_command *cmd;
	void *inline_buf;
	u32 inline_size;
	u32 transfer_len;
};

static u16 tc_map_inline(struct tc_cmd *c)
{
	struct nvme_sgl_desc *sgl = &c->cmd->common.dptr.sgl;
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);

	if (off) {
		pr_err("in-capsule data with a nonzero offset\n");
		return NVME_SC_SGL_INVALID_OFFSET | NVME_STATUS_DNR;
	}
	if (off + len > c->inline_size)
		return NVME_SC_SGL_INVALID_OFFSET | NVME_STATUS_DNR;
	if (!len)
		return 0;
	c->transfer_len += len;
	memcpy(c->inline_buf, c->inline_buf + off, len);
	return 0;
}
