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
/*
 * The count of one reason in /sys/kernel/io_uring_handoff/refusals (why
 * fallback_task refused a task), -1 if absent.
 */
long long handoff_refusal(const char *reason);
void handoff_setting_get(const char *name, char *buf, int len);
void handoff_setting_set(const char *name, const char *val);

/*
 * IOUH_RING, the kind of ring the tests run on (the harness' ring phases):
 * unset or "plain"; "single": IORING_SETUP_SINGLE_ISSUER; "defer":
 * SINGLE_ISSUER | DEFER_TASKRUN (stock refuses DEFER_TASKRUN alone). A
 * "+regfd" suffix registers the ring's fd too, so the tests' io_uring_enter()
 * calls go through IORING_ENTER_REGISTERED_RING. Fails on anything else.
 */
unsigned int test_ring_flags(void);
int test_ring_regfd(void);
/*
 * io_uring_queue_init(@entries, @ring, @flags). @flags 0: a ring of
 * IOUH_RING's kind, test_ring_flags() and the fd registered if
 * test_ring_regfd(). Returns what io_uring_queue_init() does.
 */
struct io_uring;
int test_queue_init(unsigned int entries, struct io_uring *ring,
		    unsigned int flags);

/* true if IOUH_MODE is "handoff" */
int mode_handoff(void);
/*
 * Mode handoff: counter @name must have moved past @before. If it did not,
 * fail if IOUH_EXPECT_HANDOFF is "1", else skip (not in this build). Other
 * modes: no requirement.
 */
void expect_moved(const char *name, long long before);
/* mode handoff: counter @name must still read @before, else fail */
void expect_unmoved(const char *name, long long before);
/* expect_moved("handoffs", @before): a blocking handoff happened */
void expect_handoff(long long before);

/* the inline_issued counter, -1 if the module is not loaded */
long long inline_issued(void);
/* mode handoff: exactly @n requests were issued inline since @before */
void expect_inline(long long before, long long n);
/* any mode: no request was issued inline since @before */
void expect_no_inline(long long before);

#endif
