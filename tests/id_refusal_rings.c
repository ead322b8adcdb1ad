// SPDX-License-Identifier: GPL-2.0
/*
 * Rings that issue differently are refused for a handoff.
 *
 * SQPOLL: a blocking fsync submitted through an IORING_SETUP_SQPOLL ring
 * (issued by the SQ thread, an io thread) completes with 0 and, in mode
 * handoff, is not issued inline (no inline counter moves) while
 * "fallback_ring" does.
 *
 * IOPOLL: stock 7.2 fails any opcode without polled completion on an
 * IORING_SETUP_IOPOLL ring with -EINVAL at SQE init (io_init_req()), and
 * blockable opcodes have none, so a statx there must get -EINVAL in every
 * mode, and move neither counter: the refusal must stay ahead of any
 * inline blocking issue.
 *
 * As a control, a blocking fsync on a plain ring of the same thread must
 * then hand off in mode handoff (skip if it does not, unless
 * IOUH_EXPECT_HANDOFF=1). Blocking is forced by fsync of dirty data on
 * ext4, see helpers.c.
 *
 * Fails on a kernel that issues SQPOLL or IOPOLL ring requests inline in
 * blocking mode, or hands off the SQ thread's identity.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define STATX_UD	0x57a7

static void sqpoll(void)
{
	long long ho, in, fb;
	struct t_force tf;

	t_force_init_flags(&tf, "id_refusal_rings.sqpoll", IORING_SETUP_SQPOLL);
	in = t_inline_issued();
	fb = t_counter("fallback_ring");
	ho = t_force_block(&tf);
	t_expect_unmoved("handoffs", ho);
	t_expect_no_inline(in);
	t_expect_moved("fallback_ring", fb);
	t_force_exit(&tf);
}

static void iopoll(const char *path)
{
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	long long ho, in;
	struct statx stx;
	int ret;

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_IOPOLL);
	if (ret)
		t_fail("IOPOLL queue_init: %s", strerror(-ret));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_statx(sqe, AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx);
	sqe->user_data = STATX_UD;
	ho = t_counter("handoffs");
	in = t_counter("inline_done");
	ret = io_uring_submit(&ring);
	if (ret != 1)
		t_fail("IOPOLL submit: %d", ret);
	ret = t_reap_one(&ring, STATX_UD);
	if (ret != -EINVAL)
		t_fail("IOPOLL statx res %d (%s), stock gives -EINVAL", ret,
		     strerror(-ret));
	t_expect_unmoved("handoffs", ho);
	t_expect_unmoved("inline_done", in);
	io_uring_queue_exit(&ring);
}

int main(void)
{
	struct t_force tf;
	long long ho;

	/* our own io-wq worker first, so a spare exists throughout */
	t_force_init(&tf, "id_refusal_rings");
	sqpoll();
	iopoll(tf.path);

	t_wait_idle_worker();
	ho = t_force_block(&tf);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return T_PASS;
}
