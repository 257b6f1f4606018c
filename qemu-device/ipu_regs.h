/* SPDX-License-Identifier: MIT */
/*
 * ipu_regs.h - the PCI contract of the emulated IPU (`-device ipu`).
 *
 * Plain C (only <stdint.h>): the QEMU device model includes it, and a Linux
 * driver or its uapi can mirror it field for field.  Everything is
 * little-endian.  Documentation/device/pci.md explains every register,
 * ring, command and status code defined here.
 *
 * PCI identity: vendor 0x1234, device 0x1ea0, class 0x120000 (processing
 * accelerator), revision = interface major version.
 *
 *   BAR0  8 KiB, 32-bit memory: registers + doorbells (this file)
 *   BAR2  4 KiB, memory: MSI-X table (lower half) and PBA (upper half)
 */
#ifndef IPU_REGS_H
#define IPU_REGS_H

#include <stdint.h>

#define IPU_PCI_VENDOR_ID	0x1234
#define IPU_PCI_DEVICE_ID	0x1ea0
#define IPU_PCI_CLASS		0x1200	/* processing accelerator */
#define IPU_BAR_REGS		0
#define IPU_BAR_MSIX		2
#define IPU_BAR0_SIZE		0x2000

/* Value of IPU_REG_ID: "IPU1" as a little-endian u32. */
#define IPU_ID_MAGIC		0x31555049u
/* Interface (register/ring ABI) version: major << 16 | minor. */
#define IPU_IF_VERSION_MAJOR	1
#define IPU_IF_VERSION_MINOR	2
#define IPU_IF_VERSION		((IPU_IF_VERSION_MAJOR << 16) | IPU_IF_VERSION_MINOR)

/*
 * BAR0 register map.  All registers are 32 bits wide and must be accessed
 * with naturally aligned 4-byte accesses; 8-byte accesses to a 64-bit pair
 * (xxx_LO at an 8-aligned offset) are also accepted and act as LO then HI.
 * Reads of unlisted offsets return 0, writes to them are ignored.
 */
/* identity, read-only */
#define IPU_REG_ID		0x000	/* IPU_ID_MAGIC */
#define IPU_REG_IF_VERSION	0x004	/* IPU_IF_VERSION */
#define IPU_REG_HW_VERSION	0x008	/* `version` property (IPU generation) */
#define IPU_REG_CAPS		0x00c	/* IPU_CAP_* */
#define IPU_REG_SERIAL_LO	0x010	/* `serial` property, 64 bits */
#define IPU_REG_SERIAL_HI	0x014
#define IPU_REG_TILES		0x018	/* `tiles` property */
#define IPU_REG_TILE_MEM	0x01c	/* `tile-mem` property, bytes per tile */
#define IPU_REG_MAX_STREAMS	0x020	/* IPU_MAX_STREAMS: stream ids 0..n-1 */
#define IPU_REG_MAX_RING	0x024	/* IPU_MAX_RING_ENTRIES */
#define IPU_REG_MAX_SG		0x028	/* IPU_MAX_SG_ENTRIES per list */
#define IPU_REG_MAX_IMAGE	0x02c	/* IPU_MAX_IMAGE_BYTES */
#define IPU_REG_NUM_VECTORS	0x030	/* IPU_NUM_VECTORS */
#define IPU_REG_WORKERS		0x034	/* `workers` property (0 = host CPUs) */
#define IPU_REG_LINK_INDEX	0x038	/* `link-index` property; ~0: on no link */

/* control and status */
#define IPU_REG_CONTROL		0x040	/* RW: IPU_CTRL_* */
#define IPU_REG_STATUS		0x044	/* RO: IPU_STS_* */
#define IPU_REG_ERR_CODE	0x048	/* RO: IPU_ST_* of the last error; write clears */
#define IPU_REG_ERR_DETAIL	0x04c	/* RO: detail of the last error */
#define IPU_REG_ERR_ADDR_LO	0x050	/* RO: guest address of the last error */
#define IPU_REG_ERR_ADDR_HI	0x054
#define IPU_REG_STALL_STREAM	0x058	/* RO: stream a program waits on, or ~0 */
#define IPU_REG_PROGRAM		0x05c	/* RO: program running, or ~0 */
#define IPU_REG_INT_CAUSE	0x060	/* RW1C: IPU_INT_* */
#define IPU_REG_INT_MASK	0x064	/* RW: IPU_INT_* set = masked */

