// SPDX-License-Identifier: GPL-2.0
/*
 * Reads and writes of a file without a nonblocking path go inline. tmpfs in
 * 7.2 doesn't set FMODE_NOWAIT and can't poll, so stock fails the
 * nonblocking issue of IORING_OP_READ/WRITE on it with -EAGAIN and punts it
 * to io-wq; with the module the kernel issues it again, inline in blocking
 * mode. A file in IOUH_TMPFS:
 *
 * - test_read_inline, test_write_inline: one READ, one WRITE of CHUNK bytes
 *   return CHUNK and the right data; in mode handoff each is issued inline
 *   (inline_issued moves by one) and doesn't sleep.
 * - test_read_handoff: a READ into a MAP_SHARED mapping of an ext4 file
 *   written with O_DIRECT, so its pages aren't cached: the copy to the user
 *   buffer faults and waits for the disk (virtio-blk, cache=none), the
 *   inline issue sleeps and hands off in mode handoff. The data must arrive.
 * - test_buffer_select_punted: a READ with a provided buffer
 *   (IOSQE_BUFFER_SELECT) keeps its punt (fallback_request moves, nothing
 *   inline): buffer commits rely on the ring lock a handoff gives away.
 *
 * - test_proc_read_punted: a READ of /proc/self/stat, a file without
 *   FMODE_NOWAIT that isn't tmpfs, keeps its punt (fallback_request moves,
 *   nothing inline). Only tmpfs and ext4's buffered I/O are known to finish
 *   a read or write in the call: a file system whose ->read_iter may return
 *   -EIOCBQUEUED (NFS, FUSE or ceph direct I/O) would complete the request
 *   while the demoted task is still inside it, with no io-wq reference to
 *   keep it (E1).
 *
 * ext4 has FMODE_NOWAIT but no nonblocking buffered write
 * (FOP_BUFFER_WASYNC): stock fails each one's nonblocking issue with -EAGAIN
 * before any I/O and punts it. A file in IOUH_EXT4:
 *
 * - test_ext4_write_inline: a buffered WRITE returns CHUNK, the data reads
 *   back, and in mode handoff it went inline (issue 30).
 * - test_ext4_write_handoff: a buffered WRITE from an uncached mapping
 *   sleeps in the copy's fault and hands off; the data must arrive.
 * - test_ext4_direct_punted: an O_DIRECT WRITE that extends the file, which
 *   ext4 fails with -EAGAIN when it may not wait (the exclusive inode lock),
 *   keeps its punt (fallback_request moves, nothing inline): ext4's direct
 *   I/O returns -EIOCBQUEUED and completes from the bio's end (E1).
 *
 * Fails on a kernel or module that keeps punting reads and writes of such
 * files (nothing issued inline), that issues another file system's or a
 * direct one inline, or that gets their results or data wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <liburing.h>
#include "helpers.h"

#define CHUNK	16384
#define BGID	7

static unsigned char pattern(int i, int seed)
{
	return (i * 7 + i / 4096 * 13 + seed) & 0xff;
}

static void fill(unsigned char *buf, int seed)
{
	int i;

	for (i = 0; i < CHUNK; i++)
		buf[i] = pattern(i, seed);
}

static void expect_pattern(const unsigned char *buf, int seed, const char *what)
{
	int i;

	for (i = 0; i < CHUNK; i++)
		if (buf[i] != pattern(i, seed))
			t_fail("%s: wrong data at %d", what, i);
}

/* one SQE queued by the caller: submit, reap, return res */
static int submit_one(struct io_uring *ring, unsigned int *cflags)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_submit_and_wait(ring, 1);
	if (ret != 1)
		t_fail("submit: %d", ret);
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		t_fail("wait_cqe: %s", strerror(-ret));
	ret = cqe->res;
	if (cflags)
		*cflags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * READ of CHUNK bytes at 0 into @buf, with a warm worker: it must return
 * CHUNK and pattern 1. @in, @ho: the counters from before it.
 */
