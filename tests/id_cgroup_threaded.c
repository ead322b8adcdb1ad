// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's place in a threaded cgroup survives a blocking submit. The test
 * mounts cgroup2 (skips if it can't), makes a domain-threaded cgroup D with
 * a threaded child T, moves the process into D, then in the thread under
 * test (a non-leader thread, then the group leader): warms its io-wq worker
 * (which stays in D), moves itself into T, does a blocking fsync with a
 * handoff in mode handoff, and reads /proc/thread-self/cgroup: it must
 * still name T. The other threads stay in D. Blocking is forced by fsync of
 * dirty data on ext4, see helpers.c.
 *
 * Fails on a module that doesn't move the cgroup with the identity: the
 * thread comes back in D, where its new task_struct, the worker, was.
 *
 * Every cgroup2 mount shows the one hierarchy, so D is named for the pid:
 * a D that an earlier run left behind is not in the way (seen once, in mode
 * handoff: "mkdir .../iouh-dom/thr: File exists"). Removing one retries
 * while it is busy, a task of ours may still be on its way out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "helpers.h"

static char mnt[256], dom[300], thr[320], want[64];
static pid_t owner;

/* "0::/path" of the calling thread, newline stripped */
static void thread_cgroup(char *buf, size_t len)
{
	if (t_read_text("/proc/thread-self/cgroup", buf, len))
		t_fail("reading /proc/thread-self/cgroup: %s", strerror(errno));
	buf[strcspn(buf, "\n")] = '\0';
}

static void cleanup(void)
{
	char pid[32];

	if (getpid() != owner || !mnt[0])
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	t_write_file(mnt, "cgroup.procs", pid);
	t_rmdir_busy(thr);
	t_rmdir_busy(dom);
	t_cgroup2_umount(mnt);
}

static void setup(void)
{
	char pid[32];

	t_cgroup2_mount(mnt, sizeof(mnt));
	owner = getpid();
	atexit(cleanup);
	snprintf(dom, sizeof(dom), "%s/iouh-dom.%d", mnt, (int)getpid());
	snprintf(thr, sizeof(thr), "%s/thr", dom);
	snprintf(want, sizeof(want), "0::/iouh-dom.%d/thr", (int)getpid());
	if (mkdir(dom, 0755) || mkdir(thr, 0755))
		t_fail("mkdir %s: %s", thr, strerror(errno));
	t_write_file(thr, "cgroup.type", "threaded");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	t_write_file(dom, "cgroup.procs", pid);
}

static void test_thread_cgroup_kept(bool leader)
{
	char tid[32], got[256];
	long long ho;
	struct t_force tf;

	(void)leader;
	/* the worker is forked here, in the domain cgroup */
	t_force_init(&tf, "id_cgroup_threaded");
	snprintf(tid, sizeof(tid), "%d", gettid());
	t_write_file(thr, "cgroup.threads", tid);
	thread_cgroup(got, sizeof(got));
	if (strcmp(got, want))
		t_fail("before the submit: %s, expected %s", got, want);

	ho = t_force_block(&tf);

	thread_cgroup(got, sizeof(got));
	if (strcmp(got, want))
		t_fail("after the submit: %s, expected %s", got, want);
	t_expect_handoff(ho);
	t_force_exit(&tf);
	/* back to the domain, for the next run */
	t_write_file(dom, "cgroup.threads", tid);
}

int main(void)
{
	setup();
	t_run_leader_and_thread(test_thread_cgroup_kept);
	return T_PASS;
}
