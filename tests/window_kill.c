// SPDX-License-Identifier: GPL-2.0
/*
 * A group SIGKILL in the handoff window does not leave the submitter stuck.
 *
 * A directory D in IOUH_EXT4 with a FIFO in it, and a helper process H, a
 * sibling of the child below, that holds D's inode lock (i_rwsem) shared
 * for as long as the test wants: H registers an anonymous buffer with
 * userfaultfd (missing mode) and calls getdents64() of D into it.
 * iterate_dir() takes D's lock, the copy of "." faults on the buffer, and
 * the fault waits until H's main thread resolves it (UFFDIO_COPY) on the
 * test's word.
 *
 * With the lock held, the parent drops the dentry cache (2 to
 * /proc/sys/vm/drop_caches; the FIFO's dentry is unused) and starts a child
 * process C, single threaded and so the group leader, warm (an idle io-wq
 * worker), that submits openat(O_RDONLY | O_CREAT) of D/fifo. Without a
 * cached dentry the O_CREAT lookup takes D's lock exclusively (a cached one
 * would skip it, lookup_fast_for_open()), so the open sleeps
 * uninterruptibly: that first sleep is where the handoff happens. The
 * window is widened to 300 ms (debug_window_ms). The parent waits until C
 * shows state D for 50 ms on end (the leader in mode handoff, any thread
 * else, where io-wq does the open), in mode handoff also until the window
 * is open, sends SIGKILL to C, waits until the window is over, and only
 * then lets H's getdents finish: C's open gets D's lock, finds the FIFO and
 * waits for a writer, interruptibly. No writer ever comes. Before H lets
 * go, the thread that waits for D's lock must have SIGKILL pending, as
 * every thread of a killed group has, io-wq's workers too
 * (complete_signal()): a thread in state D that keeps SIGKILL pending for
 * 50 ms (the others in state D wait in their exit, their SIGKILL taken).
 * C must be reaped within 10 s, killed by SIGKILL. Three rounds, each with
 * a new H and C; first a control round, the same without the window. The
 * handoff counter must move in each round with the window. Skipped without
 * userfaultfd (ENOSYS, EPERM) or drop_caches.
 *
 * Then EXEC_ROUNDS rounds with an execve() for the kill: C also has a
 * thread E, started before the submit, that execs this program (which exits
 * 0 at once) on the parent's word, sent where the kill was. The exec's
 * de_thread() zaps C's other threads with SIGKILL and waits until each has
 * exited: the same checks, and C must exit 0.
 *
 * Fails on a kernel/module whose identity exchange moves SIGKILL off the
 * submitter while that sleeps uninterruptibly ("no SIGKILL pending"): the
 * demoted submitter would sleep on in any wait that only SIGKILL ends
 * (TASK_KILLABLE), and the exit of the process, which waits for io-wq,
 * would hang. The FIFO wait itself is interruptible, io-wq's exit wakes it
 * (a notification signal), so it is not what hangs; "not reaped" checks
 * that nothing else does. Checked to fail with the SIGKILL kept on the
 * source removed from iouh_take_signals() (module/identity.c), and the
 * exec rounds with it kept for a group exit only (SIGNAL_GROUP_EXIT), not
 * for de_thread()'s zap (signal->group_exec_task).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helpers.h"

#define ROUNDS		3
#define EXEC_ROUNDS	2
/* argv[1] of the program C's exec runs */
#define EXEC_CHILD	"--exec-child"
#define WINDOW_MS	300
/* H's getdents in its fault */
#define HOLD_MS		5000
/* H lets go by itself after that, should the word never come */
#define HOLD_LIFE_MS	30000
#define READY_MS	10000
#define D_WAIT_MS	5000
/* that long in state D without a break: the open waits for the lock */
#define STABLE_MS	50
/* the kill inside the window: wait at most this for it to open */
#define OPEN_WAIT_MS	WINDOW_MS
/* after the kill, the window must be over before D's lock is let go */
#define END_WAIT_MS	1000
#define REAP_MS		10000
#define HOLD_PAGES	4
#define OPEN_UD		0xf1f0ULL

