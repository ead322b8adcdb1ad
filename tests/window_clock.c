// SPDX-License-Identifier: GPL-2.0
/*
 * CPU clocks stay monotonic across the handoff window.
 *
 * A non-leader thread T, warm (an idle io-wq worker), first burns 300 ms of
 * CPU, then submits openat(O_RDONLY | O_CREAT) of a FIFO whose writer opens
 * 800 ms later; the window is widened to 300 ms (debug_window_ms). Another
 * thread U samples, from before T's submit until T has reaped the CQE, as
 * fast as it can with a 1 ms sleep between rounds: T's thread CPU clock
 * (pthread_getcpuclockid(), the runtime), T's user + system time clock (the
 * per-thread CPUCLOCK_PROF clock id, as glibc builds it from the tid),
 * CLOCK_PROCESS_CPUTIME_ID, times()' tms_utime + tms_stime and
 * getrusage(RUSAGE_SELF)'s ru_utime + ru_stime. While T's submit is in
 * flight, U also reads T's two clocks in a tight loop between rounds,
 * so that some read looks the tid up just before it moves and samples the
 * task just after. No series may ever go back, and no read of T's clock
 * after T read its own (CLOCK_THREAD_CPUTIME_ID) just before the submit may
 * be below that. In stock/disabled (no handoff, no window) the same must
 * hold.
 *
 * Fails on a kernel/module that takes the runtime off the task that hands
 * off at its sleep and adds it to the worker only when that takes the
 * identity: in between, the tid's clock reads about 0 and the process
 * totals dip. Fails too where the exchange zeroes the source's runtime
 * while a reader that looked the tid up before the exchange may still read
 * it (11 of 15 runs with the tight loop at 4365616; at 39e662b, which
 * fixed that for the runtime, the user + system clock still dropped).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/times.h>
#include "helpers.h"

#define WINDOW_MS	300
#define RELEASE_MS	800
#define BURN_CPU_MS	300
#define BURN_WALL_MS	5000
#define REAP_MS		5000
#define PRE_SAMPLES	3
#define SAMPLE_MAX_MS	15000
#define OPEN_UD		0xf1f0ULL
/* reads of T's clock alone between two rounds while the submit is in flight */
#define TIGHT_READS	2000

/* T's progress, as U sees it */
enum {
	PH_WAIT,
	PH_SAMPLE,	/* U samples, T hasn't read its clock yet */
	PH_SUBMIT,	/* T read its clock and submits */
	PH_RETURNED,	/* T's submit returned */
	PH_DONE,	/* T reaped the CQE, U takes one more round */
};

static const char * const phase_name[] = {
	"waiting", "before the submit", "during the submit",
	"after the submit", "after the CQE",
};

enum { S_THREAD, S_TPROF, S_PROCESS, S_TIMES, S_RUSAGE, S_NR };

static const char * const series_name[S_NR] = {
	"T's thread CPU clock (ns)", "T's user + system clock (ns)",
	"CLOCK_PROCESS_CPUTIME_ID (ns)",
	"times() utime + stime (ticks)", "getrusage() utime + stime (us)",
};

struct sampler {
	clockid_t tclock;
	/* T's per-thread CPUCLOCK_PROF clock, see prof_clock() */
	clockid_t tprof;
	int phase;
	/* T's clock just before its submit, ns */
	long long t_before;
	long samples;
	long in_window;
	int bad;
	char why[256];
};

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long read_clock(clockid_t clock, const char *what)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		t_fail("clock_gettime of %s: %s", what, strerror(errno));
	return ts_ns(&ts);
}

/* the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_PROF), as glibc's */
static clockid_t prof_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid) << 3) | 4 | 0;
}

