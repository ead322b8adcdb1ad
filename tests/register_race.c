// SPDX-License-Identifier: GPL-2.0
/*
 * Other users of a ring racing a blocking submit on it.
 *
 * Register: a non-leader thread A loops blocking fsyncs on ring R (100 of
 * them or 5 s) while thread B loops io_uring_register_iowq_max_workers()
 * queries ({ 0, 0 }, changes nothing) on R for as long. Every fsync must
 * complete with 0 and every query return 0.
 *
 * SQE accounting, 20 rounds: on ring R2 of A (warm, its io-wq worker is
 * idle) A queues two SQEs, an openat of a FIFO that blocks until a writer
 * shows up 500 ms later and a NOP, publishes both and calls the raw
 * io_uring_enter(R2, to_submit 1) while B spins on io_uring_enter(R2,
 * to_submit 1) until A's round is done. No call may return more than its
 * to_submit, A's and B's returns must add up to exactly 2 (each SQE
 * consumed once and counted once), and exactly two CQEs must arrive: the
 * FIFO's fd and the NOP's 0. If the module has the debug_window_ms hook,
 * the window between A's handoff and its worker resuming is widened to
 * 20 ms so B gets in there.
 *
 * In mode handoff at least one of A's blocking submits must hand off
 * (skip if none does, unless IOUH_EXPECT_HANDOFF=1). Blocking is forced by
 * fsync of dirty data on ext4 and the FIFO, see helpers.c.
 *
 * Fails on a kernel/module that drops the ring lock for the identity move
 * and then counts what the resumed io_uring_enter() finds consumed since
 * the call began as its own: B's NOP is reported by both calls, A's returns
 * 2 for a to_submit of 1. Crashes (the test then times out) on one whose
 * register path follows a ring's task node to the task the identity just
 * left, whose ->io_uring is already NULL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

#define REG_ITERS	100
#define REG_MS		5000
#define ROUNDS		20
#define FIFO_DELAY_MS	500
#define WINDOW_MS	20
#define FIFO_UD		0xf1f0ULL
#define NOP_UD		0x9090ULL

struct reg_racer {
	struct io_uring *ring;
	int stop;
	long calls;
	int err;
};

struct enter_racer {
	int ring_fd;
	int delay_us;
	int stop;
	long calls;
	long submitted;
	long bad;
	int err;
};

static long long start_ho;
static int window_set;

static void window_restore(void)
{
	if (window_set)
		t_window_delay(0);
}

static int stopped(int *stop)
{
	return __atomic_load_n(stop, __ATOMIC_ACQUIRE);
}

static void set_stop(int *stop)
{
	__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
}

static void *reg_loop(void *arg)
{
	struct reg_racer *r = arg;
	long long end = t_now_ms() + REG_MS + 2000;

	while (!stopped(&r->stop) && t_now_ms() < end) {
		unsigned int vals[2] = { 0, 0 };
		int ret;

		ret = io_uring_register_iowq_max_workers(r->ring, vals);
		if (ret) {
			r->err = ret;
			break;
		}
		r->calls++;
	}
	return NULL;
}

/* A's blocking fsyncs against B's max_workers queries on the same ring */
static void register_part(struct t_force *tf)
{
	struct reg_racer r = { .ring = &tf->ring };
	long long end = t_now_ms() + REG_MS;
	pthread_t b;
	int i, ret;

	ret = pthread_create(&b, NULL, reg_loop, &r);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	for (i = 0; i < REG_ITERS && t_now_ms() < end; i++)
		t_force_block(tf);
	set_stop(&r.stop);
	ret = pthread_join(b, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));
	if (r.err)
		t_fail("register_iowq_max_workers query: %s", strerror(-r.err));
	if (!r.calls)
		t_fail("the register thread never ran");
}

static long sys_enter(int fd, unsigned int to_submit)
{
	return syscall(__NR_io_uring_enter, fd, to_submit, 0, 0, NULL, 0);
}

static void *enter_loop(void *arg)
{
	struct enter_racer *e = arg;
	long long end;

	/* vary where in A's call we come in, round by round */
	if (e->delay_us) {
		struct timespec ts, now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while ((now.tv_sec - ts.tv_sec) * 1000000000LL +
		       now.tv_nsec - ts.tv_nsec < e->delay_us * 1000LL);
	}
	end = t_now_ms() + 3000;
	while (!stopped(&e->stop) && t_now_ms() < end) {
		long ret = sys_enter(e->ring_fd, 1);

		if (ret < 0) {
			e->err = errno;
			break;
		}
		if (ret > 1)
			e->bad = ret;
		e->submitted += ret;
		e->calls++;
	}
	return NULL;
}

