// SPDX-License-Identifier: GPL-2.0
/*
 * A blocking request whose submitter handed its identity off still is an
 * io-wq request: IORING_OP_ASYNC_CANCEL and the ring's exit cancel it, as
 * they cancel a request running on io-wq in stock 7.2.
 *
 * Blocking is forced by openat(O_RDONLY | O_CREAT) of a FIFO, which sleeps
 * until a writer opens the FIFO; no writer comes (but a guard one, 4 s after
 * the submit, should the submit block in place). Each case in a warm thread
 * (an idle io-wq worker to hand off to):
 * - cancel: the open is submitted, 200 ms later an ASYNC_CANCEL for its
 *   user_data. The open must complete within 2 s with a negative res:
 *   -ERESTARTSYS (the io-wq worker's sleep is interrupted by the cancel's
 *   notification), -EINTR or -ECANCELED; which one is printed. The cancel
 *   completes with -EALREADY (found running) or -ENOENT, both stock 7.2:
 *   io_try_cancel() (io_uring/cancel.c) signals the running worker on its
 *   first io-wq scan, but falls through past that -EALREADY to the poll,
 *   waitid, futex and timeout lists and comes back with -ENOENT; then
 *   __io_async_cancel()'s slow path scans every io-wq again and returns
 *   -EALREADY only if the interrupted worker is still on the request.
 *   Which one wins is the race between that second scan and the worker, so
 *   -ENOENT passes only beside an interrupted open.
 * - ring exit: on a second ring the open is submitted, 200 ms later the
 *   ring is closed with io_uring_queue_exit(). The ring's exit work must
 *   cancel the open, so no reader waits on the FIFO anymore and an
 *   O_WRONLY | O_NONBLOCK open of it fails with ENXIO. That probe would
 *   release a reader still waiting, so it runs once: when no thread of ours
 *   has slept in the FIFO open (/proc/self/task/<tid>/wchan) for 200 ms, or
 *   5 s after the exit; 1 s after it if wchan didn't show the open before.
 *
 * Fails on a kernel/module that loses track of a handed-off request: the
 * cancel doesn't find it (-ENOENT) and the open stays blocked, and after
 * the ring's exit a reader still waits (the writer's open succeeds).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define OPEN_UD		0xf1f0ULL
#define CANCEL_UD	0xca9cULL
#define SUBMIT_MAX_MS	1000
#define PENDING_MS	200
#define CANCEL_MAX_MS	2000
#define EXIT_MAX_MS	5000
/* no thread in the FIFO open for this long: it is gone */
#define EXIT_GRACE_MS	200
/* without wchan, the probe's delay after the exit */
#define EXIT_BLIND_MS	1000
/* the guard writer, past every bound above that comes before the checks */
#define GUARD_MS	4000
#define REAP_MS		5000

/* submit the FIFO open with the guard writer armed, it must be quick */
static void submit_open(struct io_uring *ring, struct t_fifo *f,
			const char *what)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	unsigned long long ud;
	long long t;
	int ret;

	if (!sqe)
		t_fail("%s: no SQE", what);
	t_fifo_prep_open(f, sqe, OPEN_UD);
	t_fifo_release_after(f, GUARD_MS);
	t = t_now_ms();
	ret = io_uring_submit(ring);
	t = t_now_ms() - t;
	if (ret != 1)
		t_fail("%s: submit returned %d, expected 1", what, ret);
	if (t > SUBMIT_MAX_MS)
		t_fail("%s: submit took %lld ms (max %d), the open blocked in place",
		     what, t, SUBMIT_MAX_MS);
	usleep(PENDING_MS * 1000);

	/* without a writer nothing can have completed */
	if (t_wait_cqe_ms(ring, 0, &ud, &ret))
		t_fail("%s: CQE user_data %#llx res %d without a writer",
		     what, ud, ret);
}

static const char *res_name(int res)
{
	switch (res) {
	case -512:
		return "-ERESTARTSYS";
	case -EINTR:
		return "-EINTR";
	case -ECANCELED:
		return "-ECANCELED";
	}
	return NULL;
}

