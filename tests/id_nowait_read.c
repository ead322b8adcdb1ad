// SPDX-License-Identifier: GPL-2.0
/*
 * Reads of FMODE_NOWAIT files keep their nonblocking issue. A file in
 * IOUH_EXT4 (ext4 sets FMODE_NOWAIT; tmpfs in 7.2 does not, its reads are
 * punted, so it is no case for this) is written with pwrite, so its pages
 * are cached, then read back with four IORING_OP_READs in one submit. All
 * must return the full length and the data written, and in mode handoff
 * neither "handoffs" nor "inline_done" may move: the reads are not
 * candidates for an inline blocking issue at all. As a control, a blocking
 * fsync on the same ring must then hand off in mode handoff (skip if it
 * does not, unless IOUH_EXPECT_HANDOFF=1). Blocking is forced by fsync of
 * dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that issues reads of FMODE_NOWAIT files inline in
 * blocking mode with a handoff armed (inline_done or handoffs moves), or
 * that gets their data or results wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define NR_READS	4
#define CHUNK		16384

static unsigned char pattern(int i)
{
	return (i * 7 + i / CHUNK * 13 + 1) & 0xff;
}

static void reads(struct t_force *tf)
{
	static unsigned char src[NR_READS * CHUNK], dst[NR_READS][CHUNK];
	int seen[NR_READS] = { 0 };
	long long ho, in;
	int i, ret;

	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = pattern(i);
	if (pwrite(tf->fd, src, sizeof(src), 0) != sizeof(src))
		t_fail("pwrite: %s", strerror(errno));
	memset(dst, 0, sizeof(dst));

	for (i = 0; i < NR_READS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&tf->ring);

		io_uring_prep_read(sqe, tf->fd, dst[i], CHUNK, i * CHUNK);
		sqe->user_data = i;
	}
	ho = t_counter("handoffs");
	in = t_counter("inline_done");
	ret = io_uring_submit_and_wait(&tf->ring, NR_READS);
	if (ret != NR_READS)
		t_fail("submit reads: %d", ret);
	for (i = 0; i < NR_READS; i++) {
		struct io_uring_cqe *cqe;
		unsigned int ud;

		ret = io_uring_wait_cqe(&tf->ring, &cqe);
		if (ret)
			t_fail("wait_cqe: %s", strerror(-ret));
		ud = cqe->user_data;
		if (ud >= NR_READS || seen[ud]++)
			t_fail("bogus or repeated user_data %u", ud);
		if (cqe->res != CHUNK)
			t_fail("read %u: res %d, expected %d", ud, cqe->res,
			     CHUNK);
		io_uring_cqe_seen(&tf->ring, cqe);
	}
	{
		struct io_uring_cqe *cqe;

		if (!io_uring_peek_cqe(&tf->ring, &cqe))
			t_fail("extra CQE, user_data %llu",
			     (unsigned long long)cqe->user_data);
	}
	for (i = 0; i < NR_READS; i++)
		if (memcmp(dst[i], src + i * CHUNK, CHUNK))
			t_fail("read %d: wrong data", i);
	t_expect_unmoved("handoffs", ho);
	t_expect_unmoved("inline_done", in);
}

int main(void)
{
	struct t_force tf;
	long long ho;

	/* a spare worker exists, so only the file rules the reads out */
	t_force_init(&tf, "id_nowait_read");
	reads(&tf);

	ho = t_force_block(&tf);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return T_PASS;
}
