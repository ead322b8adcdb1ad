// SPDX-License-Identifier: GPL-2.0
/*
 * Moving a user visible identity from a task blocked in the kernel to an
 * io-wq worker of the same process, the seeds' kernel/thread_handoff.c. The
 * worker returns to userspace as the identity; the blocked task keeps its
 * task_struct and kernel stack and finishes the request as a worker.
 */
#include "handoff.h"

#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/iocontext.h>
#include <linux/ioprio.h>
#include <linux/rseq.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/task_io_accounting_ops.h>
#include <uapi/linux/sched/types.h>

/* prctl state that moves. Not PF_MEMALLOC_NOIO, kernel code sets that too */
#define IOUH_PF_FLAGS	(PF_MCE_PROCESS | PF_MCE_EARLY)

static int iouh_ioprio(struct task_struct *tsk)
{
	return tsk->io_context ? tsk->io_context->ioprio : 0;
}

/* what the destination must share with the source, nothing here moves */
static bool iouh_same_context(struct task_struct *src, struct task_struct *dst)
{
	if (dst->mm != src->mm || dst->files != src->files ||
	    dst->fs != src->fs || dst->nsproxy != src->nsproxy)
		return false;
	/* the identity must not gain no_new_privs */
	if (task_no_new_privs(dst) && !task_no_new_privs(src))
		return false;
#ifdef CONFIG_SECCOMP
	/* seccomp filters are per-thread, the identity must not escape them */
	if (dst->seccomp.mode != src->seccomp.mode ||
	    dst->seccomp.filter != src->seccomp.filter)
		return false;
#endif
#ifdef CONFIG_SYSVIPC
	/* SEM_UNDO adjustments are accounted per undo list */
	if (dst->sysvsem.undo_list != src->sysvsem.undo_list)
		return false;
#endif
#ifdef CONFIG_NUMA
	/* __mpol_dup() isn't exported, only the default policy moves */
	if (src->mempolicy || dst->mempolicy)
		return false;
#endif
	/* the io_context is shared with the worker's creator, doesn't move */
	return iouh_ioprio(src) == iouh_ioprio(dst);
}

/* can @dst take over the identity of @src, under io-wq's workers_lock */
bool iouh_compatible(struct task_struct *src, struct task_struct *dst)
{
	bool same_ns;

	if (dst->flags & PF_EXITING || dst->ptrace)
		return false;
	if (!same_thread_group(src, dst))
		return false;
#ifdef CONFIG_GENERIC_ENTRY
	if (test_task_syscall_work(dst, SYSCALL_USER_DISPATCH))
		return false;
#endif
	if (!iouh_same_context(src, dst))
		return false;
	/* iouh_creds() doesn't switch namespaces */
	rcu_read_lock();
	same_ns = __task_cred(dst)->user_ns == __task_cred(src)->user_ns;
	rcu_read_unlock();
	return same_ns && iouh_arch_compatible(src, dst);
}

/* on the source right before it blocks: re-check, then sync user state */
bool iouh_prepare(struct task_struct *tsk)
{
	/* may have changed since iouh_task_allowed() */
	if (iouh_task_bound(tsk))
		return false;
	return iouh_arch_prepare();
}

/*
 * Take the source's per-thread accounting for the destination, so the tid's
 * counters stay monotonic. Runs as current, the tick writes these from irq.
 */
