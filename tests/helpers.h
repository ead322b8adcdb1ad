/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The project tests' one helper library (liburing's test/helpers.h is the
 * model), every name prefixed t_ (T_ for constants): the harness' modes and
 * the module's counters and settings, then a forced handoff (t_force_*: a
 * ring and an ext4 file whose fsync blocks), a FIFO whose open blocks as long
 * as a test wants (t_fifo_*), the handoff window and small utilities.
 */
#ifndef IOUH_TEST_HELPERS_H
#define IOUH_TEST_HELPERS_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <liburing.h>

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

/* the longest a forked test child may live before alarm() kills it */
#define T_CHILD_LIFE_S	40

#define t_fail(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); \
		       fputc('\n', stderr); exit(T_FAIL); } while (0)
#define t_skip(...) do { fprintf(stderr, "SKIP: " __VA_ARGS__); \
		       fputc('\n', stderr); exit(T_SKIP); } while (0)

/* IOUH_MODE: stock, handoff or disabled; NULL outside the harness */
const char *t_mode(void);
/* a directory from the environment, or skip */
const char *t_dir(const char *env);
/* a counter under /sys/kernel/io_uring_handoff/, -1 if absent */
long long t_counter(const char *name);
/*
 * The count of one reason in /sys/kernel/io_uring_handoff/refusals (why
 * fallback_task refused a task), -1 if absent.
 */
long long t_refusal(const char *reason);
void t_setting_get(const char *name, char *buf, int len);
void t_setting_set(const char *name, const char *val);

/*
 * IOUH_RING, the kind of ring the tests run on (the harness' ring phases):
 * unset or "plain"; "single": IORING_SETUP_SINGLE_ISSUER; "defer":
 * SINGLE_ISSUER | DEFER_TASKRUN (stock refuses DEFER_TASKRUN alone). A
 * "+regfd" suffix registers the ring's fd too, so the tests' io_uring_enter()
 * calls go through IORING_ENTER_REGISTERED_RING. Fails on anything else.
 */
unsigned int t_ring_flags(void);
int t_ring_regfd(void);
/*
 * io_uring_queue_init(@entries, @ring, @flags). @flags 0: a ring of
 * IOUH_RING's kind, t_ring_flags() and the fd registered if
 * t_ring_regfd(). Returns what io_uring_queue_init() does.
 */
int t_queue_init(unsigned int entries, struct io_uring *ring,
		    unsigned int flags);

/* true if IOUH_MODE is "handoff" */
int t_mode_handoff(void);
/*
 * Mode handoff: counter @name must have moved past @before. If it did not,
 * fail if IOUH_EXPECT_HANDOFF is "1", else skip (not in this build). Other
 * modes: no requirement.
 */
void t_expect_moved(const char *name, long long before);
/* mode handoff: counter @name must still read @before, else fail */
void t_expect_unmoved(const char *name, long long before);
/* t_expect_moved("handoffs", @before): a blocking handoff happened */
void t_expect_handoff(long long before);

/* the inline_issued counter, -1 if the module is not loaded */
long long t_inline_issued(void);
/* mode handoff: exactly @n requests were issued inline since @before */
void t_expect_inline(long long before, long long n);
/* any mode: no request was issued inline since @before */
void t_expect_no_inline(long long before);

/*
 * Forcing a blocking handoff: fsync of dirty data on ext4 (IOUH_EXT4, on
 * virtio-blk with cache=none) really waits for the device, so an inline
 * blocking issue of IORING_OP_FSYNC blocks in the kernel.
 */
#define T_DIRTY	(256 * 1024)

struct t_force {
	struct io_uring ring;
	int fd;
	char path[PATH_MAX];
};

/*
 * A fresh ring (8 entries, @ring_flags; 0: IOUH_RING's kind, see
 * t_queue_init()) and a file in IOUH_EXT4 (skip if unset), then one
 * fsync so the calling thread's io-wq has an idle worker, the target a
 * handoff needs. Call from the thread that will submit. The file is also
 * removed at exit, should t_fail() or t_skip() come first.
 */
void t_force_init_flags(struct t_force *tf, const char *name, unsigned int ring_flags);
void t_force_init(struct t_force *tf, const char *name);
/* tear down ring and file */
void t_force_exit(struct t_force *tf);
/* dirty T_DIRTY bytes of the file with pwrite, so the next fsync blocks */
void t_force_dirty(struct t_force *tf);
/*
 * Wait up to @ms until an idle io-wq worker of the calling thread shows up:
 * 1 if one did (the stress run). t_wait_idle_worker() polls for one up to
 * T_IDLE_WORKER_POLLS times, 1 ms apart, however long that takes on a slow
 * kernel, and goes on either way (the test's checks say what a missing
 * worker means).
 */
