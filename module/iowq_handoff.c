// SPDX-License-Identifier: GPL-2.0
/*
 * The io-wq side of a handoff: the worker that takes the identity over.
 *
 *  reserve	at issue, the submitter holds an idle io-wq worker of its own
 *		that can take its identity, or the request takes the stock
 *		punt (io-wq forks a worker as for any punt, none of its own)
 *  compatible	io-wq asks, for each idle worker, under its workers_lock
 *  sleeping	the scheduler's hook at the submitter's first sleep: the
 *		commit wakes the held worker, which takes the identity
 *		(identity.c) and finishes the io_uring_enter()
 *
 * The kernel's half of each is io_wq_handoff_reserve() (io_uring/io-wq.c),
 * io_uring_handoff_commit() and _take() (io_uring/handoff_hooks.c).
 */
#include <linux/cred.h>
#include <linux/iocontext.h>
#include <linux/sched/signal.h>
#include <linux/security.h>

#include "handoff.h"
#include "handoff_trace.h"

/* the task_spec_*() bits of ->atomic_flags, compared in one go */
#define IOUH_PFA_SPEC	(BIT(PFA_SPEC_SSB_DISABLE) | BIT(PFA_SPEC_SSB_NOEXEC) | \
			 BIT(PFA_SPEC_SSB_FORCE_DISABLE) | \
			 BIT(PFA_SPEC_IB_DISABLE) | BIT(PFA_SPEC_IB_FORCE_DISABLE))

static int iouh_ioprio(struct task_struct *tsk)
{
	return tsk->io_context ? tsk->io_context->ioprio : 0;
}

/*
 * At the reservation, under io-wq's workers_lock (a raw spinlock, no
 * sleeping): can @dst take over the identity of @src? What doesn't move must
 * be equal; what moves must not land on state @dst can't give up. Returns
 * IOUH_MOVABLE (0, io_wq_handoff_reserve() holds @dst) or the refusal.
 */
static int iouh_worker_compatible(struct task_struct *src,
				  struct task_struct *dst)
{
	bool same_ns;

	if (dst->flags & PF_EXITING || dst->ptrace)
		return IOUH_REFUSE_WORKER_EXITING;
	/* bound to @dst's task_struct, it would go with the identity */
	if (iouh_identity_bound_refusal(dst) != IOUH_MOVABLE)
		return IOUH_REFUSE_WORKER_BOUND;
#ifdef CONFIG_GENERIC_ENTRY
	if (test_task_syscall_work(dst, SYSCALL_USER_DISPATCH))
		return IOUH_REFUSE_WORKER_BOUND;
#endif
	if (!same_thread_group(src, dst) || dst->mm != src->mm ||
	    dst->files != src->files || dst->fs != src->fs ||
	    dst->nsproxy != src->nsproxy)
		return IOUH_REFUSE_WORKER_CONTEXT;
	/* the identity must not gain no_new_privs */
	if (task_no_new_privs(dst) && !task_no_new_privs(src))
		return IOUH_REFUSE_WORKER_NNP;
#ifdef CONFIG_SECCOMP
	/* seccomp filters are per-thread, the identity must not escape them */
	if (dst->seccomp.mode != src->seccomp.mode ||
	    dst->seccomp.filter != src->seccomp.filter)
		return IOUH_REFUSE_WORKER_SECCOMP;
#endif
#ifdef CONFIG_SYSVIPC
	/* the SEM_UNDO list moves, see iouh_take_undo_list() */
	if (dst->sysvsem.undo_list &&
	    dst->sysvsem.undo_list != src->sysvsem.undo_list)
		return IOUH_REFUSE_WORKER_SEM_UNDO;
#endif
#ifdef CONFIG_NUMA
	if (dst->mempolicy)
		return IOUH_REFUSE_WORKER_MEMPOLICY;
#endif
	/* prctl speculation controls (the TIF ones are the arch's) */
	if ((READ_ONCE(src->atomic_flags) ^ READ_ONCE(dst->atomic_flags)) &
	    IOUH_PFA_SPEC)
		return IOUH_REFUSE_WORKER_SPEC_CTRL;
	/* the io_context is shared with the worker's creator, doesn't move */
	if (src->io_context != dst->io_context &&
	    iouh_ioprio(src) != iouh_ioprio(dst))
		return IOUH_REFUSE_WORKER_IOPRIO;
	/* the creds move, the user namespace must not change with them */
	rcu_read_lock();
	same_ns = __task_cred(dst) == __task_cred(src) ||
		  __task_cred(dst)->user_ns == __task_cred(src)->user_ns;
	rcu_read_unlock();
	if (!same_ns)
		return IOUH_REFUSE_WORKER_USER_NS;
#ifdef CONFIG_SECURITY
	/*
	 * The LSM task blobs stay with the task_struct; the hook compares
	 * what an LSM keeps per thread. Under workers_lock: neither side
	 * can change it, each task writes its own (src is current, dst
	 * sleeps idle).
	 */
	if (security_task_handoff_check(src, dst))
		return IOUH_REFUSE_WORKER_LSM;
#endif
#ifdef CONFIG_BPF_SYSCALL
	/* BPF task storage: its elements point back at their task_struct */
	if (rcu_access_pointer(src->bpf_storage) ||
	    rcu_access_pointer(dst->bpf_storage))
		return IOUH_REFUSE_WORKER_LSM;
#endif
	if (!iouh_arch_compatible(src, dst))
		return IOUH_REFUSE_WORKER_ARCH;
	return IOUH_MOVABLE;
}

/*
 * Issue time: hold an idle worker that can take current's identity until the
 * issue ends or hands off. 0: held; -EBUSY: no idle worker; else the
 * refusal of the last idle worker tried, counted in refusals. Either way
 * the request takes the stock punt.
 */
int iouh_worker_reserve(struct io_uring_task *tctx)
{
	int why = io_wq_handoff_reserve(tctx, iouh_worker_compatible);

	if (why > 0)
		iouh_refusal_count(why);
	return why;
}

/*
 * The scheduler's hook, current is about to sleep for the first time in an
 * inline issue. Hands the identity to the held worker, unless the issue is in
 * a section that needs the ring lock, went direct since the policy let it
 * in, or the identity got bound to this task_struct meanwhile: then it
 * sleeps in place. Must not sleep itself.
 */
void iouh_issue_sleeping(struct task_struct *tsk)
{
	struct io_kiocb *req = tsk->io_uring->handoff.req;

	iouh_rate_slept(req);
	if (req->ctx->submit_lock_depth)
		return iouh_count_fail(req, IOUH_BLOCKED_LOCK);
	if (iouh_rw_direct(req))
		return iouh_count_fail(req, IOUH_BLOCKED_REQUEST);
	if (!iouh_identity_prepare(tsk))
		return iouh_count_fail(req, IOUH_BLOCKED_TASK);
	trace_io_uring_handoff(req, tsk);
	iouh_count(IOUH_HANDOFFS);
	io_uring_handoff_commit(tsk);
}
