// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread accounting stays monotonic across a blocking submit. The
 * thread burns 300 ms of CPU first, so its counters are well above a fresh
 * worker's. After the submit none of these may have gone down:
 * getrusage(RUSAGE_THREAD) ru_utime, ru_stime, minflt, majflt, nvcsw,
 * nivcsw; utime and stime in /proc/thread-self/stat; the thread CPU clock;
 * and, where the kernel has them, rchar/wchar/syscr/syscw in
 * /proc/thread-self/io. Done in the group leader and in a second thread.
 * Blocking is forced by fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without carrying the accounting over:
 * the tid then reports the worker's near-zero counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/time.h>
#include "helpers.h"

#define BURN_NS		(300 * 1000 * 1000ULL)
#define NR_IO		4

struct acct {
	struct rusage ru;
	unsigned long long utime, stime, cpu_ns;
	long long io[NR_IO];
};

static const char * const io_keys[NR_IO] = {
	"rchar: ", "wchar: ", "syscr: ", "syscw: ",
};

static unsigned long long ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		t_fail("clock_gettime: %s", strerror(errno));
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void burn(void)
{
	unsigned long long start = ns(CLOCK_THREAD_CPUTIME_ID);
	unsigned long long wall = ns(CLOCK_MONOTONIC);
	volatile unsigned long x = 0;
	int i;

	while (ns(CLOCK_THREAD_CPUTIME_ID) - start < BURN_NS &&
	       ns(CLOCK_MONOTONIC) - wall < 10 * 1000000000ULL)
		for (i = 0; i < 100000; i++)
			x += i;
}

static void sample(struct acct *a)
{
	char buf[1024], *p;
	int i;

	if (getrusage(RUSAGE_THREAD, &a->ru))
		t_fail("getrusage: %s", strerror(errno));
	a->cpu_ns = ns(CLOCK_THREAD_CPUTIME_ID);
	if (t_read_text("/proc/thread-self/stat", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/stat: %s", strerror(errno));
	p = strrchr(buf, ')');
	/* fields 3 to 13, then utime and stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &a->utime, &a->stime) != 2)
		t_fail("can't parse /proc/thread-self/stat");
	for (i = 0; i < NR_IO; i++)
		a->io[i] = -1;
	if (t_read_text("/proc/thread-self/io", buf, sizeof(buf)))
		return;
	for (i = 0; i < NR_IO; i++) {
		p = strstr(buf, io_keys[i]);
		if (p)
			a->io[i] = strtoll(p + strlen(io_keys[i]), NULL, 10);
	}
}

#define MONO(who, what, b, a) do {					\
	if ((a) < (b))							\
		t_fail("%s: %s went down, %llu -> %llu", who, what,	\
		     (unsigned long long)(b), (unsigned long long)(a));	\
} while (0)

static unsigned long long us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000ULL + tv->tv_usec;
}

static void compare(const struct acct *b, const struct acct *a,
		    const char *who)
{
	int i;

	MONO(who, "ru_utime (us)", us(&b->ru.ru_utime), us(&a->ru.ru_utime));
	MONO(who, "ru_stime (us)", us(&b->ru.ru_stime), us(&a->ru.ru_stime));
	MONO(who, "ru_minflt", b->ru.ru_minflt, a->ru.ru_minflt);
	MONO(who, "ru_majflt", b->ru.ru_majflt, a->ru.ru_majflt);
	MONO(who, "ru_nvcsw", b->ru.ru_nvcsw, a->ru.ru_nvcsw);
	MONO(who, "ru_nivcsw", b->ru.ru_nivcsw, a->ru.ru_nivcsw);
	MONO(who, "stat utime", b->utime, a->utime);
	MONO(who, "stat stime", b->stime, a->stime);
	MONO(who, "thread CPU clock (ns)", b->cpu_ns, a->cpu_ns);
	for (i = 0; i < NR_IO; i++)
		if (b->io[i] >= 0)
			MONO(who, io_keys[i], b->io[i], a->io[i]);
}

static void test_rusage_monotonic(bool leader)
{
	const char *who = leader ? "leader" : "thread";
	struct acct before, after;
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_rusage");
	burn();
	sample(&before);

	ho = t_force_block(&tf);

	sample(&after);
	compare(&before, &after, who);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

int main(void)
{
	t_run_leader_and_thread(test_rusage_monotonic);
	return T_PASS;
}
