/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipu_hw.h - the device contract (Documentation/device/pci.md), mirrored
 * field for field from qemu-device/ipu_regs.h in kernel types.
 */
#ifndef _IPU_HW_H
#define _IPU_HW_H

#include <linux/types.h>
#include <linux/build_bug.h>

#define IPU_PCI_VENDOR_ID	0x1234
#define IPU_PCI_DEVICE_ID	0x1ea0
#define IPU_BAR_REGS		0

#define IPU_ID_MAGIC		0x31555049u
#define IPU_IF_VERSION_MAJOR	1

#define IPU_REG_ID		0x000
#define IPU_REG_IF_VERSION	0x004
#define IPU_REG_HW_VERSION	0x008
#define IPU_REG_CAPS		0x00c
#define IPU_REG_SERIAL_LO	0x010
#define IPU_REG_SERIAL_HI	0x014
#define IPU_REG_TILES		0x018
#define IPU_REG_TILE_MEM	0x01c
#define IPU_REG_MAX_STREAMS	0x020
#define IPU_REG_MAX_RING	0x024
#define IPU_REG_MAX_SG		0x028
#define IPU_REG_MAX_IMAGE	0x02c
#define IPU_REG_NUM_VECTORS	0x030
#define IPU_REG_LINK_INDEX	0x038

#define IPU_REG_CONTROL		0x040
#define IPU_REG_STATUS		0x044
#define IPU_REG_ERR_CODE	0x048
#define IPU_REG_ERR_DETAIL	0x04c
#define IPU_REG_ERR_ADDR_LO	0x050
#define IPU_REG_ERR_ADDR_HI	0x054
#define IPU_REG_STALL_STREAM	0x058
#define IPU_REG_PROGRAM		0x05c
#define IPU_REG_INT_CAUSE	0x060
#define IPU_REG_INT_MASK	0x064

#define IPU_REG_CMDQ_BASE_LO	0x080
#define IPU_REG_CMDQ_BASE_HI	0x084
#define IPU_REG_CMDQ_SIZE	0x088
#define IPU_REG_CPLQ_BASE_LO	0x090
#define IPU_REG_CPLQ_BASE_HI	0x094
#define IPU_REG_CPLQ_SIZE	0x098
#define IPU_REG_SCQ_BASE_LO	0x0a0
#define IPU_REG_SCQ_BASE_HI	0x0a4
#define IPU_REG_SCQ_SIZE	0x0a8
#define IPU_REG_CMDQ_HEAD	0x0b0
#define IPU_REG_CPLQ_TAIL	0x0b4
#define IPU_REG_SCQ_TAIL	0x0b8

#define IPU_REG_CMDQ_TAIL	0x100
#define IPU_REG_CPLQ_HEAD	0x104
#define IPU_REG_SCQ_HEAD	0x108
#define IPU_REG_STREAM_DB(s)	(0x1000 + 4 * (s))

#define IPU_REG_CNT_PROGRAMS	0x200
#define IPU_REG_CNT_CYCLES	0x208
#define IPU_REG_CNT_COMPUTE_CYC	0x210
#define IPU_REG_CNT_EXCH_BYTES	0x218
#define IPU_REG_CNT_STREAM_IN	0x220
#define IPU_REG_CNT_STREAM_OUT	0x228
#define IPU_REG_CNT_STALLS	0x230
#define IPU_REG_CNT_STALL_NS	0x238
#define IPU_REG_CNT_ERRORS	0x240
#define IPU_REG_CNT_COMMANDS	0x248
#define IPU_REG_CNT_DESCS	0x250
#define IPU_REG_CNT_RESETS	0x258
#define IPU_REG_CNT_LINK_OUT	0x260
#define IPU_REG_CNT_LINK_IN	0x268
#define IPU_REG_CNT_LINK_CYC	0x270

#define IPU_REG_FAULT_CTRL	0x300
#define IPU_REG_FAULT_COUNT	0x304
#define IPU_REG_FAULT_ARG	0x308
#define IPU_REG_FAULT_FIRED	0x30c
#define IPU_REG_PROGRESS_LO	0x310
#define IPU_REG_PROGRESS_HI	0x314

#define IPU_CAP_PROGRESS	BIT(5)
#define IPU_CAP_FAULT		BIT(6)
#define IPU_CAP_LINK		BIT(7)

#define IPU_FAULT_KIND_MASK	0xfu
#define IPU_FAULT_NONE		0u
#define IPU_FAULT_HANG		1u
#define IPU_FAULT_DROP_IRQ	2u
#define IPU_FAULT_CORRUPT_CPL	3u
#define IPU_FAULT_DMA		4u
#define IPU_FAULT_SLOW		5u
#define IPU_FAULT_KIND_MAX	IPU_FAULT_SLOW
#define IPU_FAULT_REPEAT	BIT(8)
#define IPU_FAULT_MATCH_OPCODE	BIT(9)
#define IPU_FAULT_OPCODE_SHIFT	16
#define IPU_FAULT_MAX_SLOW_MS	1000u

