// SPDX-License-Identifier: GPL-2.0
/*
 * The module's cgroup setting scopes the inline issue to one cgroup v2
 * subtree: a process inside issues inline, one outside takes the stock punt
 * (counted as fallback_scope), and a removed cgroup or bad input gets a
 * clear answer.
 *
 * The test mounts cgroup2 (skips if it can't), makes a cgroup S named for
 * its pid and sets cgroup to S's path. Each step forks a child that makes
 * itself warm on a fresh ring (its io-wq worker is forked in its cgroup)
 * and submits one STATX of a tmpfs directory, which policy inline would
 * issue inline; the parent reads inline_issued and fallback_scope around
 * it. test_outside_punts: a child in the root cgroup, no inline issue, one
 * fallback_scope. test_inside_inline: a child moved into S first, one inline
 * issue. test_removed_cgroup: S removed while set; the setting reads
 * "<path> (removed)" and a child anywhere takes the punt.
 * test_refusals: a path that doesn't exist (ENOENT) or isn't absolute
 * (EINVAL) is refused and the setting keeps its value. test_empty_is_everyone:
 * cgroup set to "", a child in the root cgroup issues inline again.
 *
 * Only in mode handoff (the setting is the module's, and only an enabled
 * module issues inline); skipped elsewhere. The setting is cleared at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "helpers.h"

static char mnt[PATH_MAX], scope[PATH_MAX + 128], rel[128];
static pid_t owner;

/* write @val to the cgroup setting: 0 or the errno of the refusal */
static int set_scope(const char *val)
{
	int fd = open("/sys/kernel/io_uring_handoff/cgroup", O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		t_fail("open the cgroup setting: %s", strerror(errno));
	if (write(fd, val, strlen(val)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

static void cleanup(void)
{
	if (getpid() != owner)
		return;
	set_scope("");
	t_rmdir_busy(scope);
	t_cgroup2_umount(mnt);
}

static void setup(void)
{
	t_cgroup2_mount(mnt, sizeof(mnt));
	owner = getpid();
	atexit(cleanup);
	snprintf(rel, sizeof(rel), "/iouh-scope.%d", (int)getpid());
	snprintf(scope, sizeof(scope), "%s%s", mnt, rel);
	if (mkdir(scope, 0755))
		t_fail("mkdir %s: %s", scope, strerror(errno));
}

/* a child, in @cgroup (NULL: where we are), warm, submits one STATX */
static void statx_child(const char *cgroup)
{
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct statx stx;
	char pid[32];
	int status, ret;
	pid_t child;

	child = fork();
	if (child < 0)
		t_fail("fork: %s", strerror(errno));
	if (!child) {
		if (cgroup) {
			snprintf(pid, sizeof(pid), "%d", (int)getpid());
			t_write_file(cgroup, "cgroup.procs", pid);
		}
		if (t_queue_init(8, &ring, 0))
			t_fail("io_uring_queue_init");
		t_warm(&ring);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_statx(sqe, AT_FDCWD, t_dir("IOUH_TMPFS"), 0,
				    STATX_BASIC_STATS, &stx);
		sqe->user_data = 1;
		if (t_submit(&ring) != 1)
			t_fail("submit STATX");
		ret = t_reap_one(&ring, 1);
		if (ret)
			t_fail("STATX: %d", ret);
		_exit(0);
	}
	if (!t_wait_child_ms(child, &status, 0, 20000))
		t_fail("the STATX child didn't exit in 20 s");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		t_fail("the STATX child: status %#x", status);
}

/* run statx_child(@cgroup): inline_issued and fallback_scope must move so */
static void expect_child(const char *what, const char *cgroup, int inl,
			 int scoped)
{
	long long i0 = t_counter("inline_issued");
	long long s0 = t_counter("fallback_scope");
	long long di, ds;

	statx_child(cgroup);
	di = t_counter("inline_issued") - i0;
	ds = t_counter("fallback_scope") - s0;
	if (di != inl || ds != scoped)
		t_fail("%s: inline_issued moved %lld, fallback_scope %lld; want %d, %d",
		       what, di, ds, inl, scoped);
}

static void test_outside_punts(void)
{
	expect_child("outside the cgroup", NULL, 0, 1);
}

static void test_inside_inline(void)
{
	expect_child("inside the cgroup", scope, 1, 0);
}

static void test_removed_cgroup(void)
{
	char got[PATH_MAX], want[sizeof(rel) + 16];
	t_rmdir_busy(scope);
	if (!access(scope, F_OK))
		t_fail("rmdir %s: %s", scope, strerror(errno));
	t_setting_get("cgroup", got, sizeof(got));
	snprintf(want, sizeof(want), "%s (removed)\n", rel);
	if (strcmp(got, want))
		t_fail("the setting of a removed cgroup reads \"%s\"", got);
	expect_child("the cgroup removed", NULL, 0, 1);
}

static void test_refusals(void)
{
	char before[PATH_MAX], after[PATH_MAX];
	int ret;

	t_setting_get("cgroup", before, sizeof(before));
	ret = set_scope("/iouh-no-such-cgroup");
	if (ret != ENOENT)
		t_fail("a missing cgroup: %s, want ENOENT", strerror(ret));
	ret = set_scope("relative/path");
	if (ret != EINVAL)
		t_fail("a relative path: %s, want EINVAL", strerror(ret));
	t_setting_get("cgroup", after, sizeof(after));
	if (strcmp(before, after))
		t_fail("a refused write changed the setting: \"%s\" -> \"%s\"",
		       before, after);
}

static void test_empty_is_everyone(void)
{
	char got[64];

	if (set_scope("\n"))
		t_fail("clearing the setting: %s", strerror(errno));
	t_setting_get("cgroup", got, sizeof(got));
	if (strcmp(got, "\n"))
		t_fail("the cleared setting reads \"%s\"", got);
	expect_child("the setting empty", NULL, 1, 0);
}

int main(void)
{
	int ret;

	if (!t_mode_handoff() || t_counter("fallback_scope") < 0)
		t_skip("the cgroup setting needs the module, enabled");
	setup();
	ret = set_scope(rel);
	if (ret)
		t_fail("setting cgroup to %s: %s", rel, strerror(ret));
	test_outside_punts();
	test_inside_inline();
	test_removed_cgroup();
	test_refusals();
	test_empty_is_everyone();
	return T_PASS;
}
