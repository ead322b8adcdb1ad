// SPDX-License-Identifier: GPL-2.0
/*
 * User register state survives a blocking submit. One asm function, with
 * no compiler generated code in between, loads distinctive values into
 * xmm8-xmm15 (all of ymm8-ymm15 if AVX is usable), MXCSR (round toward
 * zero, flush to zero) and the callee-saved rbx, rbp, r12-r15, does the
 * io_uring_enter() syscall itself (to_submit 1, min_complete 1, GETEVENTS)
 * on an fsync SQE queued beforehand, and stores all of them back. They
 * must come back unchanged. Done in the group leader and in a second
 * thread. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * arm64: v0-v31, FPCR and x19-x28 the same way; with SVE also z0-z7 whole
 * and p1, which must come back as the syscall ABI says (bits 127:0 of each
 * z register kept, the rest and p1 zero) and the vector length unchanged.
 * Other architectures skip.
 *
 * Fails on a kernel that hands off without saving the live FPU/vector
 * registers of the blocking task before it blocks or without loading them
 * on the task that returns: the worker's (init) FPU state comes back, i.e.
 * zeroed vector registers and the default MXCSR 0x1f80 (on arm64 the
 * FPSIMD registers the worker was forked with, and FPCR 0). Wrong general
 * purpose registers show up here too, if they don't crash the test first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "helpers.h"

#if defined(__x86_64__) || defined(__aarch64__)
/* one blocking submit, below the architectures' parts */
static void run(unsigned int variant, const char *who);
#endif

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

static void compare(const struct fp_io *io, unsigned int avx,
		    const char *who)
{
	static const char * const gpr[NR_GPR] = {
		"rbx", "rbp", "r12", "r13", "r14", "r15",
	};
	int vec_bytes = avx ? 32 : 16;
	int i;

	for (i = 0; i < NR_GPR; i++)
		if (io->gpr_out[i] != io->gpr_in[i])
			t_fail("%s: %s %#lx, expected %#lx", who, gpr[i],
			     io->gpr_out[i], io->gpr_in[i]);
	for (i = 0; i < NR_VEC; i++)
		if (memcmp(io->vec_out[i], io->vec_in[i], vec_bytes))
			t_fail("%s: %cmm%d changed", who,
			     vec_bytes > 16 ? 'y' : 'x', i + 8);
	if (io->mxcsr_out != io->mxcsr_in)
		t_fail("%s: mxcsr %#x, expected %#x", who, io->mxcsr_out,
		     io->mxcsr_in);
}

/* @avx: 0 for the SSE registers, 1 for all of AVX's */
static void fp_enter(struct fp_io *io, unsigned int avx)
{
	if (avx)
		fp_enter_avx(io);
	else
		fp_enter_sse(io);
}

static void check_arch(const char *who)
{
	char name[32];

	snprintf(name, sizeof(name), "%s, sse", who);
	run(0, name);
	if (__builtin_cpu_supports("avx")) {
		snprintf(name, sizeof(name), "%s, avx", who);
		run(1, name);
	}
}
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define NR_GPR		10	/* x19 .. x28 */
#define NR_VEC		32	/* v0 .. v31 */
#define NR_Z		8	/* z0 .. z7, SVE */
#define Z_MAX		256	/* the architecture's largest vector, bytes */

#define IO_GPR_IN	0
#define IO_GPR_OUT	80
#define IO_VEC_IN	160
#define IO_VEC_OUT	672
#define IO_FPCR_IN	1184
#define IO_FPCR_OUT	1192
#define IO_RET		1200
#define IO_FD		1208
#define IO_Z_IN		1216
#define IO_Z_OUT	(IO_Z_IN + NR_Z * Z_MAX)
#define IO_P_OUT	(IO_Z_OUT + NR_Z * Z_MAX)