#define IPU_CTRL_ENABLE		BIT(0)
#define IPU_CTRL_RESET		BIT(1)

#define IPU_STS_READY		BIT(0)
#define IPU_STS_BUSY		BIT(1)
#define IPU_STS_ERROR		BIT(2)
#define IPU_STS_RESETTING	BIT(3)
#define IPU_STS_STALLED		BIT(4)
#define IPU_STS_FATAL		BIT(5)
#define IPU_STS_LOADED		BIT(6)

#define IPU_INT_CPL		BIT(0)
#define IPU_INT_SCPL		BIT(1)
#define IPU_INT_ERROR		BIT(2)
#define IPU_INT_ALL		(IPU_INT_CPL | IPU_INT_SCPL | IPU_INT_ERROR)
#define IPU_VEC_CPL		0
#define IPU_VEC_SCPL		1
#define IPU_VEC_ERROR		2
#define IPU_NUM_VECTORS		3

#define IPU_HW_MAX_STREAMS	1024u
#define IPU_MAX_SG_ENTRIES	65536u
#define IPU_MAX_IMAGE_BYTES	BIT(30)

enum ipu_hw_opcode {
	IPU_CMD_NOP = 0x00,
	IPU_CMD_LOAD_EXE = 0x01,
	IPU_CMD_WRITE_TENSOR = 0x02,
	IPU_CMD_READ_TENSOR = 0x03,
	IPU_CMD_RUN = 0x04,
	IPU_CMD_ABORT = 0x05,
	IPU_CMD_RESET_ENGINE = 0x06,
	IPU_CMD_CREATE_STREAM = 0x07,
	IPU_CMD_DELETE_STREAM = 0x08,
	IPU_CMD_LINK_STREAM = 0x09,
};

#define IPU_F_DIRECT		BIT(0)

struct ipu_hw_cmd {
	u8 opcode;
	u8 flags;
	__le16 rsvd0;
	__le32 arg0;
	__le64 tag;
	__le64 addr;
	__le32 len;
	__le32 sg_count;
	__le32 arg1;
	__le32 rsvd1[7];
};

struct ipu_hw_sg {
	__le64 addr;
	__le32 len;
	__le32 rsvd;
};

struct ipu_hw_desc {
	__le64 addr;
	__le32 len;
	__le32 sg_count;
	__le64 tag;
	__le32 flags;
	__le32 rsvd;
};

struct ipu_hw_cpl {
	__le64 tag;
	__le64 detail;
	__le32 result;
	__le16 head;
	__le16 queue;
	__le16 status;
	u8 opcode;
	u8 flags;
	__le32 rsvd;
};

#define IPU_CPL_PHASE		BIT(0)

enum ipu_hw_status {
	IPU_ST_OK = 0,
	IPU_ST_INVALID_OPCODE = 1,
	IPU_ST_INVALID_FIELD = 2,
	IPU_ST_DMA_FAULT = 3,
	IPU_ST_BAD_SG = 4,
	IPU_ST_TOO_LARGE = 5,
	IPU_ST_EXE_INVALID = 6,
	IPU_ST_NOT_LOADED = 7,
	IPU_ST_BAD_PROGRAM = 8,
	IPU_ST_ABORTED = 9,
	IPU_ST_STREAM_ERROR = 10,
	IPU_ST_FAULT = 11,
	IPU_ST_RANGE = 12,
	IPU_ST_BAD_STREAM = 13,
	IPU_ST_RING_CONFIG = 14,
	IPU_ST_RING_INDEX = 15,
	IPU_ST_LENGTH = 16,
	IPU_ST_NO_MEMORY = 17,
	IPU_ST_ENGINE = 18,
	IPU_ST_LINK = 19,
	IPU_ST_COUNT
};

/* IPU_ST_LINK: the completion's result */
enum ipu_link_error {
	IPU_LKE_NO_LINK = 1,
	IPU_LKE_PEER = 2,
	IPU_LKE_STREAM = 3,
	IPU_LKE_SIZE = 4,
	IPU_LKE_BUSY = 5,
};

#define IPU_LINK_MAX_PAIRS	64u
#define IPU_LINK_MAX_MEMBERS	16u

static inline void ipu_hw_check_layout(void)
{
	BUILD_BUG_ON(sizeof(struct ipu_hw_cmd) != 64);
	BUILD_BUG_ON(sizeof(struct ipu_hw_sg) != 16);
	BUILD_BUG_ON(sizeof(struct ipu_hw_desc) != 32);
	BUILD_BUG_ON(sizeof(struct ipu_hw_cpl) != 32);
}

/* IPUX executable image: just what the driver reads (the stream table). */
#define IPUX_MAGIC		0x58555049u
#define IPUX_HDR_SIZE		64
#define IPUX_SEC_STREAMS	1

#endif /* _IPU_HW_H */
