// SPDX-License-Identifier: GPL-2.0
/*
 * Thread states that can't move with the identity are refused for a
 * handoff: every refusal of the RFC's thread_handoff_allowed() userspace
 * can arm. Each case runs in a fresh thread (the vfork one in a vfork
 * child) that first gets its idle io-wq worker, then arms the state, then
 * does a blocking submit: the fsync must complete with 0; in mode handoff
 * "handoffs" must not move, "fallback_task" must, and so must the case's
 * line in the refusals file; and afterwards the state must still be in
 * force on the thread.
 *
 *  (a) syscall user dispatch (PR_SET_SYSCALL_USER_DISPATCH, selector at
 *      ALLOW for the submit): a getppid() with the selector at BLOCK must
 *      still raise SIGSYS;
 *  (b) an armed per-thread CPU timer (CLOCK_THREAD_CPUTIME_ID, 10 s): it
 *      must still be armed. It notifies with a signal, as SIGEV_NONE CPU
 *      timers are never queued on the task (posix_cpu_timer_set());
 *  (c) a per-thread perf event (software task clock): it must still count;
 *  (d) owner of a PI futex with a waiter blocked on it: the unlock must
 *      hand the lock to the waiter;
 *  (e) SCHED_FIFO priority 10: still FIFO 10 afterwards;
 *  (f) ioperm() of port 0x80: an inb() of it must still not fault;
 *  (g) a vfork child (CLONE_VM | CLONE_VFORK, its parent waits on its
 *      task_struct): the child's fsync completes with 0;
 *  (h) the L1D flush control (PR_SPEC_L1D_FLUSH): here a handoff that
 *      carries it is as good as a refusal, only that it stays enabled is
 *      checked;
 *  (i) a core scheduling cookie (PR_SCHED_CORE_CREATE): the same cookie
 *      afterwards;
 *  (j) speculative store bypass force-disabled (PR_SPEC_FORCE_DISABLE) by
 *      a thread that had it disabled when its worker was forked: the
 *      worker's TIF_SSBD agrees, only the force bit in atomic_flags
 *      doesn't. It must still read force-disabled afterwards;
 *  (k) arm64 SME with ZA on (SMSTART ZA, one vector of ZA set): it must
 *      read back the same after the blocking submit.
 *
 * A case whose state the kernel can't arm is skipped: (c) without perf
 * events, (f) without CONFIG_X86_IOPL_IOPERM or off x86, (h) unless booted
 * with l1d_flush=on on hardware that has it, (i) without CONFIG_SCHED_CORE
 * or SMT, (a) without CONFIG_GENERIC_ENTRY, (e) where RT is not permitted,
 * (j) on a CPU not affected or without the prctl mitigation mode, (k) off
 * arm64 or without SME.
 * The test passes if the others pass (stderr names the skipped ones), and
 * skips if all are skipped. Needs root. Blocking is forced by fsync of
 * dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel/module that hands off a thread in one of these states:
 * the state stays behind on the task_struct, now an io-wq worker, while the
 * identity returns to userspace without it (dispatch off, the timer
 * sampling another thread's clock, a perf context counting the worker, a
 * PI owner that is not the tid in the futex word, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include "helpers.h"

#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH	2
#endif

#define NAME		"id_refusal_task"
#define VFORK_STACK	(1024 * 1024)

struct refusal {
	long long ho, fb;
	/* the line of the refusals file that must move, and its count */
	const char *reason;
	long long rc;
};

static char skipped[1024];
static int passed;

/* a case that can't arm its state: noted, the others go on */
static void case_skip(const char *fmt, ...)
{
	size_t len = strlen(skipped);
	va_list ap;

	if (len)
		len += snprintf(skipped + len, sizeof(skipped) - len, "; ");
	if (len >= sizeof(skipped))
		return;
	va_start(ap, fmt);
	vsnprintf(skipped + len, sizeof(skipped) - len, fmt, ap);
	va_end(ap);
}

