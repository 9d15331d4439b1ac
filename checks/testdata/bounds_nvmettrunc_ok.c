// SPDX-License-Identifier: GPL-2.0
/* nvmet-style: the end of the in-capsule range, a 64-bit offset plus a
 * length, is kept in a u64
 * before the check. */
struct nvme_sgl_desc {
	__le64 addr;
	__le32 length;
};

struct nvmet_req {
	struct nvme_sgl_desc *sgl;
	void *inline_data;
	u32 inline_data_size;
	void *buf;
};

static u16 nvmet_rdma_map_inline(struct nvmet_req *req)
{
	u64 stop;
	u64 off;
	u32 len;

	off = le64_to_cpu(req->sgl->addr);
	len = le32_to_cpu(req->sgl->length);
	stop = off + len;
	if (stop > req->inline_data_size || stop < off)
		return NVME_SC_SGL_INVALID_OFFSET;
	memcpy(req->buf, req->inline_data + off, len);
	return 0;
}
