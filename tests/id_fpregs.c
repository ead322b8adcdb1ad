// SPDX-License-Identifier: GPL-2.0
/*
 * User register state survives a blocking submit. One asm function, with
 * no compiler generated code in between, loads distinctive values into
 * xmm8-xmm15 (all of ymm8-ymm15 if AVX is usable), MXCSR (round toward
 * zero, flush to zero) and the callee-saved rbx, rbp, r12-r15, does the
 * io_uring_enter() syscall itself (to_submit 1, min_complete 1, GETEVENTS)
 * on an fsync SQE queued beforehand, and stores all of them back. They
 * must come back unchanged. x86_64 only, skip elsewhere. Done in the group
 * leader and in a second thread. Blocking is forced by fsync of dirty data
 * on ext4, see handoff_force.c.
 *
 * Fails on a kernel that hands off without saving the live FPU/vector
 * registers of the blocking task before it blocks or without loading them
 * on the task that returns: the worker's (init) FPU state comes back, i.e.
 * zeroed vector registers and the default MXCSR 0x1f80. Wrong general
 * purpose registers show up here too, if they don't crash the test first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "common.h"
#include "handoff_force.h"

#ifdef __x86_64__
#include <sys/syscall.h>

#define NR_GPR		6	/* rbx rbp r12 r13 r14 r15 */
#define NR_VEC		8	/* xmm8 .. xmm15 */
#define VEC_SIZE	32

#define IO_GPR_IN	0
#define IO_GPR_OUT	48
#define IO_VEC_IN	96
#define IO_VEC_OUT	352
#define IO_MXCSR_IN	608
#define IO_MXCSR_OUT	612
#define IO_RET		616
#define IO_FD		624

struct fp_io {
	unsigned long gpr_in[NR_GPR];
	unsigned long gpr_out[NR_GPR];
	unsigned char vec_in[NR_VEC][VEC_SIZE];
	unsigned char vec_out[NR_VEC][VEC_SIZE];
	unsigned int mxcsr_in;
	unsigned int mxcsr_out;
	long ret;
	long fd;
};

_Static_assert(offsetof(struct fp_io, gpr_out) == IO_GPR_OUT, "layout");
_Static_assert(offsetof(struct fp_io, vec_in) == IO_VEC_IN, "layout");
_Static_assert(offsetof(struct fp_io, vec_out) == IO_VEC_OUT, "layout");
_Static_assert(offsetof(struct fp_io, mxcsr_in) == IO_MXCSR_IN, "layout");
_Static_assert(offsetof(struct fp_io, mxcsr_out) == IO_MXCSR_OUT, "layout");
_Static_assert(offsetof(struct fp_io, ret) == IO_RET, "layout");
_Static_assert(offsetof(struct fp_io, fd) == IO_FD, "layout");
_Static_assert(IORING_ENTER_GETEVENTS == 1, "asm passes 1");

#define STR_(x)	#x
#define STR(x)	STR_(x)

/* register n at index i of vec_in/vec_out */
#define VLD(mov, r, n, i)	"\t" mov " " STR(IO_VEC_IN) "+" #i \
				"*32(%rdi), %" r #n "\n"
#define VST(mov, r, n, i)	"\t" mov " %" r #n ", " STR(IO_VEC_OUT) "+" #i \
				"*32(%rcx)\n"
#define VEC_ALL(op, mov, r)						\
	op(mov, r, 8, 0) op(mov, r, 9, 1) op(mov, r, 10, 2)		\
	op(mov, r, 11, 3) op(mov, r, 12, 4) op(mov, r, 13, 5)		\
	op(mov, r, 14, 6) op(mov, r, 15, 7)

/*
 * long name(struct fp_io *io): callee-saved registers and the caller's
 * MXCSR are saved on the stack, io is kept on top of it across the
 * syscall, rcx and r11 are the syscall's to clobber.
 */
