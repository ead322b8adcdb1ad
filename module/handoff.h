/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_HANDOFF_H
#define IOUH_HANDOFF_H

#include <linux/io_uring_handoff.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/uprobes.h>

/* ABI 11 added security_task_handoff_check(): say so, not "implicit decl" */
#if IO_URING_HANDOFF_ABI < 11
#error "io_uring_handoff: the kernel's hooks are older than core-hooks.patch's (hook ABI < 11)"
#endif

/*
 * The counters under /sys/kernel/io_uring_handoff/, one documented table in
 * handoff_main.c. An inline issue is counted once when it begins, and once
 * more if it slept: handed off or blocked in place. A request the module
 * refuses is counted once, by its reason, and takes the stock io-wq punt;
 * one it doesn't serve (not a blockable opcode, an IOSQE_ASYNC read or
 * write) isn't counted. inline_done, derived, is the issues that didn't sleep.
 */
enum iouh_counter {
	IOUH_INLINE_ISSUED,
	IOUH_HANDOFFS,
	IOUH_BLOCKED_LOCK,
	IOUH_BLOCKED_TASK,
	IOUH_BLOCKED_REQUEST,
	IOUH_FB_RING,
	IOUH_FB_REQUEST,
	IOUH_FB_POLL,
	IOUH_FB_SIGNAL,
	IOUH_FB_TASK,
	IOUH_FB_WORKER,
	IOUH_FB_POLICY,
	IOUH_FB_BUDGET,
	IOUH_FB_BATCH,
	IOUH_FB_SCOPE,
	IOUH_FB_DEPTH,
	IOUH_NR_COUNTERS,
};

DECLARE_PER_CPU(u64, iouh_counters[IOUH_NR_COUNTERS]);
extern const char * const iouh_counter_names[IOUH_NR_COUNTERS];

static inline void iouh_count(enum iouh_counter c)
{
	this_cpu_inc(iouh_counters[c]);
}

/*
 * Why a task's identity can't move, checked at issue on the submitter and,
 * the worker_ ones, at the reservation on each idle worker: fallback_task
 * counts them all, /sys/kernel/io_uring_handoff/refusals each ("reason
 * count"). The table with a line per reason is in identity.c; the arch's
 * go last. One place to add a refused state, either side.
 */
enum iouh_refusal {
	IOUH_MOVABLE,
	IOUH_REFUSE_EXITING,
	IOUH_REFUSE_PTRACE,
	IOUH_REFUSE_PERF,
	IOUH_REFUSE_PI_FUTEX,
	IOUH_REFUSE_CORE_SCHED,
	IOUH_REFUSE_KCOV,
	IOUH_REFUSE_URETPROBE,
	IOUH_REFUSE_VFORK,
	IOUH_REFUSE_RT,
	IOUH_REFUSE_CPU_TIMERS,
	IOUH_REFUSE_AUDIT,
	IOUH_REFUSE_SYSCALL_DISPATCH,
	IOUH_REFUSE_MEMPOLICY,
	IOUH_REFUSE_WORKER_EXITING,
	IOUH_REFUSE_WORKER_BOUND,
	IOUH_REFUSE_WORKER_CONTEXT,
	IOUH_REFUSE_WORKER_NNP,
	IOUH_REFUSE_WORKER_SECCOMP,
	IOUH_REFUSE_WORKER_SEM_UNDO,
	IOUH_REFUSE_WORKER_MEMPOLICY,
	IOUH_REFUSE_WORKER_SPEC_CTRL,
	IOUH_REFUSE_WORKER_IOPRIO,
	IOUH_REFUSE_WORKER_USER_NS,
	IOUH_REFUSE_WORKER_LSM,
	IOUH_REFUSE_WORKER_ARCH,
	IOUH_REFUSE_COMPAT,
	IOUH_REFUSE_SEGMENTS,
	IOUH_REFUSE_IO_PERM,
	IOUH_REFUSE_SHADOW_STACK,
	IOUH_REFUSE_FPU_STATE,
	IOUH_REFUSE_SME,
	IOUH_NR_REFUSALS,
};

