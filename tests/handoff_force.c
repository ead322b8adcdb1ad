// SPDX-License-Identifier: GPL-2.0
/*
 * Shared mechanism of the id_* tests: force an inline blocking issue that
 * blocks, see handoff_force.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common.h"
#include "handoff_force.h"

#define HF_USER_DATA	0x1d5afe11ULL
#define HF_MAX_FILES	16

/* files still to unlink if we exit early, with fail() or skip() */
static struct {
	pid_t pid;
	char path[PATH_MAX];
} hf_files[HF_MAX_FILES];
static pthread_mutex_t hf_files_lock = PTHREAD_MUTEX_INITIALIZER;

/* only the process that created a file removes it, not forked children */
static void hf_cleanup(void)
{
	int i;

	for (i = 0; i < HF_MAX_FILES; i++)
		if (hf_files[i].pid == getpid())
			unlink(hf_files[i].path);
}

static void hf_track(const char *path, int add)
{
	static int registered;
	int i;

	pthread_mutex_lock(&hf_files_lock);
	if (!registered++)
		atexit(hf_cleanup);
	for (i = 0; i < HF_MAX_FILES; i++) {
		if (add && !hf_files[i].pid) {
			hf_files[i].pid = getpid();
			snprintf(hf_files[i].path, PATH_MAX, "%s", path);
			break;
		}
		if (!add && hf_files[i].pid == getpid() &&
		    !strcmp(hf_files[i].path, path)) {
			hf_files[i].pid = 0;
			break;
		}
	}
	pthread_mutex_unlock(&hf_files_lock);
}

int read_text(const char *path, char *buf, size_t size)
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

void run_in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int ret;

	ret = pthread_create(&t, NULL, fn, arg);
	if (ret)
		fail("pthread_create: %s", strerror(ret));
	ret = pthread_join(t, NULL);
	if (ret)
		fail("pthread_join: %s", strerror(ret));
}

/* is task @tid one of our io-wq workers, idle in its sleep */
static int idle_worker(const char *tid, const char *want)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	if (read_text(path, buf, sizeof(buf)))
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, want))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	if (read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && (p[2] == 'S' || p[2] == 'I');
}

void hf_wait_idle_worker(void)
{
	struct timespec ms = { 0, 1000 * 1000 };
	char want[32];
	int i;

	snprintf(want, sizeof(want), "iou-wrk-%d", gettid());
	for (i = 0; i < 2000; i++) {
		struct dirent *de;
		int found = 0;
		DIR *d;

		d = opendir("/proc/self/task");
		if (!d)
			return;
		while ((de = readdir(d)) && !found)
			found = de->d_name[0] != '.' &&
				idle_worker(de->d_name, want);
		closedir(d);
		if (found)
			return;
		nanosleep(&ms, NULL);
	}
}

int hf_reap_one(struct io_uring *ring, unsigned long long user_data)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	do {
		ret = io_uring_wait_cqe(ring, &cqe);
	} while (ret == -EINTR);
	if (ret)
		fail("wait_cqe: %s", strerror(-ret));
	if (cqe->user_data != user_data)
		fail("CQE user_data %llu, expected %llu",
		     (unsigned long long)cqe->user_data, user_data);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (!io_uring_peek_cqe(ring, &cqe))
		fail("extra CQE, user_data %llu res %d",
		     (unsigned long long)cqe->user_data, cqe->res);
	return res;
}

int hf_fsync(struct io_uring *ring, int fd, unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		fail("no SQE");
	io_uring_prep_fsync(sqe, fd, 0);
	sqe->flags |= sqe_flags;
	sqe->user_data = HF_USER_DATA;

	ret = io_uring_submit_and_wait(ring, 1);
	/* a signal before anything was consumed, submit again */
	while (ret == -EINTR && io_uring_sq_ready(ring))
		ret = io_uring_submit(ring);
	if (ret < 0 && ret != -EINTR)
		fail("submit fsync: %s", strerror(-ret));
	if (!ret)
		fail("submit fsync: nothing submitted");
	return hf_reap_one(ring, HF_USER_DATA);
}

