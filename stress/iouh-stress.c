// SPDX-License-Identifier: GPL-2.0
/*
 * iouh-stress: a randomized, time-bounded stress run of io_uring's
 * force-async blockable opcodes. With io_uring_handoff loaded, these are
 * issued inline and hand the submitter's identity to an io-wq worker when
 * they block; an application must never see a difference from stock
 * io_uring. Every check here holds on stock io_uring by definition.
 *
 * Usage: iouh-stress --dir-ext4 D --dir-tmpfs T --secs N [--threads N]
 *                    [--seed S] [--slow F]
 *        iouh-stress --dir-ext4 D --dir-tmpfs T --replay N [--seed S]
 * --slow F multiplies every time limit (not the delays) by F, for a kernel
 * that is slow on purpose (KASAN, lockdep): a limit checks liveness, not
 * speed.
 * (the directories default to $IOUH_EXT4 and $IOUH_TMPFS)
 *
 * Design, all bounded in time and count:
 * - W worker threads (default 6), each with a ring (QD 32) of its own,
 *   plain for even worker indexes, SINGLE_ISSUER | DEFER_TASKRUN |
 *   TASKRUN_FLAG for odd ones, made warm (an IOSQE_ASYNC NOP, then its
 *   "iou-wrk-<tid>" idles).
 *   Workers 2k and 2k+1 (k < 2) also share ring k, under a mutex around
 *   SQE preparation, submit and reaping; a batch goes to the shared ring
 *   one time in three. A batch is 1-8 SQEs of items from a weighted mix
 *   (some items are two SQEs), submitted with io_uring_submit() or
 *   io_uring_submit_and_wait(1) and reaped with bounded waits
 *   (io_uring_wait_cqe_timeout). Every SQE has a unique user_data
 *   ((owner index + 1) << 32 | counter) and an entry in the
 *   ring's table with the result computed when it was prepared; whoever
 *   reaps a CQE checks it against that entry, so a wrong result, a
 *   missing CQE (none within 20 s), a duplicate or an unknown one is
 *   reported.
 * - Items: NOP; fsync of dirty data on ext4 (really blocks) or tmpfs;
 *   statx of an existing file (size, inode) and of a missing one
 *   (-ENOENT); openat O_TMPFILE (an fd, closed); mkdirat linked to
 *   unlinkat AT_REMOVEDIR; renameat between two names; fallocate 64 KiB;
 *   ftruncate; fadvise DONTNEED; a buffered 4 KiB write; fsetxattr/fgetxattr
 *   user.* on ext4;
 *   openat O_RDONLY|O_CREAT of a FIFO whose writer a helper opens after
 *   0-50 ms (the fd must be of that FIFO); a NOP linked to an fsync; an
 *   ASYNC_CANCEL of a FIFO open just submitted (cancel 0, -EALREADY or
 *   -ENOENT; the open the FIFO fd, -ECANCELED, -EINTR or -ERESTARTSYS;
 *   cancel 0 implies -ECANCELED; -ENOENT or -EALREADY if the open was
 *   reaped before the cancel was made). Expectations that depend on the
 *   file system (O_TMPFILE, user xattrs) come from the synchronous
 *   syscalls at startup. CQE flags must be 0. Every fd a CQE returns is
 *   checked (the FIFO's inode, an unlinked regular file) and closed; the
 *   process has as many fds open at the end as at the start.
 * - FIFO writers: one releaser thread per process opens each armed FIFO
 *   O_WRONLY|O_NONBLOCK once due (retrying ENXIO until a deadline), and
 *   holds the write end until the reader's CQE is reaped, so no reader is
 *   ever left waiting for a writer that came and went.
 * - A signaller thread tgkill()s SIGUSR1 (SA_RESTART handler counting per
 *   thread, and checking gettid()) to a random worker every 1-20 ms, only
 *   once the previous one to that worker was handled (SIGUSR1 does not
 *   queue); sent and handled counts must match at the end, a signal must
 *   be handled within 10 s.
 * - A setxid thread calls setegid(getegid()) every 50-200 ms, which glibc
 *   broadcasts to every thread with SIGSETXID; each call within 2 s.
 * - Children, forked by whichever worker finds a global timer due, reaped
 *   by that worker with waitpid(WNOHANG) polls:
 *   fork (every 0.5-2 s): 20 random ops on a ring of its own, exit 0, in
 *   10 s; exec (every 1-3 s): a few ops, then (one time in two with a FIFO
 *   open and an fsync still in flight) execve("/bin/true"), exit 0 in
 *   10 s; kill (every 2-5 s): 3 warm threads running the op loop until
 *   SIGKILL after 50-500 ms, reaped within 10 s, killed by SIGKILL.
 *   A child runs a self-contained function at once: it resets the process
 *   state (no lock of the parent's is used), sets PDEATHSIG, starts its
 *   own releaser and makes its own rings; its files are removed after it
 *   is reaped.
 * - Ring close (every 1-3 s): a worker tears its own ring down with a
 *   FIFO open (and maybe an fsync) in flight, the writer released 100 ms
 *   later, then makes a new ring and warms it. Those requests are not
 *   reaped; a FIFO fd that completes after the ring is gone is closed.
 * - main() is the watchdog: a worker without progress for 30 s, a setxid
 *   call stuck for 30 s or the run past secs + 60 s print what they know
 *   (/proc/self/task/<tid>/stat, wchan) and exit 1.
 * - At the end: stop, drain, join, every table empty, signal counts, and
 *   one summary line "stress: ops=... cqes=... errors=... children=...
 *   seed=...". Exit 0 if everything checked out, else 1 with the first
 *   problems on stderr.
 *
 * --replay N, the differential mode: the same items, seeded and replayed
 * so that two runs print the same lines unless something an application
 * sees differs (scripts/guest-run.sh runs it with enabled=0 and enabled=1,
 * as the tests/diff scenarios). No other threads but the FIFO releaser, no
 * signals, children or ring closes; the main thread, the group leader, runs
 * N batches on a plain ring, then N on a SINGLE_ISSUER | DEFER_TASKRUN one,
 * without the cancel item (whether a cancel finds its open is timing). Each
 * batch waits until the last one's FIFO writers are done, so the same
 * FIFO slots are free. Once warm, the thread sets state a worker doesn't
 * share (comm, a blocked signal, one CPU, nice, timer slack). Printed on
 * stdout: after each batch that state; after each ring each SQE's op, file
 * system and result in user_data order (an fd as "fd") and the names and
 * types of the ring's files; at the end the thread's comm, nice, timer
 * slack, and signal, capability, seccomp and affinity state from
 * /proc/thread-self/status. Results are checked as in a stress run, and
 * the summary goes to stderr.
 *
 * Files are named <dir>/stress.<pid>.<tid>.* and removed at exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <liburing.h>
#include "helpers.h"

#define MAX_WORKERS	32
#define NR_SHARED	2
#define MAX_OWNERS	MAX_WORKERS
#define QD		32
/* the own rings of odd-indexed threads: the rings liburing recommends */
#define OWN_RING_ODD_FLAGS	(IORING_SETUP_SINGLE_ISSUER | \
				 IORING_SETUP_DEFER_TASKRUN | \
				 IORING_SETUP_TASKRUN_FLAG)
#define TAB_SZ		64
#define BATCH_MAX	8
#define NFIFO_WORKER	16
#define NFIFO_CHILD	6
#define MAX_SLOTS	(MAX_WORKERS * NFIFO_WORKER + 64)
#define MAX_KIDS	6
#define PATH_SZ		512
/* <dir>/stress.<pid>.<tid>. fits with room for the names after it */
#define PFX_SZ		400
#define DIR_MAX		300
#define MAX_PRINT	8
#define DIRTY_MAX	(256 * 1024)
#define XATTR_NAME	"user.iouh_stress"
#define XATTR_PFX	"iouh-stress:"
#define XATTR_LEN	16
#define FIFO_DELAY_MAX	50
#define RCLOSE_DELAY_MS	100
#define RCLOSE_HOLD_MS	100
#define RCLOSE_GIVEUP_MS	(3000 * cfg.slow)
#define BATCH_DEADLINE_MS	(20000 * cfg.slow)
#define FIFO_GIVEUP_MS	(20000 * cfg.slow)
#define FIFO_HOLD_MAX_MS 30000
#define CHILD_REAP_MS	(10000 * cfg.slow)
#define CHILD_OPS	20
#define CHILD_GUARD_MS	(30000 * cfg.slow)
#define KILL_THREADS	3
#define PROGRESS_MS	(30000 * cfg.slow)
#define HARD_EXTRA_MS	(60000 * cfg.slow)
#define SETXID_MAX_MS	(2000 * cfg.slow)
#define SETXID_STUCK_MS	(30000 * cfg.slow)
#define SIG_PENDING_MAX_MS	(10000 * cfg.slow)
#define WARM_MS	(2000 * cfg.slow)
#define STACK_SZ	(1024 * 1024)

#define FS_EXT4		0
#define FS_TMPFS	1

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define ADD(x, v)	__atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

/* what an SQE is, for its check */
enum {
	OP_NOP, OP_FSYNC, OP_STATX, OP_STATX_MISSING, OP_TMPFILE, OP_MKDIR,
	OP_RMDIR, OP_RENAME, OP_FALLOCATE, OP_FTRUNCATE, OP_FADVISE,
	OP_SETXATTR, OP_GETXATTR, OP_FIFO, OP_FIFO_TARGET, OP_CANCEL,
	OP_LINK_NOP, OP_LINK_FSYNC, OP_WRITE, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"nop", "fsync", "statx", "statx-missing", "openat-tmpfile", "mkdirat",
	"unlinkat-rmdir", "renameat", "fallocate", "ftruncate", "fadvise",
	"fsetxattr", "fgetxattr", "openat-fifo", "openat-fifo-cancelled",
	"async-cancel", "link-nop", "link-fsync", "write",
};

/* what a batch is made of: stress_items[], the first of which is the NOP */
#define ITEM_NOP	0

/* a FIFO and its writer, see the releaser */
enum { FS_FREE, FS_ARMED, FS_HELD, FS_DONE, FS_DEAD };

struct fifo_slot {
	char path[PATH_SZ];
	dev_t dev;
	ino_t ino;
	int state;		/* FS_*, the owner and the releaser hand over */
	int reader_done;	/* the reader's CQE is in (or nobody waits) */
	int noreap;		/* ring close: nobody reaps the reader */
	long long due;		/* open the write end from then on */
	long long giveup;	/* stop trying to open it */
	long long hold_ms;	/* then hold it this long, 0: until reader_done */
	long long hold_until;
	int wfd;
};

struct wctx;

/* an SQE in flight and what its CQE must say */
struct req {
	int used;
	int op;
	int item;	/* stress_items[]: the check of its CQE */
	int fs;
	int exp;
	unsigned long long ud;
	struct wctx *c;
	long long t0;
	struct fifo_slot *fifo;
	unsigned long long pair;	/* cancel <-> its target */
	int pair_res;
	int pair_done;
	long long size;
	unsigned long long ino;
	struct statx stx;
	char xbuf[XATTR_LEN + 16];
	char path[PATH_SZ];
	char path2[PATH_SZ];
};

struct ringh {
	pthread_mutex_t lock;
	struct io_uring ring;
	unsigned int setup_flags;
	int live;
	int npending;
	char name[32];
	struct req tab[TAB_SZ];
};

enum { KID_FORK, KID_EXEC, KID_KILL };
static const char *const kid_name[] = { "fork", "exec", "kill" };

