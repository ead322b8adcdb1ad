// SPDX-License-Identifier: GPL-2.0
/*
 * A submitter that handed off sleeps as an io-wq worker: while it sleeps,
 * io-wq must count it as not running, so that work queued behind it gets a
 * new worker, as it does behind a stock worker that blocks. The swap hands
 * the submitter the reserved worker's io_worker and its count of running
 * workers (IO_WORKER_F_RUNNING), which the worker's own scheduler hooks
 * may be changing at that moment. Review item E14, three windows, each a
 * debug kernel's delay point (without them the scenario runs with windows
 * too short to hit):
 *
 * - test_reserved_worker_awake, point "reserved_wake": the reservation
 *   wakes the reserved worker, which stays awake WAKE_MS, counted running
 *   (io_wq_worker_running()), before it waits to be promoted. The
 *   submitter took the io_worker over with that count and went to sleep
 *   without io_wq_worker_sleeping() (it wasn't an io-wq worker when the
 *   scheduler asked): io-wq saw one running worker and created none. The
 *   swap now drops the count. Failed first with the hooks before that: "the
 *   FIFO's CQE came first: the read waited for the sleeping submitter" (the
 *   message before it gave the read's time).
 * - test_sleeping_worker_uncounted_once, point "worker_sleeping": the
 *   reserved worker, going to its idle sleep, waits WAKE_MS in
 *   io_wq_worker_sleeping() after it saw the count and before it dropped
 *   it, while the swap drops it too: one running worker too few from then
 *   on, for good. The hook now takes the bit with test_and_clear_bit(),
 *   so only one of them drops it. Failed first with the swap's drop and the
 *   hook's test_bit()/clear_bit(): "worker_sleeping: the FIFO's CQE came
 *   first, the read's 2736 ms in: it waited for the sleeping submitter".
 * - test_waking_worker_counted_after_swap, point "worker_running": the
 *   reservation wakes the reserved worker, which waits WAKE_MS in
 *   io_wq_worker_running() after it read its io_worker and saw it not
 *   counted, and before it counts it (a preemption there, in the wild).
 *   The swap comes meanwhile, finds nothing to drop, and the worker's hook
 *   then counts the io_worker the sleeping submitter now owns: io-wq saw
 *   one running worker and created none, until the submitter's next sleep
 *   as a worker. The hook now looks at worker_private again after it
 *   counted, and drops the count if the swap took the io_worker meanwhile.
 *   Failed first, 3 runs of 3, with the hook before that: "worker_running:
 *   the read's CQE after 2723 ms (0 spare workers busy)" (625-630 ms after).
 *
 * The scenario (read_not_behind_sleeper()): a FIFO openat for reading,
 * inline, sleeps until a writer comes RELEASE_MS later, and hands off
 * (mode handoff). Then a read of /proc/self/stat, a file without a
 * nonblocking read that the kernel punts to io-wq with neither IOSQE_ASYNC
 * nor a hash, so io-wq starts a worker for it only if none counts as
 * running. Its CQE must come within READ_MS and before the FIFO's, as in
 * stock, where the reader's worker blocks and io-wq creates one for the
 * read. Spare idle workers are kept busy first (occupy_spare_workers()),
 * so that the read finds none free. Each test runs in a thread of its own:
 * its own io-wq.
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

/*
 * @point is set for the FIFO open's submit: for "worker_sleeping" from
 * before the reserved worker's last idle sleep, which a NOP gives it.
 */
static void read_not_behind_sleeper(struct io_uring *ring, const char *point)
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

	t_delay_point(point, WAKE_MS);
	if (!strcmp(point, "worker_sleeping"))
		t_warm(ring);
	ho = t_counter("handoffs");
	t_fifo_release_after(&f, RELEASE_MS);
	t_fifo_submit_open(ring, &f, FIFO_UD);
	t_delay_point(point, 0);

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
			t_fail("%s: the FIFO's CQE came first, the read's %lld ms in: it waited for the sleeping submitter",
			       point, read_ms);
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
		t_fail("%s: the read's CQE after %lld ms (%d spare workers busy)",
		       point, read_ms, busy);
	fprintf(stderr, "note: %s: the read's CQE after %lld ms\n", point,
		read_ms);
	t_expect_handoff(ho);
}

static void *test_in_thread(void *arg)
{
	struct io_uring ring;

	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	read_not_behind_sleeper(&ring, arg);
	io_uring_queue_exit(&ring);
	return NULL;
}

static void test_reserved_worker_awake(void)
{
	t_run_in_thread(test_in_thread, "reserved_wake");
}

static void test_sleeping_worker_uncounted_once(void)
{
	t_run_in_thread(test_in_thread, "worker_sleeping");
}

static void test_waking_worker_counted_after_swap(void)
{
	t_run_in_thread(test_in_thread, "worker_running");
}

int main(void)
{
	test_reserved_worker_awake();
	test_sleeping_worker_uncounted_once();
	test_waking_worker_counted_after_swap();
	return T_PASS;
}
