// SPDX-License-Identifier: GPL-2.0
/*
 * The handoff itself, RFC patches 10-12. A submitter that blocks in an inline
 * issue claims an idle io-wq worker from sched_submit_work(), gives it the
 * ring lock, its io_uring task context and the rest of its io_uring_enter(),
 * and becomes the worker. The worker takes the identity and returns to
 * userspace as the submitter; the submitter finishes the request as io-wq.
 */
#include "handoff.h"
#include "handoff_trace.h"

#include <linux/percpu_counter.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>

/* idle workers to keep around as handoff targets */
#define IOUH_SPARES	2

/* one handoff, from the blocked submitter to the worker resuming for it */
struct iouh_handoff {
	struct task_struct		*src;
	/* task refs of the ring context's requests, moved off @src */
	unsigned int			refs;
	struct io_uring_enter_state	enter;
	struct iouh_stats		stats;
};

/* have a worker ready to take over; forks one for next time if none is */
bool iouh_have_spare(struct io_uring_task *tctx)
{
	return tctx->io_wq && io_wq_handoff_spare(tctx->io_wq, IOUH_SPARES);
}

/*
 * The ring context goes with the identity: completions, their task refs and
 * queued task_work, the registered ring fds, the io-wq. @src can't run the
 * task_work anymore, it is on its way to becoming a worker.
 */
static void iouh_move_tctx(struct iouh_handoff *ho, struct task_struct *src,
			   struct task_struct *dst)
{
	struct io_uring_task *tctx = src->io_uring;

	dst->io_uring = tctx;
	io_uring_tctx_moved(tctx, dst);
	raw_spin_lock(&tctx->task_ref_lock);
	ho->refs = percpu_counter_sum(&tctx->inflight);
	refcount_add(ho->refs, &dst->usage);
	WRITE_ONCE(tctx->task, dst);
	raw_spin_unlock(&tctx->task_ref_lock);
	src->io_uring = NULL;
	if (task_work_cancel(src, &tctx->task_work) &&
	    task_work_add(dst, &tctx->task_work, TWA_SIGNAL))
		WARN_ON_ONCE(1);
}

/*
 * On the promoted worker: become the submitter, then finish its syscall.
 * What we return is what userspace gets from io_uring_enter().
 */
static long iouh_resume(void *data)
{
	struct iouh_handoff *ho = data;
	struct task_struct *src = ho->src;
	long ret;

	trace_io_uring_handoff_resume(src, ho->enter.to_submit);
	if (WARN_ON_ONCE(iouh_finish(src, &ho->stats)))
		force_sig(SIGKILL);
	/* the inline issue ran with signals blocked, the identity's mask */
	sigprocmask(SIG_SETMASK, &current->saved_sigmask, NULL);
	put_task_struct_many(src, ho->refs);
	io_wq_handoff_finished(src);

	ret = io_uring_enter_resume(&ho->enter);
	kfree(ho);
	return ret;
}

static void iouh_blocked_in_place(enum iouh_counter why)
{
	atomic64_inc(&iouh_counters[why]);
	trace_io_uring_handoff_block(iouh_counter_names[why]);
}

/*
 * The scheduler's hook, current is about to sleep in an inline issue. Only
 * the first sleep of an issue counts: clearing the flag also tells
 * iouh_issue_end() it slept. Must not sleep itself.
 */
void iouh_sleeping(struct task_struct *tsk)
{
	struct io_uring_task *tctx = tsk->io_uring;
	struct io_wq_handoff claim = {
		.src = tsk, .compatible = iouh_compatible, .fn = iouh_resume,
	};
	struct io_ring_ctx *ctx;
	struct iouh_handoff *ho;
	struct task_struct *dst;

	tsk->flags &= ~PF_IO_HANDOFF;
	if (!tctx->enter)
		return iouh_blocked_in_place(IOUH_FB_WORKER);
	ctx = tctx->enter->file->private_data;
	/* the issue path is in a section that needs the ring lock held */
	if (ctx->submit_lock_depth)
		return iouh_blocked_in_place(IOUH_FB_LOCK);
	if (!iouh_prepare(tsk))
		return iouh_blocked_in_place(IOUH_FB_PREPARE);
	ho = kmalloc_obj(*ho, GFP_NOWAIT | __GFP_NOWARN);
	if (!ho)
		return iouh_blocked_in_place(IOUH_FB_WORKER);
	ho->src = tsk;
	ho->enter = *tctx->enter;
	claim.data = ho;

	/* don't let the woken worker preempt us before we've committed */
	preempt_disable();
	dst = io_wq_handoff_claim(tctx->io_wq, &claim);
	if (!dst) {
		preempt_enable();
		kfree(ho);
		return iouh_blocked_in_place(IOUH_FB_WORKER);
	}
	trace_io_uring_handoff(ctx, tsk, dst);
	iouh_stats_take(&ho->stats);
	mutex_unlock(&ctx->uring_lock);
	iouh_move_tctx(ho, tsk, dst);
	io_wq_handoff_commit(dst);
	preempt_enable();
	atomic64_inc(&iouh_counters[IOUH_HANDOFFS]);
}