struct kid {
	pid_t pid;
	int kind;
	int killed;
	int overdue;
	long long t0;
	long long kill_at;
	long long deadline;
};

/* one op loop: a thread's files, FIFOs, rings and counters */
struct wctx {
	int idx;		/* owner in user_data, P.owners[idx] */
	int worker;		/* W[] index in the main process, else -1 */
	pid_t pid, tid;
	unsigned long long rng;
	char pfx[2][PFX_SZ];
	int fd[2];
	char stat_path[2][PATH_SZ];
	long long stat_size[2];
	unsigned long long stat_ino[2];
	char ren[2][2][PATH_SZ];
	int ren_cur[2];
	char missing[2][PATH_SZ];
	int nfifo;
	struct fifo_slot fifo[NFIFO_WORKER];
	struct ringh *own, *shared;
	unsigned int next;	/* user_data counter */
	int outstanding;	/* SQEs of ours without a CQE yet */
	unsigned int xgen;
	unsigned long long nops;
	int nkids;
	struct kid kids[MAX_KIDS];
};

/* per process, reset in every child */
static struct proc {
	pid_t pid;
	int parent;
	int stop;
	int fatal;
	unsigned long long errors;
	unsigned long long ops, cqes, children;
	struct wctx *owners[MAX_OWNERS];
	pthread_mutex_t slot_lock;
	struct fifo_slot *slots[MAX_SLOTS];
	int nslots;
	int rel_stop;
	int rel_started;
	pthread_t rel_th;
} P;

/* the worker threads of the main process */
static struct worker {
	pthread_t th;
	pid_t tid;
	int ready, quiesced, done;
	long long progress;
	int sig_sent, sig_recv;
	long long sig_last;
	int sig_late;
	struct wctx *c;
} W[MAX_WORKERS];

/* informational, main process only */
static struct stats {
	unsigned long long cancel[3][4];
	unsigned long long cancel_late[2];
	unsigned long long fifo_gaveup, rclose_gaveup, fifo_leaked, ring_closes;
	unsigned long long forks, execs, kills, exec_inflight;
	unsigned long long setxid_calls, setxid_max_ms, warm_slow;
	unsigned long long per_op[NR_OPS];
} S;

static struct {
	char dir[2][PATH_MAX];
	int secs;
	int nthreads;
	/* the time limits' factor, --slow */
	int slow;
	/* --replay: batches per ring of the differential mode, 0: a stress run */
	int replay;
	unsigned long long seed;
} cfg;

static const char *const fs_name[2] = { "ext4", "tmpfs" };
static int exp_tmpfile[2];	/* 1: an fd, else -errno */
static int exp_xattr;		/* fsetxattr: 0 or -errno */
static char dirty_buf[DIRTY_MAX];
static struct ringh *shared_ring[NR_SHARED];
static long long t_start, t_end, t_hard;
static long long next_fork, next_exec, next_kill, next_rclose;
static int sig_stop, sig_done, setxid_stop;
static int sig_wrong_tid, sig_stray;
static long long setxid_since;
/* problems found in children, shared: a SIGKILL ends the kill ones */
static unsigned long long *kid_errors;
static pid_t setxid_tid;
static __thread int my_idx = -1;

/* helpers */

static void sleep_us(long long us)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static unsigned long long mix64(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static unsigned long long rng_next(unsigned long long *s)
{
	unsigned long long x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static unsigned int rnd(unsigned long long *s, unsigned int n)
{
	return n ? rng_next(s) % n : 0;
}

static int rnd_range(unsigned long long *s, int lo, int hi)
{
	return lo + (int)rnd(s, hi - lo + 1);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

/* no stdio and no locks: children forked from threads use it too */
static void vmsg(const char *tag, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "stress[%d]: %s", P.pid, tag);
	if (n < 0 || n >= (int)sizeof(buf) - 2)
		return;
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	n = strlen(buf);
	buf[n++] = '\n';
	write_all(STDERR_FILENO, buf, n);
}

/* count a problem, print the first few: 1 if this one was printed */
__attribute__((format(printf, 1, 2)))
static int report(const char *fmt, ...)
{
	va_list ap;

	if (!P.parent && kid_errors)
		ADD(*kid_errors, 1);
	if (ADD(P.errors, 1) > MAX_PRINT)
		return 0;
	va_start(ap, fmt);
	vmsg("ERROR: ", fmt, ap);
	va_end(ap);
	return 1;
}

__attribute__((format(printf, 1, 2)))
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("note: ", fmt, ap);
	va_end(ap);
}

/* stop the run, it failed in a way that makes going on pointless */
static void fatal(void)
{
	STORE(P.fatal, 1);
	STORE(P.stop, 1);
}

static int stopping(void)
{
	return LOAD(P.stop);
}

/* remove <dir>/<prefix>* in both directories */
static void sweep(const char *prefix)
{
	size_t len = strlen(prefix);
	int fs, pass;

	for (fs = 0; fs < 2; fs++) {
		for (pass = 0; pass < 2; pass++) {
			struct dirent *de;
			DIR *d = opendir(cfg.dir[fs]);

			if (!d)
				break;
			while ((de = readdir(d))) {
				if (strncmp(de->d_name, prefix, len))
					continue;
				if (unlinkat(dirfd(d), de->d_name, 0) &&
				    errno == EISDIR)
					unlinkat(dirfd(d), de->d_name,
						 AT_REMOVEDIR);
			}
			closedir(d);
		}
	}
}

static void sweep_pid(pid_t pid)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "stress.%d.", pid);
	sweep(prefix);
}

/* FIFO writers */

static void slot_register(struct fifo_slot *f)
{
	pthread_mutex_lock(&P.slot_lock);
	if (P.nslots < MAX_SLOTS) {
		P.slots[P.nslots] = f;
		STORE(P.nslots, P.nslots + 1);
	} else {
		report("too many FIFO slots");
	}
	pthread_mutex_unlock(&P.slot_lock);
}

static void rel_step(struct fifo_slot *f, long long now)
{
	int st = LOAD(f->state), fd;

	if (st == FS_ARMED) {
		if (LOAD(f->reader_done)) {
			STORE(f->state, FS_DONE);
			return;
		}
		if (now < f->due)
			return;
		/* ENXIO until a reader waits in its open */
		fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			f->wfd = fd;
			f->hold_until = f->hold_ms ? now + f->hold_ms :
				f->due + FIFO_HOLD_MAX_MS;
			STORE(f->state, FS_HELD);
			return;
		}
		if (errno != ENXIO && errno != EINTR) {
			report("FIFO writer: open %s: %s", f->path,
			       strerror(errno));
			STORE(f->state, FS_DONE);
		} else if (now >= f->giveup) {
			if (P.parent)
				ADD(*(f->noreap ? &S.rclose_gaveup :
				      &S.fifo_gaveup), 1);
			STORE(f->state, FS_DONE);
		}
	} else if (st == FS_HELD) {
		if (LOAD(f->reader_done) || now >= f->hold_until) {
			close(f->wfd);
			f->wfd = -1;
			STORE(f->state, FS_DONE);
		}
	}
}

static void *releaser(void *arg)
{
	int i, n;

	(void)arg;
	while (!LOAD(P.rel_stop)) {
		long long now = t_now_ms();

		n = LOAD(P.nslots);
		for (i = 0; i < n; i++)
			rel_step(P.slots[i], now);
		sleep_us(1000);
	}
	n = LOAD(P.nslots);
	for (i = 0; i < n; i++) {
		struct fifo_slot *f = P.slots[i];

		if (LOAD(f->state) == FS_HELD) {
			close(f->wfd);
			STORE(f->state, FS_DONE);
		}
	}
	return NULL;
}

static int start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SZ);
	ret = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (ret)
		report("pthread_create: %s", strerror(ret));
	return ret;
}

static void releaser_start(void)
{
	STORE(P.rel_stop, 0);
	if (!start_thread(&P.rel_th, releaser, NULL))
		P.rel_started = 1;
}

static void releaser_stop(void)
{
	if (!P.rel_started)
		return;
	STORE(P.rel_stop, 1);
	pthread_join(P.rel_th, NULL);
	P.rel_started = 0;
}

/* close every fd of this process on FIFO @f: readers nobody reaped */
static int close_fifo_fds(struct fifo_slot *f)
{
	struct dirent *de;
	struct stat st;
	int n = 0, fd;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d) || fstat(fd, &st))
			continue;
		if (S_ISFIFO(st.st_mode) && st.st_ino == f->ino &&
		    st.st_dev == f->dev) {
			close(fd);
			n++;
		}
	}
	closedir(d);
	if (P.parent)
		ADD(S.fifo_leaked, n);
	return n;
}

/* a free FIFO of @c, or NULL */
static struct fifo_slot *fifo_get(struct wctx *c)
{
	int i;

	for (i = 0; i < c->nfifo; i++) {
		struct fifo_slot *f = &c->fifo[i];
		int st = LOAD(f->state);

		if (st == FS_DONE && (f->noreap || LOAD(f->reader_done))) {
			if (f->noreap)
				close_fifo_fds(f);
			STORE(f->state, FS_FREE);
			st = FS_FREE;
		}
		if (st == FS_FREE)
			return f;
	}
	return NULL;
}

/*
 * The writer opens @f after @delay ms and holds it until the reader's CQE
 * is in; @noreap (ring close): for RCLOSE_HOLD_MS, nobody reaps the reader.
 */
static void fifo_arm(struct fifo_slot *f, int delay, int noreap)
{
	long long now = t_now_ms();

	f->noreap = noreap;
	f->due = now + delay;
	f->giveup = f->due + (noreap ? RCLOSE_GIVEUP_MS : FIFO_GIVEUP_MS);
	f->hold_ms = noreap ? RCLOSE_HOLD_MS : 0;
	f->wfd = -1;
	STORE(f->reader_done, 0);
	STORE(f->state, FS_ARMED);
}

static int fifo_fd_ok(struct fifo_slot *f, int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISFIFO(st.st_mode) &&
	       st.st_ino == f->ino && st.st_dev == f->dev;
}

/* the table of a ring */

static struct req *find_req(struct ringh *rh, unsigned long long ud)
{
	int i;

	for (i = 0; i < TAB_SZ; i++)
		if (rh->tab[i].used && rh->tab[i].ud == ud)
			return &rh->tab[i];
	return NULL;
}

static void progress(struct wctx *c)
{
	if (c->worker >= 0)
		STORE(W[c->worker].progress, t_now_ms());
}

static int reap_avail(struct ringh *rh);

/* submit all that is queued; @wait: the first submit waits for a CQE */
static int submit_all(struct ringh *rh, int wait)
{
	int ret, tries = 0;

	while (io_uring_sq_ready(&rh->ring)) {
		if (wait)
			ret = io_uring_submit_and_wait(&rh->ring, 1);
		else
			ret = io_uring_submit(&rh->ring);
		if (ret > 0) {
			wait = 0;
			tries = 0;
			continue;
		}
		/* a signal before anything was consumed */
		if (ret == -EINTR)
			continue;
		if ((ret == -EAGAIN || ret == -EBUSY || !ret) &&
		    ++tries < 1000) {
			reap_avail(rh);
			sleep_us(1000);
			continue;
		}
		report("%s ring: submit: %d (%s), %u SQEs left", rh->name, ret,
		       strerror(-ret), io_uring_sq_ready(&rh->ring));
		fatal();
		return -1;
	}
	return 0;
}

