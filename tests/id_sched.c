// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread scheduling attributes survive a blocking submit. After its
 * io-wq worker exists (with the defaults: SCHED_OTHER, nice 0, all CPUs),
 * a non-leader thread switches to SCHED_BATCH | SCHED_RESET_ON_FORK, nice
 * 5 (setpriority on its tid) and, if it may run on more than one CPU, an
 * affinity of its first allowed CPU only. After the submit
 * sched_getscheduler(), getpriority() and sched_getaffinity() read back the
 * same, and the main thread kept its own. Blocking is forced by fsync of
 * dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without moving policy, nice, the
 * reset-on-fork flag or the user requested affinity: the thread comes back
 * with the worker's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "helpers.h"

#define NICE	5

static int main_policy, main_nice;

static int nice_of(pid_t tid)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, tid);
	if (n == -1 && errno)
		t_fail("getpriority: %s", strerror(errno));
	return n;
}

static void *sched_thread(void *arg)
{
	struct sched_param sp = { 0 };
	cpu_set_t all, one, now;
	int cpu = -1, pol;
	long long ho;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "id_sched");
	if (sched_getaffinity(0, sizeof(all), &all))
		t_fail("sched_getaffinity: %s", strerror(errno));
	if (CPU_COUNT(&all) > 1) {
		for (cpu = 0; !CPU_ISSET(cpu, &all); cpu++)
			;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			t_fail("sched_setaffinity: %s", strerror(errno));
	}
	if (sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp))
		t_fail("sched_setscheduler: %s", strerror(errno));
	if (setpriority(PRIO_PROCESS, gettid(), NICE))
		t_fail("setpriority: %s", strerror(errno));

	ho = t_force_block(&tf);

	pol = sched_getscheduler(0);
	if (pol != (SCHED_BATCH | SCHED_RESET_ON_FORK))
		t_fail("policy %#x, expected SCHED_BATCH|SCHED_RESET_ON_FORK",
		     pol);
	if (nice_of(gettid()) != NICE)
		t_fail("nice %d, expected %d", nice_of(gettid()), NICE);
	if (cpu >= 0) {
		if (sched_getaffinity(0, sizeof(now), &now))
			t_fail("sched_getaffinity: %s", strerror(errno));
		if (!CPU_EQUAL(&now, &one))
			t_fail("affinity has %d CPUs, expected only CPU %d",
			     CPU_COUNT(&now), cpu);
		if (sched_getcpu() != cpu)
			t_fail("running on CPU %d, pinned to %d",
			     sched_getcpu(), cpu);
	}
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	main_policy = sched_getscheduler(0);
	main_nice = nice_of(gettid());
	t_run_in_thread(sched_thread, NULL);
	if (sched_getscheduler(0) != main_policy ||
	    nice_of(gettid()) != main_nice)
		t_fail("main thread's policy or nice changed");
	return T_PASS;
}
