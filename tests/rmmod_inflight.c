// SPDX-License-Identifier: GPL-2.0
/*
 * rmmod finishes in bounded time while handoffs are in flight and the
 * application waits (D6). A child makes its thread warm (t_force_init()), then
 * io_uring_submit_and_wait()s one FIFO openat with no writer: the open
 * sleeps, the submitter hands off and finishes the open as an io-wq worker,
 * and the worker that took over waits in io_uring_enter() for the CQE. With
 * both in flight, "rmmod io_uring_handoff" must return 0 within 10 s and the
 * module must be gone; then the FIFO gets a writer and the child must get
 * its fd, as on a stock kernel. The module is loaded again afterwards
 * (insmod $IOUH_KO if set, else modprobe), so later tests still have it.
 * Mode handoff only (it unloads the module), skip elsewhere.
 *
 * Fails on a module whose reference covers the resumed io_uring_enter(),
 * GETEVENTS wait included, or the demoted task's whole blocked op: rmmod
 * then sleeps for as long as the application waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "helpers.h"

#define FIFO_UD		0xf1f0
#define RMMOD_MS	10000

static struct t_fifo fifo;

/* the application: blocked in a handed-off open, waiting for its CQE */
static int holder(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct t_force tf;
	int ret, res;

	t_force_init(&tf, "rmmod_inflight");
	sqe = io_uring_get_sqe(&tf.ring);
	t_fifo_prep_open(&fifo, sqe, FIFO_UD);
	ret = io_uring_submit_and_wait(&tf.ring, 1);
	if (ret != 1)
		return 10;
	if (io_uring_peek_cqe(&tf.ring, &cqe) || cqe->user_data != FIFO_UD)
		return 11;
	res = cqe->res;
	io_uring_cqe_seen(&tf.ring, cqe);
	if (res < 0)
		return 12;
	close(res);
	t_force_exit(&tf);
	return 0;
}

/* run @argv, 0 once it exited 0 within @ms, -1 on timeout (still running) */
static int run_bounded(char *const argv[], int ms, pid_t *pidp)
{
	long long end = t_now_ms() + ms;
	pid_t pid = fork();
	int st;

	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	*pidp = pid;
	while (t_now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
		usleep(10 * 1000);
	}
	return -1;
}

static void reload(void)
{
	char *insmod[] = { "insmod", getenv("IOUH_KO"), NULL };
	char *modprobe[] = { "modprobe", "io_uring_handoff", NULL };
	pid_t pid;

	if (run_bounded(getenv("IOUH_KO") ? insmod : modprobe, 10000, &pid))
		t_fail("could not load the module again");
}

/* let the FIFO open complete, as its writer */
static void release_writer(void)
{
	int fd = open(fifo.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		usleep(50 * 1000);
		close(fd);
	}
}

static void test_rmmod_inflight(void)
{
	char *rmmod[] = { "rmmod", "io_uring_handoff", NULL };
	long long before = t_counter("handoffs"), end;
	pid_t child, rm;
	struct stat st;
	int ret, wst;

	t_fifo_init(&fifo, "rmmod_inflight.fifo");
	child = fork();
	if (child < 0)
		t_fail("fork: %s", strerror(errno));
	if (!child)
		_exit(holder());

	/* the child's submitter handed off and its worker waits for the CQE */
	end = t_now_ms() + 10000;
	while (t_counter("handoffs") <= before && t_now_ms() < end)
		usleep(10 * 1000);
	if (t_counter("handoffs") <= before) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		t_expect_handoff(before);
	}
	usleep(200 * 1000);

	ret = run_bounded(rmmod, RMMOD_MS, &rm);
	if (ret < 0) {
		/* let the module go, then report */
		release_writer();
		waitpid(rm, NULL, 0);
		waitpid(child, NULL, 0);
		reload();
		t_fail("rmmod still sleeping after %d ms with a handoff in flight",
		     RMMOD_MS);
	}
	if (ret)
		t_fail("rmmod failed with a handoff in flight");
	if (!stat("/sys/kernel/io_uring_handoff", &st))
		t_fail("the module is still there after rmmod");

	release_writer();
	end = t_now_ms() + 5000;
	while (waitpid(child, &wst, WNOHANG) != child) {
		if (t_now_ms() > end) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			reload();
			t_fail("the application never got its CQE after rmmod");
		}
		usleep(10 * 1000);
	}
	reload();
	if (!WIFEXITED(wst) || WEXITSTATUS(wst))
		t_fail("the application failed after rmmod (status %#x)", wst);
}

int main(void)
{
	if (!t_mode_handoff())
		t_skip("unloads the module, mode handoff only");
	test_rmmod_inflight();
	t_fifo_exit(&fifo);
	return T_PASS;
}
