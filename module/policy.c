// SPDX-License-Identifier: GPL-2.0
/*
 * Which requests are issued inline in blocking mode instead of being punted
 * to io-wq upfront, and what happens when such an issue sleeps.
 *
 * A request the kernel would punt (REQ_F_FORCE_ASYNC set by its prep) is
 * issued inline if its opcode copes with blocking there, its ring and file
 * allow it, and an idle io-wq worker is held that can take the submitter's
 * identity: a request that could not be handed off must not go inline. The
 * kernel blocks the submitter's signals and sets PF_IO_HANDOFF for the issue
 * (io_uring/handoff_hooks.c); if it sleeps, the scheduler calls
 * iouh_sleeping(), which hands the identity to the held worker.
 */
#include "handoff.h"
#include "handoff_trace.h"

#include <linux/poll.h>
#include <linux/sched/signal.h>

/*
 * The blockable opcodes of the RFC's opdef whose prep forces the io-wq punt.
 * Not here: reads and writes (not force-async, they keep their nonblocking
 * issue); SPLICE and TEE (one side is always a pipe, a pollable file keeps
 * its punt); uring_cmd (drivers bind state to the submitting task).
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
	iouh_count(why);
	trace_io_uring_handoff_fail(req, iouh_counter_names[why]);
	return false;
}

/* a pollable file keeps the nonblocking issue and poll retry path */
static bool iouh_file_polls(struct io_kiocb *req)
{
	return (req->flags & REQ_F_CAN_POLL) ||
	       (req->file && file_can_poll(req->file));
}

/*
 * io_uring_handoff_begin(), under uring_lock: issue @req inline in blocking
 * mode? Only with a worker held that can take the identity over.
 */
bool iouh_issue_begin(struct io_kiocb *req)
{
	struct io_uring_task *tctx = current->io_uring;

	if (req->opcode >= IORING_OP_LAST || !iouh_blockable[req->opcode])
		return false;
	/* only an io_uring_enter() can be finished by the worker */
	if ((req->ctx->flags & IOUH_RING_REFUSED) || !tctx->handoff.file)
		return iouh_refuse(req, IOUH_FB_RING);
	if (iouh_file_polls(req))
		return iouh_refuse(req, IOUH_FB_POLL);
	/* would interrupt the issue right away */
	if (task_sigpending(current))
		return iouh_refuse(req, IOUH_FB_SIGNAL);
	if (!iouh_identity_allowed(current))
		return iouh_refuse(req, IOUH_FB_TASK);
	if (!io_wq_handoff_reserve(tctx, iouh_identity_compatible)) {
		/* one for next time, this one goes to io-wq */
		io_wq_handoff_spare(tctx);
		return iouh_refuse(req, IOUH_FB_WORKER);
	}
	iouh_count(IOUH_INLINE_ISSUED);
	return true;
}

static void iouh_blocked(struct io_kiocb *req, enum iouh_counter why)
{
	iouh_count(why);
	trace_io_uring_handoff_fail(req, iouh_counter_names[why]);
}

/*
 * The scheduler's hook, current is about to sleep for the first time in an
 * inline issue. Hands the identity to the held worker, unless the issue is in
 * a section that needs the ring lock or the identity got bound to this
 * task_struct meanwhile: then it sleeps in place. Must not sleep itself.
 */
void iouh_sleeping(struct task_struct *tsk)
{
	struct io_kiocb *req = tsk->io_uring->handoff.req;

	if (req->ctx->submit_lock_depth)
		return iouh_blocked(req, IOUH_BLOCKED_LOCK);
	if (!iouh_identity_prepare(tsk))
		return iouh_blocked(req, IOUH_BLOCKED_TASK);
	trace_io_uring_handoff(req, tsk);
	iouh_count(IOUH_HANDOFFS);
	io_uring_handoff_commit(tsk);
}
