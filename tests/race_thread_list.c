// SPDX-License-Identifier: GPL-2.0
/*
 * A walker of the thread list that holds only RCU, or a reference to the
 * task it stands on, sees every thread of the group once while the group's
 * leader hands off: the leadership moves, the threads' places on the list
 * do not. Review item E17 (inventory/thread-list-walkers.md): the exchange
 * moved the worker taking a leader's identity to the head of
 * ->thread_head and the old leader to the worker's place, so a walker
 * standing on the worker went on from the head and visited the threads in
 * between a second time (RCU Tasks' holdout scan list_add()s a task twice
 * that way), and one standing on the old leader skipped them
 * (check_unsafe_exec() miscounts fs sharers).
 *
 * The walker here is a /proc/self/task readdir, which holds a reference to
 * the task it stands on between two entries (next_tid()). Delay point
 * "proc_task" (a debug kernel; skipped elsewhere) holds such a readdir
 * PROC_TASK_MS each time it stands on an io-wq worker. One getdents64()
 * call lists the group: the leader, the one warm io-wq worker (made
 * before the reader), where it waits, then the reader. Meanwhile the
 * leader submits a FIFO openat, which hands off to that worker: before the
 * fix the worker went to the head, the old leader (now with the worker's
 * tid) after it, where the reader went on. test_readdir_lists_each_tid_once
 * wants no tid twice in the listing. It skips unless its premises held:
 * one io-wq worker, and the submit (which returns after the exchange)
 * inside the reader's getdents64().
 *
 * Failed first on the debug kernel with the point and the exchange before
 * the fix: "tid 227 listed twice (4 entries)", the worker's. In modes other
 * than handoff nothing moves: the same listing. Not covered here: the
 * walkers that wrap (next_thread()) or ask thread_group_empty(), which
 * every test's exit after a leader's handoff runs, and the BPF task
 * iterators.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "helpers.h"

#define PROC_TASK_MS	1500
#define SUBMIT_MS	300
#define RELEASE_MS	600
#define MAX_TIDS	64
#define FIFO_UD		0xf1f0ULL

struct reader {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started;
	/* t_now_ms() around the getdents64() call */
	long long start_ms, end_ms;
	pid_t tid;
	int tids[MAX_TIDS];
	int n;
};

/* one getdents64() call over /proc/self/task: one walk of the list */
static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	static char buf[65536];
	long len, off;
	int fd;

	r->tid = gettid();
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		t_fail("open /proc/self/task: %s", strerror(errno));
	pthread_mutex_lock(&r->lock);
	r->started = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	r->start_ms = t_now_ms();
	len = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	r->end_ms = t_now_ms();
	if (len < 0)
		t_fail("getdents64 /proc/self/task: %s", strerror(errno));
	for (off = 0; off < len;) {
		struct dirent64 *de = (struct dirent64 *)(buf + off);

		off += de->d_reclen;
		if (de->d_name[0] == '.')
			continue;
		if (r->n == MAX_TIDS)
			t_fail("more than %d threads listed", MAX_TIDS);
		r->tids[r->n++] = atoi(de->d_name);
	}
	close(fd);
	return NULL;
}

static void test_readdir_lists_each_tid_once(struct io_uring *ring)
{
	struct reader r = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	struct t_fifo f;
	long long ho = t_counter("handoffs");
	int i, j, ret, self = 0;
	pthread_t rt;

	/* before the point is set: this walk would wait on the worker */
	i = t_worker_tids(NULL, 0);
	if (i != 1)
		t_skip("%d io-wq workers, the test needs the one", i);
	t_delay_point_need("proc_task", PROC_TASK_MS);
	t_fifo_init(&f, "thread-list");
	ret = pthread_create(&rt, NULL, reader_thread, &r);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	pthread_mutex_lock(&r.lock);
	while (!r.started)
		pthread_cond_wait(&r.cond, &r.lock);
	pthread_mutex_unlock(&r.lock);
	/* the reader is on the worker now, asleep at the point */
	usleep(SUBMIT_MS * 1000);
	t_fifo_release_after(&f, RELEASE_MS);
	t_fifo_submit_open(ring, &f, FIFO_UD);
	pthread_join(rt, NULL);
	t_fifo_exit(&f);
	/* the reader listed the worker at once, then waited on it */
	if (f.submit_ms < r.start_ms + SUBMIT_MS / 2 || f.submitted_ms > r.end_ms)
		t_skip("the submit (%lld-%lld ms) not inside the walk's wait (%lld-%lld ms)",
		       f.submit_ms, f.submitted_ms, r.start_ms, r.end_ms);

	for (i = 0; i < r.n; i++) {
		if (r.tids[i] == getpid())
			self++;
		for (j = 0; j < i; j++)
			if (r.tids[i] == r.tids[j])
				t_fail("tid %d listed twice (%d entries)",
				       r.tids[i], r.n);
	}
	if (self != 1)
		t_fail("the leader's tid %d listed %d times", getpid(), self);
	for (i = 0; i < r.n && r.tids[i] != r.tid; i++)
		;
	if (i == r.n)
		t_fail("the reader's tid %d not listed (%d entries)", r.tid,
		       r.n);
	if (t_mode_handoff())
		t_expect_handoff(ho);
}

int main(void)
{
	struct io_uring ring;

	if (gettid() != getpid())
		t_fail("test setup: not the group leader");
	if (t_queue_init(8, &ring, 0))
		t_fail("io_uring_queue_init");
	t_warm(&ring);
	test_readdir_lists_each_tid_once(&ring);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