static struct io_uring_sqe *sqe_get(struct ringh *rh)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&rh->ring);

	if (!sqe) {
		submit_all(rh, 0);
		sqe = io_uring_get_sqe(&rh->ring);
	}
	if (!sqe) {
		report("%s ring: no SQE", rh->name);
		fatal();
	}
	return sqe;
}

static struct req *req_new(struct wctx *c, struct ringh *rh, int op)
{
	struct req *r;
	int i;

	for (i = 0; i < TAB_SZ; i++) {
		r = &rh->tab[i];
		if (r->used)
			continue;
		memset(r, 0, sizeof(*r));
		r->used = 1;
		r->op = op;
		/* a NOP's check unless an item's prep says otherwise */
		r->item = ITEM_NOP;
		r->c = c;
		r->t0 = t_now_ms();
		r->ud = ((unsigned long long)(c->idx + 1) << 32) | c->next;
		STORE(c->next, c->next + 1);
		rh->npending++;
		ADD(c->outstanding, 1);
		ADD(P.ops, 1);
		c->nops++;
		if (P.parent)
			ADD(S.per_op[op], 1);
		return r;
	}
	report("%s ring: table full", rh->name);
	fatal();
	return NULL;
}

/*
 * An SQE and its table entry for @op; the caller preps the SQE and then
 * calls sqe_done(). NULL (and the run is over) if none.
 */
static struct io_uring_sqe *sqe_new(struct wctx *c, struct ringh *rh, int op,
				    struct req **rp)
{
	struct io_uring_sqe *sqe = sqe_get(rh);

	*rp = NULL;
	if (!sqe)
		return NULL;
	*rp = req_new(c, rh, op);
	if (!*rp) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, 0);
		return NULL;
	}
	return sqe;
}

static void sqe_done(struct io_uring_sqe *sqe, struct req *r,
		     unsigned int flags)
{
	io_uring_sqe_set_data64(sqe, r->ud);
	sqe->flags |= flags;
}

/* the check of a CQE against its entry */

static void bad_res(struct req *r, int res, const char *what)
{
	report("worker %d tid %d: %s (%s) ud %#llx: res %d (%s), expected %s%d",
	       r->c->idx, r->c->tid, op_name[r->op],
	       r->fs >= 0 ? fs_name[r->fs] : "-", r->ud, res,
	       res < 0 ? strerror(-res) : "ok", what ? what : "", r->exp);
}

static int cancel_class(int res)
{
	switch (res) {
	case 0:
		return 0;
	case -EALREADY:
		return 1;
	default:
		return 2;
	}
}

static int target_class(int res)
{
	if (res >= 0)
		return 0;
	switch (res) {
	case -ECANCELED:
		return 1;
	case -EINTR:
		return 2;
	default:
		return 3;
	}
}

static void pair_check(struct req *r, int cancel_res, int target_res)
{
	if (P.parent)
		ADD(S.cancel[cancel_class(cancel_res)][target_class(target_res)],
		    1);
	if (!cancel_res && target_res != -ECANCELED)
		report("worker %d tid %d: cancel of ud %#llx returned 0, but the open returned %d",
		       r->c->idx, r->c->tid, r->pair, target_res);
}

/* @r completed with @res: hand it to its partner, or check the pair */
static void pair_complete(struct ringh *rh, struct req *r, int res)
{
	struct req *o;
	int is_cancel = r->op == OP_CANCEL;

	if (!r->pair)
		return;
	if (r->pair_done) {
		if (is_cancel)
			pair_check(r, res, r->pair_res);
		else
			pair_check(r, r->pair_res, res);
		return;
	}
	o = find_req(rh, r->pair);
	if (o) {
		o->pair_res = res;
		o->pair_done = 1;
	} else {
		report("worker %d: %s ud %#llx: its pair %#llx is gone",
		       r->c->idx, op_name[r->op], r->ud, r->pair);
	}
}

/*
 * Items: what a batch is made of, one entry of stress_items[] each, with a
 * prep that queues its SQEs (one, or two for a pair) with their table
 * entries, and a check that the CQE of any of them goes through.
 */

/* what an item's prep goes on */
struct prep {
	struct wctx *c;
	struct ringh *rh;
	int item;	/* its stress_items[] index, its SQEs' check */
	int fs;		/* a random file system, drawn for every item */
	int pos;	/* in the batch: a name unique among what is in flight */
	int *renamed;	/* a renameat is in the batch already */
};

struct stress_item {
	const char *name;
	int weight;	/* in a batch's mix */
	int sqes;	/* 1, or 2: a pair of SQEs that go together */
	/* 0, or -1 if the item could not be had: a NOP stands in */
	int (*prep)(struct prep *p);
	/* a CQE of one of its SQEs against its entry, r->op says which */
	void (*check)(struct req *r, int res);
};

static void dirty(struct wctx *c, int fs)
{
	size_t len = 4096 * rnd_range(&c->rng, 1, DIRTY_MAX / 4096);
	off_t off = 4096 * rnd(&c->rng, 128);

	if (pwrite(c->fd[fs], dirty_buf, len, off) != (ssize_t)len)
		report("worker %d: pwrite %s data: %s", c->idx, fs_name[fs],
		       strerror(errno));
}

/* IOSQE_ASYNC now and then: forced punts in between */
static unsigned int maybe_async(struct wctx *c)
{
	return rnd(&c->rng, 8) ? 0 : IOSQE_ASYNC;
}

/* sqe_new() for an SQE of @p's item, whose check its CQE gets */
static struct io_uring_sqe *prep_sqe(struct prep *p, int op,
				     struct req **rp)
{
	struct io_uring_sqe *sqe = sqe_new(p->c, p->rh, op, rp);

	if (sqe)
		(*rp)->item = p->item;
	return sqe;
}

/* the result computed at preparation is all there is to check */
static void item_res_check(struct req *r, int res)
{
	if (res != r->exp)
		bad_res(r, res, NULL);
}

/* also what stands in for an item that could not be had */
static int item_nop_prep(struct prep *p)
{
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_NOP, &r);
	if (!sqe)
		return 0;
	r->fs = -1;
	io_uring_prep_nop(sqe);
	sqe_done(sqe, r, maybe_async(p->c));
	return 0;
}

/* dirty data first: always on ext4, whose fsync then really blocks */
static void prep_fsync(struct prep *p, int fs, int op, unsigned int flags)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	if (fs == FS_EXT4 || rnd(&c->rng, 2))
		dirty(c, fs);
	sqe = prep_sqe(p, op, &r);
	if (!sqe)
		return;
	io_uring_prep_fsync(sqe, c->fd[fs],
			    rnd(&c->rng, 3) ? 0 : IORING_FSYNC_DATASYNC);
	r->fs = fs;
	sqe_done(sqe, r, flags);
}

static int item_fsync_ext4_prep(struct prep *p)
{
	prep_fsync(p, FS_EXT4, OP_FSYNC, maybe_async(p->c));
	return 0;
}

static int item_fsync_tmpfs_prep(struct prep *p)
{
	prep_fsync(p, FS_TMPFS, OP_FSYNC, maybe_async(p->c));
	return 0;
}

static int item_statx_prep(struct prep *p)
{
	struct wctx *c = p->c;
	int fs = p->fs;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_STATX, &r);
	if (!sqe)
		return 0;
	r->fs = fs;
	r->size = c->stat_size[fs];
	r->ino = c->stat_ino[fs];
	snprintf(r->path, sizeof(r->path), "%s", c->stat_path[fs]);
	io_uring_prep_statx(sqe, AT_FDCWD, r->path, 0, STATX_BASIC_STATS,
			    &r->stx);
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static void item_statx_check(struct req *r, int res)
{
	if (res) {
		bad_res(r, res, NULL);
	} else if (!(r->stx.stx_mask & STATX_SIZE) ||
		   (long long)r->stx.stx_size != r->size ||
		   r->stx.stx_ino != r->ino) {
		report("worker %d: statx %s: size %llu ino %llu mask %#x, expected size %lld ino %llu",
		       r->c->idx, r->path,
		       (unsigned long long)r->stx.stx_size,
		       (unsigned long long)r->stx.stx_ino, r->stx.stx_mask,
		       r->size, r->ino);
	}
}

static int item_statx_missing_prep(struct prep *p)
{
	struct wctx *c = p->c;
	int fs = p->fs;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_STATX_MISSING, &r);
	if (!sqe)
		return 0;
	r->fs = fs;
	r->exp = -ENOENT;
	snprintf(r->path, sizeof(r->path), "%s", c->missing[fs]);
	io_uring_prep_statx(sqe, AT_FDCWD, r->path, 0, STATX_BASIC_STATS,
			    &r->stx);
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

/* an fd or -errno, as the synchronous openat() gave at startup */
static int item_tmpfile_prep(struct prep *p)
{
	int fs = p->fs;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_TMPFILE, &r);
	if (!sqe)
		return 0;
	r->fs = fs;
	r->exp = exp_tmpfile[fs];
	snprintf(r->path, sizeof(r->path), "%s", cfg.dir[fs]);
	io_uring_prep_openat(sqe, AT_FDCWD, r->path,
			     O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	sqe_done(sqe, r, maybe_async(p->c));
	return 0;
}

static void item_tmpfile_check(struct req *r, int res)
{
	struct stat st;

	if (r->exp == 1) {
		if (res < 0) {
			bad_res(r, res, "an fd, ");
			return;
		}
		if (fstat(res, &st) || !S_ISREG(st.st_mode) || st.st_nlink)
			report("worker %d: O_TMPFILE fd %d is not an unlinked regular file",
			       r->c->idx, res);
		close(res);
	} else if (res != r->exp) {
		bad_res(r, res, NULL);
		if (res >= 0)
			close(res);
	}
}

/* mkdirat linked to the unlinkat AT_REMOVEDIR of the same directory */
static int item_mkdir_prep(struct prep *p)
{
	struct ringh *rh = p->rh;
	int fs = p->fs;
	struct io_uring_sqe *sqe;
	struct req *r, *t;

	/* a name per batch position: unique among what is in flight */
	if (io_uring_sq_space_left(&rh->ring) < 2)
		submit_all(rh, 0);
	sqe = prep_sqe(p, OP_MKDIR, &r);
	if (!sqe)
		return 0;
	r->fs = fs;
	snprintf(r->path, sizeof(r->path), "%sd%d", p->c->pfx[fs], p->pos);
	io_uring_prep_mkdirat(sqe, AT_FDCWD, r->path, 0700);
	sqe_done(sqe, r, IOSQE_IO_LINK);
	sqe = prep_sqe(p, OP_RMDIR, &t);
	if (!sqe)
		return 0;
	t->fs = fs;
	snprintf(t->path, sizeof(t->path), "%s", r->path);
	io_uring_prep_unlinkat(sqe, AT_FDCWD, t->path, AT_REMOVEDIR);
	sqe_done(sqe, t, 0);
	return 0;
}

