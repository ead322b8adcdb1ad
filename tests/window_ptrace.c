// SPDX-License-Identifier: GPL-2.0
/*
 * A tracer that attaches to a tid in the handoff window traces the
 * identity afterwards.
 *
 * A child process C (its group leader, warm: an idle io-wq worker) submits
 * openat(O_RDONLY | O_CREAT) of a FIFO whose writer, a thread of C, opens
 * 1500 ms later; the window is widened to 300 ms (debug_window_ms). The
 * parent P waits until C's tid sleeps, plus 50 ms, then
 * ptrace(PTRACE_SEIZE) it. C, once its submit has returned, writes a byte
 * to P and sleeps on. After that byte: /proc/<C>/status must show P as
 * TracerPid, PTRACE_INTERRUPT must succeed and waitpid(__WALL) must report
 * the PTRACE_EVENT_STOP within 2 s; then P detaches, kills C and reaps it.
 * In stock/disabled (no handoff, no window) the same must hold.
 *
 * Fails on a kernel/module that leaves a tracer attached in the window on
 * the task that handed off (an io-wq worker now): C's tid is untraced,
 * TracerPid 0 and PTRACE_INTERRUPT fails with ESRCH.
 *
 * test_seize_worker, review item E2: the same, but P seizes C's io-wq
 * worker W (the one a handoff reserved, checked untraced then) in the
 * window. The tracer traces the tid it seized: after C's submit C is
 * untraced and W's tid traced by P, as in stock, where W is the worker
 * that runs the punted open. Failed first (module before the fix): the
 * identity took the worker's tracer along, "TracerPid of the child P
 * after seizing its worker, expected 0" (and with C traced too, the two
 * ptrace_entry links would have cross-linked the tracers' lists).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "helpers.h"

#define WINDOW_MS	300
#define RELEASE_MS	1500
/* after C is seen asleep, inside the window */
#define SETTLE_MS	50
#define READY_MS	10000
#define ASLEEP_MS	5000
/* C's byte after its submit: past the window, not waiting for the writer */
#define SUBMIT_MS	(WINDOW_MS + 5000)
#define STOP_MS		2000
#define REAP_MS		5000
#define OPEN_UD		0xf1f0ULL

/* C: warm up, 'R', submit the FIFO open, 'D', then sleep until killed */
static void child(int out, struct t_fifo *f)
{
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	struct io_uring_sqe *sqe;
	struct t_force tf;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(T_CHILD_LIFE_S);
	t_force_init(&tf, "window_ptrace");
	sqe = io_uring_get_sqe(&tf.ring);
	if (!sqe)
		t_fail("child: no SQE");
	t_fifo_prep_open(f, sqe, OPEN_UD);
	t_fifo_release_after(f, RELEASE_MS);
	if (write(out, "R", 1) != 1)
		t_fail("child: write: %s", strerror(errno));
	ret = t_submit(&tf.ring);
	if (ret != 1)
		t_fail("child: submit returned %d", ret);
	if (write(out, "D", 1) != 1)
		t_fail("child: write: %s", strerror(errno));
	for (;;)
		nanosleep(&nap, NULL);
}

/* the byte @want from C within @ms; 0 if it exited or took too long */
static int wait_byte(int fd, char want, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long end = t_now_ms() + ms;
	char c;

	while (t_now_ms() < end) {
		int ret = poll(&pfd, 1, end - t_now_ms());

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return 0;
		return read(fd, &c, 1) == 1 && c == want;
	}
	return 0;
}

/*
 * Kill C and reap it; with __WALL any task of C we might be tracing, which
 * would hold the leader's reaping up. 0 if C wasn't reaped in time.
 */
