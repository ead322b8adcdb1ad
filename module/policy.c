// SPDX-License-Identifier: GPL-2.0
/*
 * Which requests are issued inline in blocking mode instead of being punted
 * to io-wq upfront, and what happens when such an issue sleeps.
 *
 * A request the kernel would punt (REQ_F_FORCE_ASYNC set by its prep, or a
 * read or write of a file without a nonblocking path) is issued inline if
 * its opcode copes with blocking there, its ring, file and call allow it,
 * and an idle io-wq worker is held that can take the submitter's
 * identity: a request that could not be handed off must not go inline. The
 * kernel blocks the submitter's signals and sets PF_IO_HANDOFF for the issue
 * (io_uring/handoff_hooks.c); if it sleeps, the scheduler calls
 * iouh_issue_sleeping() (iowq_handoff.c), which hands the identity to the
 * held worker.
 */
#include <linux/cgroup.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/sysfs.h>

#include "handoff.h"
#include "handoff_trace.h"

/*
 * The blockable opcodes of the RFC's opdef, by the name the policy's rates
 * use. Most have their prep force the io-wq punt and are asked about at
 * issue. Reads and writes (.rw) keep their nonblocking issue; only one of a
 * file without a nonblocking path (no FMODE_NOWAIT and not pollable, e.g.
 * tmpfs in 7.2), or of a file with no nonblocking buffered write (ext4),
 * fails it with -EAGAIN before any I/O, and the kernel asks about that one
 * (io_issue_sqe()'s retry); the module takes tmpfs's and ext4's buffered
 * ones alone (iouh_rw_allowed()). Not here: SPLICE and TEE (one
 * side is always a pipe, a pollable file keeps its punt); uring_cmd (drivers
 * bind state to the submitting task); CLOSE (it punts only a file with
 * ->flush, NFS or FUSE: a server round trip that nearly always sleeps, so a
 * handoff would cost more than the punt it saves).
 */
struct iouh_op {
	const char	*name;
	bool		rw;
	/*
	 * Grows a file: past RLIMIT_FSIZE the file system sends SIGXFSZ to
	 * current (generic_write_check_limits(), inode_newsize_ok()). On
	 * io-wq that is the worker, which blocks it; inline it would be the
	 * submitter, killed by the default action where stock completes with
	 * -EFBIG. So with a finite limit these keep their punt
	 * (iouh_fsize_limited()).
	 */
	bool		fsize;
};

static const struct iouh_op iouh_ops[IORING_OP_LAST] = {
	[IORING_OP_FSYNC]		= { "fsync" },
	[IORING_OP_SYNC_FILE_RANGE]	= { "sync_file_range" },
	[IORING_OP_FALLOCATE]		= { "fallocate", .fsize = true },
	[IORING_OP_OPENAT]		= { "openat" },
	[IORING_OP_OPENAT2]		= { "openat2" },
	[IORING_OP_STATX]		= { "statx" },
	[IORING_OP_FADVISE]		= { "fadvise" },
	[IORING_OP_MADVISE]		= { "madvise" },
	[IORING_OP_RENAMEAT]		= { "renameat" },
	[IORING_OP_UNLINKAT]		= { "unlinkat" },
	[IORING_OP_MKDIRAT]		= { "mkdirat" },
	[IORING_OP_SYMLINKAT]		= { "symlinkat" },
	[IORING_OP_LINKAT]		= { "linkat" },
	[IORING_OP_FSETXATTR]		= { "fsetxattr" },
	[IORING_OP_SETXATTR]		= { "setxattr" },
	[IORING_OP_FGETXATTR]		= { "fgetxattr" },
	[IORING_OP_GETXATTR]		= { "getxattr" },
	[IORING_OP_FTRUNCATE]		= { "ftruncate", .fsize = true },
	[IORING_OP_READ]		= { "read", .rw = true },
	[IORING_OP_READV]		= { "readv", .rw = true },
	[IORING_OP_READ_FIXED]		= { "read_fixed", .rw = true },
	[IORING_OP_READV_FIXED]		= { "readv_fixed", .rw = true },
	[IORING_OP_WRITE]		= { "write", .rw = true,
					    .fsize = true },
	[IORING_OP_WRITEV]		= { "writev", .rw = true,
					    .fsize = true },
	[IORING_OP_WRITE_FIXED]		= { "write_fixed", .rw = true,
					    .fsize = true },
	[IORING_OP_WRITEV_FIXED]	= { "writev_fixed", .rw = true,
					    .fsize = true },
};

