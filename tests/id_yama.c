// SPDX-License-Identifier: GPL-2.0
/*
 * A Yama ptrace exception survives a blocking submit of the group leader.
 * With kernel.yama.ptrace_scope = 1 a process may be traced only by an
 * ancestor or by the tracer it named with PR_SET_PTRACER, and Yama keys that
 * exception by the group leader's task_struct. A forked process P, single
 * threaded so its leader is the submitter, names a sibling Q its tracer and
 * does a blocking fsync, with a handoff in mode handoff. Then Q must be able
 * to PTRACE_SEIZE P, while a sibling R that P didn't name must not (that R
 * gets EPERM shows the scope is in force). P, Q and R run as uid 65534, so
 * CAP_SYS_PTRACE doesn't bypass the scope. Skips without Yama. Blocking is
 * forced by fsync of dirty data on ext4, see helpers.c.
 *
 * After the handoff P has a posix timer fire: the timer takes siglock in a
 * hard interrupt, Yama's lock was taken with interrupts on by the prctl, and
 * a handoff must not have nested Yama's lock in siglock.
 *
 * Fails on a kernel that moves the leadership without Yama's relation: it
 * still names the old leader, an io-wq worker now, and Q gets EPERM. On the
 * debug kernel, fails (lockdep: irq lock inversion, in the lane's splat
 * check) where the exchange moves the relation under siglock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "helpers.h"

#define SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
#define NOBODY	65534

static char old_scope[16];
static pid_t main_pid;

static void write_scope(const char *v)
{
	int fd = open(SCOPE, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		t_fail("writing %s: %s", SCOPE, strerror(errno));
	close(fd);
}

/* at exit of the test, not of its children (t_fail() exits too) */
static void restore_scope(void)
{
	if (getpid() == main_pid)
		write_scope(old_scope);
}

static void drop_to_nobody(void)
{
	if (setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		t_fail("dropping to uid %d: %s", NOBODY, strerror(errno));
	/* a setuid makes the process undumpable, and so untraceable */
	if (prctl(PR_SET_DUMPABLE, 1))
		t_fail("PR_SET_DUMPABLE: %s", strerror(errno));
}

/* a posix timer's expiry queues its signal under siglock, in hard irq */
static void fire_posix_timer(void)
{
	struct itimerspec its = { .it_value.tv_nsec = 1000000 };
	struct sigevent sev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGUSR1,
	};
	sigset_t set;
	timer_t t;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		t_fail("sigprocmask: %s", strerror(errno));
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) ||
	    timer_settime(t, 0, &its, NULL))
		t_fail("posix timer: %s", strerror(errno));
	if (sigwait(&set, &sig) || sig != SIGUSR1)
		t_fail("sigwait for the timer: %d", sig);
	timer_delete(t);
}

static void get(int fd, void *v, size_t n)
{
	if (read(fd, v, n) != (ssize_t)n)
		_exit(20);
}

static void put(int fd, const void *v, size_t n)
{
	if (write(fd, v, n) != (ssize_t)n)
		_exit(21);
}

/* P: name @tracer, then the blocking submit of its leader */
static void named_process(int in, int out)
{
	pid_t tracer;
	long long ho;
	struct t_force tf;
	char c;

	/* the file needs root, the ring and its worker don't care */
	t_force_init(&tf, "id_yama");
	drop_to_nobody();
	get(in, &tracer, sizeof(tracer));
	if (prctl(PR_SET_PTRACER, tracer, 0, 0, 0))
		t_fail("PR_SET_PTRACER %d: %s", tracer, strerror(errno));
	ho = t_force_block(&tf);
	t_expect_handoff(ho);
	fire_posix_timer();
	put(out, "B", 1);
	get(in, &c, 1);
	_exit(0);
}

/* Q or R: seize @target; @named: Q, it must work, else R, EPERM */
static void tracer_process(int in, int named)
{
	pid_t target;

	drop_to_nobody();
	get(in, &target, sizeof(target));
	if (ptrace(PTRACE_SEIZE, target, 0, 0)) {
		if (named)
			t_fail("the named tracer can't seize the leader that blocked: %s",
			     strerror(errno));
		if (errno != EPERM)
			t_fail("an unnamed process can't seize, but with %s",
			     strerror(errno));
		_exit(0);
	}
	if (!named)
		t_fail("an unnamed process could seize: the scope is not in force");
	/* our exit detaches */
	_exit(0);
}

static pid_t spawn(void (*fn)(int, int), int in, int arg)
{
	pid_t pid = fork();

	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid)
		fn(in, arg);
	return pid;
}

static void reap(pid_t pid, const char *who)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		t_fail("waitpid %s: %s", who, strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		t_fail("%s failed (status %#x), see above", who, st);
}

static void test_yama_leader(void)
{
	int to_p[2], from_p[2], to_q[2], to_r[2];
	pid_t p, q, r;
	char c;

	if (pipe(to_p) || pipe(from_p) || pipe(to_q) || pipe(to_r))
		t_fail("pipe: %s", strerror(errno));
	p = spawn(named_process, to_p[0], from_p[1]);
	q = spawn(tracer_process, to_q[0], 1);
	r = spawn(tracer_process, to_r[0], 0);

	put(to_p[1], &q, sizeof(q));
	if (read(from_p[0], &c, 1) != 1)
		t_fail("the named process died before its submit returned");
	put(to_q[1], &p, sizeof(p));
	reap(q, "the named tracer");
	put(to_r[1], &p, sizeof(p));
	reap(r, "the unnamed process");
	put(to_p[1], "D", 1);
	reap(p, "the process that blocked");
}

int main(void)
{
	if (t_read_text(SCOPE, old_scope, sizeof(old_scope)))
		t_skip("no Yama (%s)", SCOPE);
	if (geteuid())
		t_skip("needs root");
	old_scope[strcspn(old_scope, "\n")] = '\0';
	main_pid = getpid();
	write_scope("1");
	atexit(restore_scope);
	test_yama_leader();
	return T_PASS;
}
