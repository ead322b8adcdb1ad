// SPDX-License-Identifier: GPL-2.0
/*
 * gettid(), getpid() and getppid() return the same values before and after
 * a blocking submit, in the group leader and in a second thread, and
 * /proc/self/task lists the same user threads (io-wq and SQPOLL threads
 * aside) before and after. Blocking is forced by fsync of dirty data on
 * ext4, see helpers.c.
 *
 * Fails on a kernel that hands off without exchanging the tids (gettid()
 * returns the worker's), without moving group leadership along with the
 * leader's tid (getpid() changes, /proc/self stops matching), or that drops
 * or duplicates a thread in the thread group list.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define MAX_TIDS	256

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* tids of the user threads in the group, sorted, without duplicates */
static int user_tids(int *tids)
{
	struct dirent *de;
	int n = 0, i, out;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		t_fail("opendir /proc/self/task: %s", strerror(errno));
	while ((de = readdir(d))) {
		char path[300], comm[64];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		/* gone meanwhile, an exiting worker */
		if (t_read_text(path, comm, sizeof(comm)))
			continue;
		if (!strncmp(comm, "iou-", 4))
			continue;
		if (n == MAX_TIDS)
			t_fail("more than %d threads", MAX_TIDS);
		tids[n++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(tids, n, sizeof(*tids), cmp_int);
	for (i = 0, out = 0; i < n; i++)
		if (!out || tids[out - 1] != tids[i])
			tids[out++] = tids[i];
	return out;
}

struct tids_poll {
	const int *before;
	int n;
	/* the last poll's count */
	int m;
};

static bool tids_back(void *arg)
{
	struct tids_poll *p = arg;
	int now[MAX_TIDS];

	p->m = user_tids(now);
	return p->m == p->n && !memcmp(now, p->before, p->n * sizeof(*now));
}

/*
 * The set must come back. A demoted task renames itself to iou-wrk-* only
 * once it is released as a worker, so give that a moment.
 */
static void same_tids(const int *before, int n)
{
	struct tids_poll p = { .before = before, .n = n };

	if (!t_wait_until(tids_back, &p, 2000, 1))
		t_fail("/proc/self/task: %d user threads before, %d after", n,
		       p.m);
}

static void check_proc_links(pid_t pid, pid_t tid)
{
	char link[64], want[64];
	ssize_t n;

	n = readlink("/proc/thread-self", link, sizeof(link) - 1);
	if (n < 0)
		t_fail("readlink /proc/thread-self: %s", strerror(errno));
	link[n] = '\0';
	snprintf(want, sizeof(want), "%d/task/%d", pid, tid);
	if (strcmp(link, want))
		t_fail("/proc/thread-self is %s, expected %s", link, want);
}

static void test_tids_kept(bool leader)
{
	pid_t tid, pid, ppid;
	int before[MAX_TIDS], n;
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_tids");
	tid = gettid();
	pid = getpid();
	ppid = getppid();
	if (leader != (tid == pid))
		t_fail("test setup: leader %d, tid %d, pid %d", leader, tid, pid);
	n = user_tids(before);

	ho = t_force_block(&tf);

	if (gettid() != tid)
		t_fail("%s: gettid %d, expected %d", leader ? "leader" : "thread",
		     gettid(), tid);
	if (getpid() != pid)
		t_fail("%s: getpid %d, expected %d", leader ? "leader" : "thread",
		     getpid(), pid);
	if (getppid() != ppid)
		t_fail("%s: getppid %d, expected %d",
		     leader ? "leader" : "thread", getppid(), ppid);
	check_proc_links(pid, tid);
	same_tids(before, n);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

/* a third thread that just sits there, so the group has bystanders */
static void *bystander(void *arg)
{
	char c;

	if (read(*(int *)arg, &c, 1) != 1)
		t_fail("bystander read: %s", strerror(errno));
	return NULL;
}

int main(void)
{
	pthread_t t;
	int p[2];

	if (pipe(p))
		t_fail("pipe: %s", strerror(errno));
	if (pthread_create(&t, NULL, bystander, &p[0]))
		t_fail("pthread_create");
	t_run_leader_and_thread(test_tids_kept);
	if (write(p[1], "x", 1) != 1)
		t_fail("write: %s", strerror(errno));
	pthread_join(t, NULL);
	return T_PASS;
}
