// SPDX-License-Identifier: GPL-2.0
/*
 * A submitter that handed off sleeps as an io-wq worker: while it sleeps,
 * io-wq must count it as not running, so that work queued behind it gets a
 * new worker, as it does behind a stock worker that blocks. Review item E14:
 * the reserved worker, woken while reserved (its idle timeout, a signal)
 * and still awake at the swap, had counted the io_worker as running
 * (io_wq_worker_running()); the submitter took the io_worker over with that
 * count and went to sleep without io_wq_worker_sleeping() (it wasn't an
 * io-wq worker when the scheduler asked). io-wq then saw one running
 * worker, created none, and queued the next request behind the sleeper.
 *
 * Delay point "reserved_wake" (a debug kernel; without it the scenario runs
 * with a window too short to hit): the reservation wakes the reserved
 * worker, which stays awake WAKE_MS before it waits to be promoted.
 *
 * test_queued_read_not_behind_sleeper: a FIFO openat for reading, inline,
 * sleeps until a writer comes RELEASE_MS later, and hands off (mode
 * handoff). Then a read of /proc/self/stat, a file without a nonblocking read
 * that the kernel punts to io-wq with neither IOSQE_ASYNC nor a hash, so
 * io-wq starts a worker for it only if none counts as running. Its CQE must
 * come within READ_MS and before the FIFO's, as in stock, where the
 * reader's worker blocks and io-wq creates one for the read. Spare idle
 * workers are kept busy first (occupy_spare_workers()), so that the read
 * finds none free. Failed first on the debug kernel with the point and the
 * hooks before the fix: "the FIFO's CQE came first: the read waited for
 * the sleeping submitter" (the message before it gave the read's time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define WAKE_MS		400
#define RELEASE_MS	2500
#define READ_MS		1500
#define FIFO_UD		0xf1f0ULL
#define READ_UD		0x7eadULL
#define BUSY_UD		0xb5ULL

/*
 * Keep all but one of the idle workers busy in an IOSQE_ASYNC open of FIFO
 * @g (each takes a free worker): the one left is the one the handoff holds,
 * so the read later finds no free worker and needs io-wq to create one.
 * Returns how many opens it queued.
 */
static int occupy_spare_workers(struct io_uring *ring, struct t_fifo *g)
{
	int i, n = t_worker_tids(NULL, 0) - 1;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			t_fail("no SQE");
		t_fifo_prep_open(g, sqe, BUSY_UD);
		sqe->flags |= IOSQE_ASYNC;
	}
	if (n > 0 && t_submit(ring) != n)
		t_fail("submit %d opens of the spare FIFO", n);
	t_wait_idle_worker();
	return n > 0 ? n : 0;
}

static void test_queued_read_not_behind_sleeper(struct io_uring *ring)
{
	int res, fd, i, busy, got_fifo = 0, got_read = 0;
	long long ho, start, read_ms = -1;
	struct io_uring_sqe *sqe;
	struct t_fifo f, g;
	unsigned long long ud;
	char buf[256];

	fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		t_fail("open /proc/self/stat: %s", strerror(errno));
	t_fifo_init(&f, "reserved-awake");
	t_fifo_init(&g, "reserved-awake-busy");
	start = t_now_ms();
	t_fifo_release_after(&g, RELEASE_MS);
	busy = occupy_spare_workers(ring, &g);
	usleep(200 * 1000);

	t_delay_point("reserved_wake", WAKE_MS);
	ho = t_counter("handoffs");
	t_fifo_release_after(&f, RELEASE_MS);
	t_fifo_submit_open(ring, &f, FIFO_UD);
	t_delay_point("reserved_wake", 0);

	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
	sqe->user_data = READ_UD;
	if (t_submit(ring) != 1)
		t_fail("submit the read");

	for (i = 0; i < busy + 2; i++) {
		if (!t_wait_cqe_ms(ring, RELEASE_MS + 5000, &ud, &res))
			t_fail("%d of %d CQEs, %lld ms in", i, busy + 2,
			       t_now_ms() - start);
		if (ud == READ_UD && !got_read++) {
			read_ms = t_now_ms() - start;
			if (res <= 0)
				t_fail("read of /proc/self/stat: %d", res);
			if (!got_fifo)
				continue;
			t_fail("the FIFO's CQE came first, the read's %lld ms in: it waited for the sleeping submitter",
			       read_ms);
		} else if (ud == FIFO_UD && !got_fifo++) {
			t_fifo_check_fd(&f, res);
		} else if (ud == BUSY_UD) {
			t_fifo_check_fd(&g, res);
		} else {
			t_fail("CQE user_data %#llx res %d", ud, res);
		}
	}
	/* a writer still waiting for a reader that never came (no spares) */
	t_fifo_release_cancel(&f);
	t_fifo_release_cancel(&g);
	t_fifo_exit(&f);
	t_fifo_exit(&g);
	close(fd);
	if (read_ms > READ_MS)
		t_fail("the read's CQE after %lld ms (%d spare workers busy)",
		       read_ms, busy);
	t_expect_handoff(ho);
}

int main(void)
{
	struct io_uring ring;

	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_queued_read_not_behind_sleeper(&ring);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