static const struct iouh_op *iouh_op_of(struct io_kiocb *req)
{
	if (req->opcode >= IORING_OP_LAST || !iouh_ops[req->opcode].name)
		return NULL;
	return &iouh_ops[req->opcode];
}

/*
 * The adaptive policy: how often the recent inline issues of an opcode on a
 * superblock slept. Where most of them slept, a request takes the stock punt
 * upfront: a handoff costs more than a punt, and a batch that hands off again
 * and again runs serialized what io-wq would run in parallel. One request in
 * IOUH_RATE_PROBE still goes inline, so the estimate follows a change (the
 * page cache filled, the disk got idle); each probe that sleeps too doubles
 * the interval up to IOUH_RATE_PROBE_MAX (a probe that hands off costs the
 * io-wq worker it promotes, the next punt may have to create one). Path-based
 * requests have no file at issue: their superblock is NULL, one estimate per
 * opcode.
 *
 * A direct-mapped table, updated without locks: a lost update or a bucket
 * taken over by another key only shifts an estimate. The superblock pointer
 * is a key, never dereferenced after the claim (which holds the file).
 */
#define IOUH_RATE_BUCKETS	64
#define IOUH_RATE_ONE		256	/* one issue in ->issues, ->slept */
#define IOUH_RATE_DECAY		4	/* an issue weighs 1/16 of the estimate */
#define IOUH_RATE_PROBE		16	/* of the requests punted upfront */
#define IOUH_RATE_PROBE_MAX	256	/* ... after probes that slept */
#define IOUH_RATE_MIN		4	/* inline issues before it may punt */

struct iouh_rate {
	const void	*sb;
	u8		opcode;
	char		fs[16];		/* the sb's file system, for show */
	u32		issues;		/* inline issues, decayed */
	u32		slept;		/* ... of which slept, same decay */
	u32		punted;		/* punted upfront since the last probe */
	u32		probe_every;	/* 0: IOUH_RATE_PROBE */
} ____cacheline_aligned_in_smp;

static struct iouh_rate iouh_rates[IOUH_RATE_BUCKETS];
bool iouh_adaptive = true;
bool iouh_async_inline;

static const struct super_block *iouh_rate_sb(struct io_kiocb *req)
{
	return req->file ? file_inode(req->file)->i_sb : NULL;
}

/* @req's estimate; a bucket another key holds is taken over if @claim */
static struct iouh_rate *iouh_rate_of(struct io_kiocb *req, bool claim)
{
	const struct super_block *sb = iouh_rate_sb(req);
	struct iouh_rate *r;

	r = &iouh_rates[hash_long((unsigned long)sb + req->opcode,
				  ilog2(IOUH_RATE_BUCKETS))];
	if (READ_ONCE(r->sb) == sb && READ_ONCE(r->opcode) == req->opcode)
		return r;
	if (!claim)
		return NULL;
	WRITE_ONCE(r->issues, 0);
	WRITE_ONCE(r->slept, 0);
	WRITE_ONCE(r->punted, 0);
	WRITE_ONCE(r->probe_every, 0);
	/* read unlocked by iouh_rates_show(), which bounds it */
	data_race(strscpy(r->fs, sb ? sb->s_type->name : "-"));
	WRITE_ONCE(r->opcode, req->opcode);
	WRITE_ONCE(r->sb, sb);
	return r;
}

/* most of the recent inline issues slept */
static bool iouh_rate_sleepy(struct iouh_rate *r)
{
	u32 issues = READ_ONCE(r->issues);

	return issues >= IOUH_RATE_MIN * IOUH_RATE_ONE &&
	       READ_ONCE(r->slept) * 2 > issues;
}

static u32 iouh_rate_probe_every(struct iouh_rate *r)
{
	return READ_ONCE(r->probe_every) ?: IOUH_RATE_PROBE;
}

/*
 * Punt a sleepy one upfront, all but a probe in iouh_rate_probe_every():
 * counts the punt towards the next probe.
 */
static bool iouh_rate_punts(struct iouh_rate *r)
{
	u32 punted, every;

	if (!READ_ONCE(iouh_adaptive))
		return false;
	if (!iouh_rate_sleepy(r)) {
		if (READ_ONCE(r->probe_every))
			WRITE_ONCE(r->probe_every, 0);
		return false;
	}
	every = iouh_rate_probe_every(r);
	punted = READ_ONCE(r->punted) + 1;
	WRITE_ONCE(r->punted, punted < every ? punted : 0);
	return punted < every;
}

