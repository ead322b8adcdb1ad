// SPDX-License-Identifier: GPL-2.0
/*
 * A task_work producer from outside the thread's tctx (here MSG_RING passing
 * a file to a DEFER_TASKRUN ring, io_msg_fd_remote()) that decided to notify
 * while the thread was not in an inline issue must not interrupt the issue
 * the thread begins before the add: the open's CQE must be the FIFO's fd,
 * never -ERESTARTSYS. Review item E4: the notify mode came from an unlocked
 * read of ->handoff.quiet, the add came later, to the task the producer had
 * read before (which, handed off, now sleeps in the open as an io-wq worker).
 *
 * Delay point (a debug kernel; skipped elsewhere): "notify" holds a
 * task_work producer for NOTIFY_MS between its decision and its add.
 *
 * The main thread, warm on a SINGLE_ISSUER | DEFER_TASKRUN ring with a
 * sparse file table, starts a sender thread that passes a pipe end into
 * slot 0 of that table with MSG_RING from its own ring; OPEN_AT_MS later,
 * inside the sender's delay, it submits openat(O_RDONLY | O_CREAT) of a FIFO
 * whose writer comes RELEASE_MS after: the open goes inline and hands off
 * at its first sleep. test_open_not_interrupted: the open's CQE is the
 * FIFO's fd; the MSG_RING's CQE on the target ring and the sender's own
 * are 0.
 *
 * Failed first on the debug kernel with the point (the ring hooks before
 * the fix): the open's CQE was -512, the sender's TWA_SIGNAL landed on the
 * task that handed off. On stock the open sleeps on io-wq, the thread runs
 * the work wherever it is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define NOTIFY_MS	300
#define OPEN_AT_MS	100
#define RELEASE_MS	1000
#define REAP_MS		8000
#define OPEN_UD		0x0fe1ULL
#define MSG_UD		0x3e55ULL

struct sender {
	int ring_fd;
	int file;
	int res;
	int done;
};

static void *sender(void *arg)
{
	struct sender *s = arg;
	struct __kernel_timespec ts = { .tv_sec = REAP_MS / 1000 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;

	if (io_uring_queue_init(4, &ring, 0))
		t_fail("sender: io_uring_queue_init");
	if (io_uring_register_files(&ring, &s->file, 1))
		t_fail("sender: register files");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_msg_ring_fd(sqe, s->ring_fd, 0, 0, MSG_UD, 0);
	sqe->user_data = 1;
	if (t_submit(&ring) != 1)
		t_fail("sender: submit MSG_RING");
	t_delay_point("notify", 0);
	if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
		t_fail("sender: no MSG_RING CQE in %d ms", REAP_MS);
	s->res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_open_not_interrupted(struct io_uring *ring, struct t_fifo *f)
{
	unsigned long long ud;
	int i, res, open_res = 1, msg_res = 1;

	for (i = 0; i < 2; i++) {
		if (!t_wait_cqe_ms(ring, REAP_MS, &ud, &res))
			t_fail("%d of 2 CQEs in %d ms (open %d, msg %d)", i,
			       REAP_MS, open_res, msg_res);
		if (ud == OPEN_UD)
			open_res = res;
		else if (ud == MSG_UD)
			msg_res = res;
		else
			t_fail("CQE user_data %#llx res %d", ud, res);
	}
	t_fifo_check_fd(f, open_res);
	if (msg_res != 0)
		t_fail("MSG_RING's CQE on the target: %d", msg_res);
}

int main(void)
{
	struct sender s = { 0 };
	struct io_uring ring;
	struct t_fifo f;
	long long before;
	int pipefd[2];
	pthread_t t;

	if (t_queue_init(8, &ring, IORING_SETUP_SINGLE_ISSUER |
				   IORING_SETUP_DEFER_TASKRUN))
		t_skip("no DEFER_TASKRUN ring");
	if (io_uring_register_files_sparse(&ring, 2))
		t_fail("register sparse files");
	if (pipe(pipefd))
		t_fail("pipe: %s", strerror(errno));
	t_warm(&ring);
	t_fifo_init(&f, "race_notify_msg_ring");

	t_delay_point_need("notify", NOTIFY_MS);
	s.ring_fd = ring.ring_fd;
	s.file = pipefd[0];
	if (pthread_create(&t, NULL, sender, &s))
		t_fail("pthread_create");
	usleep(OPEN_AT_MS * 1000);
	t_fifo_release_after(&f, RELEASE_MS);
	before = t_counter("handoffs");
	t_fifo_submit_open(&ring, &f, OPEN_UD);

	test_open_not_interrupted(&ring, &f);
	pthread_join(t, NULL);
	t_delay_point("notify", 0);
	if (s.res != 0)
		t_fail("the sender's MSG_RING CQE: %d", s.res);
	t_expect_handoff(before);
	t_fifo_exit(&f);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