static void read_chunk(struct io_uring *ring, int fd, unsigned char *buf,
		       const char *what, long long *in, long long *ho)
{
	int res;

	t_wait_idle_worker();
	*in = t_inline_issued();
	*ho = t_counter("handoffs");
	io_uring_prep_read(io_uring_get_sqe(ring), fd, buf, CHUNK, 0);
	res = submit_one(ring, NULL);
	if (res != CHUNK)
		t_fail("%s: res %d, expected %d", what, res, CHUNK);
	expect_pattern(buf, 1, what);
}

static void test_read_inline(struct io_uring *ring, int fd)
{
	static unsigned char src[CHUNK], dst[CHUNK];
	long long in, ho;

	fill(src, 1);
	if (pwrite(fd, src, CHUNK, 0) != CHUNK)
		t_fail("pwrite: %s", strerror(errno));
	read_chunk(ring, fd, dst, "read of tmpfs", &in, &ho);
	t_expect_inline(in, 1);
	t_expect_unmoved("handoffs", ho);
}

/*
 * WRITE of CHUNK bytes from @src at @off of @fd, with a warm worker: it must
 * return CHUNK and read back as @src. @in, @ho: the counters from before it.
 */
static void write_chunk(struct io_uring *ring, int fd, const unsigned char *src,
			off_t off, const char *what, long long *in,
			long long *ho)
{
	static unsigned char dst[CHUNK];
	int res;

	t_wait_idle_worker();
	*in = t_inline_issued();
	*ho = t_counter("handoffs");
	io_uring_prep_write(io_uring_get_sqe(ring), fd, src, CHUNK, off);
	res = submit_one(ring, NULL);
	if (res != CHUNK)
		t_fail("%s: res %d, expected %d", what, res, CHUNK);
	if (pread(fd, dst, CHUNK, off) != CHUNK)
		t_fail("%s: pread: %s", what, strerror(errno));
	if (memcmp(dst, src, CHUNK))
		t_fail("%s: wrong data", what);
}

static void test_write_inline(struct io_uring *ring, int fd)
{
	static unsigned char src[CHUNK];
	long long in, ho;

	fill(src, 2);
	write_chunk(ring, fd, src, CHUNK, "write to tmpfs", &in, &ho);
	t_expect_inline(in, 1);
}

/*
 * A READ into, or a WRITE from, an uncached mapping must sleep in the copy's
 * fault and hand off. One whose pages were cached after all never slept
 * (inline_done moved): that premise failed, try again with a fresh file, up
 * to HANDOFF_TRIES times. Sleeping in place (blocked_*) or not going inline
 * fails at once.
 */
#define HANDOFF_TRIES	3

static void handoff_via_map(struct io_uring *ring, int fd, int write,
			    const char *what)
{
	char path[PATH_MAX];
	unsigned char *map;
	long long in, ho, done;
	int try;

	for (try = 1; ; try++) {
		map = t_uncached_map(path, sizeof(path), "rw_no_nowait.map",
				     CHUNK);
		done = t_counter("inline_done");
		if (write)
			write_chunk(ring, fd, map, CHUNK, what, &in, &ho);
		else
			read_chunk(ring, fd, map, what, &in, &ho);
		t_uncached_unmap(map, path, CHUNK);
		t_expect_inline(in, 1);
		if (!t_mode_handoff() || t_counter("handoffs") != ho ||
		    try == HANDOFF_TRIES || t_counter("inline_done") == done)
			break;
		fprintf(stderr, "note: try %d: the %s didn't sleep (its pages were cached?), again\n",
			try, what);
	}
	if (t_mode_handoff() && t_counter("handoffs") == ho)
		fprintf(stderr, "note: inline_done %+lld, blocked_lock %lld, blocked_task %lld in all\n",
			t_counter("inline_done") - done,
			t_counter("blocked_lock"), t_counter("blocked_task"));
	t_expect_handoff(ho);
}

static void test_read_handoff(struct io_uring *ring, int fd)
{
	handoff_via_map(ring, fd, 0, "read of tmpfs into an uncached mapping");
}

