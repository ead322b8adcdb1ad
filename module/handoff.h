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

/* policy.c: the hooks the kernel calls */
bool iouh_may_inline(struct io_kiocb *req);
bool iouh_issue_begin(struct io_kiocb *req);
int iouh_issue_end(struct io_kiocb *req, int ret);
void iouh_sleeping(struct task_struct *tsk);

/* identity.c: can the identity of current be handed off at all */
bool iouh_task_allowed(struct task_struct *tsk);

#endif