/* rings: base/size writable only while CONTROL.ENABLE is 0 */
#define IPU_REG_CMDQ_BASE_LO	0x080	/* command ring, 64-byte aligned */
#define IPU_REG_CMDQ_BASE_HI	0x084
#define IPU_REG_CMDQ_SIZE	0x088	/* entries, power of two, 2..MAX_RING */
#define IPU_REG_CPLQ_BASE_LO	0x090	/* command completion ring */
#define IPU_REG_CPLQ_BASE_HI	0x094
#define IPU_REG_CPLQ_SIZE	0x098
#define IPU_REG_SCQ_BASE_LO	0x0a0	/* stream completion ring */
#define IPU_REG_SCQ_BASE_HI	0x0a4
#define IPU_REG_SCQ_SIZE	0x0a8
#define IPU_REG_CMDQ_HEAD	0x0b0	/* RO: next command entry the device reads */
#define IPU_REG_CPLQ_TAIL	0x0b4	/* RO: next completion slot the device writes */
#define IPU_REG_SCQ_TAIL	0x0b8	/* RO: next stream completion slot */

/* doorbells (write the new index; reads return the last value written) */
#define IPU_REG_CMDQ_TAIL	0x100	/* producer index of the command ring */
#define IPU_REG_CPLQ_HEAD	0x104	/* consumer index of the completion ring */
#define IPU_REG_SCQ_HEAD	0x108	/* consumer index of the stream cpl ring */
#define IPU_REG_STREAM_DB(s)	(0x1000 + 4 * (s)) /* producer index of stream s */

/* counters: 64 bits each (LO at the offset, HI at +4), read-only */
#define IPU_REG_CNT_PROGRAMS	0x200	/* programs run to completion */
#define IPU_REG_CNT_CYCLES	0x208	/* modelled cycles, all kinds */
#define IPU_REG_CNT_COMPUTE_CYC	0x210	/* modelled compute cycles */
#define IPU_REG_CNT_EXCH_BYTES	0x218	/* bytes moved by exchanges */
#define IPU_REG_CNT_STREAM_IN	0x220	/* bytes DMA'd host to device by streams */
#define IPU_REG_CNT_STREAM_OUT	0x228	/* bytes DMA'd device to host by streams */
#define IPU_REG_CNT_STALLS	0x230	/* stream transfers that had to wait */
#define IPU_REG_CNT_STALL_NS	0x238	/* wall time programs waited for streams */
#define IPU_REG_CNT_ERRORS	0x240	/* errors latched (see ERR_CODE) */
#define IPU_REG_CNT_COMMANDS	0x248	/* commands completed */
#define IPU_REG_CNT_DESCS	0x250	/* stream descriptors completed */
#define IPU_REG_CNT_RESETS	0x258	/* device resets (survives resets) */
#define IPU_REG_CNT_LINK_OUT	0x260	/* bytes sent over IPU-Links (IPU_CAP_LINK) */
#define IPU_REG_CNT_LINK_IN	0x268	/* bytes received over IPU-Links */
#define IPU_REG_CNT_LINK_CYC	0x270	/* modelled cycles of the link sends:
					 * 2000 + bytes / 240 each */
#define IPU_REG_CNT_FIRST	IPU_REG_CNT_PROGRAMS
#define IPU_REG_CNT_LAST	IPU_REG_CNT_LINK_CYC

/*
 * Liveness and fault injection (IPU_CAP_PROGRESS, IPU_CAP_FAULT).  PROGRESS
 * advances by one for every program step the device executes; it is never
 * cleared, so a watchdog only compares two readings.  The FAULT registers
 * make the device misbehave on purpose on the Nth matching command it
 * fetches; they survive device resets (a reset is what recovers from the
 * fault), and writing 0 to FAULT_CTRL disarms.
 */
#define IPU_REG_FAULT_CTRL	0x300	/* RW: IPU_FAULT_* kind | flags; a write arms */
#define IPU_REG_FAULT_COUNT	0x304	/* RW: fire on the Nth matching command, >= 1 */
#define IPU_REG_FAULT_ARG	0x308	/* RW: IPU_FAULT_SLOW: ms per program step */
#define IPU_REG_FAULT_FIRED	0x30c	/* RO: faults fired (survives resets) */
#define IPU_REG_PROGRESS_LO	0x310	/* RO: program steps executed, 64 bits */
#define IPU_REG_PROGRESS_HI	0x314

