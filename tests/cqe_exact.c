// SPDX-License-Identifier: GPL-2.0
/*
 * Every SQE gets exactly one CQE with the result the synchronous syscall
 * gives: a batch of fsync, statx (existing and missing path), openat and
 * fadvise on tmpfs and on ext4, each with its own user_data. The fsyncs run
 * on dirty data, so on ext4 they block in the flush.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <liburing.h>
#include "helpers.h"

#define NR	32

struct expect {
	int res;
	int seen;
};

static void run(const char *dir)
{
	struct io_uring ring;
	struct expect exp[NR] = { 0 };
	struct statx stx[NR], ref;
	char path[512], missing[512];
	int fd, i, ret;
	char buf[4096];

	snprintf(path, sizeof(path), "%s/cqe_exact", dir);
	snprintf(missing, sizeof(missing), "%s/no-such-file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	memset(buf, 0xa5, sizeof(buf));
	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &ref))
		t_fail("statx: %s", strerror(errno));

	ret = t_queue_init(NR, &ring, 0);
	if (ret)
		t_fail("queue_init: %d", ret);

	for (i = 0; i < NR; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		switch (i % 4) {
		case 0:
			if (pwrite(fd, buf, sizeof(buf), i * 4096) != sizeof(buf))
				t_fail("pwrite: %s", strerror(errno));
			io_uring_prep_fsync(sqe, fd, 0);
			exp[i].res = 0;
			break;
		case 1:
			io_uring_prep_statx(sqe, AT_FDCWD, path, 0,
					    STATX_BASIC_STATS, &stx[i]);
			exp[i].res = 0;
			break;
		case 2:
			io_uring_prep_statx(sqe, AT_FDCWD, missing, 0,
					    STATX_BASIC_STATS, &stx[i]);
			exp[i].res = -ENOENT;
			break;
		case 3:
			io_uring_prep_fadvise(sqe, fd, 0, 4096,
					      POSIX_FADV_DONTNEED);
			exp[i].res = 0;
			break;
		}
		sqe->user_data = i;
	}
	ret = io_uring_submit_and_wait(&ring, NR);
	if (ret != NR)
		t_fail("submit: %d", ret);

	for (i = 0; i < NR; i++) {
		struct io_uring_cqe *cqe;
		unsigned int ud;

		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret)
			t_fail("wait_cqe %d: %d", i, ret);
		ud = cqe->user_data;
		if (ud >= NR)
			t_fail("bogus user_data %u", ud);
		if (exp[ud].seen++)
			t_fail("second CQE for user_data %u", ud);
		if (cqe->res != exp[ud].res)
			t_fail("user_data %u: res %d, expected %d", ud, cqe->res,
			     exp[ud].res);
		if (ud % 4 == 1 && stx[ud].stx_ino != ref.stx_ino)
			t_fail("statx %u: ino %llu, expected %llu", ud,
			     (unsigned long long)stx[ud].stx_ino,
			     (unsigned long long)ref.stx_ino);
		io_uring_cqe_seen(&ring, cqe);
	}
	/* and nothing more arrives */
	{
		struct io_uring_cqe *cqe;

		if (!io_uring_peek_cqe(&ring, &cqe))
			t_fail("extra CQE, user_data %llu",
			     (unsigned long long)cqe->user_data);
	}
	io_uring_queue_exit(&ring);
	close(fd);
	unlink(path);
}

int main(void)
{
	run(t_dir("IOUH_TMPFS"));
	run(t_dir("IOUH_EXT4"));
	return T_PASS;
}
