// SPDX-License-Identifier: GPL-2.0
/*
 * A SINGLE_ISSUER ring created with IORING_SETUP_R_DISABLED belongs to the
 * thread that enables it (IORING_REGISTER_ENABLE_RINGS makes that thread the
 * ring's submitter_task). That thread must go on submitting to it after a
 * handoff of its identity on another ring, as on stock, where nothing moves.
 *
 * The main thread creates ring R (SINGLE_ISSUER | R_DISABLED); a second
 * thread E enables it without submitting to it, then, on a ring of its own
 * (IOUH_RING's kind), forces a blocking fsync that hands off in mode handoff
 * (test_enabled_ring_after_handoff). E then submits a NOP to R: it must be
 * accepted (1) and complete with 0, not -EEXIST. No submit to R comes before:
 * a submit puts R on E's ring list, which a handoff walks.
 *
 * Fails on a kernel that leaves such a ring's submitter_task on the task that
 * handed off (a ring the thread has not submitted to is not on its ring
 * list, io_uring_tctx_switch() walks only that list).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

static struct io_uring ring_r;

/* one NOP to R from the calling thread: the submit's and the CQE's result */
static void nop_on_r(const char *when)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring_r);
	int ret, res;

	if (!sqe)
		t_fail("no SQE on R");
	io_uring_prep_nop(sqe);
	sqe->user_data = 0x5e;
	ret = io_uring_submit(&ring_r);
	if (ret != 1)
		t_fail("%s: the enabling thread's submit to R: %d (%s), expected 1",
		       when, ret, ret < 0 ? strerror(-ret) : "-");
	res = t_reap_one(&ring_r, 0x5e);
	if (res)
		t_fail("%s: NOP on R: res %d, expected 0", when, res);
}

static void test_enabled_ring_after_handoff(void)
{
	struct t_force tf;
	long long ho;

	t_force_init(&tf, "ring_enabled_single");
	ho = t_force_block(&tf);
	t_expect_handoff(ho);
	nop_on_r("after a handoff on another ring");
	t_force_exit(&tf);
}

static void *enabler(void *arg)
{
	int ret;

	(void)arg;
	ret = io_uring_enable_rings(&ring_r);
	if (ret)
		t_fail("enable_rings: %d (%s)", ret, strerror(-ret));
	test_enabled_ring_after_handoff();
	return NULL;
}

int main(void)
{
	pthread_t e;
	int ret;

	ret = io_uring_queue_init(8, &ring_r, IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_R_DISABLED);
	if (ret == -EINVAL)
		t_skip("no SINGLE_ISSUER | R_DISABLED rings");
	if (ret)
		t_fail("queue_init R: %d", ret);
	if (pthread_create(&e, NULL, enabler, NULL))
		t_fail("pthread_create");
	pthread_join(e, NULL);
	io_uring_queue_exit(&ring_r);
	return T_PASS;
}
