// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: proves that the VM runner fails a run when the guest
 * kernel warns.  Loading it triggers one WARN(); with panic_on_warn=1 (as
 * scripts/vm-run boots the guest) the kernel panics and the run must end
 * without a verdict.  Never load it anywhere else.
 */
#include <linux/module.h>

static int __init vmrun_warn_init(void)
{
	WARN(1, "vmrun_warn: deliberate warning for the VM runner's self-test\n");
	return 0;
}

static void __exit vmrun_warn_exit(void)
{
}

module_init(vmrun_warn_init);
module_exit(vmrun_warn_exit);
MODULE_DESCRIPTION("Deliberate WARN for testing scripts/vm-run");
MODULE_LICENSE("GPL");
