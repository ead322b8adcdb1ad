// SPDX-License-Identifier: GPL-2.0
/*
 * SEM_UNDO adjustments survive a blocking submit of a thread. A forked
 * process creates a SysV semaphore (value 0), and a non-leader thread (its
 * pthread_create() gave all threads one shared undo list, io-wq workers get
 * none) raises it by 3 with SEM_UNDO, then does a blocking fsync, with a
 * handoff in mode handoff. The value must still be 3 afterwards, and once the
 * process exited the kernel must have undone the 3: the value reads 0 again.
 * Blocking is forced by fsync of dirty data on ext4, see helpers.c.
 *
 * Fails on a kernel that refuses every threaded submitter because its
 * workers don't share the undo list (no handoff), or that hands off and
 * loses or duplicates the undo list: the adjustment is then never undone, or
 * undone while the process still runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include "helpers.h"

static int semid;

static int sem_value(void)
{
	int v = semctl(semid, 0, GETVAL);

	if (v < 0)
		t_fail("semctl GETVAL: %s", strerror(errno));
	return v;
}

static void *raise_and_block(void *arg)
{
	struct sembuf up = { .sem_num = 0, .sem_op = 3, .sem_flg = SEM_UNDO };
	long long ho;
	struct t_force tf;

	(void)arg;
	t_force_init(&tf, "id_sysvsem");
	if (semop(semid, &up, 1))
		t_fail("semop +3 SEM_UNDO: %s", strerror(errno));
	ho = t_force_block(&tf);
	if (sem_value() != 3)
		t_fail("value %d after the submit, expected 3", sem_value());
	t_expect_handoff(ho);
	t_force_exit(&tf);
	return NULL;
}

static void test_undo_after_exit(void)
{
	pid_t pid;
	int st;

	semid = semget(IPC_PRIVATE, 1, 0600);
	if (semid < 0)
		t_skip("semget: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		t_run_in_thread(raise_and_block, NULL);
		/* the whole process holds the undo list until it exits */
		if (sem_value() != 3)
			t_fail("value %d after the thread exited, expected 3",
			     sem_value());
		exit(T_PASS);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		t_fail("the test process died (status %#x)", st);
	if (WEXITSTATUS(st) != T_PASS) {
		semctl(semid, 0, IPC_RMID);
		exit(WEXITSTATUS(st));
	}
	st = sem_value();
	semctl(semid, 0, IPC_RMID);
	if (st)
		t_fail("value %d after the process exited, expected 0 (undone)",
		     st);
}

int main(void)
{
	test_undo_after_exit();
	return T_PASS;
}
