/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * ipu.h - the userspace ABI of ipu.ko, the driver of the emulated IPU, a
 * DRM compute accelerator (drivers/accel style): /dev/accel/accelN.
 *
 * Control goes through the driver's DRM ioctls on /dev/accel/accelN
 * (DRM_IOCTL_IPU_*, dispatched by drm_ioctl(); the DRM core's own ioctls
 * work there too: VERSION, GEM_CLOSE, PRIME_HANDLE_TO_FD/FD_TO_HANDLE);
 * buffer objects are GEM shmem objects (DRM_IOCTL_IPU_BO_CREATE, mmap at
 * the offset DRM_IOCTL_IPU_BO_INFO gives), shareable as dma-bufs (PRIME);
 * stream buffers move through io_uring (IORING_OP_URING_CMD on the same
 * fd).  Documentation/uapi/ipu.md describes every call and the rules by
 * which this ABI grows.
 *
 * Rules every struct here follows:
 *  - fixed size, naturally aligned, no implicit padding: every hole is an
 *    explicit pad/reserved field that must be zero (else -EINVAL);
 *  - flags fields reject unknown bits with -EINVAL;
 *  - structs grow only at the end.  The size is part of the ioctl number
 *    (_IOC_SIZE); drm_ioctl() matches commands by number only, copies the
 *    caller's bytes in, zero-fills what an older caller did not pass
 *    (up to the kernel's size), ignores bytes a newer caller passes beyond
 *    the kernel's struct, and copies the caller's size back out (also
 *    when the call fails).
 */
#ifndef _UAPI_LINUX_IPU_H
#define _UAPI_LINUX_IPU_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define IPU_UAPI_VERSION	1

/*
 * DRM_IOCTL_BASE and DRM_COMMAND_BASE of <drm/drm.h>, spelled here so that
 * this header stands alone (the driver checks they are the same).
 */
#define IPU_DRM_IOCTL_BASE	'd'
#define IPU_DRM_COMMAND_BASE	0x40
#define IPU_DRM_IOWR(nr, type)	_IOWR(IPU_DRM_IOCTL_BASE, IPU_DRM_COMMAND_BASE + (nr), type)

/* the DRM driver's name (DRM_IOCTL_VERSION, drmGetVersion()) */
#define IPU_DRM_DRIVER_NAME	"ipu"

/* ---------------------------------------------------------------- INFO */

/* struct ipu_info_args.state; sysfs "state" shows the name */
#define IPU_DEV_STATE_IDLE		0	/* no executable loaded */
#define IPU_DEV_STATE_READY		1	/* executable loaded */
#define IPU_DEV_STATE_BUSY		2	/* a program runs or is queued */
#define IPU_DEV_STATE_ERROR		3	/* device failed; needs a reset */
#define IPU_DEV_STATE_RESETTING	4	/* a reset is in progress */

/* capability bits: struct ipu_info_args.caps (device CAPS register) */
#define IPU_INFO_CAP_MSIX		0x1u
#define IPU_INFO_CAP_INTX		0x2u
#define IPU_INFO_CAP_SG			0x4u
#define IPU_INFO_CAP_DIRECT		0x8u
#define IPU_INFO_CAP_READ_TENSOR	0x10u
#define IPU_INFO_CAP_LINK		0x80u	/* on an ipu-link: GROUP_ATTACH, LINK_STREAM */
/* driver capability bits: struct ipu_info_args.driver_caps */
#define IPU_DRV_CAP_URING_CMD		0x1u	/* stream cmd_ops */
#define IPU_DRV_CAP_FIXED_BUFS		0x2u	/* IORING_URING_CMD_FIXED buffers */
#define IPU_DRV_CAP_NETLINK		0x4u	/* genl family "ipu" */
#define IPU_DRV_CAP_GEM			0x8u	/* buffer objects, PRIME, IPU_URING_F_BO */

struct ipu_info_args {
	__u32 flags;		/* in: 0 */
	__u32 pad;		/* in: 0 */
	/* out: */
	__u32 if_version;	/* device interface version, major << 16 | minor */
	__u32 hw_version;	/* IPU generation (2 = ipu2, 21 = ipu21) */
	__u64 serial;
	__u32 tiles;
	__u32 tile_mem;		/* bytes per tile */
	__u32 max_streams;
	__u32 caps;		/* IPU_INFO_CAP_* */
	__u32 driver_caps;	/* IPU_DRV_CAP_* */
	__u32 state;		/* IPU_DEV_STATE_* */
	__s32 owner_pid;	/* attached process (tgid), 0 if none */
	__u32 minor;		/* N of /dev/accel/accelN */
	__u32 pci_domain;
	__u8 pci_bus;
	__u8 pci_dev;
	__u8 pci_fn;
	__u8 pad2;
	__u32 num_programs;	/* of the loaded executable, 0 if none */
	__u32 num_streams;	/* of the loaded executable */
	__u32 max_image;	/* bytes */
	__u32 stream_ring;	/* descriptors in flight per stream, at most */
	__u32 link_index;	/* its index on its ipu-link, 0xffffffff on none */
	__u32 group_id;		/* the device group it is in, 0 if none */
	__u32 group_ipu;	/* its IPU index in that group */
	__u32 group_size;	/* members of that group, 0 if none */
};

/* ------------------------------------------------------- ATTACH/DETACH */

/*
 * Take exclusive use of the device for this file: -EBUSY if another file
 * holds it.  Detach (or closing the file) releases it.
 */
struct ipu_attach_args {
	__u32 flags;		/* in: 0 */
	__u32 pad;		/* in: 0 */
};

/* ----------------------------------------------------- LOAD_EXECUTABLE */

#define IPU_LOAD_F_BO		0x1u	/* image: a buffer object's handle, from its start */

struct ipu_load_args {
	__u64 image;		/* in: user pointer to the IPUX image (IPU_LOAD_F_BO: handle) */
	__u32 size;		/* in: image bytes, 1..info.max_image */
	__u32 flags;		/* in: IPU_LOAD_F_* */
	/* out: */
	__u32 num_programs;
	__u32 num_streams;
	__u32 tiles_used;
	__s32 verifier_error;	/* IPUX_E_* when the device refused the image (-EINVAL) */
	__u32 dev_status;	/* device status code (ipu_status of pci.md), 0 = ok */
	__u32 pad;		/* out: 0 */
};

/* -------------------------------------------------------- WRITE_TENSOR */

#define IPU_TENSOR_F_READ	0x1u	/* read tile memory into data instead */

struct ipu_tensor_args {
	__u64 data;		/* in: user pointer */
	__u32 size;		/* in: bytes */
	__u32 tile;		/* in */
	__u32 offset;		/* in: byte offset in the tile's memory */
	__u32 flags;		/* in: IPU_TENSOR_F_* */
	__u32 dev_status;	/* out: device status code, 0 = ok */
	__u32 pad;		/* in: 0 */
};

/* ----------------------------------------------------------- RUN/WAIT */

struct ipu_run_args {
	__u32 program;		/* in: program index */
	__u32 flags;		/* in: 0 */
	__u64 seq;		/* out: sequence number, > 0, for DRM_IOCTL_IPU_WAIT */
};

/* struct ipu_wait_args.status */
#define IPU_WAIT_COMPLETED	0	/* the run finished; see dev_status */
#define IPU_WAIT_TIMEDOUT	1	/* not finished yet (it keeps running) */
#define IPU_WAIT_ABORTED	2	/* cancelled: abort, reset, watchdog, close */

struct ipu_wait_args {
	__u64 seq;		/* in: from DRM_IOCTL_IPU_RUN */
	__s64 timeout_ns;	/* in: < 0 forever, 0 poll */
	__u32 flags;		/* in: 0 */
	__u32 status;		/* out: IPU_WAIT_* */
	__u32 dev_status;	/* out: device status code of the run, 0 = ok */
	__u32 result;		/* out: device result (engine error code, ...) */
	__u64 cycles;		/* out: modelled cycles of the run */
};

/* ---------------------------------------------------------------- RESET */

#define IPU_RESET_ABORT		0	/* cancel runs and queued buffers, keep executable */
#define IPU_RESET_ENGINE	1	/* abort and unload the executable */
#define IPU_RESET_DEVICE	2	/* full device reset (PCI function re-initialised) */

struct ipu_reset_args {
	__u32 mode;		/* in: IPU_RESET_* */
	__u32 flags;		/* in: 0 */
};

/* ------------------------------------------------------------- COUNTERS */

struct ipu_counters_args {
	__u32 flags;		/* in: 0 */
	__u32 pad;		/* in: 0 */
	/* out, device counters (reset by a device reset, except resets): */
	__u64 programs;
	__u64 cycles;
	__u64 compute_cycles;
	__u64 exchange_bytes;
	__u64 stream_in_bytes;
	__u64 stream_out_bytes;
	__u64 stalls;
	__u64 stall_ns;
	__u64 errors;
	__u64 commands;
	__u64 descriptors;
	__u64 resets;
	/* out, driver counters (since the module was loaded): */
	__u64 stream_cmds;	/* uring_cmd stream buffers completed */
	__u64 stream_bytes;	/* bytes those moved */
	__u64 programs_run;	/* RUNs completed */
	__u64 drv_resets;	/* device resets the driver did */
	__u64 drv_errors;	/* error interrupts */
	__u64 pinned_pages;	/* user pages pinned right now */
	__u64 gem_objects;	/* buffer objects alive (created or imported) */
	__u64 gem_pages;	/* their pages pinned for the device right now */
	/* out, device counters of IPU-Links (reset by a device reset): */
	__u64 link_out_bytes;	/* sent to peers */
	__u64 link_in_bytes;	/* received from peers */
	__u64 link_cycles;	/* modelled cycles of the sends, 2000 + bytes / 240 each */
};

/* ----------------------------------------------------------- GET_EVENTS */

#define IPU_EVENT_ERROR		1	/* device latched an error: code, detail, addr */
#define IPU_EVENT_RESET		2	/* device reset: code = reason (IPU_RESET_REASON_*) */
#define IPU_EVENT_ATTACH	3	/* pid attached */
#define IPU_EVENT_DETACH	4	/* pid detached */

#define IPU_RESET_REASON_USER		1
#define IPU_RESET_REASON_WATCHDOG	2
#define IPU_RESET_REASON_FATAL		3
#define IPU_RESET_REASON_CLOSE		4
#define IPU_RESET_REASON_PCI		5	/* PCI core function reset: FLR, AER */

struct ipu_event {
	__u64 id;		/* increasing per device, from 1 */
	__u64 time_ns;		/* CLOCK_MONOTONIC */
	__u32 type;		/* IPU_EVENT_* */
	__s32 pid;
	__u32 code;
	__u32 detail;
	__u64 addr;		/* error address, or run seq */
};

/*
 * Returns events with id > after, oldest first (the driver keeps the last
 * 256 per device).
 */
struct ipu_events_args {
	__u64 events;		/* in: user pointer to struct ipu_event[max] */
	__u64 after;		/* in: last id seen, 0 for all kept */
	__u32 max;		/* in: room at events, <= 256 */
	__u32 flags;		/* in: 0 */
	__u32 count;		/* out: events written */
	__u32 pad;		/* in: 0 */
	__u64 last_id;		/* out: newest id (0 if none) */
};

/* ----------------------------------------------------------- STREAM_INFO */

#define IPU_STREAM_H2D		0	/* host to device: send buffers */
#define IPU_STREAM_D2H		1	/* device to host: receive buffers */

struct ipu_stream_info_args {
	__u32 stream;		/* in: < num_streams of the loaded executable */
	__u32 flags;		/* in: 0 */
	__u32 dir;		/* out: IPU_STREAM_* */
	__u32 buffer_bytes;	/* out: size every buffer of the stream has */
};

/* ------------------------------------------------------ BO_CREATE/INFO */

/*
 * A GEM shmem buffer object of this device: its pages are the memory the
 * device reads and writes (an executable to LOAD, stream buffers with
 * IPU_URING_F_BO), shared with other processes or devices as a dma-buf
 * (DRM_IOCTL_PRIME_HANDLE_TO_FD) and mapped by mmap() of the accel fd at
 * BO_INFO's mmap_offset or of the dma-buf fd at 0.  DRM_IOCTL_GEM_CLOSE
 * drops the handle; the object lives while a handle, a dma-buf, a mapping
 * or a queued stream buffer refers to it.
 */
struct ipu_bo_create_args {
	__u64 size;		/* in: bytes, 1..1 GiB, rounded up to pages */
	__u32 flags;		/* in: 0 */
	__u32 handle;		/* out */
};

struct ipu_bo_info_args {
	__u32 handle;		/* in */
	__u32 flags;		/* in: 0 */
	__u64 size;		/* out: bytes */
	__u64 mmap_offset;	/* out: for mmap() of the accel fd */
};

/* ------------------------------------------- GROUP_ATTACH/LINK_STREAM */

/*
 * A device group: devices on one ipu-link (info.caps IPU_INFO_CAP_LINK)
 * acquired as one.  GROUP_ATTACH, on the first member's fd, attaches every
 * member to the fd given for it (all or none: -EBUSY if one is owned by
 * another file or in a group).  From then on the group is released as one
 * (DETACH or the close of any member's fd detaches every member), and a
 * device reset (IPU_RESET_DEVICE) of any member resets every member.
 */
/* fds[k]: the accel fd of IPU k of the group; fds[0] is the fd called on */
struct ipu_group_attach_args {
	__u64 fds;		/* in: user pointer to __s32 fds[count] */
	__u32 count;		/* in: 2..16 */
	__u32 flags;		/* in: 0 */
	__u32 group_id;		/* out: > 0 */
	__u32 pad;		/* in: 0 */
};

/*
 * Join this member's device-to-host stream to a host-to-device stream of
 * another member of its group: from then on the stream's StreamCopy moves
 * its buffer device to device, through no host memory; neither end takes
 * stream buffers.  Set up again after every LOAD_EXECUTABLE (a load or a
 * reset drops the pairs a device sends on).  -ENOLINK when the device
 * refused it (dev_detail: IPU_LINK_E_*).
 */
#define IPU_LINK_E_NO_LINK	1	/* the device is on no ipu-link */
#define IPU_LINK_E_PEER		2	/* the peer is not on the same link */
#define IPU_LINK_E_STREAM	3	/* not a D2H stream, or the peer's is out of range */
#define IPU_LINK_E_SIZE		4	/* the sizes of the two ends differ */
#define IPU_LINK_E_BUSY		5	/* the peer's stream already receives a link */

struct ipu_link_stream_args {
	__u32 stream;		/* in: this device's device-to-host stream */
	__u32 peer_ipu;		/* in: the peer's IPU index in the group */
	__u32 peer_stream;	/* in: the peer's host-to-device stream */
	__u32 flags;		/* in: 0 */
	__u32 dev_status;	/* out: device status code, 0 = ok */
	__u32 dev_detail;	/* out: IPU_LINK_E_* with a refusal */
	__u32 bytes;		/* out: bytes a transfer (the stream's buffer size) */
	__u32 pad;		/* in: 0 */
};

/* --------------------------------------------------------------- ioctls */

#define DRM_IPU_INFO		0x00
#define DRM_IPU_ATTACH		0x01
#define DRM_IPU_DETACH		0x02
#define DRM_IPU_LOAD_EXECUTABLE	0x03
#define DRM_IPU_WRITE_TENSOR	0x04
#define DRM_IPU_RUN		0x05
#define DRM_IPU_WAIT		0x06
#define DRM_IPU_RESET		0x07
#define DRM_IPU_COUNTERS	0x08
#define DRM_IPU_GET_EVENTS	0x09
#define DRM_IPU_STREAM_INFO	0x0a
#define DRM_IPU_BO_CREATE	0x0b
#define DRM_IPU_BO_INFO		0x0c
#define DRM_IPU_GROUP_ATTACH	0x0d
#define DRM_IPU_LINK_STREAM	0x0e

#define DRM_IOCTL_IPU_INFO	IPU_DRM_IOWR(DRM_IPU_INFO, struct ipu_info_args)
#define DRM_IOCTL_IPU_ATTACH	IPU_DRM_IOWR(DRM_IPU_ATTACH, struct ipu_attach_args)
#define DRM_IOCTL_IPU_DETACH	IPU_DRM_IOWR(DRM_IPU_DETACH, struct ipu_attach_args)
#define DRM_IOCTL_IPU_LOAD_EXECUTABLE IPU_DRM_IOWR(DRM_IPU_LOAD_EXECUTABLE, struct ipu_load_args)
#define DRM_IOCTL_IPU_WRITE_TENSOR IPU_DRM_IOWR(DRM_IPU_WRITE_TENSOR, struct ipu_tensor_args)
#define DRM_IOCTL_IPU_RUN	IPU_DRM_IOWR(DRM_IPU_RUN, struct ipu_run_args)
#define DRM_IOCTL_IPU_WAIT	IPU_DRM_IOWR(DRM_IPU_WAIT, struct ipu_wait_args)
#define DRM_IOCTL_IPU_RESET	IPU_DRM_IOWR(DRM_IPU_RESET, struct ipu_reset_args)
#define DRM_IOCTL_IPU_COUNTERS	IPU_DRM_IOWR(DRM_IPU_COUNTERS, struct ipu_counters_args)
#define DRM_IOCTL_IPU_GET_EVENTS IPU_DRM_IOWR(DRM_IPU_GET_EVENTS, struct ipu_events_args)
#define DRM_IOCTL_IPU_STREAM_INFO IPU_DRM_IOWR(DRM_IPU_STREAM_INFO, struct ipu_stream_info_args)
#define DRM_IOCTL_IPU_BO_CREATE	IPU_DRM_IOWR(DRM_IPU_BO_CREATE, struct ipu_bo_create_args)
#define DRM_IOCTL_IPU_BO_INFO	IPU_DRM_IOWR(DRM_IPU_BO_INFO, struct ipu_bo_info_args)
#define DRM_IOCTL_IPU_GROUP_ATTACH IPU_DRM_IOWR(DRM_IPU_GROUP_ATTACH, struct ipu_group_attach_args)
#define DRM_IOCTL_IPU_LINK_STREAM IPU_DRM_IOWR(DRM_IPU_LINK_STREAM, struct ipu_link_stream_args)

/* ------------------------------------------- io_uring stream commands */

/*
 * Stream buffers: IORING_OP_URING_CMD on the /dev/accel/accelN fd, on a ring set up
 * with IORING_SETUP_SQE128 (-EINVAL otherwise; CQE32 is optional).
 *
 *   sqe->opcode   IORING_OP_URING_CMD
 *   sqe->fd       the /dev/accel/accelN fd (attached by this process)
 *   sqe->cmd_op   IPU_URING_CMD_SEND (H2D stream) or IPU_URING_CMD_RECV (D2H)
 *   sqe->uring_cmd_flags  IORING_URING_CMD_FIXED to use a registered buffer:
 *                 sqe->buf_index names it, addr lies inside it
 *   sqe->cmd      struct ipu_uring_cmd (32 of the 80 bytes; the rest 0)
 *
 * With IPU_URING_F_BO the buffer is part of a buffer object of this fd
 * (created, or imported from a dma-buf): handle names it, addr is the
 * byte offset in it; the device moves the data to or from the object's
 * pages with no copy and nothing is pinned per request.
 *
 * The CQE: res = bytes moved, or -errno (-ECANCELED: aborted, reset or
 * closed; -EIO: the device failed the transfer; -EINVAL: bad arguments;
 * -EAGAIN: the stream's ring is full; Documentation/uapi/ipu.md lists all).
 * With CQE32, big_cqe[0] = the tag and big_cqe[1] = 0.
 */
#define IPU_URING_CMD_SEND	0x1001
#define IPU_URING_CMD_RECV	0x1002

#define IPU_URING_F_BO		0x1u	/* the buffer lies in buffer object `handle` */

struct ipu_uring_cmd {
	__u64 addr;		/* user address of the buffer (IPU_URING_F_BO: offset) */
	__u32 len;		/* bytes: the stream's buffer size (D2H: at least) */
	__u32 stream;		/* stream id */
	__u64 tag;		/* echoed in big_cqe[0] (CQE32) */
	__u32 flags;		/* IPU_URING_F_* */
	__u32 handle;		/* IPU_URING_F_BO: the buffer object, else 0 */
};

/* ---------------------------------------------- generic netlink "ipu" */

#define IPU_GENL_NAME		"ipu"
#define IPU_GENL_VERSION	1
#define IPU_GENL_MCGRP_EVENTS	"events"

enum ipu_genl_cmd {
	IPU_GENL_CMD_UNSPEC,
	IPU_GENL_CMD_EVENT,	/* multicast: one device event */
	__IPU_GENL_CMD_MAX
};

enum ipu_genl_attr {
	IPU_GENL_A_UNSPEC,
	IPU_GENL_A_MINOR,	/* u32: N of /dev/accel/accelN */
	IPU_GENL_A_TYPE,	/* u32: IPU_EVENT_* */
	IPU_GENL_A_PID,		/* u32 */
	IPU_GENL_A_CODE,	/* u32 */
	IPU_GENL_A_DETAIL,	/* u32 */
	IPU_GENL_A_ADDR,	/* u64 */
	IPU_GENL_A_ID,		/* u64: event id */
	IPU_GENL_A_PAD,
	__IPU_GENL_A_MAX
};

#define IPU_GENL_A_MAX		(__IPU_GENL_A_MAX - 1)

#endif /* _UAPI_LINUX_IPU_H */
