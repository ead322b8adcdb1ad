// SPDX-License-Identifier: GPL-2.0
/*
 * Moving the user visible identity of a task that sleeps in an inline issue
 * to an idle io-wq worker of the same process, the seeds'
 * kernel/thread_handoff.c. In the order a move goes through:
 *
 *  allowed	at issue, on the submitter: may its identity move at all
 *  compatible	at the reservation of a worker: can that worker take it
 *		(iowq_handoff.c, with the rest of the worker side)
 *  prepare	at the first sleep, on the submitter: re-check, sync registers
 *  take	on the worker: the identity moves over
 *
 * The worker returns to userspace as the submitter; the submitter keeps its
 * task_struct and kernel stack and finishes the request as an io-wq worker.
 * From the commit until take exchanges the tid, the tid still names the
 * submitter: what happens to it meanwhile (signals, a tracer, a CPU timer,
 * sched attributes) is taken along, not lost.
 */
#include <linux/audit.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/futex.h>
#include <linux/posix-timers.h>
#include <linux/ptrace.h>
#include <linux/rseq.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sysfs.h>
#include <linux/task_io_accounting_ops.h>
#include <linux/uprobes.h>
#include <uapi/linux/sched/types.h>

#include "handoff.h"
#include "handoff_trace.h"

static unsigned int debug_window_ms;
module_param(debug_window_ms, uint, 0644);
MODULE_PARM_DESC(debug_window_ms,
		 "Test hook: a worker waits this long before it takes an identity (default: 0)");

/*
 * Per-task flags that move: prctl state (machine-check kill policy) and the
 * thread's history a user sees (/proc/<tid>/stat, process accounting's
 * AFORK and ASU, execve()'s RLIMIT_NPROC check). Not PF_MEMALLOC_NOIO,
 * kernel code sets that too.
 */
#define IOUH_PF_FLAGS	(PF_MCE_PROCESS | PF_MCE_EARLY | PF_FORKNOEXEC | \
			 PF_SUPERPRIV | PF_NPROC_EXCEEDED)

/*
 * The refusals, a line each: why the identity can't move. The arch's last;
 * counted per cpu, summed by iouh_refusals_show().
 */