/* between two names, the file has the one c->ren_cur says */
static int item_rename_prep(struct prep *p)
{
	struct wctx *c = p->c;
	int fs = p->fs, from;
	struct io_uring_sqe *sqe;
	struct req *r;

	/* one per batch, the name is known once it's done */
	if (*p->renamed)
		return -1;
	*p->renamed = 1;
	sqe = prep_sqe(p, OP_RENAME, &r);
	if (!sqe)
		return 0;
	r->fs = fs;
	from = c->ren_cur[fs];
	snprintf(r->path, sizeof(r->path), "%s", c->ren[fs][from]);
	snprintf(r->path2, sizeof(r->path2), "%s", c->ren[fs][!from]);
	c->ren_cur[fs] = !from;
	io_uring_prep_renameat(sqe, AT_FDCWD, r->path, AT_FDCWD, r->path2,
			       rnd(&c->rng, 2) ? RENAME_NOREPLACE : 0);
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static void item_rename_check(struct req *r, int res)
{
	struct wctx *c = r->c;

	if (res != r->exp) {
		bad_res(r, res, NULL);
		/* resync the name the file has now */
		c->ren_cur[r->fs] = access(c->ren[r->fs][0], F_OK) ? 1 : 0;
	}
}

static int item_fallocate_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_FALLOCATE, &r);
	if (!sqe)
		return 0;
	r->fs = p->fs;
	io_uring_prep_fallocate(sqe, c->fd[p->fs], 0,
				4096ULL * rnd(&c->rng, 256), 65536);
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static int item_ftruncate_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_FTRUNCATE, &r);
	if (!sqe)
		return 0;
	r->fs = p->fs;
	io_uring_prep_ftruncate(sqe, c->fd[p->fs],
				4096LL * rnd(&c->rng, 128));
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static int item_fadvise_prep(struct prep *p)
{
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_FADVISE, &r);
	if (!sqe)
		return 0;
	r->fs = p->fs;
	io_uring_prep_fadvise(sqe, p->c->fd[p->fs], 0, 0,
			      POSIX_FADV_DONTNEED);
	sqe_done(sqe, r, maybe_async(p->c));
	return 0;
}

/*
 * A buffered WRITE of a page (tmpfs's and ext4's go inline after their
 * nonblocking -EAGAIN): all of it, whatever a ftruncate did meanwhile.
 */
static int item_write_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_WRITE, &r);
	if (!sqe)
		return 0;
	r->fs = p->fs;
	r->exp = 4096;
	io_uring_prep_write(sqe, c->fd[p->fs], dirty_buf, 4096,
			    4096ULL * rnd(&c->rng, 256));
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

/* user xattrs on ext4 only, 0 or -errno as fsetxattr() gave at startup */
static int item_setxattr_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_SETXATTR, &r);
	if (!sqe)
		return 0;
	r->fs = FS_EXT4;
	r->exp = exp_xattr;
	snprintf(r->xbuf, sizeof(r->xbuf), XATTR_PFX "%04x",
		 c->xgen++ & 0xffff);
	io_uring_prep_fsetxattr(sqe, c->fd[FS_EXT4], XATTR_NAME, r->xbuf, 0,
				XATTR_LEN);
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static int item_getxattr_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, OP_GETXATTR, &r);
	if (!sqe)
		return 0;
	r->fs = FS_EXT4;
	r->exp = exp_xattr ? exp_xattr : XATTR_LEN;
	io_uring_prep_fgetxattr(sqe, c->fd[FS_EXT4], XATTR_NAME, r->xbuf,
				sizeof(r->xbuf));
	sqe_done(sqe, r, maybe_async(c));
	return 0;
}

static void item_getxattr_check(struct req *r, int res)
{
	if (res != r->exp)
		bad_res(r, res, NULL);
	else if (res == XATTR_LEN &&
		 memcmp(r->xbuf, XATTR_PFX, strlen(XATTR_PFX)))
		report("worker %d: fgetxattr returned \"%.16s\"", r->c->idx,
		       r->xbuf);
}

/* the openat of the FIFO @f, whose writer is armed */
static struct req *prep_fifo_open(struct prep *p, struct fifo_slot *f,
				  int op)
{
	struct io_uring_sqe *sqe;
	struct req *r;

	sqe = prep_sqe(p, op, &r);
	if (!sqe)
		return NULL;
	r->fifo = f;
	r->fs = FS_TMPFS;
	snprintf(r->path, sizeof(r->path), "%s", f->path);
	io_uring_prep_openat(sqe, AT_FDCWD, r->path,
			     O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	sqe_done(sqe, r, op == OP_FIFO ? maybe_async(p->c) : 0);
	return r;
}

/* its fd must be the FIFO's; a cancelled one may fail as a cancel does */
static void item_fifo_check(struct req *r, int res)
{
	if (res >= 0) {
		if (!fifo_fd_ok(r->fifo, res))
			report("worker %d: %s returned fd %d, not the FIFO %s",
			       r->c->idx, op_name[r->op], res, r->fifo->path);
		close(res);
	} else if (r->op == OP_FIFO ||
		   (res != -ECANCELED && res != -EINTR && res != -512)) {
		bad_res(r, res, r->op == OP_FIFO ? "an fd, " :
			"an fd, -ECANCELED, -EINTR or -512, not ");
	}
	STORE(r->fifo->reader_done, 1);
}

static int item_fifo_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct fifo_slot *f;

	f = fifo_get(c);
	if (!f)
		return -1;
	fifo_arm(f, rnd(&c->rng, FIFO_DELAY_MAX + 1), 0);
	prep_fifo_open(p, f, OP_FIFO);
	return 0;
}

/* a NOP linked to an fsync */
static int item_link_prep(struct prep *p)
{
	struct ringh *rh = p->rh;
	struct io_uring_sqe *sqe;
	struct req *r;

	if (io_uring_sq_space_left(&rh->ring) < 2)
		submit_all(rh, 0);
	sqe = prep_sqe(p, OP_LINK_NOP, &r);
	if (!sqe)
		return 0;
	io_uring_prep_nop(sqe);
	r->fs = -1;
	sqe_done(sqe, r, IOSQE_IO_LINK);
	prep_fsync(p, p->fs, OP_LINK_FSYNC, 0);
	return 0;
}

/* a FIFO open and its ASYNC_CANCEL, paired if the open is still there */
static int item_cancel_prep(struct prep *p)
{
	struct wctx *c = p->c;
	struct ringh *rh = p->rh;
	struct io_uring_sqe *sqe;
	struct fifo_slot *f;
	struct req *r, *t;
	unsigned long long tud;

	f = fifo_get(c);
	if (!f)
		return -1;
	/* the writer comes anyway, the cancel may well be late */
	fifo_arm(f, rnd(&c->rng, FIFO_DELAY_MAX + 1), 0);
	t = prep_fifo_open(p, f, OP_FIFO_TARGET);
	if (!t)
		return 0;
	tud = t->ud;
	if (rnd(&c->rng, 2)) {
		/* let the open get going first */
		submit_all(rh, 0);
		sleep_us(rnd(&c->rng, 3000));
		reap_avail(rh);
		t = find_req(rh, tud);
	}
	sqe = prep_sqe(p, OP_CANCEL, &r);
	if (!sqe)
		return 0;
	r->fs = -1;
	if (t) {
		r->pair = tud;
		t->pair = r->ud;
	}
	io_uring_prep_cancel64(sqe, tud, 0);
	sqe_done(sqe, r, 0);
	return 0;
}

/* the open, or the cancel; complete() then checks them as a pair */
static void item_cancel_check(struct req *r, int res)
{
	if (r->op == OP_FIFO_TARGET) {
		item_fifo_check(r, res);
	} else if (!r->pair) {
		/*
		 * The target was reaped before the cancel was made:
		 * not found, or still found running (io-wq clears
		 * its current work only after the CQE is posted).
		 */
		if (res != -ENOENT && res != -EALREADY)
			bad_res(r, res, "-ENOENT or -EALREADY, not ");
		if (P.parent)
			ADD(S.cancel_late[res == -ENOENT], 1);
	} else if (res && res != -EALREADY && res != -ENOENT) {
		bad_res(r, res, "0, -EALREADY or -ENOENT, not ");
	}
}

/*
 * The order is the seed's: pick_item() walks the weights in it. The first
 * is the NOP, ITEM_NOP.
 */
static const struct stress_item stress_items[] = {
	/* name, weight, sqes, prep, check */
	{ "nop", 5, 1, item_nop_prep, item_res_check },
	{ "fsync-ext4", 8, 1, item_fsync_ext4_prep, item_res_check },
	{ "fsync-tmpfs", 3, 1, item_fsync_tmpfs_prep, item_res_check },
	{ "statx", 6, 1, item_statx_prep, item_statx_check },
	{ "statx-missing", 4, 1, item_statx_missing_prep, item_res_check },
	{ "openat-tmpfile", 4, 1, item_tmpfile_prep, item_tmpfile_check },
	{ "mkdirat-rmdir", 4, 2, item_mkdir_prep, item_res_check },
	{ "renameat", 4, 1, item_rename_prep, item_rename_check },
	{ "fallocate", 4, 1, item_fallocate_prep, item_res_check },
	{ "ftruncate", 4, 1, item_ftruncate_prep, item_res_check },
	{ "fadvise", 4, 1, item_fadvise_prep, item_res_check },
	{ "write", 4, 1, item_write_prep, item_res_check },
	{ "fsetxattr", 3, 1, item_setxattr_prep, item_res_check },
	{ "fgetxattr", 3, 1, item_getxattr_prep, item_getxattr_check },
	{ "openat-fifo", 5, 1, item_fifo_prep, item_fifo_check },
	{ "link-nop-fsync", 4, 2, item_link_prep, item_res_check },
	{ "fifo-cancel", 4, 2, item_cancel_prep, item_cancel_check },
};

#define NR_ITEMS	((int)(sizeof(stress_items) / sizeof(stress_items[0])))

static void replay_log(struct req *r, int res);

static void complete(struct ringh *rh, struct req *r, int res,
		     unsigned int flags)
{
	struct wctx *c = r->c;

	if (cfg.replay)
		replay_log(r, res);

	if (flags)
		report("worker %d: %s ud %#llx: CQE flags %#x", c->idx,
		       op_name[r->op], r->ud, flags);
	stress_items[r->item].check(r, res);
	/* a cancel and its target: the second of the two checks the pair */
	pair_complete(rh, r, res);
	r->used = 0;
	rh->npending--;
	ADD(c->outstanding, -1);
	ADD(P.cqes, 1);
}

static void handle_cqe(struct ringh *rh, unsigned long long ud, int res,
		       unsigned int flags)
{
	struct req *r = find_req(rh, ud);
	unsigned int idx = (ud >> 32) - 1;
	struct wctx *o;

	if (r) {
		complete(rh, r, res, flags);
		return;
	}
	ADD(P.cqes, 1);
	o = idx < MAX_OWNERS ? P.owners[idx] : NULL;
	if (o && (unsigned int)ud < LOAD(o->next))
		report("%s ring: duplicate CQE ud %#llx res %d (owner %u)",
		       rh->name, ud, res, idx);
	else
		report("%s ring: unknown CQE ud %#llx res %d", rh->name, ud,
		       res);
}

/* with the ring's lock held */
static int reap_avail(struct ringh *rh)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&rh->ring, head, cqe) {
		handle_cqe(rh, cqe->user_data, cqe->res, cqe->flags);
		n++;
	}
	if (n)
		io_uring_cq_advance(&rh->ring, n);
	return n;
}

static void ring_wait(struct ringh *rh, int ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000LL,
	};
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_wait_cqe_timeout(&rh->ring, &cqe, &ts);
	if (ret && ret != -ETIME && ret != -EINTR)
		report("%s ring: wait_cqe_timeout: %d (%s)", rh->name, ret,
		       strerror(-ret));
}

