/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_HANDOFF_H
#define IOUH_HANDOFF_H

#include <linux/atomic.h>
#include <linux/io_uring_handoff.h>

/* the sysfs counters; the fallback ones are the reasons of patch 14 */
enum iouh_counter {
	IOUH_HANDOFFS,
	IOUH_INLINE_DONE,
	IOUH_FB_RING,
	IOUH_FB_POLL,
	IOUH_FB_NOWAIT_FILE,
	IOUH_FB_TASK,
	IOUH_FB_SQE,
	IOUH_FB_SPARE,
	IOUH_FB_SIGNAL,
	IOUH_FB_LOCK,
	IOUH_FB_PREPARE,
	IOUH_FB_WORKER,
	IOUH_NR_COUNTERS,
};

extern atomic64_t iouh_counters[IOUH_NR_COUNTERS];
extern const char * const iouh_counter_names[IOUH_NR_COUNTERS];
bool iouh_enabled(void);

/* per-thread accounting that follows the identity */
struct iouh_stats {
	u64				utime;
	u64				stime;
	u64				gtime;
	u64				exec_runtime;
	/* what cputime_adjust() last reported, it keeps the tid monotonic */
	u64				prev_utime;
	u64				prev_stime;
	unsigned long			min_flt;
	unsigned long			maj_flt;
	unsigned long			nvcsw;
	unsigned long			nivcsw;
	struct task_io_accounting	ioac;
};

/* policy.c: the hooks the kernel calls */
bool iouh_may_inline(struct io_kiocb *req);
bool iouh_issue_begin(struct io_kiocb *req);
int iouh_issue_end(struct io_kiocb *req, int ret);

/* iowq_handoff.c: the sleep callback, the promoted worker's resume */
bool iouh_have_spare(struct io_uring_task *tctx);
void iouh_sleeping(struct task_struct *tsk);

/* identity.c: can the identity of current be handed off at all */
bool iouh_task_allowed(struct task_struct *tsk);
bool iouh_task_bound(struct task_struct *tsk);

/* migrate.c: moving it */
bool iouh_compatible(struct task_struct *src, struct task_struct *dst);
bool iouh_prepare(struct task_struct *tsk);
void iouh_stats_take(struct iouh_stats *st);
int iouh_finish(struct task_struct *src, struct iouh_stats *st);

/* arch/<arch>/handoff.c: the user register state */
bool iouh_arch_allowed(struct task_struct *tsk);
bool iouh_arch_compatible(struct task_struct *src, struct task_struct *dst);
bool iouh_arch_prepare(void);
int iouh_arch_finish(struct task_struct *src, bool leader);

#endif
