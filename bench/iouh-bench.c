// SPDX-License-Identifier: GPL-2.0
/*
 * iouh-bench: throughput and CPU cost of the opcodes io_uring always punts
 * to io-wq, for the A/B table of the RFC cover letter.
 *
 *   iouh-bench --op OP --dir DIR --qd N --secs S [--sync] [--label FS]
 *
 * OP is one of fsync, statx, fadvise, renameat, openat, splice, unlinkat,
 * treewalk, walkread, nop, cost.
 * Each op
 * works on files it creates in DIR (named iouh-bench.<pid>.*, removed at
 * exit):
 *
 *   fsync     fsync(2) of a 4 KiB file. Before every fsync SQE (and every
 *             fsync(2) with --sync) the file is dirtied with one 4 KiB
 *             pwrite(2) syscall, so on ext4 every fsync really flushes, as
 *             in the RFC ("flushes, always blocks"); on tmpfs it never
 *             blocks. The pwrite is done on both file systems alike, is not
 *             counted as an op, but its time and CPU are in the measurement
 *             of every mode. With qd > 1 each request has its own file.
 *   statx     statx(2) of one 4 KiB file, STATX_BASIC_STATS.
 *   fadvise   POSIX_FADV_DONTNEED over a clean 64 KiB file.
 *   renameat  renames a -> b, then b -> a, ...; qd distinct pairs.
 *   openat    O_TMPFILE | O_RDWR in DIR; the returned fd is closed with
 *             close(2) right after the CQE is reaped (not counted as an op).
 *   splice    4 KiB from a 4 KiB file at offset 0 into a pipe; the pipe is
 *             drained with read(2) right after the CQE is reaped; qd pipes.
 *   unlinkat  a parallel rm: UNLINK_FILES empty files are created in DIR and
 *             synced to disk (syncfs) before the measurement, which then
 *             unlinks every one of them, qd at a time, and ends when the
 *             last is gone (not after S seconds).
 *   treewalk  a parallel file-tree walker: TREE_THREADS threads, each with
 *             its own ring set up IORING_SETUP_SINGLE_ISSUER |
 *             IORING_SETUP_DEFER_TASKRUN and a directory of TREE_FILES
 *             empty files, walk them over and over: statx, openat into a
 *             fixed file slot, close of that slot, linked; qd such chains
 *             in flight per thread. ops counts SQEs (3 per file); with
 *             --sync each thread makes the same three syscalls.
 *   walkread  treewalk's walkers with a chain a reader of every file makes:
 *             openat into a fixed file slot, a 4 KiB read of that slot
 *             into the chain's buffer, close of that slot, linked; the
 *             files hold IO_SIZE bytes of the bench's pattern, which each
 *             read must return. On tmpfs stock punts every read (no
 *             nonblocking read), a member issued from task_work.
 *   nop       IORING_OP_NOP, which io_uring completes inline and the module
 *             never sees: io_uring's own cost per request, the floor under
 *             every other op; --sync makes getppid(2), the floor of a
 *             syscall.
 *   cost      the microbench of what an opcode that io_uring punts costs
 *             beyond its work: six loops interleaved in blocks of
 *             COST_BLOCK, qd 1, for S seconds: IORING_OP_FSYNC of a clean
 *             4 KiB file (tmpfs: no work) and fsync(2) of it,
 *             IORING_OP_NOP and getppid(2), IORING_OP_FADVISE
 *             POSIX_FADV_NORMAL of it (which io_uring issues inline, the
 *             module never sees it) and posix_fadvise(2) the same. Beside
 *             the usual fields the line has each loop's ns per op
 *             (uring_ns, sync_ns, nop_ns, getppid_ns, fadv_ns,
 *             sync_fadv_ns) and two differences: cost_ns = (uring_ns -
 *             sync_ns) - (nop_ns - getppid_ns), what the FSYNC costs over
 *             the syscall less what any request costs io_uring over a
 *             syscall, and file_cost_ns = (uring_ns - sync_ns) - (fadv_ns -
 *             sync_fadv_ns), the same less what a request on a file costs.
 *             Stock (module unloaded) that is the punt (a worker's wakeup,
 *             its switches, task_work); inline, the module's and the core
 *             hooks' cost per issue. ops counts the FSYNC SQEs over the
 *             whole run; --sync is refused.
 *
 * The io_uring mode keeps exactly qd requests in flight on a plain ring
 * (max(2 * qd, 8) entries, no setup flags): submit qd, then reap every CQE
 * (checking its result), prepare a replacement for each and submit them
 * with io_uring_submit_and_wait(), until S seconds have passed; then drain.
 * --sync runs the same operation as synchronous syscalls in one thread for
 * S seconds (qd is then only echoed in the output).
 *
 * p50 and p99 (io_uring mode, not treewalk) are the median and 99th percentile of the
 * requests' latencies in us, from the SQE's preparation to the reaping of
 * its CQE: what the application waits for a result, batching included.
 *
 * CPU is getrusage(RUSAGE_SELF) user + system time over the measured
 * interval, i.e. the whole process including its io-wq worker threads, as a
 * percentage of one CPU. workers is the number of the process's io-wq
 * threads (comm iou-wrk-*) alive after the drain, before the ring goes (0
 * with --sync); n is the number of ops done in the measured interval. One
 * line goes to stdout:
 *
 *   op=fsync fs=tmpfs qd=1 mode=io_uring ops=123456.7 cpu=97.3 workers=2 n=246913 p50=4.1 p99=9.8
 *
 * fs= is --label (alias --fs-label), else the last component of DIR. Any
 * error is reported on stderr and the exit status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <liburing.h>

#define IO_SIZE		4096
#define FADV_SIZE	(64 * 1024)
#define MAX_QD		4096
#define NAME_LEN	64
#define UNLINK_FILES	4000
#define TREE_THREADS	4
#define TREE_FILES	500
#define COST_BLOCK	256
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct bench;
struct sample;

/* per in-flight request state, indexed by the SQE's user_data */
struct slot {
	int fd;				/* fsync: this slot's file */
	int pipe[2];			/* splice */
	unsigned int cur;		/* renameat: which name exists */
	char name[2][NAME_LEN];		/* fsync: [0]; renameat: the pair */
	struct statx stx;
	struct timespec queued;		/* its SQE's preparation */
};