void iouh_stats_take(struct iouh_stats *st)
{
	struct task_struct *p = current;

	st->exec_runtime = sched_exec_runtime_take(p);

	local_irq_disable();
	st->utime = p->utime;
	st->stime = p->stime;
	st->gtime = p->gtime;
	p->utime = 0;
	p->stime = 0;
	p->gtime = 0;
#ifndef CONFIG_VIRT_CPU_ACCOUNTING_NATIVE
	raw_spin_lock(&p->prev_cputime.lock);
	st->prev_utime = p->prev_cputime.utime;
	st->prev_stime = p->prev_cputime.stime;
	p->prev_cputime.utime = 0;
	p->prev_cputime.stime = 0;
	raw_spin_unlock(&p->prev_cputime.lock);
#endif
	local_irq_enable();

	st->min_flt = p->min_flt;
	st->maj_flt = p->maj_flt;
	st->nvcsw = p->nvcsw;
	st->nivcsw = p->nivcsw;
	p->min_flt = 0;
	p->maj_flt = 0;
	p->nvcsw = 0;
	p->nivcsw = 0;
	st->ioac = p->ioac;
	memset(&p->ioac, 0, sizeof(p->ioac));
}

static void iouh_stats_add(struct task_struct *p, struct iouh_stats *st)
{
	sched_exec_runtime_add(p, st->exec_runtime);

	local_irq_disable();
	p->utime += st->utime;
	p->stime += st->stime;
	p->gtime += st->gtime;
#ifndef CONFIG_VIRT_CPU_ACCOUNTING_NATIVE
	raw_spin_lock(&p->prev_cputime.lock);
	p->prev_cputime.utime += st->prev_utime;
	p->prev_cputime.stime += st->prev_stime;
	raw_spin_unlock(&p->prev_cputime.lock);
#endif
	local_irq_enable();

	p->min_flt += st->min_flt;
	p->maj_flt += st->maj_flt;
	p->nvcsw += st->nvcsw;
	p->nivcsw += st->nivcsw;
	task_io_accounting_add(&p->ioac, &st->ioac);
}

/* signal state follows the identity, the source gets a worker's mask */
static void iouh_signals(struct task_struct *dst, struct task_struct *src)
	__must_hold(&dst->sighand->siglock)
{
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

	list_splice_tail_init(&src->pending.list, &dst->pending.list);
	sigorsets(&dst->pending.signal, &dst->pending.signal,
		  &src->pending.signal);
	sigemptyset(&src->pending.signal);
}

/* the tgid is the leader's tid, so leadership follows. Like de_thread() */
static void iouh_leader(struct task_struct *dst, struct task_struct *src)
	__must_hold(&tasklist_lock)
{
	struct list_head *prev = dst->thread_node.prev;
	struct task_struct *t;

	/*
	 * The leader must be first on ->thread_head, swap the two list
	 * positions. RCU readers may see a thread twice, never miss one.
	 */
	if (prev == &src->thread_node)
		prev = &dst->thread_node;
	list_del_rcu(&dst->thread_node);
	list_replace_rcu(&src->thread_node, &dst->thread_node);
	list_add_rcu(&src->thread_node, prev);

	transfer_pid(src, dst, PIDTYPE_TGID);
	transfer_pid(src, dst, PIDTYPE_PGID);
	transfer_pid(src, dst, PIDTYPE_SID);

	list_replace_rcu(&src->tasks, &dst->tasks);
	list_replace_init(&src->sibling, &dst->sibling);

	for_each_thread(dst, t)
		t->group_leader = dst;

	dst->exit_signal = src->exit_signal;
	src->exit_signal = -1;
}

/* children are parented to the forking thread, move them along */
static void iouh_children(struct task_struct *dst, struct task_struct *src)
	__must_hold(&tasklist_lock)
{
	struct task_struct *p;

	list_for_each_entry(p, &src->children, sibling) {
		RCU_INIT_POINTER(p->real_parent, dst);
		if (rcu_access_pointer(p->parent) == src)
			RCU_INIT_POINTER(p->parent, dst);
	}
	list_splice_init(&src->children, &dst->children);
	dst->self_exec_id = src->self_exec_id;
}