/* IPU_REG_FAULT_CTRL: kind in bits 0..3, flags, opcode filter in 16..23 */
#define IPU_FAULT_KIND_MASK	0xfu
#define IPU_FAULT_NONE		0u	/* disarmed */
#define IPU_FAULT_HANG		1u	/* stop fetching, executing, completing */
#define IPU_FAULT_DROP_IRQ	2u	/* post the completion, raise no interrupt */
#define IPU_FAULT_CORRUPT_CPL	3u	/* post the completion with its tag inverted */
#define IPU_FAULT_DMA		4u	/* the command's first data DMA fails */
#define IPU_FAULT_SLOW		5u	/* each program step takes FAULT_ARG ms more */
#define IPU_FAULT_KIND_MAX	IPU_FAULT_SLOW
#define IPU_FAULT_REPEAT	(1u << 8)	/* every Nth, not only the first */
#define IPU_FAULT_MATCH_OPCODE	(1u << 9)	/* count only commands of OPCODE */
#define IPU_FAULT_OPCODE_SHIFT	16
#define IPU_FAULT_OPCODE_MASK	(0xffu << IPU_FAULT_OPCODE_SHIFT)
#define IPU_FAULT_CTRL_VALID	(IPU_FAULT_KIND_MASK | IPU_FAULT_REPEAT | \
				 IPU_FAULT_MATCH_OPCODE | IPU_FAULT_OPCODE_MASK)
#define IPU_FAULT_MAX_SLOW_MS	1000u

/* IPU_REG_CAPS bits */
#define IPU_CAP_MSIX		(1u << 0)	/* MSI-X with IPU_NUM_VECTORS vectors */
#define IPU_CAP_INTX		(1u << 1)	/* INTx fallback */
#define IPU_CAP_SG		(1u << 2)	/* scatter-gather lists */
#define IPU_CAP_DIRECT		(1u << 3)	/* IPU_F_DIRECT buffers */
#define IPU_CAP_READ_TENSOR	(1u << 4)	/* IPU_CMD_READ_TENSOR */
#define IPU_CAP_PROGRESS	(1u << 5)	/* IPU_REG_PROGRESS_LO/HI */
#define IPU_CAP_FAULT		(1u << 6)	/* IPU_REG_FAULT_* */
#define IPU_CAP_LINK		(1u << 7)	/* a member of an ipu-link:
						 * IPU_CMD_LINK_STREAM, IPU_REG_LINK_* */

/* IPU_REG_CONTROL bits */
#define IPU_CTRL_ENABLE		(1u << 0)	/* 1: validate rings, start; 1->0: reset */
#define IPU_CTRL_RESET		(1u << 1)	/* write 1: device reset (reads 0) */

/* IPU_REG_STATUS bits */
#define IPU_STS_READY		(1u << 0)	/* enabled, rings valid, accepting work */
#define IPU_STS_BUSY		(1u << 1)	/* executing a command */
#define IPU_STS_ERROR		(1u << 2)	/* ERR_CODE holds an error */
#define IPU_STS_RESETTING	(1u << 3)	/* reset in progress: wait for 0 */
#define IPU_STS_STALLED		(1u << 4)	/* program waits on STALL_STREAM */
#define IPU_STS_FATAL		(1u << 5)	/* a ring is unusable: reset needed */
#define IPU_STS_LOADED		(1u << 6)	/* an executable is loaded */

/* interrupt causes (IPU_REG_INT_CAUSE / INT_MASK) and their MSI-X vectors */
#define IPU_INT_CPL		(1u << 0)	/* command completion posted */
#define IPU_INT_SCPL		(1u << 1)	/* stream completion posted */
#define IPU_INT_ERROR		(1u << 2)	/* an error was latched */
#define IPU_INT_ALL		(IPU_INT_CPL | IPU_INT_SCPL | IPU_INT_ERROR)
#define IPU_VEC_CPL		0
#define IPU_VEC_SCPL		1
#define IPU_VEC_ERROR		2
#define IPU_NUM_VECTORS		3

