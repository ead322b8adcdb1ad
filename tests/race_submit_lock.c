// SPDX-License-Identifier: GPL-2.0
/*
 * An inline issue that sleeps inside a section that relies on the ring lock
 * (io_ring_submit_lock() to _unlock(), issued with the lock held from
 * io_uring_enter()) must not hand off: the commit releases that lock for
 * the worker that takes over, and the section would go on without it, then
 * unlock a mutex it no longer owns. The module sleeps in place instead
 * (blocked_lock), which the submit lock depth the core patch keeps tells it.
 * Review item: "submit_lock_depth: no test fails without it".
 *
 * Delay point "submit_lock" (a debug kernel; skipped elsewhere): a sleep of
 * LOCK_MS inside the section, in an inline issue only. An openat with
 * O_CREAT (force-async, inline) into a fixed file slot
 * (IORING_FILE_INDEX_ALLOC; without O_CLOEXEC, which a direct open
 * refuses) installs its file in such a section (io_fixed_fd_install()), so
 * it first sleeps there.
 *
 * test_open_direct_sleeps_in_place: its CQE gives slot 0, the slot holds
 * the file (a write through it lands), and in mode handoff the issue went
 * inline, blocked_lock moved and handoffs did not. Fails with a module that
 * doesn't check the depth: handoffs moves (and the debug kernel warns of an
 * unlock of a mutex by a task that doesn't own it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define LOCK_MS		200
#define OPEN_UD		0x5107ULL
#define WRITE_UD	0x3717ULL

static void test_open_direct_sleeps_in_place(struct io_uring *ring,
					     const char *path)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	long long before, ho, bl;
	struct stat st;

	t_delay_point_need("submit_lock", LOCK_MS);
	before = t_inline_issued();
	ho = t_counter("handoffs");
	bl = t_counter("blocked_lock");
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_openat_direct(sqe, AT_FDCWD, path,
				    O_WRONLY | O_CREAT, 0600,
				    IORING_FILE_INDEX_ALLOC);
	sqe->user_data = OPEN_UD;
	if (t_submit(ring) != 1)
		t_fail("submit the openat");
	t_delay_point("submit_lock", 0);
	if (io_uring_wait_cqe(ring, &cqe))
		t_fail("wait for the openat's CQE");
	if (cqe->user_data != OPEN_UD || cqe->res != 0)
		t_fail("openat direct: user_data %#llx res %d, want slot 0",
		       (unsigned long long)cqe->user_data, cqe->res);
	io_uring_cqe_seen(ring, cqe);
	t_expect_inline(before, 1);
	t_expect_unmoved("handoffs", ho);
	t_expect_moved("blocked_lock", bl);

	/* the slot holds the file the open created */
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_write(sqe, 0, "slot", 4, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = WRITE_UD;
	if (t_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		t_fail("the write through slot 0");
	if (cqe->res != 4)
		t_fail("write through slot 0: %d, want 4", cqe->res);
	io_uring_cqe_seen(ring, cqe);
	if (stat(path, &st) || st.st_size != 4)
		t_fail("the file has %lld bytes, want 4", (long long)st.st_size);
}

int main(void)
{
	struct io_uring ring;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/submit-lock-%d", t_dir("IOUH_TMPFS"),
		 getpid());
	t_track(path, 1);
	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	if (io_uring_register_files_sparse(&ring, 4))
		t_fail("register a sparse file table");
	t_warm(&ring);
	test_open_direct_sleeps_in_place(&ring, path);
	io_uring_queue_exit(&ring);
	unlink(path);
	t_track(path, 0);
	return T_PASS;
}
