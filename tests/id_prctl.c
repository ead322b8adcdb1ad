// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread prctl and personality state survives a blocking submit. A
 * thread, after its io-wq worker exists (with the defaults), sets its parent
 * death signal (PR_SET_PDEATHSIG SIGUSR2), its timer slack (PR_SET_TIMERSLACK
 * 123457 ns), early machine-check kills (PR_MCE_KILL_EARLY, skipped where
 * the kernel refuses it), ADDR_NO_RANDOMIZE in its personality and
 * no_new_privs (which a worker without it may take on, not lose). After the
 * submit all five read back the same, and /proc/thread-self/stat's start
 * time (field 22) is the thread's, not its worker's, which was created at
 * least 50 ms later. Done in a non-leader thread and in the group leader.
 * Blocking is forced by fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without moving one of them: the thread
 * comes back with the worker's (no pdeath signal, the default slack, the
 * process's MCE policy, the default personality, no no_new_privs, a later
 * start time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include "helpers.h"

#define SLACK_NS	123457UL

/* field 22 of /proc/thread-self/stat, after the ")" that ends comm */
static unsigned long long start_time(void)
{
	unsigned long long t;
	char buf[1024], *p;
	int i;

	if (t_read_text("/proc/thread-self/stat", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/stat: %s", strerror(errno));
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &t) != 1)
		t_fail("no start time in /proc/thread-self/stat");
	return t;
}

static void *test_prctl_kept(void *arg)
{
	const char *who = arg;
	unsigned long long start = start_time();
	int sig = 0, mce, pers;
	long long ho;
	long slack;
	struct t_force tf;

	/* the worker starts at least 5 clock ticks after the thread */
	usleep(50 * 1000);
	t_force_init(&tf, "id_prctl");
	if (prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0) ||
	    prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0))
		t_fail("%s: PR_SET_PDEATHSIG/TIMERSLACK: %s", who,
		     strerror(errno));
	mce = !prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0);
	pers = personality(0xffffffff);
	if (pers == -1 || personality(pers | ADDR_NO_RANDOMIZE) == -1)
		t_fail("%s: personality: %s", who, strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		t_fail("%s: PR_SET_NO_NEW_PRIVS: %s", who, strerror(errno));

	ho = t_force_block(&tf);

	if (prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) || sig != SIGUSR2)
		t_fail("%s: PR_GET_PDEATHSIG %d, expected %d", who, sig, SIGUSR2);
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (slack != (long)SLACK_NS)
		t_fail("%s: PR_GET_TIMERSLACK %ld, expected %lu", who, slack,
		     SLACK_NS);
	if (mce && prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) != PR_MCE_KILL_EARLY)
		t_fail("%s: PR_MCE_KILL_GET %d, expected early (%d)", who,
		     prctl(PR_MCE_KILL_GET, 0, 0, 0, 0), PR_MCE_KILL_EARLY);
	if (personality(0xffffffff) != (pers | ADDR_NO_RANDOMIZE))
		t_fail("%s: personality %#x, expected %#x", who,
		     personality(0xffffffff), pers | ADDR_NO_RANDOMIZE);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		t_fail("%s: PR_GET_NO_NEW_PRIVS %d, expected 1", who,
		     prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	if (start_time() != start)
		t_fail("%s: start time %llu in /proc/thread-self/stat, expected %llu",
		     who, start_time(), start);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_run_in_thread(test_prctl_kept, (void *)"thread");
	test_prctl_kept((void *)"leader");
	return T_PASS;
}
