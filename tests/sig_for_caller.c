// SPDX-License-Identifier: GPL-2.0
/*
 * A signal a request raises for its caller (send_sig(..., current, 0) in the
 * paths the inline table reaches) lands where the stock path puts it. Of
 * those paths (fs/, mm/ in 7.2.13), SIGXFSZ (generic_write_check_limits(),
 * inode_newsize_ok()) and SIGPIPE (pipe_write(), splice) can; SIGIO and
 * SIGURG go to a file's owner, whoever issues.
 *
 * SIGXFSZ: a request that grows a file past RLIMIT_FSIZE completes with
 * -EFBIG and the process gets no SIGXFSZ, as on stock: there the io-wq worker issues it, the
 * kernel's send_sig(SIGXFSZ, current, 0) lands on the worker (which blocks
 * every signal but SIGKILL and SIGSTOP) and the application sees only the
 * CQE. Issued inline, the signal would land on the submitter and, with the
 * default action, kill it (a 2023 attempt at blocking inline issue upstream
 * failed liburing's fallocate test this way).
 *
 * A child with RLIMIT_FSIZE at LIMIT and SIGXFSZ at its default action, on a
 * warm ring, a file in IOUH_TMPFS (tmpfs has no nonblocking path, its reads
 * and writes are candidates for the inline issue too):
 *
 * - test_write_past_limit: WRITE of one byte at 2 * LIMIT;
 * - test_fallocate_past_limit: FALLOCATE to 2 * LIMIT;
 * - test_ftruncate_past_limit: FTRUNCATE to 2 * LIMIT;
 *
 * each -EFBIG, and the child exits 0 (not killed by SIGXFSZ). Then
 * test_handler_not_run: the same three with a SIGXFSZ handler, which must not
 * run. Every mode. In mode handoff, test_write_under_no_limit: the same
 * WRITE with RLIMIT_FSIZE at infinity is issued inline, so the cases above
 * do reach the module's decision.
 *
 * SIGPIPE, every mode, each in a child with SIGPIPE at its default action:
 * test_pipe_write_no_reader: a WRITE to a pipe without a reader kills the
 * child by SIGPIPE, on stock too (a pipe has a nonblocking path, its first
 * attempt runs in the submitter); test_splice_no_reader: a SPLICE into such
 * a pipe completes with -EPIPE and the child lives (stock punts every
 * SPLICE, the worker takes the signal).
 *
 * Fails on a module that issues them inline and lets the signal reach the
 * submitter, or changes where a pipe's SIGPIPE lands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <liburing.h>
#include "helpers.h"

#define LIMIT	4096

static char path[4096];
static volatile sig_atomic_t handler_runs;

static void on_xfsz(int sig)
{
	(void)sig;
	handler_runs++;
}

/* the one SQE queued: submit, reap its res */
static int submit_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = t_submit(ring);
	if (ret != 1)
		t_fail("submit: %d", ret);
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		t_fail("wait_cqe: %s", strerror(-ret));
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* the file at @path, empty, and @ring set up and warm: the fd */
static int open_warm(struct io_uring *ring)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	if (t_queue_init(8, ring, 0))
		t_fail("queue_init");
	t_warm(ring);
	return fd;
}

static void expect_efbig(int res, const char *what)
{
	if (res != -EFBIG)
		t_fail("%s past RLIMIT_FSIZE: res %d, expected %d (-EFBIG)",
		       what, res, -EFBIG);
}

static void test_write_past_limit(struct io_uring *ring, int fd)
{
	static char byte = 'x';

	io_uring_prep_write(io_uring_get_sqe(ring), fd, &byte, 1, 2 * LIMIT);
	expect_efbig(submit_one(ring), "write");
}

static void test_fallocate_past_limit(struct io_uring *ring, int fd)
{
	io_uring_prep_fallocate(io_uring_get_sqe(ring), fd, 0, 0, 2 * LIMIT);
	expect_efbig(submit_one(ring), "fallocate");
}

static void test_ftruncate_past_limit(struct io_uring *ring, int fd)
{
	io_uring_prep_ftruncate(io_uring_get_sqe(ring), fd, 2 * LIMIT);
	expect_efbig(submit_one(ring), "ftruncate");
}

