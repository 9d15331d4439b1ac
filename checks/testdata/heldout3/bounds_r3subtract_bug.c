// SPDX-License-Identifier: GPL-2.0
/* rtrs-srv-style read request: the client names a window of the server's chunk. */

static int rtrs_srv_check_rd_desc(struct rtrs_srv_path *srv_path,
				  const struct rtrs_msg_rdma_read *msg,
				  void **buf)
{
	u64 off = le64_to_cpu(msg->desc[0].addr);
	u32 len = le32_to_cpu(msg->desc[0].len);
	u32 size = srv_path->s.srv->max_chunk_size;

	if (le16_to_cpu(msg->sg_cnt) != 1) {
		rtrs_err_rl(&srv_path->s, "only one descriptor supported\n");
		return -EINVAL;
	}

	if (off + len > size) { /* want: incapsule-bounds */
		rtrs_err_rl(&srv_path->s,
			    "read window %llu+%u out of chunk of %u\n",
			    off, len, size);
		return -EINVAL;
	}

	*buf = page_address(srv_path->chunks[0]) + off;
	return 0;
}
