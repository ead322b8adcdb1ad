// SPDX-License-Identifier: GPL-2.0
/*
 * State bound to the io-wq worker's task_struct must not come along when
 * that worker takes over the thread's identity: a per-task perf event
 * opened on the worker's tid keeps counting the worker, never the thread.
 * Review item E10: the worker check (iouh_worker_compatible()) looked
 * only at the submitter's bound state, not at the worker's.
 *
 * The thread makes itself warm (its idle worker W), opens a software
 * task-clock event on the tid of each of its io-wq workers, then
 * test_worker_event_stays: a forced
 * blocking fsync (0), then SPIN_MS of busy userspace in the thread; the
 * event must have counted less than SPIN_MS / 2, as on stock, where the
 * thread never runs as W's task_struct. In mode handoff no handoff to W
 * may happen (W is refused: fallback_task and the refusal worker_bound
 * move, not fallback_worker, which is for no idle worker at all): the
 * request takes the stock punt.
 *
 * Fails on a module whose worker check doesn't look at the worker's bound
 * state: W takes the identity and its event counts the thread's spin.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "helpers.h"

#define SPIN_MS		300

#define MAX_WORKERS	8

/* the tids of the calling process's io-wq workers, at most MAX_WORKERS */
static int worker_tids(pid_t *tids)
{
	int n = t_worker_tids(tids, MAX_WORKERS);

	if (!n)
		t_fail("no io-wq worker after the warm-up");
	return n < MAX_WORKERS ? n : MAX_WORKERS;
}

/* the task clock of every event in @fds, in ns */
static unsigned long long task_clock(const int *fds, int n)
{
	unsigned long long sum = 0, c;
	int i;

	for (i = 0; i < n; i++) {
		if (read(fds[i], &c, sizeof(c)) != sizeof(c))
			t_fail("read an event: %s", strerror(errno));
		sum += c;
	}
	return sum;
}

static void test_worker_event_stays(struct t_force *tf, const int *fds, int n)
{
	unsigned long long c0, c1;
	long long before, fb, wb, end;
	volatile unsigned long spin = 0;

	c0 = task_clock(fds, n);
	fb = t_counter("fallback_task");
	wb = t_refusal("worker_bound");
	before = t_force_block(tf);
	end = t_now_ms() + SPIN_MS;
	while (t_now_ms() < end)
		spin++;
	c1 = task_clock(fds, n);
	if (c1 - c0 >= SPIN_MS / 2 * 1000000ULL)
		t_fail("the workers' task clock counted %llu ms of the thread's %d ms spin",
		       (c1 - c0) / 1000000, SPIN_MS);
	t_expect_unmoved("handoffs", before);
	t_expect_moved("fallback_task", fb);
	if (t_mode_handoff() && t_refusal("worker_bound") <= wb)
		t_fail("the refusal worker_bound didn't move (%lld)", wb);
}

int main(void)
{
	struct perf_event_attr pa;
	pid_t tids[MAX_WORKERS];
	int fds[MAX_WORKERS];
	struct t_force tf;
	int i, n;

	t_force_init(&tf, "id_worker_perf");
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_TASK_CLOCK;
	n = worker_tids(tids);
	for (i = 0; i < n; i++) {
		fds[i] = syscall(SYS_perf_event_open, &pa, tids[i], -1, -1,
				 PERF_FLAG_FD_CLOEXEC);
		if (fds[i] >= 0)
			continue;
		if (errno != ENOENT && errno != ENOSYS && errno != EACCES &&
		    errno != EPERM && errno != EOPNOTSUPP)
			t_fail("perf_event_open: %s", strerror(errno));
		t_skip("perf_event_open on a worker: %s", strerror(errno));
	}
	test_worker_event_stays(&tf, fds, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	t_force_exit(&tf);
	return T_PASS;
}
