// SPDX-License-Identifier: GPL-2.0
/*
 * A group stop (SIGSTOP) that begins in the handoff window completes and is
 * reported to the parent, as on stock.
 *
 * A child process C (a second thread H asleep in pause(), so the stop is
 * taken up at once) reads a tmpfs file with IORING_OP_READ into a buffer
 * registered with userfaultfd: the copy to the buffer faults and sleeps
 * until the parent P resolves the fault (UFFDIO_COPY), a blocking op the
 * test controls that a stop doesn't cut short. In mode handoff the inline
 * read hands off, the window widened to WINDOW_MS (debug_window_ms). P takes
 * C's userfaultfd (pidfd_getfd()), waits for the fault, then for the window
 * (mode handoff) and sends C SIGSTOP: every thread of C is asked to stop,
 * the task that handed off and the worker about to take its identity each
 * for itself. P resolves the fault after the window. Then
 * test_group_stop_reported: waitpid(WUNTRACED) reports C stopped by SIGSTOP
 * within STOP_MS; test_continued: after SIGCONT, C's read completes with the
 * page's data and C exits 0.
 *
 * Fails on a kernel/module that loses a thread's part in the stop when the
 * identity moves (a second review's E12: the source's and the worker's
 * parts merged into one): the stop never completes, the parent never hears
 * of it (waitpid(WUNTRACED) and a shell's ^Z hang until SIGCONT). It passed
 * on the code of 5 Dec too: the merge was not reproduced this way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helpers.h"

#define WINDOW_MS	500
#define FAULT_MS	20000
#define OPEN_MS		5000
#define STOP_MS		5000
#define PAGE		4096
#define FILL		0x5a

static char path[4096];

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* C: H asleep, a userfaultfd'd buffer, its fd to P, the inline READ */
static void child(int out)
{
	struct uffdio_register reg = { 0 };
	struct uffdio_api api = { .api = UFFD_API };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned char *buf;
	pthread_t h;
	int uffd, fd, i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(T_CHILD_LIFE_S);
	if (pthread_create(&h, NULL, sleeper, NULL))
		t_fail("child: pthread_create");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		t_fail("child: open %s", path);
	buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (buf == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		t_fail("child: userfaultfd: %s", strerror(errno));
	reg.range.start = (unsigned long)buf;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		t_fail("child: UFFDIO_REGISTER: %s", strerror(errno));
	if (t_queue_init(8, &ring, 0))
		t_fail("child: queue_init");
	t_warm(&ring);
	if (write(out, &uffd, sizeof(uffd)) != sizeof(uffd))
		t_fail("child: write");
	io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, PAGE, 0);
	if (t_submit(&ring) != 1)
		t_fail("child: submit");
	/* the stop and SIGCONT interrupt the wait, as on stock */
	do
		i = io_uring_wait_cqe(&ring, &cqe);
	while (i == -EINTR);
	if (i)
		t_fail("child: wait_cqe: %s", strerror(-i));
	if (cqe->res != PAGE)
		t_fail("child: READ: res %d, expected %d", cqe->res, PAGE);
	for (i = 0; i < PAGE; i++)
		if (buf[i] != 'r')
			t_fail("child: wrong data at %d: 0x%x", i, buf[i]);
	_exit(T_PASS);
}

/* C's userfaultfd, in this process */
static int take_uffd(pid_t pid, int in)
{
	struct pollfd pfd = { .fd = in, .events = POLLIN };
	int pidfd, fd, remote;

	if (poll(&pfd, 1, FAULT_MS) != 1 ||
	    read(in, &remote, sizeof(remote)) != sizeof(remote))
		t_fail("no userfaultfd from the child");
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		t_fail("pidfd_open: %s", strerror(errno));
	fd = syscall(SYS_pidfd_getfd, pidfd, remote, 0);
	if (fd < 0)
		t_fail("pidfd_getfd: %s", strerror(errno));
	close(pidfd);
	return fd;
}

/* the fault of C's READ: its address */
static unsigned long wait_fault(int uffd)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, FAULT_MS) != 1 ||
	    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		t_fail("the child's READ did not fault within %d ms", FAULT_MS);
	return msg.arg.pagefault.address & ~(unsigned long)(PAGE - 1);
}

static void resolve_fault(int uffd, unsigned long addr)
{
	static unsigned char page[PAGE] __attribute__((aligned(PAGE)));
	struct uffdio_copy copy = {
		.dst = addr, .src = (unsigned long)page, .len = PAGE,
	};

	memset(page, FILL, PAGE);
	if (ioctl(uffd, UFFDIO_COPY, &copy) && errno != EEXIST)
		t_fail("UFFDIO_COPY: %s", strerror(errno));
}

/* mode handoff: wait until the window is open (1), or closed again (0) */
static void wait_window(pid_t pid, int open)
{
	long long end = t_now_ms() + OPEN_MS;

	while (t_window_open(pid) != open && t_now_ms() < end)
		usleep(2000);
	if (t_window_open(pid) != open)
		t_fail("the window did not %s within %d ms",
		       open ? "open" : "close", OPEN_MS);
}

static void test_group_stop_reported(pid_t pid)
{
	int status;

	if (!t_wait_child_ms(pid, &status, WUNTRACED, STOP_MS))
		t_fail("the stop of the child was not reported within %d ms",
		       STOP_MS);
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
		t_fail("child: status 0x%x, expected stopped by SIGSTOP", status);
}

static void test_continued(pid_t pid)
{
	int status;

	kill(pid, SIGCONT);
	do {
		if (!t_wait_child_ms(pid, &status, WUNTRACED, STOP_MS))
			t_fail("the child did not exit within %d ms of SIGCONT",
			       STOP_MS);
	} while (!WIFEXITED(status) && !WIFSIGNALED(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != T_PASS)
		t_fail("child: status 0x%x, expected exit %d", status, T_PASS);
}

int main(void)
{
	static char data[PAGE];
	unsigned long addr;
	long long ho;
	int p[2], fd, uffd;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/window_groupstop.%d",
		 t_dir("IOUH_TMPFS"), getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		t_fail("create %s", path);
	t_track(path, 1);
	memset(data, 'r', PAGE);
	if (write(fd, data, PAGE) != PAGE)
		t_fail("write %s", path);
	close(fd);
	t_window_widen(WINDOW_MS);
	ho = t_counter("handoffs");
	if (pipe(p))
		t_fail("pipe");
	pid = fork();
	if (pid < 0)
		t_fail("fork");
	if (!pid)
		child(p[1]);
	close(p[1]);
	uffd = take_uffd(pid, p[0]);
	addr = wait_fault(uffd);
	if (t_mode_handoff())
		wait_window(pid, 1);
	kill(pid, SIGSTOP);
	if (t_mode_handoff())
		wait_window(pid, 0);
	usleep(50 * 1000);
	resolve_fault(uffd, addr);
	test_group_stop_reported(pid);
	test_continued(pid);
	t_expect_handoff(ho);
	return T_PASS;
}
