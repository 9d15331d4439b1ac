// SPDX-License-Identifier: GPL-2.0
/* isert-style: an unsolicited data descriptor from the wire is checked
 * against the receive buffer. The offset and length are added. */
struct iser_data_desc {
	__be64 va;
	__be32 len;
};

struct isert_rx {
	struct iser_data_desc *desc;
	u8 *buf;
	u32 buf_len;
	void *out;
};

static int isert_handle_unsol(struct isert_rx *rx)
{
	u64 va = be64_to_cpu(rx->desc->va);
	u32 n = be32_to_cpu(rx->desc->len);

	if (va + n > rx->buf_len) /* want: incapsule-bounds */
		return -EINVAL;
	memcpy(rx->out, rx->buf + va, n);
	return 0;
}
