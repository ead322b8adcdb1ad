// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 register state for the identity handoff, RFC patch 03 rebuilt from
 * its cover letter: the live user state is synced into the source task
 * before it blocks and loaded on the worker that returns in its place.
 * Built into the io_uring_handoff module, so it only uses what the kernel
 * exports: state that would need more (SME's ZA and streaming mode, a
 * guarded control stack, a 32-bit task) is refused instead.
 *
 * In a syscall the user FPSIMD/SVE state is no more than the FPSIMD
 * registers: fpsimd_syscall_enter() has discarded the rest of SVE, as the
 * syscall ABI allows, so moving the FPSIMD registers moves all of it.
 */
#include <linux/sched/task_stack.h>
#include <asm/compat.h>
#include <asm/cpufeature.h>
#include <asm/fpsimd.h>
#include <asm/neon.h>
#include <asm/sysreg.h>

#include "handoff.h"

/*
 * prctl driven per-thread controls that don't move: speculative store
 * bypass, tagged addresses, counter access, the vector length inheritance
 * on exec. Source and worker must agree on them.
 */
#define IOUH_TIF_MATCH	(BIT(TIF_SSBD) | BIT(TIF_TAGGED_ADDR) |		\
			 BIT(TIF_TSC_SIGSEGV) | BIT(TIF_SVE_VL_INHERIT) |	\
			 BIT(TIF_SME_VL_INHERIT))

/* state bound to the task that neither side may have */
static enum iouh_refusal iouh_arch_bound_refusal(struct task_struct *tsk)
{
	/* ZA, ZT0 and streaming mode live in the task's sme_state */
	if (test_tsk_thread_flag(tsk, TIF_SME) || tsk->thread.svcr)
		return IOUH_REFUSE_SME;
#ifdef CONFIG_ARM64_GCS
	if (tsk->thread.gcs_el0_mode)
		return IOUH_REFUSE_SHADOW_STACK;
#endif
	return IOUH_MOVABLE;
}

/* at issue: a 64-bit task with nothing bound to it */
enum iouh_refusal iouh_arch_refusal(struct task_struct *tsk)
{
	if (is_compat_thread(task_thread_info(tsk)))
		return IOUH_REFUSE_COMPAT;
	return iouh_arch_bound_refusal(tsk);
}

/* at the reservation: what doesn't move must be equal */
bool iouh_arch_compatible(struct task_struct *src, struct task_struct *dst)
{
	struct thread_struct *s = &src->thread, *d = &dst->thread;

	if ((read_task_thread_flags(src) ^ read_task_thread_flags(dst)) &
	    IOUH_TIF_MATCH)
		return false;
	/* SVE and SME vector lengths, now and after the next exec */
	if (memcmp(s->vl, d->vl, sizeof(s->vl)) ||
	    memcmp(s->vl_onexec, d->vl_onexec, sizeof(s->vl_onexec)))
		return false;
	/* the enabled pointer authentication keys and MTE's tag checking */
	if (s->sctlr_user != d->sctlr_user)
		return false;
#ifdef CONFIG_ARM64_PTR_AUTH
	/* the user keys are per thread once PR_PAC_RESET_KEYS ran */
	if (memcmp(&s->keys_user, &d->keys_user, sizeof(s->keys_user)))
		return false;
#endif
#ifdef CONFIG_ARM64_MTE
	if (s->mte_ctrl != d->mte_ctrl)
		return false;
#endif
#ifdef CONFIG_ARM64_GCS
	if (s->gcs_el0_locked != d->gcs_el0_locked)
		return false;
#endif
#ifdef CONFIG_ARM64_MPAM
	/* resctrl assigns the partition by tid, the tid moves */
	if (READ_ONCE(task_thread_info(src)->mpam_partid_pmg) !=
	    READ_ONCE(task_thread_info(dst)->mpam_partid_pmg))
		return false;
#endif
	return iouh_arch_bound_refusal(dst) == IOUH_MOVABLE;
}

/*
 * The user FPSIMD registers of current are saved to its thread_struct and
 * the CPU's copy unbound: kernel mode NEON does exactly that on entry.
 * Not preemptible, so it needs no buffer for a kernel mode state of ours.
 * In a kernel mode NEON section already (a sleep in one), the section's
 * entry saved them.
 */
static void iouh_arch_fpsimd_save(void)
{
	if (!system_supports_fpsimd() || test_thread_flag(TIF_KERNEL_FPSTATE))
		return;
	kernel_neon_begin(NULL);
	kernel_neon_end(NULL);
}

/*
 * At the first sleep, on the source: sync the live user state into the
 * task. A context switch saves TLS too, but the worker may read it first.
 */
bool iouh_arch_prepare(void)
{
	struct thread_struct *t = &current->thread;

	preempt_disable();
	t->uw.tp_value = read_sysreg(tpidr_el0);
	if (system_supports_tpidr2())
		t->tpidr2_el0 = read_sysreg_s(SYS_TPIDR2_EL0);
	if (system_supports_poe())
		t->por_el0 = read_sysreg_s(SYS_POR_EL0);
	iouh_arch_fpsimd_save();
	preempt_enable();
	return true;
}

/* on the worker: copy the user register state, load what's live */
int iouh_arch_take(struct task_struct *src, bool leader)
{
	struct task_struct *dst = current;
	struct thread_struct *t = &dst->thread, *s = &src->thread;

	/* the syscall frame, this is what the return to userspace restores */
	*task_pt_regs(dst) = *task_pt_regs(src);
	/* fault info, in case a signal for it is pending */
	t->fault_address = s->fault_address;
	t->fault_code = s->fault_code;

	preempt_disable();
	/* our own user FPSIMD state off the CPU: the return loads the new */
	iouh_arch_fpsimd_save();
	/* TLS, FPMR and the FPSIMD registers, saved by iouh_arch_prepare() */
	t->uw = s->uw;
	t->fp_type = FP_STATE_FPSIMD;
	/*
	 * A worker that was a submitter once may still look bound to the CPU
	 * it last returned to userspace on, whose registers hold its old
	 * state: bind it to no CPU, as fpsimd_flush_task_state() does (there
	 * with NR_CPUS; any id no CPU has will do).
	 */
	t->fpsimd_cpu = nr_cpu_ids;
	write_sysreg(t->uw.tp_value, tpidr_el0);
	if (system_supports_tpidr2()) {
		t->tpidr2_el0 = s->tpidr2_el0;
		write_sysreg_s(t->tpidr2_el0, SYS_TPIDR2_EL0);
	}
	if (system_supports_poe()) {
		t->por_el0 = s->por_el0;
		write_sysreg_s(t->por_el0, SYS_POR_EL0);
	}
	preempt_enable();
	return 0;
}