int t_wait_idle_worker_ms(int ms);
#define T_IDLE_WORKER_POLLS	2000
void t_wait_idle_worker(void);
/*
 * Make the calling thread warm on @ring: an IOSQE_ASYNC NOP creates its
 * io-wq worker, then wait until that worker idles. Without one, a request
 * can't be handed off, so it isn't issued inline either.
 */
void t_warm(struct io_uring *ring);
/*
 * @n statx of @path in one io_uring_enter(), after an idle worker is
 * there; each CQE must give 0 and @size. @n at most 64.
 */
void t_statx_batch(struct io_uring *ring, const char *path, int n,
		   long long size);
/*
 * Submit one fsync with @sqe_flags and wait: exactly one CQE must arrive,
 * with the right user_data. Returns its res. Signals are fine meanwhile.
 */
int t_fsync(struct io_uring *ring, int fd, unsigned int sqe_flags);
/*
 * io_uring_submit_and_wait(@wait_nr), again while a signal interrupted it
 * before the kernel consumed the SQEs (-EINTR with SQEs still ready).
 * Returns what the last call did. t_submit(): @wait_nr 0, which is what
 * io_uring_submit() is.
 */
int t_submit_and_wait(struct io_uring *ring, unsigned int wait_nr);
int t_submit(struct io_uring *ring);
/* the SQE is already queued and maybe submitted: reap exactly one CQE */
int t_reap_one(struct io_uring *ring, unsigned long long user_data);
/*
 * Dirty the file and queue an fsync of it with @user_data, as
 * io_uring_submit() would short of entering the kernel: for a test that
 * makes the io_uring_enter() syscall itself (to_submit 1, min_complete 1,
 * GETEVENTS), from asm, to set registers around it. t_reap_one() after.
 */
void t_force_queue_fsync(struct t_force *tf, unsigned long long user_data);
/*
 * The forced blocking submit: dirty the file, read "handoffs", fsync with
 * @sqe_flags, check the CQE is 0. Returns the "handoffs" value from before,
 * for t_expect_handoff() once the caller has done its checks.
 */
long long t_force_block_flags(struct t_force *tf, unsigned int sqe_flags);
long long t_force_block(struct t_force *tf);

/*
 * A FIFO in IOUH_TMPFS. openat(O_RDONLY | O_CREAT) of it is force-async (by
 * O_CREAT) and sleeps interruptibly until a writer opens it: a blocking op
 * that blocks for as long as the test wants, unlike the ext4 fsync.
 */
struct t_fifo {
	char path[PATH_MAX];
	pthread_t writer;
	int writer_started;
	int delay_ms;
	/* 0: wait out delay_ms, 1: go now, -1: give up, see below */
	int go;
	/* for a failure's note: when things happened, t_now_ms() */
	long long start_ms, submit_ms, submitted_ms, opened_ms;
	/* the writer: 0 still trying, 1 opened, else the errno it stopped on */
	int outcome;
};

void t_fifo_init(struct t_fifo *f, const char *name);
/* an openat of the FIFO for reading (O_RDONLY | O_CREAT) into @sqe */
void t_fifo_prep_open(struct t_fifo *f, struct io_uring_sqe *sqe,
		       unsigned long long user_data);
/*
 * Open the FIFO for writing after @ms, from a helper thread (nonblocking,
 * retried until a reader waits, for up to 20 s), which releases the reader.
 */
void t_fifo_release_after(struct t_fifo *f, int ms);
/*
 * The writer of t_fifo_release_after() as a deadline: open the FIFO for
 * writing now instead of when the delay is over, or never (it stops trying
 * too), so a test can guard a submit that may block in place and still
 * decide itself when, or whether, the reader is released.
 */
void t_fifo_release_now(struct t_fifo *f);
void t_fifo_release_cancel(struct t_fifo *f);
/* @res of the openat must be an fd of the FIFO: fail if not, close it */
void t_fifo_check_fd(struct t_fifo *f, int res);
/* submit the open alone (-EINTR retried), then reap its CQE within @ms */
void t_fifo_submit_open(struct io_uring *ring, struct t_fifo *f,
			 unsigned long long user_data);
void t_fifo_reap_open(struct io_uring *ring, struct t_fifo *f,
		       unsigned long long user_data, int ms);
/* join the writer, unlink the FIFO */
void t_fifo_exit(struct t_fifo *f);

/*
 * Wait up to @ms for a CQE, retrying on signals: 1 and its user_data and res
 * (the CQE is consumed), 0 if none came in time.
 */
int t_wait_cqe_ms(struct io_uring *ring, int ms, unsigned long long *user_data,
		   int *res);
/*
 * The next CQE within @ms must carry @user_data, else fail naming @what
 * (the request it belongs to): its res.
 */
int t_reap_ud_ms(struct io_uring *ring, unsigned long long user_data, int ms,
		 const char *what);

/* CLOCK_MONOTONIC in ms */
long long t_now_ms(void);
/*
 * waitpid(@pid, WNOHANG | @flags) polled for up to @ms: 1 and the status in
 * @status once @pid changed state, 0 if it didn't in time.
 */
