// SPDX-License-Identifier: GPL-2.0
/*
 * Differential scenario (diff/README.md): signals and children around a
 * blocking submit. The leader forks a child that exits with 7 a moment
 * later, blocks SIGUSR1 and has a helper thread send it to the leader's tid
 * (tgkill) while the leader sleeps in a forced fsync that hands off with
 * the module enabled. After the submit: the SIGCHLD handler's runs and
 * si_code, the child's wait status and that wait() found it, SIGUSR1 is
 * pending; after unblocking it, its handler's runs and si_code. Then the
 * same past RLIMIT_FSIZE in a child: a WRITE, a FALLOCATE and an FTRUNCATE
 * of a tmpfs file to twice the limit, each CQE's res and how the child
 * ended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "helpers.h"

#define LIMIT	4096

static volatile sig_atomic_t chld_runs, chld_code, usr1_runs, usr1_code;
static pid_t leader_tid;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	chld_runs++;
	chld_code = si->si_code;
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	usr1_runs++;
	usr1_code = si->si_code;
}

static void *sender(void *arg)
{
	(void)arg;
	usleep(20 * 1000);
	syscall(SYS_tgkill, getpid(), leader_tid, SIGUSR1);
	return NULL;
}

static void signals_children(void)
{
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_RESTART };
	struct t_force tf;
	pthread_t th;
	sigset_t usr, pend;
	long long ho;
	int status;
	pid_t pid;

	leader_tid = gettid();
	sa.sa_sigaction = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_sigaction = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr, NULL);
	t_force_init(&tf, "diff_signals");

	pid = fork();
	if (pid < 0)
		t_fail("fork");
	if (!pid) {
		usleep(10 * 1000);
		_exit(7);
	}
	if (pthread_create(&th, NULL, sender, NULL))
		t_fail("pthread_create");
	ho = t_force_block(&tf);
	pthread_join(th, NULL);
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	printf("child status: exited %d\n", WIFEXITED(status) ?
	       WEXITSTATUS(status) : -1);
	printf("SIGCHLD runs %d code %d\n", (int)chld_runs, (int)chld_code);
	sigpending(&pend);
	printf("SIGUSR1 pending: %d, handler runs before unblock %d\n",
	       sigismember(&pend, SIGUSR1), (int)usr1_runs);
	sigprocmask(SIG_UNBLOCK, &usr, NULL);
	printf("SIGUSR1 runs %d code %d\n", (int)usr1_runs, (int)usr1_code);
	t_expect_handoff(ho);
	t_force_exit(&tf);
}

/* in a child: the three requests past RLIMIT_FSIZE, their res */
static void fsize_child(const char *path)
{
	struct rlimit rl = { .rlim_cur = LIMIT, .rlim_max = RLIM_INFINITY };
	static char byte = 'x';
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int fd, i;

	signal(SIGXFSZ, SIG_DFL);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || t_queue_init(8, &ring, 0))
		t_fail("child setup");
	t_warm(&ring);
	setrlimit(RLIMIT_FSIZE, &rl);
	for (i = 0; i < 3; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		if (i == 0)
			io_uring_prep_write(sqe, fd, &byte, 1, 2 * LIMIT);
		else if (i == 1)
			io_uring_prep_fallocate(sqe, fd, 0, 0, 2 * LIMIT);
		else
			io_uring_prep_ftruncate(sqe, fd, 2 * LIMIT);
		if (t_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
			t_fail("child submit");
		printf("fsize op %d res %d\n", i, cqe->res);
		fflush(stdout);
		io_uring_cqe_seen(&ring, cqe);
		t_wait_idle_worker();
	}
	_exit(0);
}

static void fsize(void)
{
	char path[4096];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/diff_fsize.%d", t_dir("IOUH_TMPFS"),
		 getpid());
	t_track(path, 1);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		t_fail("fork");
	if (!pid)
		fsize_child(path);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("fsize child killed by %d\n", WTERMSIG(status));
	else
		printf("fsize child exited %d\n", WEXITSTATUS(status));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signals_children();
	fsize();
	return T_PASS;
}
