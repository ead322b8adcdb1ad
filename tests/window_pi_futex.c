// SPDX-License-Identifier: GPL-2.0
/*
 * A PI futex its owner's tid names, locked by another thread in the
 * handoff window, is the owner's to unlock (E7).
 *
 * A non-leader thread T, warm (an idle io-wq worker), owns a PI futex the
 * user-space way (the word holds its tid, no kernel state), then submits
 * openat(O_RDONLY | O_CREAT) of a FIFO whose writer opens 1000 ms later; the
 * window is widened to 300 ms (debug_window_ms). Another thread U waits
 * until T's tid sleeps, plus 50 ms, then FUTEX_LOCK_PI on the word, with a
 * timeout of LOCK_MS: the kernel finds the owner by the tid and attaches
 * the PI state to it. Once T has reaped the CQE, T's FUTEX_UNLOCK_PI must
 * succeed and U must then own the lock. In stock/disabled (no handoff, no
 * window) the same must hold.
 *
 * Fails on a kernel/module that lets the lock attach to the task_struct
 * that handed off: T's unlock is refused (the PI state's owner is an io-wq
 * worker by then) and U times out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

#define WINDOW_MS	300
#define RELEASE_MS	1000
/* after T is seen asleep, inside the window */
#define SETTLE_MS	50
#define ASLEEP_MS	5000
#define REAP_MS		5000
#define LOCK_MS		8000
#define OPEN_UD		0x91f0ULL

static unsigned int pi_word;

static long futex_pi(int op, const struct timespec *abs)
{
	return syscall(SYS_futex, &pi_word, op, 0, abs, NULL, 0);
}

/* U: what it did to the futex while T was in its submit */
struct locker {
	pid_t tid;
	int armed;
	int asleep;
	int lock_err;
	int in_window;
	pid_t owner_tid;
};

static void *lock_in_window(void *arg)
{
	struct locker *l = arg;
	struct timespec abs;

	l->asleep = t_wait_armed_asleep(&l->armed, l->tid, ASLEEP_MS,
					SETTLE_MS);
	if (!l->asleep)
		return NULL;
	l->in_window = t_window_open(getpid());
	/* FUTEX_LOCK_PI's timeout is absolute, CLOCK_REALTIME */
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += LOCK_MS / 1000;
	if (futex_pi(FUTEX_LOCK_PI, &abs)) {
		l->lock_err = errno;
		return NULL;
	}
	l->owner_tid = gettid();
	if ((__atomic_load_n(&pi_word, __ATOMIC_ACQUIRE) & FUTEX_TID_MASK) !=
	    (unsigned int)gettid())
		l->lock_err = -1;
	else if (futex_pi(FUTEX_UNLOCK_PI, NULL))
		l->lock_err = errno;
	return NULL;
}

static bool pi_word_contended(void *arg)
{
	(void)arg;
	return __atomic_load_n(&pi_word, __ATOMIC_ACQUIRE) & FUTEX_WAITERS;
}

static void *test_lock_in_window(void *arg)
{
	struct locker l = { .tid = gettid() };
	struct t_fifo f;
	struct t_force tf;
	long long before;
	pthread_t u;
	int ret;

	(void)arg;
	t_force_init(&tf, "window_pi_futex");
	t_fifo_init(&f, "window_pi_futex");
	/* ours, uncontended: only the word says so */
	__atomic_store_n(&pi_word, gettid(), __ATOMIC_RELEASE);
	ret = pthread_create(&u, NULL, lock_in_window, &l);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	t_fifo_release_after(&f, RELEASE_MS);
	before = t_counter("handoffs");
	__atomic_store_n(&l.armed, 1, __ATOMIC_RELEASE);
	t_fifo_submit_open(&tf.ring, &f, OPEN_UD);
	t_fifo_reap_open(&tf.ring, &f, OPEN_UD, RELEASE_MS + REAP_MS);
	/* U's lock is in the kernel once it set FUTEX_WAITERS */
	t_wait_until(pi_word_contended, NULL, 200, 10);
	if (futex_pi(FUTEX_UNLOCK_PI, NULL))
		t_fail("FUTEX_UNLOCK_PI by its owner after the submit: %s",
		       strerror(errno));
	ret = pthread_join(u, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));

	if (!l.asleep)
		t_fail("the submitting thread was not seen asleep within %d ms",
		       ASLEEP_MS);
	if (l.lock_err == -1)
		t_fail("FUTEX_LOCK_PI returned, the word names %#x, not the locker",
		       pi_word);
	if (l.lock_err)
		t_fail("FUTEX_LOCK_PI of the sleeping tid's futex: %s",
		       strerror(l.lock_err));
	if (t_mode_handoff())
		fprintf(stderr, "note: FUTEX_LOCK_PI %s the window\n",
			l.in_window ? "inside" : "outside");
	t_expect_handoff(before);
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_window_widen(WINDOW_MS);
	t_run_in_thread(test_lock_in_window, NULL);
	return T_PASS;
}