static const char * const iouh_refusal_names[IOUH_NR_REFUSALS] = {
	/* exiting, a kernel thread or an io worker: not a user identity */
	[IOUH_REFUSE_EXITING]		= "exiting",
	/* traced or a tracer: the ptrace links hold the task_struct */
	[IOUH_REFUSE_PTRACE]		= "ptrace",
	/* per-task perf events are attached to the task_struct */
	[IOUH_REFUSE_PERF]		= "perf",
	/* owner of a PI futex: its waiters boost this task_struct */
	[IOUH_REFUSE_PI_FUTEX]		= "pi_futex",
	/* a core scheduling cookie is the task_struct's */
	[IOUH_REFUSE_CORE_SCHED]	= "core_sched",
	/* kcov collects for this task_struct */
	[IOUH_REFUSE_KCOV]		= "kcov",
	/* pending uretprobes keep return addresses in the task's utask */
	[IOUH_REFUSE_URETPROBE]		= "uretprobe",
	/* a vfork() child: its parent waits on this task_struct */
	[IOUH_REFUSE_VFORK]		= "vfork",
	/* RT or deadline at issue: only the fair class (one set later moves) */
	[IOUH_REFUSE_RT]		= "rt",
	/* armed per-thread CPU timers sit on the task_struct */
	[IOUH_REFUSE_CPU_TIMERS]	= "cpu_timers",
	/* an audit context: the syscall's record would never be emitted */
	[IOUH_REFUSE_AUDIT]		= "audit",
	/* syscall user dispatch: the selector and range are the task's */
	[IOUH_REFUSE_SYSCALL_DISPATCH]	= "syscall_dispatch",
	/* a task mempolicy: __mpol_dup() isn't exported to modules */
	[IOUH_REFUSE_MEMPOLICY]		= "mempolicy",
	/*
	 * The worker side, iouh_worker_compatible(): an idle worker that can't
	 * take the identity. Exiting or traced itself:
	 */
	[IOUH_REFUSE_WORKER_EXITING]	= "worker_exiting",
	/* state bound to its task_struct would go with the identity (perf, ...) */
	[IOUH_REFUSE_WORKER_BOUND]	= "worker_bound",
	/* another group, mm, files, fs or namespaces (an unshare() since) */
	[IOUH_REFUSE_WORKER_CONTEXT]	= "worker_context",
	/* no_new_privs the identity doesn't have would stick to it */
	[IOUH_REFUSE_WORKER_NNP]	= "worker_nnp",
	/* seccomp filters are per thread, the identity must keep its own */
	[IOUH_REFUSE_WORKER_SECCOMP]	= "worker_seccomp",
	/* a SEM_UNDO list of its own (the identity's moves) */
	[IOUH_REFUSE_WORKER_SEM_UNDO]	= "worker_sem_undo",
	/* a task mempolicy of its own would stay with the identity */
	[IOUH_REFUSE_WORKER_MEMPOLICY]	= "worker_mempolicy",
	/* other prctl speculation controls */
	[IOUH_REFUSE_WORKER_SPEC_CTRL]	= "worker_spec_ctrl",
	/* another I/O priority (the io_context doesn't move) */
	[IOUH_REFUSE_WORKER_IOPRIO]	= "worker_ioprio",
	/* creds of another user namespace */
	[IOUH_REFUSE_WORKER_USER_NS]	= "worker_user_ns",
	/* an LSM's per-thread state differs (AppArmor's onexec, a hat, ...) */
	[IOUH_REFUSE_WORKER_LSM]	= "worker_lsm",
	/* register state the arch can't move onto it, iouh_arch_compatible() */
	[IOUH_REFUSE_WORKER_ARCH]	= "worker_arch",
	/* a 32-bit task: the compat syscall frame isn't moved */
	[IOUH_REFUSE_COMPAT]		= "compat",
	/* non-null segment selectors: the TLS and LDT would have to move */
	[IOUH_REFUSE_SEGMENTS]		= "segments",
	/* an I/O permission bitmap or iopl hangs off the task */
	[IOUH_REFUSE_IO_PERM]		= "io_perm",
	/* a per-thread shadow stack would have to move along */
	[IOUH_REFUSE_SHADOW_STACK]	= "shadow_stack",
	/* an FPU state larger than the default one (x86 AMX) */
	[IOUH_REFUSE_FPU_STATE]		= "fpu_state",
	/* arm64 SME in use: ZA, ZT0 and streaming mode would have to move */
	[IOUH_REFUSE_SME]		= "sme",
};

DEFINE_PER_CPU(u64, iouh_refusals[IOUH_NR_REFUSALS]);

/* the refusals file: "reason count", one line each, IOUH_MOVABLE not */
ssize_t iouh_refusals_show(char *buf)
{
	ssize_t len = 0;
	int i, cpu;

	for (i = IOUH_MOVABLE + 1; i < IOUH_NR_REFUSALS; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu(iouh_refusals[i], cpu);
		len += sysfs_emit_at(buf, len, "%s %llu\n",
				     iouh_refusal_names[i], sum);
	}
	return len;
}

/* per-thread CPU timers sit on the task; armed mid-issue they're moved */
static bool iouh_cpu_timers_armed(struct task_struct *tsk)
{
#ifdef CONFIG_POSIX_TIMERS
	int i;

	for (i = 0; i < CPUCLOCK_MAX; i++)
		if (timerqueue_getnext(&tsk->posix_cputimers.bases[i].tqhead))
			return true;
#endif
	return false;
}

/* the checks of iouh_identity_refusal(), in the table's order */
static enum iouh_refusal iouh_identity_check(struct task_struct *tsk)
{
	enum iouh_refusal why;

	if (tsk->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER) ||
	    tsk->signal->flags & SIGNAL_GROUP_EXIT)
		return IOUH_REFUSE_EXITING;
	/* one attached later moves */
	if (tsk->ptrace || !list_empty(&tsk->ptraced))
		return IOUH_REFUSE_PTRACE;
	why = iouh_identity_bound_refusal(tsk);
	if (why != IOUH_MOVABLE)
		return why;
	if (rt_or_dl_task(tsk))
		return IOUH_REFUSE_RT;
	if (iouh_cpu_timers_armed(tsk))
		return IOUH_REFUSE_CPU_TIMERS;
	if (!audit_dummy_context())
		return IOUH_REFUSE_AUDIT;
