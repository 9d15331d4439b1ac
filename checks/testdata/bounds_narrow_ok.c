// SPDX-License-Identifier: GPL-2.0
/* A reply's window end is computed in 64 bits after the
 * position alone was bounded. */
struct tc_hdr {
	__le64 pos;
	__le32 cnt;
};

struct tc_buf {
	void *base;
	unsigned int size;
};

static int tc_read_reply(struct tc_buf *b, struct tc_hdr *h, void *out)
{
	u64 pos;
	u32 cnt;
	u64 last;

	pos = get_unaligned_le64(&h->pos);
	cnt = le32_to_cpu(h->cnt);
	if (pos > b->size)
		return -EINVAL;
	last = pos + cnt;
	if (last <= 0 || last > b->size)
		return -EINVAL;
	memcpy(out, b->base + pos, cnt);
	return 0;
}
