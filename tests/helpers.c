// SPDX-License-Identifier: GPL-2.0
/* The project tests' helper library, see helpers.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <liburing.h>
#include "helpers.h"

const char *t_mode(void)
{
	return getenv("IOUH_MODE");
}

const char *t_dir(const char *env)
{
	const char *d = getenv(env);

	if (!d)
		t_skip("%s not set, run under the harness", env);
	return d;
}

long long t_counter(const char *name)
{
	char path[256];
	long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

long long t_refusal(const char *reason)
{
	char name[64];
	long long v;
	FILE *f;

	f = fopen("/sys/kernel/io_uring_handoff/refusals", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, reason)) {
			fclose(f);
			return v;
		}
	}
	fclose(f);
	return -1;
}

/* read or write a /sys/kernel/io_uring_handoff/ setting, or fail */
void t_setting_get(const char *name, char *buf, int len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, len, f))
		t_fail("reading %s: %s", path, strerror(errno));
	fclose(f);
}

void t_setting_set(const char *name, const char *val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "w");
	if (!f || fputs(val, f) < 0 || fclose(f))
		t_fail("writing %s to %s: %s", val, path, strerror(errno));
}

static const char *test_ring(void)
{
	const char *ring = getenv("IOUH_RING");

	return ring ? ring : "plain";
}

unsigned int t_ring_flags(void)
{
	const char *ring = test_ring();
	size_t len = strcspn(ring, "+");

	if (!strncmp(ring, "plain", len) && len == 5)
		return 0;
	if (!strncmp(ring, "single", len) && len == 6)
		return IORING_SETUP_SINGLE_ISSUER;
	if (!strncmp(ring, "defer", len) && len == 5)
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	t_fail("IOUH_RING=%s: plain, single or defer, +regfd", ring);
}

int t_ring_regfd(void)
{
	const char *plus = strchr(test_ring(), '+');

	if (plus && strcmp(plus, "+regfd"))
		t_fail("IOUH_RING=%s: plain, single or defer, +regfd", test_ring());
	return plus != NULL;
}

int t_queue_init(unsigned int entries, struct io_uring *ring,
		    unsigned int flags)
{
	int ret;

	if (flags)
		return io_uring_queue_init(entries, ring, flags);
	ret = io_uring_queue_init(entries, ring, t_ring_flags());
	if (ret || !t_ring_regfd())
		return ret;
	ret = io_uring_register_ring_fd(ring);
	if (ret != 1)
		t_fail("register_ring_fd: %s", strerror(-ret));
	return 0;
}

int t_mode_handoff(void)
{
	const char *mode = t_mode();

	return mode && !strcmp(mode, "handoff");
}

void t_expect_moved(const char *name, long long before)
{
	const char *exp = getenv("IOUH_EXPECT_HANDOFF");
	int must = exp && !strcmp(exp, "1");
	int ho = !strcmp(name, "handoffs");
	long long now;

	if (!t_mode_handoff())
		return;
	now = t_counter(name);
	if (now > before && before >= 0)
		return;
	/* the other counters are implemented, only "handoffs" may lag */
	if (!ho)
		t_fail("%s did not move (%lld -> %lld)", name, before, now);
	if (must)
		t_fail("no handoff happened");
	t_skip("no handoff happened; handoff not in this build");
}

void t_expect_unmoved(const char *name, long long before)
{
	long long now;

	if (!t_mode_handoff())
		return;
	now = t_counter(name);
	if (now != before)
		t_fail("%s moved (%lld -> %lld)", name, before, now);
}

void t_expect_handoff(long long before)
{
	t_expect_moved("handoffs", before);
}

long long t_inline_issued(void)
{
	return t_counter("inline_issued");
}

void t_expect_inline(long long before, long long n)
{
	long long now = t_inline_issued();

	if (!t_mode_handoff())
		return;
	if (before < 0 || now - before != n)
		t_fail("%lld inline issues, expected %lld", now - before, n);
}

void t_expect_no_inline(long long before)
{
	long long now = t_inline_issued();

	/* loaded but disabled must not issue inline either */
	if (before >= 0 && now != before)
		t_fail("%lld requests issued inline, expected none", now - before);
}

#define T_USER_DATA	0x1d5afe11ULL
#define T_MAX_FILES	16

