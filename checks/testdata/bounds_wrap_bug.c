// SPDX-License-Identifier: GPL-2.0
/* A target copies a keyed block described by the command from its
 * receive buffer: offset and length come from the wire. */
struct tc_key_desc {
	__le64 offset;
	__le32 length;
};

struct tc_rsp {
	struct tc_key_desc *desc;
	void *rx_buf;
	u32 rx_size;
	void *key;
};

static int tc_fetch_key(struct tc_rsp *r)
{
	u64 start = le64_to_cpu(r->desc->offset);
	u32 n = le32_to_cpu(r->desc->length);

	if (!n)
		return -EINVAL;
	if (start + n > r->rx_size) /* want: incapsule-bounds */
		return -ERANGE;
	memcpy(r->key, r->rx_buf + start, n);
	return 0;
}