int t_wait_child_ms(pid_t pid, int *status, int flags, int ms);

/*
 * Widen the handoff window: the promoted worker waits @ms before it takes
 * over the identity (module parameter debug_window_ms, a test hook). 0 if
 * the module has it, -1 if not. t_window_delay(0) restores the default.
 */
int t_window_delay(int ms);
/*
 * t_window_delay(@ms) for the rest of the test, @ms 0 included: the
 * calling process restores the default at exit, and when SIGALRM or SIGTERM
 * (alarm(), the harness' timeout) end it, which then fails the test. In mode
 * handoff a module without the hook gets a note: the test still runs, the
 * window is just short. Returns what t_window_delay() did.
 */
int t_window_widen(int ms);
/*
 * Is a widened window open in process @pid right now: one of its threads,
 * a promoted worker, waits out debug_window_ms (in state D). For notes.
 */
int t_window_open(pid_t pid);
/*
 * The named delay points of a debug kernel (kernel/delay-points.patch):
 * from now on the hooks wait @ms at point @name ("notify", "end" busy;
 * "submit_lock", "take" sleep), 0 stops. 0 if the kernel has the point,
 * -1 if not.
 * The harness sets every point back to 0 after each test.
 */
int t_delay_point(const char *name, int ms);
/* t_delay_point(@name, @ms), or skip: the test needs the point */
void t_delay_point_need(const char *name, int ms);
/*
 * The first thread of process @pid (a /proc/@pid/task walk) for which
 * @match(@pid, its tid, @arg) is true: its tid, 0 if none.
 */
pid_t t_find_thread(pid_t pid, int (*match)(pid_t pid, pid_t tid, void *arg),
		    void *arg);
/* the state letter of task @tid of process @pid (R, S, D, ...), 0 if gone */
char t_task_state(pid_t pid, pid_t tid);
/* wait up to @ms until that task sleeps (S or D): 1 if it does, 0 if not */
int t_wait_asleep(pid_t pid, pid_t tid, int ms);
/*
 * For a thread that acts on the tid @tid of this process in the window:
 * wait up to @ms for *@armed (set, release, once that thread is about to
 * submit), then until it sleeps, then @settle_ms more. 1 if it was seen
 * asleep, 0 if not (no settle then).
 */
int t_wait_armed_asleep(const int *armed, pid_t tid, int ms, int settle_ms);
/*
 * A MAP_SHARED mapping of @len zero bytes of a fresh file in IOUH_EXT4
 * (@name and the pid), written with O_DIRECT so none of its pages is in the
 * page cache: a copy from or to it faults and waits for the disk
 * (virtio-blk, cache=none). Its path in @path; t_uncached_unmap() undoes it.
 */
void *t_uncached_map(char *path, size_t path_len, const char *name,
		     size_t len);
void t_uncached_unmap(void *map, const char *path, size_t len);
/* remove the t_force_init() file @name that a killed task @tid left behind */
void t_remove_file(const char *name, pid_t tid);

/*
 * Remove @path at exit (unlink, or rmdir for a directory), should t_fail()
 * or t_skip() come first; @add 0 forgets it once the test removed it. The
 * last tracked goes first, so track a directory before what it holds.
 */
void t_track(const char *path, int add);
/* write @val to @dir/@name (a cgroup or sysfs file), fail on error */
void t_write_file(const char *dir, const char *name, const char *val);
/*
 * Mount cgroup2 at a fresh directory in IOUH_TMPFS named for the pid, its
 * path in @mnt; skip if it can't be mounted. t_cgroup2_umount() undoes it.
 * Every cgroup2 mount shows the one hierarchy: name cgroups for the pid.
 */
void t_cgroup2_mount(char *mnt, size_t len);
void t_cgroup2_umount(const char *mnt);
/* rmdir(@path), again for up to a second while a cgroup still has tasks */
void t_rmdir_busy(const char *path);
/* read a small text file into @buf (NUL terminated), -1 on error */
int t_read_text(const char *path, char *buf, size_t size);
/*
 * The calling process's io-wq workers (comm iou-wrk-*): how many, and the
 * tids of the first @max in @tids (NULL: just count).
 */
int t_worker_tids(pid_t *tids, int max);
/* run @fn(@arg) in a new pthread and join it */
void t_run_in_thread(void *(*fn)(void *), void *arg);
/*
 * Run @fn(true) in the calling thread, the group leader, then @fn(false) in
 * a new pthread and join it.
 */
void t_run_leader_and_thread(void (*fn)(bool leader));
/*
 * Call @cond(@arg) until it returns true, at most @polls times, @ms apart:
 * whether it did. A count of polls, not a deadline, so the wait stretches
 * on a slow (debug) kernel, as T_IDLE_WORKER_POLLS does.
 */
bool t_wait_until(bool (*cond)(void *arg), void *arg, int polls, int ms);

#endif
