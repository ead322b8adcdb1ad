// SPDX-License-Identifier: GPL-2.0
/*
 * The module's policy toggle (/sys/kernel/io_uring_handoff/policy). With
 * "inline" every blocking fsync of dirty data on ext4 (handoff_force.c) is
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
#include "common.h"
#include "handoff_force.h"

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
		fail("%s: %s", RATES, strerror(errno));
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
static int run_fsyncs(struct hf *hf, int min, int max, long long *handoffs,
		      long long *punts)
{
	long long h0 = handoff_counter("handoffs");
	long long p0 = handoff_counter("fallback_policy");
	int i;

	*handoffs = 0;
	for (i = 0; i < min || (!*handoffs && i < max); i++) {
		hf_wait_idle_worker();
		hf_block(hf);
		*handoffs = handoff_counter("handoffs") - h0;
	}
	*punts = handoff_counter("fallback_policy") - p0;
	return i;
}

static void test_inline(struct hf *hf)
{
	long long handoffs, punts;

	handoff_setting_set("policy", "inline");
	run_fsyncs(hf, NR, NR, &handoffs, &punts);
	if (punts)
		fail("policy inline: %lld of %d fsyncs punted by the policy",
		     punts, NR);
	if (handoffs < NR / 2)
		fail("policy inline: %lld of %d blocking fsyncs handed off",
		     handoffs, NR);
}

/*
 * At least NR, then until a probe went inline and handed off: the interval
 * may have grown to its maximum (256) in an earlier run of this test.
 */
static void test_adaptive(struct hf *hf)
{
	long long handoffs, punts;
	int n, rate;

	handoff_setting_set("policy", "adaptive");
	n = run_fsyncs(hf, NR, MAX_PROBE + NR, &handoffs, &punts);
	rate = fsync_ext4_rate();
	if (punts < n * 3 / 4 || handoffs > n / 8 || handoffs < 1)
		fail("policy adaptive: %lld of %d blocking fsyncs punted upfront, %lld handed off",
		     punts, n, handoffs);
	if (rate < 50)
		fail("policy adaptive: rates file says fsync on ext4 slept %d%%",
		     rate);
	fprintf(stderr, "note: adaptive: %d fsyncs, %lld punted, %lld handed off, rate %d%%\n",
		n, punts, handoffs, rate);
}

static void test_no_module(struct hf *hf)
{
	long long in = inline_issued();
	int i;

	for (i = 0; i < NR; i++)
		hf_block(hf);
	expect_no_inline(in);
}

int main(void)
{
	char was[32];
	struct hf hf;

	hf_init(&hf, "policy_adaptive");
	if (!mode_handoff()) {
		test_no_module(&hf);
	} else {
		handoff_setting_get("policy", was, sizeof(was));
		test_inline(&hf);
		test_adaptive(&hf);
		handoff_setting_set("policy", was);
	}
	hf_exit(&hf);
	return T_PASS;
}