struct bench_op {
	const char *name;
	size_t file_size;	/* if set, a shared file of this size */
	unsigned int items;	/* if set, a fixed count of work items */
	/* files made before the measurement, and what is left of them */
	void (*populate)(struct bench *b);
	void (*depopulate)(struct bench *b);
	/* if set, the whole measurement, both modes */
	unsigned long long (*run)(struct bench *b, struct sample *start,
				  struct sample *end);
	void (*setup)(struct bench *b, struct slot *s, unsigned int i);
	void (*before)(struct bench *b, struct slot *s);
	void (*prep)(struct bench *b, struct slot *s, struct io_uring_sqe *sqe);
	int (*sync)(struct bench *b, struct slot *s);
	void (*done)(struct bench *b, struct slot *s, int res);
	void (*cleanup)(struct bench *b, struct slot *s);
};

struct bench {
	const struct bench_op *op;
	const char *dir;
	const char *label;
	unsigned int qd;
	double secs;
	bool sync;
	int dfd;
	int fd;				/* the shared file, or -1 */
	char name[NAME_LEN];		/* its name in dir */
	char prefix[NAME_LEN / 2];
	struct slot *slots;
	unsigned int nslots;		/* slots set up so far */
	unsigned int workers;		/* io-wq threads alive after the drain */
	unsigned int next;		/* fixed count ops: the next item */
	unsigned int inflight;
	unsigned long long *lat;	/* each request's latency, ns */
	size_t nlat, lat_size;
	char buf[IO_SIZE];
};

struct sample {
	struct timespec ts;
	struct rusage ru;
};

static struct bench bench = { .fd = -1, .dfd = -1 };

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iouh-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void check_res(struct bench *b, int res, int want)
{
	if (res == want)
		return;
	if (res < 0)
		die("%s: %s", b->op->name, strerror(-res));
	die("%s: result %d, expected %d", b->op->name, res, want);
}

static void make_name(struct bench *b, char *name, const char *fmt,
		      unsigned int i)
{
	int n;

	n = snprintf(name, NAME_LEN, "%s", b->prefix);
	snprintf(name + n, NAME_LEN - n, fmt, i);
}

