// SPDX-License-Identifier: GPL-2.0
/*
 * The first poll() of a DEFER_TASKRUN ring's fd activates the ring's poll
 * waitqueue through task_work on the ring's submitter_task, with a signal
 * notification (io_activate_pollwq()). Sent in the handoff window, it must
 * reach the thread, not the task that handed off, and must not cut the
 * handed-off issue short.
 *
 * The main thread makes itself warm on a SINGLE_ISSUER | DEFER_TASKRUN ring,
 * widens the window to 500 ms (debug_window_ms) and submits openat(O_RDONLY |
 * O_CREAT) of a FIFO whose writer comes 1.5 s later: its first sleep hands
 * off. A helper thread waits for the window (t_window_open()), then calls
 * poll() on the ring fd, once, without waiting. The open's CQE must be the
 * FIFO's fd, the only CQE, and in mode handoff the poll must have come in
 * the window and a handoff happened. Then the poll waitqueue must work: a
 * poll() that waits on the ring fd wakes for a NOP's CQE. In stock/disabled
 * (no window: the helper polls after 500 ms) the same results must hold.
 *
 * Fails on a kernel of hook ABI 6 with a module that serves these rings:
 * the thread's wait gets -EEXIST (submitter_task stayed on the task that
 * handed off). It can't catch a notification sent to the task that handed
 * off: debug_window_ms opens after the ring's submitter moved
 * (io_uring_tctx_switch()), the instants before that are microseconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define WINDOW_MS	500
#define WRITER_MS	1500
#define OPEN_UD		0xf1f0ULL
#define NOP_UD		0x90bULL

struct poller {
	int ring_fd;
	pid_t pid;
	int in_window;
};

static void *poller(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->ring_fd, .events = POLLIN };
	long long end = t_now_ms() + WINDOW_MS;

	while (t_now_ms() < end && !p->in_window) {
		p->in_window = t_window_open(p->pid);
		if (!p->in_window)
			usleep(1000);
	}
	if (poll(&pfd, 1, 0) < 0)
		t_fail("poll on the ring fd: %s", strerror(errno));
	return NULL;
}

struct waiter {
	int ring_fd;
	pid_t tid;
	int ret;
	short revents;
};

/* poll() for a CQE for up to 5 s */
static void *waiter(void *arg)
{
	struct waiter *w = arg;
	struct pollfd pfd = { .fd = w->ring_fd, .events = POLLIN };

	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	do
		w->ret = poll(&pfd, 1, 5000);
	while (w->ret < 0 && errno == EINTR);
	w->revents = pfd.revents;
	return NULL;
}

/*
 * Start waiter() and see it asleep in its poll(). The kernel may report
 * EPOLLIN with nothing in the CQ ring to make us flush deferred work: then
 * run that work and wait again, a few times.
 */
static void start_waiter(struct io_uring *ring, struct waiter *w,
			 pthread_t *t)
{
	struct io_uring_cqe *cqe;
	int i, ret;

	for (i = 0; i < 3; i++) {
		io_uring_get_events(ring);
		if (!io_uring_peek_cqe(ring, &cqe))
			t_fail("extra CQE, user_data %#llx res %d",
			     (unsigned long long)cqe->user_data, cqe->res);
		w->tid = 0;
		ret = pthread_create(t, NULL, waiter, w);
		if (ret)
			t_fail("pthread_create: %s", strerror(ret));
		while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		if (t_wait_asleep(getpid(), w->tid, 2000))
			return;
		pthread_join(*t, NULL);
		fprintf(stderr, "note: the poll() waiter returned %d, revents %#x, before the NOP\n",
			w->ret, w->revents);
	}
	t_fail("the poll() waiter never slept in 3 tries");
}

int main(void)
{
	struct poller p = { .pid = getpid() };
	struct waiter w = { 0 };
	struct t_fifo f;
	struct io_uring_sqe *sqe;
	pthread_t t;
	long long before;
	int ret;
	struct t_force tf;

	t_force_init_flags(&tf, "window_pollwq", IORING_SETUP_SINGLE_ISSUER |
					    IORING_SETUP_DEFER_TASKRUN);
	t_fifo_init(&f, "window_pollwq");
	t_window_widen(WINDOW_MS);
	p.ring_fd = w.ring_fd = tf.ring.ring_fd;
	t_wait_idle_worker();
	before = t_counter("handoffs");

	ret = pthread_create(&t, NULL, poller, &p);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	t_fifo_release_after(&f, WRITER_MS);
	t_fifo_submit_open(&tf.ring, &f, OPEN_UD);
	t_fifo_reap_open(&tf.ring, &f, OPEN_UD, 10000);
	pthread_join(t, NULL);
	if (t_mode_handoff() && !p.in_window)
		t_fail("the poll did not come in the handoff window");
	t_expect_handoff(before);

	/* the activation ran: a CQE wakes a poll() that waits for it */
	start_waiter(&tf.ring, &w, &t);
	sqe = io_uring_get_sqe(&tf.ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = NOP_UD;
	ret = io_uring_submit(&tf.ring);
	if (ret != 1)
		t_fail("submit NOP: %d", ret);
	pthread_join(t, NULL);
	if (w.ret != 1 || !(w.revents & POLLIN))
		t_fail("a poll() waiting on the ring fd missed the NOP's CQE: poll %d revents %#x",
		     w.ret, w.revents);
	ret = t_reap_one(&tf.ring, NOP_UD);
	if (ret)
		t_fail("NOP res %d", ret);
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return T_PASS;
}