static void read_series(struct sampler *s, long long *v)
{
	struct timespec ts;
	struct rusage ru;
	struct tms tm;

	v[S_THREAD] = read_clock(s->tclock, "T's clock");
	v[S_TPROF] = read_clock(s->tprof, "T's user + system clock");
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		t_fail("clock_gettime(CLOCK_PROCESS_CPUTIME_ID): %s",
		     strerror(errno));
	v[S_PROCESS] = ts_ns(&ts);
	if (times(&tm) == (clock_t)-1)
		t_fail("times: %s", strerror(errno));
	v[S_TIMES] = (long long)tm.tms_utime + tm.tms_stime;
	if (getrusage(RUSAGE_SELF, &ru))
		t_fail("getrusage: %s", strerror(errno));
	v[S_RUSAGE] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
		      ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* keep the first violation, count them all */
static void bad(struct sampler *s, int ph, const char *what, long long was,
		long long now)
{
	if (!s->bad++)
		snprintf(s->why, sizeof(s->why), "%s read %lld after %lld, %s",
			 what, now, was, phase_name[ph]);
}

/* T's clocks, as fast as we can, while T's submit is in flight */
static void tight_reads(struct sampler *s, long long *last)
{
	long long v, p;
	int i;

	for (i = 0; i < TIGHT_READS; i++) {
		v = read_clock(s->tclock, "T's clock");
		p = read_clock(s->tprof, "T's user + system clock");
		if (v < last[S_THREAD])
			bad(s, PH_SUBMIT, series_name[S_THREAD], last[S_THREAD],
			    v);
		if (v < s->t_before)
			bad(s, PH_SUBMIT, "T's thread CPU clock (ns), against its value before the submit,",
			    s->t_before, v);
		if (p < last[S_TPROF])
			bad(s, PH_SUBMIT, series_name[S_TPROF], last[S_TPROF],
			    p);
		last[S_THREAD] = v;
		last[S_TPROF] = p;
	}
}

static void *sample(void *arg)
{
	struct timespec ms = { 0, 1000 * 1000 };
	long long end = t_now_ms() + SAMPLE_MAX_MS;
	long long last[S_NR], v[S_NR];
	struct sampler *s = arg;
	int i, ph;

	while (__atomic_load_n(&s->phase, __ATOMIC_ACQUIRE) < PH_SAMPLE &&
	       t_now_ms() < end)
		nanosleep(&ms, NULL);
	while (t_now_ms() < end) {
		ph = __atomic_load_n(&s->phase, __ATOMIC_ACQUIRE);
		read_series(s, v);
		for (i = 0; s->samples && i < S_NR; i++)
			if (v[i] < last[i])
				bad(s, ph, series_name[i], last[i], v[i]);
		if (ph >= PH_SUBMIT && v[S_THREAD] < s->t_before)
			bad(s, ph, "T's thread CPU clock (ns), against its value before the submit,",
			    s->t_before, v[S_THREAD]);
		memcpy(last, v, sizeof(last));
		__atomic_store_n(&s->samples, s->samples + 1, __ATOMIC_RELEASE);
		if (t_mode_handoff() && ph >= PH_SUBMIT &&
		    t_window_open(getpid()))
			s->in_window++;
		if (ph >= PH_DONE)
			break;
		if (ph == PH_SUBMIT)
			tight_reads(s, last);
		else
			nanosleep(&ms, NULL);
	}
	return NULL;
}

/* T: @ms of CPU on our own clock, so a clock that drops shows */
static void burn(int ms)
{
	long long start = t_now_ms();
	struct timespec ts;
	long long t0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = ts_ns(&ts);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while (ts_ns(&ts) - t0 < ms * 1000000LL &&
	       t_now_ms() - start < BURN_WALL_MS);
}

static void set_phase(struct sampler *s, int ph)
{
	__atomic_store_n(&s->phase, ph, __ATOMIC_RELEASE);
}

static void *test_clocks(void *arg)
{
	struct timespec ms = { 0, 1000 * 1000 }, ts;
	struct sampler s = { .phase = PH_WAIT };
	long long before, end;
	struct t_fifo f;
	pthread_t u;
	struct t_force tf;
	int ret;

	(void)arg;
	t_force_init(&tf, "window_clock");
	t_fifo_init(&f, "window_clock");
	burn(BURN_CPU_MS);
	t_wait_idle_worker();
	ret = pthread_getcpuclockid(pthread_self(), &s.tclock);
	if (ret)
		t_fail("pthread_getcpuclockid: %s", strerror(ret));
	s.tprof = prof_clock(gettid());
	read_clock(s.tprof, "T's user + system clock");
	ret = pthread_create(&u, NULL, sample, &s);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));

	/* U has a baseline before anything moves */
	set_phase(&s, PH_SAMPLE);
	end = t_now_ms() + 2000;
	while (__atomic_load_n(&s.samples, __ATOMIC_ACQUIRE) < PRE_SAMPLES &&
	       t_now_ms() < end)
		nanosleep(&ms, NULL);

	t_fifo_release_after(&f, RELEASE_MS);
	before = t_counter("handoffs");
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	s.t_before = ts_ns(&ts);
	set_phase(&s, PH_SUBMIT);
	t_fifo_submit_open(&tf.ring, &f, OPEN_UD);
	set_phase(&s, PH_RETURNED);
	t_fifo_reap_open(&tf.ring, &f, OPEN_UD, RELEASE_MS + REAP_MS);
	set_phase(&s, PH_DONE);
	ret = pthread_join(u, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));

	if (s.bad)
		t_fail("%d non-monotonic reads, the first: %s", s.bad, s.why);
	if (s.samples < PRE_SAMPLES + 1)
		t_fail("only %ld samples were taken", s.samples);
	if (t_mode_handoff())
		fprintf(stderr, "note: %ld samples, %ld of them inside the window; T's clock was %lld ms before the submit\n",
			s.samples, s.in_window, s.t_before / 1000000);
	t_expect_handoff(before);
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_window_widen(WINDOW_MS);
	t_run_in_thread(test_clocks, NULL);
	return T_PASS;
}
