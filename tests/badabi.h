/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included into a scratch build of the module (make test): a module
 * built against another hook ABI, which the kernel must refuse to register.
 */
#include <linux/io_uring_handoff.h>
#undef IO_URING_HANDOFF_ABI
#define IO_URING_HANDOFF_ABI	999