/* a probe that found no worker: the next request probes instead */
static void iouh_rate_unissued(struct iouh_rate *r)
{
	if (READ_ONCE(iouh_adaptive) && iouh_rate_sleepy(r))
		WRITE_ONCE(r->punted, iouh_rate_probe_every(r) - 1);
}

static void iouh_rate_issued(struct iouh_rate *r)
{
	u32 issues = READ_ONCE(r->issues), slept = READ_ONCE(r->slept);

	WRITE_ONCE(r->issues, issues - (issues >> IOUH_RATE_DECAY) +
			      IOUH_RATE_ONE);
	WRITE_ONCE(r->slept, slept - (slept >> IOUH_RATE_DECAY));
}

/*
 * From the scheduler hook: no allocation, no lock, no walk. An adaptive
 * issue of a sleepy estimate is a probe: it slept too, probe less often.
 */
void iouh_rate_slept(struct io_kiocb *req)
{
	struct iouh_rate *r = iouh_rate_of(req, false);

	if (!r)
		return;
	if (READ_ONCE(iouh_adaptive) && iouh_rate_sleepy(r))
		WRITE_ONCE(r->probe_every, min(2 * iouh_rate_probe_every(r),
					       IOUH_RATE_PROBE_MAX));
	WRITE_ONCE(r->slept, READ_ONCE(r->slept) + IOUH_RATE_ONE);
}

/*
 * The rates file: one line per estimate, "opcode fs slept% issues probe"
 * (issues decayed: the weight of the estimate, at most 16; probe: one in how
 * many goes inline while most slept).
 */
ssize_t iouh_rates_show(char *buf)
{
	ssize_t len = 0;
	int i;

	for (i = 0; i < IOUH_RATE_BUCKETS; i++) {
		struct iouh_rate *r = &iouh_rates[i];
		u32 issues = READ_ONCE(r->issues), slept = READ_ONCE(r->slept);
		u8 op = READ_ONCE(r->opcode);

		if (!issues || op >= IORING_OP_LAST || !iouh_ops[op].name)
			continue;
		len += sysfs_emit_at(buf, len, "%s %.*s %u %u %u\n",
				     iouh_ops[op].name, (int)sizeof(r->fs),
				     r->fs, min(100U, slept * 100 / issues),
				     DIV_ROUND_CLOSEST(issues, IOUH_RATE_ONE),
				     iouh_rate_probe_every(r));
	}
	return len;
}

/*
 * The budget of one io_uring_enter(): its inline issues run one after the
 * other in the submitter, where io-wq would run the punts of the batch in
 * parallel. Past iouh_batch_budget_us since the batch's first inline issue
 * after its first SQE, the rest of it takes the punt (the first request's
 * time isn't counted: a call of one request, qd 1, reads no clock): a batch
 * of expensive requests that never sleep (openat O_TMPFILE on ext4) goes to
 * io-wq but for its first few (the rest of a call that handed off is
 * fallback_batch's, checked first). 0: no budget. A batch is the task's
 * io_uring_task, the ring and the SQ head at the call's entry
 * (handoff.sq_head, which the worker resuming the call keeps).
 * Direct-mapped and unlocked like the rates: a lost update or a bucket
 * taken over restarts a budget.
 */
#define IOUH_BATCH_BUCKETS	64

struct iouh_batch {
	const struct io_uring_task	*tctx;
	const struct io_ring_ctx	*ctx;
	u32				sq_head;
	u64				start;	/* ns, its first budgeted issue */
} ____cacheline_aligned_in_smp;

static struct iouh_batch iouh_batches[IOUH_BATCH_BUCKETS];
unsigned int iouh_batch_budget_us = IOUH_BATCH_BUDGET_US;

/* the SQEs @req's io_uring_enter() consumed before it: 0 for the first */
static u32 iouh_sqes_before(struct io_kiocb *req, struct io_uring_task *tctx)
{
	return req->ctx->cached_sq_head - tctx->handoff.sq_head - 1;
}