#ifdef CONFIG_GENERIC_ENTRY
	if (test_syscall_work(SYSCALL_USER_DISPATCH))
		return IOUH_REFUSE_SYSCALL_DISPATCH;
#endif
#ifdef CONFIG_NUMA
	if (tsk->mempolicy)
		return IOUH_REFUSE_MEMPOLICY;
#endif
	return iouh_arch_refusal(tsk);
}

/* at issue, on current: can its identity be handed off at all, counted */
enum iouh_refusal iouh_identity_refusal(struct task_struct *tsk)
{
	enum iouh_refusal why;

	if (WARN_ON_ONCE(tsk != current))
		return IOUH_REFUSE_EXITING;
	why = iouh_identity_check(tsk);
	iouh_refusal_count(why);
	return why;
}

#ifdef CONFIG_FUTEX
/*
 * The PI futex fence, set on the source at its sleep, the last check before
 * the commit. FUTEX_LOCK_PI finds a futex's owner by the tid in its word and
 * attaches the PI state to that task_struct (attach_to_pi_owner()); once the
 * tid moves the state would sit on the demoted task, and the identity's
 * FUTEX_UNLOCK_PI would fail with -EINVAL (E7). FUTEX_STATE_EXITING makes a
 * locker wait on futex.exit_mutex and look the tid up again, as for an
 * owner on its way out. Checked and set under pi_lock, where the locker
 * reads it, so no PI state attaches after the check. The worker holds that
 * mutex from its wakeup to past the exchange (iouh_identity_take()); a
 * locker that comes before just retries. False: the task owns a PI state
 * already, it sleeps in place.
 */
static bool iouh_pi_futex_fence(struct task_struct *tsk)
{
	unsigned long flags;
	bool fenced;

	raw_spin_lock_irqsave(&tsk->pi_lock, flags);
	fenced = list_empty(&tsk->futex.pi_state_list) &&
		 tsk->futex.state == FUTEX_STATE_OK;
	if (fenced)
		tsk->futex.state = FUTEX_STATE_EXITING;
	raw_spin_unlock_irqrestore(&tsk->pi_lock, flags);
	return fenced;
}

/*
 * The fence's end, on the worker about to take an identity. A demoted task
 * keeps its fence: a locker that looked the old tid up before the exchange
 * may reach its pi_lock any time within a grace period, and must not attach
 * there. It is reservable only after that grace period has passed
 * (io_wq_handoff_loop()), so by its next take the fence has served.
 */
static void iouh_pi_futex_unfence(struct task_struct *tsk)
{
	raw_spin_lock_irq(&tsk->pi_lock);
	if (tsk->futex.state == FUTEX_STATE_EXITING &&
	    !(tsk->flags & PF_EXITING))
		tsk->futex.state = FUTEX_STATE_OK;
	raw_spin_unlock_irq(&tsk->pi_lock);
}

/* the worker's hold over the exchange, see iouh_pi_futex_fence() */
static void iouh_pi_futex_lock(struct task_struct *src)
{
	mutex_lock(&src->futex.exit_mutex);
}

static void iouh_pi_futex_unlock(struct task_struct *src)
{
	mutex_unlock(&src->futex.exit_mutex);
}
#else
static bool iouh_pi_futex_fence(struct task_struct *tsk)
{
	return true;
}

static void iouh_pi_futex_unfence(struct task_struct *tsk)
{
}

static void iouh_pi_futex_lock(struct task_struct *src)
{
}

static void iouh_pi_futex_unlock(struct task_struct *src)
{
}
#endif

/* at the first sleep, on current: re-check, sync the user state, fence */
bool iouh_identity_prepare(struct task_struct *tsk)
{
	/* bound since the issue began: a perf event, a PI waiter, a cookie */
	if (iouh_identity_bound_refusal(tsk) != IOUH_MOVABLE)
		return false;
	if (!iouh_arch_prepare())
		return false;
	return iouh_pi_futex_fence(tsk);
}

