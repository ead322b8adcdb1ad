// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread LSM state that stays with the task_struct is never lost to a
 * handoff (review item E9). AppArmor keeps a thread's change_onexec label
 * (the profile its next exec moves to) in its task blob, not in the creds,
 * so it doesn't move with the identity; with no policy loaded a thread can
 * still set it to "unconfined" through /proc/thread-self/attr/apparmor/exec.
 * Each case runs in a fresh thread and does a blocking submit:
 *
 *  (a) onexec set after the thread's io-wq worker was forked (the worker
 *      has none): the handoff must be refused ("worker_lsm" moves,
 *      "handoffs" doesn't), the fsync completes with 0 and the thread
 *      still reads its onexec back;
 *  (b) onexec set before the worker was forked (the worker inherited the
 *      same label): nothing differs, so in mode handoff the handoff
 *      happens, and the thread still reads its onexec back. This case
 *      keeps the check from refusing what it needn't.
 *
 * In the stock modes both read backs hold trivially: that is the
 * comparison. Skips where AppArmor isn't built in (the file is missing or
 * refuses the write). Needs root. Blocking is forced by fsync of dirty data
 * on ext4, see helpers.c.
 *
 * Fails on a kernel/module that hands off with differing blobs: after (a)'s
 * handoff the tid's task_struct is the worker's, whose onexec is none, and
 * the read back gives EINVAL; the next exec would skip the transition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define NAME	"id_lsm_onexec"
#define ONEXEC	"/proc/thread-self/attr/apparmor/exec"

static int passed, probe_err;

/* 0, or errno of the write */
static int onexec_set(const char *cmd)
{
	int fd = open(ONEXEC, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		err = errno;
	close(fd);
	return err;
}

/* the calling thread's onexec label must be @label */
static void expect_onexec(const char *what, const char *label)
{
	char buf[256];
	ssize_t n;
	int fd = open(ONEXEC, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		t_fail("%s: open %s: %s", what, ONEXEC, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		t_fail("%s: reading %s back: %s (the label was lost)", what,
		       ONEXEC, strerror(errno));
	close(fd);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (strcmp(buf, label))
		t_fail("%s: onexec reads \"%s\", set \"%s\"", what, buf, label);
}

static void *onexec_after_worker(void *arg)
{
	const char *what = "(a) onexec set after the worker";
	long long ho, fb, rc;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, NAME);
	if (onexec_set("exec unconfined"))
		t_fail("%s: writing %s: %s", what, ONEXEC, strerror(errno));
	rc = t_refusal("worker_lsm");
	fb = t_counter("fallback_task");
	ho = t_force_block(&tf);
	expect_onexec(what, "unconfined");
	t_expect_unmoved("handoffs", ho);
	/* a refused worker counts as a refusal of the task */
	t_expect_moved("fallback_task", fb);
	if (t_mode_handoff() && t_refusal("worker_lsm") <= rc)
		t_fail("%s: refusal worker_lsm did not move (%lld -> %lld)",
		       what, rc, t_refusal("worker_lsm"));
	passed++;
	t_force_exit(&tf);
	return NULL;
}

static void *onexec_before_worker(void *arg)
{
	const char *what = "(b) onexec set before the worker";
	struct t_force tf;
	long long ho;

	(void)arg;
	if (onexec_set("exec unconfined"))
		t_fail("%s: writing %s: %s", what, ONEXEC, strerror(errno));
	t_force_init(&tf, NAME);
	ho = t_force_block(&tf);
	expect_onexec(what, "unconfined");
	t_expect_handoff(ho);
	passed++;
	t_force_exit(&tf);
	return NULL;
}

/* in a thread of its own: the threads below must start without onexec */
static void *onexec_probe(void *arg)
{
	(void)arg;
	probe_err = onexec_set("exec unconfined");
	return NULL;
}

int main(void)
{
	if (geteuid())
		t_skip("needs root");
	t_dir("IOUH_EXT4");
	if (access(ONEXEC, F_OK))
		t_skip("no AppArmor (%s: %s)", ONEXEC, strerror(errno));
	t_run_in_thread(onexec_probe, NULL);
	if (probe_err)
		t_skip("AppArmor refuses change_onexec: %s", strerror(probe_err));
	t_run_in_thread(onexec_after_worker, NULL);
	t_run_in_thread(onexec_before_worker, NULL);
	return passed == 2 ? T_PASS : T_FAIL;
}
