// SPDX-License-Identifier: GPL-2.0
/*
 * A chain's member that the kernel would punt (REQ_F_FORCE_ASYNC from its
 * prep, or a read or write that can't go nonblocking) goes inline when it
 * is issued from the task_work run at the end of the io_uring_enter() that
 * submitted its chain, on a DEFER_TASKRUN ring (io_run_local_work_locked()
 * with GETEVENTS): the one point where the worker can finish the call.
 * Everywhere else a member keeps its punt. Issue 30: chain members never
 * reached the module, each forced one cost a punt (docs/notes/links.md).
 *
 * - test_member_hands_off: a statx (forced, no sleep) linked to a FIFO
 *   openat (O_CREAT, forced), released by a writer RELEASE_MS later. The
 *   submit-and-wait for one CQE returns 2 before the writer comes, with the
 *   caller's tid and signal mask; the statx's 0, then the open's fd. Mode
 *   handoff: both went inline, the open handed off. Failed first with the
 *   kernel before the change: "1 inline issues, expected 2".
 * - test_member_refused_after_handoff: a statx linked to a statx, then a
 *   lone FIFO open in the same call. The open hands off in the submission,
 *   so the member, run by the worker finishing the call, is refused
 *   (fallback_batch: one handoff per call) and punts.
 * - test_member_without_getevents: the first chain, submitted without
 *   GETEVENTS (io_uring_submit()), then waited for: the member runs from
 *   the wait and keeps its punt.
 * - test_member_plain_ring_punts: the first chain on a ring without
 *   DEFER_TASKRUN: task_work runs whole lists, where a handoff can't stop,
 *   so the member keeps its punt.
 * - test_member_failure_cancels_rest: statx -> openat (O_CREAT in a
 *   missing directory) -> statx: 0, -ENOENT, -ECANCELED, with the openat
 *   issued inline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define RELEASE_MS	800
#define DEADLINE_MS	4000
#define HEAD_UD		0x4eadULL
#define MEMBER_UD	0x3e3bULL
#define THIRD_UD	0x7d1dULL
#define DEFER_FLAGS	(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

/* a statx of the tmpfs directory, linked to the next SQE if @link */
static void queue_statx(struct io_uring *ring, struct statx *stx,
			unsigned long long ud, int link)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_statx(sqe, AT_FDCWD, t_dir("IOUH_TMPFS"), 0, STATX_TYPE,
			    stx);
	sqe->user_data = ud;
	if (link)
		sqe->flags |= IOSQE_IO_LINK;
}

/* statx -> FIFO open: the chain of the first case */
static void queue_statx_fifo_chain(struct io_uring *ring, struct statx *stx,
				   struct t_fifo *f)
{
	struct io_uring_sqe *sqe;

	queue_statx(ring, stx, HEAD_UD, 1);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("no SQE");
	t_fifo_prep_open(f, sqe, MEMBER_UD);
}

/* the statx's CQE, then the open's fd within the deadline */
static void reap_statx_fifo_chain(struct io_uring *ring, struct statx *stx,
				  struct t_fifo *f)
{
	int res = t_reap_ud_ms(ring, HEAD_UD, DEADLINE_MS, "statx");

	if (res || !S_ISDIR(stx->stx_mode))
		t_fail("statx of the tmpfs directory: res %d mode %o", res,
		       stx->stx_mode);
	t_fifo_check_fd(f, t_reap_ud_ms(ring, MEMBER_UD,
					RELEASE_MS + DEADLINE_MS, "open"));
}

static void test_member_hands_off(struct io_uring *ring)
{
	sigset_t mask_before, mask_after;
	long long before, ho, start, ms;
	pid_t tid = gettid();
	struct statx stx;
	struct t_fifo f;
	int ret;

	t_fifo_init(&f, "link-member");
	pthread_sigmask(SIG_SETMASK, NULL, &mask_before);
	before = t_inline_issued();
	ho = t_counter("handoffs");
	queue_statx_fifo_chain(ring, &stx, &f);
	t_fifo_release_after(&f, RELEASE_MS);
	start = t_now_ms();
	ret = t_submit_and_wait(ring, 1);
	ms = t_now_ms() - start;
	if (ret != 2)
		t_fail("submit and wait for the chain: %d, want 2", ret);
	if (ms >= RELEASE_MS)
		t_fail("the call took %lld ms: it waited for the FIFO's writer (%d ms)",
		       ms, RELEASE_MS);
	pthread_sigmask(SIG_SETMASK, NULL, &mask_after);
	if (gettid() != tid || memcmp(&mask_before, &mask_after, sizeof(mask_after)))
		t_fail("the call came back with tid %d (was %d) or another signal mask",
		       gettid(), tid);
	reap_statx_fifo_chain(ring, &stx, &f);
	t_fifo_exit(&f);
	t_expect_inline(before, 2);
	t_expect_handoff(ho);
}

