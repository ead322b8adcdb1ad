// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's io_uring restrictions (IORING_REGISTER_RESTRICTIONS with fd -1:
 * the opcodes rings it creates may issue, set once, like a seccomp filter)
 * stay the thread's across a blocking submit.
 *
 * In a new thread: a ring made warm first (its io-wq worker forked before
 * any restriction), then the thread restricts itself to NOP and FSYNC and
 * forces a blocking fsync on that ring, which hands off in mode handoff.
 * After it: test_restricted_ring, a ring the thread creates now fails a
 * STATX with -EACCES and runs a NOP; test_restriction_set_once, a second
 * registration fails with -EPERM. As on stock.
 *
 * Fails on a module that leaves the restrictions on the task that handed
 * off: the thread gets the worker's (none) and escapes them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "helpers.h"

/* NOP and FSYNC allowed, nothing else; -errno or 0 */
static int restrict_self(void)
{
	struct io_uring_task_restriction *tres;
	int ret;

	tres = calloc(1, sizeof(*tres) + 2 * sizeof(tres->restrictions[0]));
	if (!tres)
		t_fail("calloc");
	tres->nr_res = 2;
	tres->restrictions[0].opcode = IORING_RESTRICTION_SQE_OP;
	tres->restrictions[0].sqe_op = IORING_OP_NOP;
	tres->restrictions[1].opcode = IORING_RESTRICTION_SQE_OP;
	tres->restrictions[1].sqe_op = IORING_OP_FSYNC;
	ret = syscall(__NR_io_uring_register, -1, IORING_REGISTER_RESTRICTIONS,
		      tres, 1);
	free(tres);
	return ret < 0 ? -errno : 0;
}

/* one SQE on @ring: its CQE's res */
static int one(struct io_uring *ring)
{
	if (io_uring_submit(ring) != 1)
		t_fail("submit");
	return t_reap_one(ring, 0);
}

static void test_restricted_ring(void)
{
	struct statx stx;
	struct io_uring ring;
	int res;

	if (t_queue_init(4, &ring, 0))
		t_fail("queue_init after the submit");
	io_uring_prep_statx(io_uring_get_sqe(&ring), AT_FDCWD, "/", 0,
			    STATX_BASIC_STATS, &stx);
	res = one(&ring);
	if (res != -EACCES)
		t_fail("STATX on a ring the restricted thread created: %d, expected %d (-EACCES)",
		       res, -EACCES);
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	res = one(&ring);
	if (res)
		t_fail("NOP on that ring: %d, expected 0", res);
	io_uring_queue_exit(&ring);
}

static void test_restriction_set_once(void)
{
	int ret = restrict_self();

	if (ret != -EPERM)
		t_fail("a second IORING_REGISTER_RESTRICTIONS: %d, expected %d (-EPERM)",
		       ret, -EPERM);
}

static void *restricted(void *arg)
{
	struct t_force tf;
	long long ho;
	int ret;

	(void)arg;
	t_force_init(&tf, "id_uring_restrict");
	ret = restrict_self();
	if (ret == -EINVAL)
		t_skip("no task io_uring restrictions");
	if (ret)
		t_fail("IORING_REGISTER_RESTRICTIONS: %s", strerror(-ret));
	ho = t_force_block(&tf);
	test_restricted_ring();
	test_restriction_set_once();
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_run_in_thread(restricted, NULL);
	return T_PASS;
}