/*
 * Signal state follows the identity, the source gets a worker's. A stop in
 * progress follows too; the SIGKILL of a group that exits, or execs
 * (de_thread() zapped it, and waits for every thread it counted), stays on
 * the source as well, which must leave its waits and exit like every other
 * thread.
 */
static void iouh_take_signals(struct task_struct *dst, struct task_struct *src)
	__must_hold(&dst->sighand->siglock)
{
	unsigned long jobctl = src->jobctl & (JOBCTL_STOP_SIGMASK |
					      JOBCTL_STOP_CONSUME |
					      JOBCTL_PENDING_MASK);

	dst->blocked = src->blocked;
	dst->real_blocked = src->real_blocked;
	dst->saved_sigmask = src->saved_sigmask;
	dst->sas_ss_sp = src->sas_ss_sp;
	dst->sas_ss_size = src->sas_ss_size;
	dst->sas_ss_flags = src->sas_ss_flags;
	dst->restart_block = src->restart_block;
	siginitsetinv(&src->blocked, sigmask(SIGKILL) | sigmask(SIGSTOP));
	sigemptyset(&src->real_blocked);
	sas_ss_reset(src);

	if (jobctl & JOBCTL_PENDING_MASK) {
		dst->jobctl |= jobctl;
		src->jobctl &= ~jobctl;
	}
	list_splice_tail_init(&src->pending.list, &dst->pending.list);
	sigorsets(&dst->pending.signal, &dst->pending.signal,
		  &src->pending.signal);
	sigemptyset(&src->pending.signal);
	if (src->signal->flags & SIGNAL_GROUP_EXIT ||
	    src->signal->group_exec_task)
		sigaddset(&src->pending.signal, SIGKILL);
	else
		clear_tsk_thread_flag(src, TIF_SIGPENDING);
}

/*
 * A child's PTRACE_TRACEME after the issue began linked it to the source,
 * its parent then (the exchange has reparented it since): it asked its
 * parent's tid to trace it, so it follows the identity. Nothing else is on
 * the source's list: a tracer is refused at issue, and the source has slept
 * in the issue since.
 */
static void iouh_take_tracees(struct task_struct *dst, struct task_struct *src)
	__must_hold(&tasklist_lock)
{
	struct task_struct *p;

	if (likely(list_empty(&src->ptraced)))
		return;
	list_for_each_entry(p, &src->ptraced, ptrace_entry)
		if (rcu_access_pointer(p->parent) == src)
			RCU_INIT_POINTER(p->parent, dst);
	list_splice_init(&src->ptraced, &dst->ptraced);
}

/*
 * The ptrace links follow the tid, both ways. A tracer that attached to the
 * source after the issue began (it asked for the submitter's tid) traces
 * the identity. One that seized the reserved worker after the reservation
 * checked it untraced (review item E2) asked for the worker's tid, which the
 * source holds now: it traces the source. Each tracee is on its tracer's
 * ->ptraced list by ->ptrace_entry, where the two swap places.
 */
#define IOUH_JOBCTL_PTRACE	(JOBCTL_TRAPPING | JOBCTL_LISTENING)

static void iouh_take_ptrace(struct task_struct *dst, struct task_struct *src)
	__must_hold(&tasklist_lock)
{
	struct task_struct *to_dst, *to_src;
	unsigned long jobctl;

	iouh_take_tracees(dst, src);
	if (likely(!src->ptrace && !dst->ptrace))
		return;
	/* the tracers, NULL for none; an untraced task's parent is its real one */
	to_dst = src->ptrace ? rcu_access_pointer(src->parent) : NULL;
	to_src = dst->ptrace ? rcu_access_pointer(dst->parent) : NULL;
	if (src->ptrace && dst->ptrace)
		list_swap(&src->ptrace_entry, &dst->ptrace_entry);
	else if (src->ptrace)
		list_replace_init(&src->ptrace_entry, &dst->ptrace_entry);
	else
		list_replace_init(&dst->ptrace_entry, &src->ptrace_entry);
	swap(dst->ptrace, src->ptrace);
	swap(dst->ptracer_cred, src->ptracer_cred);
	RCU_INIT_POINTER(dst->parent, to_dst ?: rcu_access_pointer(dst->real_parent));
	RCU_INIT_POINTER(src->parent, to_src ?: rcu_access_pointer(src->real_parent));
	jobctl = dst->jobctl & IOUH_JOBCTL_PTRACE;
	dst->jobctl = (dst->jobctl & ~IOUH_JOBCTL_PTRACE) |
		      (src->jobctl & IOUH_JOBCTL_PTRACE);
	src->jobctl = (src->jobctl & ~IOUH_JOBCTL_PTRACE) | jobctl;
}

