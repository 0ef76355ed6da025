// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the input parsers of schedule.c: built twice, as
 * fuzz_model (model_load(), then the call pattern it read is queried) and
 * fuzz_trace (sched_trace(), which also builds the schedule).  The parsers
 * read a named file, so each input is written to a memfd and handed over
 * as /proc/self/fd/N.  Any crash, sanitizer report, leak or timeout is a
 * failure; a parse error is an ordinary result.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "schedule.h"

static int input_fd = -1;
static char input_path[64];

static void put_input(const uint8_t *data, size_t size)
{
	if (input_fd < 0) {
		input_fd = memfd_create("fuzz-input", 0);
		if (input_fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
	}
	if (ftruncate(input_fd, 0) || pwrite(input_fd, data, size, 0) != (ssize_t)size) {
		perror("memfd write");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model m;

	put_input(data, size);
	model_defaults(&m);
#ifdef FUZZ_MODEL
	if (model_load(&m, input_path) == 0) {
		/* The pattern drives the whole schedule: it must be usable. */
		for (uint64_t t = 0; t < 100000000000ull; t += 7777777777ull)
			model_active_at(&m, t);
	}
#else
	struct schedule s;

	if (sched_trace(&s, input_path, &m, 200000000, 0) == 0)
		sched_free(&s);
#endif
	return 0;
}