static void report_missing(struct wctx *c, struct ringh *rh)
{
	int i;

	pthread_mutex_lock(&rh->lock);
	for (i = 0; i < TAB_SZ; i++) {
		struct req *r = &rh->tab[i];

		if (r->used && r->c == c)
			report("worker %d tid %d: %s ring: no CQE for %s ud %#llx after %lld ms",
			       c->idx, c->tid, rh->name, op_name[r->op], r->ud,
			       t_now_ms() - r->t0);
	}
	pthread_mutex_unlock(&rh->lock);
}

/* wait until every SQE of @c on @rh has its CQE, bounded */
static void wait_mine(struct wctx *c, struct ringh *rh)
{
	long long end = t_now_ms() + BATCH_DEADLINE_MS;
	int shared = rh != c->own;

	while (LOAD(c->outstanding) > 0) {
		if (t_now_ms() > end) {
			report_missing(c, rh);
			fatal();
			return;
		}
		pthread_mutex_lock(&rh->lock);
		if (LOAD(c->outstanding) > 0) {
			ring_wait(rh, shared ? 5 : 50);
			reap_avail(rh);
		}
		pthread_mutex_unlock(&rh->lock);
		progress(c);
		if (shared)
			sched_yield();
	}
}

/* batches */

/* an item of at most @room SQEs */
static int pick_item(struct wctx *c, int room)
{
	int i, v, total = 0;

	for (i = 0; i < NR_ITEMS; i++)
		total += stress_items[i].weight;
	do {
		v = rnd(&c->rng, total);
		for (i = 0; i < NR_ITEMS; i++) {
			v -= stress_items[i].weight;
			if (v < 0)
				break;
		}
	} while (stress_items[i].sqes > room ||
		 (cfg.replay && stress_items[i].prep == item_cancel_prep));
	return i;
}

static void prep_item(struct wctx *c, struct ringh *rh, int item, int pos,
		      int *renamed)
{
	struct prep p = {
		.c = c,
		.rh = rh,
		.item = item,
		/* drawn whether the item needs it or not: the seed's */
		.fs = rnd(&c->rng, 2),
		.pos = pos,
		.renamed = renamed,
	};

	/* an item that could not be had: a NOP in its place */
	if (stress_items[item].prep(&p)) {
		p.item = ITEM_NOP;
		stress_items[ITEM_NOP].prep(&p);
	}
}

/* a batch of @nsqes SQEs (1 to BATCH_MAX), submitted, all reaped */
static void run_batch(struct wctx *c, struct ringh *rh, int nsqes)
{
	int i, item, renamed = 0;

	pthread_mutex_lock(&rh->lock);
	for (i = 0; nsqes > 0 && !LOAD(P.fatal); i++) {
		item = pick_item(c, nsqes);
		nsqes -= stress_items[item].sqes;
		prep_item(c, rh, item, i, &renamed);
	}
	submit_all(rh, rnd(&c->rng, 2));
	reap_avail(rh);
	pthread_mutex_unlock(&rh->lock);
	wait_mine(c, rh);
	progress(c);
}

/* an IOSQE_ASYNC NOP makes the io-wq worker, then it has to idle */
static void warm(struct wctx *c)
{
	struct ringh *rh = c->own;
	struct io_uring_sqe *sqe;
	struct req *r;

	pthread_mutex_lock(&rh->lock);
	sqe = sqe_new(c, rh, OP_NOP, &r);
	if (sqe) {
		r->fs = -1;
		io_uring_prep_nop(sqe);
		sqe_done(sqe, r, IOSQE_ASYNC);
		submit_all(rh, 1);
		reap_avail(rh);
	}
	pthread_mutex_unlock(&rh->lock);
	wait_mine(c, rh);
	if (!t_wait_idle_worker_ms(WARM_MS) && P.parent)
		ADD(S.warm_slow, 1);
}

static int ring_init(struct ringh *rh)
{
	int ret = io_uring_queue_init(QD, &rh->ring, rh->setup_flags);

	if (ret) {
		report("io_uring_queue_init(%d): %s", QD, strerror(-ret));
		return -1;
	}
	rh->live = 1;
	return 0;
}

/* contexts */

static struct wctx *ctx_new(int idx, int worker, unsigned long long seed,
			    int nfifo)
{
	struct wctx *c = calloc(1, sizeof(*c));

	if (c)
		c->own = calloc(1, sizeof(*c->own));
	if (!c || !c->own) {
		report("out of memory");
		_exit(1);
	}
	c->idx = idx;
	c->worker = worker;
	c->rng = mix64(seed ^ (0x1000 + idx)) | 1;
	c->nfifo = nfifo;
	c->fd[0] = c->fd[1] = -1;
	pthread_mutex_init(&c->own->lock, NULL);
	if (idx & 1)
		c->own->setup_flags = OWN_RING_ODD_FLAGS;
	snprintf(c->own->name, sizeof(c->own->name), "own[%d]", idx);
	P.owners[idx] = c;
	return c;
}

static int make_file(const char *path, long long size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		report("create %s: %s", path, strerror(errno));
		return -1;
	}
	if (size && ftruncate(fd, size)) {
		report("ftruncate %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* in the thread that runs @c: files, FIFOs, its ring */
static int ctx_setup(struct wctx *c)
{
	struct stat st;
	char path[PATH_SZ];
	int fs, i, fd;

	c->pid = getpid();
	c->tid = gettid();
	for (fs = 0; fs < 2; fs++) {
		snprintf(c->pfx[fs], sizeof(c->pfx[fs]), "%s/stress.%d.%d.",
			 cfg.dir[fs], c->pid, c->tid);
		snprintf(path, sizeof(path), "%sdata", c->pfx[fs]);
		c->fd[fs] = make_file(path, 0);
		if (c->fd[fs] < 0)
			return -1;
		snprintf(c->stat_path[fs], PATH_SZ, "%sstat", c->pfx[fs]);
		c->stat_size[fs] = rnd_range(&c->rng, 1, 1 << 20);
		fd = make_file(c->stat_path[fs], c->stat_size[fs]);
		if (fd < 0)
			return -1;
		fstat(fd, &st);
		c->stat_ino[fs] = st.st_ino;
		close(fd);
		snprintf(c->ren[fs][0], PATH_SZ, "%srenA", c->pfx[fs]);
		snprintf(c->ren[fs][1], PATH_SZ, "%srenB", c->pfx[fs]);
		unlink(c->ren[fs][1]);
		fd = make_file(c->ren[fs][0], 0);
		if (fd < 0)
			return -1;
		close(fd);
		c->ren_cur[fs] = 0;
		snprintf(c->missing[fs], PATH_SZ, "%smissing", c->pfx[fs]);
		unlink(c->missing[fs]);
		for (i = 0; i < BATCH_MAX; i++) {
			snprintf(path, sizeof(path), "%sd%d", c->pfx[fs], i);
			rmdir(path);
		}
	}
	if (!exp_xattr) {
		char val[XATTR_LEN + 1];

		snprintf(val, sizeof(val), XATTR_PFX "%04x", 0);
		if (fsetxattr(c->fd[FS_EXT4], XATTR_NAME, val, XATTR_LEN, 0)) {
			report("fsetxattr: %s", strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < c->nfifo; i++) {
		struct fifo_slot *f = &c->fifo[i];

		snprintf(f->path, sizeof(f->path), "%sfifo%d",
			 c->pfx[FS_TMPFS], i);
		unlink(f->path);
		if (mkfifo(f->path, 0600) || stat(f->path, &st)) {
			report("mkfifo %s: %s", f->path, strerror(errno));
			return -1;
		}
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->wfd = -1;
		STORE(f->state, FS_FREE);
		slot_register(f);
	}
	return ring_init(c->own);
}

/*
 * Wait up to @ms until the releaser is done with @c's FIFOs (none armed or
 * held): 0 if it is, 1 if a writer is still busy.
 */
static int fifo_wait_writers(struct wctx *c, long long ms)
{
	long long end = t_now_ms() + ms;
	int i, busy;

	do {
		busy = 0;
		for (i = 0; i < c->nfifo; i++) {
			int st = LOAD(c->fifo[i].state);

			busy |= st == FS_ARMED || st == FS_HELD;
		}
		if (busy)
			sleep_us(1000);
	} while (busy && P.rel_started && t_now_ms() < end);
	return busy;
}

/* no writer of ours is left on @c's FIFOs (bounded) */
static void ctx_quiesce_fifos(struct wctx *c)
{
	int i;

	for (i = 0; i < c->nfifo; i++)
		STORE(c->fifo[i].reader_done, 1);
	fifo_wait_writers(c, 5000);
	for (i = 0; i < c->nfifo; i++) {
		struct fifo_slot *f = &c->fifo[i];

		if (f->noreap && LOAD(f->state) == FS_DONE)
			close_fifo_fds(f);
		STORE(f->state, FS_DEAD);
	}
}

/* no stray CQE comes in, nothing is left in the table */
static void ring_final_check(struct ringh *rh, int ms)
{
	int i;

	pthread_mutex_lock(&rh->lock);
	if (rh->live) {
		ring_wait(rh, ms);
		reap_avail(rh);
	}
	if (rh->npending && report("%s ring: %d SQEs without a CQE at the end",
				   rh->name, rh->npending)) {
		for (i = 0; i < TAB_SZ; i++)
			if (rh->tab[i].used)
				note("  %s ud %#llx of worker %d, %lld ms old",
				     op_name[rh->tab[i].op], rh->tab[i].ud,
				     rh->tab[i].c->idx,
				     t_now_ms() - rh->tab[i].t0);
	}
	pthread_mutex_unlock(&rh->lock);
}

static void ctx_remove_files(struct wctx *c)
{
	char prefix[64];
	int fs;

	for (fs = 0; fs < 2; fs++) {
		if (c->fd[fs] >= 0)
			close(c->fd[fs]);
		c->fd[fs] = -1;
	}
	snprintf(prefix, sizeof(prefix), "stress.%d.%d.", c->pid, c->tid);
	sweep(prefix);
}

static void ctx_teardown(struct wctx *c)
{
	ctx_quiesce_fifos(c);
	ctx_remove_files(c);
	if (c->own->live)
		io_uring_queue_exit(&c->own->ring);
	c->own->live = 0;
}

/* children */

static void child_reset(void)
{
	sigset_t set;

	my_idx = -1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	memset(&P, 0, sizeof(P));
	P.pid = getpid();
	pthread_mutex_init(&P.slot_lock, NULL);
}

static void *kill_thread(void *arg)
{
	struct wctx *c = arg;

	if (ctx_setup(c))
		return NULL;
	warm(c);
	while (!stopping())
		run_batch(c, c->own, rnd_range(&c->rng, 1, BATCH_MAX));
	return NULL;
}

/* exec child: a FIFO open (no writer) and an fsync in flight at execve */
static void exec_inflight(struct wctx *c)
{
	struct io_uring_sqe *sqe;
	char path[PATH_SZ];
	int fd;

	snprintf(path, sizeof(path), "%sxfifo", c->pfx[FS_TMPFS]);
	if (mkfifo(path, 0600))
		return;
	sqe = io_uring_get_sqe(&c->own->ring);
	if (!sqe)
		return;
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY | O_CREAT | O_CLOEXEC,
			     0600);
	io_uring_sqe_set_data64(sqe, 1);
	snprintf(path, sizeof(path), "%sxdata", c->pfx[FS_EXT4]);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0 && pwrite(fd, dirty_buf, DIRTY_MAX, 0) == DIRTY_MAX) {
		sqe = io_uring_get_sqe(&c->own->ring);
		if (sqe) {
			io_uring_prep_fsync(sqe, fd, 0);
			io_uring_sqe_set_data64(sqe, 2);
		}
	}
	io_uring_submit(&c->own->ring);
	sleep_us(rnd(&c->rng, 5000));
}

__attribute__((noreturn))
static void child_main(int kind, unsigned long long seed, pid_t ppid,
		       int inflight)
{
	static char *const argv[] = { "true", NULL };
	pthread_t th[KILL_THREADS];
	struct wctx *c;
	int i, n;

	child_reset();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != ppid)
		_exit(4);
	releaser_start();
	switch (kind) {
	case KID_FORK:
		c = ctx_new(0, -1, seed, NFIFO_CHILD);
		if (ctx_setup(c))
			_exit(1);
		warm(c);
		n = c->nops + CHILD_OPS;
		while ((int)c->nops < n && !stopping()) {
			int left = n - c->nops;

			run_batch(c, c->own, rnd_range(&c->rng, 1,
				  left < BATCH_MAX ? left : BATCH_MAX));
		}
		ring_final_check(c->own, 10);
		ctx_teardown(c);
		releaser_stop();
		_exit(P.errors ? 1 : 0);
	case KID_EXEC:
		c = ctx_new(0, -1, seed, NFIFO_CHILD);
		if (ctx_setup(c))
			_exit(1);
		warm(c);
		n = c->nops + rnd_range(&c->rng, 2, 6);
		while ((int)c->nops < n && !stopping())
			run_batch(c, c->own, rnd_range(&c->rng, 1, 3));
		ring_final_check(c->own, 0);
		ctx_quiesce_fifos(c);
		releaser_stop();
		if (P.errors)
			_exit(1);
		ctx_remove_files(c);
		/* the parent removes what this leaves */
		if (inflight)
			exec_inflight(c);
		execve("/bin/true", argv, environ);
		_exit(127);
	default:
		for (i = 0; i < KILL_THREADS; i++) {
			c = ctx_new(i, -1, seed + i, NFIFO_CHILD);
			if (start_thread(&th[i], kill_thread, c))
				_exit(5);
		}
		/* SIGKILL is due long before */
		sleep_us(CHILD_GUARD_MS * 1000LL);
		_exit(3);
	}
}

static void spawn(struct wctx *c, int kind)
{
	unsigned long long seed = rng_next(&c->rng);
	int inflight = kind == KID_EXEC && rnd(&c->rng, 2);
	long long now = t_now_ms();
	pid_t pid, ppid = P.pid;
	struct kid *k;

	pid = fork();
	if (!pid)
		child_main(kind, seed, ppid, inflight);
	if (pid < 0) {
		report("worker %d: fork: %s", c->idx, strerror(errno));
		return;
	}
	k = &c->kids[c->nkids++];
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	k->kind = kind;
	k->t0 = now;
	if (kind == KID_KILL)
		k->kill_at = now + rnd_range(&c->rng, 50, 500);
	else
		k->deadline = now + CHILD_REAP_MS;
	ADD(*(kind == KID_FORK ? &S.forks : kind == KID_EXEC ? &S.execs :
	      &S.kills), 1);
	if (inflight)
		ADD(S.exec_inflight, 1);
}

static void dump_proc_tasks(pid_t pid)
{
	char path[320], buf[2048], wchan[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *comm, *end;

		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		if (t_read_text(path, buf, sizeof(buf)))
			continue;
		comm = strchr(buf, '(');
		end = strrchr(buf, ')');
		if (!comm || !end || !end[1] || !end[2])
			continue;
		*end = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 de->d_name);
		if (t_read_text(path, wchan, sizeof(wchan)))
			wchan[0] = '\0';
		note("  task %s (%s) %c wchan %s", de->d_name, comm + 1, end[2],
		     wchan);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid,
			 de->d_name);
		if (!t_read_text(path, buf, sizeof(buf)))
			note("  its kernel stack:\n%s", buf);
	}
	closedir(d);
}

