// SPDX-License-Identifier: GPL-2.0
/* nvme-style: the in-capsule window is checked with the range end.
 * The end is
 * computed with check_add_overflow. */
struct nvme_keyed_sgl {
	__le64 addr;
	__le32 length;
};

struct nvmet_cmd {
	struct nvme_keyed_sgl *sgl;
	void *capsule;
	u64 capsule_len;
	void *dst;
};

static u16 nvmet_map_capsule(struct nvmet_cmd *c)
{
	u64 off = le64_to_cpu(c->sgl->addr);
	u64 len = le32_to_cpu(c->sgl->length);
	u64 end;

	if (check_add_overflow(off, len, &end) || end > c->capsule_len)
		return NVME_SC_SGL_INVALID_OFFSET;
	memcpy(c->dst, c->capsule + off, len);
	return 0;
}
