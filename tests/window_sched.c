// SPDX-License-Identifier: GPL-2.0
/*
 * A scheduling policy and a thread CPU timer set on a tid in the handoff
 * window end up on the identity.
 *
 * A non-leader thread T, warm (an idle io-wq worker), submits
 * openat(O_RDONLY | O_CREAT) of a FIFO whose writer opens 1000 ms later;
 * the window is widened to 300 ms (debug_window_ms). Another thread U waits
 * until T's tid sleeps, plus 50 ms, then (a) sched_setscheduler(T's tid,
 * SCHED_FIFO, priority 10) and (b) timer_create() on T's thread CPU clock
 * (pthread_getcpuclockid()) with SIGEV_THREAD_ID to T's tid and SIGUSR1,
 * armed for 50 ms of CPU. Once T's submit has returned and T has reaped the
 * CQE (the FIFO's fd): T must be SCHED_FIFO at priority 10; T then drops
 * back to SCHED_OTHER itself and burns CPU for up to 2 s of wall time, and
 * its SIGUSR1 handler must run, on T, within that. In stock/disabled (no
 * handoff, no window) the same must hold. Needs root for SCHED_FIFO.
 *
 * Fails on a kernel/module that leaves a policy set in the window on the
 * task that handed off, or rebuilds it from the wrong fields
 * (sched_setattr() with RT priority 0 fails): T returns SCHED_OTHER; or
 * that leaves a CPU timer armed in the window on that task: it never fires
 * for T.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define WINDOW_MS	300
#define RELEASE_MS	1000
/* after T is seen asleep, inside the window */
#define SETTLE_MS	50
#define ASLEEP_MS	5000
#define REAP_MS		5000
#define RT_PRIO		10
#define TIMER_CPU_MS	50
#define BURN_MS		2000
#define OPEN_UD		0xf1f0ULL

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

static volatile sig_atomic_t fired;
static volatile sig_atomic_t fired_tid;

static void on_usr1(int sig)
{
	(void)sig;
	fired++;
	fired_tid = gettid();
}

/* U: what it did to T's tid while T was in its submit */
struct poker {
	pthread_t thread;
	pid_t tid;
	int armed;
	int asleep;
	int sched_err;
	const char *timer_what;
	int timer_err;
	timer_t timer;
	int in_window;
};

static void *poke(void *arg)
{
	struct sched_param sp = { .sched_priority = RT_PRIO };
	struct itimerspec its = {
		.it_value = { 0, TIMER_CPU_MS * 1000 * 1000 },
	};
	struct sigevent sev;
	struct poker *p = arg;
	clockid_t cid;
	int ret;

	p->asleep = t_wait_armed_asleep(&p->armed, p->tid, ASLEEP_MS,
					SETTLE_MS);
	if (!p->asleep)
		return NULL;

	if (sched_setscheduler(p->tid, SCHED_FIFO, &sp))
		p->sched_err = errno;

	ret = pthread_getcpuclockid(p->thread, &cid);
	if (ret) {
		p->timer_what = "pthread_getcpuclockid";
		p->timer_err = ret;
		return NULL;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev.sigev_notify_thread_id = p->tid;
	if (timer_create(cid, &sev, &p->timer)) {
		p->timer_what = "timer_create";
		p->timer_err = errno;
		return NULL;
	}
	if (timer_settime(p->timer, 0, &its, NULL)) {
		p->timer_what = "timer_settime";
		p->timer_err = errno;
		return NULL;
	}
	p->in_window = t_window_open(getpid());
	return NULL;
}

/* T: the policy U set must be ours now */
static void check_policy(void)
{
	struct sched_param sp;
	int policy;

	policy = sched_getscheduler(0);
	if (policy < 0)
		t_fail("sched_getscheduler: %s", strerror(errno));
	if (sched_getparam(0, &sp))
		t_fail("sched_getparam: %s", strerror(errno));
	if (policy != SCHED_FIFO || sp.sched_priority != RT_PRIO)
		t_fail("policy %d priority %d after the submit, expected SCHED_FIFO (%d) priority %d",
		     policy, sp.sched_priority, SCHED_FIFO, RT_PRIO);
}

/* T: burn our own CPU, the timer U armed on our clock must fire on us */
static void check_timer(void)
{
	struct timespec cpu;
	long long start = t_now_ms();

	while (!fired && t_now_ms() - start < BURN_MS)
		;
	if (!fired) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
		t_fail("the CPU timer on our thread clock did not fire within %d ms of burning (thread clock %lld ms)",
		     BURN_MS, cpu.tv_sec * 1000LL + cpu.tv_nsec / 1000000);
	}
	if (fired_tid != gettid())
		t_fail("the timer's SIGUSR1 ran on tid %d, not on ours (%d)",
		     (int)fired_tid, gettid());
}

static void *test_sched(void *arg)
{
	struct sched_param other = { .sched_priority = 0 };
	struct poker p = { .thread = pthread_self(), .tid = gettid() };
	struct t_fifo f;
	long long before;
	pthread_t u;
	struct t_force tf;
	int ret;

	(void)arg;
	if (sched_getscheduler(0) != SCHED_OTHER)
		t_skip("the test thread isn't SCHED_OTHER");
	t_force_init(&tf, "window_sched");
	t_fifo_init(&f, "window_sched");
	ret = pthread_create(&u, NULL, poke, &p);
	if (ret)
		t_fail("pthread_create: %s", strerror(ret));
	t_fifo_release_after(&f, RELEASE_MS);
	before = t_counter("handoffs");
	__atomic_store_n(&p.armed, 1, __ATOMIC_RELEASE);
	t_fifo_submit_open(&tf.ring, &f, OPEN_UD);
	t_fifo_reap_open(&tf.ring, &f, OPEN_UD, RELEASE_MS + REAP_MS);
	ret = pthread_join(u, NULL);
	if (ret)
		t_fail("pthread_join: %s", strerror(ret));

	if (!p.asleep)
		t_fail("the submitting thread was not seen asleep within %d ms",
		     ASLEEP_MS);
	if (p.sched_err == EPERM)
		t_skip("sched_setscheduler(SCHED_FIFO): %s (needs root)",
		     strerror(p.sched_err));
	if (p.sched_err)
		t_fail("sched_setscheduler(SCHED_FIFO) of the sleeping tid: %s",
		     strerror(p.sched_err));
	if (p.timer_err)
		t_fail("%s on the sleeping tid's clock: %s", p.timer_what,
		     strerror(p.timer_err));

	check_policy();
	if (sched_setscheduler(0, SCHED_OTHER, &other))
		t_fail("sched_setscheduler(SCHED_OTHER): %s", strerror(errno));
	check_timer();
	if (timer_delete(p.timer))
		t_fail("timer_delete: %s", strerror(errno));

	if (t_mode_handoff())
		fprintf(stderr, "note: policy and timer set %s the window\n",
			p.in_window ? "inside" : "outside");
	t_expect_handoff(before);
	t_fifo_exit(&f);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		t_fail("sigaction: %s", strerror(errno));
	t_window_widen(WINDOW_MS);
	t_run_in_thread(test_sched, NULL);
	return T_PASS;
}