/* create name in dir with size bytes written; returns an O_RDWR fd */
static int create_file(struct bench *b, const char *name, size_t size)
{
	size_t off;
	int fd;

	fd = openat(b->dfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		die("create %s/%s: %s", b->dir, name, strerror(errno));
	for (off = 0; off < size; off += IO_SIZE)
		if (pwrite(fd, b->buf, IO_SIZE, off) != IO_SIZE)
			die("write %s/%s: %s", b->dir, name, strerror(errno));
	if (fsync(fd))
		die("fsync %s/%s: %s", b->dir, name, strerror(errno));
	return fd;
}

/*
 * A file of @size bytes of the pattern (at most IO_SIZE, 0: empty), not
 * synced: populate() syncs the lot at once
 */
static void create_unsynced(struct bench *b, const char *name, size_t size)
{
	int fd = openat(b->dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			0600);

	if (fd < 0 || (size && pwrite(fd, b->buf, size, 0) != (ssize_t)size) ||
	    close(fd))
		die("create %s/%s: %s", b->dir, name, strerror(errno));
}

static void unlink_name(struct bench *b, const char *name)
{
	if (name[0] && unlinkat(b->dfd, name, 0) && errno != ENOENT)
		fprintf(stderr, "iouh-bench: unlink %s/%s: %s\n", b->dir,
			name, strerror(errno));
}

/* fsync: one file per slot, dirtied by a pwrite before each fsync */

static void fsync_setup(struct bench *b, struct slot *s, unsigned int i)
{
	make_name(b, s->name[0], "fsync.%u", i);
	s->fd = create_file(b, s->name[0], IO_SIZE);
}

static void fsync_before(struct bench *b, struct slot *s)
{
	if (pwrite(s->fd, b->buf, IO_SIZE, 0) != IO_SIZE)
		die("fsync: pwrite: %s", strerror(errno));
}

static void fsync_prep(struct bench *b, struct slot *s,
		       struct io_uring_sqe *sqe)
{
	(void)b;
	io_uring_prep_fsync(sqe, s->fd, 0);
}

static int fsync_sync(struct bench *b, struct slot *s)
{
	(void)b;
	return fsync(s->fd) ? -errno : 0;
}

static void fsync_cleanup(struct bench *b, struct slot *s)
{
	close(s->fd);
	unlink_name(b, s->name[0]);
}

/* statx: the shared file, by name relative to dir */

static void statx_prep(struct bench *b, struct slot *s,
		       struct io_uring_sqe *sqe)
{
	io_uring_prep_statx(sqe, b->dfd, b->name, 0, STATX_BASIC_STATS,
			    &s->stx);
}

static int statx_sync(struct bench *b, struct slot *s)
{
	return statx(b->dfd, b->name, 0, STATX_BASIC_STATS, &s->stx) ?
		-errno : 0;
}

static void statx_done(struct bench *b, struct slot *s, int res)
{
	check_res(b, res, 0);
	if (s->stx.stx_size != IO_SIZE)
		die("statx: size %llu, expected %d",
		    (unsigned long long)s->stx.stx_size, IO_SIZE);
}

/* fadvise: DONTNEED over the whole (clean) shared file */

static void fadvise_prep(struct bench *b, struct slot *s,
			 struct io_uring_sqe *sqe)
{
	(void)s;
	io_uring_prep_fadvise(sqe, b->fd, 0, FADV_SIZE, POSIX_FADV_DONTNEED);
}

static int fadvise_sync(struct bench *b, struct slot *s)
{
	(void)s;
	return -posix_fadvise(b->fd, 0, FADV_SIZE, POSIX_FADV_DONTNEED);
}

/* renameat: one a/b pair per slot, renamed back and forth */

static void rename_setup(struct bench *b, struct slot *s, unsigned int i)
{
	make_name(b, s->name[0], "ren.%u.a", i);
	make_name(b, s->name[1], "ren.%u.b", i);
	close(create_file(b, s->name[0], 0));
	s->cur = 0;
}

static void rename_prep(struct bench *b, struct slot *s,
			struct io_uring_sqe *sqe)
{
	io_uring_prep_renameat(sqe, b->dfd, s->name[s->cur], b->dfd,
			       s->name[!s->cur], 0);
}

static int rename_sync(struct bench *b, struct slot *s)
{
	return renameat(b->dfd, s->name[s->cur], b->dfd, s->name[!s->cur]) ?
		-errno : 0;
}

static void rename_done(struct bench *b, struct slot *s, int res)
{
	check_res(b, res, 0);
	s->cur = !s->cur;
}

static void rename_cleanup(struct bench *b, struct slot *s)
{
	unlink_name(b, s->name[s->cur]);
}

/* openat: an O_TMPFILE in dir, closed again once reaped */

static void openat_prep(struct bench *b, struct slot *s,
			struct io_uring_sqe *sqe)
{
	(void)s;
	io_uring_prep_openat(sqe, b->dfd, ".", O_TMPFILE | O_RDWR, 0600);
}

static int openat_sync(struct bench *b, struct slot *s)
{
	int fd;

	(void)s;
	fd = openat(b->dfd, ".", O_TMPFILE | O_RDWR, 0600);
	return fd < 0 ? -errno : fd;
}

static void openat_done(struct bench *b, struct slot *s, int res)
{
	(void)s;
	if (res < 0)
		check_res(b, res, 0);
	if (close(res))
		die("openat: close: %s", strerror(errno));
}

/* splice: the shared 4 KiB file into this slot's pipe, then drained */

static void splice_setup(struct bench *b, struct slot *s, unsigned int i)
{
	(void)b;
	(void)i;
	if (pipe2(s->pipe, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
}

static void splice_prep(struct bench *b, struct slot *s,
			struct io_uring_sqe *sqe)
{
	io_uring_prep_splice(sqe, b->fd, 0, s->pipe[1], -1, IO_SIZE, 0);
}

static int splice_sync(struct bench *b, struct slot *s)
{
	loff_t off = 0;
	ssize_t ret;

	ret = splice(b->fd, &off, s->pipe[1], NULL, IO_SIZE, 0);
	return ret < 0 ? -errno : (int)ret;
}

static void splice_done(struct bench *b, struct slot *s, int res)
{
	ssize_t ret;
	int left;

	check_res(b, res, IO_SIZE);
	for (left = res; left > 0; left -= ret) {
		ret = read(s->pipe[0], b->buf, left);
		if (ret <= 0)
			die("splice: draining the pipe: %s",
			    ret ? strerror(errno) : "EOF");
	}
}

static void splice_cleanup(struct bench *b, struct slot *s)
{
	(void)b;
	close(s->pipe[0]);
	close(s->pipe[1]);
}

static void take_sample(struct sample *s);
static bool expired(const struct bench *b, const struct sample *start);
static double ts_diff(const struct timespec *a, const struct timespec *b);
static unsigned int iowq_workers(void);

/* unlinkat: UNLINK_FILES files made before the measurement, unlinked in it */

static void unlink_populate(struct bench *b)
{
	char name[NAME_LEN];
	unsigned int i;

	for (i = 0; i < b->op->items; i++) {
		make_name(b, name, "rm.%u", i);
		create_unsynced(b, name, 0);
	}
	if (syncfs(b->dfd))
		die("syncfs %s: %s", b->dir, strerror(errno));
}

/* the files the measurement did not get to, after an error */
static void unlink_depopulate(struct bench *b)
{
	char name[NAME_LEN];

	for (; b->next < b->op->items; b->next++) {
		make_name(b, name, "rm.%u", b->next);
		unlink_name(b, name);
	}
}

static void unlink_before(struct bench *b, struct slot *s)
{
	make_name(b, s->name[0], "rm.%u", b->next++);
}

static void unlink_prep(struct bench *b, struct slot *s,
			struct io_uring_sqe *sqe)
{
	io_uring_prep_unlinkat(sqe, b->dfd, s->name[0], 0);
}

static int unlink_sync(struct bench *b, struct slot *s)
{
	return unlinkat(b->dfd, s->name[0], 0) ? -errno : 0;
}

/* treewalk: a directory of TREE_FILES files per thread, walked over and over */

struct walker {
	struct bench *b;
	pthread_t thread;
	unsigned int t;
	int dfd;
	unsigned int next;		/* its next file */
	unsigned long long sqes;	/* completed */
	struct statx *stx;		/* one per chain */
	char (*names)[NAME_LEN];	/* one per chain, read at submit */
	char (*bufs)[IO_SIZE];		/* walkread: one per chain */
	bool reads;			/* walkread, tree_reads() */
	struct sample *start;
};

static pthread_barrier_t tree_done, tree_sampled;

/* walkread rather than treewalk */
static bool tree_reads(struct bench *b)
{
	return !strcmp(b->op->name, "walkread");
}

static void tree_populate(struct bench *b)
{
	char name[NAME_LEN + 8], dir[NAME_LEN];
	unsigned int t, i;

	for (t = 0; t < TREE_THREADS; t++) {
		make_name(b, dir, "tree.%u", t);
		if (mkdirat(b->dfd, dir, 0700))
			die("mkdir %s/%s: %s", b->dir, dir, strerror(errno));
		for (i = 0; i < TREE_FILES; i++) {
			snprintf(name, sizeof(name), "%s/f.%u", dir, i);
			create_unsynced(b, name, tree_reads(b) ? IO_SIZE : 0);
		}
	}
	if (syncfs(b->dfd))
		die("syncfs %s: %s", b->dir, strerror(errno));
}

static void tree_depopulate(struct bench *b)
{
	char name[NAME_LEN + 8], dir[NAME_LEN];
	unsigned int t, i;

	for (t = 0; t < TREE_THREADS; t++) {
		make_name(b, dir, "tree.%u", t);
		for (i = 0; i < TREE_FILES; i++) {
			snprintf(name, sizeof(name), "%s/f.%u", dir, i);
			unlinkat(b->dfd, name, 0);
		}
		unlinkat(b->dfd, dir, AT_REMOVEDIR);
	}
}

static void tree_check(int res, const char *what)
{
	if (res < 0)
		die("treewalk: %s: %s", what, strerror(-res));
}

/* a walkread read's result: the whole file, the pattern */
static void tree_check_read(struct walker *w, int res, const char *buf)
{
	tree_check(res, "read");
	if (res != IO_SIZE || memcmp(buf, w->b->buf, IO_SIZE))
		die("walkread: read %d bytes, not the file's %d of the pattern",
		    res, IO_SIZE);
}

static void tree_sync(struct walker *w)
{
	char name[NAME_LEN];
	ssize_t got;
	int fd;

	while (!expired(w->b, w->start)) {
		snprintf(name, sizeof(name), "f.%u", w->next++ % TREE_FILES);
		if (!w->reads)
			tree_check(statx(w->dfd, name, 0, STATX_BASIC_STATS,
					 w->stx) ? -errno : 0, "statx");
		fd = openat(w->dfd, name, O_RDONLY | O_CLOEXEC);
		tree_check(fd < 0 ? -errno : 0, "openat");
		if (w->reads) {
			got = pread(fd, w->bufs[0], IO_SIZE, 0);
			tree_check_read(w, got < 0 ? -errno : (int)got, w->bufs[0]);
		}
		tree_check(close(fd) ? -errno : 0, "close");
		w->sqes += 3;
	}
}

/*
 * statx -> openat into fixed slot @i -> close of slot @i, linked; walkread:
 * openat into slot @i -> read of slot @i -> close of slot @i
 */
static void tree_chain(struct walker *w, struct io_uring *ring, unsigned int i)
{
	struct io_uring_sqe *sqe[3];
	char *name = w->names[i];
	int k;

	for (k = 0; k < 3; k++) {
		sqe[k] = io_uring_get_sqe(ring);
		if (!sqe[k])
			die("treewalk: SQ ring full");
	}
	snprintf(name, NAME_LEN, "f.%u", w->next++ % TREE_FILES);
	if (w->reads) {
		io_uring_prep_openat_direct(sqe[0], w->dfd, name, O_RDONLY, 0, i);
		io_uring_prep_read(sqe[1], i, w->bufs[i], IO_SIZE, 0);
		sqe[1]->flags |= IOSQE_FIXED_FILE;
	} else {
		io_uring_prep_statx(sqe[0], w->dfd, name, 0,
				    STATX_BASIC_STATS, &w->stx[i]);
		io_uring_prep_openat_direct(sqe[1], w->dfd, name, O_RDONLY, 0, i);
	}
	io_uring_prep_close_direct(sqe[2], i);
	for (k = 0; k < 3; k++) {
		io_uring_sqe_set_data64(sqe[k], i * 3 + k);
		if (k < 2)
			sqe[k]->flags |= IOSQE_IO_LINK;
	}
}

static void tree_ring(struct walker *w)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN,
	};
	static const char *const steps[2][3] = {
		{ "statx", "openat", "close" },
		{ "openat", "read", "close" },
	};
	struct io_uring_cqe *cqe;
	unsigned int i, head, n, inflight = 0, qd = w->b->qd;
	struct io_uring ring;
	bool stop = false;
	int ret;

	ret = io_uring_queue_init_params(4 * qd < 8 ? 8 : 4 * qd, &ring, &p);
	if (ret)
		die("treewalk: io_uring_queue_init: %s", strerror(-ret));
	ret = io_uring_register_files_sparse(&ring, qd);
	if (ret)
		die("treewalk: register_files: %s", strerror(-ret));
	for (i = 0; i < qd; i++, inflight++)
		tree_chain(w, &ring, i);
	while (inflight) {
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			die("treewalk: submit_and_wait: %s", strerror(-ret));
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned long long ud = cqe->user_data;

			if (w->reads && ud % 3 == 1)
				tree_check_read(w, cqe->res, w->bufs[ud / 3]);
			else
				tree_check(cqe->res, steps[w->reads][ud % 3]);
			n++;
			w->sqes++;
			if (ud % 3 != 2)
				continue;
			if (stop)
				inflight--;
			else
				tree_chain(w, &ring, ud / 3);
		}
		io_uring_cq_advance(&ring, n);
		if (!stop && expired(w->b, w->start))
			stop = true;
	}
	pthread_barrier_wait(&tree_done);
	pthread_barrier_wait(&tree_sampled);
	io_uring_queue_exit(&ring);
}

