// SPDX-License-Identifier: GPL-2.0
/* srp-style: header, metadata and payload go inline in three SGEs.
 * The guard sums all three. */
struct srp_ch {
	struct ib_qp *qp;
	struct ib_pd *pd;
	u32 max_inline;
	u8 hdr[16];
	u8 meta[8];
};

static int srp_new_ch(struct srp_ch *ch, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	attr.cap.max_inline_data = 256;
	ret = rdma_create_qp(id, ch->pd, &attr);
	if (ret)
		return ret;
	ch->max_inline = attr.cap.max_inline_data;
	return 0;
}

static int srp_post_imm(struct srp_ch *ch, void *data, u32 hlen, u32 mlen, u32 plen)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge[3];

	if (hlen + mlen + plen > ch->max_inline)
		return -EMSGSIZE;
	sge[0].addr = (uintptr_t)ch->hdr;
	sge[0].length = hlen;
	sge[1].addr = (uintptr_t)ch->meta;
	sge[1].length = mlen;
	sge[2].addr = (uintptr_t)data;
	sge[2].length = plen;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	return ib_post_send(ch->qp, &wr, NULL);
}