static void refusal_start(struct refusal *r, const char *reason)
{
	r->reason = reason;
	r->rc = t_refusal(reason);
	r->fb = t_counter("fallback_task");
	r->ho = t_counter("handoffs");
}

static void refused_block(struct t_force *tf, struct refusal *r, const char *reason)
{
	refusal_start(r, reason);
	r->ho = t_force_block(tf);
}

static void expect_refused(const char *what, const struct refusal *r)
{
	long long ho = t_counter("handoffs");
	long long fb = t_counter("fallback_task");

	/* the same as the two below, but naming the case */
	if (t_mode_handoff() && ho != r->ho)
		t_fail("%s: handed off (handoffs %lld -> %lld), must be refused",
		     what, r->ho, ho);
	if (t_mode_handoff() && (r->fb < 0 || fb <= r->fb))
		t_fail("%s: fallback_task did not move (%lld -> %lld)", what,
		     r->fb, fb);
	t_expect_unmoved("handoffs", r->ho);
	t_expect_moved("fallback_task", r->fb);
	if (t_mode_handoff() && t_refusal(r->reason) <= r->rc)
		t_fail("%s: refusal %s did not move (%lld -> %lld)", what,
		     r->reason, r->rc, t_refusal(r->reason));
}

/* (a) syscall user dispatch */

static volatile char sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
static volatile sig_atomic_t sud_sigsys;

static void sud_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	/* first: the handler's sigreturn is a dispatched syscall too */
	sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (si->si_code == SYS_USER_DISPATCH)
		sud_sigsys++;
}

static void *syscall_user_dispatch(void *arg)
{
	const char *what = "(a) syscall user dispatch";
	struct sigaction sa, old;
	struct refusal r;
	struct t_force tf;
	int hits;

	(void)arg;
	t_force_init(&tf, NAME);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sud_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, &old))
		t_fail("sigaction: %s", strerror(errno));
	sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0,
		  &sud_selector)) {
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}

	/* io_uring_enter() and all else with the selector at ALLOW */
	refused_block(&tf, &r, "syscall_dispatch");

	sud_sigsys = 0;
	sud_selector = SYSCALL_DISPATCH_FILTER_BLOCK;
	syscall(SYS_getppid);
	/* the handler did this if dispatch is still on */
	sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	hits = sud_sigsys;
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0))
		t_fail("%s: PR_SYS_DISPATCH_OFF: %s", what, strerror(errno));
	if (hits != 1)
		t_fail("%s: getppid() at BLOCK raised %d SIGSYS, expected 1: dispatch lost",
		     what, hits);
	expect_refused(what, &r);
	passed++;
out:
	sigaction(SIGSYS, &old, NULL);
	t_force_exit(&tf);
	return NULL;
}

/* (b) an armed per-thread CPU timer */

static void noop_handler(int sig)
{
	(void)sig;
}

static void *thread_cpu_timer(void *arg)
{
	const char *what = "(b) per-thread CPU timer";
	struct itimerspec its = { .it_value = { 10, 0 } }, now;
	struct sigevent sev;
	struct sigaction sa;
	struct refusal r;
	struct t_force tf;
	timer_t t;

	(void)arg;
	t_force_init(&tf, NAME);
	/* 10 s of this thread's CPU time: never fires here */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = noop_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		t_fail("sigaction: %s", strerror(errno));
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t)) {
		if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			t_fail("%s: timer_create: %s", what, strerror(errno));
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}
	if (timer_settime(t, 0, &its, NULL))
		t_fail("%s: timer_settime: %s", what, strerror(errno));

	refused_block(&tf, &r, "cpu_timers");

	if (timer_gettime(t, &now))
		t_fail("%s: timer_gettime: %s", what, strerror(errno));
	if ((!now.it_value.tv_sec && !now.it_value.tv_nsec) ||
	    now.it_value.tv_sec > 10)
		t_fail("%s: %ld.%09ld s left, not armed for the 10 s any more",
		     what, (long)now.it_value.tv_sec, now.it_value.tv_nsec);
	if (timer_delete(t))
		t_fail("%s: timer_delete: %s", what, strerror(errno));
	expect_refused(what, &r);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}