/* files and directories still to remove if we exit early (t_fail(), t_skip()) */
static struct {
	pid_t pid;
	char path[PATH_MAX];
} t_files[T_MAX_FILES];
static pthread_mutex_t t_files_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Only the process that created a file removes it, not forked children;
 * the last tracked first, so a directory is empty when its turn comes.
 */
static void t_cleanup(void)
{
	int i;

	for (i = T_MAX_FILES - 1; i >= 0; i--)
		if (t_files[i].pid == getpid() &&
		    unlink(t_files[i].path) && errno == EISDIR)
			rmdir(t_files[i].path);
}

void *t_uncached_map(char *path, size_t path_len, const char *name,
		     size_t len)
{
	void *buf, *map;
	int fd;

	snprintf(path, path_len, "%s/%s.%d", t_dir("IOUH_EXT4"), name,
		 (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_DIRECT, 0600);
	if (fd < 0)
		t_fail("open %s O_DIRECT: %s", path, strerror(errno));
	t_track(path, 1);
	if (posix_memalign(&buf, 4096, len))
		t_fail("posix_memalign");
	memset(buf, 0, len);
	if (pwrite(fd, buf, len, 0) != (ssize_t)len)
		t_fail("O_DIRECT pwrite: %s", strerror(errno));
	free(buf);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	close(fd);
	return map;
}

void t_uncached_unmap(void *map, const char *path, size_t len)
{
	munmap(map, len);
	unlink(path);
	t_track(path, 0);
}

void t_track(const char *path, int add)
{
	static int registered;
	int i;

	pthread_mutex_lock(&t_files_lock);
	if (!registered++)
		atexit(t_cleanup);
	if (add) {
		/* after the last slot in use, so t_cleanup() goes in reverse */
		for (i = T_MAX_FILES; i > 0 && !t_files[i - 1].pid; i--)
			;
		/* else the first free one */
		for (i %= T_MAX_FILES; i < T_MAX_FILES && t_files[i].pid; i++)
			;
		if (i < T_MAX_FILES) {
			t_files[i].pid = getpid();
			snprintf(t_files[i].path, PATH_MAX, "%s", path);
		}
	}
	for (i = 0; !add && i < T_MAX_FILES; i++) {
		if (t_files[i].pid == getpid() &&
		    !strcmp(t_files[i].path, path)) {
			t_files[i].pid = 0;
			break;
		}
	}
	pthread_mutex_unlock(&t_files_lock);
}

int t_read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

void t_run_in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int ret;

	ret = pthread_create(&t, NULL, fn, arg);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	ret = pthread_join(t, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));
}

/* is task @tid one of our io-wq workers, idle in its sleep */
static int idle_worker(const char *tid, const char *want)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, want))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && (p[2] == 'S' || p[2] == 'I');
}

/*
 * Poll for an idle io-wq worker of the calling thread, 1 ms apart, at most
 * @polls times or until @end (t_now_ms()): 1 if one showed up.
 */
static int wait_idle_worker(int polls, long long end)
{
	struct timespec one_ms = { 0, 1000 * 1000 };
	char want[32];

	snprintf(want, sizeof(want), "iou-wrk-%d", gettid());
	while (polls-- > 0) {
		struct dirent *de;
		int found = 0;
		DIR *d;

		d = opendir("/proc/self/task");
		if (!d)
			return 0;
		while (!found && (de = readdir(d)))
			found = de->d_name[0] != '.' &&
				idle_worker(de->d_name, want);
		closedir(d);
		if (found)
			return 1;
		nanosleep(&one_ms, NULL);
		if (t_now_ms() >= end)
			break;
	}
	return 0;
}

int t_wait_idle_worker_ms(int ms)
{
	return wait_idle_worker(INT_MAX, t_now_ms() + ms);
}

void t_wait_idle_worker(void)
{
	wait_idle_worker(T_IDLE_WORKER_POLLS, LLONG_MAX);
}

int t_reap_one(struct io_uring *ring, unsigned long long user_data)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	do {
		ret = io_uring_wait_cqe(ring, &cqe);
	} while (ret == -EINTR);
	if (ret)
		t_fail("wait_cqe: %s", strerror(-ret));
	if (cqe->user_data != user_data)
		t_fail("CQE user_data %llu, expected %llu",
		     (unsigned long long)cqe->user_data, user_data);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (!io_uring_peek_cqe(ring, &cqe))
		t_fail("extra CQE, user_data %llu res %d",
		     (unsigned long long)cqe->user_data, cqe->res);
	return res;
}

