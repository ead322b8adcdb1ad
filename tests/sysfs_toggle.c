// SPDX-License-Identifier: GPL-2.0
/*
 * The module's sysfs interface matches the harness mode: absent without the
 * module, every counter readable with it, and `enabled` reflects and takes
 * the toggle (written and restored here).
 */
#include <stdio.h>
#include <string.h>
#include "common.h"

static const char * const counters[] = {
	"inline_issued", "inline_done", "handoffs", "blocked_lock",
	"blocked_task", "fallback_ring", "fallback_request", "fallback_poll",
	"fallback_signal", "fallback_task", "fallback_worker",
	"fallback_policy", "fallback_budget", "fallback_batch", "async_inline",
};

static void write_enabled(int v)
{
	FILE *f = fopen("/sys/kernel/io_uring_handoff/enabled", "w");

	if (!f || fprintf(f, "%d\n", v) < 0 || fclose(f))
		fail("writing enabled=%d", v);
}

int main(void)
{
	const char *mode = test_mode();
	long long en = handoff_counter("enabled");
	unsigned int i;

	if (!mode)
		skip("IOUH_MODE not set, run under the harness");
	if (!strcmp(mode, "stock")) {
		if (en != -1)
			fail("module interface present in stock mode");
		return T_PASS;
	}
	if (en != (strcmp(mode, "handoff") ? 0 : 1))
		fail("enabled=%lld in mode %s", en, mode);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (handoff_counter(counters[i]) < 0)
			fail("counter %s missing", counters[i]);
	write_enabled(!en);
	if (handoff_counter("enabled") != !en)
		fail("toggle did not take");
	write_enabled(en);
	if (handoff_counter("enabled") != en)
		fail("toggle did not restore");
	return T_PASS;
}
