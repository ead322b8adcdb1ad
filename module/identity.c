// SPDX-License-Identifier: GPL-2.0
/*
 * Whose identity may be handed off: the seeds' thread_handoff_allowed(),
 * checked before a request is issued inline. It errs on the safe side, any
 * reference to the task_struct the identity can't take along refuses.
 */
#include "handoff.h"

#include <linux/audit.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/uprobes.h>

/* state that points at the task_struct rather than at the identity */
bool iouh_task_bound(struct task_struct *tsk)
{
	/* a tracer, or tracees, hold the task_struct */
	if (tsk->ptrace || !list_empty(&tsk->ptraced))
		return true;
#ifdef CONFIG_PERF_EVENTS
	if (tsk->perf_event_ctxp)
		return true;
#endif
#ifdef CONFIG_FUTEX
	/* PI futex ownership */
	if (!list_empty(&tsk->futex.pi_state_list))
		return true;
#endif
#ifdef CONFIG_SCHED_CORE
	if (tsk->core_cookie)
		return true;
#endif
#ifdef CONFIG_KCOV
	if (tsk->kcov)
		return true;
#endif
#ifdef CONFIG_UPROBES
	/* pending uretprobes keep return addresses in our utask */
	if (tsk->utask && tsk->utask->return_instances)
		return true;
#endif
	/* a vfork() parent waits on this task_struct */
	return tsk->vfork_done;
}

/* state whose semantics a move would change */
static bool iouh_task_unmovable(struct task_struct *tsk)
{
	if (tsk->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER))
		return true;
	if (tsk->signal->flags & SIGNAL_GROUP_EXIT)
		return true;
	/* only the fair class moves */
	if (rt_or_dl_task(tsk))
		return true;
#ifdef CONFIG_POSIX_TIMERS
	/* armed per-thread CPU timers would sample another clock */
	if (tsk->posix_cputimers.timers_active)
		return true;
#endif
	/* the syscall's audit record would never be emitted */
	return !audit_dummy_context();
}

bool iouh_task_allowed(struct task_struct *tsk)
{
	if (WARN_ON_ONCE(tsk != current))
		return false;
	return !iouh_task_bound(tsk) && !iouh_task_unmovable(tsk) &&
	       iouh_arch_allowed(tsk);
}
