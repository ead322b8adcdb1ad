// SPDX-License-Identifier: GPL-2.0
/*
 * -ERESTARTSYS and the other restart codes belong to the syscall layer and
 * never reach a CQE, nor does an -EINTR the application didn't cause: a
 * request that sleeps interruptibly while task_work is queued for its
 * submitter completes with its real result, as on io-wq in stock 7.2, whose
 * workers run with signals blocked and get no task_work notification.
 *
 * One io_uring_submit() of [TIMEOUT 20 ms (count 0), a blocking request]:
 * the timeout completes through task_work queued for the submitter
 * (TWA_SIGNAL) while the other request sleeps. Blocking is forced by
 * - openat(O_RDONLY | O_CREAT) of a FIFO, which sleeps until a writer opens
 *   the FIFO 300 ms after the submit: in a fresh thread (no io-wq worker to
 *   hand off to), then in a warm thread (an idle worker);
 * - a splice from an empty pipe into a tmpfs file, which sleeps until 4096
 *   bytes are written into the pipe 300 ms after the submit: fresh thread.
 * Exactly two CQEs each time: the timeout's -ETIME, and the FIFO's fd, or
 * 4096 for the splice with the bytes then in the file.
 *
 * Fails on a kernel/module whose inline issue lets the task_work
 * notification interrupt the sleep: openat and splice store the result of
 * the interrupted call themselves and return IOU_COMPLETE, so -ERESTARTSYS
 * (-512) lands in the CQE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define TIMEOUT_UD	0x7100ULL
#define OP_UD		0x0f00ULL
#define TIMEOUT_MS	20
/* the writer opens the FIFO, or writes the pipe, this long after submit */
#define RELEASE_MS	300
/* both CQEs, from the submit */
#define REAP_MS		5000
#define LEN		4096

static struct __kernel_timespec timeout_ts = {
	.tv_nsec = TIMEOUT_MS * 1000000LL,
};

static const char *restart_name(int res)
{
	switch (res) {
	case -512:
		return "ERESTARTSYS";
	case -513:
		return "ERESTARTNOINTR";
	case -514:
		return "ERESTARTNOHAND";
	case -516:
		return "ERESTART_RESTARTBLOCK";
	case -EINTR:
		return "EINTR";
	}
	return NULL;
}

/* queue the TIMEOUT, return the SQE behind it for the blocking request */
static struct io_uring_sqe *queue_timeout(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_timeout(sqe, &timeout_ts, 0, 0);
	io_uring_sqe_set_data64(sqe, TIMEOUT_UD);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("no SQE");
	return sqe;
}

static void submit_pair(struct io_uring *ring, const char *what)
{
	int ret = io_uring_submit(ring);

	if (ret != 2)
		t_fail("%s: submit returned %d, expected 2", what, ret);
}

/* exactly the timeout's -ETIME and the blocking request's CQE: its res */
static int reap_pair(struct io_uring *ring, const char *what)
{
	long long end = t_now_ms() + REAP_MS;
	int got_timeout = 0, got_op = 0, op_res = 0, res;
	unsigned long long ud;
	const char *name;

	while (!got_timeout || !got_op) {
		long long left = end - t_now_ms();

		if (left < 0 || !t_wait_cqe_ms(ring, left, &ud, &res))
			t_fail("%s: no CQE for the %s %d ms after the submit",
			     what, got_op ? "timeout" : "blocking request",
			     REAP_MS);
		if (ud == TIMEOUT_UD && !got_timeout) {
			got_timeout = 1;
			if (res != -ETIME)
				t_fail("%s: timeout CQE res %d, expected -ETIME",
				     what, res);
		} else if (ud == OP_UD && !got_op) {
			got_op = 1;
			op_res = res;
			name = restart_name(res);
			if (name)
				t_fail("%s: CQE res %d (-%s), the sleep was interrupted",
				     what, res, name);
		} else {
			t_fail("%s: unexpected CQE user_data %#llx res %d",
			     what, ud, res);
		}
	}
	if (t_wait_cqe_ms(ring, 50, &ud, &res))
		t_fail("%s: extra CQE user_data %#llx res %d", what, ud, res);
	return op_res;
}

static void fifo_case(struct io_uring *ring, const char *what)
{
	struct io_uring_sqe *sqe;
	struct t_fifo f;

	t_fifo_init(&f, "restart_cqe");
	sqe = queue_timeout(ring);
	t_fifo_prep_open(&f, sqe, OP_UD);
	/* started first: it also ends a submit that blocks in place */
	t_fifo_release_after(&f, RELEASE_MS);
	submit_pair(ring, what);
	t_fifo_check_fd(&f, reap_pair(ring, what));
	t_fifo_exit(&f);
}

/* openat of the FIFO in a thread without io-wq worker */
static void *test_open_fresh(void *arg)
{
	struct io_uring ring;
	int ret;

	(void)arg;
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	fifo_case(&ring, "openat, fresh thread");
	io_uring_queue_exit(&ring);
	return NULL;
}

/* openat of the FIFO in a thread with an idle io-wq worker */
static void *test_open_warm(void *arg)
{
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "restart_cqe");
	fifo_case(&tf.ring, "openat, warm thread");
	t_force_exit(&tf);
	return NULL;
}

static char pattern[LEN];

struct pipe_writer {
	pthread_t thr;
	int fd;
	ssize_t ret;
	int err;
};

static void *pipe_write(void *arg)
{
	struct pipe_writer *w = arg;

	usleep(RELEASE_MS * 1000);
	w->ret = write(w->fd, pattern, LEN);
	w->err = errno;
	return NULL;
}

/* splice from an empty pipe into a tmpfs file, fresh thread */
static void *test_splice(void *arg)
{
	const char *what = "splice";
	struct pipe_writer w = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	char path[PATH_MAX];
	static char buf[LEN + 1];
	int fds[2], fd, ret;
	size_t i;

	(void)arg;
	for (i = 0; i < LEN; i++)
		pattern[i] = 'a' + i % 23;
	snprintf(path, sizeof(path), "%s/restart_cqe.%d",
		 t_dir("IOUH_TMPFS"), gettid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	unlink(path);
	if (pipe2(fds, O_CLOEXEC))
		t_fail("pipe2: %s", strerror(errno));
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));

	sqe = queue_timeout(&ring);
	io_uring_prep_splice(sqe, fds[0], -1, fd, 0, LEN, 0);
	io_uring_sqe_set_data64(sqe, OP_UD);
	w.fd = fds[1];
	ret = pthread_create(&w.thr, NULL, pipe_write, &w);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	submit_pair(&ring, what);
	ret = reap_pair(&ring, what);
	pthread_join(w.thr, NULL);
	if (w.ret != LEN)
		t_fail("write into the pipe: %zd (%s)", w.ret, strerror(w.err));
	if (ret != LEN)
		t_fail("%s: CQE res %d (%s), expected %d", what, ret,
		     ret < 0 ? strerror(-ret) : "short", LEN);
	if (pread(fd, buf, sizeof(buf), 0) != LEN || memcmp(buf, pattern, LEN))
		t_fail("%s: the file does not hold the %d bytes", what, LEN);

	io_uring_queue_exit(&ring);
	close(fds[0]);
	close(fds[1]);
	close(fd);
	return NULL;
}

int main(void)
{
	t_run_in_thread(test_open_fresh, NULL);
	t_run_in_thread(test_open_warm, NULL);
	t_run_in_thread(test_splice, NULL);
	return T_PASS;
}
