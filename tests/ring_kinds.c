// SPDX-License-Identifier: GPL-2.0
/*
 * The ring setup flags that change who may use a ring or how its task_work
 * runs, each through a handoff.
 *
 * SINGLE_ISSUER and DEFER_TASKRUN rings are bound to their submitter's
 * task_struct (ctx->submitter_task): only that task may io_uring_enter() to
 * submit or io_uring_register() (-EEXIST for any other), and a DEFER_TASKRUN
 * ring's completions run only in its submitter's io_uring_enter() (-EEXIST
 * for another's wait). A handoff gives the thread's identity to another
 * task_struct: the thread must stay the submitter, of the ring it handed
 * off on and of its other rings, and every other thread must stay refused.
 * COOP_TASKRUN | TASKRUN_FLAG rings signal task_work without an IPI and
 * flag it in the SQ ring; an ATTACH_WQ ring shares another ring's io-wq.
 *
 * For SINGLE_ISSUER and SINGLE_ISSUER | DEFER_TASKRUN, each with and without
 * a registered ring fd, for COOP_TASKRUN | TASKRUN_FLAG and for a plain ring
 * with an ATTACH_WQ ring B, in a fresh thread with two rings A and B of the
 * kind: a blocking fsync (dirty ext4 data, helpers.c) on A must hand
 * off in mode handoff and give one CQE, 0; then the thread submits a NOP on
 * A and on B and waits for it (CQE 0), and registers on both
 * (IORING_REGISTER_PROBE, not -EEXIST), while another thread's register on
 * either gets -EEXIST on a SINGLE_ISSUER ring, 0 on the others, and its
 * wait on a DEFER_TASKRUN ring -EEXIST. Then a blocking fsync on B must hand
 * off too, CQE 0. DEFER_TASKRUN without SINGLE_ISSUER is -EINVAL, as on
 * stock.
 *
 * Fails on a kernel that hands the identity off but leaves submitter_task on
 * the task that handed off: the thread's NOP gets -EEXIST and a
 * DEFER_TASKRUN ring's wait warns in io_run_local_work().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

#define NOP_UD	0x90b

struct variant {
	const char *name;
	unsigned int flags;
	int regfd;
	/* ring B shares ring A's io-wq */
	int attach;
};

struct rings {
	struct t_force tf;		/* ring A, with the file to fsync */
	struct io_uring b;
	const struct variant *v;
};

/* IORING_REGISTER_PROBE on @ring's real fd, as any thread can: 0 or -errno */
static int register_probe(struct io_uring *ring)
{
	struct io_uring_probe *p;
	size_t len;
	long ret;

	len = sizeof(*p) + 256 * sizeof(struct io_uring_probe_op);
	p = calloc(1, len);
	if (!p)
		t_fail("calloc");
	ret = syscall(__NR_io_uring_register, ring->ring_fd,
		      IORING_REGISTER_PROBE, p, 256);
	free(p);
	return ret < 0 ? -errno : 0;
}

static void nop(struct io_uring *ring, const char *which, const char *name)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		t_fail("%s: no SQE", name);
	io_uring_prep_nop(sqe);
	sqe->user_data = NOP_UD;
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret != 1)
		t_fail("%s: NOP on ring %s after the handoff: submit %d (%s)",
		     name, which, ret, strerror(-ret));
	ret = t_reap_one(ring, NOP_UD);
	if (ret)
		t_fail("%s: NOP on ring %s: res %d", name, which, ret);
}

/* another thread of the process: still refused on both rings */
static void *other_thread(void *arg)
{
	struct rings *r = arg;
	const char *name = r->v->name;
	int want = r->v->flags & IORING_SETUP_SINGLE_ISSUER ? -EEXIST : 0;
	int ret;

	ret = register_probe(&r->tf.ring);
	if (ret != want)
		t_fail("%s: another thread's register on ring A: %d, expected %d",
		     name, ret, want);
	ret = register_probe(&r->b);
	if (ret != want)
		t_fail("%s: another thread's register on ring B: %d, expected %d",
		     name, ret, want);
	if (r->v->flags & IORING_SETUP_DEFER_TASKRUN) {
		ret = syscall(__NR_io_uring_enter, r->tf.ring.ring_fd, 0, 1,
			      IORING_ENTER_GETEVENTS, NULL, 0);
		if (ret != -1 || errno != EEXIST)
			t_fail("%s: another thread's wait on ring A: %d (%s), expected -EEXIST",
			     name, ret, strerror(errno));
	}
	return NULL;
}

static void *variant_thread(void *arg)
{
	struct rings r = { .v = arg };
	const char *name = r.v->name;
	long long ho;
	int ret;

	t_force_init_flags(&r.tf, "ring_kinds", r.v->flags);
	if (r.v->regfd) {
		ret = io_uring_register_ring_fd(&r.tf.ring);
		if (ret != 1)
			t_fail("%s: register_ring_fd: %s", name, strerror(-ret));
	}
	if (r.v->attach) {
		struct io_uring_params p = {
			.flags = r.v->flags | IORING_SETUP_ATTACH_WQ,
			.wq_fd = r.tf.ring.ring_fd,
		};

		ret = io_uring_queue_init_params(4, &r.b, &p);
	} else {
		ret = io_uring_queue_init(4, &r.b, r.v->flags);
	}
	if (ret)
		t_fail("%s: queue_init ring B: %s", name, strerror(-ret));

	t_wait_idle_worker();
	ho = t_force_block(&r.tf);
	t_expect_handoff(ho);

	nop(&r.tf.ring, "A", name);
	nop(&r.b, "B", name);
	ret = register_probe(&r.tf.ring);
	if (ret)
		t_fail("%s: the submitter's register on ring A: %s", name,
		     strerror(-ret));
	ret = register_probe(&r.b);
	if (ret)
		t_fail("%s: the submitter's register on ring B: %s", name,
		     strerror(-ret));
	t_run_in_thread(other_thread, &r);

	/* the thread hands off again, on its other ring */
	t_wait_idle_worker();
	t_force_dirty(&r.tf);
	ho = t_counter("handoffs");
	ret = t_fsync(&r.b, r.tf.fd, 0);
	if (ret)
		t_fail("%s: fsync on ring B: %s", name, strerror(-ret));
	t_expect_handoff(ho);

	io_uring_queue_exit(&r.b);
	t_force_exit(&r.tf);
	return NULL;
}

int main(void)
{
	static const struct variant variants[] = {
		{ "single_issuer", IORING_SETUP_SINGLE_ISSUER, 0, 0 },
		{ "single_issuer+regfd", IORING_SETUP_SINGLE_ISSUER, 1, 0 },
		{ "defer_taskrun", IORING_SETUP_SINGLE_ISSUER |
				   IORING_SETUP_DEFER_TASKRUN, 0, 0 },
		{ "defer_taskrun+regfd", IORING_SETUP_SINGLE_ISSUER |
					 IORING_SETUP_DEFER_TASKRUN, 1, 0 },
		{ "coop_taskrun", IORING_SETUP_COOP_TASKRUN |
				  IORING_SETUP_TASKRUN_FLAG, 0, 0 },
		{ "attach_wq", 0, 0, 1 },
	};
	struct io_uring ring;
	unsigned int i;
	int ret;

	ret = io_uring_queue_init(4, &ring, IORING_SETUP_DEFER_TASKRUN);
	if (ret != -EINVAL)
		t_fail("DEFER_TASKRUN alone: queue_init %d, stock gives -EINVAL",
		     ret);
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		t_run_in_thread(variant_thread, (void *)&variants[i]);
	return T_PASS;
}
