// SPDX-License-Identifier: GPL-2.0
/*
 * A signal that arrives while a request sleeps interruptibly in its inline
 * issue must not change the request's result, and must still be delivered.
 *
 * openat(O_RDONLY | O_CREAT) of an existing FIFO is force-async (O_CREAT)
 * and sleeps interruptibly until a writer opens the FIFO. A helper thread
 * sends SIGUSR1 (handler without SA_RESTART) to the submitter after 300 ms,
 * then opens the FIFO for writing after another 300 ms. The CQE must carry
 * a FIFO fd, as on io-wq in stock 7.2, and the handler must run once. Mode
 * handoff: the openat was issued inline (one inline issue).
 *
 * Fails on a module that lets the signal interrupt the inline issue: the
 * CQE then carries -ERESTARTSYS (-512) or -EINTR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <liburing.h>
#include "helpers.h"

#define FIFO_UD	0xf1f0

static char fifo[4096];
static pid_t submitter;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void *helper(void *arg)
{
	int fd;

	(void)arg;
	usleep(300 * 1000);
	syscall(SYS_tgkill, getpid(), submitter, SIGUSR1);
	usleep(300 * 1000);
	fd = open(fifo, O_WRONLY);
	if (fd < 0)
		t_fail("open %s for writing: %s", fifo, strerror(errno));
	usleep(100 * 1000);
	close(fd);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	pthread_t thr;
	struct stat st;
	long long in;
	int res;

	snprintf(fifo, sizeof(fifo), "%s/inline_signal.%d",
		 t_dir("IOUH_TMPFS"), getpid());
	unlink(fifo);
	if (mkfifo(fifo, 0600))
		t_fail("mkfifo: %s", strerror(errno));
	if (sigaction(SIGUSR1, &sa, NULL))
		t_fail("sigaction");
	if (io_uring_queue_init(8, &ring, 0))
		t_fail("queue_init");
	/* an idle worker to hand off to, or the open is punted */
	t_warm(&ring);
	submitter = gettid();
	if (pthread_create(&thr, NULL, helper, NULL))
		t_fail("pthread_create");

	in = t_inline_issued();
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_RDONLY | O_CREAT, 0600);
	io_uring_sqe_set_data64(sqe, FIFO_UD);
	if (io_uring_submit(&ring) != 1)
		t_fail("submit");
	res = t_reap_one(&ring, FIFO_UD);
	unlink(fifo);
	/* before the join: the helper's open would wait for a reader forever */
	if (res < 0)
		t_fail("openat of the FIFO: %d (%s)", res, strerror(-res));
	pthread_join(thr, NULL);
	if (fstat(res, &st) || !S_ISFIFO(st.st_mode))
		t_fail("openat returned fd %d, not the FIFO", res);
	close(res);
	if (handled != 1)
		t_fail("SIGUSR1 handler ran %d times, expected 1", (int)handled);
	t_expect_inline(in, 1);
	io_uring_queue_exit(&ring);
	return T_PASS;
}
