// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring thread identity handoff, skeleton: sysfs toggle and counters.
 */
#include <linux/module.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

static struct kobject *handoff_kobj;

static int __init handoff_init(void)
{
	handoff_kobj = kobject_create_and_add("io_uring_handoff", kernel_kobj);
	return handoff_kobj ? 0 : -ENOMEM;
}

static void __exit handoff_exit(void)
{
	kobject_put(handoff_kobj);
}

module_init(handoff_init);
module_exit(handoff_exit);
MODULE_DESCRIPTION("io_uring thread identity handoff");
MODULE_LICENSE("GPL");
