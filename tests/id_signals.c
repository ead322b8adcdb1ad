// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread signal state survives a blocking submit. The submitting thread
 * blocks SIGUSR2 and SIGWINCH, has an alternate signal stack and a SIGUSR1
 * handler with SA_ONSTACK, and has a SIGUSR2 pending (pthread_kill() to
 * itself). While the fsync blocks (the tid is seen asleep, plus 2 ms),
 * another thread sends SIGUSR1 to the submitter's tid with tgkill(). After
 * the submit: the mask and the altstack read back unchanged, the SIGUSR1
 * handler ran exactly once and on the altstack, SIGUSR2 is still pending,
 * and unblocking it runs its handler once. Done in the group leader and in
 * a second thread. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel whose handoff leaves the blocked mask, the sigaltstack
 * or the thread's private pending set on the task that blocked (the worker
 * has everything blocked, no altstack and nothing pending), or that routes
 * a tid-directed signal to the wrong task, so it is lost or runs twice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "helpers.h"

#define ALT_SIZE	(256 * 1024)

static volatile sig_atomic_t usr1_runs, usr1_on_alt, usr2_runs;
static char *alt_lo, *alt_hi;

static void on_usr1(int sig)
{
	char here;

	(void)sig;
	usr1_runs++;
	if (&here >= alt_lo && &here < alt_hi)
		usr1_on_alt++;
}

static void on_usr2(int sig)
{
	(void)sig;
	usr2_runs++;
}

struct sender {
	pid_t tid;
	volatile int armed;
};

/* true once @tid sleeps, in the wait or in the blocked fsync */
static int sleeping(pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (t_read_text(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && (p[2] == 'S' || p[2] == 'D');
}

static void *send_usr1(void *arg)
{
	struct timespec ms = { 0, 1000 * 1000 }, settle = { 0, 2000 * 1000 };
	struct sender *s = arg;
	int i;

	while (!__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
		nanosleep(&ms, NULL);
	for (i = 0; i < 500 && !sleeping(s->tid); i++)
		nanosleep(&ms, NULL);
	/* past the point where the handoff is set up, into the block */
	nanosleep(&settle, NULL);
	if (syscall(SYS_tgkill, getpid(), s->tid, SIGUSR1))
		t_fail("tgkill: %s", strerror(errno));
	return NULL;
}

static void set_handler(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		t_fail("sigaction %d: %s", sig, strerror(errno));
}

static void check_mask(const sigset_t *want, const char *who)
{
	sigset_t now;
	int sig;

	if (pthread_sigmask(SIG_BLOCK, NULL, &now))
		t_fail("pthread_sigmask query");
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&now, sig) != sigismember(want, sig))
			t_fail("%s: signal %d %sblocked after the submit", who,
			     sig, sigismember(&now, sig) ? "" : "not ");
}

static void check_altstack(const stack_t *want, const char *who)
{
	stack_t now;

	if (sigaltstack(NULL, &now))
		t_fail("sigaltstack query: %s", strerror(errno));
	if (now.ss_sp != want->ss_sp || now.ss_size != want->ss_size ||
	    now.ss_flags != 0)
		t_fail("%s: altstack %p/%zu/%#x, expected %p/%zu/0", who,
		     now.ss_sp, now.ss_size, now.ss_flags, want->ss_sp,
		     want->ss_size);
}

/* the tgkill may land after the submit returned, let it be delivered */
static void wait_usr1(void)
{
	int i;

	for (i = 0; i < 100000 && !usr1_runs; i++)
		sched_yield();
}

static void test_signal_state_kept(bool leader)
{
	const char *who = leader ? "leader" : "thread";
	struct sender s = { .tid = gettid() };
	sigset_t mask, pend;
	stack_t ss;
	pthread_t t;
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_signals");
	usr1_runs = usr1_on_alt = usr2_runs = 0;

	ss.ss_sp = malloc(ALT_SIZE);
	if (!ss.ss_sp)
		t_fail("malloc");
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	alt_lo = ss.ss_sp;
	alt_hi = alt_lo + ALT_SIZE;
	if (sigaltstack(&ss, NULL))
		t_fail("sigaltstack: %s", strerror(errno));
	set_handler(SIGUSR1, on_usr1, SA_ONSTACK);
	set_handler(SIGUSR2, on_usr2, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGWINCH);
	if (pthread_sigmask(SIG_SETMASK, &mask, NULL))
		t_fail("pthread_sigmask");
	/* re-read, the library may keep signals of its own out of it */
	if (pthread_sigmask(SIG_BLOCK, NULL, &mask))
		t_fail("pthread_sigmask query");
	if (pthread_kill(pthread_self(), SIGUSR2))
		t_fail("pthread_kill");

	if (pthread_create(&t, NULL, send_usr1, &s))
		t_fail("pthread_create");
	__atomic_store_n(&s.armed, 1, __ATOMIC_RELEASE);
	ho = t_force_block(&tf);
	pthread_join(t, NULL);
	wait_usr1();

	check_mask(&mask, who);
	check_altstack(&ss, who);
	if (usr1_runs != 1)
		t_fail("%s: SIGUSR1 handler ran %d times", who, (int)usr1_runs);
	if (usr1_on_alt != 1)
		t_fail("%s: SIGUSR1 handler not on the altstack", who);
	if (usr2_runs)
		t_fail("%s: blocked SIGUSR2 was delivered", who);
	if (sigpending(&pend))
		t_fail("sigpending: %s", strerror(errno));
	if (!sigismember(&pend, SIGUSR2))
		t_fail("%s: SIGUSR2 no longer pending", who);
	if (sigismember(&pend, SIGUSR1))
		t_fail("%s: SIGUSR1 still pending", who);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	if (pthread_sigmask(SIG_UNBLOCK, &mask, NULL))
		t_fail("pthread_sigmask unblock");
	if (usr2_runs != 1)
		t_fail("%s: SIGUSR2 handler ran %d times after unblocking", who,
		     (int)usr2_runs);

	t_expect_handoff(ho);
	ss.ss_flags = SS_DISABLE;
	if (sigaltstack(&ss, NULL))
		t_fail("sigaltstack disable: %s", strerror(errno));
	free(alt_lo);
	t_force_exit(&tf);
}

int main(void)
{
	t_run_leader_and_thread(test_signal_state_kept);
	return T_PASS;
}
