// SPDX-License-Identifier: GPL-2.0
/*
 * The rseq registration survives a blocking submit. glibc registers an
 * rseq area per thread (skip if it did not, __rseq_size == 0). Pinned to
 * one CPU, the thread does the blocking submit; after it the area's cpu_id
 * (and cpu_id_start) must be that CPU, as must getcpu(); re-registering the
 * same area must still be refused with EBUSY, as before; and with a second
 * CPU, moving there by sched_setaffinity() must show up in cpu_id, which
 * only the kernel's update of a registered area does. Done in the group
 * leader and in a second thread. Blocking is forced by fsync of dirty data
 * on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without moving the rseq registration or
 * without forcing an update of it on the way out: the re-registration
 * succeeds, or cpu_id is stale or -1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include "helpers.h"

/* the length glibc registered, the original struct rseq size */
#define RSEQ_LEN	32

static struct rseq *area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() +
			       __rseq_offset);
}

static int getcpu_sys(void)
{
	unsigned int cpu;

	if (syscall(SYS_getcpu, &cpu, NULL, NULL))
		t_fail("getcpu: %s", strerror(errno));
	return cpu;
}

/* errno of registering our area again, 0 if it was not registered */
static int reregister(void)
{
	if (!syscall(SYS_rseq, area(), RSEQ_LEN, 0, RSEQ_SIG))
		return 0;
	return errno;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		t_fail("sched_setaffinity %d: %s", cpu, strerror(errno));
}

static void check_cpu(int want, const char *who, const char *when)
{
	volatile struct rseq *rs = area();
	int id = (int)rs->cpu_id, start = (int)rs->cpu_id_start;

	if (id != want || start != want)
		t_fail("%s, %s: rseq cpu_id %d cpu_id_start %d, expected %d",
		     who, when, id, start, want);
	if (getcpu_sys() != want)
		t_fail("%s, %s: getcpu %d, pinned to %d", who, when,
		     getcpu_sys(), want);
}

static void test_rseq_kept(bool leader)
{
	const char *who = leader ? "leader" : "thread";
	int a, b = -1, err;
	cpu_set_t all;
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_rseq");
	if (sched_getaffinity(0, sizeof(all), &all))
		t_fail("sched_getaffinity: %s", strerror(errno));
	for (a = 0; !CPU_ISSET(a, &all); a++)
		;
	for (b = a + 1; b < CPU_SETSIZE && !CPU_ISSET(b, &all); b++)
		;
	if (b == CPU_SETSIZE)
		b = -1;
	pin(a);
	check_cpu(a, who, "before");
	err = reregister();
	if (err != EBUSY)
		t_skip("can't probe the rseq registration: %s",
		     err ? strerror(err) : "not registered");

	ho = t_force_block(&tf);

	check_cpu(a, who, "after the submit");
	err = reregister();
	if (err != EBUSY)
		t_fail("%s: rseq re-registration after the submit: %s", who,
		     err ? strerror(err) : "accepted, area was unregistered");
	if (b >= 0) {
		pin(b);
		check_cpu(b, who, "after moving CPUs");
	}
	t_expect_handoff(ho);
	if (sched_setaffinity(0, sizeof(all), &all))
		t_fail("sched_setaffinity: %s", strerror(errno));
	t_force_exit(&tf);
}

int main(void)
{
	if (__rseq_size == 0)
		t_skip("glibc did not register rseq");
	t_run_leader_and_thread(test_rseq_kept);
	return T_PASS;
}
