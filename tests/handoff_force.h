/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_TEST_HANDOFF_FORCE_H
#define IOUH_TEST_HANDOFF_FORCE_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <liburing.h>

/*
 * Forcing a blocking handoff: fsync of dirty data on ext4 (IOUH_EXT4, on
 * virtio-blk with cache=none) really waits for the device, so an inline
 * blocking issue of IORING_OP_FSYNC blocks in the kernel.
 */
#define HF_DIRTY	(256 * 1024)

struct hf {
	struct io_uring ring;
	int fd;
	char path[PATH_MAX];
};

/*
 * A fresh ring (8 entries, @ring_flags; 0: IOUH_RING's kind, see
 * test_queue_init()) and a file in IOUH_EXT4 (skip if unset), then one
 * fsync so the calling thread's io-wq has an idle worker, the target a
 * handoff needs. Call from the thread that will submit. The file is also
 * removed at exit, should fail() or skip() come first.
 */
void hf_init_flags(struct hf *hf, const char *name, unsigned int ring_flags);
void hf_init(struct hf *hf, const char *name);
/* tear down ring and file */
void hf_exit(struct hf *hf);
/* dirty HF_DIRTY bytes of the file with pwrite, so the next fsync blocks */
void hf_dirty(struct hf *hf);
/* wait until an idle io-wq worker of the calling thread shows up */
void hf_wait_idle_worker(void);
/*
 * Make the calling thread warm on @ring: an IOSQE_ASYNC NOP creates its
 * io-wq worker, then wait until that worker idles. Without one, a request
 * can't be handed off, so it isn't issued inline either.
 */
void hf_warm(struct io_uring *ring);
/*
 * Submit one fsync with @sqe_flags and wait: exactly one CQE must arrive,
 * with the right user_data. Returns its res. Signals are fine meanwhile.
 */
int hf_fsync(struct io_uring *ring, int fd, unsigned int sqe_flags);
/* the SQE is already queued and maybe submitted: reap exactly one CQE */
int hf_reap_one(struct io_uring *ring, unsigned long long user_data);
/*
 * Dirty the file and queue an fsync of it with @user_data, as
 * io_uring_submit() would short of entering the kernel: for a test that
 * makes the io_uring_enter() syscall itself (to_submit 1, min_complete 1,
 * GETEVENTS), from asm, to set registers around it. hf_reap_one() after.
 */
void hf_queue_fsync(struct hf *hf, unsigned long long user_data);
/*
 * The forced blocking submit: dirty the file, read "handoffs", fsync with
 * @sqe_flags, check the CQE is 0. Returns the "handoffs" value from before,
 * for expect_handoff() once the caller has done its checks.
 */
long long hf_block_flags(struct hf *hf, unsigned int sqe_flags);
long long hf_block(struct hf *hf);

/*
 * A FIFO in IOUH_TMPFS. openat(O_RDONLY | O_CREAT) of it is force-async (by
 * O_CREAT) and sleeps interruptibly until a writer opens it: a blocking op
 * that blocks for as long as the test wants, unlike the ext4 fsync.
 */
struct hf_fifo {
	char path[PATH_MAX];
	pthread_t writer;
	int writer_started;
	int delay_ms;
	/* 0: wait out delay_ms, 1: go now, -1: give up, see below */
	int go;
	/* for a failure's note: when things happened, hf_now_ms() */
	long long start_ms, submit_ms, submitted_ms, opened_ms;
	/* the writer: 0 still trying, 1 opened, else the errno it stopped on */
	int outcome;
};

void hf_fifo_init(struct hf_fifo *f, const char *name);
/* an openat of the FIFO for reading (O_RDONLY | O_CREAT) into @sqe */
void hf_fifo_prep_open(struct hf_fifo *f, struct io_uring_sqe *sqe,
		       unsigned long long user_data);
/*
 * Open the FIFO for writing after @ms, from a helper thread (nonblocking,
 * retried until a reader waits, for up to 20 s), which releases the reader.
 */
void hf_fifo_release_after(struct hf_fifo *f, int ms);
/*
 * The writer of hf_fifo_release_after() as a deadline: open the FIFO for
 * writing now instead of when the delay is over, or never (it stops trying
 * too), so a test can guard a submit that may block in place and still
 * decide itself when, or whether, the reader is released.
 */
void hf_fifo_release_now(struct hf_fifo *f);
void hf_fifo_release_cancel(struct hf_fifo *f);
/* @res of the openat must be an fd of the FIFO: fail if not, close it */
void hf_fifo_check_fd(struct hf_fifo *f, int res);
/* submit the open alone (-EINTR retried), then reap its CQE within @ms */
void hf_fifo_submit_open(struct io_uring *ring, struct hf_fifo *f,
			 unsigned long long user_data);
void hf_fifo_reap_open(struct io_uring *ring, struct hf_fifo *f,
		       unsigned long long user_data, int ms);
/* join the writer, unlink the FIFO */
void hf_fifo_exit(struct hf_fifo *f);

/*
 * Wait up to @ms for a CQE, retrying on signals: 1 and its user_data and res
 * (the CQE is consumed), 0 if none came in time.
 */
int hf_wait_cqe_ms(struct io_uring *ring, int ms, unsigned long long *user_data,
		   int *res);

/* CLOCK_MONOTONIC in ms */
long long hf_now_ms(void);

/*
 * Widen the handoff window: the promoted worker waits @ms before it takes
 * over the identity (module parameter debug_window_ms, a test hook). 0 if
 * the module has it, -1 if not. hf_window_delay(0) restores the default.
 */
int hf_window_delay(int ms);
/*
 * hf_window_delay(@ms) for the rest of the test, @ms 0 included: the
 * calling process restores the default at exit, and when SIGALRM or SIGTERM
 * (alarm(), the harness' timeout) end it, which then fails the test. In mode
 * handoff a module without the hook gets a note: the test still runs, the
 * window is just short. Returns what hf_window_delay() did.
 */
int hf_window_widen(int ms);
/*
 * Is a widened window open in process @pid right now: one of its threads,
 * a promoted worker, waits out debug_window_ms (in state D). For notes.
 */
int hf_window_open(pid_t pid);
/* the state letter of task @tid of process @pid (R, S, D, ...), 0 if gone */
char hf_task_state(pid_t pid, pid_t tid);
/* wait up to @ms until that task sleeps (S or D): 1 if it does, 0 if not */
int hf_wait_asleep(pid_t pid, pid_t tid, int ms);
/* remove the hf_init() file @name that a killed task @tid left behind */
void hf_remove_file(const char *name, pid_t tid);

/* read a small text file into @buf (NUL terminated), -1 on error */
int read_text(const char *path, char *buf, size_t size);
/* run @fn(@arg) in a new pthread and join it */
void run_in_thread(void *(*fn)(void *), void *arg);
/* run @fn as the group leader (@arg 1), then in a new thread (@arg NULL) */
void run_leader_and_thread(void *(*fn)(void *));

#endif
