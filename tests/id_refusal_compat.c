// SPDX-License-Identifier: GPL-2.0
/*
 * No handoff to a worker that doesn't share what the identity must keep
 * sharing, and nothing lost by the refusal: the thread's io-wq worker is
 * created first, then the thread unshares state the RFC's
 * thread_handoff_compatible() requires to be the same on both sides, so no
 * idle worker is compatible. The blocking fsync must complete with 0; in
 * mode handoff "handoffs" must not move while "fallback_worker" (no
 * compatible worker, blocked in place) or "fallback_task" (refused up
 * front) does; and the thread must still have its own state afterwards.
 *
 *  (a) unshare(CLONE_FILES): afterwards the thread still has its own fd
 *      table: an fd opened only there is still valid and the same file, an
 *      fd closed only there is still closed, and an fd it opens then does
 *      not show up in the main thread's table, where the fd closed in the
 *      thread is still open.
 *  (b) unshare(CLONE_FS) and chdir() to a new directory: getcwd() still
 *      gives that directory, the main thread's cwd is unchanged.
 *
 * A seccomp filter installed after the worker exists is the same kind of
 * case, id_nnp_seccomp.c has it. Blocking is forced by fsync of dirty data
 * on ext4, see helpers.c.
 *
 * Fails on a kernel/module that hands the identity to a worker with a
 * different fd table or fs_struct: the thread comes back with the worker's,
 * the process-wide ones, and loses its own fds or cwd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "helpers.h"

#define NAME	"id_refusal_compat"

struct punt {
	long long ho, fb;
};

/* fallback_worker + fallback_task, the counters that exist; -1 if none */
static long long punted(void)
{
	long long w = t_counter("fallback_worker");
	long long t = t_counter("fallback_task");

	if (w < 0 && t < 0)
		return -1;
	return (w < 0 ? 0 : w) + (t < 0 ? 0 : t);
}

static void punted_block(struct t_force *tf, struct punt *p)
{
	p->fb = punted();
	p->ho = t_force_block(tf);
}

static void expect_punted(const char *what, const struct punt *p)
{
	long long ho = t_counter("handoffs");
	long long fb = punted();

	if (!t_mode_handoff())
		return;
	if (ho != p->ho)
		t_fail("%s: handed off to an incompatible worker (handoffs %lld -> %lld)",
		     what, p->ho, ho);
	if (p->fb < 0 || fb <= p->fb)
		t_fail("%s: neither fallback_worker nor fallback_task moved (%lld -> %lld)",
		     what, p->fb, fb);
}

struct files_case {
	int ring_fd, file_fd;
	int shared_fd;		/* closed in the thread only */
	int own_fd;		/* opened in the thread only, before the fsync */
	int late_fd;		/* opened in the thread only, after it */
	dev_t own_dev;
	ino_t own_ino;
};

/* is @fd open in the caller's table, on the thread's own file */
static int fd_is(int fd, const struct files_case *fc)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == fc->own_dev &&
	       st.st_ino == fc->own_ino;
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void *unshared_files(void *arg)
{
	const char *what = "(a) unshared fd table";
	struct files_case *fc = arg;
	char path[PATH_MAX];
	struct stat st;
	struct punt p;
	struct t_force tf;
	int fd;

	t_force_init(&tf, NAME);
	fc->shared_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fc->shared_fd < 0)
		t_fail("open /dev/null: %s", strerror(errno));
	if (unshare(CLONE_FILES))
		t_fail("%s: unshare: %s", what, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s.own.%d", t_dir("IOUH_TMPFS"),
		 NAME, gettid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	unlink(path);
	/* high, where the main thread's table has nothing */
	fc->own_fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (fc->own_fd < 0 || fstat(fd, &st))
		t_fail("F_DUPFD: %s", strerror(errno));
	close(fd);
	fc->own_dev = st.st_dev;
	fc->own_ino = st.st_ino;
	close(fc->shared_fd);

	punted_block(&tf, &p);

	if (!fd_is(fc->own_fd, fc))
		t_fail("%s: fd %d opened in the thread's own table is gone",
		     what, fc->own_fd);
	if (fd_open(fc->shared_fd))
		t_fail("%s: fd %d, closed in the thread's own table, is open again",
		     what, fc->shared_fd);
	fc->late_fd = fcntl(fc->own_fd, F_DUPFD_CLOEXEC, 200);
	if (fc->late_fd < 0)
		t_fail("F_DUPFD: %s", strerror(errno));
	expect_punted(what, &p);
	/* closes the thread's copies, the main thread closes its own */
	fc->ring_fd = tf.ring.ring_fd;
	fc->file_fd = tf.fd;
	t_force_exit(&tf);
	return NULL;
}

static void files_case(void)
{
	const char *what = "(a) unshared fd table";
	struct files_case fc;

	t_run_in_thread(unshared_files, &fc);
	/* the main thread's table never saw the thread's changes */
	if (!fd_open(fc.shared_fd))
		t_fail("%s: fd %d closed in the thread is closed for the main thread too",
		     what, fc.shared_fd);
	if (fd_is(fc.own_fd, &fc) || fd_is(fc.late_fd, &fc))
		t_fail("%s: the thread's own file shows up in the main thread's table",
		     what);
	close(fc.shared_fd);
	close(fc.ring_fd);
	close(fc.file_fd);
}

struct fs_case {
	char dir[PATH_MAX];
};

static void *unshared_fs(void *arg)
{
	const char *what = "(b) unshared fs_struct";
	struct fs_case *fs = arg;
	char cwd[PATH_MAX];
	struct punt p;
	struct t_force tf;

	t_force_init(&tf, NAME);
	if (unshare(CLONE_FS))
		t_fail("%s: unshare: %s", what, strerror(errno));
	if (chdir(fs->dir))
		t_fail("chdir %s: %s", fs->dir, strerror(errno));

	punted_block(&tf, &p);

	if (!getcwd(cwd, sizeof(cwd)))
		t_fail("%s: getcwd: %s", what, strerror(errno));
	if (strcmp(cwd, fs->dir))
		t_fail("%s: cwd %s, expected %s", what, cwd, fs->dir);
	expect_punted(what, &p);
	t_force_exit(&tf);
	return NULL;
}

static void fs_case(void)
{
	const char *what = "(b) unshared fs_struct";
	char before[PATH_MAX], after[PATH_MAX];
	struct fs_case fs;

	if (!getcwd(before, sizeof(before)))
		t_fail("getcwd: %s", strerror(errno));
	snprintf(fs.dir, sizeof(fs.dir), "%s/%s.XXXXXX",
		 t_dir("IOUH_TMPFS"), NAME);
	if (!mkdtemp(fs.dir))
		t_fail("mkdtemp %s: %s", fs.dir, strerror(errno));
	t_run_in_thread(unshared_fs, &fs);
	rmdir(fs.dir);
	if (!getcwd(after, sizeof(after)))
		t_fail("getcwd: %s", strerror(errno));
	if (strcmp(before, after))
		t_fail("%s: main thread's cwd changed to %s", what, after);
}

int main(void)
{
	t_dir("IOUH_EXT4");
	t_dir("IOUH_TMPFS");
	files_case();
	fs_case();
	return T_PASS;
}
