/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipu_trace.h - tracepoints of ipu.ko (events/ipu/ in tracefs): commands
 * to the device and their completions, stream buffers handed to the device
 * and returned, DMA mappings of user buffers, device resets.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ipu

#if !defined(IPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define IPU_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(ipu_cmd_submit,
	    TP_PROTO(int minor, u32 id, u8 opcode, u64 seq),
	    TP_ARGS(minor, id, opcode, seq),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, id) __field(u8, opcode)
			     __field(u64, seq)),
	    TP_fast_assign(__entry->minor = minor; __entry->id = id; __entry->opcode = opcode;
			   __entry->seq = seq;),
	    TP_printk("ipu%d id=%u opcode=%#x seq=%llu", __entry->minor, __entry->id,
		      __entry->opcode, __entry->seq)
);

TRACE_EVENT(ipu_cmd_done,
	    TP_PROTO(int minor, u32 id, u16 status, u32 result, u64 detail),
	    TP_ARGS(minor, id, status, result, detail),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, id) __field(u16, status)
			     __field(u32, result) __field(u64, detail)),
	    TP_fast_assign(__entry->minor = minor; __entry->id = id; __entry->status = status;
			   __entry->result = result; __entry->detail = detail;),
	    TP_printk("ipu%d id=%u status=%u result=%u detail=%llu", __entry->minor, __entry->id,
		      __entry->status, __entry->result, __entry->detail)
);

TRACE_EVENT(ipu_stream_submit,
	    TP_PROTO(int minor, u32 stream, u32 slot, u32 len, u32 sg_count, bool fixed),
	    TP_ARGS(minor, stream, slot, len, sg_count, fixed),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, stream) __field(u32, slot)
			     __field(u32, len) __field(u32, sg_count) __field(bool, fixed)),
	    TP_fast_assign(__entry->minor = minor; __entry->stream = stream; __entry->slot = slot;
			   __entry->len = len; __entry->sg_count = sg_count;
			   __entry->fixed = fixed;),
	    TP_printk("ipu%d stream=%u slot=%u len=%u sg=%u %s", __entry->minor, __entry->stream,
		      __entry->slot, __entry->len, __entry->sg_count,
		      __entry->fixed ? "registered" : "pinned")
);

TRACE_EVENT(ipu_stream_done,
	    TP_PROTO(int minor, u32 stream, u32 slot, int res, u32 dev_status),
	    TP_ARGS(minor, stream, slot, res, dev_status),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, stream) __field(u32, slot)
			     __field(int, res) __field(u32, dev_status)),
	    TP_fast_assign(__entry->minor = minor; __entry->stream = stream; __entry->slot = slot;
			   __entry->res = res; __entry->dev_status = dev_status;),
	    TP_printk("ipu%d stream=%u slot=%u res=%d dev_status=%u", __entry->minor,
		      __entry->stream, __entry->slot, __entry->res, __entry->dev_status)
);

TRACE_EVENT(ipu_dma_map,
	    TP_PROTO(int minor, u32 len, u32 nents, bool fixed),
	    TP_ARGS(minor, len, nents, fixed),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, len) __field(u32, nents)
			     __field(bool, fixed)),
	    TP_fast_assign(__entry->minor = minor; __entry->len = len; __entry->nents = nents;
			   __entry->fixed = fixed;),
	    TP_printk("ipu%d len=%u nents=%u %s", __entry->minor, __entry->len, __entry->nents,
		      __entry->fixed ? "registered" : "pinned")
);

TRACE_EVENT(ipu_reset,
	    TP_PROTO(int minor, u32 reason, int ret),
	    TP_ARGS(minor, reason, ret),
	    TP_STRUCT__entry(__field(int, minor) __field(u32, reason) __field(int, ret)),
	    TP_fast_assign(__entry->minor = minor; __entry->reason = reason; __entry->ret = ret;),
	    TP_printk("ipu%d reason=%u ret=%d", __entry->minor, __entry->reason, __entry->ret)
);

#endif /* IPU_TRACE_H */

/* out of tree: the header is found beside this file */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ipu_trace
#include <trace/define_trace.h>