/* tid, leadership, children and signal state swap in one go */
static bool iouh_tids(struct task_struct *dst, struct task_struct *src)
{
	struct sighand_struct *sighand = dst->sighand;
	bool leader;

	cgroup_threadgroup_change_begin(dst);
	write_lock_irq(&tasklist_lock);
	spin_lock(&sighand->siglock);
	leader = thread_group_leader(src);
	exchange_tids(dst, src);
	if (leader)
		iouh_leader(dst, src);
	iouh_children(dst, src);
	iouh_signals(dst, src);
	spin_unlock(&sighand->siglock);
	write_unlock_irq(&tasklist_lock);
	cgroup_threadgroup_change_end(dst);
	recalc_sigpending();
	return leader;
}

static bool iouh_sched_same(struct task_struct *dst, struct task_struct *src)
{
	if (dst->policy != src->policy || task_nice(dst) != task_nice(src))
		return false;
	if (dst->sched_reset_on_fork != src->sched_reset_on_fork)
		return false;
	return dst->se.custom_slice == src->se.custom_slice &&
	       (!src->se.custom_slice || dst->se.slice == src->se.slice);
}

/* sched attributes follow the identity, sched_setattr() only if needed */
static void iouh_sched(struct task_struct *dst, struct task_struct *src)
{
	struct sched_attr attr = {
		.sched_policy = src->policy,
		.sched_nice = task_nice(src),
	};

	if (iouh_sched_same(dst, src))
		return;
	if (src->sched_reset_on_fork)
		attr.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
	if (src->se.custom_slice)
		attr.sched_runtime = src->se.slice;
	WARN_ON_ONCE(sched_setattr_nocheck(dst, &attr));
}

/*
 * Adopt the source's creds. Not commit_creds(), the process isn't changing
 * credentials, an existing identity is just moving between two of its tasks.
 */
static void iouh_creds(struct task_struct *dst, struct task_struct *src)
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
static void iouh_user_ptrs(struct task_struct *dst, struct task_struct *src)
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
	scoped_guard(irqsave) {
		dst->rseq = src->rseq;
		memset(&src->rseq, 0, sizeof(src->rseq));
		src->rseq.ids.cpu_id = RSEQ_CPU_ID_UNINITIALIZED;
	}
	rseq_force_update();
#endif
}

/* the rest of what userspace reads per thread */
static void iouh_misc(struct task_struct *dst, struct task_struct *src)
{
	char comm[TASK_COMM_LEN];

	dst->personality = src->personality;
	dst->pdeath_signal = src->pdeath_signal;
	dst->timer_slack_ns = src->timer_slack_ns;
	dst->default_timer_slack_ns = src->default_timer_slack_ns;
	dst->start_time = src->start_time;
	dst->start_boottime = src->start_boottime;
	if (task_no_new_privs(src))
		task_set_no_new_privs(dst);
	/* prctl driven per-task flags, the source keeps them for its work */
	dst->flags = (dst->flags & ~IOUH_PF_FLAGS) | (src->flags & IOUH_PF_FLAGS);
	get_task_comm(comm, src);
	set_task_comm(dst, comm);
}

#ifdef CONFIG_CGROUPS
/* threaded cgroup placement follows the identity, the source stays put */
static void iouh_cgroup(struct task_struct *dst, struct task_struct *src)
{
	if (rcu_access_pointer(src->cgroups) != rcu_access_pointer(dst->cgroups))
		WARN_ON_ONCE(cgroup_attach_task_all(src, dst));
}
#else
static void iouh_cgroup(struct task_struct *dst, struct task_struct *src)
{
}
#endif

/* runs on the destination, the source never looks at the moved state again */
int iouh_finish(struct task_struct *src, struct iouh_stats *st)
{
	struct task_struct *dst = current;
	bool leader = iouh_tids(dst, src);

	iouh_user_ptrs(dst, src);
	iouh_creds(dst, src);
	iouh_misc(dst, src);
	iouh_cgroup(dst, src);
	iouh_stats_add(dst, st);
	iouh_sched(dst, src);
	set_cpus_allowed_ptr(dst, src->cpus_ptr);
	return iouh_arch_finish(src, leader);
}
