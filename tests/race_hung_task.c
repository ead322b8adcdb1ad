// SPDX-License-Identifier: GPL-2.0
/*
 * A submitter that handed off and then sleeps uninterruptibly for less than
 * the hung-task timeout is not reported hung. The hung-task detector
 * (khungtaskd) reports a task in state D whose context-switch count equals
 * the count it recorded at an earlier check at least a timeout ago. A
 * handoff moves the counts with the tid; the record must move with them.
 * Before, the exchange restarted the old task's counts at zero and left its
 * record: a small count that task reached again after a later handoff
 * matched a record from an earlier sleep, and khungtaskd reported a task
 * "blocked for more than N seconds" that slept a fraction of that. Seen in
 * a soak: a demoted submitter reported in its grace-period wait
 * (io_wq_handoff_loop(), cond_synchronize_rcu()).
 *
 * Delay point (a debug kernel with the hung-task detector; skipped
 * elsewhere): "demoted" makes a demoted submitter, done with its request,
 * sleep uninterruptibly for DEMOTED_MS before its grace-period wait, the
 * same wait made long enough for the detector to see.
 *
 * hung_task_timeout_secs is set to TIMEOUT_S (checks that often), above
 * DEMOTED_MS, so no single sleep can be reported. ROUNDS times the thread
 * submits openat(O_RDONLY | O_CREAT) of a FIFO whose writer comes
 * RELEASE_MS later: it hands off at its first sleep, and the task that
 * slept finishes the open and sleeps DEMOTED_MS as a demoted submitter. The
 * next round waits for an idle worker, which is such a task or a fresh
 * one, so the same tasks are demoted again and again, and the detector's
 * checks land in their sleeps. test_demoted_sleep_not_hung:
 * hung_task_detect_count doesn't move.
 *
 * Failed first on the debug kernel with the point and the counts restarted
 * at zero (sched_exec_runtime_move() before the swap): "5 hung tasks
 * reported, no sleep was longer than 1200 ms", dmesg naming the demoted
 * task in io_wq_handoff_loop()'s msleep, "blocked for more than 8 seconds".
 * On stock the opens sleep on io-wq, nobody sleeps at the point.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define HUNG_DIR	"/proc/sys/kernel"
#define TIMEOUT_S	"2"
#define DEMOTED_MS	1200
#define RELEASE_MS	200
#define ROUNDS		14
#define REAP_MS		20000
#define FIFO_UD		0xf1f0ULL

static char saved_timeout[32], saved_interval[32];

static long long hung_count(void)
{
	char buf[32];

	if (t_read_text(HUNG_DIR "/hung_task_detect_count", buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

/* async-signal-safe (no snprintf): from the SIGTERM handler too */
static void hung_write(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = write(fd, val, strlen(val));
	(void)n;
	close(fd);
}

static void hung_restore(void)
{
	hung_write(HUNG_DIR "/hung_task_check_interval_secs", saved_interval);
	hung_write(HUNG_DIR "/hung_task_timeout_secs", saved_timeout);
}

/* the harness' timeout: the detector's settings back, then fail */
static void hung_fatal(int sig)
{
	static const char msg[] = "FAIL: terminated\n";
	ssize_t n;

	(void)sig;
	hung_restore();
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(T_FAIL);
}

/* the detector on, checking every TIMEOUT_S seconds, until exit */
static void hung_setup(void)
{
	if (t_read_text(HUNG_DIR "/hung_task_timeout_secs", saved_timeout,
			sizeof(saved_timeout)) ||
	    t_read_text(HUNG_DIR "/hung_task_check_interval_secs",
			saved_interval, sizeof(saved_interval)) ||
	    hung_count() < 0)
		t_skip("no hung-task detector in this kernel");
	saved_timeout[strcspn(saved_timeout, "\n")] = 0;
	saved_interval[strcspn(saved_interval, "\n")] = 0;
	atexit(hung_restore);
	signal(SIGTERM, hung_fatal);
	t_write_file(HUNG_DIR, "hung_task_check_interval_secs", "0");
	t_write_file(HUNG_DIR, "hung_task_timeout_secs", TIMEOUT_S);
}

static void test_demoted_sleep_not_hung(struct io_uring *ring)
{
	long long ho = t_counter("handoffs");
	long long before, after;
	int i;

	hung_setup();
	t_delay_point_need("demoted", DEMOTED_MS);
	before = hung_count();
	for (i = 0; i < ROUNDS; i++) {
		struct t_fifo f;

		t_wait_idle_worker();
		t_fifo_init(&f, "hung-task");
		t_fifo_release_after(&f, RELEASE_MS);
		t_fifo_submit_open(ring, &f, FIFO_UD);
		t_fifo_reap_open(ring, &f, FIFO_UD, REAP_MS);
		t_fifo_exit(&f);
	}
	/* the last demoted sleep is over, and a check after it */
	usleep((DEMOTED_MS + 2 * 1000 * atoi(TIMEOUT_S)) * 1000);
	after = hung_count();
	if (after != before)
		t_fail("%lld hung tasks reported, no sleep was longer than %d ms",
		       after - before, DEMOTED_MS);
	if (t_mode_handoff())
		t_expect_handoff(ho);
}

int main(void)
{
	struct io_uring ring;

	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_demoted_sleep_not_hung(&ring);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
