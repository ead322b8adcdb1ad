// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 register state for the identity handoff. RFC patch 03 is not in the
 * seeds and not written yet: every task is refused, so on an arm64 kernel
 * with the core hooks every request keeps its stock io-wq punt.
 */
#include "../../module/handoff.h"

enum iouh_refusal iouh_arch_refusal(struct task_struct *tsk)
{
	return IOUH_REFUSE_ARCH;
}

bool iouh_arch_compatible(struct task_struct *src, struct task_struct *dst)
{
	return false;
}

bool iouh_arch_prepare(void)
{
	return false;
}

int iouh_arch_take(struct task_struct *src, bool leader)
{
	return -EOPNOTSUPP;
}
