// SPDX-License-Identifier: GPL-2.0
/*
 * The robust futex list survives a blocking submit. Thread A locks a
 * PTHREAD_MUTEX_ROBUST mutex, does the blocking submit, and exits without
 * unlocking. The main thread's lock must then return EOWNERDEAD, which
 * only happens if the kernel walks A's robust list (registered by glibc
 * with set_robust_list() at thread start) when the task carrying A's tid
 * exits. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel that hands off without moving the robust list head:
 * the exit of A's tid walks nothing, the lock word keeps A's tid without
 * FUTEX_OWNER_DIED and the main thread's lock times out (after 5 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>
#include "helpers.h"

static pthread_mutex_t lock;
static sem_t locked;

static void *owner(void *arg)
{
	long long ho;
	struct t_force tf;
	int ret;

	(void)arg;
	t_force_init(&tf, "id_robust");
	ret = pthread_mutex_lock(&lock);
	if (ret)
		t_fail("owner lock: %s", strerror(ret));
	sem_post(&locked);

	ho = t_force_block(&tf);

	t_expect_handoff(ho);
	t_force_exit(&tf);
	/* and gone, still holding the lock */
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t attr;
	struct timespec ts;
	pthread_t t;
	int ret;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (pthread_mutex_init(&lock, &attr))
		t_fail("pthread_mutex_init");
	sem_init(&locked, 0, 0);
	if (pthread_create(&t, NULL, owner, NULL))
		t_fail("pthread_create");
	while (sem_wait(&locked))
		;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	ret = pthread_mutex_timedlock(&lock, &ts);
	if (ret == ETIMEDOUT)
		t_fail("owner exited, lock not released: robust list lost");
	if (ret != EOWNERDEAD)
		t_fail("lock after owner exit: %s, expected EOWNERDEAD",
		     ret ? strerror(ret) : "success");
	if (pthread_mutex_consistent(&lock))
		t_fail("pthread_mutex_consistent");
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
	pthread_mutex_destroy(&lock);
	return T_PASS;
}
