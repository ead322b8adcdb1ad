// SPDX-License-Identifier: GPL-2.0
/*
 * An SQPOLL ring's requests that take the ring lock complete, whatever the
 * module's state: the SQPOLL thread issues with the ring lock held, as an
 * io_uring_enter() does, and an op that needs the lock
 * (io_ring_submit_lock()) must see that it has it.
 *
 * A ring with IORING_SETUP_SQPOLL (idle 100 ms) gets, in turn, a
 * PROVIDE_BUFFERS (kbuf.c takes the lock through io_ring_submit_lock()) and
 * a NOP, and each CQE must arrive within 5 s with res 0. Needs root or
 * CAP_SYS_NICE for SQPOLL (skipped if setup says EPERM).
 *
 * Fails on a kernel whose "handed off" test (the demoted submitter finishes
 * its request as an io-wq worker, which must take the ring lock itself)
 * takes any io thread with an inline issue for a demoted submitter: the
 * SQPOLL thread is an io thread (PF_IO_WORKER) too, tries to take the lock
 * it holds and sleeps for good; no CQE comes, and the process can't exit.
 * That was the stock path of the patched kernel, module loaded or not
 * (liburing's SQPOLL tests hung on it).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define CQE_MAX_MS	5000
#define NR_BUFS		4
#define BUF_LEN		64
#define BGID		7
#define PBUF_UD		1ULL
#define NOP_UD		2ULL

static char bufs[NR_BUFS][BUF_LEN];

static void expect_cqe(struct io_uring *ring, unsigned long long want,
		       const char *what)
{
	unsigned long long ud;
	int res;

	if (!t_wait_cqe_ms(ring, CQE_MAX_MS, &ud, &res))
		t_fail("%s on an SQPOLL ring: no CQE within %d ms, the SQPOLL thread sleeps in its issue",
		     what, CQE_MAX_MS);
	if (ud != want)
		t_fail("%s: CQE user_data %llu, expected %llu", what, ud, want);
	if (res < 0)
		t_fail("%s: CQE res %d (%s)", what, res, strerror(-res));
}

static void submit_one(struct io_uring *ring, struct io_uring_sqe *sqe,
		       unsigned long long ud, const char *what)
{
	int ret;

	io_uring_sqe_set_data64(sqe, ud);
	ret = io_uring_submit(ring);
	if (ret != 1)
		t_fail("%s: submit returned %d", what, ret);
}

int main(void)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int ret;

	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 100;
	ret = io_uring_queue_init_params(8, &ring, &p);
	if (ret == -EPERM)
		t_skip("SQPOLL ring: EPERM");
	if (ret)
		t_fail("SQPOLL ring: %s", strerror(-ret));

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_provide_buffers(sqe, bufs, BUF_LEN, NR_BUFS, BGID, 0);
	submit_one(&ring, sqe, PBUF_UD, "PROVIDE_BUFFERS");
	expect_cqe(&ring, PBUF_UD, "PROVIDE_BUFFERS");

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	submit_one(&ring, sqe, NOP_UD, "NOP");
	expect_cqe(&ring, NOP_UD, "NOP");

	io_uring_queue_exit(&ring);
	return T_PASS;
}