/* limits */
#define IPU_MAX_STREAMS		1024u
#define IPU_MAX_RING_ENTRIES	4096u
#define IPU_MIN_RING_ENTRIES	2u
#define IPU_MAX_SG_ENTRIES	65536u
#define IPU_MAX_IMAGE_BYTES	(1u << 30)
#define IPU_RING_ALIGN		64u
#define IPU_SG_ALIGN		16u

/* ------------------------------------------------------------------ */
/* Commands: 64-byte entries of the command ring                        */

enum ipu_opcode {
	IPU_CMD_NOP = 0x00,		/* completes with IPU_ST_OK */
	IPU_CMD_LOAD_EXE = 0x01,	/* addr/sg_count/len: executable image */
	IPU_CMD_WRITE_TENSOR = 0x02,	/* arg0 tile, arg1 offset, addr/sg/len: data */
	IPU_CMD_READ_TENSOR = 0x03,	/* arg0 tile, arg1 offset, addr/sg/len: buffer */
	IPU_CMD_RUN = 0x04,		/* arg0 program index */
	IPU_CMD_ABORT = 0x05,		/* stop everything submitted before it */
	IPU_CMD_RESET_ENGINE = 0x06,	/* abort + unload executable, clear tiles */
	IPU_CMD_CREATE_STREAM = 0x07,	/* arg0 stream, addr ring base, len entries */
	IPU_CMD_DELETE_STREAM = 0x08,	/* arg0 stream */
	IPU_CMD_LINK_STREAM = 0x09,	/* arg0 own D2H stream, arg1 peer link-index
					 * << 16 | peer H2D stream, len bytes */
	IPU_CMD_MAX = 0x09
};

/* flags of commands and of stream descriptors */
#define IPU_F_DIRECT		(1u << 0)	/* addr is the buffer itself (contiguous,
						 * len bytes), not an SG list; sg_count 0 */

struct ipu_cmd {		/* 64 bytes */
	uint8_t opcode;		/* enum ipu_opcode */
	uint8_t flags;		/* IPU_F_DIRECT for LOAD/WRITE/READ; else 0 */
	uint16_t rsvd0;		/* must be 0 */
	uint32_t arg0;		/* see enum ipu_opcode */
	uint64_t tag;		/* echoed in the completion */
	uint64_t addr;		/* SG list, buffer (IPU_F_DIRECT) or ring base */
	uint32_t len;		/* bytes (LOAD/WRITE/READ) or ring entries */
	uint32_t sg_count;	/* SG entries at addr (0 with IPU_F_DIRECT) */
	uint32_t arg1;		/* see enum ipu_opcode */
	uint32_t rsvd1[7];	/* must be 0 */
};

/* One scatter-gather entry; lists are IPU_SG_ALIGN aligned arrays. */
struct ipu_sg {			/* 16 bytes */
	uint64_t addr;		/* guest physical (bus) address */
	uint32_t len;		/* bytes, >= 1 */
	uint32_t rsvd;		/* must be 0 */
};

/* Stream ring entry. */
struct ipu_stream_desc {	/* 32 bytes */
	uint64_t addr;		/* SG list, or the buffer with IPU_F_DIRECT */
	uint32_t len;		/* buffer bytes (see pci.md: must match the stream) */
	uint32_t sg_count;	/* SG entries at addr (0 with IPU_F_DIRECT) */
	uint64_t tag;		/* echoed in the stream completion */
	uint32_t flags;		/* IPU_F_DIRECT or 0 */
	uint32_t rsvd;		/* must be 0 */
};

/* Completion entry of the command completion ring and of the stream
 * completion ring. */
struct ipu_cpl {		/* 32 bytes */
	uint64_t tag;		/* the command's or descriptor's tag */
	uint64_t detail;	/* per status: guest address, cycles, ... */
	uint32_t result;	/* per command; stream: bytes transferred */
	uint16_t head;		/* consumer index of the source ring after
				 * the entry was consumed */
	uint16_t queue;		/* stream completions: stream id; else 0 */
	uint16_t status;	/* enum ipu_status */
	uint8_t opcode;		/* command opcode; stream: enum ipux_stream_dir
				 * (0 H2D, 1 D2H, 0xff unknown) */
	uint8_t flags;		/* IPU_CPL_PHASE */
	uint32_t rsvd;		/* 0 */
};

#define IPU_CPL_PHASE		(1u << 0)	/* 1 on the first pass, flips per wrap */

