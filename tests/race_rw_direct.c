// SPDX-License-Identifier: GPL-2.0
/*
 * A buffered ext4 write goes inline after its nonblocking -EAGAIN, but the
 * kernel's blocking issue copies the file's flags again: an
 * fcntl(F_SETFL, O_DIRECT) between the module's check and that issue makes
 * it direct I/O, which returns -EIOCBQUEUED and completes from the bio's
 * end. A handoff would give the completion's task_work to the worker that
 * takes the identity while the demoted task is still in the file system,
 * with no io-wq reference on the request (E1). The module sleeps in place
 * instead (blocked_request), at the first sleep.
 *
 * Delay point "retry" (a debug kernel; skipped elsewhere): the kernel
 * busy-waits DELAY_MS between the module's yes and the blocking issue.
 * Another thread sets O_DIRECT SET_MS into it. The write's source is an
 * uncached mapping, so the direct write's page pinning faults and sleeps.
 *
 * test_direct_after_check_sleeps_in_place: the CQE gives CHUNK, the data
 * reads back, and in mode handoff the write went inline, blocked_request
 * moved and handoffs did not. Fails with a module that doesn't look at the
 * kiocb at the first sleep: handoffs moves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define CHUNK		16384
#define DELAY_MS	400
#define SET_MS		100

static void *set_direct_later(void *arg)
{
	int fd = *(int *)arg, fl;

	usleep(SET_MS * 1000);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT))
		t_fail("fcntl F_SETFL O_DIRECT: %s", strerror(errno));
	return NULL;
}

static void test_direct_after_check_sleeps_in_place(struct io_uring *ring,
						    int fd)
{
	char path[PATH_MAX];
	struct io_uring_cqe *cqe;
	long long in, ho, br;
	unsigned char *map;
	void *back;
	pthread_t th;
	int res;

	map = t_uncached_map(path, sizeof(path), "race_rw_direct.map", CHUNK);
	t_delay_point_need("retry", DELAY_MS);
	t_wait_idle_worker();
	in = t_inline_issued();
	ho = t_counter("handoffs");
	br = t_counter("blocked_request");
	io_uring_prep_write(io_uring_get_sqe(ring), fd, map, CHUNK, 0);
	if (pthread_create(&th, NULL, set_direct_later, &fd))
		t_fail("pthread_create");
	if (t_submit(ring) != 1)
		t_fail("submit the write");
	pthread_join(th, NULL);
	t_delay_point("retry", 0);
	if (io_uring_wait_cqe(ring, &cqe))
		t_fail("wait for the write's CQE");
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (res != CHUNK)
		t_fail("write: res %d, expected %d", res, CHUNK);
	if (posix_memalign(&back, 4096, CHUNK))
		t_fail("posix_memalign");
	memset(back, 0xff, CHUNK);
	if (pread(fd, back, CHUNK, 0) != CHUNK || memcmp(back, map, CHUNK))
		t_fail("the write's data didn't arrive");
	free(back);
	t_uncached_unmap(map, path, CHUNK);
	t_expect_inline(in, 1);
	t_expect_unmoved("handoffs", ho);
	t_expect_moved("blocked_request", br);
}

int main(void)
{
	struct io_uring ring;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/race_rw_direct.%d",
		 t_dir("IOUH_EXT4"), (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	t_track(path, 1);
	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_direct_after_check_sleeps_in_place(&ring, fd);
	io_uring_queue_exit(&ring);
	close(fd);
	unlink(path);
	t_track(path, 0);
	return T_PASS;
}
