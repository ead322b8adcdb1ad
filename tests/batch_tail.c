// SPDX-License-Identifier: GPL-2.0
/*
 * The other requests of a submit complete independently of a blocking one
 * in it, as in stock 7.2: a NOP batched with a blocking request posts its
 * CQE while that request still waits, whether the blocking request is the
 * last SQE of the batch or the first.
 *
 * Blocking is forced by openat(O_RDONLY | O_CREAT) of a FIFO, which sleeps
 * until a writer opens the FIFO: after the checks, or 5 s after the submit
 * at the latest, so a submit that blocks in place ends. In a warm thread
 * (an idle io-wq worker to hand off to), one io_uring_submit() of [NOP,
 * open] and, in another warm thread, of [open, NOP] must return 2 within
 * 1 s; the NOP's CQE (res 0) must arrive within 2 s with the open still
 * pending; then the writer opens and the open's CQE carries an fd of the
 * FIFO.
 *
 * Fails on a kernel/module that hands off in the middle of a batch without
 * flushing the completions the submitter had deferred: when the blocking
 * SQE is the batch's last, nothing submits after it, and the NOP's CQE
 * stays in the submit state's deferred completions.
 */
#include <string.h>
#include <unistd.h>
#include "helpers.h"

#define NOP_UD		1ULL
#define FIFO_UD		2ULL
#define SUBMIT_MAX_MS	1000
#define NOP_MAX_MS	2000
/* the writer's deadline after the submit, past the checks' bounds */
#define RELEASE_MS	5000
#define REAP_MS		5000

static void batch(int fifo_first, const char *what)
{
	struct io_uring_sqe *sqe;
	unsigned long long ud;
	struct t_fifo f;
	struct t_force tf;
	int i, ret, res;
	long long t;

	t_force_init(&tf, "batch_tail");
	t_fifo_init(&f, "batch_tail");
	for (i = 0; i < 2; i++) {
		sqe = io_uring_get_sqe(&tf.ring);
		if (!sqe)
			t_fail("no SQE");
		if ((i == 0) == !!fifo_first) {
			t_fifo_prep_open(&f, sqe, FIFO_UD);
		} else {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, NOP_UD);
		}
	}
	t_fifo_release_after(&f, RELEASE_MS);
	t = t_now_ms();
	ret = io_uring_submit(&tf.ring);
	t = t_now_ms() - t;
	if (ret != 2)
		t_fail("%s: submit returned %d, expected 2", what, ret);
	if (t > SUBMIT_MAX_MS)
		t_fail("%s: submit took %lld ms (max %d), the open blocked in place",
		     what, t, SUBMIT_MAX_MS);

	if (!t_wait_cqe_ms(&tf.ring, NOP_MAX_MS, &ud, &res))
		t_fail("%s: no CQE for the NOP within %d ms", what, NOP_MAX_MS);
	if (ud != NOP_UD)
		t_fail("%s: CQE user_data %#llx res %d before the NOP's, without a writer",
		     what, ud, res);
	if (res)
		t_fail("%s: NOP res %d, expected 0", what, res);
	if (t_wait_cqe_ms(&tf.ring, 0, &ud, &res))
		t_fail("%s: CQE user_data %#llx res %d without a writer",
		     what, ud, res);

	t_fifo_release_now(&f);
	if (!t_wait_cqe_ms(&tf.ring, REAP_MS, &ud, &res))
		t_fail("%s: no CQE for the open %d ms after the writer was released",
		     what, REAP_MS);
	if (ud != FIFO_UD)
		t_fail("%s: CQE user_data %#llx, expected the open's", what, ud);
	t_fifo_check_fd(&f, res);
	if (t_wait_cqe_ms(&tf.ring, 50, &ud, &res))
		t_fail("%s: extra CQE user_data %#llx res %d", what, ud, res);
	t_fifo_exit(&f);
	t_force_exit(&tf);
}

/* the blocking SQE is the batch's last */
static void *test_open_last(void *arg)
{
	(void)arg;
	batch(0, "[nop, open]");
	return NULL;
}

/* the blocking SQE is the batch's first */
static void *test_open_first(void *arg)
{
	(void)arg;
	batch(1, "[open, nop]");
	return NULL;
}

int main(void)
{
	t_run_in_thread(test_open_last, NULL);
	t_run_in_thread(test_open_first, NULL);
	return T_PASS;
}
