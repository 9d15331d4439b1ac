// SPDX-License-Identifier: GPL-2.0
/* A status reply built in a caller's buffer through a typed pointer: the
 * SGE length is taken from the pointer, not from the reply. */
struct tc_status {
	__be32 code;
	__be32 detail;
	__be64 tag;
	u8 text[48];
};

struct tc_srv {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
};

static int tc_srv_qp(struct tc_srv *s, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int rc;

	qa.cap.max_inline_data = 64;
	rc = rdma_create_qp(id, s->pd, &qa);
	s->max_inline = rc ? 0 : qa.cap.max_inline_data;
	return rc;
}

static int tc_srv_reply(struct tc_srv *s, void *buf, u32 code)
{
	struct tc_status *st = buf;
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	st->code = cpu_to_be32(code);
	sge.addr = (uintptr_t)st;
	sge.length = sizeof(st); /* want: sizeof-pointer */
	sge.lkey = s->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	if (sge.length > s->max_inline)
		return -EMSGSIZE;
	wr.send_flags = IB_SEND_INLINE;
	return ib_post_send(s->qp, &wr, NULL);
}
