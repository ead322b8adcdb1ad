// SPDX-License-Identifier: GPL-2.0
/*
 * enabled=0 (what rmmod does first) while inline issues are in flight must
 * not cut them short. An inline issue keeps its thread's task_work quiet,
 * queued without a notification, until it ends or hands off: a notification
 * would end its interruptible sleep with -ERESTARTSYS, a result no stock
 * kernel gives a request nobody cancelled.
 *
 * For RUN_MS (or longer, see RUN_MAX_MS) the main thread loops: arm a timeout (its completion is
 * task_work for this thread), then submit openat(O_RDONLY | O_CREAT) of a
 * FIFO by a path that takes a while to walk: NR_LINKS symlinks, each to
 * "d/.." LINK_HOPS times. The timeout fires at a random point of that walk,
 * which runs inline, before the open's sleep. A writer thread opens the
 * FIFO's other end once the reader waits. The open's CQE must be the FIFO's
 * fd (it hands off or sleeps in place, or, with the module off, takes the
 * stock punt), the timeout's -ETIME. Meanwhile a toggler thread writes
 * enabled 0 and 1 back to back. Mode handoff only; opens must have been
 * issued inline.
 *
 * Fails on a kernel whose unregister turns the hooks' static key off at
 * once (core-hooks.patch until 5 Dec 2026): a timeout that fires after
 * that, while an issue that began before is still inline, notifies its
 * thread and the FIFO wait returns -ERESTARTSYS (-512), within the first
 * few toggles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define RUN_MS		10000
/*
 * Then on until MIN_INLINE opens went inline, at most RUN_MAX_MS: on a
 * loaded host the register-to-unregister gaps, the only moments an open can
 * go inline, shrink (once none in 162 rounds while a kernel built beside).
 */
#define RUN_MAX_MS	25000
#define MIN_INLINE	5
#define NR_LINKS	39
#define LINK_HOPS	800
#define OPEN_UD		0xf1f0ULL
#define TIMEOUT_UD	0x7100ULL
#define SUB_MAX		256

struct toggle_state {
	char sub[SUB_MAX];
	char fifo[PATH_MAX];
	/* the main thread's round; the writer opens for each new one */
	int round;
	int reaped;
	int stop;
	long toggles;
};

static int state_load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void state_store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void restore_enabled(void)
{
	t_setting_set("enabled", "1");
}

