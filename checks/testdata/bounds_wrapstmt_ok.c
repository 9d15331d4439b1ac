// SPDX-License-Identifier: GPL-2.0
/* The host side: a completion names a window of the response buffer, tested
 * for wrapping in a statement of its own. */
struct tc_window {
	__le64 base;
	__le32 span;
};

struct tc_req {
	void *resp;
	u32 resp_len;
	void *out;
};

static int tc_copy_window(struct tc_req *req, struct tc_window *w)
{
	u64 base;
	u32 span;
	int err = 0;

	base = le64_to_cpu(w->base);
	span = le32_to_cpu(w->span);
	if (base > base + span)
		goto bad;
	if (base + span >= req->resp_len)
		goto bad;
	memcpy(req->out, req->resp + base, span);
	return 0;
bad:
	err = -EPROTO;
	return err;
}