/* policy.c: which requests go inline */
bool iouh_issue_begin(struct io_kiocb *req);
/* count and trace why @req didn't go inline, or slept in place */
void iouh_count_fail(struct io_kiocb *req, enum iouh_counter why);
/* the adaptive policy's estimate of @req's kind: it slept */
void iouh_rate_slept(struct io_kiocb *req);
/* an inline read or write that went direct since it was let in: sleep here */
bool iouh_rw_direct(struct io_kiocb *req);
/* the policy toggle: adaptive (true) or inline whenever a worker is held */
extern bool iouh_adaptive;
/* IOSQE_ASYNC requests go inline like the rest (true) or keep their punt */
extern bool iouh_async_inline;
ssize_t iouh_rates_show(char *buf);
/* the cgroup setting: its candidates, see iouh_in_scope() */
int iouh_scope_set(const char *path);
ssize_t iouh_scope_show(char *buf);
void iouh_scope_exit(void);
/* the adaptive policy's budget of one io_uring_enter() in us, 0: none */
#define IOUH_BATCH_BUDGET_US	500
extern unsigned int iouh_batch_budget_us;
/* ... and its depth: completions left in the CQ, 0: none */
#define IOUH_DEPTH_MAX		4
extern unsigned int iouh_depth_max;

/*
 * iowq_handoff.c: the worker side, a worker held at issue (0; -EBUSY: none
 * idle; else the refusal of the last idle one, counted), the sleep
 */
int iouh_worker_reserve(struct io_uring_task *tctx);
void iouh_issue_sleeping(struct task_struct *tsk);

/*
 * identity.c: the lifecycle of a move. Allowed (at issue: IOUH_MOVABLE or
 * the refusal, which it counts), prepared (at the sleep), taken (on the
 * worker); compatible with a worker is iowq_handoff.c's.
 */
enum iouh_refusal iouh_identity_refusal(struct task_struct *tsk);
ssize_t iouh_refusals_show(char *buf);

DECLARE_PER_CPU(u64, iouh_refusals[IOUH_NR_REFUSALS]);

/* a refusal of either side, IOUH_MOVABLE isn't one */
static inline void iouh_refusal_count(enum iouh_refusal why)
{
	if (why != IOUH_MOVABLE)
		this_cpu_inc(iouh_refusals[why]);
}

/*
 * State that points at the task_struct rather than at the identity: refused
 * at issue and at the sleep on the submitter, and on the worker at its
 * reservation (iowq_handoff.c), where it would go with the identity.
 */
static inline enum iouh_refusal
iouh_identity_bound_refusal(struct task_struct *tsk)
{
#ifdef CONFIG_PERF_EVENTS
	if (tsk->perf_event_ctxp)
		return IOUH_REFUSE_PERF;
#endif
#ifdef CONFIG_FUTEX
	if (!list_empty(&tsk->futex.pi_state_list))
		return IOUH_REFUSE_PI_FUTEX;
#endif
#ifdef CONFIG_SCHED_CORE
	if (tsk->core_cookie)
		return IOUH_REFUSE_CORE_SCHED;
#endif
#ifdef CONFIG_KCOV
	if (tsk->kcov)
		return IOUH_REFUSE_KCOV;
#endif
#ifdef CONFIG_UPROBES
	if (tsk->utask && tsk->utask->return_instances)
		return IOUH_REFUSE_URETPROBE;
#endif
	return tsk->vfork_done ? IOUH_REFUSE_VFORK : IOUH_MOVABLE;
}

bool iouh_identity_prepare(struct task_struct *tsk);
/* non-zero only if the registers couldn't follow: the kernel kills the process */
int iouh_identity_take(struct task_struct *src);

/* arch/<arch>/handoff.c: the user register state, same lifecycle */
enum iouh_refusal iouh_arch_refusal(struct task_struct *tsk);
bool iouh_arch_compatible(struct task_struct *src, struct task_struct *dst);
bool iouh_arch_prepare(void);
/* non-zero: see iouh_identity_take() */
int iouh_arch_take(struct task_struct *src, bool leader);

#endif
