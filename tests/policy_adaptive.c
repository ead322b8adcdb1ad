// SPDX-License-Identifier: GPL-2.0
/*
 * The module's policy toggle (/sys/kernel/io_uring_handoff/policy). With
 * "inline" every blocking fsync of dirty data on ext4 (helpers.c) is
 * issued inline and hands off. With "adaptive", the default, fsync on that
 * file system has slept lately, so the policy punts it upfront
 * (fallback_policy) but for a probe (one in 16, doubling up to one in 256
 * while probes sleep), which still hands off, and the rates file says that
 * fsync on ext4 mostly slept. Each fsync completes with 0 either way.
 *
 * Modes stock and disabled: the same fsyncs, nothing issued inline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "helpers.h"

#define RATES	"/sys/kernel/io_uring_handoff/rates"
#define NR	48
#define MAX_PROBE	256	/* the module's IOUH_RATE_PROBE_MAX */

/* the fsync estimate of the rates file, "fsync ext4 <slept%> <w> <probe>" */
static int fsync_ext4_rate(void)
{
	int rate = -1, pct;
	char op[32], fs[32];
	unsigned int w, probe;
	FILE *f = fopen(RATES, "r");

	if (!f)
		t_fail("%s: %s", RATES, strerror(errno));
	while (fscanf(f, "%31s %31s %d %u %u", op, fs, &pct, &w, &probe) == 5)
		if (!strcmp(op, "fsync") && !strcmp(fs, "ext4"))
			rate = pct;
	fclose(f);
	return rate;
}

/*
 * Blocking fsyncs one at a time: @min, then more until one hands off, up to
 * @max. Returns how many, with the deltas of handoffs and policy punts.
 */
static int run_fsyncs(struct t_force *tf, int min, int max, long long *handoffs,
		      long long *punts)
{
	long long h0 = t_counter("handoffs");
	long long p0 = t_counter("fallback_policy");
	int i;

	*handoffs = 0;
	for (i = 0; i < min || (!*handoffs && i < max); i++) {
		t_wait_idle_worker();
		t_force_block(tf);
		*handoffs = t_counter("handoffs") - h0;
	}
	*punts = t_counter("fallback_policy") - p0;
	return i;
}

static void test_inline(struct t_force *tf)
{
	long long handoffs, punts;

	t_setting_set("policy", "inline");
	run_fsyncs(tf, NR, NR, &handoffs, &punts);
	if (punts)
		t_fail("policy inline: %lld of %d fsyncs punted by the policy",
		     punts, NR);
	if (handoffs < NR / 2)
		t_fail("policy inline: %lld of %d blocking fsyncs handed off",
		     handoffs, NR);
}

/*
 * At least NR, then until a probe went inline and handed off: the interval
 * may have grown to its maximum (256) in an earlier run of this test.
 */
static void test_adaptive(struct t_force *tf)
{
	long long handoffs, punts;
	int n, rate;

	t_setting_set("policy", "adaptive");
	n = run_fsyncs(tf, NR, MAX_PROBE + NR, &handoffs, &punts);
	rate = fsync_ext4_rate();
	if (punts < n * 3 / 4 || handoffs > n / 8 || handoffs < 1)
		t_fail("policy adaptive: %lld of %d blocking fsyncs punted upfront, %lld handed off",
		     punts, n, handoffs);
	if (rate < 50)
		t_fail("policy adaptive: rates file says fsync on ext4 slept %d%%",
		     rate);
	fprintf(stderr, "note: adaptive: %d fsyncs, %lld punted, %lld handed off, rate %d%%\n",
		n, punts, handoffs, rate);
}

static void test_no_module(struct t_force *tf)
{
	long long in = t_inline_issued();
	int i;

	for (i = 0; i < NR; i++)
		t_force_block(tf);
	t_expect_no_inline(in);
}

int main(void)
{
	char was[32];
	struct t_force tf;

	t_force_init(&tf, "policy_adaptive");
	if (!t_mode_handoff()) {
		test_no_module(&tf);
	} else {
		t_setting_get("policy", was, sizeof(was));
		test_inline(&tf);
		test_adaptive(&tf);
		t_setting_set("policy", was);
	}
	t_force_exit(&tf);
	return T_PASS;
}