/* the z registers are laid out VL bytes apart, as LDR/STR (vector) want */
struct fp_io {
	unsigned long gpr_in[NR_GPR];
	unsigned long gpr_out[NR_GPR];
	unsigned char vec_in[NR_VEC][16];
	unsigned char vec_out[NR_VEC][16];
	unsigned long fpcr_in;
	unsigned long fpcr_out;
	long ret;
	long fd;
	unsigned char z_in[NR_Z * Z_MAX];
	unsigned char z_out[NR_Z * Z_MAX];
	unsigned char p_out[Z_MAX / 8];
};

_Static_assert(offsetof(struct fp_io, gpr_out) == IO_GPR_OUT, "layout");
_Static_assert(offsetof(struct fp_io, vec_in) == IO_VEC_IN, "layout");
_Static_assert(offsetof(struct fp_io, vec_out) == IO_VEC_OUT, "layout");
_Static_assert(offsetof(struct fp_io, fpcr_in) == IO_FPCR_IN, "layout");
_Static_assert(offsetof(struct fp_io, fpcr_out) == IO_FPCR_OUT, "layout");
_Static_assert(offsetof(struct fp_io, ret) == IO_RET, "layout");
_Static_assert(offsetof(struct fp_io, fd) == IO_FD, "layout");
_Static_assert(offsetof(struct fp_io, z_in) == IO_Z_IN, "layout");
_Static_assert(offsetof(struct fp_io, z_out) == IO_Z_OUT, "layout");
_Static_assert(offsetof(struct fp_io, p_out) == IO_P_OUT, "layout");
_Static_assert(IORING_ENTER_GETEVENTS == 1, "asm passes 1");

#define STR_(x)	#x
#define STR(x)	STR_(x)

#define VLD(a, b)	"\tldp q" #a ", q" #b ", [x9], #32\n"
#define VST(a, b)	"\tstp q" #a ", q" #b ", [x10], #32\n"
#define VEC_ALL(op)							\
	op(0, 1) op(2, 3) op(4, 5) op(6, 7) op(8, 9) op(10, 11)		\
	op(12, 13) op(14, 15) op(16, 17) op(18, 19) op(20, 21)		\
	op(22, 23) op(24, 25) op(26, 27) op(28, 29) op(30, 31)
#define ZLD(n)		"\tldr z" #n ", [x9, #" #n ", mul vl]\n"
#define ZST(n)		"\tstr z" #n ", [x10, #" #n ", mul vl]\n"
#define Z_ALL(op)	op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7)

/*
 * long name(struct fp_io *io): x19-x28, x29, x30, d8-d15 and the caller's
 * FPCR are saved on the stack, io is kept there across the syscall. The
 * SVE variant loads z0-z7 (whole vectors) and p1 after v0-v31 and stores
 * them back after the syscall as well.
 */
