// SPDX-License-Identifier: GPL-2.0
/*
 * IOSQE_ASYNC is an explicit request to punt, and is honoured: a blocking
 * fsync with IOSQE_ASYNC completes with 0 and, in mode handoff, is not
 * issued inline (no inline counter moves). As a control, the same fsync
 * without the flag on the same ring must be issued inline and then hand
 * off (skip if it does not, unless IOUH_EXPECT_HANDOFF=1), so the refusal
 * is the flag's doing. Blocking is
 * forced by fsync of dirty data on ext4, see handoff_force.c.
 *
 * Fails on a kernel that issues IOSQE_ASYNC requests inline with a handoff
 * (the RFC's optional last patch) instead of handing them to io-wq.
 */
#include <unistd.h>
#include "common.h"
#include "handoff_force.h"

int main(void)
{
	long long ho, in;
	struct hf hf;

	hf_init(&hf, "id_refusal_async");
	in = inline_issued();
	ho = hf_block_flags(&hf, IOSQE_ASYNC);
	expect_unmoved("handoffs", ho);
	expect_no_inline(in);

	/* the punted fsync's worker goes idle again, then the control */
	hf_wait_idle_worker();
	in = inline_issued();
	ho = hf_block(&hf);
	expect_inline(in, 1);
	expect_handoff(ho);
	hf_exit(&hf);
	return T_PASS;
}
