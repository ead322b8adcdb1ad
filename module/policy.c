// SPDX-License-Identifier: GPL-2.0
/*
 * Which requests are issued inline in blocking mode instead of being punted
 * to io-wq upfront, and what happens when such an issue blocks.
 *
 * A request the kernel would punt (REQ_F_FORCE_ASYNC set by its prep) is
 * issued inline if its opcode can cope with blocking there. The task carries
 * PF_IO_HANDOFF for the issue; if it sleeps, the scheduler calls
 * iouh_sleeping(), which hands the identity to an idle worker if it can.
 */
#include "handoff.h"
#include "handoff_trace.h"

#include <linux/errno.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>

/*
 * The blockable opcodes of the RFC's opdef whose prep forces the io-wq punt.
 * Reads and writes are blockable too but not force-async, they keep their
 * nonblocking issue; uring_cmd deliberately not, drivers bind state to the
 * submitting task.
 */
static const bool iouh_blockable[IORING_OP_LAST] = {
	[IORING_OP_FSYNC]		= true,
	[IORING_OP_SYNC_FILE_RANGE]	= true,
	[IORING_OP_FALLOCATE]		= true,
	[IORING_OP_OPENAT]		= true,
	[IORING_OP_OPENAT2]		= true,
	[IORING_OP_STATX]		= true,
	[IORING_OP_FADVISE]		= true,
	[IORING_OP_MADVISE]		= true,
	[IORING_OP_SPLICE]		= true,
	[IORING_OP_TEE]			= true,
	[IORING_OP_RENAMEAT]		= true,
	[IORING_OP_UNLINKAT]		= true,
	[IORING_OP_MKDIRAT]		= true,
	[IORING_OP_SYMLINKAT]		= true,
	[IORING_OP_LINKAT]		= true,
	[IORING_OP_FSETXATTR]		= true,
	[IORING_OP_SETXATTR]		= true,
	[IORING_OP_FGETXATTR]		= true,
	[IORING_OP_GETXATTR]		= true,
	[IORING_OP_FTRUNCATE]		= true,
};

/*
 * Rings whose issue runs elsewhere or can't resume mid-batch, and rings bound
 * to their submitter's task_struct (ctx->submitter_task).
 */
#define IOUH_RING_REFUSED	(IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL | \
				 IORING_SETUP_SQ_REWIND | \
				 IORING_SETUP_SINGLE_ISSUER | \
				 IORING_SETUP_DEFER_TASKRUN)

static bool iouh_refuse(struct io_kiocb *req, enum iouh_counter why)
{
	atomic64_inc(&iouh_counters[why]);
	trace_io_uring_handoff_fail(req, iouh_counter_names[why]);
	return false;
}

/* a pollable file keeps the nonblocking issue and poll retry path */
static bool iouh_file_polls(struct io_kiocb *req)
{
	return (req->flags & REQ_F_CAN_POLL) ||
	       (req->file && file_can_poll(req->file));
}

/* submit time, under uring_lock: inline instead of an io-wq punt? */
bool iouh_may_inline(struct io_kiocb *req)
{
	if (!iouh_enabled() || req->opcode >= IORING_OP_LAST ||
	    !iouh_blockable[req->opcode])
		return false;
	/* userspace asked for the offload, or for -EAGAIN semantics */
	if (req->flags & (REQ_F_ASYNC_USER | REQ_F_NOWAIT))
		return false;
	if (req->ctx->flags & IOUH_RING_REFUSED)
		return iouh_refuse(req, IOUH_FB_RING);
	if (iouh_file_polls(req))
		return iouh_refuse(req, IOUH_FB_POLL);
	if (!iouh_task_allowed(current))
		return iouh_refuse(req, IOUH_FB_TASK);
	/*
	 * Without an idle worker a blocking issue stays in place. Still
	 * better than the punt for the many that don't, fork one for next time.
	 */
	if (!iouh_have_spare(current->io_uring))
		atomic64_inc(&iouh_counters[IOUH_FB_SPARE]);
	return true;
}

/*
 * Issue time: the request runs without IO_URING_F_NONBLOCK from here. An
 * interruptible sleep in it must not see the submitter's signals: the op
 * would complete with -ERESTARTSYS or -EINTR where io-wq, which runs with
 * signals blocked, gives the real result. So block all but SIGKILL/SIGSTOP
 * for the issue; saved_sigmask is free until io_uring_enter() waits.
 */
bool iouh_issue_begin(struct io_kiocb *req)
{
	sigset_t all;

	/* would interrupt the issue right away, io-wq handles it as stock */
	if (task_sigpending(current) || test_thread_flag(TIF_NOTIFY_SIGNAL) ||
	    test_restore_sigmask())
		return iouh_refuse(req, IOUH_FB_SIGNAL);
	siginitsetinv(&all, sigmask(SIGKILL) | sigmask(SIGSTOP));
	sigprocmask(SIG_SETMASK, &all, &current->saved_sigmask);
	current->flags |= PF_IO_HANDOFF;
	return true;
}

static bool iouh_wants_restart(int ret)
{
	return ret == -ERESTARTSYS || ret == -ERESTARTNOINTR ||
	       ret == -ERESTARTNOHAND || ret == -ERESTART_RESTARTBLOCK;
}

/*
 * PF_IO_HANDOFF still set means the issue never slept. No ->io_uring means
 * it slept and handed off: the signal mask went with the identity.
 */
int iouh_issue_end(struct io_kiocb *req, int ret)
{
	bool blocked = !(current->flags & PF_IO_HANDOFF);

	current->flags &= ~PF_IO_HANDOFF;
	if (current->io_uring)
		sigprocmask(SIG_SETMASK, &current->saved_sigmask, NULL);
	if (!blocked)
		atomic64_inc(&iouh_counters[IOUH_INLINE_DONE]);
	trace_io_uring_handoff_inline(req, blocked, ret);
	/* a fatal signal or a task_work notification interrupted the sleep */
	if (iouh_wants_restart(ret))
		return -EAGAIN;
	return ret;
}