/* per-thread CPU timers armed since the issue began: the clock moves too */
static void iouh_take_cpu_timers(struct task_struct *dst,
				 struct task_struct *src)
	__must_hold(&dst->sighand->siglock)
{
#ifdef CONFIG_POSIX_TIMERS
	int i;

	for (i = 0; i < CPUCLOCK_MAX; i++) {
		struct posix_cputimer_base *from = &src->posix_cputimers.bases[i];
		struct posix_cputimer_base *to = &dst->posix_cputimers.bases[i];
		struct timerqueue_node *node;

		while ((node = timerqueue_getnext(&from->tqhead))) {
			struct cpu_timer *ctmr;

			ctmr = container_of(node, struct cpu_timer, node);
			timerqueue_del(&from->tqhead, node);
			ctmr->head = &to->tqhead;
			timerqueue_add(&to->tqhead, node);
		}
		to->nextevt = min(to->nextevt, from->nextevt);
		from->nextevt = U64_MAX;
	}
#endif
}

/*
 * Per-thread accounting follows the identity, so the tid's counters and the
 * process totals (read under sig->stats_lock) stay monotonic. Runtime, user
 * and system time and the switch counts moved already, before the tid
 * (io_uring_handoff_exchange()).
 */
static void iouh_take_stats(struct task_struct *dst, struct task_struct *src)
{
	dst->gtime += src->gtime;
	src->gtime = 0;
#ifndef CONFIG_VIRT_CPU_ACCOUNTING_NATIVE
	/* what cputime_adjust() last reported keeps the tid monotonic */
	raw_spin_lock(&src->prev_cputime.lock);
	raw_spin_lock_nested(&dst->prev_cputime.lock, SINGLE_DEPTH_NESTING);
	dst->prev_cputime.utime += src->prev_cputime.utime;
	dst->prev_cputime.stime += src->prev_cputime.stime;
	src->prev_cputime.utime = 0;
	src->prev_cputime.stime = 0;
	raw_spin_unlock(&dst->prev_cputime.lock);
	raw_spin_unlock(&src->prev_cputime.lock);
#endif
	dst->min_flt += src->min_flt;
	dst->maj_flt += src->maj_flt;
	src->min_flt = 0;
	src->maj_flt = 0;
	task_io_accounting_add(&dst->ioac, &src->ioac);
	memset(&src->ioac, 0, sizeof(src->ioac));
#ifdef CONFIG_DETECT_HUNG_TASK
	/*
	 * The hung-task detector's record of the switch counts trades places
	 * with them (sched_exec_runtime_move()): a record matches only the
	 * count it was taken of, so a tid is reported only if it really went
	 * without a switch. khungtaskd writes these unlocked; one that took a
	 * record in between loses it, and takes a fresh one at its next check.
	 */
	swap(dst->last_switch_count, src->last_switch_count);
	swap(dst->last_switch_time, src->last_switch_time);
#endif
}

/*
 * Adopt the source's creds. Not commit_creds(), the process isn't changing
 * credentials, an existing identity is just moving between two of its tasks.
 */
static void iouh_take_creds(struct task_struct *dst, struct task_struct *src)
{
	/* neither side changes its own creds while a handoff is in flight */
	const struct cred *old = rcu_dereference_protected(dst->real_cred, 1);
	const struct cred *new = rcu_dereference_protected(src->real_cred, 1);

	if (new == old)
		return;
	get_cred_many(new, 2);
	if (new->user != old->user)
		inc_rlimit_ucounts(new->ucounts, UCOUNT_RLIMIT_NPROC, 1);
	rcu_assign_pointer(dst->real_cred, new);
	rcu_assign_pointer(dst->cred, new);
	if (new->user != old->user)
		dec_rlimit_ucounts(old->ucounts, UCOUNT_RLIMIT_NPROC, 1);
	put_cred_many(old, 2);
}