/* (c) a per-thread perf event */

static void *perf_event(void *arg)
{
	const char *what = "(c) per-thread perf event";
	struct perf_event_attr pa;
	unsigned long long count;
	struct refusal r;
	struct t_force tf;
	int fd;

	(void)arg;
	t_force_init(&tf, NAME);
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_TASK_CLOCK;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOSYS && errno != EACCES &&
		    errno != EPERM && errno != EOPNOTSUPP)
			t_fail("%s: perf_event_open: %s", what, strerror(errno));
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}

	refused_block(&tf, &r, "perf");

	if (read(fd, &count, sizeof(count)) != sizeof(count))
		t_fail("%s: read: %s", what, strerror(errno));
	if (!count)
		t_fail("%s: the task clock counted nothing", what);
	close(fd);
	expect_refused(what, &r);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}

/* (d) owner of a PI futex with a waiter */

struct pi_waiter {
	pthread_mutex_t *m;
	int got;
};

static void *pi_wait(void *arg)
{
	struct pi_waiter *w = arg;
	int ret;

	ret = pthread_mutex_lock(w->m);
	if (ret)
		t_fail("waiter: pthread_mutex_lock: %s", strerror(ret));
	__atomic_store_n(&w->got, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(w->m);
	return NULL;
}

struct futex_poll {
	pthread_mutex_t *m;
	/* the last poll's futex word */
	unsigned int word;
};

/* FUTEX_WAITERS: the waiter is in FUTEX_LOCK_PI, pi_state is ours */
static bool futex_has_waiters(void *arg)
{
	struct futex_poll *p = arg;

	p->word = __atomic_load_n((unsigned int *)&p->m->__data.__lock,
				  __ATOMIC_ACQUIRE);
	return p->word & FUTEX_WAITERS;
}

static void *pi_futex_owner(void *arg)
{
	const char *what = "(d) PI futex owner";
	struct futex_poll fw = { 0 };
	struct timespec end;
	struct pi_waiter w = { 0 };
	pthread_mutexattr_t ma;
	pthread_mutex_t m;
	struct refusal r;
	unsigned int word;
	struct t_force tf;
	pthread_t t;
	int ret;

	(void)arg;
	t_force_init(&tf, NAME);
	pthread_mutexattr_init(&ma);
	ret = pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	if (ret)
		t_fail("%s: PTHREAD_PRIO_INHERIT: %s", what, strerror(ret));
	ret = pthread_mutex_init(&m, &ma);
	if (ret)
		t_fail("%s: pthread_mutex_init: %s", what, strerror(ret));
	ret = pthread_mutex_lock(&m);
	if (ret)
		t_fail("%s: pthread_mutex_lock: %s", what, strerror(ret));
	w.m = &m;
	ret = pthread_create(&t, NULL, pi_wait, &w);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	fw.m = &m;
	if (!t_wait_until(futex_has_waiters, &fw, 2000, 1))
		t_fail("%s: the waiter did not block in the kernel (futex %#x)",
		     what, fw.word);
	usleep(100 * 1000);

	refused_block(&tf, &r, "pi_futex");

	word = __atomic_load_n((unsigned int *)&m.__data.__lock,
			       __ATOMIC_ACQUIRE);
	if ((word & FUTEX_TID_MASK) != (unsigned int)gettid())
		t_fail("%s: futex word %#x, owner is not tid %d", what, word,
		     gettid());
	if (__atomic_load_n(&w.got, __ATOMIC_ACQUIRE))
		t_fail("%s: the waiter got the lock while we held it", what);
	ret = pthread_mutex_unlock(&m);
	if (ret)
		t_fail("%s: pthread_mutex_unlock: %s", what, strerror(ret));
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 5;
	ret = pthread_timedjoin_np(t, NULL, &end);
	if (ret)
		t_fail("%s: waiter not done 5 s after the unlock: %s", what,
		     strerror(ret));
	if (!__atomic_load_n(&w.got, __ATOMIC_ACQUIRE))
		t_fail("%s: the waiter never got the lock", what);
	pthread_mutex_destroy(&m);
	pthread_mutexattr_destroy(&ma);
	expect_refused(what, &r);
	passed++;
	t_force_exit(&tf);
	return NULL;
}

/* (e) SCHED_FIFO */

static void *sched_fifo(void *arg)
{
	const char *what = "(e) SCHED_FIFO 10";
	struct sched_param sp = { .sched_priority = 10 };
	struct refusal r;
	struct t_force tf;
	int pol;

	(void)arg;
	t_force_init(&tf, NAME);
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		if (errno != EPERM)
			t_fail("%s: sched_setscheduler: %s", what,
			     strerror(errno));
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}

	refused_block(&tf, &r, "rt");

	pol = sched_getscheduler(0);
	memset(&sp, 0, sizeof(sp));
	if (sched_getparam(0, &sp))
		t_fail("%s: sched_getparam: %s", what, strerror(errno));
	if (pol != SCHED_FIFO || sp.sched_priority != 10)
		t_fail("%s: policy %d priority %d afterwards", what, pol,
		     sp.sched_priority);
	expect_refused(what, &r);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}