/* the two CQEs of a round, within 5 s; fails on anything else */
static void reap_round(struct io_uring *ring, struct t_fifo *f, int round)
{
	long long end = t_now_ms() + 5000;
	int fifo_res = 0, got_fifo = 0, got_nop = 0;
	struct timespec ms = { 0, 1000 * 1000 };
	struct io_uring_cqe *cqe;

	while (got_fifo + got_nop < 2) {
		if (io_uring_peek_cqe(ring, &cqe)) {
			if (t_now_ms() > end)
				t_fail("round %d: %d of 2 CQEs after 5 s", round,
				     got_fifo + got_nop);
			nanosleep(&ms, NULL);
			continue;
		}
		if (cqe->user_data == FIFO_UD && !got_fifo) {
			got_fifo = 1;
			fifo_res = cqe->res;
		} else if (cqe->user_data == NOP_UD && !got_nop) {
			got_nop = 1;
			if (cqe->res)
				t_fail("round %d: NOP res %d", round, cqe->res);
		} else {
			t_fail("round %d: unexpected CQE user_data %#llx res %d",
			     round, (unsigned long long)cqe->user_data,
			     cqe->res);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	t_fifo_check_fd(f, fifo_res);
}

static void enter_round(struct io_uring *ring, int round)
{
	struct enter_racer e = {
		.ring_fd = ring->ring_fd,
		.delay_us = (round % 4) * 25,
	};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct t_fifo f;
	pthread_t b;
	long a_ret;
	int ret;

	t_wait_idle_worker();
	t_fifo_init(&f, "register_race");
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("round %d: no SQE", round);
	t_fifo_prep_open(&f, sqe, FIFO_UD);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("round %d: no second SQE", round);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, NOP_UD);
	/* publish both, as io_uring_submit() would, but don't enter */
	ring->sq.sqe_head = ring->sq.sqe_tail;
	io_uring_smp_store_release(ring->sq.ktail, ring->sq.sqe_tail);

	t_fifo_release_after(&f, FIFO_DELAY_MS);
	ret = pthread_create(&b, NULL, enter_loop, &e);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	a_ret = sys_enter(ring->ring_fd, 1);
	if (a_ret < 0)
		t_fail("round %d: io_uring_enter: %s", round, strerror(errno));

	reap_round(ring, &f, round);
	set_stop(&e.stop);
	ret = pthread_join(b, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));
	t_fifo_exit(&f);

	if (e.err)
		t_fail("round %d: racing io_uring_enter: %s", round,
		     strerror(e.err));
	if (a_ret > 1)
		t_fail("round %d: io_uring_enter(to_submit 1) returned %ld",
		     round, a_ret);
	if (e.bad)
		t_fail("round %d: racing io_uring_enter(to_submit 1) returned %ld",
		     round, e.bad);
	if (a_ret + e.submitted != 2)
		t_fail("round %d: 2 SQEs, but the calls report %ld submitted (%ld + %ld)",
		     round, a_ret + e.submitted, a_ret, e.submitted);
	if (io_uring_smp_load_acquire(ring->sq.khead) !=
	    io_uring_smp_load_acquire(ring->sq.ktail))
		t_fail("round %d: SQ head %u, tail %u", round, *ring->sq.khead,
		     *ring->sq.ktail);
	if (!io_uring_peek_cqe(ring, &cqe))
		t_fail("round %d: extra CQE user_data %#llx res %d", round,
		     (unsigned long long)cqe->user_data, cqe->res);
}

/* A concurrent submitter must not be counted in a resumed enter */
static void enter_part(void)
{
	struct io_uring ring;
	int i, ret;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	if (!t_window_delay(WINDOW_MS)) {
		window_set = 1;
		atexit(window_restore);
	}
	for (i = 0; i < ROUNDS; i++)
		enter_round(&ring, i);
	window_restore();
	window_set = 0;
	io_uring_queue_exit(&ring);
}

static void *thread_a(void *arg)
{
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "register_race");
	start_ho = t_counter("handoffs");
	register_part(&tf);
	enter_part();
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_run_in_thread(thread_a, NULL);
	t_expect_handoff(start_ho);
	return T_PASS;
}