static void *tree_walker(void *arg)
{
	struct walker *w = arg;

	if (w->b->sync) {
		tree_sync(w);
		pthread_barrier_wait(&tree_done);
		pthread_barrier_wait(&tree_sampled);
	} else {
		tree_ring(w);
	}
	return NULL;
}

static unsigned long long tree_run(struct bench *b, struct sample *start,
				   struct sample *end)
{
	struct walker w[TREE_THREADS] = {};
	unsigned long long sqes = 0;
	char dir[NAME_LEN];
	unsigned int t;

	if (pthread_barrier_init(&tree_done, NULL, TREE_THREADS + 1) ||
	    pthread_barrier_init(&tree_sampled, NULL, TREE_THREADS + 1))
		die("pthread_barrier_init failed");
	take_sample(start);
	for (t = 0; t < TREE_THREADS; t++) {
		make_name(b, dir, "tree.%u", t);
		w[t].b = b;
		w[t].t = t;
		w[t].start = start;
		w[t].reads = tree_reads(b);
		w[t].dfd = openat(b->dfd, dir, O_RDONLY | O_DIRECTORY |
				  O_CLOEXEC);
		w[t].stx = calloc(b->qd, sizeof(*w[t].stx));
		w[t].names = calloc(b->qd, sizeof(*w[t].names));
		w[t].bufs = calloc(b->qd, sizeof(*w[t].bufs));
		if (w[t].dfd < 0 || !w[t].stx || !w[t].names || !w[t].bufs)
			die("treewalk: %s: %s", dir, strerror(errno));
		if (pthread_create(&w[t].thread, NULL, tree_walker, &w[t]))
			die("pthread_create failed");
	}
	pthread_barrier_wait(&tree_done);
	take_sample(end);
	b->workers = iowq_workers();
	pthread_barrier_wait(&tree_sampled);
	for (t = 0; t < TREE_THREADS; t++) {
		pthread_join(w[t].thread, NULL);
		sqes += w[t].sqes;
		close(w[t].dfd);
		free(w[t].stx);
		free(w[t].names);
		free(w[t].bufs);
	}
	return sqes;
}