/* what H tells the parent */
struct hmsg {
	char what;	/* 'B' blocked, 'D' done, 'E' error */
	int a;		/* B: getdents' tid, D: its result, E: the step */
	int b;		/* E: errno */
};

/* the steps of H that can fail, for 'E' */
enum {
	H_UFFD = 1,
	H_API,
	H_MMAP,
	H_REGISTER,
	H_OPEN,
	H_THREAD,
	H_FAULT,
	H_READ,
};

static const char *const h_step[] = {
	[H_UFFD]	= "userfaultfd",
	[H_API]		= "UFFDIO_API",
	[H_MMAP]	= "mmap",
	[H_REGISTER]	= "UFFDIO_REGISTER",
	[H_OPEN]	= "open of the directory",
	[H_THREAD]	= "pthread_create",
	[H_FAULT]	= "getdents64 did not fault on the buffer",
	[H_READ]	= "read of the fault",
};

static char dir[PATH_MAX], fifo[PATH_MAX];
static pid_t owner;

/* the round in progress, for the cleanup at exit */
static struct {
	pid_t c, h;
	int h_st, h_cmd;
	/* C's thread E execs on a byte here */
	int c_exec;
	/* H could not be reaped: it may hold D's lock, leave D alone */
	int h_stuck;
} cur = { .h_st = -1, .h_cmd = -1, .c_exec = -1 };

/*
 * Not UFFD_USER_MODE_ONLY: the fault to catch is the kernel's, in the copy
 * to userspace. Root may, else /dev/userfaultfd if its mode lets us.
 */
static int uffd_open(void)
{
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

#ifdef USERFAULTFD_IOC_NEW
	if (fd < 0 && errno == EPERM) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW,
				   O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
		if (fd < 0)
			errno = EPERM;
	}
#endif
	return fd;
}

static int uffd_api(int fd)
{
	struct uffdio_api api = { .api = UFFD_API };

	return ioctl(fd, UFFDIO_API, &api);
}

/* in H: what its getdents thread works with */
static struct {
	int dfd;
	void *buf;
	size_t len;
	pid_t gd_tid;
	long gd_res;
	int gd_done;
} hold;

