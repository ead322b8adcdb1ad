// SPDX-License-Identifier: GPL-2.0
/*
 * A thread whose requested affinity no longer has an active CPU hands off
 * without a kernel warning, and keeps the affinity stock leaves it (E15).
 *
 * A non-leader thread, warm (an idle io-wq worker), pins itself to the last
 * CPU; that CPU goes offline, the scheduler moves the thread to its fallback
 * mask and keeps the requested mask (user_cpus_ptr) as it was. Then a forced
 * blocking submit (fsync of dirty ext4 data). After it, sched_getaffinity()
 * must read what it read before the submit, and the kernel must not have
 * warned (/proc/sys/kernel/tainted gains no TAINT_WARN). The CPU comes back
 * online at the end, and at exit should the test fail first. Needs root, 2
 * CPUs and CPU hotplug; skips otherwise, or if the kernel had warned before.
 *
 * Fails on a module that sets the requested mask on the identity with a
 * WARN on failure: sched_setaffinity() of a mask without an active CPU
 * returns -EINVAL, the same state a cpuset change reaches.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define TAINT_WARN	(1UL << 9)

static char online_path[128];
static int offlined;

static void cpu_online(int on)
{
	int fd = open(online_path, O_WRONLY);

	if (fd < 0 || write(fd, on ? "1" : "0", 1) != 1) {
		if (fd >= 0)
			close(fd);
		if (!on)
			t_skip("%s: %s (no CPU hotplug?)", online_path,
			       strerror(errno));
		t_fail("putting the CPU back online: %s", strerror(errno));
	}
	close(fd);
	offlined = !on;
}

/* no t_fail() here: exit() runs it */
static void cpu_online_at_exit(void)
{
	int fd;

	if (!offlined)
		return;
	fd = open(online_path, O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		fprintf(stderr, "%s: %s\n", online_path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static unsigned long tainted(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (!f || fscanf(f, "%lu", &t) != 1)
		t_fail("reading /proc/sys/kernel/tainted");
	fclose(f);
	return t;
}

static void *test_requested_cpu_offline(void *arg)
{
	cpu_set_t all, one, before, after;
	struct t_force tf;
	long long ho;
	int cpu;

	(void)arg;
	t_force_init(&tf, "id_affinity_offline");
	if (sched_getaffinity(0, sizeof(all), &all))
		t_fail("sched_getaffinity: %s", strerror(errno));
	if (CPU_COUNT(&all) < 2)
		t_skip("needs 2 CPUs");
	for (cpu = CPU_SETSIZE - 1; !CPU_ISSET(cpu, &all); cpu--)
		;
	if (cpu == 0)
		t_skip("CPU 0 is the last one, it can't go offline");
	snprintf(online_path, sizeof(online_path),
		 "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (tainted() & TAINT_WARN)
		t_skip("the kernel has warned already, a new warning would not show");
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		t_fail("sched_setaffinity: %s", strerror(errno));
	cpu_online(0);
	if (sched_getaffinity(0, sizeof(before), &before))
		t_fail("sched_getaffinity: %s", strerror(errno));

	ho = t_force_block(&tf);

	if (sched_getaffinity(0, sizeof(after), &after))
		t_fail("sched_getaffinity: %s", strerror(errno));
	cpu_online(1);
	if (tainted() & TAINT_WARN)
		t_fail("the kernel warned (TAINT_WARN), see dmesg");
	if (!CPU_EQUAL(&before, &after))
		t_fail("affinity has %d CPUs after the submit, %d before",
		       CPU_COUNT(&after), CPU_COUNT(&before));
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	atexit(cpu_online_at_exit);
	t_run_in_thread(test_requested_cpu_offline, NULL);
	return T_PASS;
}
