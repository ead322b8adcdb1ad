// SPDX-License-Identifier: GPL-2.0
/*
 * IOSQE_ASYNC is an explicit request to punt, and by default is honoured: a
 * blocking fsync with IOSQE_ASYNC completes with 0 and, in mode handoff, is
 * not issued inline (no inline counter moves, fallback_request does). As a
 * control, the same fsync without the flag on the same ring must be issued
 * inline and then hand off (skip if it does not, unless
 * IOUH_EXPECT_HANDOFF=1), so the refusal is the flag's doing. With the
 * module's async_inline set (the RFC's optional last patch, a policy change
 * userspace can see), the IOSQE_ASYNC fsync is issued inline and hands off
 * like the control. Blocking is forced by fsync of dirty data on ext4, see
 * helpers.c.
 *
 * Fails on a kernel that issues IOSQE_ASYNC requests inline by default, or
 * that keeps punting them with async_inline set.
 */
#include <unistd.h>
#include "helpers.h"

static void test_async_punted(struct t_force *tf)
{
	long long ho, in, fb;

	in = t_inline_issued();
	fb = t_counter("fallback_request");
	ho = t_force_block_flags(tf, IOSQE_ASYNC);
	t_expect_unmoved("handoffs", ho);
	t_expect_no_inline(in);
	t_expect_moved("fallback_request", fb);

	/* the punted fsync's worker goes idle again, then the control */
	t_wait_idle_worker();
	in = t_inline_issued();
	ho = t_force_block(tf);
	t_expect_inline(in, 1);
	t_expect_handoff(ho);
}

static void test_async_inline(struct t_force *tf)
{
	long long ho, in;

	t_wait_idle_worker();
	t_setting_set("async_inline", "1");
	in = t_inline_issued();
	ho = t_force_block_flags(tf, IOSQE_ASYNC);
	t_setting_set("async_inline", "0");
	t_expect_inline(in, 1);
	t_expect_handoff(ho);
}

int main(void)
{
	struct t_force tf;

	t_force_init(&tf, "id_refusal_async");
	test_async_punted(&tf);
	if (t_mode_handoff())
		test_async_inline(&tf);
	t_force_exit(&tf);
	return T_PASS;
}
