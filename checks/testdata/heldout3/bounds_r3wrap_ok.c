// SPDX-License-Identifier: GPL-2.0
/* srpt-style immediate data: the initiator's descriptor names where the data sits in the IU. */

static int srpt_get_imm_data(struct srpt_rdma_ch *ch, struct srp_cmd *srp_cmd,
			     struct srp_imm_buf *imm_buf, void **data, u32 *data_len)
{
	u64 va = get_unaligned_be64(&imm_buf->desc.va);
	u32 len = be32_to_cpu(imm_buf->len);

	if (!(srp_cmd->buf_fmt & SRP_DATA_DESC_IMM)) {
		pr_debug("no immediate data in this IU\n");
		return -EINVAL;
	}

	if (va + len < va || va + len > ch->imm_data_size) {
		pr_err("Received invalid write request: data at %llu+%u beyond %u\n",
		       va, len, ch->imm_data_size);
		return -EINVAL;
	}

	*data = (void *)srp_cmd + va;
	*data_len = len;
	return 0;
}