/* nop: io_uring's cost per request, and a syscall's */

static void nop_prep(struct bench *b, struct slot *s, struct io_uring_sqe *sqe)
{
	(void)b;
	(void)s;
	io_uring_prep_nop(sqe);
}

static int nop_sync(struct bench *b, struct slot *s)
{
	(void)b;
	(void)s;
	getppid();
	return 0;
}

static void done_zero(struct bench *b, struct slot *s, int res)
{
	(void)s;
	check_res(b, res, 0);
}

/* cost: the punted op's overhead, apart from io_uring's floor */

enum {
	COST_URING, COST_SYNC, COST_NOP, COST_GETPPID, COST_FADV,
	COST_SYNC_FADV, COST_LOOPS
};

static const char * const cost_names[COST_LOOPS] = {
	"uring_ns", "sync_ns", "nop_ns", "getppid_ns", "fadv_ns",
	"sync_fadv_ns",
};

static double cost_ns[COST_LOOPS];

/* one request of @loop's at a time through @ring, @n times; result 0 */
static void cost_ring(struct bench *b, struct io_uring *ring, int loop,
		      unsigned int n)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	while (n--) {
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			die("cost: SQ ring full");
		if (loop == COST_NOP)
			io_uring_prep_nop(sqe);
		else if (loop == COST_FADV)
			io_uring_prep_fadvise(sqe, b->fd, 0, IO_SIZE,
					      POSIX_FADV_NORMAL);
		else
			io_uring_prep_fsync(sqe, b->fd, 0);
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret != 1)
			die("cost: submit_and_wait: %d", ret);
		if (io_uring_peek_cqe(ring, &cqe))
			die("cost: no CQE");
		check_res(b, cqe->res, 0);
		io_uring_cqe_seen(ring, cqe);
	}
}