/* is the budget of @req's batch spent? Starts it on its second SQE */
static bool iouh_batch_spent(struct io_kiocb *req, struct io_uring_task *tctx)
{
	u64 budget = READ_ONCE(iouh_batch_budget_us) * NSEC_PER_USEC;
	u32 sq_head = tctx->handoff.sq_head;
	struct iouh_batch *b;
	u64 now;

	/* the call's first request: no budget spent, no clock read (qd 1) */
	if (!budget || !READ_ONCE(iouh_adaptive) || !iouh_sqes_before(req, tctx))
		return false;
	now = ktime_get_ns();
	b = &iouh_batches[hash_ptr(tctx, ilog2(IOUH_BATCH_BUCKETS))];
	if (READ_ONCE(b->tctx) == tctx && READ_ONCE(b->ctx) == req->ctx &&
	    READ_ONCE(b->sq_head) == sq_head)
		return now - READ_ONCE(b->start) > budget;
	WRITE_ONCE(b->start, now);
	WRITE_ONCE(b->sq_head, sq_head);
	WRITE_ONCE(b->ctx, req->ctx);
	WRITE_ONCE(b->tctx, tctx);
	return false;
}

/*
 * The depth of the application: completions in the CQ it hasn't reaped,
 * and the SQEs its io_uring_enter() took before this one (their
 * completions post at the end of the call). An application that submits
 * while results wait is pipelining, it doesn't wait for this one next: on
 * io-wq the request would run beside it, on another CPU, where inline it
 * runs serialized in the submitter (fio at iodepth 32 submits each request
 * alone, and an inline one has completed by the time its call returns, so
 * only the CQ shows the depth). From iouh_depth_max of them on, with another
 * CPU to run on, a request takes the punt, and so does every request of the
 * task on that ring for IOUH_DEPTH_HOLD_MS after (and a jiffy): a pipeline's
 * CQ drains now and then, and an inline issue beside its punts still on
 * io-wq would contend with them (the same file's lock) and hand off. It is
 * checked before the identity and the estimates: most requests of a
 * pipeline end here, and a punt should cost what the stock one does. cq.head
 * is the application's, read unlocked: a stale value shifts a decision by a
 * request. The table is direct-mapped and unlocked like the batches': a
 * lost update ends a hold early.
 */
#define IOUH_DEPTH_BUCKETS	64
#define IOUH_DEPTH_HOLD_MS	2

struct iouh_depth {
	const struct io_uring_task	*tctx;
	const struct io_ring_ctx	*ctx;
	unsigned long			until;	/* jiffies, the hold's end */
} ____cacheline_aligned_in_smp;

static struct iouh_depth iouh_depths[IOUH_DEPTH_BUCKETS];
unsigned int iouh_depth_max = IOUH_DEPTH_MAX;

static bool iouh_depth_spent(struct io_kiocb *req, struct io_uring_task *tctx)
{
	unsigned int max = READ_ONCE(iouh_depth_max);
	struct io_ring_ctx *ctx = req->ctx;
	struct iouh_depth *d;
	unsigned int depth;

	if (!max || !READ_ONCE(iouh_adaptive) || current->nr_cpus_allowed < 2)
		return false;
	depth = ctx->cached_cq_tail - READ_ONCE(ctx->rings->cq.head);
	depth += iouh_sqes_before(req, tctx);
	d = &iouh_depths[hash_ptr(tctx, ilog2(IOUH_DEPTH_BUCKETS))];
	if (depth >= max) {
		/* a jiffy at least: no clock read per request */
		WRITE_ONCE(d->until, jiffies + 1 +
			   msecs_to_jiffies(IOUH_DEPTH_HOLD_MS));
		WRITE_ONCE(d->ctx, ctx);
		WRITE_ONCE(d->tctx, tctx);
		return true;
	}
	return READ_ONCE(d->tctx) == tctx && READ_ONCE(d->ctx) == ctx &&
	       time_before(jiffies, READ_ONCE(d->until));
}

/*
 * Rings whose issue runs elsewhere (SQPOLL), completes by polling (IOPOLL)
 * or can't resume mid-batch (SQ_REWIND). SINGLE_ISSUER and DEFER_TASKRUN
 * rings are served: the handoff makes the worker their submitter_task
 * (io_uring_tctx_switch()).
 */
#define IOUH_RING_REFUSED	(IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL | \
				 IORING_SETUP_SQ_REWIND)

/* count and trace why @req didn't go inline, or slept in place */
void iouh_count_fail(struct io_kiocb *req, enum iouh_counter why)
{
	iouh_count(why);
	trace_io_uring_handoff_fail(req, iouh_counter_names[why]);
}