#define FP_ENTER(name, zload, zstore)					\
	"\t.text\n"							\
	"\t.arch_extension sve\n"					\
	"\t.type " name ", %function\n"					\
	name ":\n"							\
	"\tstp x29, x30, [sp, #-112]!\n"				\
	"\tmov x29, sp\n"						\
	"\tstp x19, x20, [sp, #16]\n\tstp x21, x22, [sp, #32]\n"	\
	"\tstp x23, x24, [sp, #48]\n\tstp x25, x26, [sp, #64]\n"	\
	"\tstp x27, x28, [sp, #80]\n"					\
	"\tmrs x9, fpcr\n\tstp x0, x9, [sp, #96]\n"			\
	"\tstp d8, d9, [sp, #-64]!\n\tstp d10, d11, [sp, #16]\n"	\
	"\tstp d12, d13, [sp, #32]\n\tstp d14, d15, [sp, #48]\n"	\
	"\tldr x9, [x0, #" STR(IO_FPCR_IN) "]\n\tmsr fpcr, x9\n"	\
	"\tadd x9, x0, #" STR(IO_VEC_IN) "\n"				\
	VEC_ALL(VLD)							\
	zload								\
	"\tldp x19, x20, [x0, #" STR(IO_GPR_IN) " + 0]\n"		\
	"\tldp x21, x22, [x0, #" STR(IO_GPR_IN) " + 16]\n"		\
	"\tldp x23, x24, [x0, #" STR(IO_GPR_IN) " + 32]\n"		\
	"\tldp x25, x26, [x0, #" STR(IO_GPR_IN) " + 48]\n"		\
	"\tldp x27, x28, [x0, #" STR(IO_GPR_IN) " + 64]\n"		\
	"\tldr x0, [x0, #" STR(IO_FD) "]\n"				\
	"\tmov x1, #1\n\tmov x2, #1\n"					\
	"\tmov x3, #1\n"	/* IORING_ENTER_GETEVENTS */		\
	"\tmov x4, #0\n\tmov x5, #0\n"					\
	"\tmov x8, #" STR(__NR_io_uring_enter) "\n"			\
	"\tsvc #0\n"							\
	"\tldr x9, [sp, #64 + 96]\n"					\
	"\tstr x0, [x9, #" STR(IO_RET) "]\n"				\
	"\tstp x19, x20, [x9, #" STR(IO_GPR_OUT) " + 0]\n"		\
	"\tstp x21, x22, [x9, #" STR(IO_GPR_OUT) " + 16]\n"		\
	"\tstp x23, x24, [x9, #" STR(IO_GPR_OUT) " + 32]\n"		\
	"\tstp x25, x26, [x9, #" STR(IO_GPR_OUT) " + 48]\n"		\
	"\tstp x27, x28, [x9, #" STR(IO_GPR_OUT) " + 64]\n"		\
	"\tmrs x10, fpcr\n\tstr x10, [x9, #" STR(IO_FPCR_OUT) "]\n"	\
	zstore								\
	"\tadd x10, x9, #" STR(IO_VEC_OUT) "\n"				\
	VEC_ALL(VST)							\
	"\tldp d10, d11, [sp, #16]\n\tldp d12, d13, [sp, #32]\n"	\
	"\tldp d14, d15, [sp, #48]\n\tldp d8, d9, [sp], #64\n"		\
	"\tldr x9, [sp, #104]\n\tmsr fpcr, x9\n"			\
	"\tldp x19, x20, [sp, #16]\n\tldp x21, x22, [sp, #32]\n"	\
	"\tldp x23, x24, [sp, #48]\n\tldp x25, x26, [sp, #64]\n"	\
	"\tldp x27, x28, [sp, #80]\n"					\
	"\tldp x29, x30, [sp], #112\n"					\
	"\tret\n"							\
	"\t.size " name ", .-" name "\n"

/* z0-z7 after v0-v31 overwrite those, and p1 gets all ones */
#define Z_LOAD	"\tadd x9, x0, #" STR(IO_Z_IN) "\n" Z_ALL(ZLD)		\
		"\tptrue p1.b\n"
/* the z registers first: storing the v registers doesn't change them */
#define Z_STORE	"\tadd x10, x9, #" STR(IO_Z_OUT) "\n" Z_ALL(ZST)	\
		"\tmov x10, #" STR(IO_P_OUT) "\n\tadd x10, x9, x10\n"	\
		"\tstr p1, [x10]\n"

long fp_enter_fpsimd(struct fp_io *io);
long fp_enter_sve(struct fp_io *io);

__asm__(FP_ENTER("fp_enter_fpsimd", "", ""));
__asm__(FP_ENTER("fp_enter_sve", Z_LOAD, Z_STORE));

#define FPCR_TEST	0x01c00000UL	/* flush to zero, round toward zero */

static void fill(struct fp_io *io, int fd)
{
	unsigned int i, j;

	memset(io, 0, sizeof(*io));
	for (i = 0; i < NR_GPR; i++)
		io->gpr_in[i] = 0x0123456789abcdefUL * (i + 3) ^ 0x5a5a;
	for (i = 0; i < NR_VEC; i++)
		for (j = 0; j < 16; j++)
			io->vec_in[i][j] = (i * 37 + j * 11 + 0x5b) & 0xff;
	for (i = 0; i < sizeof(io->z_in); i++)
		io->z_in[i] = (i * 13 + 0x3c) & 0xff;
	io->fpcr_in = FPCR_TEST;
	io->fd = fd;
}