int t_fsync(struct io_uring *ring, int fd, unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_fsync(sqe, fd, 0);
	sqe->flags |= sqe_flags;
	sqe->user_data = T_USER_DATA;

	ret = io_uring_submit_and_wait(ring, 1);
	/* a signal before anything was consumed, submit again */
	while (ret == -EINTR && io_uring_sq_ready(ring))
		ret = io_uring_submit(ring);
	if (ret < 0 && ret != -EINTR)
		t_fail("submit fsync: %s", strerror(-ret));
	if (!ret)
		t_fail("submit fsync: nothing submitted");
	return t_reap_one(ring, T_USER_DATA);
}

int t_submit_and_wait(struct io_uring *ring, unsigned int wait_nr)
{
	int ret;

	do
		ret = io_uring_submit_and_wait(ring, wait_nr);
	while (ret == -EINTR && io_uring_sq_ready(ring));
	return ret;
}

int t_submit(struct io_uring *ring)
{
	return t_submit_and_wait(ring, 0);
}

void t_force_dirty(struct t_force *tf)
{
	static char buf[T_DIRTY];
	static unsigned char gen;

	memset(buf, 0x5a ^ ++gen, sizeof(buf));
	if (pwrite(tf->fd, buf, sizeof(buf), 0) != sizeof(buf))
		t_fail("pwrite %s: %s", tf->path, strerror(errno));
}

void t_force_queue_fsync(struct t_force *tf, unsigned long long user_data)
{
	struct io_uring_sqe *sqe;

	t_force_dirty(tf);
	sqe = io_uring_get_sqe(&tf->ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_fsync(sqe, tf->fd, 0);
	sqe->user_data = user_data;
	io_uring_smp_store_release(tf->ring.sq.ktail, tf->ring.sq.sqe_tail);
	tf->ring.sq.sqe_head = tf->ring.sq.sqe_tail;
}

void t_warm(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = T_USER_DATA;
	ret = io_uring_submit(ring);
	if (ret != 1)
		t_fail("submit warm-up NOP: %d", ret);
	ret = t_reap_one(ring, T_USER_DATA);
	if (ret)
		t_fail("warm-up NOP: %d", ret);
	t_wait_idle_worker();
}

void t_statx_batch(struct io_uring *ring, const char *path, int n,
		   long long size)
{
	struct statx stx[64];
	struct io_uring_cqe *cqe;
	int i, ret;

	if (n > 64)
		t_fail("t_statx_batch: %d statx, at most 64", n);
	t_wait_idle_worker();
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			t_fail("SQ ring full at %d", i);
		io_uring_prep_statx(sqe, AT_FDCWD, path, 0, STATX_SIZE,
				    &stx[i]);
		sqe->user_data = i;
	}
	ret = io_uring_submit(ring);
	if (ret != n)
		t_fail("submit: %d of %d", ret, n);
	for (i = 0; i < n; i++) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret)
			t_fail("wait_cqe: %s", strerror(-ret));
		if (cqe->res || cqe->user_data >= (unsigned int)n ||
		    (long long)stx[cqe->user_data].stx_size != size)
			t_fail("statx %llu: res %d, expected 0 and size %lld",
			       (unsigned long long)cqe->user_data, cqe->res,
			       size);
		io_uring_cqe_seen(ring, cqe);
	}
}

void t_force_init_flags(struct t_force *tf, const char *name, unsigned int ring_flags)
{
	const char *dir = t_dir("IOUH_EXT4");
	int ret;

	snprintf(tf->path, sizeof(tf->path), "%s/%s.%d", dir, name, gettid());
	tf->fd = open(tf->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tf->fd < 0)
		t_fail("open %s: %s", tf->path, strerror(errno));
	t_track(tf->path, 1);
	ret = t_queue_init(8, &tf->ring, ring_flags);
	if (ret)
		t_fail("queue_init flags %#x: %s", ring_flags, strerror(-ret));

	/* an explicit punt creates the io-wq worker a handoff can claim */
	ret = t_fsync(&tf->ring, tf->fd, IOSQE_ASYNC);
	if (ret)
		t_fail("warm-up fsync: %s", strerror(-ret));
	/* the SQPOLL thread's workers are its own, not named after us */
	if (!(ring_flags & IORING_SETUP_SQPOLL))
		t_wait_idle_worker();
}

