// SPDX-License-Identifier: GPL-2.0
/*
 * A blockable request that could not be handed off if it blocked must not
 * be issued inline in blocking mode: it is punted to io-wq as in stock 7.2,
 * so io_uring_submit() returns at once and the submitter stays responsive
 * while the request waits.
 *
 * Blocking is forced by openat(O_RDONLY | O_CREAT) of a FIFO, which sleeps
 * until a writer opens the FIFO. Each case runs in a fresh thread that has
 * no io-wq worker able to take over its identity:
 * (a) the thread never used io_uring, so its io-wq has no worker yet. With
 *     the open pending after the submit, SIGUSR1 sent to the submitter with
 *     tgkill() must run its handler within 1 s, and setegid() from another
 *     thread (glibc broadcasts SIGSETXID and waits for every thread) must
 *     return within 2 s;
 * (b) a warm thread (an idle worker) that changed its I/O priority with
 *     ioprio_set() after the worker was created;
 * (c) a warm thread that set a NUMA memory policy (MPOL_BIND) after the
 *     worker was created; skipped on a kernel without NUMA.
 * In each, io_uring_submit() must return 1 within 1 s, and once the writer
 * opens, the CQE must carry an fd of the FIFO. The writer opens after the
 * checks, or 5 s after the submit at the latest, so a blocking submit ends.
 *
 * Fails on a kernel/module that issues such a request inline anyway: the
 * submitter then blocks in place in io_uring_submit(), holding the ring
 * lock with its signals blocked, until the writer opens ("submit took
 * 5000 ms").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/ioprio.h>
#include <linux/mempolicy.h>
#include "helpers.h"

#define FIFO_UD		0xf1f0ULL
#define SUBMIT_MAX_MS	1000
#define SIGNAL_MAX_MS	1000
#define SETXID_MAX_MS	2000
/*
 * The writer's deadline after the submit, it ends a submit blocked in place.
 * Past the submit's and the checks' bounds, so it can't end the wait early.
 */
#define RELEASE_MS	5000
/* the open's CQE once the writer is released */
#define REAP_MS		5000

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

/* submit the FIFO open with the deadline writer armed, it must be quick */
static void submit_open(struct io_uring *ring, struct t_fifo *f,
			const char *what)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	long long t;
	int ret;

	if (!sqe)
		t_fail("%s: no SQE", what);
	t_fifo_prep_open(f, sqe, FIFO_UD);
	t_fifo_release_after(f, RELEASE_MS);
	t = t_now_ms();
	ret = io_uring_submit(ring);
	t = t_now_ms() - t;
	if (ret != 1)
		t_fail("%s: submit returned %d, expected 1", what, ret);
	if (t > SUBMIT_MAX_MS)
		t_fail("%s: submit took %lld ms (max %d), the FIFO open blocked in place",
		     what, t, SUBMIT_MAX_MS);
}

/* nothing may complete before the writer opens the FIFO */
static void expect_pending(struct io_uring *ring, const char *what)
{
	unsigned long long ud;
	int res;

	if (t_wait_cqe_ms(ring, 0, &ud, &res))
		t_fail("%s: CQE user_data %#llx res %d before the writer opened",
		     what, ud, res);
}

/* release the writer: the CQE must be the FIFO's fd, and the only one */
static void finish_open(struct io_uring *ring, struct t_fifo *f,
			const char *what)
{
	unsigned long long ud;
	int res;

	t_fifo_release_now(f);
	if (!t_wait_cqe_ms(ring, REAP_MS, &ud, &res))
		t_fail("%s: no CQE %d ms after the writer was released",
		     what, REAP_MS);
	if (ud != FIFO_UD)
		t_fail("%s: CQE user_data %#llx, expected %#llx", what, ud,
		     FIFO_UD);
	t_fifo_check_fd(f, res);
	if (t_wait_cqe_ms(ring, 0, &ud, &res))
		t_fail("%s: extra CQE user_data %#llx res %d", what, ud, res);
	t_fifo_exit(f);
}

/* case (a)'s other thread: a signal to the submitter, then a setxid */
struct poker {
	pid_t submitter;
	/* -1 until measured, then ms; signal_ms stays -1 if never handled */
	long long signal_ms;
	long long setxid_ms;
	int setxid_errno;
	int done;
};

