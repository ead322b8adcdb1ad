// SPDX-License-Identifier: GPL-2.0
/*
 * Thread-local storage survives a blocking submit: a __thread variable has
 * the same address and its distinctive value afterwards, pthread_self()
 * (the TCB, found through the FS base on x86_64) is unchanged, and on
 * x86_64 ARCH_GET_FS reads back the same FS base. Done in the group leader
 * and in a second thread. Blocking is forced by fsync of dirty data on
 * ext4, see helpers.c.
 *
 * An io-wq worker inherits the FS base of the thread that created it, the
 * submitter itself, so an FS base that did not move would go unnoticed.
 * On x86_64 the thread therefore also sets its GS base (unused by glibc)
 * after its worker exists, and ARCH_GET_GS must read it back after the
 * submit.
 *
 * arm64 has TPIDR_EL0 for glibc's TCB, and a user can write it directly:
 * a second submit, from one asm function, runs with another value in it
 * that must read back after the syscall.
 *
 * Fails on a kernel that hands off without loading the segment bases of
 * the identity: the GS base reads back 0, or TLS points elsewhere; on
 * arm64 TPIDR_EL0 reads back the worker's value.
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
#include "helpers.h"

static __thread unsigned long tls_val;

#ifdef __aarch64__
#include <stddef.h>

struct tp_io {
	unsigned long tp_in;
	unsigned long tp_out;
	long ret;
	long fd;
};

_Static_assert(offsetof(struct tp_io, tp_out) == 8, "layout");
_Static_assert(offsetof(struct tp_io, ret) == 16, "layout");
_Static_assert(offsetof(struct tp_io, fd) == 24, "layout");
_Static_assert(IORING_ENTER_GETEVENTS == 1, "asm passes 1");

#define STR_(x)	#x
#define STR(x)	STR_(x)

/*
 * long tp_enter(struct tp_io *io): TPIDR_EL0 set to tp_in for the
 * io_uring_enter() syscall (to_submit 1, min_complete 1, GETEVENTS) and
 * read back into tp_out after it, the caller's restored before any C code
 * (glibc's TCB is found through it) runs again.
 */
long tp_enter(struct tp_io *io);
__asm__("\t.text\n"
	"\t.type tp_enter, %function\n"
	"tp_enter:\n"
	"\tmrs x9, tpidr_el0\n"
	"\tstp x9, x0, [sp, #-16]!\n"
	"\tldr x10, [x0]\n"
	"\tmsr tpidr_el0, x10\n"
	"\tldr x0, [x0, #24]\n"
	"\tmov x1, #1\n\tmov x2, #1\n\tmov x3, #1\n"
	"\tmov x4, #0\n\tmov x5, #0\n"
	"\tmov x8, #" STR(__NR_io_uring_enter) "\n"
	"\tsvc #0\n"
	"\tmrs x10, tpidr_el0\n"
	"\tldp x9, x11, [sp], #16\n"
	"\tmsr tpidr_el0, x9\n"
	"\tstr x10, [x11, #8]\n"
	"\tstr x0, [x11, #16]\n"
	"\tret\n"
	"\t.size tp_enter, .-tp_enter\n");

/*
 * An io-wq worker is forked with its creator's TPIDR_EL0, so the submit
 * runs with another value in it: one that didn't move comes back as
 * glibc's TCB address.
 */
static void check_tpidr(struct t_force *tf, const char *who)
{
	struct tp_io io = { 0 };
	long long ho;
	int res;

	/* the first submit's handoff: wait for a worker to take this one */
	t_wait_idle_worker();
	t_force_queue_fsync(tf, 0x7b);
	io.tp_in = 0x5eed7b1d00UL ^ (unsigned long)gettid();
	io.fd = tf->ring.ring_fd;

	ho = t_counter("handoffs");
	tp_enter(&io);
	if (io.ret != 1)
		t_fail("%s: io_uring_enter returned %ld, expected 1", who,
		     io.ret);
	res = t_reap_one(&tf->ring, 0x7b);
	if (res)
		t_fail("%s: fsync res %d (%s), expected 0", who, res,
		     strerror(-res));
	if (io.tp_out != io.tp_in)
		t_fail("%s: TPIDR_EL0 %#lx, expected %#lx", who, io.tp_out,
		     io.tp_in);
	t_expect_handoff(ho);
}
#endif

#ifdef __x86_64__
static char gs_target[64];

static unsigned long seg_base(int code)
{
	unsigned long base;

	if (syscall(SYS_arch_prctl, code, &base))
		t_fail("arch_prctl %#x: %s", code, strerror(errno));
	return base;
}

static void set_gs(unsigned long base)
{
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, base))
		t_fail("ARCH_SET_GS: %s", strerror(errno));
}
#endif

static void test_tls_kept(bool leader)
{
	const char *who = leader ? "leader" : "thread";
#ifdef __x86_64__
	unsigned long fs, gs;
#endif
	unsigned long val, *addr;
	pthread_t self;
	long long ho;
	struct t_force tf;

	t_force_init(&tf, "id_tls");
	val = 0x7e5a1d00UL ^ (unsigned long)gettid();
	tls_val = val;
	addr = &tls_val;
	self = pthread_self();
#ifdef __x86_64__
	fs = seg_base(ARCH_GET_FS);
	gs = (unsigned long)gs_target + (leader ? 8 : 16);
	set_gs(gs);
	if (seg_base(ARCH_GET_GS) != gs)
		t_fail("ARCH_SET_GS did not take");
#endif

	ho = t_force_block(&tf);

	if (&tls_val != addr)
		t_fail("%s: TLS variable at %p, was at %p", who,
		     (void *)&tls_val, (void *)addr);
	if (tls_val != val)
		t_fail("%s: TLS value %#lx, expected %#lx", who, tls_val, val);
	if (!pthread_equal(pthread_self(), self))
		t_fail("%s: pthread_self changed", who);
#ifdef __x86_64__
	if (seg_base(ARCH_GET_FS) != fs)
		t_fail("%s: FS base %#lx, expected %#lx", who,
		     seg_base(ARCH_GET_FS), fs);
	if (seg_base(ARCH_GET_GS) != gs)
		t_fail("%s: GS base %#lx, expected %#lx", who,
		     seg_base(ARCH_GET_GS), gs);
	set_gs(0);
#endif
	t_expect_handoff(ho);
#ifdef __aarch64__
	check_tpidr(&tf, who);
#endif
	t_force_exit(&tf);
}

int main(void)
{
	t_run_leader_and_thread(test_tls_kept);
	return T_PASS;
}