/* (f) ioperm */

#if defined(__x86_64__)
static sigjmp_buf io_fault;

static void io_segv(int sig)
{
	(void)sig;
	siglongjmp(io_fault, 1);
}

/* may this thread inb() port 0x80, the POST diagnostic port? */
static int port_allowed(void)
{
	struct sigaction sa, old;
	int ok;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = io_segv;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old))
		t_fail("sigaction: %s", strerror(errno));
	if (!sigsetjmp(io_fault, 1)) {
		(void)inb(0x80);
		ok = 1;
	} else {
		ok = 0;
	}
	sigaction(SIGSEGV, &old, NULL);
	return ok;
}

static void *io_permissions(void *arg)
{
	const char *what = "(f) ioperm";
	struct refusal r;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, NAME);
	if (ioperm(0x80, 1, 1)) {
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}
	if (!port_allowed())
		t_fail("%s: inb(0x80) faults right after ioperm()", what);

	refused_block(&tf, &r, "io_perm");

	if (!port_allowed())
		t_fail("%s: inb(0x80) faults, the I/O bitmap is gone", what);
	if (ioperm(0x80, 1, 0))
		t_fail("%s: ioperm off: %s", what, strerror(errno));
	expect_refused(what, &r);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}
#else
static void *io_permissions(void *arg)
{
	(void)arg;
	case_skip("(f) ioperm: not x86_64");
	return NULL;
}
#endif

/* (g) a vfork child */

struct vfork_arg {
	char path[PATH_MAX];
};

static char vfork_buf[T_DIRTY];

/*
 * Runs on the parent's memory while the parent waits: no t_*() helper
 * that can t_fail() (exit() would run the parent's atexit handlers), just
 * _exit().
 */
static int vfork_child(void *arg)
{
	struct vfork_arg *va = arg;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int fd, i, ret;

	fd = open(va->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		_exit(10);
	if (io_uring_queue_init(8, &ring, 0))
		_exit(11);
	/* first a punted fsync that creates our worker, then the blocking one */
	for (i = 0; i < 2; i++) {
		if (i) {
			memset(vfork_buf, 0x5a, sizeof(vfork_buf));
			if (pwrite(fd, vfork_buf, sizeof(vfork_buf), 0) !=
			    sizeof(vfork_buf))
				_exit(12);
			t_wait_idle_worker();
		}
		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			_exit(13);
		io_uring_prep_fsync(sqe, fd, 0);
		if (!i)
			sqe->flags |= IOSQE_ASYNC;
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret != 1)
			_exit(14);
		if (io_uring_wait_cqe(&ring, &cqe))
			_exit(15);
		if (cqe->res)
			_exit(16 + i);
		io_uring_cqe_seen(&ring, cqe);
	}
	/* the rings are mapped in the parent's mm */
	io_uring_queue_exit(&ring);
	close(fd);
	_exit(0);
}

