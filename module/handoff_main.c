// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring thread identity handoff: module init/exit, hook registration,
 * the sysfs toggle and counters under /sys/kernel/io_uring_handoff/.
 */
#include "handoff.h"

#define CREATE_TRACE_POINTS
#include "handoff_trace.h"

#include <linux/module.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

static bool enabled = true;
module_param(enabled, bool, 0644);
MODULE_PARM_DESC(enabled, "Issue blockable requests inline with a handoff (default: 1)");

static struct kobject *handoff_kobj;
atomic64_t iouh_counters[IOUH_NR_COUNTERS];

const char * const iouh_counter_names[IOUH_NR_COUNTERS] = {
	[IOUH_HANDOFFS]		= "handoffs",
	[IOUH_INLINE_DONE]	= "inline_done",
	[IOUH_FB_RING]		= "fallback_ring",
	[IOUH_FB_POLL]		= "fallback_poll",
	[IOUH_FB_NOWAIT_FILE]	= "fallback_nowait_file",
	[IOUH_FB_TASK]		= "fallback_task",
	[IOUH_FB_SQE]		= "fallback_sqe",
	[IOUH_FB_SPARE]		= "fallback_spare",
	[IOUH_FB_SIGNAL]	= "fallback_signal",
	[IOUH_FB_LOCK]		= "fallback_lock",
	[IOUH_FB_PREPARE]	= "fallback_prepare",
	[IOUH_FB_WORKER]	= "fallback_worker",
};

bool iouh_enabled(void)
{
	return READ_ONCE(enabled);
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(enabled));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool val;
	int ret = kstrtobool(buf, &val);

	if (ret)
		return ret;
	WRITE_ONCE(enabled, val);
	return count;
}

static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

struct counter_attr {
	struct kobj_attribute attr;
	int idx;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct counter_attr *ca = container_of(attr, struct counter_attr, attr);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&iouh_counters[ca->idx]));
}

static struct counter_attr counter_attrs[IOUH_NR_COUNTERS];
static struct attribute *handoff_attrs[IOUH_NR_COUNTERS + 2];

static const struct attribute_group handoff_group = {
	.attrs = handoff_attrs,
};

/* one read-only file per counter, named from the table above */
static void handoff_init_attrs(void)
{
	int i;

	handoff_attrs[0] = &enabled_attr.attr;
	for (i = 0; i < IOUH_NR_COUNTERS; i++) {
		struct counter_attr *ca = &counter_attrs[i];

		sysfs_attr_init(&ca->attr.attr);
		ca->attr.attr.name = iouh_counter_names[i];
		ca->attr.attr.mode = 0444;
		ca->attr.show = counter_show;
		ca->idx = i;
		handoff_attrs[i + 1] = &ca->attr.attr;
	}
}

static const struct io_uring_handoff_ops handoff_ops = {
	.abi		= IO_URING_HANDOFF_ABI,
	.owner		= THIS_MODULE,
	.may_inline	= iouh_may_inline,
	.issue_begin	= iouh_issue_begin,
	.issue_end	= iouh_issue_end,
	.sleeping	= iouh_sleeping,
};

static int __init handoff_init(void)
{
	int ret;

	handoff_init_attrs();
	handoff_kobj = kobject_create_and_add("io_uring_handoff", kernel_kobj);
	if (!handoff_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(handoff_kobj, &handoff_group);
	if (ret)
		goto out_put;
	ret = io_uring_handoff_register(&handoff_ops);
	if (ret) {
		pr_err("io_uring_handoff: the kernel refused hook ABI %d: %d\n",
		       IO_URING_HANDOFF_ABI, ret);
		goto out_put;
	}
	return 0;
out_put:
	kobject_put(handoff_kobj);
	return ret;
}

static void __exit handoff_exit(void)
{
	io_uring_handoff_unregister(&handoff_ops);
	kobject_put(handoff_kobj);
}

module_init(handoff_init);
module_exit(handoff_exit);
MODULE_DESCRIPTION("io_uring thread identity handoff for blocking inline issue");
MODULE_VERSION("0.1");
MODULE_LICENSE("GPL");
