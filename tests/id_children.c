// SPDX-License-Identifier: GPL-2.0
/*
 * Children stay with the thread that forked them across a blocking submit:
 * a child forked before the submit (it waits on a pipe) is, after the
 * submit, still waitable by that very thread with __WNOTHREAD, which only
 * looks at the calling thread's own children, and is reaped with the right
 * exit status once released. Done from a non-leader thread and from the
 * group leader of a forked test process, whose own exit must then still be
 * reported to us with its status. Blocking is forced by fsync of dirty data
 * on ext4, see helpers.c.
 *
 * Fails on a kernel that leaves ->children (and the children's
 * ->real_parent) on the task that blocked: waitpid(__WNOTHREAD) returns
 * ECHILD. The leader part fails if leadership moves without the leader's
 * place among its parent's children or its exit_signal: the test process'
 * exit is never reported, or not with its status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "helpers.h"

#define CHILD_CODE	42
#define LEADER_CODE	0

static void fork_and_reap(const char *who)
{
	struct t_force tf;
	long long ho;
	pid_t pid, ret;
	int p[2], st;
	char c;

	t_force_init(&tf, "id_children");
	if (pipe(p))
		t_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? CHILD_CODE : 3);
	}
	close(p[0]);

	ho = t_force_block(&tf);

	ret = waitpid(pid, &st, WNOHANG | __WNOTHREAD);
	if (ret)
		t_fail("%s: waitpid(WNOHANG) of the live child: %d (%s)", who,
		     ret, ret < 0 ? strerror(errno) : "reaped early");
	if (write(p[1], "x", 1) != 1)
		t_fail("write: %s", strerror(errno));
	close(p[1]);
	ret = waitpid(pid, &st, __WNOTHREAD);
	if (ret != pid)
		t_fail("%s: waitpid(__WNOTHREAD): %d (%s)", who, ret,
		     ret < 0 ? strerror(errno) : "wrong pid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != CHILD_CODE)
		t_fail("%s: child status %#x, expected exit %d", who, st,
		     CHILD_CODE);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

static void *thread_fn(void *arg)
{
	(void)arg;
	fork_and_reap("thread");
	return NULL;
}

struct reap_poll {
	pid_t pid;
	int st;
};

/* has the test process exited: waitpid(WNOHANG) reaped it */
static bool process_reaped(void *arg)
{
	struct reap_poll *r = arg;
	pid_t ret = waitpid(r->pid, &r->st, WNOHANG);

	if (ret && ret != r->pid)
		t_fail("waitpid test process: %s", strerror(errno));
	return ret == r->pid;
}

/* a test process whose leader does it, its exit code must reach us */
static void leader_part(void)
{
	struct reap_poll r;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		alarm(25);
		fork_and_reap("leader");
		exit(LEADER_CODE);
	}
	r.pid = pid;
	if (!t_wait_until(process_reaped, &r, 2000, 10))
		t_fail("test process %d never reported its exit", pid);
	st = r.st;
	if (WIFSIGNALED(st))
		t_fail("test process killed by signal %d", WTERMSIG(st));
	if (!WIFEXITED(st))
		t_fail("test process status %#x", st);
	/* its verdict, it printed why */
	if (WEXITSTATUS(st) != LEADER_CODE)
		exit(WEXITSTATUS(st));
}

int main(void)
{
	/* first, while we are single threaded and have no ring */
	leader_part();
	t_run_in_thread(thread_fn, NULL);
	return T_PASS;
}