static void *vfork_parent(void *arg)
{
	const char *what = "(g) vfork child";
	struct vfork_arg va;
	struct refusal r;
	char *stack;
	pid_t pid;
	int st;

	(void)arg;
	snprintf(va.path, sizeof(va.path), "%s/%s.vfork.%d",
		 t_dir("IOUH_EXT4"), NAME, gettid());
	stack = malloc(VFORK_STACK);
	if (!stack)
		t_fail("malloc: %s", strerror(errno));
	refusal_start(&r, "vfork");
	pid = clone(vfork_child, stack + VFORK_STACK,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, &va);
	if (pid < 0)
		t_fail("%s: clone: %s", what, strerror(errno));
	if (waitpid(pid, &st, 0) != pid)
		t_fail("%s: waitpid: %s", what, strerror(errno));
	unlink(va.path);
	free(stack);
	if (WIFSIGNALED(st))
		t_fail("%s: killed by signal %d", what, WTERMSIG(st));
	if (WEXITSTATUS(st) == 17)
		t_fail("%s: the blocking fsync failed", what);
	if (WEXITSTATUS(st))
		t_fail("%s: failed with status %d (see vfork_child())", what,
		     WEXITSTATUS(st));
	expect_refused(what, &r);
	passed++;
	return NULL;
}

/* (h) the L1D flush control */

static void *l1d_flush(void *arg)
{
	const char *what = "(h) L1D flush";
	struct t_force tf;
	int ret;

	(void)arg;
	t_force_init(&tf, NAME);
	if (prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_L1D_FLUSH, PR_SPEC_ENABLE,
		  0, 0)) {
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}

	/* refused or carried along, either is right */
	t_force_block(&tf);

	ret = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_L1D_FLUSH, 0, 0, 0);
	if (ret < 0)
		t_fail("%s: PR_GET_SPECULATION_CTRL: %s", what, strerror(errno));
	if (!(ret & PR_SPEC_ENABLE))
		t_fail("%s: no longer enabled (%#x)", what, ret);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}

/* (i) a core scheduling cookie */

static unsigned long core_cookie(const char *what)
{
	unsigned long cookie = 0;

	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, &cookie))
		t_fail("%s: PR_SCHED_CORE_GET: %s", what, strerror(errno));
	return cookie;
}

static void *sched_core(void *arg)
{
	const char *what = "(i) core scheduling cookie";
	unsigned long cookie, now;
	struct refusal r;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, NAME);
	if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0,
		  PR_SCHED_CORE_SCOPE_THREAD, 0)) {
		if (errno != EINVAL && errno != ENODEV)
			t_fail("%s: PR_SCHED_CORE_CREATE: %s", what,
			     strerror(errno));
		case_skip("%s: %s", what, strerror(errno));
		goto out;
	}
	cookie = core_cookie(what);
	if (!cookie)
		t_fail("%s: no cookie after PR_SCHED_CORE_CREATE", what);

	refused_block(&tf, &r, "core_sched");

	now = core_cookie(what);
	if (now != cookie)
		t_fail("%s: cookie %#lx, expected %#lx", what, now, cookie);
	expect_refused(what, &r);
	passed++;
out:
	t_force_exit(&tf);
	return NULL;
}

/* (j) speculative store bypass, force-disabled after the fork */

static int ssb_ctrl(const char *what)
{
	int ret = prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0,
			0);

	if (ret < 0)
		t_fail("%s: PR_GET_SPECULATION_CTRL: %s", what, strerror(errno));
	return ret;
}