/* @req takes the stock io-wq punt, for @why: false to the kernel's asks */
static bool iouh_fallback(struct io_kiocb *req, enum iouh_counter why)
{
	iouh_count_fail(req, why);
	return false;
}

/* a pollable file keeps the nonblocking issue and poll retry path */
static bool iouh_file_polls(struct io_kiocb *req)
{
	return (req->flags & REQ_F_CAN_POLL) ||
	       (req->file && file_can_poll(req->file));
}

/*
 * A read or write the kernel asked about: its nonblocking issue gave -EAGAIN
 * and its file can't poll. Only file systems known to finish the I/O within
 * the call go inline: tmpfs (no nonblocking path in 7.2) and ext4's buffered
 * I/O (FMODE_NOWAIT, but no nonblocking buffered write, FOP_BUFFER_WASYNC,
 * so stock punts every one). A read or write whose ->read_iter() or
 * ->write_iter() may return -EIOCBQUEUED to an async kiocb (direct I/O on
 * ext4, NFS, FUSE, ceph, SMB) completes the request from its own context,
 * possibly while the demoted task is still inside the call after a
 * handoff; a request issued inline holds no reference of io-wq's
 * (io_req_rw_cleanup()) to keep io_async_rw alive until it returns. An
 * O_DIRECT set after this check, by fcntl(), is caught at the first sleep
 * (iouh_rw_direct()).
 */
static bool iouh_rw_allowed(struct io_kiocb *req)
{
	struct file *file = req->file;

	/* kbuf commits assume the ring lock, which a handoff gives away */
	if (!file || (req->flags & REQ_F_BUFFER_SELECT))
		return false;
	if (shmem_file(file))
		return true;
	return !strcmp(file_inode(file)->i_sb->s_type->name, "ext4") &&
	       !(file->f_flags & O_DIRECT);
}

/*
 * From the scheduler hook, at an inline issue's first sleep: a read or write
 * that went direct after iouh_rw_allowed() (fcntl(F_SETFL, O_DIRECT) in
 * between: each issue copies the file's f_iocb_flags). It must sleep in
 * place: its bio may complete the request while the call is still in the
 * file system, and the completion's task_work then stays with this task
 * until the call returns, as for direct I/O issued nonblocking. The kiocb is
 * struct io_rw's first member (io_uring/rw.c: its file aliases io_kiocb's).
 * tmpfs's direct I/O is its buffered I/O.
 */
bool iouh_rw_direct(struct io_kiocb *req)
{
	const struct iouh_op *op = iouh_op_of(req);

	return op && op->rw &&
	       (io_kiocb_to_cmd(req, struct kiocb)->ki_flags & IOCB_DIRECT) &&
	       !shmem_file(req->file);
}

/*
 * May @op raise SIGXFSZ for the caller? Only with a finite RLIMIT_FSIZE.
 * Unlocked, as the file systems read it. Not covered: a limit another
 * thread lowers (setrlimit()) between this check and the issue's own size
 * check; that issue's SIGXFSZ reaches the submitter, where stock's worker
 * would take it.
 */
static bool iouh_fsize_limited(const struct iouh_op *op)
{
	return op->fsize && rlimit(RLIMIT_FSIZE) != RLIM_INFINITY;
}

/*
 * The cgroup setting: a cgroup v2 directory (a path from the root of the
 * cgroup2 mount) whose tasks, and its descendants', are the only candidates
 * for an inline issue; NULL, everyone. Written under iouh_scope_lock, read
 * under RCU; the cgroup is held until replaced, so a removed one stays
 * valid: no task is in it, nothing goes inline until the setting changes.
 */
static struct cgroup __rcu *iouh_scope;
static char iouh_scope_path[256];
static DEFINE_MUTEX(iouh_scope_lock);

