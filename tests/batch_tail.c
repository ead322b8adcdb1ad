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
#include "common.h"
#include "handoff_force.h"

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
	struct hf_fifo f;
	struct hf hf;
	int i, ret, res;
	long long t;

	hf_init(&hf, "batch_tail");
	hf_fifo_init(&f, "batch_tail");
	for (i = 0; i < 2; i++) {
		sqe = io_uring_get_sqe(&hf.ring);
		if (!sqe)
			fail("no SQE");
		if ((i == 0) == !!fifo_first) {
			hf_fifo_prep_open(&f, sqe, FIFO_UD);
		} else {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, NOP_UD);
		}
	}
	hf_fifo_release_after(&f, RELEASE_MS);
	t = hf_now_ms();
	ret = io_uring_submit(&hf.ring);
	t = hf_now_ms() - t;
	if (ret != 2)
		fail("%s: submit returned %d, expected 2", what, ret);
	if (t > SUBMIT_MAX_MS)
		fail("%s: submit took %lld ms (max %d), the open blocked in place",
		     what, t, SUBMIT_MAX_MS);

	if (!hf_wait_cqe_ms(&hf.ring, NOP_MAX_MS, &ud, &res))
		fail("%s: no CQE for the NOP within %d ms", what, NOP_MAX_MS);
	if (ud != NOP_UD)
		fail("%s: CQE user_data %#llx res %d before the NOP's, without a writer",
		     what, ud, res);
	if (res)
		fail("%s: NOP res %d, expected 0", what, res);
	if (hf_wait_cqe_ms(&hf.ring, 0, &ud, &res))
		fail("%s: CQE user_data %#llx res %d without a writer",
		     what, ud, res);

	hf_fifo_release_now(&f);
	if (!hf_wait_cqe_ms(&hf.ring, REAP_MS, &ud, &res))
		fail("%s: no CQE for the open %d ms after the writer was released",
		     what, REAP_MS);
	if (ud != FIFO_UD)
		fail("%s: CQE user_data %#llx, expected the open's", what, ud);
	hf_fifo_check_fd(&f, res);
	if (hf_wait_cqe_ms(&hf.ring, 50, &ud, &res))
		fail("%s: extra CQE user_data %#llx res %d", what, ud, res);
	hf_fifo_exit(&f);
	hf_exit(&hf);
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
	run_in_thread(test_open_last, NULL);
	run_in_thread(test_open_first, NULL);
	return T_PASS;
}