static void *ssb_force_disable(void *arg)
{
	const char *what = "(j) store bypass force-disabled";
	struct t_force tf;
	int ret;

	(void)arg;
	/* before the worker is forked: it inherits TIF_SSBD and the bit */
	if (!(ssb_ctrl(what) & PR_SPEC_PRCTL) ||
	    prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS,
		  PR_SPEC_DISABLE, 0, 0)) {
		case_skip("%s: no prctl control (%#x)", what, ssb_ctrl(what));
		return NULL;
	}
	t_force_init(&tf, NAME);
	if (prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS,
		  PR_SPEC_FORCE_DISABLE, 0, 0))
		t_fail("%s: PR_SPEC_FORCE_DISABLE: %s", what, strerror(errno));

	/* refused or carried along, either is right */
	t_force_block(&tf);

	ret = ssb_ctrl(what);
	if ((ret & ~PR_SPEC_PRCTL) != PR_SPEC_FORCE_DISABLE)
		t_fail("%s: reads %#x afterwards, expected %#x", what, ret,
		     (int)(PR_SPEC_PRCTL | PR_SPEC_FORCE_DISABLE));
	passed++;
	t_force_exit(&tf);
	return NULL;
}

/* (k) arm64 SME, ZA on */

#if defined(__aarch64__)
#define ZA_ROW_MAX	256

/*
 * ZA array vector 0, in from @in or out to @out: LDR/STR (array vector),
 * which the ABI's lazy ZA save uses outside streaming mode as well
 */
static void za_row_load(const unsigned char *in)
{
	__asm__ volatile(".arch_extension sme\n"
			 "\tmov w12, #0\n"
			 "\tldr za[w12, 0], [%0]\n"
			 : : "r"(in) : "w12", "memory");
}

static void za_row_store(unsigned char *out)
{
	__asm__ volatile(".arch_extension sme\n"
			 "\tmov w12, #0\n"
			 "\tstr za[w12, 0], [%0]\n"
			 : : "r"(out) : "w12", "memory");
}

static void *sme_za(void *arg)
{
	const char *what = "(k) SME, ZA on";
	unsigned char in[ZA_ROW_MAX], out[ZA_ROW_MAX];
	unsigned int i, svl;
	struct refusal r;
	struct t_force tf;

	(void)arg;
	if (!(getauxval(AT_HWCAP2) & HWCAP2_SME)) {
		case_skip("%s: no SME", what);
		return NULL;
	}
	svl = prctl(PR_SME_GET_VL) & PR_SME_VL_LEN_MASK;
	if (svl < 16 || svl > ZA_ROW_MAX)
		t_fail("%s: PR_SME_GET_VL: %u", what, svl);
	for (i = 0; i < svl; i++)
		in[i] = (i * 29 + 0x17) & 0xff;
	memset(out, 0, sizeof(out));
	t_force_init(&tf, NAME);
	/* ZA on, streaming mode off: the rest of the code runs as usual */
	__asm__ volatile(".arch_extension sme\n\tsmstart za" : : : "memory");
	za_row_load(in);

	refused_block(&tf, &r, "sme");

	za_row_store(out);
	__asm__ volatile(".arch_extension sme\n\tsmstop za" : : : "memory");
	if (memcmp(in, out, svl))
		t_fail("%s: ZA vector 0 changed", what);
	expect_refused(what, &r);
	passed++;
	t_force_exit(&tf);
	return NULL;
}
#else
static void *sme_za(void *arg)
{
	(void)arg;
	case_skip("(k) SME, ZA on: arm64 only");
	return NULL;
}
#endif

int main(void)
{
	if (geteuid())
		t_skip("needs root");
	t_dir("IOUH_EXT4");
	t_run_in_thread(syscall_user_dispatch, NULL);
	t_run_in_thread(thread_cpu_timer, NULL);
	t_run_in_thread(perf_event, NULL);
	t_run_in_thread(pi_futex_owner, NULL);
	t_run_in_thread(sched_fifo, NULL);
	t_run_in_thread(io_permissions, NULL);
	t_run_in_thread(vfork_parent, NULL);
	t_run_in_thread(l1d_flush, NULL);
	t_run_in_thread(sched_core, NULL);
	t_run_in_thread(ssb_force_disable, NULL);
	t_run_in_thread(sme_za, NULL);
	if (!passed)
		t_skip("no state could be armed: %s", skipped);
	if (*skipped)
		fprintf(stderr, "note: %d cases passed; skipped %s\n", passed,
			skipped);
	return T_PASS;
}