static void *poke(void *arg)
{
	struct poker *p = arg;
	int before = handled;
	long long t, ms;

	usleep(50 * 1000);
	t = t_now_ms();
	syscall(SYS_tgkill, getpid(), p->submitter, SIGUSR1);
	while (handled == before && t_now_ms() - t <= SIGNAL_MAX_MS)
		usleep(1000);
	ms = handled != before ? t_now_ms() - t : -1;
	__atomic_store_n(&p->signal_ms, ms, __ATOMIC_RELEASE);

	t = t_now_ms();
	if (setegid(getegid()))
		p->setxid_errno = errno;
	__atomic_store_n(&p->setxid_ms, t_now_ms() - t, __ATOMIC_RELEASE);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* (a): a thread without any io-wq worker */
static void *test_no_worker(void *arg)
{
	struct poker p = { .submitter = gettid(), .signal_ms = -1,
			   .setxid_ms = -1 };
	const char *what = "no worker";
	unsigned long long ud;
	struct io_uring ring;
	struct t_fifo f;
	pthread_t thr;
	long long t;
	int ret, res;

	(void)arg;
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	t_fifo_init(&f, "punt_no_worker");
	submit_open(&ring, &f, what);

	/* wait for completions, as an application would, while poked */
	ret = pthread_create(&thr, NULL, poke, &p);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	t = t_now_ms();
	while (!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE) &&
	       t_now_ms() - t < 100 + SIGNAL_MAX_MS + SETXID_MAX_MS) {
		if (t_wait_cqe_ms(&ring, 10, &ud, &res))
			t_fail("%s: CQE user_data %#llx res %d before the writer opened",
			     what, ud, res);
	}
	if (__atomic_load_n(&p.signal_ms, __ATOMIC_ACQUIRE) < 0)
		t_fail("%s: SIGUSR1 to the submitter not handled within %d ms",
		     what, SIGNAL_MAX_MS);
	if (!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE))
		t_fail("%s: setegid() in another thread still blocked after %d ms",
		     what, SETXID_MAX_MS);
	if (p.setxid_errno)
		t_fail("%s: setegid: %s", what, strerror(p.setxid_errno));
	if (p.setxid_ms > SETXID_MAX_MS)
		t_fail("%s: setegid() in another thread took %lld ms (max %d)",
		     what, p.setxid_ms, SETXID_MAX_MS);
	pthread_join(thr, NULL);
	expect_pending(&ring, what);
	finish_open(&ring, &f, what);
	io_uring_queue_exit(&ring);
	return NULL;
}

/* (b): the idle worker was forked before the thread's ioprio changed */
static void *test_ioprio(void *arg)
{
	const char *what = "ioprio";
	struct t_fifo f;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "punt_no_worker");
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, gettid(),
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3)))
		t_fail("ioprio_set: %s", strerror(errno));
	t_fifo_init(&f, "punt_no_worker");
	submit_open(&tf.ring, &f, what);
	expect_pending(&tf.ring, what);
	finish_open(&tf.ring, &f, what);
	t_force_exit(&tf);
	return NULL;
}

/* (c): the idle worker was forked before the thread's mempolicy changed */
static void *test_mempolicy(void *arg)
{
	const char *what = "mempolicy";
	unsigned long node0 = 1;
	struct t_fifo f;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "punt_no_worker");
	if (syscall(SYS_set_mempolicy, MPOL_BIND, &node0,
		    sizeof(node0) * 8 + 1)) {
		if (errno != ENOSYS && errno != EINVAL)
			t_fail("set_mempolicy: %s", strerror(errno));
		fprintf(stderr, "note: case mempolicy skipped, set_mempolicy: %s\n",
			strerror(errno));
		t_force_exit(&tf);
		return NULL;
	}
	t_fifo_init(&f, "punt_no_worker");
	submit_open(&tf.ring, &f, what);
	expect_pending(&tf.ring, what);
	finish_open(&tf.ring, &f, what);
	if (syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0))
		t_fail("set_mempolicy(MPOL_DEFAULT): %s", strerror(errno));
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	if (sigaction(SIGUSR1, &sa, NULL))
		t_fail("sigaction: %s", strerror(errno));
	t_run_in_thread(test_no_worker, NULL);
	t_run_in_thread(test_ioprio, NULL);
	t_run_in_thread(test_mempolicy, NULL);
	return T_PASS;
}
