// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that did a blocking submit can be joined. pthread_join() waits
 * for the kernel to clear the tid word registered as clear_child_tid (by
 * clone(CLONE_CHILD_CLEARTID)) and futex-wake it when the thread exits.
 * The thread returns right after the submit; the join must come back,
 * with the thread's return value, within 10 s (pthread_timedjoin_np), and
 * less than 4 s after the thread function returned. Blocking is forced by
 * fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without moving clear_child_tid: the exit
 * of the thread's tid clears nothing and the join times out. The 4 s bound
 * is below io-wq's 5 s idle timeout, after which the demoted task may exit
 * as a worker and clear the word late on its behalf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "helpers.h"

#define RETVAL	((void *)0x10ad)

static long long ho;
static double returned_at;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *submitter(void *arg)
{
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "id_join");
	ho = t_force_block(&tf);
	t_force_exit(&tf);
	returned_at = now();
	return RETVAL;
}

int main(void)
{
	struct timespec ts;
	double took;
	pthread_t t;
	void *ret;
	int err;

	if (pthread_create(&t, NULL, submitter, NULL))
		t_fail("pthread_create");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	err = pthread_timedjoin_np(t, &ret, &ts);
	if (err == ETIMEDOUT)
		t_fail("join timed out after 10 s: clear_child_tid lost");
	if (err)
		t_fail("pthread_timedjoin_np: %s", strerror(err));
	if (ret != RETVAL)
		t_fail("thread returned %p, expected %p", ret, RETVAL);
	took = now() - returned_at;
	if (took > 4.0)
		t_fail("join took %.1f s, tid word cleared late", took);
	t_expect_handoff(ho);
	return T_PASS;
}
