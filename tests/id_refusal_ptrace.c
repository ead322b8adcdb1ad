// SPDX-License-Identifier: GPL-2.0
/*
 * Traced tasks and tracers are refused for a handoff. A forked child does
 * PTRACE_TRACEME and stops; while it is stopped, we, its tracer, do a
 * blocking submit; then the child, resumed with PTRACE_CONT, does one. In
 * both the fsync must complete with 0 and, in mode handoff, "handoffs"
 * must not move while "fallback_task" and the refusals file's "ptrace"
 * line do (skip if it does not, unless IOUH_EXPECT_HANDOFF=1). Blocking is
 * forced by fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off the identity of a traced task (the
 * tracer would be left attached to a task that no longer carries the tid)
 * or of a tracer (its tracees point back at the task_struct, not at the
 * tid).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "helpers.h"

struct refusal {
	long long ho, fb;
	long long rc;
};

static pid_t child;

/* never leave a stopped tracee behind when we fail or skip */
static void kill_child(void)
{
	if (child > 0)
		kill(child, SIGKILL);
}

static void refused_submit(struct refusal *r, const char *name)
{
	struct t_force tf;

	t_force_init(&tf, name);
	r->rc = t_refusal("ptrace");
	r->fb = t_counter("fallback_task");
	r->ho = t_force_block(&tf);
	t_force_exit(&tf);
}

static void expect_refused(const struct refusal *r)
{
	t_expect_unmoved("handoffs", r->ho);
	t_expect_moved("fallback_task", r->fb);
	if (t_mode_handoff() && t_refusal("ptrace") <= r->rc)
		t_fail("refusal ptrace did not move (%lld -> %lld)", r->rc,
		     t_refusal("ptrace"));
}

static void traced_child(void)
{
	struct refusal r;

	alarm(25);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		t_fail("PTRACE_TRACEME: %s", strerror(errno));
	raise(SIGSTOP);
	refused_submit(&r, "id_refusal_ptrace.tracee");
	expect_refused(&r);
	exit(T_PASS);
}

/* resume the child until it exits, hand it its signals */
static int run_child(pid_t pid)
{
	int st, sig;

	for (;;) {
		if (waitpid(pid, &st, 0) != pid)
			t_fail("waitpid: %s", strerror(errno));
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		if (WIFSIGNALED(st))
			t_fail("traced child killed by signal %d", WTERMSIG(st));
		sig = WSTOPSIG(st);
		if (sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig))
			t_fail("PTRACE_CONT: %s", strerror(errno));
	}
}

int main(void)
{
	struct refusal tracer;
	pid_t pid;
	int st, code;

	t_dir("IOUH_EXT4");
	atexit(kill_child);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid)
		traced_child();
	child = pid;
	if (waitpid(pid, &st, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
		t_fail("child status %#x, expected a SIGSTOP stop", st);

	/* a tracer now; judged once the child is gone, not left stopped */
	refused_submit(&tracer, "id_refusal_ptrace.tracer");
	if (ptrace(PTRACE_CONT, pid, NULL, NULL))
		t_fail("PTRACE_CONT: %s", strerror(errno));
	code = run_child(pid);
	child = 0;
	if (code != T_PASS)
		exit(code);
	expect_refused(&tracer);
	return T_PASS;
}
