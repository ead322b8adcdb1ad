// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring thread identity handoff: module init/exit and the files under
 * /sys/kernel/io_uring_handoff/: the enabled toggle (which registers the
 * kernel hooks or takes them away, so a disabled module leaves a stock
 * kernel), the settings (policy, async_inline, batch_budget_us,
 * depth_max), the policy's rates and the identity's refusals, and the
 * counters.
 */
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>

#include "handoff.h"

#define CREATE_TRACE_POINTS
#include "handoff_trace.h"

DEFINE_PER_CPU(u64, iouh_counters[IOUH_NR_COUNTERS]);

/*
 * What each counter counts. The fallback_* reasons took the stock io-wq
 * punt; blocked_* slept in place, in the submitter, with the ring lock held.
 * Beside them, inline_done (inline_done_show()): inline_issued less those
 * that slept, so an issue in flight counts as not having slept yet.
 */
const char * const iouh_counter_names[IOUH_NR_COUNTERS] = {
	/* blockable requests issued inline in blocking mode, a worker held */
	[IOUH_INLINE_ISSUED]	= "inline_issued",
	/* ... that slept and handed the identity to that worker */
	[IOUH_HANDOFFS]		= "handoffs",
	/* ... that slept in a section that needs the ring lock */
	[IOUH_BLOCKED_LOCK]	= "blocked_lock",
	/* ... that slept after the identity got bound mid-issue (perf, PI) */
	[IOUH_BLOCKED_TASK]	= "blocked_task",
	/* ... that slept after its file went O_DIRECT (iouh_rw_direct()) */
	[IOUH_BLOCKED_REQUEST]	= "blocked_request",
	/* SQPOLL, IOPOLL or SQ_REWIND ring; not an io_uring_enter() */
	[IOUH_FB_RING]		= "fallback_ring",
	/* IOSQE_ASYNC with async_inline off, or a provided buffer (rw) */
	[IOUH_FB_REQUEST]	= "fallback_request",
	/* a pollable file: the nonblocking issue and poll retry path */
	[IOUH_FB_POLL]		= "fallback_poll",
	/* a signal was pending at issue */
	[IOUH_FB_SIGNAL]	= "fallback_signal",
	/* the identity can't move: the refusals file says why */
	[IOUH_FB_TASK]		= "fallback_task",
	/* no idle io-wq worker (one that can't take the identity: a refusal) */
	[IOUH_FB_WORKER]	= "fallback_worker",
	/* the adaptive policy: most recent inline issues like it slept */
	[IOUH_FB_POLICY]	= "fallback_policy",
	/* ... or its batch spent the budget of one io_uring_enter() */
	[IOUH_FB_BUDGET]	= "fallback_budget",
	/* its io_uring_enter() handed off once already: one move per call */
	[IOUH_FB_BATCH]		= "fallback_batch",
	/* the submitter is outside the cgroup setting's subtree */
	[IOUH_FB_SCOPE]		= "fallback_scope",
	/* the application pipelines: depth_max completions it hasn't reaped */
	[IOUH_FB_DEPTH]		= "fallback_depth",
};

static const struct io_uring_handoff_ops handoff_ops = {
	.abi		= IO_URING_HANDOFF_ABI,
	.issue_begin	= iouh_issue_begin,
	.sleeping	= iouh_issue_sleeping,
	.take_identity	= iouh_identity_take,
};

static DEFINE_MUTEX(handoff_toggle_lock);
static bool enabled = true;
static bool registered;

/* enabled: the hooks are registered, disabled: the kernel runs stock */
static int handoff_set_enabled(bool on)
{
	int ret = 0;

	guard(mutex)(&handoff_toggle_lock);
	if (on && !registered) {
		ret = io_uring_handoff_register(&handoff_ops);
		if (ret) {
			pr_err("io_uring_handoff: the kernel refused hook ABI %d: %d\n",
			       IO_URING_HANDOFF_ABI, ret);
			return ret;
		}
	} else if (!on && registered) {
		io_uring_handoff_unregister(&handoff_ops);
	}
	registered = on;
	WRITE_ONCE(enabled, on);
	return 0;
}

static struct kobject *handoff_kobj;

/*
 * The settings: each a module parameter (modprobe, /sys/module/
 * io_uring_handoff/parameters/), module_param_cb() and MODULE_PARM_DESC()
 * beside what it sets, and a row of handoff_settings[] below, which makes
 * it a file under /sys/kernel/io_uring_handoff/ written through the
 * parameter's own ops. A bool's file shows 0 or 1, its parameter Y or N
 * (param_get_bool()).
 */

