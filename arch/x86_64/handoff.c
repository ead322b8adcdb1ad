// SPDX-License-Identifier: GPL-2.0
/*
 * x86_64 register state for the identity handoff, RFC patch 04. Built into
 * the io_uring_handoff module, so it only uses what the kernel exports: the
 * cases that would need __switch_to() internals (TLS, non-zero segment
 * selectors, I/O bitmaps, shadow stacks, AMX) are refused instead.
 */
#include <linux/sched/task_stack.h>
#include <asm/fpu/api.h>
#include <asm/fpu/sched.h>
#include <asm/fsgsbase.h>
#include <asm/pkru.h>
#include <asm/processor.h>
#include <asm/segment.h>

#include "handoff.h"

/*
 * prctl driven per-thread controls that __switch_to_xtra() or the mm switch
 * apply: they don't move, source and worker must agree on them.
 */
#define IOUH_TIF_MATCH	(_TIF_SSBD | _TIF_SPEC_IB | _TIF_NOCPUID | \
			 _TIF_NOTSC | _TIF_SPEC_L1D_FLUSH)

/* state bound to the task that neither side may have; inline, per issue */
static __always_inline enum iouh_refusal
iouh_arch_bound_refusal(struct task_struct *tsk)
{
	if (test_tsk_thread_flag(tsk, TIF_IO_BITMAP) || tsk->thread.iopl_emul)
		return IOUH_REFUSE_IO_PERM;
#ifdef CONFIG_X86_USER_SHADOW_STACK
	if (tsk->thread.features & ARCH_SHSTK_SHSTK)
		return IOUH_REFUSE_SHADOW_STACK;
#endif
	/* only the default sized FPU state gets copied over, no AMX */
	if (x86_task_fpu(tsk)->fpstate->is_valloc)
		return IOUH_REFUSE_FPU_STATE;
	return IOUH_MOVABLE;
}

/* at issue: 64-bit, null selectors, and nothing bound to the task */
enum iouh_refusal iouh_arch_refusal(struct task_struct *tsk)
{
	unsigned short fs, gs, es, ds;

	if (test_tsk_thread_flag(tsk, TIF_ADDR32))
		return IOUH_REFUSE_COMPAT;
	/* a selector would need the TLS and LDT to move along */
	savesegment(fs, fs);
	savesegment(gs, gs);
	savesegment(es, es);
	savesegment(ds, ds);
	if (fs || gs || es || ds)
		return IOUH_REFUSE_SEGMENTS;
	return iouh_arch_bound_refusal(tsk);
}

/* the TLS descriptors, a word each: no memcmp() call per reservation */
static bool iouh_tls_equal(const struct thread_struct *a,
			   const struct thread_struct *b)
{
	const u64 *x = (const u64 *)a->tls_array, *y = (const u64 *)b->tls_array;
	int i;

	BUILD_BUG_ON(sizeof(a->tls_array) != GDT_ENTRY_TLS_ENTRIES * sizeof(u64));
	for (i = 0; i < GDT_ENTRY_TLS_ENTRIES; i++)
		if (x[i] != y[i])
			return false;
	return true;
}

/* at the reservation: what doesn't move must be equal */
bool iouh_arch_compatible(struct task_struct *src, struct task_struct *dst)
{
	/* these don't move, must match. They're usually applied process wide */
	if ((read_task_thread_flags(src) ^ read_task_thread_flags(dst)) &
	    IOUH_TIF_MATCH)
		return false;
	if (x86_task_fpu(src)->fpstate->size != x86_task_fpu(dst)->fpstate->size)
		return false;
#ifdef CONFIG_X86_CPU_RESCTRL
	/* resctrl assigns the group by tid, the tid moves */
	if (READ_ONCE(src->closid) != READ_ONCE(dst->closid) ||
	    READ_ONCE(src->rmid) != READ_ONCE(dst->rmid))
		return false;
#endif
	/* the switch to @dst reloads its selectors: null, as the issue's */
	if (dst->thread.fsindex || dst->thread.gsindex || dst->thread.es ||
	    dst->thread.ds)
		return false;
	/* set_thread_area() TLS would need load_TLS(), it has to be equal */
	if (!iouh_tls_equal(&src->thread, &dst->thread))
		return false;
	return iouh_arch_bound_refusal(dst) == IOUH_MOVABLE;
}

/*
 * At the first sleep, on the source: sync the live user state into the task.
 * The selectors were null at issue and nothing in the kernel loads others,
 * so only the bases are live.
 */
bool iouh_arch_prepare(void)
{
	struct thread_struct *t = &current->thread;

	t->fsindex = 0;
	t->gsindex = 0;
	t->fsbase = x86_fsbase_read_cpu();
	t->gsbase = x86_gsbase_read_cpu_inactive();
	/* thread.pkru is only valid when scheduled out, make it so */
	if (cpu_feature_enabled(X86_FEATURE_OSPKE))
		t->pkru = read_pkru();
	/* saves the user FPU registers and sets TIF_NEED_FPU_LOAD */
	kernel_fpu_begin();
	kernel_fpu_end();
	return true;
}

/* on the worker: copy the user register state, load what's live */
int iouh_arch_take(struct task_struct *src, bool leader)
{
	struct task_struct *dst = current;
	struct thread_struct *t = &dst->thread, *s = &src->thread;
	struct fpu *dst_fpu = x86_task_fpu(dst), *src_fpu = x86_task_fpu(src);

	if (dst_fpu->fpstate->size != src_fpu->fpstate->size)
		return -EINVAL;

	/* the syscall frame, this is what the return to userspace restores */
	*task_pt_regs(dst) = *task_pt_regs(src);
	/* fault info, in case a signal for it is pending */
	t->cr2 = s->cr2;
	t->trap_nr = s->trap_nr;
	t->error_code = s->error_code;

	/* dynamic xstate permissions live in the group leader's struct fpu */
	if (leader) {
		spin_lock_irq(&dst->sighand->siglock);
		dst_fpu->perm = src_fpu->perm;
		dst_fpu->guest_perm = src_fpu->guest_perm;
		spin_unlock_irq(&dst->sighand->siglock);
	}

	/* both have the default sized fpstate, reload it on the way out */
	fpregs_lock();
	memcpy(&dst_fpu->fpstate->regs, &src_fpu->fpstate->regs,
	       src_fpu->fpstate->size);
	dst_fpu->last_cpu = -1;
	set_thread_flag(TIF_NEED_FPU_LOAD);
	fpregs_unlock();

	preempt_disable();
	t->fsbase = s->fsbase;
	t->gsbase = s->gsbase;
	x86_fsbase_write_cpu(t->fsbase);
	x86_gsbase_write_cpu_inactive(t->gsbase);
	if (cpu_feature_enabled(X86_FEATURE_OSPKE)) {
		t->pkru = s->pkru;
		write_pkru(t->pkru);
	}
	preempt_enable();
	return 0;
}