static void *h_getdents(void *arg)
{
	long ret;

	(void)arg;
	__atomic_store_n(&hold.gd_tid, gettid(), __ATOMIC_RELEASE);
	ret = syscall(SYS_getdents64, hold.dfd, hold.buf, hold.len);
	hold.gd_res = ret < 0 ? -errno : ret;
	__atomic_store_n(&hold.gd_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void h_send(int fd, char what, int a, int b)
{
	struct hmsg m = { .what = what, .a = a, .b = b };
	ssize_t n;

	n = write(fd, &m, sizeof(m));
	(void)n;
}

static void h_error(int fd, int step, int err)
{
	h_send(fd, 'E', step, err);
	_exit(T_FAIL);
}

/* in H: wait up to @ms for POLLIN on @fd, 0 if none */
static int h_poll(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	do
		ret = poll(&pfd, 1, ms);
	while (ret < 0 && errno == EINTR);
	return ret > 0;
}

/*
 * H: hold D's lock shared in a getdents stuck in a userfault, report, and
 * let the fault go on the parent's word ('G', or EOF), or after
 * HOLD_LIFE_MS.
 */
static void holder(int st, int cmd, pid_t parent)
{
	struct uffdio_register reg = { 0 };
	struct uffdio_copy copy = { 0 };
	size_t page, off = 0;
	struct uffd_msg msg;
	pthread_t gd;
	long long end;
	sigset_t all;
	char *zero;
	int uffd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(T_FAIL);
	/* a signal would end the fault wait with EFAULT, only SIGKILL may */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);

	page = sysconf(_SC_PAGESIZE);
	hold.len = HOLD_PAGES * page;
	uffd = uffd_open();
	if (uffd < 0)
		h_error(st, H_UFFD, errno);
	if (uffd_api(uffd))
		h_error(st, H_API, errno);
	hold.buf = mmap(NULL, hold.len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* what UFFDIO_COPY fills the buffer with */
	zero = mmap(NULL, hold.len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (hold.buf == MAP_FAILED || zero == MAP_FAILED)
		h_error(st, H_MMAP, errno);
	reg.range.start = (uintptr_t)hold.buf;
	reg.range.len = hold.len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		h_error(st, H_REGISTER, errno);
	hold.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hold.dfd < 0)
		h_error(st, H_OPEN, errno);

	/* D's lock is held once the copy of "." faults */
	errno = pthread_create(&gd, NULL, h_getdents, NULL);
	if (errno)
		h_error(st, H_THREAD, errno);
	end = t_now_ms() + HOLD_MS;
	while (!h_poll(uffd, 10))
		if (__atomic_load_n(&hold.gd_done, __ATOMIC_ACQUIRE) ||
		    t_now_ms() > end)
			h_error(st, H_FAULT,
				hold.gd_done ? -hold.gd_res : ETIMEDOUT);
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		h_error(st, H_READ, errno);
	if (msg.event != UFFD_EVENT_PAGEFAULT)
		h_error(st, H_READ, EINVAL);
	h_send(st, 'B', __atomic_load_n(&hold.gd_tid, __ATOMIC_ACQUIRE), 0);

	/* the word, EOF or the time is up: let go in any case */
	h_poll(cmd, HOLD_LIFE_MS);
	/* the whole buffer at once, getdents faults no more */
	while (off < hold.len) {
		copy.dst = (uintptr_t)hold.buf + off;
		copy.src = (uintptr_t)zero + off;
		copy.len = hold.len - off;
		copy.mode = 0;
		copy.copy = 0;
		if (!ioctl(uffd, UFFDIO_COPY, &copy))
			break;
		if (copy.copy > 0)
			off += copy.copy;
		else if (errno == EEXIST)
			off += page;
		else if (errno != EAGAIN)
			break;
	}
	pthread_join(gd, NULL);
	h_send(st, 'D', hold.gd_res, 0);
	_exit(0);
}

/* a message from H within @ms into @m; 0 if it exited or took long */
static int h_recv(int fd, struct hmsg *m, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long end = t_now_ms() + ms;

	while (t_now_ms() < end) {
		int ret = poll(&pfd, 1, end - t_now_ms());

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return 0;
		return read(fd, m, sizeof(*m)) == sizeof(*m);
	}
	return 0;
}

/* reap @pid within @ms; its status in @st. 0 if not, -1 on error */
static int reap(pid_t pid, int ms, int *st)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	long long end = t_now_ms() + ms;
	pid_t ret;

	do {
		ret = waitpid(pid, st, WNOHANG);
		if (ret == pid)
			return 1;
		if (ret < 0 && errno != EINTR)
			return -1;
		nanosleep(&tick, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/*
 * Whatever state a round ends in: kill C and H, let a FIFO open go with a
 * writer, reap both. Run at exit too, after t_fail() or t_skip().
 */
static void round_cleanup(void)
{
	int st;

	if (owner != getpid())
		return;
	if (cur.c > 0)
		kill(cur.c, SIGKILL);
	if (cur.h > 0) {
		/* the getdents fault ends, D's lock goes */
		kill(cur.h, SIGKILL);
		if (reap(cur.h, REAP_MS, &st) == 0)
			cur.h_stuck = 1;
		cur.h = 0;
	}
	if (cur.c > 0) {
		long long end = t_now_ms() + REAP_MS;

		/* a reader stuck in the FIFO open, a writer lets it go */
		while (!reap(cur.c, 5, &st) && t_now_ms() < end) {
			int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
		}
		t_remove_file("window_kill", cur.c);
		cur.c = 0;
	}
	if (cur.h_st >= 0)
		close(cur.h_st);
	if (cur.h_cmd >= 0)
		close(cur.h_cmd);
	cur.h_st = cur.h_cmd = -1;
}

static void dir_remove(void)
{
	if (owner != getpid() || cur.h_stuck)
		return;
	unlink(fifo);
	rmdir(dir);
}

static void dir_make(void)
{
	const char *base = t_dir("IOUH_EXT4");

	snprintf(dir, sizeof(dir), "%s/window_kill.%d", base, getpid());
	snprintf(fifo, sizeof(fifo), "%s/window_kill.%d/fifo", base,
		 getpid());
	owner = getpid();
	atexit(dir_remove);
	if (mkdir(dir, 0755))
		t_fail("mkdir %s: %s", dir, strerror(errno));
	if (mkfifo(fifo, 0600))
		t_fail("mkfifo %s: %s", fifo, strerror(errno));
	/* registered later, so it runs first */
	atexit(round_cleanup);
}

/*
 * Drop the FIFO's dentry, with all unused ones: then the O_CREAT lookup
 * needs D's lock. Twice, a dentry used since the last drop only ages in
 * the first.
 */
static void drop_dentries(void)
{
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "2\n", 2) != 2)
			t_fail("drop_caches: %s", strerror(errno));
		close(fd);
	}
}

static void check_uffd(void)
{
	int fd = uffd_open();

	if (fd < 0) {
		if (errno == ENOSYS)
			t_skip("userfaultfd: ENOSYS, a kernel without CONFIG_USERFAULTFD");
		if (errno == EPERM)
			t_skip("userfaultfd: EPERM, no CAP_SYS_PTRACE nor vm.unprivileged_userfaultfd nor /dev/userfaultfd");
		t_fail("userfaultfd: %s", strerror(errno));
	}
	if (uffd_api(fd))
		t_fail("UFFDIO_API: %s", strerror(errno));
	close(fd);
}

/* start H and wait until it holds D's lock */
static void holder_start(void)
{
	pid_t parent = getpid();
	int st[2], cmd[2];
	struct hmsg m;

	if (pipe2(st, O_CLOEXEC) || pipe2(cmd, O_CLOEXEC))
		t_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	cur.h = fork();
	if (cur.h < 0)
		t_fail("fork: %s", strerror(errno));
	if (!cur.h) {
		close(st[0]);
		close(cmd[1]);
		holder(st[1], cmd[0], parent);
	}
	close(st[1]);
	close(cmd[0]);
	cur.h_st = st[0];
	cur.h_cmd = cmd[1];

	if (!h_recv(cur.h_st, &m, HOLD_MS))
		t_fail("the helper did not report its getdents within %d ms",
		     HOLD_MS);
	if (m.what == 'E') {
		const char *step = m.a > 0 && m.a <= H_READ ? h_step[m.a] : "?";

		if (m.a == H_UFFD && (m.b == ENOSYS || m.b == EPERM))
			t_skip("the helper's %s: %s", step, strerror(m.b));
		t_fail("the helper: %s: %s", step, strerror(m.b));
	}
	if (m.what != 'B')
		t_fail("the helper said '%c'", m.what);
	if (!t_wait_asleep(cur.h, m.a, HOLD_MS))
		t_fail("the helper's getdents (tid %d) does not sleep in its fault",
		     m.a);
}

/* let H's fault go, and with it D's lock */
static void holder_release(void)
{
	struct hmsg m;
	int st, ret;

	if (write(cur.h_cmd, "G", 1) != 1)
		t_fail("write to the helper: %s", strerror(errno));
	if (!h_recv(cur.h_st, &m, HOLD_MS) || m.what != 'D')
		t_fail("the helper's getdents did not finish within %d ms of the release",
		     HOLD_MS);
	ret = reap(cur.h, HOLD_MS, &st);
	if (ret < 0)
		t_fail("waitpid: %s", strerror(errno));
	if (!ret)
		t_fail("the helper did not exit");
	cur.h = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		t_fail("the helper: status %#x", st);
	if (m.a <= 0)
		t_fail("the helper's getdents of %s: %d, expected entries", dir,
		     m.a);
	close(cur.h_st);
	close(cur.h_cmd);
	cur.h_st = cur.h_cmd = -1;
}

/* C's thread E: exec this program on the parent's byte, EOF is no word */
static void *exec_on_word(void *arg)
{
	int fd = (int)(long)arg;
	char c;

	if (read(fd, &c, 1) == 1)
		execl("/proc/self/exe", "window_kill", EXEC_CHILD, (char *)NULL);
	return NULL;
}

/*
 * C: warm up, say 'R', submit the FIFO open and wait: only the kill (or
 * the exec, if @exec_fd isn't -1) ends this, no writer ever comes.
 */
static void child(int out, int exec_fd)
{
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct t_force tf;
	pthread_t e;
	int ret, res;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(T_CHILD_LIFE_S);
	if (exec_fd >= 0) {
		errno = pthread_create(&e, NULL, exec_on_word,
				       (void *)(long)exec_fd);
		if (errno)
			t_fail("child: pthread_create: %s", strerror(errno));
	}
	t_force_init(&tf, "window_kill");
	sqe = io_uring_get_sqe(&tf.ring);
	if (!sqe)
		t_fail("child: no SQE");
	io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_RDONLY | O_CREAT, 0600);
	io_uring_sqe_set_data64(sqe, OPEN_UD);
	if (write(out, "R", 1) != 1)
		t_fail("child: write: %s", strerror(errno));
	ret = t_submit(&tf.ring);
	if (ret != 1)
		t_fail("child: submit returned %d", ret);
	if (t_wait_cqe_ms(&tf.ring, T_CHILD_LIFE_S * 1000, &ud, &res))
		t_fail("child: CQE user_data %#llx res %d without a writer",
		     ud, res);
	exit(T_FAIL);
}

