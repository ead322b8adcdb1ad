/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_TEST_HANDOFF_FORCE_H
#define IOUH_TEST_HANDOFF_FORCE_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
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
 * A fresh ring (8 entries, @ring_flags) and a file in IOUH_EXT4 (skip if
 * unset), then one fsync so the calling thread's io-wq has an idle worker,
 * the target a handoff needs. Call from the thread that will submit. The
 * file is also removed at exit, should fail() or skip() come first.
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
 * Submit one fsync with @sqe_flags and wait: exactly one CQE must arrive,
 * with the right user_data. Returns its res. Signals are fine meanwhile.
 */
int hf_fsync(struct io_uring *ring, int fd, unsigned int sqe_flags);
/* the SQE is already queued and maybe submitted: reap exactly one CQE */
int hf_reap_one(struct io_uring *ring, unsigned long long user_data);
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
/* @res of the openat must be an fd of the FIFO: fail if not, close it */
void hf_fifo_check_fd(struct hf_fifo *f, int res);
/* join the writer, unlink the FIFO */
void hf_fifo_exit(struct hf_fifo *f);

/* CLOCK_MONOTONIC in ms */
long long hf_now_ms(void);

/*
 * Widen the handoff window: the promoted worker waits @ms before it takes
 * over the identity (module parameter debug_window_ms, a test hook). 0 if
 * the module has it, -1 if not. hf_window_delay(0) restores the default.
 */
int hf_window_delay(int ms);

/* read a small text file into @buf (NUL terminated), -1 on error */
int read_text(const char *path, char *buf, size_t size);
/* run @fn(@arg) in a new pthread and join it */
void run_in_thread(void *(*fn)(void *), void *arg);
/* run @fn as the group leader (@arg 1), then in a new thread (@arg NULL) */
void run_leader_and_thread(void *(*fn)(void *));

#endif