static void cost_loop(struct bench *b, struct io_uring *ring, int loop)
{
	unsigned int n = COST_BLOCK;

	switch (loop) {
	case COST_SYNC:
		while (n--)
			check_res(b, fsync(b->fd) ? -errno : 0, 0);
		break;
	case COST_GETPPID:
		while (n--)
			getppid();
		break;
	case COST_SYNC_FADV:
		while (n--)
			check_res(b, -posix_fadvise(b->fd, 0, IO_SIZE,
						    POSIX_FADV_NORMAL), 0);
		break;
	default:
		cost_ring(b, ring, loop, n);
	}
}

static unsigned long long cost_run(struct bench *b, struct sample *start,
				   struct sample *end)
{
	unsigned long long blocks = 0;
	struct timespec t0, t1;
	struct io_uring ring;
	int loop, ret;

	if (b->sync || b->qd != 1)
		die("cost: io_uring mode at qd 1 only");
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		die("io_uring_queue_init: %s", strerror(-ret));
	take_sample(start);
	do {
		for (loop = 0; loop < COST_LOOPS; loop++) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			cost_loop(b, &ring, loop);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			cost_ns[loop] += ts_diff(&t0, &t1) * 1e9;
		}
		blocks++;
	} while (!expired(b, start));
	take_sample(end);
	b->workers = iowq_workers();
	io_uring_queue_exit(&ring);
	for (loop = 0; loop < COST_LOOPS; loop++)
		cost_ns[loop] /= blocks * COST_BLOCK;
	return blocks * COST_BLOCK;
}

static const struct bench_op bench_ops[] = {
	{
		.name = "fsync",
		.setup = fsync_setup,
		.before = fsync_before,
		.prep = fsync_prep,
		.sync = fsync_sync,
		.done = done_zero,
		.cleanup = fsync_cleanup,
	}, {
		.name = "statx",
		.file_size = IO_SIZE,
		.prep = statx_prep,
		.sync = statx_sync,
		.done = statx_done,
	}, {
		.name = "fadvise",
		.file_size = FADV_SIZE,
		.prep = fadvise_prep,
		.sync = fadvise_sync,
		.done = done_zero,
	}, {
		.name = "renameat",
		.setup = rename_setup,
		.prep = rename_prep,
		.sync = rename_sync,
		.done = rename_done,
		.cleanup = rename_cleanup,
	}, {
		.name = "openat",
		.prep = openat_prep,
		.sync = openat_sync,
		.done = openat_done,
	}, {
		.name = "splice",
		.file_size = IO_SIZE,
		.setup = splice_setup,
		.prep = splice_prep,
		.sync = splice_sync,
		.done = splice_done,
		.cleanup = splice_cleanup,
	}, {
		.name = "unlinkat",
		.items = UNLINK_FILES,
		.populate = unlink_populate,
		.depopulate = unlink_depopulate,
		.before = unlink_before,
		.prep = unlink_prep,
		.sync = unlink_sync,
		.done = done_zero,
	}, {
		.name = "treewalk",
		.populate = tree_populate,
		.depopulate = tree_depopulate,
		.run = tree_run,
	}, {
		.name = "walkread",
		.populate = tree_populate,
		.depopulate = tree_depopulate,
		.run = tree_run,
	}, {
		.name = "nop",
		.prep = nop_prep,
		.sync = nop_sync,
		.done = done_zero,
	}, {
		.name = "cost",
		.file_size = IO_SIZE,
		.run = cost_run,
	},
};