int iouh_scope_set(const char *val)
{
	struct cgroup *cgrp = NULL, *old;
	char path[sizeof(iouh_scope_path)];

	if (strscpy(path, val, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	strim(path);
	if (path[0] && !IS_ENABLED(CONFIG_CGROUPS))
		return -EOPNOTSUPP;
	if (path[0] && path[0] != '/')
		return -EINVAL;
	if (path[0]) {
		cgrp = cgroup_get_from_path(path);
		if (IS_ERR(cgrp))
			return PTR_ERR(cgrp);
	}
	mutex_lock(&iouh_scope_lock);
	old = rcu_replace_pointer(iouh_scope, cgrp,
				  lockdep_is_held(&iouh_scope_lock));
	strscpy(iouh_scope_path, path, sizeof(iouh_scope_path));
	mutex_unlock(&iouh_scope_lock);
	if (old) {
		/* an issue that read it under RCU is done with it */
		synchronize_rcu();
		cgroup_put(old);
	}
	return 0;
}

ssize_t iouh_scope_show(char *buf)
{
	struct cgroup *cgrp;
	ssize_t ret;

	guard(mutex)(&iouh_scope_lock);
	cgrp = rcu_dereference_protected(iouh_scope,
					 lockdep_is_held(&iouh_scope_lock));
	ret = sysfs_emit(buf, "%s%s\n", iouh_scope_path,
			 cgrp && !(READ_ONCE(cgrp->self.flags) & CSS_ONLINE) ?
			 " (removed)" : "");
	return ret;
}

/* module exit: drop the held cgroup */
void iouh_scope_exit(void)
{
	iouh_scope_set("");
}

/* current is a candidate: the setting is empty or names an ancestor */
static bool iouh_in_scope(void)
{
	struct cgroup *cgrp;

	if (!rcu_access_pointer(iouh_scope))
		return true;
	guard(rcu)();
	cgrp = rcu_dereference(iouh_scope);
	return !cgrp || task_under_cgroup_hierarchy(current, cgrp);
}

/*
 * io_uring_handoff_begin(), under uring_lock: issue @req inline in blocking
 * mode? Only with a worker held that can take the identity over.
 */
bool iouh_issue_begin(struct io_kiocb *req)
{
	struct io_uring_task *tctx = current->io_uring;
	const struct iouh_op *op = iouh_op_of(req);
	struct iouh_rate *rate;
	int why;

	if (!op)
		return false;
	/*
	 * IOSQE_ASYNC asks for io-wq, and keeps it unless async_inline. The
	 * kernel asks only for ops without a poll path, whose refusal punts
	 * them as its fallback would; not a read or write, whose would arm poll.
	 */
	if (req->flags & REQ_F_ASYNC_USER) {
		if (op->rw)
			return false;
		if (!READ_ONCE(iouh_async_inline))
			return iouh_fallback(req, IOUH_FB_REQUEST);
	}
	if (!iouh_in_scope())
		return iouh_fallback(req, IOUH_FB_SCOPE);
	/* only an io_uring_enter() can be finished by the worker */
	if ((req->ctx->flags & IOUH_RING_REFUSED) || !tctx->handoff.file)
		return iouh_fallback(req, IOUH_FB_RING);
	if (iouh_file_polls(req))
		return iouh_fallback(req, IOUH_FB_POLL);
	if ((op->rw && !iouh_rw_allowed(req)) || iouh_fsize_limited(op))
		return iouh_fallback(req, IOUH_FB_REQUEST);
	/*
	 * RFC 12, one migration per io_uring_enter(): the rest of a call that
	 * handed off takes the punt, io-wq runs it in parallel.
	 */
	if (tctx->handoff.done)
		return iouh_fallback(req, IOUH_FB_BATCH);
	if (iouh_depth_spent(req, tctx))
		return iouh_fallback(req, IOUH_FB_DEPTH);
	/* would interrupt the issue right away */
	if (task_sigpending(current))
		return iouh_fallback(req, IOUH_FB_SIGNAL);
	if (iouh_identity_refusal(current) != IOUH_MOVABLE)
		return iouh_fallback(req, IOUH_FB_TASK);
	rate = iouh_rate_of(req, true);
	if (iouh_rate_punts(rate))
		return iouh_fallback(req, IOUH_FB_POLICY);
	if (iouh_batch_spent(req, tctx))
		return iouh_fallback(req, IOUH_FB_BUDGET);
	/*
	 * Without an idle worker this one takes the stock punt, where io-wq
	 * forks one only if none runs; one refused counts like a refusal of
	 * the task.
	 */
	why = iouh_worker_reserve(tctx);
	if (why) {
		iouh_rate_unissued(rate);
		return iouh_fallback(req, why > 0 ? IOUH_FB_TASK : IOUH_FB_WORKER);
	}
	iouh_rate_issued(rate);
	iouh_count(IOUH_INLINE_ISSUED);
	return true;
}