/*
 * The syscall ABI with SVE: bits 127:0 of each z register (its v register)
 * are preserved, the rest and the p registers come back zero.
 */
static void compare_sve(const struct fp_io *io, unsigned int vl,
			const char *who)
{
	unsigned int i, j;

	for (i = 0; i < NR_Z; i++)
		for (j = 0; j < vl; j++) {
			unsigned char want = j < 16 ? io->z_in[i * vl + j] : 0;

			if (io->z_out[i * vl + j] != want)
				t_fail("%s: z%u byte %u is %#x, expected %#x",
				     who, i, j, io->z_out[i * vl + j], want);
		}
	for (j = 0; j < vl / 8; j++)
		if (io->p_out[j])
			t_fail("%s: p1 byte %u is %#x after the syscall", who, j,
			     io->p_out[j]);
}

static void compare(const struct fp_io *io, unsigned int vl, const char *who)
{
	int i;

	for (i = 0; i < NR_GPR; i++)
		if (io->gpr_out[i] != io->gpr_in[i])
			t_fail("%s: x%d %#lx, expected %#lx", who, 19 + i,
			     io->gpr_out[i], io->gpr_in[i]);
	/* with SVE, v0-v7 were loaded as part of z0-z7 */
	for (i = vl ? NR_Z : 0; i < NR_VEC; i++)
		if (memcmp(io->vec_out[i], io->vec_in[i], 16))
			t_fail("%s: v%d changed", who, i);
	if (io->fpcr_out != io->fpcr_in)
		t_fail("%s: fpcr %#lx, expected %#lx", who, io->fpcr_out,
		     io->fpcr_in);
	if (vl)
		compare_sve(io, vl, who);
}

/* @vl: 0 for the FPSIMD registers only, else the SVE vector length */
static void fp_enter(struct fp_io *io, unsigned int vl)
{
	if (vl)
		fp_enter_sve(io);
	else
		fp_enter_fpsimd(io);
}

static void check_arch(const char *who)
{
	char name[32];
	int vl;

	snprintf(name, sizeof(name), "%s, fpsimd", who);
	run(0, name);
	if (getauxval(AT_HWCAP) & HWCAP_SVE) {
		vl = prctl(PR_SVE_GET_VL) & PR_SVE_VL_LEN_MASK;
		if (vl < 16 || vl > Z_MAX)
			t_fail("PR_SVE_GET_VL: %d", vl);
		snprintf(name, sizeof(name), "%s, sve", who);
		if (!strcmp(who, "leader"))
			fprintf(stderr, "note: SVE, %d byte vectors\n", vl);
		run(vl, name);
		if ((prctl(PR_SVE_GET_VL) & PR_SVE_VL_LEN_MASK) != vl)
			t_fail("%s: the SVE vector length changed", who);
	}
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/*
 * One blocking submit from the arch's asm function, @variant picks which
 * registers (see fp_enter()): they and the syscall's result must be right.
 */
static void run(unsigned int variant, const char *who)
{
	struct fp_io io;
	long long ho;
	struct t_force tf;
	int res;

	t_force_init(&tf, "id_fpregs");
	t_force_queue_fsync(&tf, 0xf9);
	fill(&io, tf.ring.ring_fd);

	ho = t_counter("handoffs");
	fp_enter(&io, variant);
	if (io.ret != 1)
		t_fail("%s: io_uring_enter returned %ld, expected 1", who,
		     io.ret);
	res = t_reap_one(&tf.ring, 0xf9);
	if (res)
		t_fail("%s: fsync res %d (%s), expected 0", who, res,
		     strerror(-res));

	compare(&io, variant, who);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

static void test_regs_kept(bool leader)
{
	check_arch(leader ? "leader" : "thread");
}

int main(void)
{
	t_run_leader_and_thread(test_regs_kept);
	return T_PASS;
}
#else
int main(void)
{
	t_skip("x86_64 and arm64 only");
}
#endif