static const struct bench_op *find_op(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bench_ops); i++)
		if (!strcmp(bench_ops[i].name, name))
			return &bench_ops[i];
	return NULL;
}

static void bench_cleanup(void)
{
	struct bench *b = &bench;
	unsigned int i;

	for (i = 0; i < b->nslots; i++)
		if (b->op->cleanup)
			b->op->cleanup(b, &b->slots[i]);
	if (b->op->depopulate)
		b->op->depopulate(b);
	if (b->fd >= 0)
		close(b->fd);
	if (b->dfd >= 0)
		unlink_name(b, b->name);
}

static void bench_setup(struct bench *b)
{
	unsigned int i, n = b->sync ? 1 : b->qd;

	memset(b->buf, 0xa5, sizeof(b->buf));
	snprintf(b->prefix, sizeof(b->prefix), "iouh-bench.%d.", (int)getpid());
	b->dfd = open(b->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->dfd < 0)
		die("%s: %s", b->dir, strerror(errno));
	b->slots = calloc(n, sizeof(*b->slots));
	if (!b->slots)
		die("out of memory");
	atexit(bench_cleanup);
	if (b->op->file_size) {
		snprintf(b->name, sizeof(b->name), "%s%s", b->prefix,
			 b->op->name);
		b->fd = create_file(b, b->name, b->op->file_size);
	}
	for (i = 0; i < n; i++) {
		if (b->op->setup)
			b->op->setup(b, &b->slots[i], i);
		b->nslots = i + 1;
	}
	if (b->op->populate)
		b->op->populate(b);
}

static void take_sample(struct sample *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->ts);
	if (getrusage(RUSAGE_SELF, &s->ru))
		die("getrusage: %s", strerror(errno));
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static double tv_sec(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

static bool expired(const struct bench *b, const struct sample *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ts_diff(&start->ts, &now) >= b->secs;
}

/* may one more request go? Until S seconds passed, or the items ran out */
static bool more(const struct bench *b, const struct sample *start)
{
	if (b->op->items)
		return b->next < b->op->items;
	return !expired(b, start);
}

static void lat_add(struct bench *b, const struct timespec *queued)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (b->nlat == b->lat_size) {
		b->lat_size = b->lat_size ? 2 * b->lat_size : 65536;
		b->lat = realloc(b->lat, b->lat_size * sizeof(*b->lat));
		if (!b->lat)
			die("out of memory");
	}
	b->lat[b->nlat++] = (now.tv_sec - queued->tv_sec) * 1000000000ULL +
			    now.tv_nsec - queued->tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* the @pct percentile of the latencies in us; they must be sorted */
static double lat_pct(const struct bench *b, unsigned int pct)
{
	return b->nlat ? b->lat[(b->nlat - 1) * pct / 100] / 1e3 : 0;
}

static void ring_queue(struct bench *b, struct io_uring *ring, unsigned int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("SQ ring full");
	if (b->op->before)
		b->op->before(b, &b->slots[i]);
	b->op->prep(b, &b->slots[i], sqe);
	io_uring_sqe_set_data64(sqe, i);
	clock_gettime(CLOCK_MONOTONIC, &b->slots[i].queued);
	b->inflight++;
}

/*
 * reap every available CQE, requeue a request for each unless stopping or
 * out of items
 */
static unsigned int ring_reap(struct bench *b, struct io_uring *ring,
			      bool stop)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;
	__u64 i;

	io_uring_for_each_cqe(ring, head, cqe) {
		i = io_uring_cqe_get_data64(cqe);
		if (i >= b->qd)
			die("bogus user_data %llu", (unsigned long long)i);
		lat_add(b, &b->slots[i].queued);
		b->inflight--;
		b->op->done(b, &b->slots[i], cqe->res);
		if (!stop && (!b->op->items || b->next < b->op->items))
			ring_queue(b, ring, i);
		n++;
	}
	io_uring_cq_advance(ring, n);
	return n;
}

/* this process's io-wq threads: /proc/self/task/<tid>/comm is iou-wrk-<pid> */
static unsigned int iowq_workers(void)
{
	unsigned int n = 0;
	struct dirent *de;
	char path[300], comm[32];
	DIR *d;
	FILE *f;

	d = opendir("/proc/self/task");
	if (!d)
		die("opendir /proc/self/task: %s", strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* a worker that just exited */
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "iou-wrk-", 8))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static unsigned long long run_ring(struct bench *b, struct sample *start,
				   struct sample *end)
{
	unsigned int i, entries = b->qd * 2;
	unsigned long long ops = 0;
	struct io_uring ring;
	bool stop = false;
	int ret;

