// SPDX-License-Identifier: GPL-2.0
/*
 * A child that asks to be traced (PTRACE_TRACEME) while its parent is in the
 * handoff window is traced by its parent's identity afterwards, for good.
 *
 * The test process P (its leader, warm) forks C, then forces a blocking fsync
 * that hands off in mode handoff, the window widened to WINDOW_MS
 * (debug_window_ms). C waits until the window is open (mode handoff: a
 * worker of P waits it out; other modes: P sleeps in its submit), then calls
 * PTRACE_TRACEME, which links it to its parent as the tid names it then (in
 * mode handoff, the task that is about to hand off), and stops itself with
 * SIGSTOP. P, once its submit has returned: test_traced_stop_reported,
 * waitpid(__WALL | WUNTRACED) reports C stopped by SIGSTOP; then P execs
 * itself, which ends every other thread of P (its io-wq workers, the task
 * that handed off among them) and keeps P's tracees, and in the new image
 * test_tracee_kept: PTRACE_CONT of C still succeeds and C exits 0.
 *
 * Fails on a kernel/module that leaves the tracee on the list of the task
 * that handed off: that task's exit (exit_ptrace()) detaches C, P's
 * PTRACE_CONT fails with ESRCH.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "helpers.h"

#define WINDOW_MS	500
#define OPEN_MS		20000
#define STOP_MS		5000

/* C: once the window is open, PTRACE_TRACEME, say so, stop */
static void child(pid_t parent, int out)
{
	long long end = t_now_ms() + OPEN_MS;
	int open = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(T_CHILD_LIFE_S);
	while (!open && t_now_ms() < end) {
		if (t_mode_handoff())
			open = t_window_open(parent);
		else
			open = t_task_state(parent, parent) == 'S' ||
			       t_task_state(parent, parent) == 'D';
		if (!open)
			usleep(2000);
	}
	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		t_fail("child: PTRACE_TRACEME: %s", strerror(errno));
	if (write(out, open ? "T" : "L", 1) != 1)
		t_fail("child: write");
	raise(SIGSTOP);
	_exit(T_PASS);
}

static void test_traced_stop_reported(pid_t pid)
{
	int status;

	if (!t_wait_child_ms(pid, &status, WUNTRACED | __WALL, STOP_MS))
		t_fail("no stop of the tracee reported within %d ms", STOP_MS);
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
		t_fail("tracee: status 0x%x, expected stopped by SIGSTOP", status);
}

/* after the exec: P's other threads are gone, its tracee must not be */
static void test_tracee_kept(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_CONT, pid, 0, 0))
		t_fail("PTRACE_CONT of the child that asked to be traced in the window: %s",
		       strerror(errno));
	if (!t_wait_child_ms(pid, &status, WUNTRACED | __WALL, STOP_MS))
		t_fail("the tracee did not exit within %d ms of PTRACE_CONT",
		       STOP_MS);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
		t_fail("tracee: status 0x%x, expected exit %d", status, T_PASS);
}

int main(int argc, char *argv[])
{
	char arg[16];
	struct pollfd pfd;
	struct t_force tf;
	long long ho;
	int p[2];
	pid_t pid;
	char c = 0;

	if (argc == 3 && !strcmp(argv[1], "exec")) {
		test_tracee_kept(atoi(argv[2]));
		return T_PASS;
	}
	t_window_widen(WINDOW_MS);
	t_force_init(&tf, "window_traceme");
	if (pipe(p))
		t_fail("pipe");
	pid = fork();
	if (pid < 0)
		t_fail("fork");
	if (!pid)
		child(getppid(), p[1]);
	close(p[1]);
	ho = t_force_block(&tf);
	t_expect_handoff(ho);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (poll(&pfd, 1, STOP_MS) != 1 || read(p[0], &c, 1) != 1)
		t_fail("no word from the child");
	if (c != 'T' && t_mode_handoff())
		t_fail("the child never saw the window open");
	test_traced_stop_reported(pid);
	t_force_exit(&tf);
	/* exec skips the exit handlers: the window and the file by hand */
	t_window_delay(0);
	snprintf(arg, sizeof(arg), "%d", pid);
	execl("/proc/self/exe", argv[0], "exec", arg, (char *)NULL);
	t_fail("exec: %s", strerror(errno));
}
