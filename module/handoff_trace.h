/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM io_uring_handoff

#if !defined(_IOUH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IOUH_TRACE_H

#include <linux/io_uring_types.h>
#include <linux/tracepoint.h>

/*
 * A blockable request was refused the inline issue (fallback_*: it takes the
 * io-wq punt), or slept in it without a handoff (blocked_*), and why.
 */
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

/* the submitter sleeps in an inline issue and hands its identity off */
TRACE_EVENT(io_uring_handoff,
	    TP_PROTO(struct io_kiocb *req, struct task_struct *src),
	    TP_ARGS(req, src),
	    TP_STRUCT__entry(__field(void *, ctx)
			     __field(void *, req)
			     __field(u64, user_data)
			     __field(u8, opcode)
			     __field(pid_t, src_pid)),
	    TP_fast_assign(__entry->ctx = req->ctx;
			   __entry->req = req;
			   __entry->user_data = req->cqe.user_data;
			   __entry->opcode = req->opcode;
			   __entry->src_pid = task_pid_nr(src);),
	    TP_printk("ring %p, request %p, user_data 0x%llx, opcode %u, identity %d handed off",
		      __entry->ctx, __entry->req, __entry->user_data,
		      __entry->opcode, __entry->src_pid)
);

/* the worker that was held takes the identity over, then the syscall */
TRACE_EVENT(io_uring_handoff_take,
	    TP_PROTO(struct task_struct *src),
	    TP_ARGS(src),
	    TP_STRUCT__entry(__field(pid_t, src_pid)
			     __field(pid_t, dst_pid)),
	    TP_fast_assign(__entry->src_pid = task_pid_nr(src);
			   __entry->dst_pid = task_pid_nr(current);),
	    TP_printk("worker %d takes identity %d",
		      __entry->dst_pid, __entry->src_pid)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE handoff_trace
#include <trace/define_trace.h>