/* in a child: the three requests past the limit; exits 0 if all -EFBIG */
static void past_limit_child(int with_handler)
{
	struct rlimit rl = { .rlim_cur = LIMIT, .rlim_max = RLIM_INFINITY };
	struct io_uring ring;
	int fd;

	signal(SIGXFSZ, with_handler ? on_xfsz : SIG_DFL);
	fd = open_warm(&ring);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		t_fail("setrlimit: %s", strerror(errno));
	test_write_past_limit(&ring, fd);
	t_wait_idle_worker();
	test_fallocate_past_limit(&ring, fd);
	t_wait_idle_worker();
	test_ftruncate_past_limit(&ring, fd);
	if (handler_runs)
		t_fail("the SIGXFSZ handler ran %d times, stock runs it never",
		       (int)handler_runs);
	io_uring_queue_exit(&ring);
	close(fd);
	exit(T_PASS);
}

static void run_child(int with_handler)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid)
		past_limit_child(with_handler);
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		t_fail("%s: the child was killed by signal %d (%s), stock completes with -EFBIG",
		       with_handler ? "handler" : "default action",
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
		exit(T_FAIL);	/* the child said why */
}

static void test_handler_not_run(void)
{
	run_child(1);
}

/* the control: without a limit the same write goes inline */
static void test_write_under_no_limit(void)
{
	struct io_uring ring;
	static char byte = 'x';
	long long all;
	int fd, res;

	fd = open_warm(&ring);
	all = t_inline_issued();
	io_uring_prep_write(io_uring_get_sqe(&ring), fd, &byte, 1, 2 * LIMIT);
	res = submit_one(&ring);
	if (res != 1)
		t_fail("write without a limit: res %d, expected 1", res);
	t_expect_inline(all, 1);
	io_uring_queue_exit(&ring);
	close(fd);
}

/* in a child: @fn's request on a pipe whose read end is closed */
static void pipe_child(int (*fn)(struct io_uring *ring, int wfd), int want)
{
	struct io_uring ring;
	int p[2], res;

	signal(SIGPIPE, SIG_DFL);
	if (pipe(p))
		t_fail("pipe: %s", strerror(errno));
	close(p[0]);
	if (t_queue_init(8, &ring, 0))
		t_fail("queue_init");
	t_warm(&ring);
	res = fn(&ring, p[1]);
	if (res != want)
		t_fail("res %d, expected %d", res, want);
	exit(T_PASS);
}

/* 0: the child lived and passed; else the signal that killed it */
static int run_pipe_child(int (*fn)(struct io_uring *ring, int wfd), int want)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid)
		pipe_child(fn, want);
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
		exit(T_FAIL);
	return 0;
}

static int write_pipe(struct io_uring *ring, int wfd)
{
	static char byte = 'x';

	io_uring_prep_write(io_uring_get_sqe(ring), wfd, &byte, 1, 0);
	return submit_one(ring);
}

static int splice_pipe(struct io_uring *ring, int wfd)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, "x", 1) != 1)
		t_fail("create %s", path);
	io_uring_prep_splice(io_uring_get_sqe(ring), fd, 0, wfd, -1, 1, 0);
	return submit_one(ring);
}

static void test_pipe_write_no_reader(void)
{
	int sig = run_pipe_child(write_pipe, -EPIPE);

	if (sig != SIGPIPE)
		t_fail("WRITE to a pipe without a reader: %s %d, expected the stock kill by SIGPIPE",
		       sig ? "killed by" : "lived, signal", sig);
}

static void test_splice_no_reader(void)
{
	int sig = run_pipe_child(splice_pipe, -EPIPE);

	if (sig)
		t_fail("SPLICE into a pipe without a reader: killed by %d (%s), stock completes with -EPIPE",
		       sig, strsignal(sig));
}

int main(void)
{
	snprintf(path, sizeof(path), "%s/sig_for_caller.%d",
		 t_dir("IOUH_TMPFS"), getpid());
	run_child(0);
	test_handler_not_run();
	test_pipe_write_no_reader();
	test_splice_no_reader();
	if (t_mode_handoff())
		test_write_under_no_limit();
	unlink(path);
	return T_PASS;
}