	ret = io_uring_queue_init(entries < 8 ? 8 : entries, &ring, 0);
	if (ret)
		die("io_uring_queue_init: %s", strerror(-ret));
	take_sample(start);
	for (i = 0; i < b->qd && more(b, start); i++)
		ring_queue(b, &ring, i);
	while (b->inflight) {
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR)
			die("io_uring_submit_and_wait: %s", strerror(-ret));
		ops += ring_reap(b, &ring, stop);
		if (!stop && !more(b, start))
			stop = true;
	}
	take_sample(end);
	b->workers = iowq_workers();
	io_uring_queue_exit(&ring);
	return ops;
}

static unsigned long long run_sync(struct bench *b, struct sample *start,
				   struct sample *end)
{
	unsigned long long ops = 0;
	struct slot *s = &b->slots[0];

	take_sample(start);
	while (more(b, start)) {
		if (b->op->before)
			b->op->before(b, s);
		b->op->done(b, s, b->op->sync(b, s));
		ops++;
	}
	take_sample(end);
	return ops;
}

static const char *fs_label(const struct bench *b)
{
	static char buf[256];
	size_t len;
	char *p;

	if (b->label)
		return b->label;
	snprintf(buf, sizeof(buf), "%s", b->dir);
	for (len = strlen(buf); len > 1 && buf[len - 1] == '/'; len--)
		buf[len - 1] = '\0';
	p = strrchr(buf, '/');
	return p && p[1] ? p + 1 : buf;
}

static int report_cost(void)
{
	double over;
	int loop;

	for (loop = 0; loop < COST_LOOPS; loop++)
		if (printf(" %s=%.0f", cost_names[loop], cost_ns[loop]) < 0)
			return -1;
	over = cost_ns[COST_URING] - cost_ns[COST_SYNC];
	return printf(" cost_ns=%.0f file_cost_ns=%.0f",
		      over - (cost_ns[COST_NOP] - cost_ns[COST_GETPPID]),
		      over - (cost_ns[COST_FADV] - cost_ns[COST_SYNC_FADV]));
}

static void report(struct bench *b, unsigned long long ops,
		   const struct sample *start, const struct sample *end)
{
	double wall = ts_diff(&start->ts, &end->ts);
	double cpu = tv_sec(&end->ru.ru_utime) - tv_sec(&start->ru.ru_utime) +
		     tv_sec(&end->ru.ru_stime) - tv_sec(&start->ru.ru_stime);

	if (wall <= 0)
		die("no time elapsed");
	qsort(b->lat, b->nlat, sizeof(*b->lat), cmp_ull);
	if (printf("op=%s fs=%s qd=%u mode=%s ops=%.1f cpu=%.1f workers=%u n=%llu",
		   b->op->name, fs_label(b), b->qd,
		   b->sync ? "sync" : "io_uring", ops / wall,
		   100.0 * cpu / wall, b->workers, ops) < 0 ||
	    (b->nlat && printf(" p50=%.1f p99=%.1f", lat_pct(b, 50),
				lat_pct(b, 99)) < 0) ||
	    (b->op->run == cost_run && report_cost() < 0) ||
	    printf("\n") < 0 || fflush(stdout))
		die("writing stdout: %s", strerror(errno));
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: iouh-bench --op OP --dir DIR --qd N --secs S [--sync]\n"
		"                  [--label FS]\n"
		"  OP: fsync statx fadvise renameat openat splice unlinkat treewalk walkread nop\n"
		"      cost\n");
	exit(1);
}

static unsigned int parse_qd(const char *arg)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > MAX_QD)
		die("bad qd %s, must be 1..%d", arg, MAX_QD);
	return v;
}

static void parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "op",		required_argument,	NULL, 'o' },
		{ "dir",	required_argument,	NULL, 'd' },
		{ "qd",		required_argument,	NULL, 'q' },
		{ "secs",	required_argument,	NULL, 's' },
		{ "sync",	no_argument,		NULL, 'S' },
		{ "label",	required_argument,	NULL, 'l' },
		{ "fs-label",	required_argument,	NULL, 'l' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	b->qd = 1;
	b->secs = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			b->op = find_op(optarg);
			if (!b->op)
				die("unknown op %s", optarg);
			break;
		case 'd':
			b->dir = optarg;
			break;
		case 'q':
			b->qd = parse_qd(optarg);
			break;
		case 's':
			b->secs = strtod(optarg, &end);
			if (end == optarg || *end || !(b->secs > 0))
				die("bad secs: %s", optarg);
			break;
		case 'S':
			b->sync = true;
			break;
		case 'l':
			b->label = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !b->op || !b->dir || !b->secs)
		usage();
	if (b->label && (!*b->label || strpbrk(b->label, " \t\n=")))
		die("bad label: '%s'", b->label);
}

int main(int argc, char **argv)
{
	struct bench *b = &bench;
	struct sample start, end;
	unsigned long long ops;

	parse_args(b, argc, argv);
	bench_setup(b);
	if (b->op->run)
		ops = b->op->run(b, &start, &end);
	else if (b->sync)
		ops = run_sync(b, &start, &end);
	else
		ops = run_ring(b, &start, &end);
	report(b, ops, &start, &end);
	return 0;
}
