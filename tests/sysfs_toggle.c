// SPDX-License-Identifier: GPL-2.0
/*
 * The module's sysfs interface matches the harness mode: absent without the
 * module, every counter readable with it, and `enabled` reflects and takes
 * the toggle (written and restored here).
 */
#include <stdio.h>
#include <string.h>
#include "helpers.h"

static const char * const counters[] = {
	"inline_issued", "inline_done", "handoffs", "blocked_lock",
	"blocked_task", "blocked_request", "fallback_ring", "fallback_request",
	"fallback_poll", "fallback_signal", "fallback_task", "fallback_worker",
	"fallback_policy", "fallback_budget", "fallback_batch", "async_inline",
};

static void write_enabled(int v)
{
	FILE *f = fopen("/sys/kernel/io_uring_handoff/enabled", "w");

	if (!f || fprintf(f, "%d\n", v) < 0 || fclose(f))
		t_fail("writing enabled=%d", v);
}

int main(void)
{
	const char *mode = t_mode();
	long long en = t_counter("enabled");
	unsigned int i;

	if (!mode)
		t_skip("IOUH_MODE not set, run under the harness");
	if (!strcmp(mode, "stock")) {
		if (en != -1)
			t_fail("module interface present in stock mode");
		return T_PASS;
	}
	if (en != (strcmp(mode, "handoff") ? 0 : 1))
		t_fail("enabled=%lld in mode %s", en, mode);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (t_counter(counters[i]) < 0)
			t_fail("counter %s missing", counters[i]);
	write_enabled(!en);
	if (t_counter("enabled") != !en)
		t_fail("toggle did not take");
	write_enabled(en);
	if (t_counter("enabled") != en)
		t_fail("toggle did not restore");
	return T_PASS;
}
