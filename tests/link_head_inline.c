// SPDX-License-Identifier: GPL-2.0
/*
 * A link head that the kernel would punt up front (REQ_F_FORCE_ASYNC from
 * its prep) goes inline like any other such request, and its chain runs
 * as it does behind a head that completed inline: each member after the
 * head, a failed head cancels the rest. Issue 30: link heads never
 * reached the module (io_submit_sqe() sent every forced head of a chain to
 * io-wq), so tree walkers' chains took the punt.
 *
 * - test_link_head_hands_off: a FIFO openat for reading (O_CREAT, forced
 *   async), linked to a statx of the FIFO, released by a writer RELEASE_MS
 *   later. The open's fd comes first, then the statx's 0; in mode handoff
 *   the head went inline (the statx, issued from task_work, punts) and
 *   handed off. Failed first with the kernel before the change: "0 inline
 *   issues, expected 1".
 * - test_link_head_failure_cancels_member: an openat with O_CREAT in a
 *   missing directory, linked to a statx: -ENOENT, then -ECANCELED.
 * - test_link_timeout_head_as_stock: the FIFO open linked to a LINK_TIMEOUT
 *   of TIMEOUT_MS, the writer TIMED_RELEASE_MS later. Stock (measured in
 *   mode stock) arms a linked timeout only once its head's issue returns,
 *   on io-wq as inline (__io_issue_sqe()), so the timeout doesn't cut the
 *   open short: the open gives its fd when the writer comes, the timeout
 *   -ECANCELED. The inline head, handed off, must give the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define RELEASE_MS	300
#define TIMEOUT_MS	200
#define DEADLINE_MS	4000
#define TIMED_RELEASE_MS	1000
#define HEAD_UD		0x4eadULL
#define MEMBER_UD	0x3e3bULL

/* the FIFO open as a chain's head, linked to the SQE it returns */
static struct io_uring_sqe *queue_fifo_head(struct io_uring *ring,
					    struct t_fifo *f)
{
	struct io_uring_sqe *head = io_uring_get_sqe(ring);
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!head || !sqe)
		t_fail("no SQE");
	t_fifo_prep_open(f, head, HEAD_UD);
	head->flags |= IOSQE_IO_LINK;
	return sqe;
}

static void test_link_head_hands_off(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;
	long long before, ho;
	struct statx stx;
	struct t_fifo f;
	int res;

	t_fifo_init(&f, "link-head");
	before = t_inline_issued();
	ho = t_counter("handoffs");
	sqe = queue_fifo_head(ring, &f);
	io_uring_prep_statx(sqe, AT_FDCWD, f.path, 0, STATX_TYPE, &stx);
	sqe->user_data = MEMBER_UD;
	t_fifo_release_after(&f, RELEASE_MS);
	if (t_submit(ring) != 2)
		t_fail("submit the chain");
	t_fifo_check_fd(&f, t_reap_ud_ms(ring, HEAD_UD, DEADLINE_MS, "open"));
	res = t_reap_ud_ms(ring, MEMBER_UD, DEADLINE_MS, "statx");
	if (res || !S_ISFIFO(stx.stx_mode))
		t_fail("statx after the open: res %d mode %o", res,
		       stx.stx_mode);
	t_fifo_exit(&f);
	t_expect_inline(before, 1);
	t_expect_handoff(ho);
}

static void test_link_head_failure_cancels_member(struct io_uring *ring)
{
	char path[PATH_MAX], missing[PATH_MAX + 32];
	struct io_uring_sqe *sqe;
	long long before;
	struct statx stx;
	int res;

	snprintf(path, sizeof(path), "%s/link-head-%d", t_dir("IOUH_TMPFS"),
		 getpid());
	snprintf(missing, sizeof(missing), "%s/no-such-dir/file", path);
	before = t_inline_issued();
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_openat(sqe, AT_FDCWD, missing, O_WRONLY | O_CREAT, 0600);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = HEAD_UD;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_statx(sqe, AT_FDCWD, "/", 0, STATX_TYPE, &stx);
	sqe->user_data = MEMBER_UD;
	if (t_submit(ring) != 2)
		t_fail("submit the chain");
	res = t_reap_ud_ms(ring, HEAD_UD, DEADLINE_MS, "open");
	if (res != -ENOENT)
		t_fail("openat in a missing directory: %d, want %d", res,
		       -ENOENT);
	res = t_reap_ud_ms(ring, MEMBER_UD, DEADLINE_MS, "statx");
	if (res != -ECANCELED)
		t_fail("the member after a failed head: %d, want %d", res,
		       -ECANCELED);
	t_expect_inline(before, 1);
}

static void test_link_timeout_head_as_stock(struct io_uring *ring)
{
	struct __kernel_timespec ts = { 0, TIMEOUT_MS * 1000000LL };
	int i, res, open_res = -1, timeout_res = 1;
	long long before, ho, start, open_ms = 0;
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct t_fifo f;

	t_fifo_init(&f, "link-timeout");
	before = t_inline_issued();
	ho = t_counter("handoffs");
	sqe = queue_fifo_head(ring, &f);
	io_uring_prep_link_timeout(sqe, &ts, 0);
	sqe->user_data = MEMBER_UD;
	t_fifo_release_after(&f, TIMED_RELEASE_MS);
	start = t_now_ms();
	if (t_submit(ring) != 2)
		t_fail("submit the chain");
	for (i = 0; i < 2; i++) {
		if (!t_wait_cqe_ms(ring, TIMED_RELEASE_MS + 5000, &ud, &res))
			t_fail("%d of 2 CQEs", i);
		if (ud == HEAD_UD) {
			open_res = res;
			open_ms = t_now_ms() - start;
		} else if (ud == MEMBER_UD) {
			timeout_res = res;
		} else {
			t_fail("CQE %#llx res %d", ud, res);
		}
	}
	t_fifo_check_fd(&f, open_res);
	if (open_ms < TIMED_RELEASE_MS - 100 || timeout_res != -ECANCELED)
		t_fail("open %d after %lld ms, timeout %d: stock gives the fd once the writer comes (%d ms) and %d",
		       open_res, open_ms, timeout_res, TIMED_RELEASE_MS,
		       -ECANCELED);
	t_fifo_exit(&f);
	t_expect_inline(before, 1);
	t_expect_handoff(ho);
}

int main(void)
{
	struct io_uring ring;

	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_link_head_hands_off(&ring);
	t_wait_idle_worker();
	test_link_head_failure_cancels_member(&ring);
	t_wait_idle_worker();
	test_link_timeout_head_as_stock(&ring);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
