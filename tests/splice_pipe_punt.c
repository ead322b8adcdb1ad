// SPDX-License-Identifier: GPL-2.0
/*
 * A splice whose in-file is a pipe keeps the stock path: the pipe is a
 * pollable file the request may wait on, even though the SQE's fd (the
 * out-file) is a regular file. Loaded, the module issues nothing inline
 * (mode handoff and, as always, mode disabled); the results are stock
 * 7.2's.
 *
 * Blocking is forced by a splice from an empty pipe into a tmpfs file
 * (IORING_OP_SPLICE, off_in -1, off_out 0, 4096 bytes), which sleeps until
 * 4096 bytes are written into the pipe, 100 ms after the submit. The CQE
 * must be 4096, the file must hold the bytes, and no inline issue may have
 * been counted. Control: a splice from a tmpfs file into a pipe with room
 * (the out-file is a pipe, pollable too; nothing is claimed about the
 * inline issue) must give 4096, and the pipe the file's bytes.
 *
 * Fails on a kernel/module that applies the pollable-file rule to the SQE's
 * fd only, and so issues the splice from the pipe inline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define SPLICE_UD	0x5711ceULL
#define LEN		4096
#define WRITE_MS	100
#define REAP_MS		5000

static char pattern[LEN];

struct pipe_writer {
	pthread_t thr;
	int fd;
	ssize_t ret;
	int err;
};

static void *pipe_write(void *arg)
{
	struct pipe_writer *w = arg;

	usleep(WRITE_MS * 1000);
	w->ret = write(w->fd, pattern, LEN);
	w->err = errno;
	return NULL;
}

/* a tmpfs file, already unlinked */
static int tmp_file(const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%d", t_dir("IOUH_TMPFS"),
		 name, gettid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	unlink(path);
	return fd;
}

/* submit one splice, its CQE must be the only one: returns its res */
static int splice_one(int fd_in, long long off_in, int fd_out,
		      long long off_out, const char *what)
{
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct io_uring ring;
	int ret, res;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_splice(sqe, fd_in, off_in, fd_out, off_out, LEN, 0);
	io_uring_sqe_set_data64(sqe, SPLICE_UD);
	ret = io_uring_submit(&ring);
	if (ret != 1)
		t_fail("%s: submit returned %d, expected 1", what, ret);
	if (!t_wait_cqe_ms(&ring, REAP_MS, &ud, &res))
		t_fail("%s: no CQE within %d ms", what, REAP_MS);
	if (ud != SPLICE_UD)
		t_fail("%s: CQE user_data %#llx", what, ud);
	if (t_wait_cqe_ms(&ring, 0, &ud, &ret))
		t_fail("%s: extra CQE user_data %#llx res %d", what, ud, ret);
	io_uring_queue_exit(&ring);
	if (res != LEN)
		t_fail("%s: CQE res %d (%s), expected %d", what, res,
		     res < 0 ? strerror(-res) : "short", LEN);
	return res;
}

/* pipe -> file: the in-file is the pollable one */
static void test_from_pipe(void)
{
	const char *what = "splice pipe -> file";
	struct pipe_writer w = { 0 };
	static char buf[LEN + 1];
	int fds[2], fd, ret;
	long long in;

	fd = tmp_file("splice_pipe_punt");
	if (pipe2(fds, O_CLOEXEC))
		t_fail("pipe2: %s", strerror(errno));
	w.fd = fds[1];
	/* started first: it also ends a splice that blocks in place */
	ret = pthread_create(&w.thr, NULL, pipe_write, &w);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	in = t_inline_issued();
	splice_one(fds[0], -1, fd, 0, what);
	pthread_join(w.thr, NULL);
	if (w.ret != LEN)
		t_fail("write into the pipe: %zd (%s)", w.ret, strerror(w.err));
	if (pread(fd, buf, sizeof(buf), 0) != LEN || memcmp(buf, pattern, LEN))
		t_fail("%s: the file does not hold the %d bytes", what, LEN);
	t_expect_no_inline(in);
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

/* control, file -> pipe with room: the result only */
static void test_to_pipe(void)
{
	const char *what = "splice file -> pipe";
	static char buf[LEN + 1];
	int fds[2], fd;

	fd = tmp_file("splice_pipe_punt");
	if (pwrite(fd, pattern, LEN, 0) != LEN)
		t_fail("pwrite: %s", strerror(errno));
	if (pipe2(fds, O_CLOEXEC))
		t_fail("pipe2: %s", strerror(errno));
	splice_one(fd, 0, fds[1], -1, what);
	if (read(fds[0], buf, sizeof(buf)) != LEN || memcmp(buf, pattern, LEN))
		t_fail("%s: the pipe does not hold the file's %d bytes", what,
		     LEN);
	close(fds[0]);
	close(fds[1]);
	close(fd);
}

int main(void)
{
	size_t i;

	for (i = 0; i < LEN; i++)
		pattern[i] = 'A' + i % 29;
	test_from_pipe();
	test_to_pipe();
	return T_PASS;
}
