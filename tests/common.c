// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
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