static void kid_done(struct wctx *c, int i, int status)
{
	struct kid *k = &c->kids[i];

	if (k->kind == KID_KILL) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			report("kill child %d: status %#x, expected SIGKILL%s",
			       k->pid, status, k->killed ? "" : " (not sent yet)");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		report("%s child %d: status %#x (%s %d), expected exit 0",
		       kid_name[k->kind], k->pid, status,
		       WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) :
		       WTERMSIG(status));
	}
	sweep_pid(k->pid);
	ADD(P.children, 1);
	c->kids[i] = c->kids[--c->nkids];
}

/* reap what is done, kill what is due; @finish: kill the kill children now */
static void kids_poll(struct wctx *c, int finish)
{
	long long now = t_now_ms();
	int i, status;
	pid_t ret;

	for (i = 0; i < c->nkids; i++) {
		struct kid *k = &c->kids[i];

		ret = waitpid(k->pid, &status, WNOHANG);
		if (ret == k->pid) {
			kid_done(c, i--, status);
			continue;
		}
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			report("waitpid %s child %d: %s", kid_name[k->kind],
			       k->pid, strerror(errno));
			c->kids[i--] = c->kids[--c->nkids];
			continue;
		}
		if (k->kind == KID_KILL && !k->killed &&
		    (finish || now >= k->kill_at)) {
			if (kill(k->pid, SIGKILL))
				report("kill %d: %s", k->pid, strerror(errno));
			k->killed = 1;
			k->deadline = now + CHILD_REAP_MS;
		}
		if (!k->deadline || now < k->deadline)
			continue;
		if (!k->overdue) {
			if (report("%s child %d: not reaped, %lld ms after the fork, %d ms after %s",
				   kid_name[k->kind], k->pid, now - k->t0,
				   CHILD_REAP_MS, k->kind == KID_KILL ?
				   "SIGKILL" : "the fork"))
				dump_proc_tasks(k->pid);
			kill(k->pid, SIGKILL);
			k->overdue = 1;
			k->deadline = now + CHILD_REAP_MS;
		} else {
			report("%s child %d: still not reaped after SIGKILL, giving up",
			       kid_name[k->kind], k->pid);
			fatal();
			/* killed: whatever it left, it makes no more */
			sweep_pid(k->pid);
			c->kids[i--] = c->kids[--c->nkids];
		}
	}
}

/* ring close: tear the own ring down with a FIFO open in flight */
static void ring_close(struct wctx *c)
{
	struct ringh *rh = c->own;
	struct io_uring_sqe *sqe;
	struct fifo_slot *f;
	char path[PATH_SZ];

	f = fifo_get(c);
	if (!f)
		return;
	snprintf(path, sizeof(path), "%s", f->path);
	fifo_arm(f, RCLOSE_DELAY_MS, 1);
	pthread_mutex_lock(&rh->lock);
	sqe = io_uring_get_sqe(&rh->ring);
	if (sqe) {
		io_uring_prep_openat(sqe, AT_FDCWD, path,
				     O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		io_uring_sqe_set_data64(sqe, ~0ULL);
	}
	if (rnd(&c->rng, 2)) {
		dirty(c, FS_EXT4);
		sqe = io_uring_get_sqe(&rh->ring);
		if (sqe) {
			io_uring_prep_fsync(sqe, c->fd[FS_EXT4], 0);
			io_uring_sqe_set_data64(sqe, ~0ULL);
		}
	}
	/* not through submit_all(): these CQEs are never reaped */
	while (io_uring_submit(&rh->ring) == -EINTR)
		;
	sleep_us(rnd(&c->rng, 20000));
	io_uring_queue_exit(&rh->ring);
	rh->live = 0;
	if (rh->npending)
		report("%s ring: closed with %d tracked SQEs", rh->name,
		       rh->npending);
	if (ring_init(rh))
		fatal();
	pthread_mutex_unlock(&rh->lock);
	ADD(S.ring_closes, 1);
	if (rh->live)
		warm(c);
}

/* a global timer: the one worker to find it due moves it on */
static int claim(long long *next, long long now, int lo, int hi,
		 struct wctx *c)
{
	long long n = LOAD(*next);

	if (now < n)
		return 0;
	return __atomic_compare_exchange_n(next, &n,
					   now + rnd_range(&c->rng, lo, hi), 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static void events(struct wctx *c)
{
	long long now = t_now_ms();

	if (c->nkids < MAX_KIDS && claim(&next_fork, now, 500, 2000, c))
		spawn(c, KID_FORK);
	if (c->nkids < MAX_KIDS && claim(&next_exec, now, 1000, 3000, c))
		spawn(c, KID_EXEC);
	if (c->nkids < MAX_KIDS && claim(&next_kill, now, 2000, 5000, c))
		spawn(c, KID_KILL);
	if (claim(&next_rclose, now, 1000, 3000, c))
		ring_close(c);
}

/* threads of the main process */

static void on_usr1(int sig)
{
	int e = errno;

	(void)sig;
	if (my_idx >= 0) {
		ADD(W[my_idx].sig_recv, 1);
		if (gettid() != W[my_idx].tid)
			ADD(sig_wrong_tid, 1);
	} else {
		ADD(sig_stray, 1);
	}
	errno = e;
}

static void *worker_main(void *arg)
{
	struct wctx *c = arg;
	int i = c->worker;
	sigset_t set;

	W[i].tid = gettid();
	my_idx = i;
	STORE(W[i].progress, t_now_ms());
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (ctx_setup(c)) {
		fatal();
	} else {
		warm(c);
		STORE(W[i].ready, 1);
	}
	while (!stopping()) {
		progress(c);
		events(c);
		kids_poll(c, 0);
		if (stopping())
			break;
		if (c->shared && !rnd(&c->rng, 3))
			run_batch(c, c->shared, rnd_range(&c->rng, 1, BATCH_MAX));
		else
			run_batch(c, c->own, rnd_range(&c->rng, 1, BATCH_MAX));
	}
	/* the children: the kill ones now, all within their bounds */
	while (c->nkids) {
		kids_poll(c, 1);
		progress(c);
		if (c->nkids)
			sleep_us(5000);
	}
	STORE(W[i].quiesced, 1);
	while (!LOAD(sig_done)) {
		progress(c);
		sleep_us(5000);
	}
	/* a last return to user mode takes any signal still pending */
	getppid();
	ring_final_check(c->own, 20);
	ctx_teardown(c);
	STORE(W[i].done, 1);
	return NULL;
}

static void *signaller(void *arg)
{
	unsigned long long rng = mix64(cfg.seed ^ 0x516e41);
	int i, sent;

	(void)arg;
	while (!LOAD(sig_stop)) {
		long long now;

		sleep_us(1000LL * rnd_range(&rng, 1, 20));
		i = rnd(&rng, cfg.nthreads);
		if (!LOAD(W[i].ready) || LOAD(W[i].done))
			continue;
		now = t_now_ms();
		sent = W[i].sig_sent;
		/* SIGUSR1 does not queue: one at a time per thread */
		if (LOAD(W[i].sig_recv) != sent) {
			if (now - W[i].sig_last > SIG_PENDING_MAX_MS &&
			    !W[i].sig_late) {
				W[i].sig_late = 1;
				report("worker %d tid %d: SIGUSR1 not handled %lld ms after tgkill",
				       i, W[i].tid, now - W[i].sig_last);
			}
			continue;
		}
		if (tgkill(P.pid, W[i].tid, SIGUSR1)) {
			report("tgkill worker %d tid %d: %s", i, W[i].tid,
			       strerror(errno));
			continue;
		}
		STORE(W[i].sig_sent, sent + 1);
		W[i].sig_last = now;
	}
	return NULL;
}

static void *setxid_main(void *arg)
{
	unsigned long long rng = mix64(cfg.seed ^ 0x5e7c1d);

	(void)arg;
	setxid_tid = gettid();
	while (!LOAD(setxid_stop)) {
		long long t0, dt;

		sleep_us(1000LL * rnd_range(&rng, 50, 200));
		if (LOAD(setxid_stop))
			break;
		t0 = t_now_ms();
		STORE(setxid_since, t0);
		/* glibc makes every thread do it, with SIGSETXID */
		if (setegid(getegid()))
			report("setegid: %s", strerror(errno));
		dt = t_now_ms() - t0;
		STORE(setxid_since, 0);
		ADD(S.setxid_calls, 1);
		if ((unsigned long long)dt > S.setxid_max_ms)
			S.setxid_max_ms = dt;
		if (dt > SETXID_MAX_MS)
			report("setegid(getegid()) took %lld ms", dt);
	}
	return NULL;
}

/* the watchdog's end */

static void *sweep_thread(void *arg)
{
	(void)arg;
	sweep_pid(P.pid);
	return NULL;
}

static void dump_task(pid_t tid)
{
	char path[64], buf[2048];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (!t_read_text(path, buf, sizeof(buf)))
		fprintf(stderr, "  stat: %s", buf);
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	if (!t_read_text(path, buf, sizeof(buf)))
		fprintf(stderr, "  wchan: %s\n", buf);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tid);
	if (!t_read_text(path, buf, sizeof(buf)))
		fprintf(stderr, "  stack:\n%s", buf);
}

__attribute__((noreturn))
static void die(void)
{
	pthread_t th;
	int i, k;

	fprintf(stderr, "stress: all tasks:\n");
	dump_proc_tasks(P.pid);
	/* children die with their parent thread (PDEATHSIG), make sure */
	for (i = 0; i < cfg.nthreads; i++)
		if (W[i].c)
			for (k = 0; k < W[i].c->nkids && k < MAX_KIDS; k++)
				kill(W[i].c->kids[k].pid, SIGKILL);
	/* the files, unless that hangs too */
	if (!pthread_create(&th, NULL, sweep_thread, NULL)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 3;
		pthread_timedjoin_np(th, NULL, &ts);
	}
	printf("stress: ops=%llu cqes=%llu errors=%llu children=%llu seed=%llu\n",
	       LOAD(P.ops), LOAD(P.cqes), LOAD(P.errors) + 1,
	       LOAD(P.children), cfg.seed);
	fflush(stdout);
	_exit(1);
}

static void watchdog_check(long long now)
{
	long long since;
	int i;

	if (now > t_hard) {
		fprintf(stderr, "stress: FAIL: the run took more than %d s + %d s\n",
			cfg.secs, HARD_EXTRA_MS / 1000);
		for (i = 0; i < cfg.nthreads; i++)
			if (!LOAD(W[i].done)) {
				fprintf(stderr, "worker %d tid %d not done:\n",
					i, W[i].tid);
				dump_task(W[i].tid);
			}
		die();
	}
	for (i = 0; i < cfg.nthreads; i++) {
		if (LOAD(W[i].done))
			continue;
		since = now - LOAD(W[i].progress);
		if (since > PROGRESS_MS) {
			fprintf(stderr, "stress: FAIL: worker %d tid %d made no progress for %lld ms\n",
				i, W[i].tid, since);
			dump_task(W[i].tid);
			die();
		}
	}
	since = LOAD(setxid_since);
	if (since && now - since > SETXID_STUCK_MS) {
		fprintf(stderr, "stress: FAIL: setegid() has not returned for %lld ms\n",
			now - since);
		dump_task(setxid_tid);
		die();
	}
}

/* wait for @flag of every worker, with the watchdog */
static void wait_workers(int which)
{
	int i, all;

	do {
		long long now;

		sleep_us(50000);
		now = t_now_ms();
		if (!LOAD(P.stop) && now >= t_end)
			STORE(P.stop, 1);
		watchdog_check(now);
		all = 1;
		for (i = 0; i < cfg.nthreads; i++)
			all &= which ? LOAD(W[i].done) : LOAD(W[i].quiesced);
	} while (!all);
}

static int join_bounded(pthread_t th, int ms, const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	if (pthread_timedjoin_np(th, NULL, &ts)) {
		fprintf(stderr, "stress: FAIL: the %s thread did not stop in %d ms\n",
			what, ms);
		return -1;
	}
	return 0;
}

/* every fd left on one of our FIFOs: readers of rings closed under them */
static void close_leaked_fifos(void)
{
	char path[64], link[PATH_MAX + 1], prefix[PATH_MAX + 64];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int fd;

	snprintf(prefix, sizeof(prefix), "%s/stress.%d.", cfg.dir[FS_TMPFS],
		 P.pid);
	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strncmp(link, prefix, strlen(prefix))) {
			close(fd);
			S.fifo_leaked++;
		}
	}
	closedir(d);
}

