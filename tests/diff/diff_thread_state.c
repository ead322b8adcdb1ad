// SPDX-License-Identifier: GPL-2.0
/*
 * Differential scenario (diff/README.md): what a thread reads about itself
 * after a blocking submit. In the group leader and in a new thread, each
 * with non-default per-thread state set first (nice, timer slack, name,
 * parent death signal, machine-check policy, a blocked signal pending, an
 * alternate signal stack, an ignored signal), one forced fsync that hands
 * off with the module enabled, then every per-thread value a thread can
 * read: /proc/thread-self/status and stat, prctl's getters, the signal
 * state, scheduling, rlimits, personality. Values that name this run (tids,
 * addresses) are printed as relations ("tid is Pid: yes").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "helpers.h"

#define HISTORY	0x1140UL	/* PF_FORKNOEXEC, PF_SUPERPRIV, PF_NPROC_EXCEEDED */

static const char *prefix;

static void out(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("%s.%s: ", prefix, key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* the lines of /proc/thread-self/status that are the thread's own */
static void status_lines(void)
{
	static const char * const keys[] = {
		"Name", "Umask", "Uid", "Gid", "Groups", "SigQ", "SigPnd",
		"ShdPnd", "SigBlk", "SigIgn", "SigCgt", "CapInh", "CapPrm",
		"CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp",
		"Seccomp_filters", "Speculation_Store_Bypass",
		"SpeculationIndirectBranch", "Cpus_allowed_list",
		"Mems_allowed_list", "untag_mask", "x86_Thread_features",
		"x86_Thread_features_locked",
	};
	char buf[8192], *line, *save;
	unsigned int i;

	if (t_read_text("/proc/thread-self/status", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/status");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(line, keys[i]))
				out(line, "%s", colon + 1 + strspn(colon + 1, " \t"));
		if (!strcmp(line, "Pid"))
			out("Pid is tid", "%s", atoi(colon + 1) == gettid() ?
			    "yes" : "no");
		if (!strcmp(line, "Tgid"))
			out("Tgid is pid", "%s", atoi(colon + 1) == getpid() ?
			    "yes" : "no");
		if (!strcmp(line, "PPid"))
			out("PPid is parent", "%s",
			    atoi(colon + 1) == getppid() ? "yes" : "no");
		if (!strcmp(line, "TracerPid"))
			out("TracerPid", "%s", colon + 1 + strspn(colon + 1, " \t"));
	}
}

/* /proc/thread-self/stat: flags' history bits, priority, nice, policy */
static void stat_fields(void)
{
	unsigned long flags, rt_priority, policy;
	long priority, nice;
	char buf[1024], *p;
	int exit_signal;

	if (t_read_text("/proc/thread-self/stat", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/stat");
	p = strrchr(buf, ')');
	/* fields 3.., see proc_pid_stat(5) */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %ld %ld %*d %*d %*u %*u %*d %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %*u %d %*d %lu %lu",
			 &flags, &priority, &nice, &exit_signal, &rt_priority,
			 &policy) != 6)
		t_fail("parse /proc/thread-self/stat");
	out("stat.flags&history", "0x%lx", flags & HISTORY);
	out("stat.priority", "%ld", priority);
	out("stat.nice", "%ld", nice);
	out("stat.exit_signal", "%d", exit_signal);
	out("stat.rt_priority", "%lu", rt_priority);
	out("stat.policy", "%lu", policy);
}

static void prctl_getters(void)
{
	char name[32] = "";
	int sig = -1;

	prctl(PR_GET_NAME, name, 0, 0, 0);
	out("PR_GET_NAME", "%s", name);
	prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0);
	out("PR_GET_PDEATHSIG", "%d", sig);
	out("PR_GET_TIMERSLACK", "%d", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	out("PR_MCE_KILL_GET", "%d", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
	out("PR_GET_NO_NEW_PRIVS", "%d",
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	out("PR_GET_DUMPABLE", "%d", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	out("PR_GET_KEEPCAPS", "%d", prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
	out("PR_GET_SECCOMP", "%d", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	out("PR_GET_SPECULATION_CTRL.store_bypass", "%d",
	    prctl(PR_GET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, 0, 0, 0));
}

static void signal_state(void)
{
	sigset_t mask, pend;
	stack_t ss;
	int i;

	sigprocmask(SIG_BLOCK, NULL, &mask);
	sigpending(&pend);
	for (i = 1; i < SIGRTMIN; i++) {
		if (sigismember(&mask, i))
			out("blocked", "%d", i);
		if (sigismember(&pend, i))
			out("pending", "%d", i);
	}
	if (sigaltstack(NULL, &ss))
		t_fail("sigaltstack");
	out("sigaltstack", "flags %d size %zu", ss.ss_flags, ss.ss_size);
}

static void sched_state(void)
{
	struct rlimit rl;
	cpu_set_t set;
	int r;

	errno = 0;
	out("getpriority(tid)", "%d", getpriority(PRIO_PROCESS, gettid()));
	out("sched_getscheduler", "%d", sched_getscheduler(0));
	if (sched_getaffinity(0, sizeof(set), &set))
		t_fail("sched_getaffinity");
	out("affinity cpus", "%d", CPU_COUNT(&set));
	for (r = 0; r < RLIM_NLIMITS; r++) {
		char key[16];

		getrlimit(r, &rl);
		snprintf(key, sizeof(key), "rlimit.%d", r);
		out(key, "%llu %llu", (unsigned long long)rl.rlim_cur,
		    (unsigned long long)rl.rlim_max);
	}
	out("personality", "0x%x", personality(0xffffffff));
}

static void scenario(bool leader)
{
	static char altstack[2][65536];
	stack_t ss = { .ss_size = sizeof(altstack[0]) };
	struct t_force tf;
	sigset_t usr;
	long long ho;

	prefix = leader ? "leader" : "thread";
	t_force_init(&tf, leader ? "diff_state_l" : "diff_state_t");
	/* non-default per-thread state */
	if (setpriority(PRIO_PROCESS, gettid(), leader ? 3 : 5))
		t_fail("setpriority: %s", strerror(errno));
	prctl(PR_SET_TIMERSLACK, leader ? 70000 : 90000, 0, 0, 0);
	prctl(PR_SET_NAME, leader ? "diff-lead" : "diff-thr", 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGHUP, 0, 0, 0);
	prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0);
	ss.ss_sp = altstack[leader ? 0 : 1];
	if (sigaltstack(&ss, NULL))
		t_fail("sigaltstack");
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr, NULL);
	syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);

	ho = t_force_block(&tf);
	status_lines();
	stat_fields();
	prctl_getters();
	signal_state();
	sched_state();
	fflush(stdout);
	t_expect_handoff(ho);
	/* leave the pending signal behind, it is blocked and thread-directed */
	t_force_exit(&tf);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_run_leader_and_thread(scenario);
	return T_PASS;
}
