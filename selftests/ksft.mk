# SPDX-License-Identifier: GPL-2.0
#
# Shared by the selftest collections: find kselftest's lib.mk and harness in
# the kernel source extracted by scripts/kernel-inputs.sh (never copied into
# the project), and compile against the project's patched uapi header.

SELFTESTS	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ROOT		:= $(abspath $(SELFTESTS)/..)
ENV		:= $(ROOT)/.cache/kernel/current.env
ifeq ($(wildcard $(ENV)),)
$(error no kernel inputs in $(ROOT)/.cache: run make at the top level first)
endif
include $(ENV)
KSFT_DIR	:= $(ROOT)/.cache/kernel/$(ABI)/source/tools/testing/selftests
CFLAGS		+= -Wall -Wextra -Werror -O2 -I$(ROOT)/build/include \
		   -isystem $(KSFT_DIR) -I$(SELFTESTS)/lib
LOCAL_HDRS	+= $(SELFTESTS)/lib/dccp_test.h
# Binaries go to build/, never next to the sources.  kselftest's lib.mk only
# picks a default OUTPUT when make is not recursive.
OUTPUT		?= $(ROOT)/build/selftests/$(notdir $(CURDIR))
$(shell mkdir -p $(OUTPUT))
