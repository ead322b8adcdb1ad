// SPDX-License-Identifier: GPL-2.0
/*
 * no_new_privs and a per-thread seccomp filter survive a blocking submit.
 * A non-leader thread sets PR_SET_NO_NEW_PRIVS and installs, without TSYNC,
 * a filter that fails getppid() with EPERM. After the submit the thread
 * still has PR_GET_NO_NEW_PRIVS 1, getppid() still fails with EPERM and
 * /proc/thread-self/status says Seccomp: 2 and NoNewPrivs: 1.
 *
 * Two rounds. In the first the thread's io-wq worker was created before
 * the filter, so it has neither: the only correct outcomes are no handoff,
 * or one to a worker that carries the same filter; taking over the
 * unfiltered worker lets the identity escape the filter. In the second a
 * thread spawned after the filter (so it and its worker inherit both) does
 * the same and must see a handoff in mode handoff. Blocking is forced by
 * fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that hands off to a worker with a different (no)
 * filter or without no_new_privs and does not carry them over: getppid()
 * succeeds, or NoNewPrivs/Seccomp read 0. As seccomp state must be equal on
 * both sides for a handoff, not moving it can't be seen beyond that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "helpers.h"

static void install_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		t_fail("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		t_fail("seccomp: %s", strerror(errno));
}

static void check_confined(const char *who)
{
	char buf[4096];
	long ret;

	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		t_fail("%s: PR_GET_NO_NEW_PRIVS is not 1", who);
	errno = 0;
	ret = syscall(SYS_getppid);
	if (ret != -1 || errno != EPERM)
		t_fail("%s: getppid returned %ld (%s), filter gone", who, ret,
		     strerror(errno));
	if (t_read_text("/proc/thread-self/status", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/status: %s", strerror(errno));
	if (!strstr(buf, "\nSeccomp:\t2\n"))
		t_fail("%s: status does not say Seccomp: 2", who);
	if (!strstr(buf, "\nNoNewPrivs:\t1\n"))
		t_fail("%s: status does not say NoNewPrivs: 1", who);
}

/* spawned by the confined thread: inherits filter and nnp, so does its wq */
static void *inherited(void *arg)
{
	long long ho;
	struct t_force tf;

	(void)arg;
	check_confined("inheriting thread, before");
	t_force_init(&tf, "id_nnp_seccomp");
	ho = t_force_block(&tf);
	check_confined("inheriting thread");
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

static void *confined(void *arg)
{
	struct t_force tf;

	(void)arg;
	/* the worker comes first, without filter and nnp */
	t_force_init(&tf, "id_nnp_seccomp");
	install_filter();
	check_confined("confined thread, before");
	t_force_block(&tf);
	check_confined("confined thread, unfiltered worker");
	t_force_exit(&tf);

	t_run_in_thread(inherited, NULL);
	return NULL;
}

int main(void)
{
	if (syscall(SYS_getppid) < 0)
		t_fail("getppid fails before any filter");
	t_run_in_thread(confined, NULL);
	/* TSYNC was not asked for, the main thread is unconfined */
	if (syscall(SYS_getppid) < 0)
		t_fail("main thread got the filter: %s", strerror(errno));
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		t_fail("main thread got no_new_privs");
	return T_PASS;
}