static int count_fds(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* startup */

/* the differential mode, --replay */

/* a CQE as the replay prints it; one thread reaps, no lock */
struct replay_ent {
	unsigned long long ud;
	int op, fs, res;
};

static struct replay_ent *replay_ents;
static size_t replay_n, replay_cap;

static void replay_log(struct req *r, int res)
{
	struct replay_ent *e;

	if (replay_n == replay_cap) {
		replay_cap = replay_cap ? 2 * replay_cap : 1024;
		replay_ents = realloc(replay_ents,
				      replay_cap * sizeof(*replay_ents));
		if (!replay_ents) {
			report("out of memory");
			_exit(1);
		}
	}
	e = &replay_ents[replay_n++];
	e->ud = r->ud;
	e->op = r->op;
	e->fs = r->fs;
	e->res = res;
}

static int replay_cmp(const void *a, const void *b)
{
	const struct replay_ent *x = a, *y = b;

	return x->ud < y->ud ? -1 : x->ud > y->ud;
}

/* the CQEs so far in user_data order, then forget them */
static void replay_print_cqes(void)
{
	size_t i;

	qsort(replay_ents, replay_n, sizeof(*replay_ents), replay_cmp);
	for (i = 0; i < replay_n; i++) {
		struct replay_ent *e = &replay_ents[i];
		int fd = e->op == OP_TMPFILE || e->op == OP_FIFO;

		printf("cqe %llu.%llu %s %s ", e->ud >> 32,
		       e->ud & 0xffffffffULL, op_name[e->op],
		       e->fs < 0 ? "-" : fs_name[e->fs]);
		if (fd && e->res >= 0)
			printf("fd\n");
		else
			printf("%d\n", e->res);
	}
	replay_n = 0;
}

static int replay_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the names (without @c's prefix) and types of @c's files on @fs */
static void replay_print_files(struct wctx *c, int fs)
{
	const char *base = strrchr(c->pfx[fs], '/') + 1;
	char *names[256], path[PATH_SZ];
	size_t len = strlen(base);
	int i, n = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = opendir(cfg.dir[fs]);
	if (!d) {
		report("opendir %s: %s", cfg.dir[fs], strerror(errno));
		return;
	}
	while ((de = readdir(d)) && n < 256)
		if (!strncmp(de->d_name, base, len))
			names[n++] = strdup(de->d_name + len);
	closedir(d);
	qsort(names, n, sizeof(names[0]), replay_name_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s%s", c->pfx[fs], names[i]);
		printf("file %s %s %s\n", fs_name[fs], names[i],
		       lstat(path, &st) ? strerror(errno) :
		       S_ISREG(st.st_mode) ? "regular" :
		       S_ISDIR(st.st_mode) ? "directory" :
		       S_ISFIFO(st.st_mode) ? "fifo" : "other");
		free(names[i]);
	}
}

/* the last batch's FIFO writers are done: the same slots are free */
static void replay_settle(struct wctx *c)
{
	if (fifo_wait_writers(c, FIFO_GIVEUP_MS))
		report("replay: FIFO writers still busy after %lld ms",
		       (long long)FIFO_GIVEUP_MS);
}

/* /proc/thread-self/status lines that are the same run to run */
static void replay_print_thread(void)
{
	static const char *const keys[] = {
		"SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:",
		"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:",
		"NoNewPrivs:", "Seccomp:", "Cpus_allowed_list:",
		"Mems_allowed_list:",
	};
	char line[512];
	FILE *f;
	int i;

	printf("thread leader %s\n", gettid() == getpid() ? "yes" : "no");
	errno = 0;
	i = getpriority(PRIO_PROCESS, gettid());
	printf("thread nice %d%s\n", i, errno ? " (error)" : "");
	printf("thread timerslack %d\n", prctl(PR_GET_TIMERSLACK));
	f = fopen("/proc/thread-self/comm", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("thread comm %s", line);
	if (f)
		fclose(f);
	f = fopen("/proc/thread-self/status", "r");
	if (!f) {
		report("/proc/thread-self/status: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
			if (!strncmp(line, keys[i], strlen(keys[i])))
				printf("thread %s", line);
	fclose(f);
}

/*
 * Per-thread state of the replaying thread that an io-wq worker doesn't
 * share, set once its first workers exist (a worker forked later inherits
 * it), so a handoff that left some of it with the worker shows in
 * replay_print_thread(): comm, a blocked signal, affinity (one CPU of
 * several), nice, timer slack.
 */
static void replay_thread_setup(void)
{
	cpu_set_t cpus;
	sigset_t set;

	prctl(PR_SET_NAME, "iouh-replay");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) > 1) {
		int cpu = 0;

		while (!CPU_ISSET(cpu, &cpus))
			cpu++;
		CPU_ZERO(&cpus);
		CPU_SET(cpu, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus))
			report("sched_setaffinity: %s", strerror(errno));
	}
	if (setpriority(PRIO_PROCESS, gettid(), 3))
		report("setpriority: %s", strerror(errno));
	if (prctl(PR_SET_TIMERSLACK, 123456UL))
		report("PR_SET_TIMERSLACK: %s", strerror(errno));
}

/* a status line's value, without its tab and newline, or "?" */
static void replay_status_value(const char *status, const char *key,
				char *val, size_t len)
{
	const char *p = strstr(status, key);
	size_t n;

	if (!p) {
		snprintf(val, len, "?");
		return;
	}
	p += strlen(key);
	p += strspn(p, "\t ");
	n = strcspn(p, "\n");
	snprintf(val, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/*
 * After each batch: the per-thread state replay_thread_setup() set, which a
 * handoff that left it with the worker would show at once (the identity
 * moves between tasks, the last batch may be back on the first).
 */
static void replay_print_state(int idx, int b)
{
	char status[4096] = "", comm[32] = "?", blk[32], cpus[64];

	t_read_text("/proc/thread-self/status", status, sizeof(status));
	t_read_text("/proc/thread-self/comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = 0;
	replay_status_value(status, "SigBlk:", blk, sizeof(blk));
	replay_status_value(status, "Cpus_allowed_list:", cpus, sizeof(cpus));
	errno = 0;
	printf("state %d.%d comm=%s nice=%d slack=%d blocked=%s cpus=%s\n",
	       idx, b, comm, getpriority(PRIO_PROCESS, gettid()),
	       prctl(PR_GET_TIMERSLACK), blk, cpus);
}

/* --replay: a plain ring (context 0), then a DEFER_TASKRUN one (1) */
static int replay_main(void)
{
	long long handoffs0, inline0;
	int fds0 = count_fds(), idx, b;

	handoffs0 = t_counter("handoffs");
	inline0 = t_counter("inline_issued");
	t_start = t_now_ms();
	releaser_start();
	for (idx = 0; idx < 2 && !LOAD(P.fatal); idx++) {
		struct wctx *c = ctx_new(idx, -1, cfg.seed + idx, NFIFO_WORKER);

		if (ctx_setup(c)) {
			fatal();
			break;
		}
		warm(c);
		/* after the first workers exist: they don't inherit it */
		if (!idx)
			replay_thread_setup();
		for (b = 0; b < cfg.replay && !LOAD(P.fatal); b++) {
			replay_settle(c);
			run_batch(c, c->own, rnd_range(&c->rng, 1, BATCH_MAX));
			replay_print_state(idx, b);
		}
		ring_final_check(c->own, 20);
		replay_print_cqes();
		replay_print_files(c, FS_EXT4);
		replay_print_files(c, FS_TMPFS);
		ctx_teardown(c);
	}
	releaser_stop();
	replay_print_thread();
	sweep_pid(P.pid);
	if (count_fds() != fds0)
		report("%d fds open at the end, %d at the start", count_fds(),
		       fds0);
	fflush(stdout);
	fprintf(stderr, "stress: replay of %d batches per ring in %.1f s: ops=%llu cqes=%llu errors=%llu seed=%llu handoffs %lld -> %lld, inline_issued %lld -> %lld\n",
		cfg.replay, (t_now_ms() - t_start) / 1000.0, P.ops, P.cqes,
		P.errors, cfg.seed, handoffs0, t_counter("handoffs"), inline0,
		t_counter("inline_issued"));
	return P.errors ? 1 : 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --dir-ext4 D --dir-tmpfs T --secs N [--threads N] [--seed S] [--slow F]\n"
		"       %s --dir-ext4 D --dir-tmpfs T --replay N [--seed S]\n"
		"  (directories default to $IOUH_EXT4 and $IOUH_TMPFS)\n",
		argv0, argv0);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir-ext4", required_argument, NULL, 'e' },
		{ "dir-tmpfs", required_argument, NULL, 't' },
		{ "secs", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'r' },
		{ "slow", required_argument, NULL, 'w' },
		{ "replay", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir[2] = { getenv("IOUH_EXT4"), getenv("IOUH_TMPFS") };
	int opt, fs, have_seed = 0;
	struct stat st;

	cfg.secs = 30;
	cfg.nthreads = 6;
	cfg.slow = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			dir[FS_EXT4] = optarg;
			break;
		case 't':
			dir[FS_TMPFS] = optarg;
			break;
		case 's':
			cfg.secs = atoi(optarg);
			break;
		case 'n':
			cfg.nthreads = atoi(optarg);
			break;
		case 'w':
			cfg.slow = atoi(optarg);
			break;
		case 'p':
			cfg.replay = atoi(optarg);
			if (cfg.replay < 1)
				usage(argv[0]);
			break;
		case 'r':
			cfg.seed = strtoull(optarg, NULL, 0);
			have_seed = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || cfg.secs < 1 || cfg.nthreads < 1 ||
	    cfg.slow < 1 ||
	    cfg.nthreads > MAX_WORKERS)
		usage(argv[0]);
	for (fs = 0; fs < 2; fs++) {
		if (!dir[fs] || !*dir[fs]) {
			fprintf(stderr, "stress: no %s directory (--dir-%s or %s)\n",
				fs_name[fs], fs_name[fs],
				fs ? "IOUH_TMPFS" : "IOUH_EXT4");
			usage(argv[0]);
		}
		if (!realpath(dir[fs], cfg.dir[fs]) || stat(cfg.dir[fs], &st) ||
		    !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "stress: %s is not a directory\n",
				dir[fs]);
			exit(2);
		}
		if (strlen(cfg.dir[fs]) > DIR_MAX) {
			fprintf(stderr, "stress: %s: path too long\n",
				cfg.dir[fs]);
			exit(2);
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		cfg.seed = mix64(ts.tv_sec ^ ts.tv_nsec ^ getpid()) & 0xffffffffffffULL;
	}
}

/* what the synchronous syscalls give where it depends on the fs */
static void probe(void)
{
	char path[PATH_MAX + 64];
	int fs, fd;

	for (fs = 0; fs < 2; fs++) {
		fd = open(cfg.dir[fs], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		exp_tmpfile[fs] = fd >= 0 ? 1 : -errno;
		if (fd >= 0)
			close(fd);
	}
	snprintf(path, sizeof(path), "%s/stress.%d.%d.probe",
		 cfg.dir[FS_EXT4], getpid(), gettid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "stress: create %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	exp_xattr = fsetxattr(fd, XATTR_NAME, XATTR_PFX "0000", XATTR_LEN, 0) ?
		-errno : 0;
	close(fd);
	unlink(path);
	if (exp_xattr && exp_xattr != -EOPNOTSUPP) {
		fprintf(stderr, "stress: fsetxattr on %s: %s\n",
			cfg.dir[FS_EXT4], strerror(-exp_xattr));
		exit(1);
	}
}

/* a 2 GiB guest: enough fds for everything, nothing unbounded */
static void limits(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 1024 &&
	    rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long long handoffs0, inline0, handoffs1, inline1, t_done;
	pthread_t sig_th, setxid_th;
	unsigned long long sum_sent = 0;
	int i, k, ok_threads = 1, fds0, fds1;
	sigset_t set;

	parse_args(argc, argv);
	P.pid = getpid();
	P.parent = 1;
	pthread_mutex_init(&P.slot_lock, NULL);
	limits();
	probe();
	sweep_pid(P.pid);
	memset(dirty_buf, 0x5a, sizeof(dirty_buf));
	if (cfg.replay)
		return replay_main();
	kid_errors = mmap(NULL, sizeof(*kid_errors), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (kid_errors == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
	/* only the workers take SIGUSR1 */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	fds0 = count_fds();
	handoffs0 = t_counter("handoffs");
	inline0 = t_counter("inline_issued");
	t_start = t_now_ms();
	t_end = t_start + cfg.secs * 1000LL;
	t_hard = t_end + HARD_EXTRA_MS;
	next_fork = t_start + 500;
	next_exec = t_start + 1000;
	next_kill = t_start + 2000;
	next_rclose = t_start + 1000;

	releaser_start();
	for (k = 0; k < NR_SHARED && 2 * k < cfg.nthreads; k++) {
		shared_ring[k] = calloc(1, sizeof(*shared_ring[k]));
		if (!shared_ring[k])
			return 1;
		pthread_mutex_init(&shared_ring[k]->lock, NULL);
		snprintf(shared_ring[k]->name, sizeof(shared_ring[k]->name),
			 "shared[%d]", k);
		if (ring_init(shared_ring[k]))
			return 1;
	}
	for (i = 0; i < cfg.nthreads; i++) {
		W[i].c = ctx_new(i, i, cfg.seed + i, NFIFO_WORKER);
		if (i / 2 < NR_SHARED)
			W[i].c->shared = shared_ring[i / 2];
		STORE(W[i].progress, t_now_ms());
	}
	for (i = 0; i < cfg.nthreads; i++)
		if (start_thread(&W[i].th, worker_main, W[i].c)) {
			fatal();
			die();
		}
	if (start_thread(&sig_th, signaller, NULL) ||
	    start_thread(&setxid_th, setxid_main, NULL)) {
		fatal();
		die();
	}

	/* the watchdog, until the workers are through with their children */
	wait_workers(0);
	STORE(sig_stop, 1);
	STORE(setxid_stop, 1);
	if (join_bounded(sig_th, 5000, "signaller") ||
	    join_bounded(setxid_th, 10000, "setxid"))
		die();
	STORE(sig_done, 1);
	wait_workers(1);
	for (i = 0; i < cfg.nthreads; i++)
		if (join_bounded(W[i].th, 5000, "worker"))
			ok_threads = 0;
	if (!ok_threads)
		die();

	for (k = 0; k < NR_SHARED; k++) {
		if (!shared_ring[k])
			continue;
		ring_final_check(shared_ring[k], 20);
		io_uring_queue_exit(&shared_ring[k]->ring);
	}
	for (i = 0; i < cfg.nthreads; i++) {
		int sent = LOAD(W[i].sig_sent), recv = LOAD(W[i].sig_recv);

		sum_sent += sent;
		if (sent != recv)
			report("worker %d tid %d: %d SIGUSR1 sent, %d handled",
			       i, W[i].tid, sent, recv);
	}
	if (sig_wrong_tid)
		report("%d SIGUSR1 handled with gettid() not the target's",
		       sig_wrong_tid);
	if (sig_stray)
		report("%d SIGUSR1 handled by a thread that is no worker",
		       sig_stray);
	releaser_stop();
	close_leaked_fifos();
	sweep_pid(P.pid);
	if (LOAD(*kid_errors))
		report("%llu problems found in child processes (their messages above)",
		       LOAD(*kid_errors));
	fds1 = count_fds();
	if (fds1 != fds0)
		report("%d fds open at the end, %d at the start", fds1, fds0);
	t_done = t_now_ms();

	handoffs1 = t_counter("handoffs");
	inline1 = t_counter("inline_issued");
	printf("info: %.1f s; %llu forks, %llu execs, %llu kills; %llu ring closes; "
	       "%llu signals; %llu setxid calls (max %llu ms)\n",
	       (t_done - t_start) / 1000.0, S.forks, S.execs, S.kills,
	       S.ring_closes, sum_sent, S.setxid_calls, S.setxid_max_ms);
	printf("info: cancels (cancel res / open res: fd -ECANCELED -EINTR -ERESTARTSYS): "
	       "0: %llu %llu %llu %llu; -EALREADY: %llu %llu %llu %llu; "
	       "-ENOENT: %llu %llu %llu %llu\n",
	       S.cancel[0][0], S.cancel[0][1], S.cancel[0][2], S.cancel[0][3],
	       S.cancel[1][0], S.cancel[1][1], S.cancel[1][2], S.cancel[1][3],
	       S.cancel[2][0], S.cancel[2][1], S.cancel[2][2], S.cancel[2][3]);
	printf("info: cancels of an open already reaped: -EALREADY %llu, -ENOENT %llu\n",
	       S.cancel_late[0], S.cancel_late[1]);
	printf("info: FIFO writers that found no reader: %llu (ring close: %llu); "
	       "FIFO fds of closed rings %llu; slow warm-ups %llu; "
	       "exec with requests in flight %llu\n",
	       S.fifo_gaveup, S.rclose_gaveup, S.fifo_leaked, S.warm_slow,
	       S.exec_inflight);
	printf("info: ops:");
	for (i = 0; i < NR_OPS; i++)
		printf(" %s=%llu", op_name[i], S.per_op[i]);
	printf("\n");
	/* a module reloaded meanwhile restarted its counters from 0 */
	if (handoffs0 >= 0 || handoffs1 >= 0)
		printf("info: handoffs %lld -> %lld (delta %lld), inline_issued %lld -> %lld (-1: no module)\n",
		       handoffs0, handoffs1, handoffs1 - handoffs0, inline0,
		       inline1);
	printf("stress: ops=%llu cqes=%llu errors=%llu children=%llu seed=%llu\n",
	       P.ops, P.cqes, P.errors, P.children, cfg.seed);
	return P.errors ? 1 : 0;
}