void t_force_init(struct t_force *tf, const char *name)
{
	t_force_init_flags(tf, name, 0);
}

void t_force_exit(struct t_force *tf)
{
	io_uring_queue_exit(&tf->ring);
	close(tf->fd);
	unlink(tf->path);
	t_track(tf->path, 0);
}

long long t_force_block_flags(struct t_force *tf, unsigned int sqe_flags)
{
	long long before;
	int ret;

	t_force_dirty(tf);
	before = t_counter("handoffs");
	ret = t_fsync(&tf->ring, tf->fd, sqe_flags);
	if (ret)
		t_fail("fsync res %d (%s), expected 0", ret, strerror(-ret));
	return before;
}

long long t_force_block(struct t_force *tf)
{
	return t_force_block_flags(tf, 0);
}

/* t_run_leader_and_thread()'s body, wrapped: no cast between fn and data */
struct t_body {
	void (*fn)(bool leader);
};

static void *t_body_thread(void *arg)
{
	struct t_body *body = arg;

	body->fn(false);
	return NULL;
}

void t_run_leader_and_thread(void (*fn)(bool leader))
{
	struct t_body body = { .fn = fn };

	fn(true);
	t_run_in_thread(t_body_thread, &body);
}

bool t_wait_until(bool (*cond)(void *arg), void *arg, int polls, int ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (polls-- > 0) {
		if (cond(arg))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void t_fifo_init(struct t_fifo *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s/%s.%d", t_dir("IOUH_TMPFS"),
		 name, gettid());
	unlink(f->path);
	if (mkfifo(f->path, 0600))
		t_fail("mkfifo %s: %s", f->path, strerror(errno));
	t_track(f->path, 1);
}

void t_fifo_prep_open(struct t_fifo *f, struct io_uring_sqe *sqe,
		       unsigned long long user_data)
{
	io_uring_prep_openat(sqe, AT_FDCWD, f->path, O_RDONLY | O_CREAT, 0600);
	io_uring_sqe_set_data64(sqe, user_data);
}

static int t_fifo_go(struct t_fifo *f)
{
	return __atomic_load_n(&f->go, __ATOMIC_ACQUIRE);
}

static void *t_fifo_writer(void *arg)
{
	struct timespec ms = { 0, 1000 * 1000 };
	struct t_fifo *f = arg;
	long long end;
	int fd = -1;

	/* the delay, unless t_fifo_release_now() or _cancel() cut it short */
	end = t_now_ms() + f->delay_ms;
	while (!t_fifo_go(f) && t_now_ms() < end)
		nanosleep(&ms, NULL);
	end = t_now_ms() + 20000;
	/* ENXIO until a reader waits in the open */
	while (t_fifo_go(f) >= 0 && t_now_ms() < end) {
		fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno != ENXIO)
			break;
		nanosleep(&ms, NULL);
	}
	if (fd >= 0) {
		__atomic_store_n(&f->opened_ms, t_now_ms(), __ATOMIC_RELAXED);
		__atomic_store_n(&f->outcome, 1, __ATOMIC_RELEASE);
		usleep(50 * 1000);
		close(fd);
	} else {
		__atomic_store_n(&f->outcome, errno ?: ETIMEDOUT,
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

void t_fifo_release_after(struct t_fifo *f, int ms)
{
	int ret;

	f->delay_ms = ms;
	f->start_ms = t_now_ms();
	ret = pthread_create(&f->writer, NULL, t_fifo_writer, f);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	f->writer_started = 1;
}

void t_fifo_release_now(struct t_fifo *f)
{
	__atomic_store_n(&f->go, 1, __ATOMIC_RELEASE);
}

void t_fifo_release_cancel(struct t_fifo *f)
{
	__atomic_store_n(&f->go, -1, __ATOMIC_RELEASE);
}

void t_fifo_check_fd(struct t_fifo *f, int res)
{
	struct stat st, want;

	if (res < 0)
		t_fail("openat of the FIFO: %d (%s)", res, strerror(-res));
	if (stat(f->path, &want) || fstat(res, &st) ||
	    st.st_ino != want.st_ino || !S_ISFIFO(st.st_mode))
		t_fail("openat returned fd %d, not the FIFO", res);
	close(res);
}

void t_fifo_exit(struct t_fifo *f)
{
	if (f->writer_started)
		pthread_join(f->writer, NULL);
	f->writer_started = 0;
	unlink(f->path);
	t_track(f->path, 0);
}

int t_wait_cqe_ms(struct io_uring *ring, int ms, unsigned long long *user_data,
		   int *res)
{
	long long left, end = t_now_ms() + ms;
	struct io_uring_cqe *cqe;
	int ret;

	do {
		struct __kernel_timespec ts;

		left = end - t_now_ms();
		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000;
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret == -ETIME)
			return 0;
		if (ret && ret != -EINTR)
			t_fail("wait_cqe_timeout: %s", strerror(-ret));
	} while (ret);
	*user_data = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 1;
}

int t_reap_ud_ms(struct io_uring *ring, unsigned long long user_data, int ms,
		 const char *what)
{
	unsigned long long got;
	int res;

	if (!t_wait_cqe_ms(ring, ms, &got, &res))
		t_fail("no CQE for the %s within %d ms", what, ms);
	if (got != user_data)
		t_fail("CQE %#llx (res %d) where the %s's %#llx was due", got,
		       res, what, user_data);
	return res;
}

long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int t_window_delay(int ms)
{
	FILE *f = fopen("/sys/module/io_uring_handoff/parameters/debug_window_ms",
			"w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", ms);
	return fclose(f) ? -1 : 0;
}

#define T_WINDOW_PARAM	"/sys/module/io_uring_handoff/parameters/debug_window_ms"

/* the process that widened the window, the only one that restores it */
static pid_t t_window_owner;

static void t_window_restore(void)
{
	if (t_window_owner == getpid())
		t_window_delay(0);
}

/* SIGALRM, SIGTERM: restore (async-signal-safe) and fail */
static void t_window_fatal(int sig)
{
	static const char alrm[] = "FAIL: timed out (SIGALRM)\n";
	static const char term[] = "FAIL: terminated (SIGTERM)\n";
	ssize_t n;
	int fd;

	if (t_window_owner == getpid()) {
		fd = open(T_WINDOW_PARAM, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = write(fd, "0\n", 2);
			close(fd);
		}
	}
	if (sig == SIGALRM)
		n = write(STDERR_FILENO, alrm, sizeof(alrm) - 1);
	else
		n = write(STDERR_FILENO, term, sizeof(term) - 1);
	(void)n;
	_exit(T_FAIL);
}

int t_window_widen(int ms)
{
	static int noted;
	int ret;

	if (!t_window_owner) {
		struct sigaction sa = { .sa_handler = t_window_fatal };

		t_window_owner = getpid();
		atexit(t_window_restore);
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGALRM, &sa, NULL) ||
		    sigaction(SIGTERM, &sa, NULL))
			t_fail("sigaction: %s", strerror(errno));
	}
	ret = t_window_delay(ms);
	if (ret && ms && t_mode_handoff() && !noted++)
		fprintf(stderr,
			"note: no debug_window_ms, the window stays short\n");
	return ret;
}

