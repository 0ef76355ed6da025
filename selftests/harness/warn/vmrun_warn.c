// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: proves that the VM runner fails a run when the guest
 * kernel warns.  Loading it triggers one WARN(); with panic_on_warn=1 (as
 * scripts/vm-run boots the guest) the kernel panics and the run must end
 * without a verdict.  With bug=1 it prints what DCCP_BUG() prints instead,
 * a "BUG:" line and a stack dump, which panics nothing: the run then ends
 * with the command's own status unless the runner reads the console.
 * Never load it anywhere else.
 */
#include <linux/module.h>
#include <linux/printk.h>

static bool bug;
module_param(bug, bool, 0444);
MODULE_PARM_DESC(bug, "Print a DCCP_BUG()-style report instead of a WARN");

static int __init vmrun_warn_init(void)
{
	if (bug) {
		pr_crit("BUG: vmrun_warn: deliberate report for the VM runner's self-test\n");
		dump_stack();
		return 0;
	}
	WARN(1, "vmrun_warn: deliberate warning for the VM runner's self-test\n");
	return 0;
}

static void __exit vmrun_warn_exit(void)
{
}

module_init(vmrun_warn_init);
module_exit(vmrun_warn_exit);
MODULE_DESCRIPTION("Deliberate WARN or BUG report for testing scripts/vm-run");
MODULE_LICENSE("GPL");