void hf_dirty(struct hf *hf)
{
	static char buf[HF_DIRTY];
	static unsigned char gen;

	memset(buf, 0x5a ^ ++gen, sizeof(buf));
	if (pwrite(hf->fd, buf, sizeof(buf), 0) != sizeof(buf))
		fail("pwrite %s: %s", hf->path, strerror(errno));
}

void hf_queue_fsync(struct hf *hf, unsigned long long user_data)
{
	struct io_uring_sqe *sqe;

	hf_dirty(hf);
	sqe = io_uring_get_sqe(&hf->ring);
	if (!sqe)
		fail("no SQE");
	io_uring_prep_fsync(sqe, hf->fd, 0);
	sqe->user_data = user_data;
	io_uring_smp_store_release(hf->ring.sq.ktail, hf->ring.sq.sqe_tail);
	hf->ring.sq.sqe_head = hf->ring.sq.sqe_tail;
}

void hf_warm(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		fail("no SQE");
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = HF_USER_DATA;
	ret = io_uring_submit(ring);
	if (ret != 1)
		fail("submit warm-up NOP: %d", ret);
	ret = hf_reap_one(ring, HF_USER_DATA);
	if (ret)
		fail("warm-up NOP: %d", ret);
	hf_wait_idle_worker();
}

void hf_init_flags(struct hf *hf, const char *name, unsigned int ring_flags)
{
	const char *dir = test_dir("IOUH_EXT4");
	int ret;

	snprintf(hf->path, sizeof(hf->path), "%s/%s.%d", dir, name, gettid());
	hf->fd = open(hf->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (hf->fd < 0)
		fail("open %s: %s", hf->path, strerror(errno));
	hf_track(hf->path, 1);
	ret = test_queue_init(8, &hf->ring, ring_flags);
	if (ret)
		fail("queue_init flags %#x: %s", ring_flags, strerror(-ret));

	/* an explicit punt creates the io-wq worker a handoff can claim */
	ret = hf_fsync(&hf->ring, hf->fd, IOSQE_ASYNC);
	if (ret)
		fail("warm-up fsync: %s", strerror(-ret));
	/* the SQPOLL thread's workers are its own, not named after us */
	if (!(ring_flags & IORING_SETUP_SQPOLL))
		hf_wait_idle_worker();
}

void hf_init(struct hf *hf, const char *name)
{
	hf_init_flags(hf, name, 0);
}

void hf_exit(struct hf *hf)
{
	io_uring_queue_exit(&hf->ring);
	close(hf->fd);
	unlink(hf->path);
	hf_track(hf->path, 0);
}

long long hf_block_flags(struct hf *hf, unsigned int sqe_flags)
{
	long long before;
	int ret;

	hf_dirty(hf);
	before = handoff_counter("handoffs");
	ret = hf_fsync(&hf->ring, hf->fd, sqe_flags);
	if (ret)
		fail("fsync res %d (%s), expected 0", ret, strerror(-ret));
	return before;
}

long long hf_block(struct hf *hf)
{
	return hf_block_flags(hf, 0);
}

void run_leader_and_thread(void *(*fn)(void *))
{
	fn((void *)1);
	run_in_thread(fn, NULL);
}

void hf_fifo_init(struct hf_fifo *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s/%s.%d", test_dir("IOUH_TMPFS"),
		 name, gettid());
	unlink(f->path);
	if (mkfifo(f->path, 0600))
		fail("mkfifo %s: %s", f->path, strerror(errno));
	hf_track(f->path, 1);
}

void hf_fifo_prep_open(struct hf_fifo *f, struct io_uring_sqe *sqe,
		       unsigned long long user_data)
{
	io_uring_prep_openat(sqe, AT_FDCWD, f->path, O_RDONLY | O_CREAT, 0600);
	io_uring_sqe_set_data64(sqe, user_data);
}

