// SPDX-License-Identifier: GPL-2.0
/*
 * Closing the autokill pidfd of a process whose leader is in the handoff
 * window still kills the process.
 *
 * The parent widens the window to 500 ms (debug_window_ms) and creates a
 * child with clone3(CLONE_PIDFD | CLONE_AUTOREAP | CLONE_PIDFD_AUTOKILL),
 * keeping the autokill pidfd, and watches it through a second, plain pidfd
 * from pidfd_open(). The child, single threaded and so the group leader,
 * makes itself warm (an idle io-wq worker), says so over a pipe and submits
 * openat(O_RDONLY | O_CREAT) of a FIFO that no writer ever opens: its first
 * sleep hands its identity off, and for the window the tid (the tgid) still
 * names the submitter, a worker now. Once /proc/<pid>/stat shows the child
 * asleep, plus 100 ms, the parent closes the autokill pidfd. The child must
 * be killed: poll() on the plain pidfd must report POLLIN within 5 s.
 * Skipped on a kernel without CLONE_AUTOREAP/CLONE_PIDFD_AUTOKILL. In
 * stock/disabled (no handoff, no window) the same must hold.
 *
 * Fails on a kernel/module that marks the submitter PF_USER_WORKER while
 * it still holds PIDTYPE_TGID: pidfs' release WARNs (a WARNING in dmesg)
 * and sends no SIGKILL, the child lives on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "helpers.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD		0x00001000ULL
#endif
#ifndef CLONE_AUTOREAP
#define CLONE_AUTOREAP		(1ULL << 34)
#endif
#ifndef CLONE_PIDFD_AUTOKILL
#define CLONE_PIDFD_AUTOKILL	(1ULL << 36)
#endif

#define WINDOW_MS	500
/* after the child is seen asleep, well inside the window */
#define SETTLE_MS	100
/* t_force_init() in the child: an fsync on ext4, an idle worker */
#define READY_MS	10000
#define ASLEEP_MS	5000
#define KILL_MS		5000
#define OPEN_UD		0xf1f0ULL

/* struct clone_args up to tls, CLONE_ARGS_SIZE_VER0 */
struct clone3_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
};

/* in the child: warm up, say so, then block in the FIFO open for good */
static void child(int ready, struct t_fifo *f)
{
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct t_force tf;
	int ret, res;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(T_CHILD_LIFE_S);
	t_force_init(&tf, "window_pidfd");
	sqe = io_uring_get_sqe(&tf.ring);
	if (!sqe)
		t_fail("child: no SQE");
	t_fifo_prep_open(f, sqe, OPEN_UD);
	if (write(ready, "R", 1) != 1)
		t_fail("child: write: %s", strerror(errno));
	ret = t_submit(&tf.ring);
	if (ret != 1)
		t_fail("child: submit returned %d", ret);
	/* no writer ever comes, only the kill ends this */
	if (t_wait_cqe_ms(&tf.ring, T_CHILD_LIFE_S * 1000, &ud, &res))
		t_fail("child: CQE user_data %#llx res %d without a writer",
		     ud, res);
	exit(T_FAIL);
}

static pid_t clone_autokill(int *pidfd)
{
	struct clone3_args args = {
		.flags = CLONE_PIDFD | CLONE_AUTOREAP | CLONE_PIDFD_AUTOKILL,
		.pidfd = (uintptr_t)pidfd,
		/* CLONE_AUTOREAP: no exit signal */
		.exit_signal = 0,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

/* the child's 'R', 0 if it exited (it said why) or took too long */
static int wait_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long end = t_now_ms() + READY_MS;
	char c;

	while (t_now_ms() < end) {
		int ret = poll(&pfd, 1, end - t_now_ms());

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return 0;
		return read(fd, &c, 1) == 1 && c == 'R';
	}
	return 0;
}

/* POLLIN on the plain pidfd within @ms: the child is gone */
static int wait_exit(int pidfd, int ms)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	long long end = t_now_ms() + ms;

	while (t_now_ms() < end) {
		int ret = poll(&pfd, 1, end - t_now_ms());

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			t_fail("poll on the pidfd: %s", strerror(errno));
		return ret > 0 && (pfd.revents & POLLIN);
	}
	return 0;
}

/* before a failure: don't leave the child behind */
static void kill_child(int pidfd, pid_t pid)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0))
		kill(pid, SIGKILL);
	wait_exit(pidfd, KILL_MS);
	t_remove_file("window_pidfd", pid);
}

static void test_autokill(void)
{
	int autokill = -1, watch, p[2], in_window;
	struct t_fifo f;
	long long before, t;
	pid_t pid;

	t_dir("IOUH_EXT4");
	t_fifo_init(&f, "window_pidfd");
	t_window_widen(WINDOW_MS);
	if (pipe2(p, O_CLOEXEC))
		t_fail("pipe: %s", strerror(errno));
	before = t_counter("handoffs");

	fflush(NULL);
	pid = clone_autokill(&autokill);
	if (pid < 0) {
		if (errno == EINVAL || errno == ENOSYS || errno == E2BIG)
			t_skip("clone3(CLONE_PIDFD_AUTOKILL | CLONE_AUTOREAP): %s",
			     strerror(errno));
		t_fail("clone3: %s", strerror(errno));
	}
	if (!pid) {
		close(p[0]);
		child(p[1], &f);
	}
	close(p[1]);

	watch = syscall(SYS_pidfd_open, pid, 0);
	if (watch < 0) {
		int e = errno;

		kill(pid, SIGKILL);
		t_fail("pidfd_open: %s", strerror(e));
	}
	if (!wait_ready(p[0])) {
		kill_child(watch, pid);
		t_fail("the child did not get to its submit in %d ms", READY_MS);
	}
	if (!t_wait_asleep(pid, pid, ASLEEP_MS)) {
		kill_child(watch, pid);
		t_fail("the child did not sleep within %d ms of its submit",
		     ASLEEP_MS);
	}
	usleep(SETTLE_MS * 1000);

	if (close(autokill))
		t_fail("close of the autokill pidfd: %s", strerror(errno));
	in_window = t_window_open(pid);
	t = t_now_ms();
	if (!wait_exit(watch, KILL_MS)) {
		kill_child(watch, pid);
		t_fail("the child still lived %d ms after its autokill pidfd was closed%s",
		     KILL_MS, in_window ? ", inside the handoff window" : "");
	}
	t = t_now_ms() - t;

	if (t_mode_handoff())
		fprintf(stderr, "note: pidfd closed %s the window, the child was gone %lld ms later\n",
			in_window ? "inside" : "outside", t);
	t_remove_file("window_pidfd", pid);
	close(watch);
	close(p[0]);
	t_expect_handoff(before);
	t_fifo_exit(&f);
}

int main(void)
{
	test_autokill();
	return T_PASS;
}