/* per-thread user memory the kernel writes: robust list, tid clear, rseq */
static void iouh_take_user_ptrs(struct task_struct *dst,
				struct task_struct *src)
{
#ifdef CONFIG_FUTEX
	dst->futex.robust_list = src->futex.robust_list;
	src->futex.robust_list = NULL;
#ifdef CONFIG_COMPAT
	dst->futex.compat_robust_list = src->futex.compat_robust_list;
	src->futex.compat_robust_list = NULL;
#endif
#endif
	dst->clear_child_tid = src->clear_child_tid;
	src->clear_child_tid = NULL;
#ifdef CONFIG_RSEQ
	dst->rseq = src->rseq;
	memset(&src->rseq, 0, sizeof(src->rseq));
	src->rseq.ids.cpu_id = RSEQ_CPU_ID_UNINITIALIZED;
	rseq_force_update();
#endif
}

/* the per-thread attributes userspace reads (/proc, prctl) that are left */
static void iouh_take_thread_attrs(struct task_struct *dst,
				   struct task_struct *src)
{
#ifdef CONFIG_AUDIT
	/* set once per login: the tid keeps it */
	dst->loginuid = src->loginuid;
	dst->sessionid = src->sessionid;
#endif
	dst->self_exec_id = src->self_exec_id;
	dst->personality = src->personality;
	dst->pdeath_signal = src->pdeath_signal;
	dst->timer_slack_ns = src->timer_slack_ns;
	dst->default_timer_slack_ns = src->default_timer_slack_ns;
	dst->start_time = src->start_time;
	dst->start_boottime = src->start_boottime;
	if (task_no_new_privs(src))
		task_set_no_new_privs(dst);
	/*
	 * The thread's io_uring restrictions (set once, like a seccomp filter;
	 * each task holds its own copy, a worker the one of its fork): the
	 * identity keeps its own, the source gets the worker's.
	 */
	swap(dst->io_uring_restrict, src->io_uring_restrict);
	/* per-task flags, see IOUH_PF_FLAGS; the source keeps its own */
	dst->flags = (dst->flags & ~IOUH_PF_FLAGS) | (src->flags & IOUH_PF_FLAGS);
}

/*
 * Under the exchange's locks (io_uring_handoff_exchange()): everything a
 * reader of the tid must see move at once with it.
 */
static void iouh_take_locked(struct task_struct *dst, struct task_struct *src)
{
	iouh_take_signals(dst, src);
	iouh_take_ptrace(dst, src);
	iouh_take_cpu_timers(dst, src);
	iouh_take_stats(dst, src);
	iouh_take_creds(dst, src);
	iouh_take_user_ptrs(dst, src);
	iouh_take_thread_attrs(dst, src);
}

/* the SEM_UNDO list is per thread group but hangs off each task */
static void iouh_take_undo_list(struct task_struct *dst,
				struct task_struct *src)
{
#ifdef CONFIG_SYSVIPC
	swap(dst->sysvsem.undo_list, src->sysvsem.undo_list);
#endif
}

#ifdef CONFIG_CGROUPS
/* threaded cgroup placement follows the identity, the source stays put */
static void iouh_take_cgroup(struct task_struct *dst, struct task_struct *src)
{
	if (rcu_access_pointer(src->cgroups) != rcu_access_pointer(dst->cgroups))
		WARN_ON_ONCE(cgroup_attach_task_all(src, dst));
}
#else
static void iouh_take_cgroup(struct task_struct *dst, struct task_struct *src)
{
}
#endif

/*
 * Does @dst need sched_setattr() to take @src's attributes? Always for a
 * deadline @src: its bandwidth must leave @src (iouh_take_sched()).
 */