/* C, with its thread E if @exec; the fd its 'R' comes on */
static int child_start(int exec)
{
	int p[2], x[2] = { -1, -1 };

	if (pipe2(p, O_CLOEXEC) || (exec && pipe2(x, O_CLOEXEC)))
		t_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	cur.c = fork();
	if (cur.c < 0)
		t_fail("fork: %s", strerror(errno));
	if (!cur.c) {
		close(p[0]);
		if (exec)
			close(x[1]);
		child(p[1], x[0]);
	}
	close(p[1]);
	if (exec) {
		close(x[0]);
		cur.c_exec = x[1];
	}
	return p[0];
}

/* the byte 'R' from C within @ms; 0 if it exited or took long */
static int wait_ready(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long end = t_now_ms() + ms;
	char c;

	while (t_now_ms() < end) {
		int ret = poll(&pfd, 1, end - t_now_ms());

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return 0;
		return read(fd, &c, 1) == 1 && c == 'R';
	}
	return 0;
}

/* the pending signals of @pid's thread @tid (SigPnd), -1 if unreadable */
static long long sig_pending(pid_t pid, pid_t tid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nSigPnd:");
	if (!p)
		return -1;
	return strtoll(p + strlen("\nSigPnd:"), NULL, 16);
}

/* SIGKILL pending on @pid's thread @tid */
static int has_sigkill(pid_t pid, pid_t tid)
{
	long long pnd = sig_pending(pid, tid);

	return pnd > 0 && (pnd & (1LL << (SIGKILL - 1)));
}