/* Completion status codes; also the values of IPU_REG_ERR_CODE. */
enum ipu_status {
	IPU_ST_OK = 0,
	IPU_ST_INVALID_OPCODE = 1,	/* unknown opcode */
	IPU_ST_INVALID_FIELD = 2,	/* reserved field or unknown flag set */
	IPU_ST_DMA_FAULT = 3,		/* a guest address could not be accessed */
	IPU_ST_BAD_SG = 4,		/* SG list malformed (see detail) */
	IPU_ST_TOO_LARGE = 5,		/* length over a device limit */
	IPU_ST_EXE_INVALID = 6,		/* executable refused: result = ipux error */
	IPU_ST_NOT_LOADED = 7,		/* no executable loaded */
	IPU_ST_BAD_PROGRAM = 8,		/* program index out of range */
	IPU_ST_ABORTED = 9,		/* cancelled by ABORT/RESET_ENGINE */
	IPU_ST_STREAM_ERROR = 10,	/* a stream transfer of the program failed */
	IPU_ST_FAULT = 11,		/* a codelet faulted; result = engine error */
	IPU_ST_RANGE = 12,		/* tile/offset/len outside tile memory */
	IPU_ST_BAD_STREAM = 13,		/* stream id out of range, ring missing/exists */
	IPU_ST_RING_CONFIG = 14,	/* ring base/size invalid */
	IPU_ST_RING_INDEX = 15,		/* doorbell index out of range */
	IPU_ST_LENGTH = 16,		/* descriptor len does not fit the stream */
	IPU_ST_NO_MEMORY = 17,		/* the device could not allocate */
	IPU_ST_ENGINE = 18,		/* other engine error: result = ipu_err */
	IPU_ST_LINK = 19,		/* a linked stream refused: result = IPU_LKE_* */
	IPU_ST_COUNT
};

/* IPU_REG_ERR_DETAIL for IPU_ST_BAD_SG (also the completion's result) */
enum ipu_sg_error {
	IPU_SGE_ALIGN = 1,		/* list address not IPU_SG_ALIGN aligned */
	IPU_SGE_COUNT = 2,		/* 0 or more than IPU_MAX_SG_ENTRIES */
	IPU_SGE_ZERO_LEN = 3,		/* an entry of length 0 */
	IPU_SGE_RESERVED = 4,		/* an entry's rsvd is not 0 */
	IPU_SGE_OVERFLOW = 5,		/* addr + len wraps */
	IPU_SGE_SUM = 6,		/* entries do not add up to len */
	IPU_SGE_DIRECT = 7,		/* IPU_F_DIRECT with sg_count != 0 */
};

/* IPU_REG_ERR_DETAIL for IPU_ST_RING_CONFIG / IPU_ST_RING_INDEX: which ring */
enum ipu_ring_id {
	IPU_RING_CMDQ = 1,
	IPU_RING_CPLQ = 2,
	IPU_RING_SCQ = 3,
	IPU_RING_STREAM = 4,		/* ERR_ADDR_LO holds the stream id */
};

/* IPU_REG_ERR_DETAIL for IPU_ST_LINK (also the completion's result) */
enum ipu_link_error {
	IPU_LKE_NO_LINK = 1,		/* the device is on no ipu-link */
	IPU_LKE_PEER = 2,		/* no other member has the peer's link-index */
	IPU_LKE_STREAM = 3,		/* not a D2H stream of the loaded executable,
					 * or the peer's stream is out of range */
	IPU_LKE_SIZE = 4,		/* len (or the peer's transfer) differs from
					 * the stream's buffer size */
	IPU_LKE_BUSY = 5,		/* the peer's stream receives another link,
					 * or the link holds IPU_LINK_MAX_PAIRS */
};
#define IPU_LINK_MAX_PAIRS	64u	/* linked stream pairs on one link */
#define IPU_LINK_MAX_MEMBERS	16u	/* link-index 0..15 */

#ifndef __cplusplus
_Static_assert(sizeof(struct ipu_cmd) == 64, "ipu_cmd");
_Static_assert(sizeof(struct ipu_sg) == 16, "ipu_sg");
_Static_assert(sizeof(struct ipu_stream_desc) == 32, "ipu_stream_desc");
_Static_assert(sizeof(struct ipu_cpl) == 32, "ipu_cpl");
#endif

#endif /* IPU_REGS_H */
