// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive policy's depth (/sys/kernel/io_uring_handoff/depth_max): an
 * application that submits while completions wait for it is pipelining, so
 * a request takes the stock punt (fallback_depth), where io-wq runs it
 * beside the submitter, once depth_max completions wait: CQEs in the CQ
 * it hasn't reaped plus the earlier SQEs of the same io_uring_enter(). An
 * inline request has completed by the time its call returns, so at depth
 * only the CQ shows what the application has in flight (fio, iodepth 32,
 * one request per call). Not on a task that may run on one CPU only: there
 * io-wq runs nothing beside it.
 *
 * statx on tmpfs (never sleeps), batch budget off:
 * - test_depth_batch: one call of NR: the first depth_max go inline, the
 *   rest are punted by the depth.
 * - test_depth_cq: depth_max NOP CQEs left in the CQ, then one statx
 *   alone: punted by the depth; reaped, and past the hold that follows a
 *   punt by the depth (the task's requests on the ring keep punting for
 *   2 ms and a jiffy), the next one goes inline.
 * - test_depth_off: depth_max 0: the whole batch inline.
 * - test_depth_one_cpu: affinity to one CPU: the whole batch inline.
 * Every statx completes with 0 and the file's size either way.
 *
 * Modes stock and disabled: the same requests, nothing issued inline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <liburing.h>
#include "helpers.h"

#define NR	16
#define DEPTH	4
#define SIZE	4096
#define NOP_UD	0x909ULL
#define STATX_UD	0x57a7ULL
/* more than the module's hold after a punt by the depth (2 ms, a jiffy) */
#define HOLD_MS	50

/* how many of @n went inline and how many the depth punted */
static void run_batch(struct io_uring *ring, const char *path, int n,
		      long long *issued, long long *punts)
{
	long long i0 = t_inline_issued();
	long long d0 = t_counter("fallback_depth");

	t_statx_batch(ring, path, n, SIZE);
	*issued = t_inline_issued() - i0;
	*punts = t_counter("fallback_depth") - d0;
}

static void test_depth_batch(struct io_uring *ring, const char *path)
{
	long long issued, punts;

	run_batch(ring, path, NR, &issued, &punts);
	if (issued != DEPTH || punts != NR - DEPTH)
		t_fail("depth_max %d: %lld of %d statx inline, %lld punted by the depth, want %d and %d",
		       DEPTH, issued, NR, punts, DEPTH, NR - DEPTH);
}

static void test_depth_cq(struct io_uring *ring, const char *path)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	long long i0, d0, issued, punts;
	struct statx stx;
	int i, nops = 0;

	for (i = 0; i < DEPTH; i++) {
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = NOP_UD;
	}
	if (io_uring_submit_and_wait(ring, DEPTH) != DEPTH)
		t_fail("submit %d NOPs", DEPTH);
	/* their CQEs stay in the CQ: a statx alone, then reap all */
	t_wait_idle_worker();
	i0 = t_inline_issued();
	d0 = t_counter("fallback_depth");
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_statx(sqe, AT_FDCWD, path, 0, STATX_SIZE, &stx);
	sqe->user_data = STATX_UD;
	if (io_uring_submit(ring) != 1)
		t_fail("submit the statx");
	issued = t_inline_issued() - i0;
	punts = t_counter("fallback_depth") - d0;
	for (i = 0; i < DEPTH + 1; i++) {
		if (io_uring_wait_cqe(ring, &cqe))
			t_fail("%d of %d CQEs", i, DEPTH + 1);
		if (cqe->user_data == NOP_UD)
			nops++;
		else if (cqe->user_data != STATX_UD || cqe->res ||
			 stx.stx_size != SIZE)
			t_fail("statx: user_data %#llx res %d, want 0",
			       (unsigned long long)cqe->user_data, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	if (nops != DEPTH)
		t_fail("%d NOP CQEs, want %d", nops, DEPTH);
	if (issued || punts != 1)
		t_fail("%d CQEs waiting: the statx went inline (%lld) or wasn't punted by the depth (%lld)",
		       DEPTH, issued, punts);
	/* past the hold that the last punt by the depth began */
	usleep(HOLD_MS * 1000);
	run_batch(ring, path, 1, &issued, &punts);
	if (issued != 1 || punts)
		t_fail("CQ empty: %lld statx inline, %lld punted by the depth",
		       issued, punts);
}

static void test_depth_all_inline(struct io_uring *ring, const char *path,
				  const char *why)
{
	long long issued, punts;

	run_batch(ring, path, NR, &issued, &punts);
	if (issued != NR || punts)
		t_fail("%s: %lld of %d statx inline, %lld punted by the depth",
		       why, issued, NR, punts);
}

static void test_depth_one_cpu(struct io_uring *ring, const char *path)
{
	cpu_set_t all, one;

	if (sched_getaffinity(0, sizeof(all), &all))
		t_fail("sched_getaffinity: %s", strerror(errno));
	if (CPU_COUNT(&all) < 2)
		return;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		t_fail("sched_setaffinity: %s", strerror(errno));
	test_depth_all_inline(ring, path, "one CPU");
	if (sched_setaffinity(0, sizeof(all), &all))
		t_fail("sched_setaffinity: %s", strerror(errno));
}

int main(void)
{
	char path[PATH_MAX], policy[32], budget[32], depth[32];
	struct io_uring ring;
	struct t_force tf;
	long long in;
	int fd, ret;

	/* warms an io-wq worker of this task, which serves every ring of it */
	t_force_init(&tf, "policy_depth");
	ret = io_uring_queue_init(NR, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	snprintf(path, sizeof(path), "%s/policy_depth.%d",
		 t_dir("IOUH_TMPFS"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0 || ftruncate(fd, SIZE) || close(fd))
		t_fail("creating %s: %s", path, strerror(errno));
	if (!t_mode_handoff()) {
		in = t_inline_issued();
		t_statx_batch(&ring, path, NR, SIZE);
		t_expect_no_inline(in);
	} else {
		t_setting_get("policy", policy, sizeof(policy));
		t_setting_get("batch_budget_us", budget, sizeof(budget));
		t_setting_get("depth_max", depth, sizeof(depth));
		t_setting_set("policy", "adaptive");
		t_setting_set("batch_budget_us", "0");
		t_setting_set("depth_max", "4");
		test_depth_batch(&ring, path);
		test_depth_cq(&ring, path);
		test_depth_one_cpu(&ring, path);
		t_setting_set("depth_max", "0");
		test_depth_all_inline(&ring, path, "depth_max 0");
		t_setting_set("depth_max", depth);
		t_setting_set("batch_budget_us", budget);
		t_setting_set("policy", policy);
	}
	unlink(path);
	io_uring_queue_exit(&ring);
	t_force_exit(&tf);
	return T_PASS;
}