static int hf_fifo_go(struct hf_fifo *f)
{
	return __atomic_load_n(&f->go, __ATOMIC_ACQUIRE);
}

static void *hf_fifo_writer(void *arg)
{
	struct timespec ms = { 0, 1000 * 1000 };
	struct hf_fifo *f = arg;
	long long end;
	int fd = -1;

	/* the delay, unless hf_fifo_release_now() or _cancel() cut it short */
	end = hf_now_ms() + f->delay_ms;
	while (!hf_fifo_go(f) && hf_now_ms() < end)
		nanosleep(&ms, NULL);
	end = hf_now_ms() + 20000;
	/* ENXIO until a reader waits in the open */
	while (hf_fifo_go(f) >= 0 && hf_now_ms() < end) {
		fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno != ENXIO)
			break;
		nanosleep(&ms, NULL);
	}
	if (fd >= 0) {
		__atomic_store_n(&f->opened_ms, hf_now_ms(), __ATOMIC_RELAXED);
		__atomic_store_n(&f->outcome, 1, __ATOMIC_RELEASE);
		usleep(50 * 1000);
		close(fd);
	} else {
		__atomic_store_n(&f->outcome, errno ?: ETIMEDOUT,
				 __ATOMIC_RELEASE);
	}
	return NULL;
}

void hf_fifo_release_after(struct hf_fifo *f, int ms)
{
	int ret;

	f->delay_ms = ms;
	f->start_ms = hf_now_ms();
	ret = pthread_create(&f->writer, NULL, hf_fifo_writer, f);
	if (ret)
		fail("pthread_create: %s", strerror(ret));
	f->writer_started = 1;
}

void hf_fifo_release_now(struct hf_fifo *f)
{
	__atomic_store_n(&f->go, 1, __ATOMIC_RELEASE);
}

void hf_fifo_release_cancel(struct hf_fifo *f)
{
	__atomic_store_n(&f->go, -1, __ATOMIC_RELEASE);
}

void hf_fifo_check_fd(struct hf_fifo *f, int res)
{
	struct stat st, want;

	if (res < 0)
		fail("openat of the FIFO: %d (%s)", res, strerror(-res));
	if (stat(f->path, &want) || fstat(res, &st) ||
	    st.st_ino != want.st_ino || !S_ISFIFO(st.st_mode))
		fail("openat returned fd %d, not the FIFO", res);
	close(res);
}

void hf_fifo_exit(struct hf_fifo *f)
{
	if (f->writer_started)
		pthread_join(f->writer, NULL);
	f->writer_started = 0;
	unlink(f->path);
	hf_track(f->path, 0);
}

int hf_wait_cqe_ms(struct io_uring *ring, int ms, unsigned long long *user_data,
		   int *res)
{
	long long left, end = hf_now_ms() + ms;
	struct io_uring_cqe *cqe;
	int ret;

	do {
		struct __kernel_timespec ts;

		left = end - hf_now_ms();
		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000;
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret == -ETIME)
			return 0;
		if (ret && ret != -EINTR)
			fail("wait_cqe_timeout: %s", strerror(-ret));
	} while (ret);
	*user_data = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 1;
}

long long hf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int hf_window_delay(int ms)
{
	FILE *f = fopen("/sys/module/io_uring_handoff/parameters/debug_window_ms",
			"w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", ms);
	return fclose(f) ? -1 : 0;
}

#define HF_WINDOW_PARAM	"/sys/module/io_uring_handoff/parameters/debug_window_ms"

/* the process that widened the window, the only one that restores it */
static pid_t hf_window_owner;

static void hf_window_restore(void)
{
	if (hf_window_owner == getpid())
		hf_window_delay(0);
}