/* ASYNC_CANCEL of the open, which a handoff took over */
static void *test_async_cancel(void *arg)
{
	int got_cancel = 0, got_open = 0, cancel_res = 0, open_res = 0, res;
	const char *what = "async cancel";
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct t_fifo f;
	long long end;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "cancel_handed_off");
	t_fifo_init(&f, "cancel_handed_off");
	submit_open(&tf.ring, &f, what);

	sqe = io_uring_get_sqe(&tf.ring);
	if (!sqe)
		t_fail("no SQE");
	io_uring_prep_cancel64(sqe, OPEN_UD, 0);
	io_uring_sqe_set_data64(sqe, CANCEL_UD);
	res = io_uring_submit(&tf.ring);
	if (res != 1)
		t_fail("%s: submit of the cancel returned %d", what, res);

	end = t_now_ms() + CANCEL_MAX_MS;
	while (!got_cancel || !got_open) {
		long long left = end - t_now_ms();

		if (left < 0 || !t_wait_cqe_ms(&tf.ring, left, &ud, &res))
			break;
		if (ud == CANCEL_UD && !got_cancel) {
			got_cancel = 1;
			cancel_res = res;
		} else if (ud == OPEN_UD && !got_open) {
			got_open = 1;
			open_res = res;
		} else {
			t_fail("%s: unexpected CQE user_data %#llx res %d",
			     what, ud, res);
		}
	}
	if (!got_open) {
		/* release the reader, to leave nothing blocked behind */
		t_fifo_release_now(&f);
		t_wait_cqe_ms(&tf.ring, REAP_MS, &ud, &res);
		if (got_cancel)
			t_fail("%s: the open still waited %d ms after the cancel, which returned %d",
			     what, CANCEL_MAX_MS, cancel_res);
		t_fail("%s: neither the cancel nor the open completed in %d ms",
		     what, CANCEL_MAX_MS);
	}
	t_fifo_release_cancel(&f);
	if (!got_cancel)
		t_fail("%s: no CQE for the cancel", what);
	/*
	 * -ENOENT beside an interrupted open: the first scan signalled it, the
	 * second found its worker done (the header comment has the stock path).
	 * -ENOENT beside an open that kept waiting is the bug, reported above.
	 */
	if (cancel_res != -EALREADY && cancel_res != -ENOENT)
		t_fail("%s: cancel res %d (%s), expected -EALREADY or -ENOENT; the open gave %d",
		     what, cancel_res, strerror(-cancel_res), open_res);
	if (open_res >= 0)
		t_fail("%s: the cancelled open returned fd %d", what, open_res);
	if (!res_name(open_res))
		t_fail("%s: the cancelled open returned %d (%s), expected -ERESTARTSYS, -EINTR or -ECANCELED",
		     what, open_res, strerror(-open_res));
	fprintf(stderr, "note: the cancelled openat completed with %d (%s), the cancel with %s\n",
		open_res, res_name(open_res),
		cancel_res == -EALREADY ? "-EALREADY" : "-ENOENT");
	if (t_wait_cqe_ms(&tf.ring, 50, &ud, &res))
		t_fail("%s: extra CQE user_data %#llx res %d", what, ud, res);
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return NULL;
}

/* threads of ours asleep in a FIFO open, by their wchan */
static int fifo_sleepers(void)
{
	struct dirent *de;
	char path[300], buf[128];
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/wchan",
			 de->d_name);
		if (t_read_text(path, buf, sizeof(buf)))
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		n += !strcmp(buf, "wait_for_partner") ||
		     !strcmp(buf, "fifo_open");
	}
	closedir(d);
	return n;
}

/* the ring's exit must cancel the open, which a handoff took over */
static void *test_ring_exit(void *arg)
{
	const char *what = "ring exit";
	struct io_uring ring;
	struct t_fifo f;
	int ret, seen, fd;
	long long t, last;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "cancel_handed_off");
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		t_fail("queue_init: %s", strerror(-ret));
	t_fifo_init(&f, "cancel_handed_off");
	submit_open(&ring, &f, what);
	/* the guard must not release the reader, the probe below decides */
	t_fifo_release_cancel(&f);

	seen = fifo_sleepers();
	io_uring_queue_exit(&ring);
	t = t_now_ms();
	if (seen) {
		/* woken isn't gone: wait until the open has left for a while */
		last = t;
		while (t_now_ms() - last < EXIT_GRACE_MS &&
		       t_now_ms() - t < EXIT_MAX_MS) {
			if (fifo_sleepers())
				last = t_now_ms();
			usleep(10 * 1000);
		}
	} else {
		usleep(EXIT_BLIND_MS * 1000);
	}
	t = t_now_ms() - t;

	fd = open(f.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		/* it released the reader: let its open finish, then report */
		usleep(100 * 1000);
		close(fd);
		t_fail("%s: a reader still waited on the FIFO %lld ms after io_uring_queue_exit()",
		     what, t);
	}
	if (errno != ENXIO)
		t_fail("%s: open of the FIFO for writing: %s, expected ENXIO",
		     what, strerror(errno));
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_run_in_thread(test_async_cancel, NULL);
	t_run_in_thread(test_ring_exit, NULL);
	return T_PASS;
}
