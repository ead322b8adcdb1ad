// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive policy's budget per io_uring_enter()
 * (/sys/kernel/io_uring_handoff/batch_budget_us): the inline issues of one
 * submission run one after the other in the submitter, so past the budget,
 * counted from the batch's first inline issue, the rest of the batch takes
 * the stock punt (fallback_budget) and io-wq runs it in parallel.
 *
 * One io_uring_enter() of NR statx on tmpfs (never sleeps): with a budget of
 * 1 us all but the first one or two are punted by the budget; with 1 s, and
 * with 0 (no budget), none is; with policy "inline" the budget is off too.
 * Every statx completes with 0 and the file's size either way.
 *
 * Modes stock and disabled: the same batches, nothing issued inline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <liburing.h>
#include "helpers.h"

#define NR	16
#define SIZE	4096

/* one batch under @policy and @budget: how many inline, how many punted */
static void run_batch(struct io_uring *ring, const char *path,
		      const char *policy, const char *budget,
		      long long *issued, long long *punts)
{
	long long i0 = t_inline_issued();
	long long b0 = t_counter("fallback_budget");

	t_setting_set("policy", policy);
	t_setting_set("batch_budget_us", budget);
	t_statx_batch(ring, path, NR, SIZE);
	*issued = t_inline_issued() - i0;
	*punts = t_counter("fallback_budget") - b0;
}

static void test_budget_spent(struct io_uring *ring, const char *path)
{
	long long issued, punts;

	run_batch(ring, path, "adaptive", "1", &issued, &punts);
	if (issued < 1 || issued > 2 || punts != NR - issued)
		t_fail("budget 1 us: %lld of %d statx inline, %lld punted by the budget",
		     issued, NR, punts);
}

static void test_budget_left(struct io_uring *ring, const char *path,
			     const char *policy, const char *budget)
{
	long long issued, punts;

	run_batch(ring, path, policy, budget, &issued, &punts);
	if (punts || issued != NR)
		t_fail("policy %s, budget %s us: %lld of %d statx inline, %lld punted by the budget",
		     policy, budget, issued, NR, punts);
}

static void test_no_module(struct io_uring *ring, const char *path)
{
	long long in = t_inline_issued();

	t_statx_batch(ring, path, NR, SIZE);
	t_expect_no_inline(in);
}

int main(void)
{
	char path[PATH_MAX], policy[32], budget[32], depth[32];
	struct io_uring ring;
	struct t_force tf;
	int fd, ret;

	/* warms an io-wq worker of this task, which serves every ring of it */
	t_force_init(&tf, "policy_budget");
	ret = io_uring_queue_init(NR, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	snprintf(path, sizeof(path), "%s/policy_budget.%d",
		 t_dir("IOUH_TMPFS"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0 || ftruncate(fd, SIZE) || close(fd))
		t_fail("creating %s: %s", path, strerror(errno));
	if (!t_mode_handoff()) {
		test_no_module(&ring, path);
	} else {
		t_setting_get("policy", policy, sizeof(policy));
		t_setting_get("batch_budget_us", budget, sizeof(budget));
		/* the depth would punt the batch's tail first */
		t_setting_get("depth_max", depth, sizeof(depth));
		t_setting_set("depth_max", "0");
		test_budget_spent(&ring, path);
		test_budget_left(&ring, path, "adaptive", "1000000");
		test_budget_left(&ring, path, "adaptive", "0");
		test_budget_left(&ring, path, "inline", "1");
		t_setting_set("batch_budget_us", budget);
		t_setting_set("depth_max", depth);
		t_setting_set("policy", policy);
	}
	unlink(path);
	io_uring_queue_exit(&ring);
	t_force_exit(&tf);
	return T_PASS;
}
