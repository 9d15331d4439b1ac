// SPDX-License-Identifier: GPL-2.0
/* nvme-rdma-style: the command capsule's size is computed from the
 * command and the in-capsule data. It takes the size of the command. */
struct nvme_command {
	u8 opcode;
	u8 flags;
	u16 command_id;
	__le32 nsid;
	__le32 cdw[14];
};

struct nvme_rdma_queue {
	struct nvme_command *cmd;
	size_t cmnd_capsule_len;
	u32 inline_data_size;
};

static void nvme_rdma_init_capsule(struct nvme_rdma_queue *queue)
{
	struct nvme_command *cmd = queue->cmd;

	queue->cmnd_capsule_len = sizeof(*cmd) + queue->inline_data_size;
}
