// SPDX-License-Identifier: GPL-2.0
/*
 * Thread-local storage survives a blocking submit: a __thread variable has
 * the same address and its distinctive value afterwards, pthread_self()
 * (the TCB, found through the FS base on x86_64) is unchanged, and on
 * x86_64 ARCH_GET_FS reads back the same FS base. Done in the group leader
 * and in a second thread. Blocking is forced by fsync of dirty data on
 * ext4, see handoff_force.c.
 *
 * An io-wq worker inherits the FS base of the thread that created it, the
 * submitter itself, so an FS base that did not move would go unnoticed.
 * On x86_64 the thread therefore also sets its GS base (unused by glibc)
 * after its worker exists, and ARCH_GET_GS must read it back after the
 * submit.
 *
 * Fails on a kernel that hands off without loading the segment bases of
 * the identity: the GS base reads back 0, or TLS points elsewhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifdef __x86_64__
#include <asm/prctl.h>
#endif
#include "common.h"
#include "handoff_force.h"

static __thread unsigned long tls_val;

#ifdef __x86_64__
static char gs_target[64];

static unsigned long seg_base(int code)
{
	unsigned long base;

	if (syscall(SYS_arch_prctl, code, &base))
		fail("arch_prctl %#x: %s", code, strerror(errno));
	return base;
}

static void set_gs(unsigned long base)
{
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, base))
		fail("ARCH_SET_GS: %s", strerror(errno));
}
#endif

static void *check(void *arg)
{
	const char *who = arg ? "leader" : "thread";
#ifdef __x86_64__
	unsigned long fs, gs;
#endif
	unsigned long val, *addr;
	pthread_t self;
	long long ho;
	struct hf hf;

	hf_init(&hf, "id_tls");
	val = 0x7e5a1d00UL ^ (unsigned long)gettid();
	tls_val = val;
	addr = &tls_val;
	self = pthread_self();
#ifdef __x86_64__
	fs = seg_base(ARCH_GET_FS);
	gs = (unsigned long)gs_target + (arg ? 8 : 16);
	set_gs(gs);
	if (seg_base(ARCH_GET_GS) != gs)
		fail("ARCH_SET_GS did not take");
#endif

	ho = hf_block(&hf);

	if (&tls_val != addr)
		fail("%s: TLS variable at %p, was at %p", who,
		     (void *)&tls_val, (void *)addr);
	if (tls_val != val)
		fail("%s: TLS value %#lx, expected %#lx", who, tls_val, val);
	if (!pthread_equal(pthread_self(), self))
		fail("%s: pthread_self changed", who);
#ifdef __x86_64__
	if (seg_base(ARCH_GET_FS) != fs)
		fail("%s: FS base %#lx, expected %#lx", who,
		     seg_base(ARCH_GET_FS), fs);
	if (seg_base(ARCH_GET_GS) != gs)
		fail("%s: GS base %#lx, expected %#lx", who,
		     seg_base(ARCH_GET_GS), gs);
	set_gs(0);
#endif
	expect_handoff(ho);
	hf_exit(&hf);
	return NULL;
}

int main(void)
{
	run_leader_and_thread(check);
	return T_PASS;
}
