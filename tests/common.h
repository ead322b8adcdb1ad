/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IOUH_TEST_COMMON_H
#define IOUH_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

#define fail(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); \
		       fputc('\n', stderr); exit(T_FAIL); } while (0)
#define skip(...) do { fprintf(stderr, "SKIP: " __VA_ARGS__); \
		       fputc('\n', stderr); exit(T_SKIP); } while (0)

/* IOUH_MODE: stock, handoff or disabled; NULL outside the harness */
const char *test_mode(void);
/* a directory from the environment, or skip */
const char *test_dir(const char *env);
/* a counter under /sys/kernel/io_uring_handoff/, -1 if absent */
long long handoff_counter(const char *name);

#endif
