// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread credentials survive a blocking submit. A non-leader thread
 * drops to uid/gid 65534 and groups { 65534 } with the raw syscalls (per
 * thread, not glibc's process-wide setxid broadcast) after its io-wq worker
 * was created as root; after the submit it still reads back 65534 for all
 * of real/effective/saved uid and gid, its groups and /proc/thread-self
 * status, with no effective capabilities, while the main thread is still
 * root. Needs root. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel that hands off without moving the cred: the thread
 * comes back with the worker's root creds, i.e. it regains privileges.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "helpers.h"

#define NOBODY	65534

static struct t_force tf;
static long long ho;

static void get_ids(long nr, unsigned int id[3])
{
	if (syscall(nr, &id[0], &id[1], &id[2]))
		t_fail("getres%cid: %s", nr == SYS_getresuid ? 'u' : 'g',
		     strerror(errno));
}

static void check_ids(unsigned int want, const char *who)
{
	unsigned int uid[3], gid[3];
	int i;

	get_ids(SYS_getresuid, uid);
	get_ids(SYS_getresgid, gid);
	for (i = 0; i < 3; i++)
		if (uid[i] != want || gid[i] != want)
			t_fail("%s: uids %u %u %u gids %u %u %u, expected %u",
			     who, uid[0], uid[1], uid[2], gid[0], gid[1],
			     gid[2], want);
}

/* /proc/thread-self/status has a line starting with @want */
static void check_status(const char *want)
{
	char buf[4096];

	if (t_read_text("/proc/thread-self/status", buf, sizeof(buf)))
		t_fail("read /proc/thread-self/status: %s", strerror(errno));
	if (!strstr(buf, want))
		t_fail("/proc/thread-self/status lacks \"%s\"", want);
}

static void drop(void)
{
	unsigned int g = NOBODY;

	if (syscall(SYS_setgroups, 1, &g))
		t_fail("setgroups: %s", strerror(errno));
	if (syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY))
		t_fail("setresgid: %s", strerror(errno));
	if (syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY))
		t_fail("setresuid: %s", strerror(errno));
}

static void *dropper(void *arg)
{
	unsigned int groups[8];
	long n;

	(void)arg;
	/* the worker, the handoff target, is created as root */
	t_force_init(&tf, "id_creds");
	if (fchmod(tf.fd, 0666))
		t_fail("fchmod: %s", strerror(errno));
	drop();
	check_ids(NOBODY, "before the submit");

	ho = t_force_block(&tf);

	check_ids(NOBODY, "dropped thread");
	n = syscall(SYS_getgroups, 8, groups);
	if (n != 1 || groups[0] != NOBODY)
		t_fail("groups: %ld entries, first %u, expected { %u }", n,
		     n > 0 ? groups[0] : 0, NOBODY);
	check_status("\nUid:\t65534\t65534\t65534\t65534\n");
	check_status("\nGid:\t65534\t65534\t65534\t65534\n");
	check_status("\nCapEff:\t0000000000000000\n");
	io_uring_queue_exit(&tf.ring);
	close(tf.fd);
	return NULL;
}

int main(void)
{
	if (geteuid())
		t_skip("needs root");
	t_run_in_thread(dropper, NULL);
	check_ids(0, "main thread");
	check_status("\nUid:\t0\t0\t0\t0\n");
	/* here, as root: nobody may not unlink the file, also on a skip */
	t_expect_handoff(ho);
	unlink(tf.path);
	return T_PASS;
}
