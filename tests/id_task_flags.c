// SPDX-License-Identifier: GPL-2.0
/*
 * The per-task flags a user can see survive a blocking submit: field 9 of
 * /proc/thread-self/stat, masked to the bits that are the thread's history
 * rather than the kernel's momentary state: PF_FORKNOEXEC (forked, no exec
 * since: process accounting's AFORK), PF_SUPERPRIV (used a capability:
 * accounting's ASU) and PF_NPROC_EXCEEDED (a set*uid() went over
 * RLIMIT_NPROC: the next execve() fails with EAGAIN). Before and after the
 * forced handoff they must read the same; in the group leader, which the
 * harness exec'd (PF_FORKNOEXEC clear, the io-wq worker that takes over has
 * it set), and in a new thread (set on both).
 *
 * Fails on a module that hands off without these: the leader comes back
 * with PF_FORKNOEXEC, as if it had never exec'd.
 */
#define _GNU_SOURCE
#include <string.h>
#include "helpers.h"

#define PF_FORKNOEXEC		0x00000040
#define PF_SUPERPRIV		0x00000100
#define PF_NPROC_EXCEEDED	0x00001000
#define HISTORY	(PF_FORKNOEXEC | PF_SUPERPRIV | PF_NPROC_EXCEEDED)

static unsigned long task_flags(void)
{
	char buf[1024], *p;
	unsigned long flags;

	if (t_read_text("/proc/thread-self/stat", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/stat");
	p = strrchr(buf, ')');
	/* state ppid pgrp session tty_nr tpgid flags */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		t_fail("parse /proc/thread-self/stat: %s", buf);
	return flags & HISTORY;
}

static void test_flags_kept(bool leader)
{
	unsigned long before, after;
	struct t_force tf;
	long long ho;

	t_force_init(&tf, "id_task_flags");
	before = task_flags();
	ho = t_force_block(&tf);
	after = task_flags();
	if (after != before)
		t_fail("%s: task flags 0x%lx after the submit, 0x%lx before (PF_FORKNOEXEC 0x40, PF_SUPERPRIV 0x100, PF_NPROC_EXCEEDED 0x1000)",
		       leader ? "leader" : "thread", after, before);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

int main(void)
{
	t_run_leader_and_thread(test_flags_kept);
	return T_PASS;
}