void t_write_file(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		t_fail("writing %s to %s: %s", val, path, strerror(errno));
	close(fd);
}

void t_cgroup2_mount(char *mnt, size_t len)
{
	snprintf(mnt, len, "%s/cgroup2.%d", t_dir("IOUH_TMPFS"), (int)getpid());
	if (mkdir(mnt, 0700))
		t_fail("mkdir %s: %s", mnt, strerror(errno));
	if (mount("none", mnt, "cgroup2", 0, NULL)) {
		rmdir(mnt);
		t_skip("mount cgroup2: %s", strerror(errno));
	}
}

void t_cgroup2_umount(const char *mnt)
{
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

void t_rmdir_busy(const char *path)
{
	int i;

	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++)
		usleep(10 * 1000);
}

int t_delay_point(const char *name, int ms)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/module/handoff_hooks/parameters/delay_%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", ms);
	return fclose(f) ? -1 : 0;
}

void t_delay_point_need(const char *name, int ms)
{
	if (t_delay_point(name, ms))
		t_skip("no delay point %s: not a debug kernel", name);
}

pid_t t_find_thread(pid_t pid, int (*match)(pid_t pid, pid_t tid, void *arg),
		    void *arg)
{
	struct dirent *de;
	char path[64];
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!tid && (de = readdir(d)))
		if (de->d_name[0] != '.' && match(pid, atoi(de->d_name), arg))
			tid = atoi(de->d_name);
	closedir(d);
	return tid;
}

