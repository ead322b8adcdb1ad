// SPDX-License-Identifier: GPL-2.0
/*
 * Task_work queued for a thread while its inline issue is ending must make
 * the thread run it, even if the producer decided not to notify (the issue
 * was quiet) and added the work only after the end looked for work.
 * Review item E6: the end cleared ->handoff.quiet without the tctx's
 * task_ref_lock, which the producer holds from its decision to its add.
 *
 * Delay points (a debug kernel; skipped elsewhere): "end" holds an ending
 * inline issue for END_MS while it is still quiet, "notify" holds a
 * task_work producer for NOTIFY_MS between its decision and its add.
 *
 * The main thread, warm, arms a POLL_ADD on a pipe on a ring with an
 * eventfd, then submits a STATX, which goes inline (policy inline) and ends
 * END_MS later. WRITE_MS into that, a helper thread writes the pipe: the
 * poll's wakeup queues task_work for the main thread from the helper, sees
 * the tctx quiet and adds its work NOTIFY_MS later, after the end. Then
 * test_poll_cqe_after_end: the main thread, back from its submit, waits in
 * poll() on the eventfd; the POLL_ADD's CQE must come within WAIT_MS.
 *
 * Failed first on the debug kernel with both points (the ring hooks before
 * the fix): the poll() timed out, the work sat unnotified on the thread. On
 * stock and with enabled=0 there is no inline issue, nothing is quiet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include "helpers.h"

#define END_MS		400
#define WRITE_MS	150
#define NOTIFY_MS	400
#define WAIT_MS		3000
#define POLL_UD		0x9011ULL
#define STATX_UD	0x57a7ULL

struct writer {
	int fd;
	long long at_ms;
};

static void *writer(void *arg)
{
	struct writer *w = arg;
	long long left = w->at_ms - t_now_ms();

	if (left > 0)
		usleep(left * 1000);
	if (write(w->fd, "x", 1) != 1)
		t_fail("pipe write: %s", strerror(errno));
	return NULL;
}

/* the STATX's CQE is posted by the submit; the POLL_ADD's may not be yet */
static void reap(struct io_uring *ring, int *got_poll, int *got_statx)
{
	struct io_uring_cqe *cqe;

	while (!io_uring_peek_cqe(ring, &cqe)) {
		if (cqe->user_data == POLL_UD && cqe->res > 0)
			(*got_poll)++;
		else if (cqe->user_data == STATX_UD && cqe->res == 0)
			(*got_statx)++;
		else
			t_fail("unexpected CQE user_data %#llx res %d",
			       (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void test_poll_cqe_after_end(struct io_uring *ring, int efd,
				    int *got_poll, int *got_statx)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	long long end = t_now_ms() + WAIT_MS;
	uint64_t cnt;
	int ret;

	reap(ring, got_poll, got_statx);
	while (!*got_poll && t_now_ms() < end) {
		ret = poll(&pfd, 1, end - t_now_ms());
		if (ret < 0 && errno != EINTR)
			t_fail("poll: %s", strerror(errno));
		if (ret > 0 && read(efd, &cnt, sizeof(cnt)) != sizeof(cnt))
			t_fail("eventfd read: %s", strerror(errno));
		reap(ring, got_poll, got_statx);
	}
	if (!*got_poll)
		t_fail("the POLL_ADD's CQE didn't come in %d ms: its task_work was never run",
		       WAIT_MS);
}

int main(void)
{
	struct writer w;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct statx stx;
	char path[PATH_MAX];
	int pipefd[2], efd, got_poll = 0, got_statx = 0;
	long long before;
	pthread_t t;

	snprintf(path, sizeof(path), "%s", t_dir("IOUH_TMPFS"));
	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	if (pipe(pipefd))
		t_fail("pipe: %s", strerror(errno));
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0 || io_uring_register_eventfd(&ring, efd))
		t_fail("eventfd");
	t_warm(&ring);

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_add(sqe, pipefd[0], POLLIN);
	sqe->user_data = POLL_UD;
	if (t_submit(&ring) != 1)
		t_fail("submit POLL_ADD");

	t_delay_point_need("end", END_MS);
	t_delay_point_need("notify", NOTIFY_MS);
	w.fd = pipefd[1];
	w.at_ms = t_now_ms() + WRITE_MS;
	if (pthread_create(&t, NULL, writer, &w))
		t_fail("pthread_create");
	before = t_inline_issued();
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_statx(sqe, AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx);
	sqe->user_data = STATX_UD;
	if (t_submit(&ring) != 1)
		t_fail("submit STATX");
	pthread_join(t, NULL);
	t_delay_point("end", 0);
	t_delay_point("notify", 0);
	t_expect_inline(before, 1);

	test_poll_cqe_after_end(&ring, efd, &got_poll, &got_statx);
	if (got_statx != 1 || got_poll != 1)
		t_fail("CQEs: %d STATX, %d POLL_ADD, want one each", got_statx,
		       got_poll);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