static bool iouh_sched_needs_setattr(struct task_struct *dst,
				     struct task_struct *src)
{
	if (src->policy == SCHED_DEADLINE)
		return true;
	if (dst->policy != src->policy || task_nice(dst) != task_nice(src) ||
	    dst->rt_priority != src->rt_priority)
		return true;
	if (dst->sched_reset_on_fork != src->sched_reset_on_fork)
		return true;
	if (dst->se.custom_slice != src->se.custom_slice ||
	    (src->se.custom_slice && dst->se.slice != src->se.slice))
		return true;
#ifdef CONFIG_UCLAMP_TASK
	for (int i = 0; i < UCLAMP_CNT; i++) {
		if (dst->uclamp_req[i].user_defined !=
		    src->uclamp_req[i].user_defined)
			return true;
		if (src->uclamp_req[i].user_defined &&
		    dst->uclamp_req[i].value != src->uclamp_req[i].value)
			return true;
	}
#endif
	return false;
}

/*
 * Sched attributes follow the identity, sched_setattr() only if needed: a
 * policy set since the issue began included, RT and deadline too.
 */
static void iouh_take_sched(struct task_struct *dst, struct task_struct *src)
{
	struct sched_attr attr = {
		.size		= sizeof(attr),
		.sched_policy	= src->policy,
		.sched_nice	= task_nice(src),
		.sched_priority	= src->rt_priority,
	};

	if (!iouh_sched_needs_setattr(dst, src))
		return;
	if (src->sched_reset_on_fork)
		attr.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
	if (src->se.custom_slice)
		attr.sched_runtime = src->se.slice;
#ifdef CONFIG_UCLAMP_TASK
	if (src->uclamp_req[UCLAMP_MIN].user_defined) {
		attr.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MIN;
		attr.sched_util_min = src->uclamp_req[UCLAMP_MIN].value;
	}
	if (src->uclamp_req[UCLAMP_MAX].user_defined) {
		attr.sched_flags |= SCHED_FLAG_UTIL_CLAMP_MAX;
		attr.sched_util_max = src->uclamp_req[UCLAMP_MAX].value;
	}
#endif
	if (src->policy == SCHED_DEADLINE) {
		struct sched_attr normal = { .size = sizeof(normal) };

		attr.sched_runtime = src->dl.dl_runtime;
		attr.sched_deadline = src->dl.dl_deadline;
		attr.sched_period = src->dl.dl_period;
		attr.sched_flags |= src->dl.flags;
		/* the worker left behind doesn't keep the bandwidth */
		WARN_ON_ONCE(sched_setattr_nocheck(src, &normal));
	}
	if (sched_setattr_nocheck(dst, &attr))
		pr_warn_ratelimited("io_uring_handoff: sched policy %d of tid %d did not move\n",
				    attr.sched_policy, task_pid_nr(dst));
}

/*
 * The user requested affinity follows, the effective mask derives from it.
 * A requested mask without an active CPU left (offlined since, or outside
 * a changed cpuset) fails sched_setaffinity() as it would for the source;
 * then the effective mask the scheduler gave the source follows alone.
 */
static void iouh_take_affinity(struct task_struct *dst,
			       struct task_struct *src)
{
	if (src->user_cpus_ptr && !sched_setaffinity(0, src->user_cpus_ptr))
		return;
	set_cpus_allowed_ptr(dst, src->cpus_ptr);
}

/*
 * On the worker (current) that the commit promoted: take the identity of
 * @src. The tid, and what must change with it, move in
 * io_uring_handoff_exchange(); what may sleep follows. Non-zero only if the
 * register state can't follow (iouh_arch_take()): the tid has moved by then,
 * so the kernel kills the process (io_uring_handoff_take()). Checked at the
 * reservation, so not expected.
 */
int iouh_identity_take(struct task_struct *src)
{
	struct task_struct *dst = current;
	unsigned int window = READ_ONCE(debug_window_ms);
	bool leader;

	trace_io_uring_handoff_take(src);
	/* a FUTEX_LOCK_PI on the tid waits here, iouh_pi_futex_fence() */
	iouh_pi_futex_lock(src);
	iouh_pi_futex_unfence(dst);
	if (unlikely(window))
		msleep(window);
	/* comm follows in the exchange, after its locks */
	leader = io_uring_handoff_exchange(dst, src, iouh_take_locked);
	iouh_pi_futex_unlock(src);
	iouh_take_undo_list(dst, src);
	iouh_take_cgroup(dst, src);
	iouh_take_sched(dst, src);
	iouh_take_affinity(dst, src);
	return iouh_arch_take(src, leader);
}
