// SPDX-License-Identifier: GPL-2.0
/* The end of the range is kept in a u32 before the bound check. */
struct tc_sgl {
	__le64 addr;
	__le32 length;
};

struct tc_cmd {
	struct tc_sgl *sgl;
	void *inline_buf;
	u32 inline_size;
	void *dst;
};

static u16 tc_map_window(struct tc_cmd *c)
{
	u64 off = le64_to_cpu(c->sgl->addr);
	u32 len = le32_to_cpu(c->sgl->length);
	u32 end = off + len;

	if (end > c->inline_size) /* want: incapsule-bounds */
		return NVME_SC_SGL_INVALID_OFFSET;
	memcpy(c->dst, c->inline_buf + off, len);
	return 0;
}
