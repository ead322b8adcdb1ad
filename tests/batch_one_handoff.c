// SPDX-License-Identifier: GPL-2.0
/*
 * One identity migration per io_uring_enter() (the RFC's patch 12): a batch
 * of blocking requests hands off once; the rest of the call takes the stock
 * punt (fallback_batch) and io-wq runs it in parallel, where one handoff
 * after the other would run the batch serialized, each costing a move.
 *
 * NR FIFO opens (O_RDONLY | O_CREAT: force-async, and each sleeps until its
 * writer comes, see helpers.h) in one io_uring_enter(), with policy
 * "inline" and no batch budget so that nothing but this rule can stop a
 * second handoff, and NR idle io-wq workers made beforehand (NR IOSQE_ASYNC
 * opens of other FIFOs, released) so that each request of the batch would
 * find one. Every open must complete with an fd of its FIFO. Mode handoff:
 * "handoffs" moves by exactly one, "fallback_batch" by NR - 1.
 *
 * Fails on a module that lets the worker resuming the call hand off again
 * (handoffs moves by more than one, fallback_batch not at all).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <liburing.h>
#include "helpers.h"

#define NR	4

/* NR FIFO opens in one submit, released after @ms; all must return fds */
static void open_batch(struct io_uring *ring, const char *name,
		       unsigned int sqe_flags, int ms)
{
	struct t_fifo f[NR];
	unsigned long long ud;
	char fname[64];
	int i, ret, res, seen = 0;

	for (i = 0; i < NR; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		snprintf(fname, sizeof(fname), "%s.%d", name, i);
		t_fifo_init(&f[i], fname);
		if (!sqe)
			t_fail("SQ ring full at %d", i);
		t_fifo_prep_open(&f[i], sqe, i);
		sqe->flags |= sqe_flags;
		t_fifo_release_after(&f[i], ms);
	}
	do {
		ret = io_uring_submit(ring);
	} while (ret == -EINTR);
	if (ret != NR)
		t_fail("%s: submit %d of %d", name, ret, NR);
	for (i = 0; i < NR; i++) {
		if (!t_wait_cqe_ms(ring, 20000, &ud, &res))
			t_fail("%s: %d of %d opens completed", name, i, NR);
		if (ud >= NR || seen & (1 << ud))
			t_fail("%s: a CQE with user_data %llu", name, ud);
		seen |= 1 << ud;
		t_fifo_check_fd(&f[ud], res);
	}
	for (i = 0; i < NR; i++)
		t_fifo_exit(&f[i]);
}

static void test_batch_one_handoff(struct io_uring *ring)
{
	long long ho, fb;

	/* NR workers, each blocked in an open, then idle */
	open_batch(ring, "batch_one_handoff.warm", IOSQE_ASYNC, 200);
	t_wait_idle_worker();
	ho = t_counter("handoffs");
	fb = t_counter("fallback_batch");
	open_batch(ring, "batch_one_handoff", 0, 500);
	if (!t_mode_handoff())
		return;
	t_expect_handoff(ho);
	if (t_counter("handoffs") - ho != 1 ||
	    t_counter("fallback_batch") - fb != NR - 1)
		t_fail("%d blocking opens in one call: %lld handoffs, %lld punted by fallback_batch; expected 1 and %d",
		     NR, t_counter("handoffs") - ho,
		     t_counter("fallback_batch") - fb, NR - 1);
}

int main(void)
{
	char policy[32], budget[32];
	struct io_uring ring;
	int ret;

	ret = t_queue_init(2 * NR, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	if (t_mode_handoff()) {
		t_setting_get("policy", policy, sizeof(policy));
		t_setting_get("batch_budget_us", budget, sizeof(budget));
		t_setting_set("policy", "inline");
		t_setting_set("batch_budget_us", "0");
	}
	test_batch_one_handoff(&ring);
	if (t_mode_handoff()) {
		t_setting_set("batch_budget_us", budget);
		t_setting_set("policy", policy);
	}
	io_uring_queue_exit(&ring);
	return T_PASS;
}
