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
 * handoff_force.c.
 *
 * Fails on a kernel that issues IOSQE_ASYNC requests inline by default, or
 * that keeps punting them with async_inline set.
 */
#include <unistd.h>
#include "common.h"
#include "handoff_force.h"

static void test_async_punted(struct hf *hf)
{
	long long ho, in, fb;

	in = inline_issued();
	fb = handoff_counter("fallback_request");
	ho = hf_block_flags(hf, IOSQE_ASYNC);
	expect_unmoved("handoffs", ho);
	expect_no_inline(in);
	expect_moved("fallback_request", fb);

	/* the punted fsync's worker goes idle again, then the control */
	hf_wait_idle_worker();
	in = inline_issued();
	ho = hf_block(hf);
	expect_inline(in, 1);
	expect_handoff(ho);
}

static void test_async_inline(struct hf *hf)
{
	long long ho, in;

	hf_wait_idle_worker();
	handoff_setting_set("async_inline", "1");
	in = inline_issued();
	ho = hf_block_flags(hf, IOSQE_ASYNC);
	handoff_setting_set("async_inline", "0");
	expect_inline(in, 1);
	expect_handoff(ho);
}

int main(void)
{
	struct hf hf;

	hf_init(&hf, "id_refusal_async");
	test_async_punted(&hf);
	if (mode_handoff())
		test_async_inline(&hf);
	hf_exit(&hf);
	return T_PASS;
}
