// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>
#include "common.h"

const char *test_mode(void)
{
	return getenv("IOUH_MODE");
}

const char *test_dir(const char *env)
{
	const char *d = getenv(env);

	if (!d)
		skip("%s not set, run under the harness", env);
	return d;
}

long long handoff_counter(const char *name)
{
	char path[256];
	long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

long long handoff_refusal(const char *reason)
{
	char name[64];
	long long v;
	FILE *f;

	f = fopen("/sys/kernel/io_uring_handoff/refusals", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, reason)) {
			fclose(f);
			return v;
		}
	}
	fclose(f);
	return -1;
}

/* read or write a /sys/kernel/io_uring_handoff/ setting, or fail */
void handoff_setting_get(const char *name, char *buf, int len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, len, f))
		fail("reading %s: %s", path, strerror(errno));
	fclose(f);
}

void handoff_setting_set(const char *name, const char *val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/io_uring_handoff/%s", name);
	f = fopen(path, "w");
	if (!f || fputs(val, f) < 0 || fclose(f))
		fail("writing %s to %s: %s", val, path, strerror(errno));
}

static const char *test_ring(void)
{
	const char *ring = getenv("IOUH_RING");

	return ring ? ring : "plain";
}

unsigned int test_ring_flags(void)
{
	const char *ring = test_ring();
	size_t len = strcspn(ring, "+");

	if (!strncmp(ring, "plain", len) && len == 5)
		return 0;
	if (!strncmp(ring, "single", len) && len == 6)
		return IORING_SETUP_SINGLE_ISSUER;
	if (!strncmp(ring, "defer", len) && len == 5)
		return IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	fail("IOUH_RING=%s: plain, single or defer, +regfd", ring);
}

int test_ring_regfd(void)
{
	const char *plus = strchr(test_ring(), '+');

	if (plus && strcmp(plus, "+regfd"))
		fail("IOUH_RING=%s: plain, single or defer, +regfd", test_ring());
	return plus != NULL;
}

int test_queue_init(unsigned int entries, struct io_uring *ring,
		    unsigned int flags)
{
	int ret;

	if (flags)
		return io_uring_queue_init(entries, ring, flags);
	ret = io_uring_queue_init(entries, ring, test_ring_flags());
	if (ret || !test_ring_regfd())
		return ret;
	ret = io_uring_register_ring_fd(ring);
	if (ret != 1)
		fail("register_ring_fd: %s", strerror(-ret));
	return 0;
}

int mode_handoff(void)
{
	const char *mode = test_mode();

	return mode && !strcmp(mode, "handoff");
}

void expect_moved(const char *name, long long before)
{
	const char *exp = getenv("IOUH_EXPECT_HANDOFF");
	int must = exp && !strcmp(exp, "1");
	int ho = !strcmp(name, "handoffs");
	long long now;

	if (!mode_handoff())
		return;
	now = handoff_counter(name);
	if (now > before && before >= 0)
		return;
	/* the other counters are implemented, only "handoffs" may lag */
	if (!ho)
		fail("%s did not move (%lld -> %lld)", name, before, now);
	if (must)
		fail("no handoff happened");
	skip("no handoff happened; handoff not in this build");
}

void expect_unmoved(const char *name, long long before)
{
	long long now;

	if (!mode_handoff())
		return;
	now = handoff_counter(name);
	if (now != before)
		fail("%s moved (%lld -> %lld)", name, before, now);
}

void expect_handoff(long long before)
{
	expect_moved("handoffs", before);
}

long long inline_issued(void)
{
	return handoff_counter("inline_issued");
}

void expect_inline(long long before, long long n)
{
	long long now = inline_issued();

	if (!mode_handoff())
		return;
	if (before < 0 || now - before != n)
		fail("%lld inline issues, expected %lld", now - before, n);
}

void expect_no_inline(long long before)
{
	long long now = inline_issued();

	/* loaded but disabled must not issue inline either */
	if (before >= 0 && now != before)
		fail("%lld requests issued inline, expected none", now - before);
}