static void test_ext4_write_inline(struct io_uring *ring, int fd)
{
	static unsigned char src[CHUNK];
	long long in, ho;

	fill(src, 3);
	write_chunk(ring, fd, src, 0, "buffered write to ext4", &in, &ho);
	t_expect_inline(in, 1);
}

static void test_ext4_write_handoff(struct io_uring *ring, int fd)
{
	handoff_via_map(ring, fd, 1,
			"buffered write to ext4 from an uncached mapping");
}

static void test_ext4_direct_punted(struct io_uring *ring)
{
	char path[PATH_MAX];
	long long in, fb;
	void *buf;
	int fd, res;

	snprintf(path, sizeof(path), "%s/rw_no_nowait.direct.%d",
		 t_dir("IOUH_EXT4"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_DIRECT, 0600);
	if (fd < 0)
		t_fail("open %s O_DIRECT: %s", path, strerror(errno));
	if (posix_memalign(&buf, 4096, CHUNK))
		t_fail("posix_memalign");
	memset(buf, 0x5a, CHUNK);
	t_wait_idle_worker();
	in = t_inline_issued();
	fb = t_counter("fallback_request");
	io_uring_prep_write(io_uring_get_sqe(ring), fd, buf, CHUNK, 0);
	res = submit_one(ring, NULL);
	if (res != CHUNK)
		t_fail("O_DIRECT write to ext4: res %d, expected %d", res, CHUNK);
	free(buf);
	close(fd);
	unlink(path);
	t_expect_no_inline(in);
	t_expect_moved("fallback_request", fb);
}

static void test_buffer_select_punted(struct io_uring *ring, int fd)
{
	static unsigned char bufs[CHUNK];
	long long in, fb;
	unsigned int cflags;
	int res;

	io_uring_prep_provide_buffers(io_uring_get_sqe(ring), bufs, CHUNK, 1,
				      BGID, 0);
	res = submit_one(ring, NULL);
	if (res < 0)
		t_fail("provide buffers: %d", res);
	t_wait_idle_worker();
	in = t_inline_issued();
	fb = t_counter("fallback_request");
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_read(sqe, fd, NULL, CHUNK, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = BGID;
	}
	res = submit_one(ring, &cflags);
	if (res != CHUNK || !(cflags & IORING_CQE_F_BUFFER))
		t_fail("buffer select read: res %d, flags %#x", res, cflags);
	expect_pattern(bufs, 1, "buffer select read");
	t_expect_no_inline(in);
	t_expect_moved("fallback_request", fb);
}

static void test_proc_read_punted(struct io_uring *ring)
{
	static char buf[CHUNK];
	long long in, fb;
	int fd, res;

	fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		t_fail("open /proc/self/stat: %s", strerror(errno));
	t_wait_idle_worker();
	in = t_inline_issued();
	fb = t_counter("fallback_request");
	io_uring_prep_read(io_uring_get_sqe(ring), fd, buf, sizeof(buf), 0);
	res = submit_one(ring, NULL);
	if (res <= 0 || !memchr(buf, ')', res))
		t_fail("read of /proc/self/stat: res %d", res);
	close(fd);
	t_expect_no_inline(in);
	t_expect_moved("fallback_request", fb);
}

int main(void)
{
	char path[PATH_MAX];
	struct t_force tf;
	int fd;

	/* the io-wq worker an inline issue needs, and IOUH_EXT4 */
	t_force_init(&tf, "rw_no_nowait");
	snprintf(path, sizeof(path), "%s/rw_no_nowait.%d",
		 t_dir("IOUH_TMPFS"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	test_read_inline(&tf.ring, fd);
	test_write_inline(&tf.ring, fd);
	test_read_handoff(&tf.ring, fd);
	test_buffer_select_punted(&tf.ring, fd);
	test_proc_read_punted(&tf.ring);
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/rw_no_nowait.%d",
		 t_dir("IOUH_EXT4"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	test_ext4_write_inline(&tf.ring, fd);
	test_ext4_write_handoff(&tf.ring, fd);
	test_ext4_direct_punted(&tf.ring);
	close(fd);
	unlink(path);
	t_force_exit(&tf);
	return T_PASS;
}
