# SPDX-License-Identifier: GPL-2.0
#
# Shared by the selftest collections: find kselftest's lib.mk and harness in
# the kernel source extracted by scripts/kernel-inputs.sh (never copied into
# the project), and compile against the project's patched uapi header.

SELFTESTS	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ROOT		:= $(abspath $(SELFTESTS)/..)
# The target kernel and its build directory, as scripts/target.sh has them.
KVER		?= 6.1
ifeq ($(strip $(BUILD)),)
BUILD		:= $(ROOT)/build$(if $(filter-out 6.1,$(KVER)),/$(KVER))
endif
ENV		:= $(ROOT)/.cache/kernel/$(KVER).env
ifeq ($(wildcard $(ENV)),)
$(error no kernel inputs for KVER=$(KVER) in $(ROOT)/.cache: run make KVER=$(KVER) at the top level first)
endif
# The target's ABI, read from its env file under a name of our own: an ABI
# given on make's command line (for another target, or empty) must not win.
KSFT_ABI	:= $(shell . '$(ENV)' && echo "$$ABI")
KSFT_DIR	:= $(ROOT)/.cache/kernel/$(KSFT_ABI)/source/tools/testing/selftests
CFLAGS		+= -Wall -Wextra -Werror -O2 -I$(BUILD)/include \
		   -isystem $(KSFT_DIR) -I$(SELFTESTS)/lib
LOCAL_HDRS	+= $(SELFTESTS)/lib/dccp_test.h
# Binaries go to the target's build directory, never next to the sources.
# kselftest's lib.mk only picks a default OUTPUT when make is not recursive.
OUTPUT		?= $(BUILD)/selftests/$(notdir $(CURDIR))
$(shell mkdir -p $(OUTPUT))