static int kill_and_reap(pid_t pid)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	long long end = t_now_ms() + REAP_MS;
	pid_t ret;
	int st;

	kill(pid, SIGKILL);
	do {
		ret = waitpid(-1, &st, __WALL | WNOHANG);
		if (ret == pid)
			return 1;
		if (ret < 0 && errno != EINTR)
			return 0;
		if (!ret)
			nanosleep(&tick, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/* before a failure: don't leave C behind */
static void give_up(pid_t pid)
{
	if (kill_and_reap(pid))
		t_remove_file("window_ptrace", pid);
}

static pid_t tracer_of(pid_t pid)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (t_read_text(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nTracerPid:");
	return p ? atoi(p + strlen("\nTracerPid:")) : -1;
}

/* PTRACE_EVENT_STOP of the interrupted C within STOP_MS, in @st */
static int wait_stop(pid_t pid, int *st)
{
	struct timespec tick = { 0, 1000 * 1000 };
	long long end = t_now_ms() + STOP_MS;
	pid_t ret;

	do {
		ret = waitpid(pid, st, __WALL | WNOHANG);
		if (ret == pid)
			return 1;
		if (ret < 0 && errno != EINTR) {
			int e = errno;

			give_up(pid);
			t_fail("waitpid of the tracee: %s", strerror(e));
		}
		nanosleep(&tick, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/* is @tid @pid's io-wq worker, named iou-wrk-<pid>? */
static int is_worker(pid_t pid, pid_t tid, void *arg)
{
	char path[64], name[64], want[32];

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	snprintf(want, sizeof(want), "iou-wrk-%d\n", pid);
	return !t_read_text(path, name, sizeof(name)) && !strcmp(name, want);
}

static pid_t fork_child(int p[2], struct t_fifo *f)
{
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		t_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		close(p[0]);
		child(p[1], f);
	}
	close(p[1]);
	if (!wait_byte(p[0], 'R', READY_MS)) {
		give_up(pid);
		t_fail("the child did not get to its submit in %d ms", READY_MS);
	}
	return pid;
}

/*
 * Once C sleeps in its submit, and SETTLE_MS more, seize @tid (C or its
 * worker), then wait for C's 'D' on @rfd: was the window open at the seize?
 */
static int seize_in_window(pid_t pid, pid_t tid, int rfd)
{
	int in_window;

	if (!t_wait_asleep(pid, pid, ASLEEP_MS)) {
		give_up(pid);
		t_fail("the child did not sleep within %d ms of its submit",
		     ASLEEP_MS);
	}
	usleep(SETTLE_MS * 1000);
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		int e = errno;

		give_up(pid);
		t_fail("PTRACE_SEIZE of %s %d: %s",
		       tid == pid ? "the sleeping submitter" : "its worker",
		       tid, strerror(e));
	}
	in_window = t_window_open(pid);
	if (!wait_byte(rfd, 'D', SUBMIT_MS)) {
		give_up(pid);
		t_fail("the child's submit did not return within %d ms of the seize",
		     SUBMIT_MS);
	}
	return in_window;
}

static void test_seize_worker(void)
{
	int p[2], in_window;
	struct t_fifo f;
	pid_t pid, worker, tracer;
	long long before;

	t_fifo_init(&f, "window_ptrace");
	before = t_counter("handoffs");
	pid = fork_child(p, &f);
	worker = t_find_thread(pid, is_worker, NULL);
	if (!worker) {
		give_up(pid);
		t_fail("no io-wq worker iou-wrk-%d", pid);
	}
	in_window = seize_in_window(pid, worker, p[0]);
	tracer = tracer_of(pid);
	if (tracer != 0) {
		give_up(pid);
		t_fail("TracerPid of the child %d after seizing its worker, expected 0",
		       tracer);
	}
	tracer = tracer_of(worker);
	if (tracer != getpid()) {
		give_up(pid);
		t_fail("TracerPid of the worker's tid %d after its seize, expected %d",
		       tracer, getpid());
	}
	if (!kill_and_reap(pid))
		t_fail("the child was not reaped %d ms after SIGKILL", REAP_MS);
	if (t_mode_handoff())
		fprintf(stderr, "note: seized the worker %s the window\n",
			in_window ? "inside" : "outside");
	t_remove_file("window_ptrace", pid);
	close(p[0]);
	t_expect_handoff(before);
	t_fifo_exit(&f);
}

static void test_seize(void)
{
	int p[2], st, in_window;
	struct t_fifo f;
	long long before;
	pid_t pid, tracer;

	t_fifo_init(&f, "window_ptrace");
	before = t_counter("handoffs");
	pid = fork_child(p, &f);
	in_window = seize_in_window(pid, pid, p[0]);
	tracer = tracer_of(pid);
	if (tracer != getpid()) {
		give_up(pid);
		t_fail("TracerPid of the child %d after the seize, expected %d",
		     tracer, getpid());
	}
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL)) {
		int e = errno;

		give_up(pid);
		t_fail("PTRACE_INTERRUPT: %s", strerror(e));
	}
	if (!wait_stop(pid, &st)) {
		give_up(pid);
		t_fail("no stop within %d ms of PTRACE_INTERRUPT", STOP_MS);
	}
	if (!WIFSTOPPED(st) || st >> 16 != PTRACE_EVENT_STOP) {
		give_up(pid);
		t_fail("status %#x after PTRACE_INTERRUPT, expected a PTRACE_EVENT_STOP",
		     st);
	}
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL)) {
		int e = errno;

		give_up(pid);
		t_fail("PTRACE_DETACH: %s", strerror(e));
	}
	if (!kill_and_reap(pid))
		t_fail("the child was not reaped %d ms after SIGKILL", REAP_MS);

	if (t_mode_handoff())
		fprintf(stderr, "note: seized %s the window\n",
			in_window ? "inside" : "outside");
	t_remove_file("window_ptrace", pid);
	close(p[0]);
	t_expect_handoff(before);
	t_fifo_exit(&f);
}

int main(void)
{
	t_dir("IOUH_EXT4");
	t_window_widen(WINDOW_MS);
	test_seize();
	test_seize_worker();
	return T_PASS;
}
