// SPDX-License-Identifier: GPL-2.0
/*
 * The thread name survives a blocking submit: a thread sets PR_SET_NAME,
 * and after the submit PR_GET_NAME and /proc/thread-self/comm still give
 * it. Done in a non-leader thread and in the group leader, with different
 * names. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel that hands off without copying comm: the thread comes
 * back named like the worker, iou-wrk-<tid>.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include "helpers.h"

static void *test_comm_kept(void *arg)
{
	const char *name = arg;
	char got[32], proc[64];
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_comm");
	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		t_fail("PR_SET_NAME: %s", strerror(errno));

	ho = t_force_block(&tf);

	memset(got, 0, sizeof(got));
	if (prctl(PR_GET_NAME, got, 0, 0, 0))
		t_fail("PR_GET_NAME: %s", strerror(errno));
	if (strcmp(got, name))
		t_fail("PR_GET_NAME \"%s\", expected \"%s\"", got, name);
	if (t_read_text("/proc/thread-self/comm", proc, sizeof(proc)))
		t_fail("read /proc/thread-self/comm: %s", strerror(errno));
	proc[strcspn(proc, "\n")] = '\0';
	if (strcmp(proc, name))
		t_fail("/proc/thread-self/comm \"%s\", expected \"%s\"", proc,
		     name);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

int main(void)
{
	t_run_in_thread(test_comm_kept, (void *)"iouh-comm");
	test_comm_kept((void *)"iouh-leader");
	return T_PASS;
}
