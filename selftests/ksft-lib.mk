# SPDX-License-Identifier: GPL-2.0
#
# Included by each collection after its variables, in place of kselftest's
# lib.mk: that lib.mk, with a per-program time limit of our own.  kselftest's
# runner.sh (6.1) takes the limit only from a "settings" file beside its own
# sources, else 45 s, too little for some of our programs under TCG; set it
# after runner.sh is sourced.  KSFT_TIMEOUT is in seconds.  lib/watchdog.sh
# replaces its timeout with one that kills and dumps blocked tasks.

include $(KSFT_DIR)/lib.mk

KSFT_TIMEOUT	?= 300

define RUN_TESTS
	BASE_DIR="$(selfdir)";			\
	. $(selfdir)/kselftest/runner.sh;	\
	. $(SELFTESTS)/lib/watchdog.sh;		\
	kselftest_default_timeout=$(KSFT_TIMEOUT);	\
	if [ "X$(summary)" != "X" ]; then	\
		per_test_logging=1;		\
	fi;					\
	run_many $(1)
endef

# The programs scripts/check.sh expects a result from.
list-progs:
	@echo $(notdir $(TEST_GEN_PROGS) $(TEST_PROGS))

.PHONY: list-progs