static void test_member_refused_after_handoff(struct io_uring *ring)
{
	long long before, ho, batch;
	struct statx stx, stx2;
	struct io_uring_sqe *sqe;
	struct t_fifo f;
	int res;

	t_fifo_init(&f, "link-member-batch");
	before = t_inline_issued();
	ho = t_counter("handoffs");
	batch = t_counter("fallback_batch");
	queue_statx(ring, &stx, HEAD_UD, 1);
	queue_statx(ring, &stx2, MEMBER_UD, 0);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("no SQE");
	t_fifo_prep_open(&f, sqe, THIRD_UD);
	t_fifo_release_after(&f, RELEASE_MS);
	res = t_submit_and_wait(ring, 1);
	if (res != 3)
		t_fail("submit and wait: %d, want 3", res);
	if (t_reap_ud_ms(ring, HEAD_UD, DEADLINE_MS, "statx"))
		t_fail("the head statx failed");
	res = t_reap_ud_ms(ring, MEMBER_UD, DEADLINE_MS, "member statx");
	if (res || !S_ISDIR(stx2.stx_mode))
		t_fail("the member statx: res %d mode %o", res, stx2.stx_mode);
	t_fifo_check_fd(&f, t_reap_ud_ms(ring, THIRD_UD,
					 RELEASE_MS + DEADLINE_MS, "open"));
	t_fifo_exit(&f);
	t_expect_inline(before, 2);
	t_expect_handoff(ho);
	t_expect_moved("fallback_batch", batch);
}

static void test_member_without_getevents(struct io_uring *ring)
{
	struct statx stx;
	long long before;
	struct t_fifo f;

	t_fifo_init(&f, "link-member-noget");
	before = t_inline_issued();
	queue_statx_fifo_chain(ring, &stx, &f);
	t_fifo_release_after(&f, RELEASE_MS);
	if (t_submit(ring) != 2)
		t_fail("submit the chain");
	reap_statx_fifo_chain(ring, &stx, &f);
	t_fifo_exit(&f);
	t_expect_inline(before, 1);
}

static void test_member_plain_ring_punts(void)
{
	struct io_uring ring;
	struct statx stx;
	long long before;
	struct t_fifo f;

	if (io_uring_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	t_fifo_init(&f, "link-member-plain");
	before = t_inline_issued();
	queue_statx_fifo_chain(&ring, &stx, &f);
	t_fifo_release_after(&f, RELEASE_MS);
	if (t_submit_and_wait(&ring, 1) != 2)
		t_fail("submit the chain");
	reap_statx_fifo_chain(&ring, &stx, &f);
	t_fifo_exit(&f);
	t_expect_inline(before, 1);
	io_uring_queue_exit(&ring);
}

static void test_member_failure_cancels_rest(struct io_uring *ring)
{
	char missing[PATH_MAX];
	struct statx stx, stx2;
	struct io_uring_sqe *sqe;
	long long before;
	int res;

	snprintf(missing, sizeof(missing), "%s/no-such-dir-%d/file",
		 t_dir("IOUH_TMPFS"), getpid());
	before = t_inline_issued();
	queue_statx(ring, &stx, HEAD_UD, 1);
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_openat(sqe, AT_FDCWD, missing, O_WRONLY | O_CREAT, 0600);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = MEMBER_UD;
	queue_statx(ring, &stx2, THIRD_UD, 0);
	if (t_submit_and_wait(ring, 1) != 3)
		t_fail("submit the chain");
	if (t_reap_ud_ms(ring, HEAD_UD, DEADLINE_MS, "statx"))
		t_fail("the head statx failed");
	res = t_reap_ud_ms(ring, MEMBER_UD, DEADLINE_MS, "open");
	if (res != -ENOENT)
		t_fail("openat in a missing directory: %d, want %d", res,
		       -ENOENT);
	res = t_reap_ud_ms(ring, THIRD_UD, DEADLINE_MS, "statx");
	if (res != -ECANCELED)
		t_fail("the statx after a failed member: %d, want %d", res,
		       -ECANCELED);
	t_expect_inline(before, 2);
}

int main(void)
{
	struct io_uring ring;

	if (t_queue_init(8, &ring, DEFER_FLAGS))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_member_hands_off(&ring);
	t_wait_idle_worker();
	test_member_refused_after_handoff(&ring);
	t_wait_idle_worker();
	test_member_without_getevents(&ring);
	t_wait_idle_worker();
	test_member_failure_cancels_rest(&ring);
	io_uring_queue_exit(&ring);
	t_wait_idle_worker();
	test_member_plain_ring_punts();
	return T_PASS;
}
