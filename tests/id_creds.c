// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread credentials survive a blocking submit. A non-leader thread
 * drops to uid/gid 65534 and groups { 65534 } with the raw syscalls (per
 * thread, not glibc's process-wide setxid broadcast) after its io-wq worker
 * was created as root; after the submit it still reads back 65534 for all
 * of real/effective/saved uid and gid, its groups and /proc/thread-self
 * status, with no effective capabilities, while the main thread is still
 * root. Needs root. Blocking is forced by fsync of dirty data on ext4, see
 * handoff_force.c.
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
#include "common.h"
#include "handoff_force.h"

#define NOBODY	65534

static struct hf hf;
static long long ho;

static void get_ids(long nr, unsigned int id[3])
{
	if (syscall(nr, &id[0], &id[1], &id[2]))
		fail("getres%cid: %s", nr == SYS_getresuid ? 'u' : 'g',
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
			fail("%s: uids %u %u %u gids %u %u %u, expected %u",
			     who, uid[0], uid[1], uid[2], gid[0], gid[1],
			     gid[2], want);
}

/* /proc/thread-self/status has a line starting with @want */
static void check_status(const char *want)
{
	char buf[4096];

	if (read_text("/proc/thread-self/status", buf, sizeof(buf)))
		fail("read /proc/thread-self/status: %s", strerror(errno));
	if (!strstr(buf, want))
		fail("/proc/thread-self/status lacks \"%s\"", want);
}

static void drop(void)
{
	unsigned int g = NOBODY;

	if (syscall(SYS_setgroups, 1, &g))
		fail("setgroups: %s", strerror(errno));
	if (syscall(SYS_setresgid, NOBODY, NOBODY, NOBODY))
		fail("setresgid: %s", strerror(errno));
	if (syscall(SYS_setresuid, NOBODY, NOBODY, NOBODY))
		fail("setresuid: %s", strerror(errno));
}

static void *dropper(void *arg)
{
	unsigned int groups[8];
	long n;

	(void)arg;
	/* the worker, the handoff target, is created as root */
	hf_init(&hf, "id_creds");
	if (fchmod(hf.fd, 0666))
		fail("fchmod: %s", strerror(errno));
	drop();
	check_ids(NOBODY, "before the submit");

	ho = hf_block(&hf);

	check_ids(NOBODY, "dropped thread");
	n = syscall(SYS_getgroups, 8, groups);
	if (n != 1 || groups[0] != NOBODY)
		fail("groups: %ld entries, first %u, expected { %u }", n,
		     n > 0 ? groups[0] : 0, NOBODY);
	check_status("\nUid:\t65534\t65534\t65534\t65534\n");
	check_status("\nGid:\t65534\t65534\t65534\t65534\n");
	check_status("\nCapEff:\t0000000000000000\n");
	io_uring_queue_exit(&hf.ring);
	close(hf.fd);
	return NULL;
}

int main(void)
{
	if (geteuid())
		skip("needs root");
	run_in_thread(dropper, NULL);
	check_ids(0, "main thread");
	check_status("\nUid:\t0\t0\t0\t0\n");
	/* here, as root: nobody may not unlink the file, also on a skip */
	expect_handoff(ho);
	unlink(hf.path);
	return T_PASS;
}
