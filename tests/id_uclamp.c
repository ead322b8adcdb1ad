// SPDX-License-Identifier: GPL-2.0
/*
 * Utilization clamps survive a blocking submit. After its io-wq worker
 * exists (without clamps), a non-leader thread requests util_min 128 and
 * util_max 512 with sched_setattr(SCHED_FLAG_KEEP_ALL |
 * SCHED_FLAG_UTIL_CLAMP); after the submit sched_getattr() reads back the
 * same clamps and SCHED_OTHER, and the main thread kept its own. In mode
 * handoff the submit must hand off (skip if not, unless
 * IOUH_EXPECT_HANDOFF=1). Skips on a kernel without CONFIG_UCLAMP_TASK
 * (sched_setattr fails with EOPNOTSUPP or EINVAL). Blocking is forced by
 * fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel/module that hands off without moving the clamps: the
 * thread comes back with the worker's, the defaults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include "helpers.h"

#define UMIN	128
#define UMAX	512

static void get_attr(struct sched_attr *attr, const char *who)
{
	memset(attr, 0, sizeof(*attr));
	if (syscall(SYS_sched_getattr, 0, attr, SCHED_ATTR_SIZE_VER1, 0))
		t_fail("%s: sched_getattr: %s", who, strerror(errno));
}

static void *clamped(void *arg)
{
	struct sched_attr attr = {
		.size = SCHED_ATTR_SIZE_VER1,
		.sched_flags = SCHED_FLAG_KEEP_ALL | SCHED_FLAG_UTIL_CLAMP,
		.sched_util_min = UMIN,
		.sched_util_max = UMAX,
	};
	long long ho;
	struct t_force tf;

	(void)arg;
	/* the worker, the handoff target, has the default clamps */
	t_force_init(&tf, "id_uclamp");
	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		if (errno == EOPNOTSUPP || errno == EINVAL)
			t_skip("sched_setattr with clamps: %s, no CONFIG_UCLAMP_TASK",
			     strerror(errno));
		t_fail("sched_setattr with clamps: %s", strerror(errno));
	}
	get_attr(&attr, "before the submit");
	if (attr.sched_util_min != UMIN || attr.sched_util_max != UMAX)
		t_fail("clamps %u..%u right after setting %u..%u",
		     attr.sched_util_min, attr.sched_util_max, UMIN, UMAX);

	ho = t_force_block(&tf);

	get_attr(&attr, "clamped thread");
	if (attr.sched_util_min != UMIN || attr.sched_util_max != UMAX)
		t_fail("clamps %u..%u, expected %u..%u", attr.sched_util_min,
		     attr.sched_util_max, UMIN, UMAX);
	if (attr.sched_policy != SCHED_NORMAL)
		t_fail("policy %u, expected SCHED_OTHER", attr.sched_policy);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	struct sched_attr before, after;

	t_dir("IOUH_EXT4");
	get_attr(&before, "main thread");
	t_run_in_thread(clamped, NULL);
	get_attr(&after, "main thread");
	if (after.sched_util_min != before.sched_util_min ||
	    after.sched_util_max != before.sched_util_max)
		t_fail("main thread's clamps changed: %u..%u -> %u..%u",
		     before.sched_util_min, before.sched_util_max,
		     after.sched_util_min, after.sched_util_max);
	return T_PASS;
}