static int in_d(pid_t pid, pid_t tid, void *killed)
{
	return t_task_state(pid, tid) == 'D' &&
	       (!*(int *)killed || has_sigkill(pid, tid));
}

/*
 * A thread of @pid in state D, @prev if it still is, with SIGKILL pending
 * if @killed: its tid, 0 if none.
 */
static pid_t thread_in_d(pid_t pid, pid_t prev, int killed)
{
	if (prev && in_d(pid, prev, &killed))
		return prev;
	return t_find_thread(pid, in_d, &killed);
}

/*
 * Wait up to @ms until the open waits for D's lock: a thread of @pid (the
 * leader if @leader) in state D, and still the same one for STABLE_MS, so
 * not some other short sleep of the child that the kill would miss the
 * open by. 1 if seen.
 */
static int wait_open_in_d(pid_t pid, int leader, int ms)
{
	struct timespec one = { 0, 1000 * 1000 };
	long long since = 0, end = t_now_ms() + ms;
	pid_t tid = 0, t;

	do {
		if (leader)
			t = t_task_state(pid, pid) == 'D' ? pid : 0;
		else
			t = thread_in_d(pid, tid, 0);
		if (!t || t != tid)
			since = t_now_ms();
		else if (t_now_ms() - since >= STABLE_MS)
			return 1;
		tid = t;
		nanosleep(&one, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/*
 * The thread that waits for D's lock, with SIGKILL pending, seen within
 * @ms: a thread in state D with SIGKILL pending, the same one STABLE_MS
 * later. The other threads that wait in state D do so in their exit, their
 * SIGKILL taken. Its tid, 0 if not seen.
 */
static pid_t killed_waiter(pid_t pid, int ms)
{
	struct timespec stable = { 0, STABLE_MS * 1000 * 1000 };
	struct timespec one = { 0, 1000 * 1000 };
	long long end = t_now_ms() + ms;
	pid_t tid;

	do {
		tid = thread_in_d(pid, 0, 1);
		if (tid) {
			nanosleep(&stable, NULL);
			if (thread_in_d(pid, tid, 1) == tid)
				return tid;
		}
		nanosleep(&one, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/* wait up to @ms until t_window_open(@pid) is @open: 1 if it was */
static int wait_window(pid_t pid, int open, int ms)
{
	struct timespec one = { 0, 1000 * 1000 };
	long long end = t_now_ms() + ms;

	do {
		if (!t_window_open(pid) == !open)
			return 1;
		nanosleep(&one, NULL);
	} while (t_now_ms() < end);
	return 0;
}

/* for a failure: what the child's threads do */
static void dump_tasks(pid_t pid)
{
	char path[300], wchan[64], comm[64], state;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 de->d_name);
		if (t_read_text(path, wchan, sizeof(wchan)))
			wchan[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid,
			 de->d_name);
		if (t_read_text(path, comm, sizeof(comm)))
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		state = t_task_state(pid, atoi(de->d_name));
		fprintf(stderr, "note: task %s (%s) state %c wchan %s\n",
			de->d_name, comm, state ? state : '?', wchan);
	}
	closedir(d);
}

/* the child died of our SIGKILL, or exited 0 after its @exec, nothing else */
static void check_killed(pid_t pid, int st, const char *what, int exec)
{
	t_remove_file("window_kill", pid);
	if (exec ? WIFEXITED(st) && WEXITSTATUS(st) == T_PASS :
		   WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return;
	if (exec)
		t_fail("%s: child status %#x, expected exit 0 after its exec",
		       what, st);
	if (WIFEXITED(st))
		t_fail("%s: the child exited with %d before the kill (it said why)",
		     what, WEXITSTATUS(st));
	t_fail("%s: child status %#x, expected killed by SIGKILL", what, st);
}

/*
 * One round: H holds D's lock, C's open waits for it, SIGKILL to C (its
 * thread E's exec if @exec), then (the window over) the lock goes and C's
 * open goes on to the FIFO. With @window, in mode handoff, the kill lands
 * in the handoff window.
 */
static void run_round(const char *what, int window, int exec, int *in_window)
{
	long long before, t_kill, t_end;
	int fd, st, ret, inside, ended;
	int leader, widened;
	pid_t pid;

	widened = !t_window_widen(window);
	/* the submitter keeps the tid, in D, for the window, if there is one */
	leader = window && widened && t_mode_handoff();
	holder_start();
	drop_dentries();

	before = t_counter("handoffs");
	fd = child_start(exec);
	pid = cur.c;
	if (!wait_ready(fd, READY_MS))
		t_fail("%s: the child did not get to its submit in %d ms", what,
		     READY_MS);
	if (!wait_open_in_d(pid, leader, D_WAIT_MS)) {
		dump_tasks(pid);
		t_fail("%s: the child's open of %s was not seen waiting for the lock of its directory (state D of %s for %d ms) in %d ms; the FIFO's dentry still cached?",
		     what, fifo, leader ? "the leader" : "a thread", STABLE_MS,
		     D_WAIT_MS);
	}
	/* the worker that took over waits out the window in state D */
	if (leader)
		wait_window(pid, 1, OPEN_WAIT_MS);

	if (!exec)
		kill(pid, SIGKILL);
	else if (write(cur.c_exec, "X", 1) != 1)
		t_fail("%s: write to the child: %s", what, strerror(errno));
	t_kill = t_now_ms();
	inside = t_window_open(pid);
	/* the exchange must have run before the open can go on */
	ended = t_mode_handoff() ? wait_window(pid, 0, END_WAIT_MS) : 1;
	t_end = t_now_ms();
	if (!killed_waiter(pid, END_WAIT_MS)) {
		dump_tasks(pid);
		t_fail("%s: after the %s, %s the window, no thread of the child waits for the lock with SIGKILL pending",
		     what, exec ? "exec's zap" : "group SIGKILL",
		     inside ? "inside" : "outside");
	}
	holder_release();

	ret = reap(pid, REAP_MS, &st);
	if (ret < 0)
		t_fail("waitpid: %s", strerror(errno));
	if (!ret) {
		dump_tasks(pid);
		t_fail("%s: the child was not reaped %d ms after %s, sent %swhile its open waited for the lock",
		     what, REAP_MS, exec ? "the exec's word" : "SIGKILL",
		     inside && t_mode_handoff() ?
		     "inside the handoff window " : "");
	}
	cur.c = 0;
	check_killed(pid, st, what, exec);
	close(fd);
	if (exec) {
		close(cur.c_exec);
		cur.c_exec = -1;
	}

	if (t_mode_handoff() && window) {
		if (inside)
			(*in_window)++;
		fprintf(stderr, "note: %s: %s %s the window, %s %lld ms after it\n",
			what, exec ? "the exec" : "SIGKILL",
			inside ? "inside" : "outside",
			ended ? "which was over" : "but the window still showed",
			t_end - t_kill);
	}
	if (window)
		t_expect_handoff(before);
}

int main(int argc, char **argv)
{
	int i, in_window = 0;
	char what[32];

	/* the program C's exec runs: nothing of the test's state is left */
	if (argc > 1 && !strcmp(argv[1], EXEC_CHILD))
		return T_PASS;
	t_dir("IOUH_EXT4");
	if (access("/proc/sys/vm/drop_caches", W_OK))
		t_skip("/proc/sys/vm/drop_caches: %s", strerror(errno));
	check_uffd();
	dir_make();

	run_round("control", 0, 0, &in_window);
	for (i = 0; i < ROUNDS; i++) {
		snprintf(what, sizeof(what), "round %d", i);
		run_round(what, WINDOW_MS, 0, &in_window);
	}
	for (i = 0; i < EXEC_ROUNDS; i++) {
		snprintf(what, sizeof(what), "exec round %d", i);
		run_round(what, WINDOW_MS, 1, &in_window);
	}
	t_window_widen(0);

	if (t_mode_handoff())
		fprintf(stderr, "note: SIGKILL or exec inside the window in %d of %d rounds\n",
			in_window, ROUNDS + EXEC_ROUNDS);
	return T_PASS;
}
