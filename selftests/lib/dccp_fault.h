/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the tests that fail allocations on purpose
 * (faults/dccp_faults, stress/dccp_stress -f): failslab and
 * fail_page_alloc set quiet at probability 0, so that only a thread's own
 * fail-nth injects, and the kernel's defaults back afterwards.  See
 * Documentation/fault-injection/fault-injection.rst of the kernel, and
 * Documentation/robustness.rst (Fault injection) of this project.
 */
#ifndef DCCP_FAULT_H
#define DCCP_FAULT_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define DCCP_FAULT_DEBUGFS	"/sys/kernel/debug"
#define DCCP_FAULT_NTH		"/proc/thread-self/fail-nth"

static inline int dccp_fault_write(const char *attr, const char *val)
{
	char path[128];
	ssize_t len = strlen(val), w;
	int fd;

	snprintf(path, sizeof(path), DCCP_FAULT_DEBUGFS "/%s", attr);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	w = write(fd, val, len);
	close(fd);
	return w == len ? 0 : -EIO;
}

/* Why this kernel cannot inject faults, or NULL if it can. */
static inline const char *dccp_fault_missing(void)
{
	struct stat st;

	if (access(DCCP_FAULT_NTH, W_OK))
		return "no " DCCP_FAULT_NTH " (CONFIG_FAULT_INJECTION; the debug kernel has it)";
	if (stat(DCCP_FAULT_DEBUGFS "/failslab", &st) ||
	    stat(DCCP_FAULT_DEBUGFS "/fail_page_alloc", &st))
		return "no failslab or fail_page_alloc in debugfs (CONFIG_FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS)";
	return NULL;
}

/*
 * Both capabilities quiet and at probability 0: only fail-nth injects.
 * @dccp_only: failslab only in the caches marked with slub_debug=A (ours,
 * `make faults`), and no page allocation; else every slab allocation and
 * page allocation of the thread.  Returns 0, or -errno and the knob in
 * @failed.
 */
static inline int dccp_fault_quiet(int dccp_only, const char **failed)
{
	static const char * const knobs[][3] = {
		/* knob, value for every allocation, for ours only */
		{ "failslab/probability", "0", "0" },
		{ "failslab/verbose", "0", "0" },
		{ "failslab/ignore-gfp-wait", "N", "N" },
		{ "failslab/cache-filter", "N", "Y" },
		{ "fail_page_alloc/probability", "0", "0" },
		{ "fail_page_alloc/verbose", "0", "0" },
		{ "fail_page_alloc/ignore-gfp-wait", "N", "N" },
		/* user pages (highmem-capable) stay out: a page fault that
		 * fails would kill the test, not exercise DCCP
		 */
		{ "fail_page_alloc/ignore-gfp-highmem", "Y", "Y" },
		/* no page allocation has order 11 or more: none is counted */
		{ "fail_page_alloc/min-order", "0", "11" },
	};
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		rc = dccp_fault_write(knobs[i][0], knobs[i][dccp_only ? 2 : 1]);
		if (rc) {
			*failed = knobs[i][0];
			return rc;
		}
	}
	return 0;
}

/* The kernel's defaults back: nothing injected. */
static inline void dccp_fault_defaults(void)
{
	dccp_fault_write("failslab/probability", "0");
	dccp_fault_write("failslab/cache-filter", "N");
	dccp_fault_write("failslab/ignore-gfp-wait", "Y");
	dccp_fault_write("failslab/times", "1");
	dccp_fault_write("failslab/verbose", "2");
	dccp_fault_write("fail_page_alloc/probability", "0");
	dccp_fault_write("fail_page_alloc/ignore-gfp-wait", "Y");
	dccp_fault_write("fail_page_alloc/min-order", "1");
	dccp_fault_write("fail_page_alloc/times", "1");
	dccp_fault_write("fail_page_alloc/verbose", "2");
}

/*
 * The calling thread's fail-nth, opened once per thread: opening it, or
 * anything else that allocates, between arming and reading it back would
 * be counted.
 */
static inline int dccp_fault_nth_open(void)
{
	return open(DCCP_FAULT_NTH, O_RDWR | O_CLOEXEC);
}

/* Fail the thread's @n-th allocation from now on (0: none). */
static inline int dccp_fault_nth_set(int fd, unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	return pwrite(fd, b, len, 0) == len ? 0 : -1;
}

/* What is left of the count: 0 if the fault was injected, -1 on error. */
static inline long dccp_fault_nth_left(int fd)
{
	char b[16] = { 0 };

	if (pread(fd, b, sizeof(b) - 1, 0) <= 0)
		return -1;
	return strtol(b, NULL, 10);
}

#endif /* DCCP_FAULT_H */
