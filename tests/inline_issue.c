// SPDX-License-Identifier: GPL-2.0
/*
 * Force-async blockable requests are issued inline in blocking mode with the
 * module loaded and enabled, and punted to io-wq upfront otherwise.
 *
 * Mode handoff: N fsyncs of a clean tmpfs file (never sleep) move
 * "inline_done" by exactly N; N statx likewise. An fsync of dirty data on
 * ext4 (IOUH_EXT4, virtio-blk with cache=none: it waits for the device)
 * sleeps in its inline issue: exactly one inline issue, handed off, not
 * counted as inline_done. The thread is warm first (an idle io-wq worker to
 * hand off to, without one nothing goes inline). Mode disabled: no request
 * is issued inline. Every mode: each SQE gets exactly one CQE with the
 * synchronous syscall's result.
 *
 * Fails on a kernel or module that keeps punting these requests upfront,
 * issues them inline while disabled, or miscounts a sleep.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <liburing.h>
#include "helpers.h"

#define N	16

static void submit_wait_all(struct io_uring *ring, int n, int want)
{
	struct io_uring_cqe *cqe;
	int i, ret;

	ret = io_uring_submit(ring);
	if (ret != n)
		t_fail("submit: %d, expected %d", ret, n);
	for (i = 0; i < n; i++) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret)
			t_fail("wait_cqe: %s", strerror(-ret));
		if (cqe->res != want)
			t_fail("cqe %llu: res %d, expected %d",
			     (unsigned long long)cqe->user_data, cqe->res, want);
		io_uring_cqe_seen(ring, cqe);
	}
	if (io_uring_peek_cqe(ring, &cqe) == 0)
		t_fail("an extra CQE, user_data %llu",
		     (unsigned long long)cqe->user_data);
}

/* clean tmpfs fsyncs and statx: never sleep, all inline_done */
static void tmpfs_batch(const char *dir)
{
	struct statx stx[N];
	struct io_uring ring;
	char path[4096];
	long long in, all;
	int fd, i;

	snprintf(path, sizeof(path), "%s/inline_issue.%d", dir, getpid());
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		t_fail("create %s", path);
	if (io_uring_queue_init(2 * N, &ring, 0))
		t_fail("queue_init");
	t_warm(&ring);

	in = t_counter("inline_done");
	all = t_inline_issued();
	for (i = 0; i < N; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_fsync(sqe, fd, 0);
		io_uring_sqe_set_data64(sqe, i);
	}
	submit_wait_all(&ring, N, 0);
	for (i = 0; i < N; i++)
		io_uring_prep_statx(io_uring_get_sqe(&ring), AT_FDCWD, path, 0,
				    STATX_SIZE, &stx[i]);
	submit_wait_all(&ring, N, 0);
	for (i = 0; i < N; i++)
		if (stx[i].stx_size != 1)
			t_fail("statx %d: size %llu", i,
			     (unsigned long long)stx[i].stx_size);
	if (t_mode_handoff() &&
	    t_counter("inline_done") - in != 2 * N)
		t_fail("inline_done moved by %lld, expected %d",
		     t_counter("inline_done") - in, 2 * N);
	t_expect_inline(all, 2 * N);
	if (!t_mode_handoff())
		t_expect_no_inline(all);
	io_uring_queue_exit(&ring);
	close(fd);
	unlink(path);
}

/* dirty ext4 fsync: one inline issue that sleeps */
static void ext4_block(void)
{
	long long in, all, ho;
	struct t_force tf;

	t_force_init(&tf, "inline_issue");
	in = t_counter("inline_done");
	all = t_inline_issued();
	ho = t_force_block(&tf);
	t_expect_inline(all, 1);
	t_expect_handoff(ho);
	if (t_mode_handoff() && t_counter("inline_done") != in)
		t_fail("a sleeping issue was counted as inline_done");
	if (!t_mode_handoff())
		t_expect_no_inline(all);
	t_force_exit(&tf);
}

int main(void)
{
	tmpfs_batch(t_dir("IOUH_TMPFS"));
	ext4_block();
	return T_PASS;
}
