// SPDX-License-Identifier: GPL-2.0
/*
 * The audit loginuid and sessionid survive a blocking submit. After its
 * io-wq worker exists (with the process's loginuid), a non-leader thread
 * sets its own loginuid to 1234 through /proc/thread-self/loginuid, which
 * also gives it a new sessionid; after the submit both files read back the
 * same, and the main thread kept its own. Then the same as the group
 * leader of a forked child. In mode handoff the submits must hand off
 * (skip if not, unless IOUH_EXPECT_HANDOFF=1). Needs root and CONFIG_AUDIT
 * (skip without /proc/thread-self/loginuid, or if the loginuid is
 * immutable). Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel/module that hands off without moving loginuid and
 * sessionid: the thread comes back with the worker's, those of the thread
 * when the worker was created.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "helpers.h"

#define LOGINUID	"/proc/thread-self/loginuid"
#define SESSIONID	"/proc/thread-self/sessionid"

struct audit_ids {
	unsigned long loginuid, sessionid;
};

static unsigned long read_id(const char *path)
{
	char buf[32], *end;
	unsigned long v;

	if (t_read_text(path, buf, sizeof(buf)))
		t_fail("read %s: %s", path, strerror(errno));
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf)
		t_fail("%s: \"%s\" is not a number", path, buf);
	return v;
}

static void read_ids(struct audit_ids *ids)
{
	ids->loginuid = read_id(LOGINUID);
	ids->sessionid = read_id(SESSIONID);
}

/* 0, or the errno of the write */
static int set_loginuid(unsigned long uid)
{
	char buf[32];
	int fd, len, err = 0;

	fd = open(LOGINUID, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	len = snprintf(buf, sizeof(buf), "%lu", uid);
	if (write(fd, buf, len) != len)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static void test_loginuid_kept(bool leader)
{
	const char *who = leader ? "child's group leader" : "thread";
	struct audit_ids before, want, after;
	long long ho;
	struct t_force tf;
	int err;

	t_force_init(&tf, "id_loginuid");
	read_ids(&before);
	err = set_loginuid(before.loginuid == 1234 ? 4321 : 1234);
	if (err)
		t_skip("%s: can't set the loginuid: %s", who, strerror(err));
	read_ids(&want);
	if (want.loginuid != (before.loginuid == 1234 ? 4321 : 1234))
		t_fail("%s: loginuid reads %lu after setting it", who,
		     want.loginuid);

	ho = t_force_block(&tf);

	read_ids(&after);
	if (after.loginuid != want.loginuid)
		t_fail("%s: loginuid %lu, expected %lu", who, after.loginuid,
		     want.loginuid);
	if (after.sessionid != want.sessionid)
		t_fail("%s: sessionid %lu, expected %lu", who, after.sessionid,
		     want.sessionid);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

/* the non-leader thread's run, for t_run_in_thread() */
static void *loginuid_thread(void *arg)
{
	(void)arg;
	test_loginuid_kept(false);
	return NULL;
}

static void leader_child(void)
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		/* a hang here ends the child, and the parent fails */
		alarm(25);
		test_loginuid_kept(true);
		exit(T_PASS);
	}
	if (waitpid(pid, &st, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(st))
		t_fail("child killed by signal %d", WTERMSIG(st));
	if (WEXITSTATUS(st) != T_PASS)
		exit(WEXITSTATUS(st));
}

int main(void)
{
	struct audit_ids main_ids, now;

	if (access(LOGINUID, F_OK))
		t_skip("no %s, kernel without CONFIG_AUDIT", LOGINUID);
	if (geteuid())
		t_skip("needs root");
	t_dir("IOUH_EXT4");
	read_ids(&main_ids);
	t_run_in_thread(loginuid_thread, NULL);
	read_ids(&now);
	if (now.loginuid != main_ids.loginuid ||
	    now.sessionid != main_ids.sessionid)
		t_fail("main thread's loginuid/sessionid changed: %lu/%lu -> %lu/%lu",
		     main_ids.loginuid, main_ids.sessionid, now.loginuid,
		     now.sessionid);
	leader_child();
	return T_PASS;
}
