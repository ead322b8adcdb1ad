// SPDX-License-Identifier: GPL-2.0
/*
 * Turning the module off (enabled=0, and rmmod the same way) waits for the
 * module's code in flight, never for a sleep: not for another thread's
 * request that sleeps in place holding the ring lock while a worker that
 * takes an identity over waits for that lock. Review item E8: the worker
 * took the ring lock (to move the tctx) while it still counted as module
 * code in flight, before the module's take_identity(), so the write of
 * enabled=0 slept in D state until the other request ended.
 *
 * Delay points (a debug kernel; skipped elsewhere): "take" holds the worker
 * TAKE_MS before it takes the ring lock, "submit_lock" holds an inline issue
 * LOCK_MS inside a ring lock section (it sleeps in place, blocked_lock).
 *
 * One plain ring, two threads, each warm. The main thread submits a FIFO
 * openat, which hands off; its worker waits at "take". BUSY_MS in, the
 * other thread submits an openat into a fixed file slot, which holds the
 * ring lock asleep for LOCK_MS. OFF_MS in, a third thread writes
 * enabled=0: test_disable_waits_no_lock_holder wants that write back
 * within OFF_WAIT_MS (it took ~LOCK_MS before the fix), and every request
 * its own CQE: the FIFO's fd, the direct open's slot 0.
 *
 * Failed first on the debug kernel with both points and the hooks before
 * the fix: "enabled=0 took 2824 ms". In modes other than handoff nothing
 * is handed off and nothing is switched off: the same requests, the same
 * CQEs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define TAKE_MS		800
#define LOCK_MS		3000
#define BUSY_MS		200
#define OFF_MS		400
#define OFF_WAIT_MS	1000
#define RELEASE_MS	1500
#define FIFO_UD		0xf1f0ULL
#define OPEN_UD		0x5107ULL

struct other {
	struct io_uring *ring;
	char path[PATH_MAX];
	long long at_ms;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready, go;
};

/* the second thread: warm its own io-wq, then at at_ms the direct open */
static void *other_thread(void *arg)
{
	struct other *o = arg;
	struct io_uring_sqe *sqe;
	long long left;

	t_warm(o->ring);
	pthread_mutex_lock(&o->lock);
	o->ready = 1;
	pthread_cond_broadcast(&o->cond);
	while (!o->go)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
	left = o->at_ms - t_now_ms();
	if (left > 0)
		usleep(left * 1000);
	/* the main thread is in its submit, the SQ ring is ours now */
	sqe = io_uring_get_sqe(o->ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_openat_direct(sqe, AT_FDCWD, o->path,
				    O_WRONLY | O_CREAT, 0600,
				    IORING_FILE_INDEX_ALLOC);
	sqe->user_data = OPEN_UD;
	if (t_submit(o->ring) != 1)
		t_fail("submit the direct openat");
	return NULL;
}

struct toggler {
	long long at_ms, took_ms;
};

static void *toggler_thread(void *arg)
{
	struct toggler *t = arg;
	long long left = t->at_ms - t_now_ms(), start;

	if (left > 0)
		usleep(left * 1000);
	start = t_now_ms();
	t_setting_set("enabled", "0");
	t->took_ms = t_now_ms() - start;
	return NULL;
}

static void test_disable_waits_no_lock_holder(struct io_uring *ring,
					      struct other *o)
{
	struct toggler tog = { 0 };
	pthread_t ot, tt;
	long long start, ho, bl;
	int i, got_fifo = 0, got_open = 0, ret;
	struct t_fifo f;

	ret = pthread_create(&ot, NULL, other_thread, o);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	pthread_mutex_lock(&o->lock);
	while (!o->ready)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);

	t_delay_point_need("take", TAKE_MS);
	t_delay_point_need("submit_lock", LOCK_MS);
	ho = t_counter("handoffs");
	bl = t_counter("blocked_lock");
	t_fifo_init(&f, "take-lock");
	start = t_now_ms();
	o->at_ms = start + BUSY_MS;
	tog.at_ms = start + OFF_MS;
	pthread_mutex_lock(&o->lock);
	o->go = 1;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	if (t_mode_handoff()) {
		ret = pthread_create(&tt, NULL, toggler_thread, &tog);
		if (ret)
			t_fail("pthread_create: %s", strerror(ret));
	}
	t_fifo_release_after(&f, RELEASE_MS);
	t_fifo_submit_open(ring, &f, FIFO_UD);
	pthread_join(ot, NULL);
	if (t_mode_handoff())
		pthread_join(tt, NULL);

	for (i = 0; i < 2; i++) {
		unsigned long long ud;
		int res;

		if (!t_wait_cqe_ms(ring, LOCK_MS + 5000, &ud, &res))
			t_fail("%d of 2 CQEs after %lld ms", i,
			       t_now_ms() - start);
		if (ud == FIFO_UD && !got_fifo++)
			t_fifo_check_fd(&f, res);
		else if (ud == OPEN_UD && !got_open++ && res != 0)
			t_fail("openat direct: %d, want slot 0", res);
		else if (ud != FIFO_UD && ud != OPEN_UD)
			t_fail("CQE user_data %#llx", ud);
	}
	if (got_fifo != 1 || got_open != 1)
		t_fail("CQEs: %d of the FIFO's, %d of the direct open's",
		       got_fifo, got_open);
	t_fifo_exit(&f);
	if (!t_mode_handoff())
		return;
	t_setting_set("enabled", "1");
	t_expect_handoff(ho);
	t_expect_moved("blocked_lock", bl);
	if (tog.took_ms > OFF_WAIT_MS)
		t_fail("enabled=0 took %lld ms (a worker waits for the ring lock another thread sleeps with, %d ms)",
		       tog.took_ms, LOCK_MS);
}

int main(void)
{
	struct other o = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct io_uring ring;

	snprintf(o.path, sizeof(o.path), "%s/take-lock-%d",
		 t_dir("IOUH_TMPFS"), getpid());
	t_track(o.path, 1);
	/* plain: the other thread submits to it too */
	if (io_uring_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	if (io_uring_register_files_sparse(&ring, 4))
		t_fail("register a sparse file table");
	o.ring = &ring;
	t_warm(&ring);
	test_disable_waits_no_lock_holder(&ring, &o);
	io_uring_queue_exit(&ring);
	unlink(o.path);
	t_track(o.path, 0);
	return T_PASS;
}