#define FP_ENTER(name, mov, r, tail)					\
	"\t.text\n"							\
	"\t.type " name ", @function\n"					\
	name ":\n"							\
	"\tpush %rbp\n\tpush %rbx\n\tpush %r12\n"			\
	"\tpush %r13\n\tpush %r14\n\tpush %r15\n"			\
	"\tsub $8, %rsp\n\tstmxcsr (%rsp)\n\tpush %rdi\n"		\
	"\tldmxcsr " STR(IO_MXCSR_IN) "(%rdi)\n"			\
	VEC_ALL(VLD, mov, r)						\
	"\tmov " STR(IO_GPR_IN) "+0(%rdi), %rbx\n"			\
	"\tmov " STR(IO_GPR_IN) "+8(%rdi), %rbp\n"			\
	"\tmov " STR(IO_GPR_IN) "+16(%rdi), %r12\n"			\
	"\tmov " STR(IO_GPR_IN) "+24(%rdi), %r13\n"			\
	"\tmov " STR(IO_GPR_IN) "+32(%rdi), %r14\n"			\
	"\tmov " STR(IO_GPR_IN) "+40(%rdi), %r15\n"			\
	"\tmov " STR(IO_FD) "(%rdi), %rdi\n"				\
	"\tmov $1, %esi\n\tmov $1, %edx\n"				\
	"\tmov $1, %r10d\n"	/* IORING_ENTER_GETEVENTS */		\
	"\txor %r8d, %r8d\n\txor %r9d, %r9d\n"				\
	"\tmov $" STR(__NR_io_uring_enter) ", %eax\n"			\
	"\tsyscall\n"							\
	"\tmov (%rsp), %rcx\n"						\
	"\tmov %rax, " STR(IO_RET) "(%rcx)\n"				\
	"\tmov %rbx, " STR(IO_GPR_OUT) "+0(%rcx)\n"			\
	"\tmov %rbp, " STR(IO_GPR_OUT) "+8(%rcx)\n"			\
	"\tmov %r12, " STR(IO_GPR_OUT) "+16(%rcx)\n"			\
	"\tmov %r13, " STR(IO_GPR_OUT) "+24(%rcx)\n"			\
	"\tmov %r14, " STR(IO_GPR_OUT) "+32(%rcx)\n"			\
	"\tmov %r15, " STR(IO_GPR_OUT) "+40(%rcx)\n"			\
	VEC_ALL(VST, mov, r)						\
	"\tstmxcsr " STR(IO_MXCSR_OUT) "(%rcx)\n"			\
	tail								\
	"\tpop %rdi\n\tldmxcsr (%rsp)\n\tadd $8, %rsp\n"		\
	"\tpop %r15\n\tpop %r14\n\tpop %r13\n"				\
	"\tpop %r12\n\tpop %rbx\n\tpop %rbp\n"				\
	"\tret\n"							\
	"\t.size " name ", .-" name "\n"

long fp_enter_sse(struct fp_io *io);
long fp_enter_avx(struct fp_io *io);

__asm__(FP_ENTER("fp_enter_sse", "movdqu", "xmm", ""));
__asm__(FP_ENTER("fp_enter_avx", "vmovdqu", "ymm", "\tvzeroupper\n"));

#define MXCSR_TEST	0xff80	/* masked, round toward zero, FTZ */

static void fill(struct fp_io *io, int fd)
{
	int i, j;

	memset(io, 0, sizeof(*io));
	for (i = 0; i < NR_GPR; i++)
		io->gpr_in[i] = 0x0123456789abcdefUL * (i + 3) ^ 0x5a5a;
	for (i = 0; i < NR_VEC; i++)
		for (j = 0; j < VEC_SIZE; j++)
			io->vec_in[i][j] = (i * 37 + j * 11 + 0x5b) & 0xff;
	io->mxcsr_in = MXCSR_TEST;
	io->fd = fd;
}

static void compare(const struct fp_io *io, int vec_bytes, const char *who)
{
	static const char * const gpr[NR_GPR] = {
		"rbx", "rbp", "r12", "r13", "r14", "r15",
	};
	int i;

	for (i = 0; i < NR_GPR; i++)
		if (io->gpr_out[i] != io->gpr_in[i])
			fail("%s: %s %#lx, expected %#lx", who, gpr[i],
			     io->gpr_out[i], io->gpr_in[i]);
	for (i = 0; i < NR_VEC; i++)
		if (memcmp(io->vec_out[i], io->vec_in[i], vec_bytes))
			fail("%s: %cmm%d changed", who,
			     vec_bytes > 16 ? 'y' : 'x', i + 8);
	if (io->mxcsr_out != io->mxcsr_in)
		fail("%s: mxcsr %#x, expected %#x", who, io->mxcsr_out,
		     io->mxcsr_in);
}

static void run(int avx, const char *who)
{
	struct io_uring_sqe *sqe;
	struct fp_io io;
	long long ho;
	struct hf hf;
	int res;

	hf_init(&hf, "id_fpregs");
	hf_dirty(&hf);
	sqe = io_uring_get_sqe(&hf.ring);
	if (!sqe)
		fail("no SQE");
	io_uring_prep_fsync(sqe, hf.fd, 0);
	sqe->user_data = 0xf9;
	/* what io_uring_submit() would do, short of entering the kernel */
	io_uring_smp_store_release(hf.ring.sq.ktail, hf.ring.sq.sqe_tail);
	hf.ring.sq.sqe_head = hf.ring.sq.sqe_tail;
	fill(&io, hf.ring.ring_fd);

	ho = handoff_counter("handoffs");
	if (avx)
		fp_enter_avx(&io);
	else
		fp_enter_sse(&io);
	if (io.ret != 1)
		fail("%s: io_uring_enter returned %ld, expected 1", who,
		     io.ret);
	res = hf_reap_one(&hf.ring, 0xf9);
	if (res)
		fail("%s: fsync res %d (%s), expected 0", who, res,
		     strerror(-res));

	compare(&io, avx ? 32 : 16, who);
	expect_handoff(ho);
	hf_exit(&hf);
}

static void *check(void *arg)
{
	const char *who = arg ? "leader" : "thread";
	char name[32];

	snprintf(name, sizeof(name), "%s, sse", who);
	run(0, name);
	if (__builtin_cpu_supports("avx")) {
		snprintf(name, sizeof(name), "%s, avx", who);
		run(1, name);
	}
	return NULL;
}

int main(void)
{
	run_leader_and_thread(check);
	return T_PASS;
}
#else
int main(void)
{
	skip("x86_64 only");
}
#endif