static int enabled_param_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	/* at load time, before handoff_init() registers the hooks */
	if (!handoff_kobj) {
		WRITE_ONCE(enabled, on);
		return 0;
	}
	return handoff_set_enabled(on);
}

static const struct kernel_param_ops enabled_param_ops = {
	.set	= enabled_param_set,
	.get	= param_get_bool,
};

module_param_cb(enabled, &enabled_param_ops, &enabled, 0644);
MODULE_PARM_DESC(enabled, "Issue blockable requests inline with a handoff (default: 1)");

/*
 * policy: "adaptive" (default) punts upfront what lately mostly slept, see
 * policy.c; "inline" issues inline whenever a worker is held, for A/B.
 */
static int policy_param_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "adaptive"))
		WRITE_ONCE(iouh_adaptive, true);
	else if (sysfs_streq(val, "inline"))
		WRITE_ONCE(iouh_adaptive, false);
	else
		return -EINVAL;
	return 0;
}

static int policy_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(iouh_adaptive) ? "adaptive" : "inline");
}

static const struct kernel_param_ops policy_param_ops = {
	.set	= policy_param_set,
	.get	= policy_param_get,
};

module_param_cb(policy, &policy_param_ops, NULL, 0644);
MODULE_PARM_DESC(policy, "adaptive (default): punt upfront what mostly slept lately; inline: whenever a worker is held");

/* the adaptive policy's budget of one io_uring_enter(), iouh_batch_spent() */
module_param_cb(batch_budget_us, &param_ops_uint, &iouh_batch_budget_us, 0644);
MODULE_PARM_DESC(batch_budget_us, "adaptive policy: punt the rest of a submission after this many us of inline issues (0: never; default "
		 __stringify(IOUH_BATCH_BUDGET_US) ")");

/* the adaptive policy's depth, iouh_depth_spent() */
module_param_cb(depth_max, &param_ops_uint, &iouh_depth_max, 0644);
MODULE_PARM_DESC(depth_max, "adaptive policy: punt a request while this many completions wait in its CQ, a submission's earlier requests included (0: never; default "
		 __stringify(IOUH_DEPTH_MAX) ")");

/*
 * async_inline: IOSQE_ASYNC asks for the io-wq punt, and by default keeps
 * it. 1: such requests are candidates like any other, a userspace-visible
 * policy change (the request may run inline in the submitter's syscall).
 */
module_param_cb(async_inline, &param_ops_bool, &iouh_async_inline, 0644);
MODULE_PARM_DESC(async_inline, "Issue IOSQE_ASYNC requests inline like the rest (default: 0, they keep their io-wq punt)");

/*
 * cgroup: a cgroup v2 path ("/system.slice/foo.service"), only its tasks and
 * its descendants' issue inline; empty (default) everyone. See policy.c.
 */
static int cgroup_param_set(const char *val, const struct kernel_param *kp)
{
	return iouh_scope_set(val);
}

static int cgroup_param_get(char *buf, const struct kernel_param *kp)
{
	return iouh_scope_show(buf);
}

static const struct kernel_param_ops cgroup_param_ops = {
	.set	= cgroup_param_set,
	.get	= cgroup_param_get,
};

module_param_cb(cgroup, &cgroup_param_ops, NULL, 0644);
MODULE_PARM_DESC(cgroup, "Only tasks in this cgroup v2 path or below issue inline (default: empty, every task)");

struct handoff_setting {
	struct kobj_attribute		attr;
	const struct kernel_param	*kp;
};

static ssize_t handoff_setting_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	struct handoff_setting *hs = container_of(attr, struct handoff_setting,
						  attr);

	if (hs->kp->ops->get == param_get_bool)
		return sysfs_emit(buf, "%d\n", READ_ONCE(*(bool *)hs->kp->arg));
	return hs->kp->ops->get(buf, hs->kp);
}

static ssize_t handoff_setting_store(struct kobject *kobj,
				     struct kobj_attribute *attr,
				     const char *buf, size_t count)
{
	struct handoff_setting *hs = container_of(attr, struct handoff_setting,
						  attr);

	return hs->kp->ops->set(buf, hs->kp) ?: count;
}

/* __param_<name>: the kernel_param module_param_cb(<name>, ...) made */
#define HANDOFF_SETTING(_name) {					\
	.attr = __ATTR(_name, 0644, handoff_setting_show,		\
		       handoff_setting_store),				\
	.kp = &__param_##_name,						\
}

