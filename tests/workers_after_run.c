// SPDX-License-Identifier: GPL-2.0
/*
 * Blocking requests leave no more io-wq workers alive than the stock punt
 * does. Stock's punt forks a worker only when none is idle, and its worker
 * is idle again microseconds after its request; after a run at queue depth
 * 1 the thread has one.
 *
 * (a) A thread whose one idle worker can't take its identity (forked
 *     before the thread's ioprio changed): a blocking request takes the
 *     punt, and the punt wakes that worker. One worker after the CQE.
 * (b) ROUNDS forced blocking submits in a row (a dirty ext4 fsync each,
 *     see helpers.h), each THINK_MS after the previous CQE, from one thread
 *     with one ring: one worker after the run. Mode handoff also wants a
 *     handoff. The think time: stock's worker, done, idles within
 *     microseconds, but a submit right after the CQE can still beat it
 *     (then io-wq forks a second worker: seen once in six runs on a busy
 *     TCG host); a normal grace period there takes tens of ms.
 * Workers are counted as the threads in /proc/self/task other than the
 * test's one. Mode handoff runs with policy "inline".
 *
 * Fails on a core that forks a spare worker at a reservation that found
 * none it could hold ((a): two workers, the spare running the punt), or
 * whose submitter, once it handed off, waits out a normal grace period
 * before it idles as a worker: the next punt finds no idle worker and
 * forks one ((b): two to four workers, "fallback_worker" moving).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/ioprio.h>
#include "helpers.h"

#define ROUNDS		20
#define THINK_MS	5
#define MAX_WORKERS	1

/* t_find_thread()'s visit of each thread: count those but the caller's */
static int count_other(pid_t pid, pid_t tid, void *arg)
{
	(void)pid;
	if (tid != gettid())
		(*(int *)arg)++;
	return 0;
}

/*
 * The process's threads but the caller: its io-wq workers, as it has no
 * other threads. Not by comm (t_worker_tids()): a worker forked a moment
 * ago and not run yet still has ours.
 */
static int other_threads(void)
{
	int n = 0;

	t_find_thread(getpid(), count_other, &n);
	return n;
}

static void expect_workers(const char *what, long long ho)
{
	int n = other_threads();

	if (n > MAX_WORKERS)
		t_fail("%s: %d io-wq workers (%lld handoffs, fallback_worker %lld), stock leaves %d",
		       what, n, t_counter("handoffs") - ho,
		       t_counter("fallback_worker"), MAX_WORKERS);
}

/*
 * In a child (its ioprio is its own): the one idle worker was forked before
 * the ioprio changed, so it can't take the identity (worker_ioprio) and a
 * blocking fsync takes the punt, which that worker runs
 */
static void refused_worker_child(void)
{
	struct t_force tf;
	long long ho;

	t_force_init(&tf, "workers_after_run.refused");
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, gettid(),
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3)))
		t_fail("ioprio_set: %s", strerror(errno));
	ho = t_force_block(&tf);
	expect_workers("a punt past a refused idle worker", ho);
	t_force_exit(&tf);
}

static void test_punt_uses_refused_worker(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		refused_worker_child();
		_exit(T_PASS);
	}
	if (!t_wait_child_ms(pid, &status, 0, 20000))
		t_fail("the refused-worker child didn't exit");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
		t_fail("the refused-worker child: status %#x", status);
}

static void test_run_at_depth_one_keeps_one(void)
{
	struct t_force tf;
	long long ho = 0;
	int i;

	t_force_init(&tf, "workers_after_run");
	for (i = 0; i < ROUNDS; i++) {
		long long before = t_force_block(&tf);

		if (!i)
			ho = before;
		usleep(THINK_MS * 1000);
	}
	expect_workers("a run at depth 1", ho);
	if (t_mode_handoff())
		t_expect_handoff(ho);
	t_force_exit(&tf);
}

int main(void)
{
	char policy[32];

	if (t_mode_handoff()) {
		t_setting_get("policy", policy, sizeof(policy));
		t_setting_set("policy", "inline");
	}
	test_punt_uses_refused_worker();
	test_run_at_depth_one_keeps_one();
	if (t_mode_handoff())
		t_setting_set("policy", policy);
	return T_PASS;
}
