// SPDX-License-Identifier: GPL-2.0
/* iser-target-style: an offset read unaligned from a header on the wire. */
struct tc_rx_desc {
	u8 hdr[64];
	u8 data[8192];
};

struct tc_conn {
	u32 max_data;
};

static int tc_rx_data(struct tc_conn *conn, struct tc_rx_desc *rx, void *dst)
{
	u64 offset = get_unaligned_be64(&rx->hdr[8]);
	u32 length = get_unaligned_be32(&rx->hdr[16]);

	if (offset > sizeof(rx->data) || length > sizeof(rx->data) - offset)
		return -EINVAL;
	if (length > conn->max_data)
		return -EINVAL;
	memcpy(dst, rx->data + offset, length);
	return 0;
}