static void *toggler(void *arg)
{
	struct toggle_state *s = arg;

	while (!state_load(&s->stop)) {
		t_setting_set("enabled", "0");
		t_setting_set("enabled", "1");
		__atomic_add_fetch(&s->toggles, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* each round: open the write end once a reader waits, hold it until reaped */
static void *writer(void *arg)
{
	struct toggle_state *s = arg;
	int done = 0, round, fd;

	while (!state_load(&s->stop)) {
		round = state_load(&s->round);
		if (round == done) {
			usleep(100);
			continue;
		}
		do
			fd = open(s->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		while (fd < 0 && errno == ENXIO && !state_load(&s->stop));
		if (fd < 0 && errno != ENXIO)
			t_fail("writer: open %s: %s", s->fifo, strerror(errno));
		while (state_load(&s->reaped) != round && !state_load(&s->stop))
			usleep(100);
		if (fd >= 0)
			close(fd);
		done = round;
	}
	return NULL;
}

/*
 * @dir/toggle_inflight.<pid>/ with a directory d, a symlink l to
 * "d/../d/.." (LINK_HOPS times) and the FIFO; ->fifo walks l NR_LINKS times.
 */
static void make_fifo(struct toggle_state *s, const char *dir)
{
	char target[LINK_HOPS * 5], path[SUB_MAX + 8], *p;
	int i;

	snprintf(s->sub, sizeof(s->sub), "%s/toggle_inflight.%d", dir,
		 getpid());
	if (mkdir(s->sub, 0700))
		t_fail("mkdir %s: %s", s->sub, strerror(errno));
	t_track(s->sub, 1);
	snprintf(path, sizeof(path), "%s/d", s->sub);
	if (mkdir(path, 0700))
		t_fail("mkdir %s: %s", path, strerror(errno));
	t_track(path, 1);
	for (p = target, i = 0; i < LINK_HOPS; i++)
		p += sprintf(p, i ? "/d/.." : "d/..");
	snprintf(path, sizeof(path), "%s/l", s->sub);
	if (symlink(target, path))
		t_fail("symlink %s: %s", path, strerror(errno));
	t_track(path, 1);
	p = s->fifo + sprintf(s->fifo, "%s/", s->sub);
	for (i = 0; i < NR_LINKS; i++)
		p += sprintf(p, "l/");
	strcpy(p, "fifo");
	if (mkfifo(s->fifo, 0600))
		t_fail("mkfifo %s/fifo: %s", s->sub, strerror(errno));
	t_track(s->fifo, 1);
}

/* each of make_fifo()'s, the last made first */
static void remove_fifo(struct toggle_state *s)
{
	char path[SUB_MAX + 8];

	unlink(s->fifo);
	t_track(s->fifo, 0);
	snprintf(path, sizeof(path), "%s/l", s->sub);
	unlink(path);
	t_track(path, 0);
	snprintf(path, sizeof(path), "%s/d", s->sub);
	rmdir(path);
	t_track(path, 0);
	rmdir(s->sub);
	t_track(s->sub, 0);
}

/* how long a synchronous walk of ->fifo takes, in ns (a nonblocking open) */
static long long walk_ns(struct toggle_state *s)
{
	struct timespec a, b;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &a);
	fd = open(s->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (fd < 0)
		t_fail("open %s: %s", s->fifo, strerror(errno));
	close(fd);
	return (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
}

/* a timeout due within @walk ns, then the open; reap both */
static void test_round(struct io_uring *ring, struct toggle_state *s,
		       long long walk)
{
	struct __kernel_timespec ts = { .tv_nsec = rand() % walk + 1 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret, seen;

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	sqe->user_data = TIMEOUT_UD;
	ret = t_submit(ring);
	if (ret != 1)
		t_fail("submit timeout: %d", ret);
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_openat(sqe, AT_FDCWD, s->fifo, O_RDONLY | O_CREAT, 0600);
	sqe->user_data = OPEN_UD;
	state_store(&s->round, s->round + 1);
	ret = t_submit(ring);
	if (ret != 1)
		t_fail("submit open: %d", ret);

	for (seen = 0; seen < 2; seen++) {
		do
			ret = io_uring_wait_cqe(ring, &cqe);
		while (ret == -EINTR);
		if (ret)
			t_fail("wait_cqe: %s", strerror(-ret));
		if (cqe->user_data == OPEN_UD) {
			if (cqe->res < 0)
				t_fail("the FIFO open returned %d (%s), %ld toggles in",
				       cqe->res, strerror(-cqe->res),
				       __atomic_load_n(&s->toggles,
						       __ATOMIC_RELAXED));
			close(cqe->res);
		} else if (cqe->user_data != TIMEOUT_UD ||
			   cqe->res != -ETIME) {
			t_fail("CQE %#llx res %d, expected the timeout's -ETIME",
			       (unsigned long long)cqe->user_data, cqe->res);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	state_store(&s->reaped, s->round);
}

static void test_toggle_inflight(struct io_uring *ring, struct toggle_state *s)
{
	long long walk, before, start;
	pthread_t tw, tt;
	long rounds = 0;
	int ret;

	walk = walk_ns(s);
	if (walk > 500000000LL)
		walk = 500000000LL;
	before = t_inline_issued();
	ret = pthread_create(&tw, NULL, writer, s);
	if (!ret)
		ret = pthread_create(&tt, NULL, toggler, s);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	start = t_now_ms();
	while (t_now_ms() < start + RUN_MS ||
	       (t_inline_issued() - before < MIN_INLINE &&
		t_now_ms() < start + RUN_MAX_MS)) {
		test_round(ring, s, walk);
		rounds++;
	}
	state_store(&s->stop, 1);
	pthread_join(tt, NULL);
	pthread_join(tw, NULL);
	fprintf(stderr, "note: walk %lld us, %ld rounds, %ld toggles, %lld issued inline\n",
		walk / 1000, rounds, s->toggles, t_inline_issued() - before);
	if (t_inline_issued() == before)
		t_fail("no open was issued inline in %ld rounds", rounds);
}

int main(void)
{
	struct toggle_state s = { 0 };
	struct io_uring ring;
	int ret;

	if (!t_mode_handoff())
		t_skip("toggles the module, mode handoff only");
	ret = t_queue_init(4, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	make_fifo(&s, t_dir("IOUH_TMPFS"));
	t_warm(&ring);
	atexit(restore_enabled);
	test_toggle_inflight(&ring, &s);
	remove_fifo(&s);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