static struct handoff_setting handoff_settings[] = {
	HANDOFF_SETTING(enabled),
	HANDOFF_SETTING(policy),
	HANDOFF_SETTING(batch_budget_us),
	HANDOFF_SETTING(depth_max),
	HANDOFF_SETTING(async_inline),
	HANDOFF_SETTING(cgroup),
};

/* the adaptive policy's estimates since the module loaded, see policy.c */
static ssize_t rates_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return iouh_rates_show(buf);
}

static struct kobj_attribute rates_attr = __ATTR_RO(rates);

/* fallback_task by reason since the module loaded, see identity.c */
static ssize_t refusals_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return iouh_refusals_show(buf);
}

static struct kobj_attribute refusals_attr = __ATTR_RO(refusals);

static u64 handoff_counter_sum(int idx)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(iouh_counters[idx], cpu);
	return sum;
}

struct counter_attr {
	struct kobj_attribute attr;
	int idx;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct counter_attr *ca = container_of(attr, struct counter_attr, attr);

	return sysfs_emit(buf, "%llu\n", handoff_counter_sum(ca->idx));
}

/*
 * Inline issues that never slept: derived, so the issue's end needs no module
 * code. Counts an issue still in flight as not having slept (yet).
 */
static ssize_t inline_done_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	u64 slept = handoff_counter_sum(IOUH_HANDOFFS) +
		    handoff_counter_sum(IOUH_BLOCKED_LOCK) +
		    handoff_counter_sum(IOUH_BLOCKED_TASK);

	return sysfs_emit(buf, "%llu\n",
			  handoff_counter_sum(IOUH_INLINE_ISSUED) - slept);
}

static struct kobj_attribute inline_done_attr = __ATTR_RO(inline_done);
static struct attribute *handoff_ro_attrs[] = {
	&inline_done_attr.attr, &rates_attr.attr, &refusals_attr.attr, NULL,
};

static struct attribute *handoff_setting_attrs[ARRAY_SIZE(handoff_settings) + 1];
static struct counter_attr counter_attrs[IOUH_NR_COUNTERS];
static struct attribute *handoff_counter_attrs[IOUH_NR_COUNTERS + 1];

static const struct attribute_group handoff_ro_group = {
	.attrs = handoff_ro_attrs,
};

static const struct attribute_group handoff_setting_group = {
	.attrs = handoff_setting_attrs,
};

static const struct attribute_group handoff_counter_group = {
	.attrs = handoff_counter_attrs,
};

static const struct attribute_group *handoff_groups[] = {
	&handoff_ro_group, &handoff_setting_group, &handoff_counter_group, NULL,
};

/* a file per setting row and per counter, named from their tables */
static void handoff_init_attrs(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(handoff_settings); i++)
		handoff_setting_attrs[i] = &handoff_settings[i].attr.attr;
	for (i = 0; i < IOUH_NR_COUNTERS; i++) {
		struct counter_attr *ca = &counter_attrs[i];

		sysfs_attr_init(&ca->attr.attr);
		ca->attr.attr.name = iouh_counter_names[i];
		ca->attr.attr.mode = 0444;
		ca->attr.show = counter_show;
		ca->idx = i;
		handoff_counter_attrs[i] = &ca->attr.attr;
	}
}

static int __init handoff_init(void)
{
	int ret;

	handoff_init_attrs();
	handoff_kobj = kobject_create_and_add("io_uring_handoff", kernel_kobj);
	if (!handoff_kobj) {
		iouh_scope_exit();
		return -ENOMEM;
	}
	ret = sysfs_create_groups(handoff_kobj, handoff_groups);
	if (!ret && READ_ONCE(enabled))
		ret = handoff_set_enabled(true);
	if (ret) {
		kobject_put(handoff_kobj);
		iouh_scope_exit();
	}
	return ret;
}

/* waits only for module code in flight, never for a request that sleeps */
static void __exit handoff_exit(void)
{
	handoff_set_enabled(false);
	kobject_put(handoff_kobj);
	iouh_scope_exit();
}

module_init(handoff_init);
module_exit(handoff_exit);
MODULE_DESCRIPTION("io_uring thread identity handoff for blocking inline issue");
/* rises with every release, see README; hook_abi: the hooks it was built for */
MODULE_VERSION("0.4");
MODULE_INFO(hook_abi, __stringify(IO_URING_HANDOFF_ABI));
MODULE_LICENSE("GPL");