/* SIGALRM, SIGTERM: restore (async-signal-safe) and fail */
static void hf_window_fatal(int sig)
{
	static const char alrm[] = "FAIL: timed out (SIGALRM)\n";
	static const char term[] = "FAIL: terminated (SIGTERM)\n";
	ssize_t n;
	int fd;

	if (hf_window_owner == getpid()) {
		fd = open(HF_WINDOW_PARAM, O_WRONLY | O_CLOEXEC);
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

int hf_window_widen(int ms)
{
	static int noted;
	int ret;

	if (!hf_window_owner) {
		struct sigaction sa = { .sa_handler = hf_window_fatal };

		hf_window_owner = getpid();
		atexit(hf_window_restore);
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGALRM, &sa, NULL) ||
		    sigaction(SIGTERM, &sa, NULL))
			fail("sigaction: %s", strerror(errno));
	}
	ret = hf_window_delay(ms);
	if (ret && ms && mode_handoff() && !noted++)
		fprintf(stderr,
			"note: no debug_window_ms, the window stays short\n");
	return ret;
}

int hf_window_open(pid_t pid)
{
	char path[300], buf[512], *p;
	struct dirent *de;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	/*
	 * The promoted worker waits out the window in msleep(): state D, and
	 * still named like a worker, it takes the submitter's comm only with
	 * its identity. The submitter sleeps in the op under its own name.
	 */
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		if (read_text(path, buf, sizeof(buf)))
			continue;
		p = strrchr(buf, ')');
		found = strstr(buf, "(iou-wrk-") && p && p[2] == 'D';
	}
	closedir(d);
	return found;
}

char hf_task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

int hf_wait_asleep(pid_t pid, pid_t tid, int ms)
{
	struct timespec one = { 0, 1000 * 1000 };
	long long end = hf_now_ms() + ms;
	char st;

	do {
		st = hf_task_state(pid, tid);
		if (st == 'S' || st == 'D')
			return 1;
		nanosleep(&one, NULL);
	} while (hf_now_ms() < end);
	return 0;
}

void hf_remove_file(const char *name, pid_t tid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.%d", test_dir("IOUH_EXT4"), name,
		 tid);
	unlink(path);
}

void hf_fifo_submit_open(struct io_uring *ring, struct hf_fifo *f,
			 unsigned long long user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		fail("no SQE");
	hf_fifo_prep_open(f, sqe, user_data);
	f->submit_ms = hf_now_ms();
	do
		ret = io_uring_submit(ring);
	while (ret == -EINTR && io_uring_sq_ready(ring));
	f->submitted_ms = hf_now_ms();
	if (ret != 1)
		fail("submit returned %d", ret);
}

/* for a failure: each thread's stat line and kernel stack */
static void hf_dump_tasks(void)
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
		if (!read_text(path, buf, sizeof(buf)))
			fprintf(stderr, "task %s: %s", de->d_name, buf);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 de->d_name);
		if (!read_text(path, buf, sizeof(buf)))
			fprintf(stderr, "%s", buf);
	}
	closedir(d);
}

void hf_fifo_reap_open(struct io_uring *ring, struct hf_fifo *f,
		       unsigned long long user_data, int ms)
{
	unsigned long long ud;
	int res;

	if (!hf_wait_cqe_ms(ring, ms, &ud, &res)) {
		int outcome = __atomic_load_n(&f->outcome, __ATOMIC_ACQUIRE);

		hf_dump_tasks();
		if (f->start_ms)
			fprintf(stderr, "note: the submit took %lld ms; the FIFO writer, started %lld ms before it, %s %lld ms after the submit\n",
				f->submitted_ms - f->submit_ms,
				f->submit_ms - f->start_ms,
				outcome == 1 ? "opened" :
				outcome ? strerror(outcome) : "still tries",
				(outcome == 1 ? f->opened_ms : hf_now_ms()) -
				f->submit_ms);
		fail("no CQE %d ms after the submit", ms);
	}
	if (ud != user_data)
		fail("CQE user_data %#llx, expected %#llx", ud, user_data);
	hf_fifo_check_fd(f, res);
}
