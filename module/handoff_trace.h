/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM io_uring_handoff

#if !defined(_IOUH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IOUH_TRACE_H

#include <linux/io_uring_types.h>
#include <linux/tracepoint.h>

/* a blockable request did not get the inline issue, and why */
TRACE_EVENT(io_uring_handoff_fail,
	    TP_PROTO(struct io_kiocb *req, const char *reason),
	    TP_ARGS(req, reason),
	    TP_STRUCT__entry(__field(void *, ctx)
			     __field(void *, req)
			     __field(u64, user_data)
			     __field(u8, opcode)
			     __string(reason, reason)),
	    TP_fast_assign(__entry->ctx = req->ctx;
			   __entry->req = req;
			   __entry->user_data = req->cqe.user_data;
			   __entry->opcode = req->opcode;
			   __assign_str(reason);),
	    TP_printk("ring %p, request %p, user_data 0x%llx, opcode %u, %s",
		      __entry->ctx, __entry->req, __entry->user_data,
		      __entry->opcode, __get_str(reason))
);

/* an inline blocking issue finished, whether it slept, and its result */
TRACE_EVENT(io_uring_handoff_inline,
	    TP_PROTO(struct io_kiocb *req, bool blocked, int res),
	    TP_ARGS(req, blocked, res),
	    TP_STRUCT__entry(__field(void *, ctx)
			     __field(void *, req)
			     __field(u64, user_data)
			     __field(u8, opcode)
			     __field(bool, blocked)
			     __field(int, res)),
	    TP_fast_assign(__entry->ctx = req->ctx;
			   __entry->req = req;
			   __entry->user_data = req->cqe.user_data;
			   __entry->opcode = req->opcode;
			   __entry->blocked = blocked;
			   __entry->res = res;),
	    TP_printk("ring %p, request %p, user_data 0x%llx, opcode %u, %s, res %d",
		      __entry->ctx, __entry->req, __entry->user_data,
		      __entry->opcode, __entry->blocked ? "blocked" : "inline",
		      __entry->res)
);

/* a blocked submitter handed its identity to an idle io-wq worker */
TRACE_EVENT(io_uring_handoff,
	    TP_PROTO(void *ctx, struct task_struct *src, struct task_struct *dst),
	    TP_ARGS(ctx, src, dst),
	    TP_STRUCT__entry(__field(void *, ctx)
			     __field(pid_t, src_pid)
			     __field(pid_t, dst_pid)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->src_pid = task_pid_nr(src);
			   __entry->dst_pid = task_pid_nr(dst);),
	    TP_printk("ring %p, identity %d handed to worker %d",
		      __entry->ctx, __entry->src_pid, __entry->dst_pid)
);

/* an inline issue slept without a handoff: lock, prepare or worker */
TRACE_EVENT(io_uring_handoff_block,
	    TP_PROTO(const char *reason),
	    TP_ARGS(reason),
	    TP_STRUCT__entry(__string(reason, reason)),
	    TP_fast_assign(__assign_str(reason);),
	    TP_printk("blocked in place, %s", __get_str(reason))
);

/* the promoted worker takes the identity and continues the submission */
TRACE_EVENT(io_uring_handoff_resume,
	    TP_PROTO(struct task_struct *src, unsigned int to_submit),
	    TP_ARGS(src, to_submit),
	    TP_STRUCT__entry(__field(pid_t, src_pid)
			     __field(unsigned int, to_submit)),
	    TP_fast_assign(__entry->src_pid = task_pid_nr(src);
			   __entry->to_submit = to_submit;),
	    TP_printk("identity %d resumed, to_submit %u",
		      __entry->src_pid, __entry->to_submit)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE handoff_trace
#include <trace/define_trace.h>
