// SPDX-License-Identifier: GPL-2.0
/* smbdirect-style: the negotiate request is mapped for the device.
 * The mapping length is
 * the size of the packet. */
struct smbd_negotiate_req {
	__le16 min_version;
	__le16 max_version;
	__le16 reserved;
	__le16 credits_requested;
	__le32 preferred_send_size;
	__le32 max_receive_size;
	__le32 max_fragmented_size;
};

struct smbd_request {
	void *packet;
	u64 dma;
};

static int smbd_post_send_negotiate_req(struct ib_device *dev, struct smbd_request *request)
{
	struct smbd_negotiate_req *packet = request->packet;

	packet->min_version = cpu_to_le16(0x100);
	request->dma = ib_dma_map_single(dev, packet, sizeof(*packet), DMA_TO_DEVICE);
	return ib_dma_mapping_error(dev, request->dma);
}
