// SPDX-License-Identifier: GPL-2.0
/*
 * Every thread of a child process follows its parent thread's identity,
 * not only the child's leader.
 *
 * A non-leader thread P forks a child C that starts a second thread C2
 * before P's forced blocking submit (fsync of dirty ext4 data). After the
 * submit C2 calls PTRACE_TRACEME, which links it to its real parent, and
 * reads TracerPid from /proc/thread-self/status: it must be P's tid, as
 * on stock. SIGCHLD is ignored, so the traced C2 is reaped as it exits.
 *
 * Fails on a kernel that moves ->real_parent of the child's leader only
 * (the exchange walked the children, not their threads): C2 is traced by
 * the task that handed off, an io-wq worker by then, whose tid it reads.
 * Found by the debug kernel's soak as a KASAN use-after-free in
 * __do_wait(), once that worker had exited and the child's leadership had
 * moved to such a thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include "helpers.h"

#define RESULT_MS	10000

static int go[2], res[2];

/* C2: after P's submit, trace-me, then report the tracer's tid */
static void *child_thread(void *arg)
{
	char line[256];
	int tracer = -1;
	FILE *f;
	char c;

	(void)arg;
	if (read(go[0], &c, 1) != 1)
		return NULL;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
		tracer = -errno;
	} else {
		f = fopen("/proc/thread-self/status", "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "TracerPid: %d", &tracer) == 1)
				break;
		if (f)
			fclose(f);
	}
	if (write(res[1], &tracer, sizeof(tracer)) != sizeof(tracer))
		_exit(3);
	return NULL;
}

static void child(void)
{
	pthread_t c2;
	int ready = 0;

	close(go[1]);
	close(res[0]);
	if (pthread_create(&c2, NULL, child_thread, NULL))
		_exit(3);
	if (write(res[1], &ready, sizeof(ready)) != sizeof(ready))
		_exit(3);
	pthread_join(c2, NULL);
	_exit(0);
}

/* one int from C over res, within RESULT_MS */
static int read_result(const char *what)
{
	struct pollfd pfd = { .fd = res[0], .events = POLLIN };
	int v;

	if (poll(&pfd, 1, RESULT_MS) != 1)
		t_fail("no %s from the child within %d ms", what, RESULT_MS);
	if (read(res[0], &v, sizeof(v)) != sizeof(v))
		t_fail("reading the child's %s: %s", what, strerror(errno));
	return v;
}

static void *test_child_thread_traceme(void *arg)
{
	struct t_force tf;
	long long ho;
	pid_t pid, me = gettid();
	int tracer;

	(void)arg;
	t_force_init(&tf, "id_children_threads");
	if (pipe(go) || pipe(res))
		t_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid)
		child();
	close(go[0]);
	close(res[1]);
	read_result("ready");

	ho = t_force_block(&tf);

	if (write(go[1], "x", 1) != 1)
		t_fail("write: %s", strerror(errno));
	tracer = read_result("TracerPid");
	if (tracer < 0)
		t_fail("PTRACE_TRACEME in the child's second thread: %s",
		       strerror(-tracer));
	if (tracer != me)
		t_fail("the child's second thread is traced by tid %d, not by its parent thread %d",
		       tracer, me);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	/* the traced thread is reaped as it exits, by whichever tracer */
	signal(SIGCHLD, SIG_IGN);
	t_run_in_thread(test_child_thread_traceme, NULL);
	return T_PASS;
}
