/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_HANDOFF_H
#define IOUH_HANDOFF_H

#include <linux/atomic.h>
#include <linux/io_uring_handoff.h>

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
bool iouh_enabled(void);

#endif