/*
 * The promoted worker waits out the window in msleep(): state D, and still
 * named like a worker, it takes the submitter's comm only with its
 * identity. The submitter sleeps in the op under its own name.
 */
static int in_window(pid_t pid, pid_t tid, void *arg)
{
	char path[300], buf[512], *p;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return strstr(buf, "(iou-wrk-") && p && p[2] == 'D';
}

int t_window_open(pid_t pid)
{
	return t_find_thread(pid, in_window, NULL) != 0;
}

char t_task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

int t_wait_asleep(pid_t pid, pid_t tid, int ms)
{
	struct timespec one = { 0, 1000 * 1000 };
	long long end = t_now_ms() + ms;
	char st;

	do {
		st = t_task_state(pid, tid);
		if (st == 'S' || st == 'D')
			return 1;
		nanosleep(&one, NULL);
	} while (t_now_ms() < end);
	return 0;
}

int t_wait_armed_asleep(const int *armed, pid_t tid, int ms, int settle_ms)
{
	struct timespec one = { 0, 1000 * 1000 };
	long long end = t_now_ms() + ms;

	while (!__atomic_load_n(armed, __ATOMIC_ACQUIRE) && t_now_ms() < end)
		nanosleep(&one, NULL);
	if (!t_wait_asleep(getpid(), tid, ms))
		return 0;
	usleep(settle_ms * 1000);
	return 1;
}

void t_remove_file(const char *name, pid_t tid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.%d", t_dir("IOUH_EXT4"), name,
		 tid);
	unlink(path);
}

void t_fifo_submit_open(struct io_uring *ring, struct t_fifo *f,
			 unsigned long long user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		t_fail("no SQE");
	t_fifo_prep_open(f, sqe, user_data);
	f->submit_ms = t_now_ms();
	ret = t_submit(ring);
	f->submitted_ms = t_now_ms();
	if (ret != 1)
		t_fail("submit returned %d", ret);
}

/* for a failure: each thread's stat line and kernel stack */
static void t_dump_tasks(void)
{
	char path[300], buf[4096];
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 de->d_name);
		if (!t_read_text(path, buf, sizeof(buf)))
			fprintf(stderr, "task %s: %s", de->d_name, buf);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 de->d_name);
		if (!t_read_text(path, buf, sizeof(buf)))
			fprintf(stderr, "%s", buf);
	}
	closedir(d);
}

void t_fifo_reap_open(struct io_uring *ring, struct t_fifo *f,
		       unsigned long long user_data, int ms)
{
	unsigned long long ud;
	int res;

	if (!t_wait_cqe_ms(ring, ms, &ud, &res)) {
		int outcome = __atomic_load_n(&f->outcome, __ATOMIC_ACQUIRE);

		t_dump_tasks();
		if (f->start_ms)
			fprintf(stderr, "note: the submit took %lld ms; the FIFO writer, started %lld ms before it, %s %lld ms after the submit\n",
				f->submitted_ms - f->submit_ms,
				f->submit_ms - f->start_ms,
				outcome == 1 ? "opened" :
				outcome ? strerror(outcome) : "still tries",
				(outcome == 1 ? f->opened_ms : t_now_ms()) -
				f->submit_ms);
		t_fail("no CQE %d ms after the submit", ms);
	}
	if (ud != user_data)
		t_fail("CQE user_data %#llx, expected %#llx", ud, user_data);
	t_fifo_check_fd(f, res);
}

int t_wait_child_ms(pid_t pid, int *status, int flags, int ms)
{
	long long end = t_now_ms() + ms;
	pid_t ret;

	do {
		ret = waitpid(pid, status, WNOHANG | flags);
		if (ret == pid)
			return 1;
		if (ret < 0 && errno != EINTR)
			t_fail("waitpid %d: %s", pid, strerror(errno));
		usleep(5000);
	} while (t_now_ms() < end);
	return 0;
}

int t_worker_tids(pid_t *tids, int max)
{
	char path[300], comm[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		t_fail("opendir /proc/self/task: %s", strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		if (t_read_text(path, comm, sizeof(comm)) ||
		    strncmp(comm, "iou-wrk-", 8))
			continue;
		if (tids && n < max)
			tids[n] = atoi(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}
