# SPDX-License-Identifier: GPL-2.0
#
# SBPN for DCCP: top-level build.
#
#   make            kernel inputs (once), patched DCCP modules, userspace, selftests
#   make check      all tests: host tests, then the selftests in a QEMU VM
#   make check-host the host tests of make check alone, no VM (about 2 min)
#   make check-vm SUITES="sbpn stress"  those in-guest suites (default all)
#                   in one VM boot of the target (vm-tests.sh names them)
#   make check-debug the in-guest tests on a KASAN/kmemleak/lockdep kernel
#   make stress     the long stress tier: 10^6 calls, 100 module unloads (VM)
#   make stress-debug the same on the debug kernel, then a kmemleak scan
#   make faults     allocation failures injected into DCCP's socket calls on
#                   the debug kernel, then a kmemleak scan; prints the table
#                   of failure points per operation
#   make fuzz       libFuzzer on the model and trace parsers (FUZZ_SECONDS each)
#   make demo       the main job: a short SBPN-vs-CCID3 experiment in the VM
#   make reproduce  the paper's experiments in full (ONLY=, JOBS=, DECIDE=1; 40 h,
#                   JOBS=8 5.5 h; DECIDE=1 stops each comparison once decided:
#                   JOBS=8 about 4 h)
#   make bench      enqueue+dequeue cost per packet of each queueing policy (VM)
#   make friendliness  CCID 3's TCP-friendliness: normalised throughput (VM)
#   make vm CMD=... run a command in the VM (e.g. CMD="scripts/modules.sh status")
#   make style      checkpatch.pl --strict on kernel/ and patches/
#   make series-selftests  write the series' selftests patch (the last one of
#                   patches/optional) from selftests/ after changing them
#   make series-each every prefix of the series (patches/fixes, core,
#                   optional) builds on each target with W=1 and is
#                   checkpatch clean; about 10 min per target
#   make venv       .venv with the analysis' pinned Python packages
#   make load       replace the running kernel's DCCP modules with ours
#   make unload     restore the stock DCCP modules
#   make clean      remove build outputs (the kernel-input cache stays)
#   make host-deps-check  every package of scripts/host-deps.sh exists in each
#                   Debian release it supports (downloads their package lists)
#
# KVER=6.12 targets Debian 13's kernel instead of Debian 12's 6.1,
# building into build/6.12/ instead of build/ (scripts/target.sh); the
# default is the host release's own (6.1 on Debian 12, 6.12 on Debian 13,
# whose archive has no 6.1: scripts/host-deps.sh --kvers).  KVER=7.3,
# Debian 13's newest kernel, which has no DCCP, builds 6.12's DCCP with
# patches/7.x in a Debian 13 root into build/7.3/ (make modules builds and
# links; not yet run in the VM, not part of make check:
# Documentation/dccp-on-7x.rst).  ABI=...
# selects another Debian ABI of the target (defaults in
# scripts/kernel-inputs.sh).

# The targets this host's archive has, the default first.
HOST_KVERS	:= $(shell scripts/host-deps.sh --kvers 2>/dev/null || echo 6.1 6.12)
KVER		?= $(firstword $(HOST_KVERS))
ifeq ($(filter $(KVER),6.1 6.12 7.3),)
$(error KVER=$(KVER): the targets are 6.1, 6.12 and 7.3)
endif
ROOT		:= $(CURDIR)
# The target's build directory; not to be overridden (make check builds the
# other target into its own).
override BUILD	:= $(ROOT)/build$(if $(filter-out 6.1,$(KVER)),/$(KVER))
CACHE		:= $(ROOT)/.cache/kernel
ENV		:= $(CACHE)/$(KVER).env
TREE		:= $(BUILD)/tree
include $(ROOT)/scripts/dccp-kbuild.mk
SBPN_VERSION	:= $(shell git -C $(ROOT) describe --always --dirty 2>/dev/null || echo unknown)

export KVER BUILD ABI

.PHONY: all inputs modules headers userspace selftests check check-host check-vm demo try socket-api example \
	reproduce bench \
	friendliness friendliness-v2-modules check-debug stress stress-debug faults fuzz style series-selftests series-each \
	venv vm load unload clean host-deps-check dkms-deb dkms-install-check dkms-vm dkms-check

all: modules headers userspace selftests

inputs:
	@scripts/kernel-inputs.sh

# $(call dccp_modules,DIR,KBUILD-ARGS[,KDIR[,PATCHES]]): assemble DIR/tree
# (from the series in PATCHES, default patches/) and build the DCCP modules
# from it into DIR/modules, against KDIR (default: Debian's headers,
# unpacked in the cache, which the target's env file names).  The kernel
# ABI is only known once the inputs exist, so kbuild runs in a recursive
# make that reads it from there; for 7.3 in the target's Debian 13 root
# (KROOT, scripts/in-root.sh), whose make then knows nothing of ours (-j1
# there); 7.3's modules are then checked for a carried function bound to
# the kernel's own (carry.py --check).
define dccp_modules
	@BUILD=$(1) $(if $(4),PATCHES=$(4)) scripts/build-tree.sh
	@. $(ENV) && mk='$(MAKE)' && \
	if [ -n "$${KROOT:-}" ]; then mk="scripts/in-root.sh $$KROOT make -j1"; fi && \
	$$mk --no-print-directory -C $(or $(3),$$KDIR) \
		$(call dccp_kbuild_args,$(1)/tree) SBPN_VERSION=$(SBPN_VERSION) $(2) modules
	@mkdir -p $(1)/modules
	@for m in $(DCCP_MODULES); do cp -p $(1)/tree/net/dccp/$$m.ko $(1)/modules/; done
	@. $(ENV) && [ -z "$${KROOT:-}" ] || scripts/carry.py --list patches/7.x/carry.list \
		--check $(foreach m,$(DCCP_MODULES),$(1)/modules/$(m).ko)
endef

modules: inputs
	$(call dccp_modules,$(BUILD))
	@echo "modules: $(foreach m,$(DCCP_MODULES),$(BUILD)/modules/$(m).ko) (version $(SBPN_VERSION))"

# Userspace sees the patched uapi header, never a second copy of it.
headers: modules
	@mkdir -p $(BUILD)/include/linux
	@for h in dccp.h inet_diag.h errqueue.h; do \
		cmp -s $(TREE)/include/uapi/linux/$$h $(BUILD)/include/linux/$$h || \
			cp $(TREE)/include/uapi/linux/$$h $(BUILD)/include/linux/$$h; \
	done

userspace: headers
	@$(MAKE) --no-print-directory -C userspace HDR=$(BUILD)/include

selftests: headers
	@$(MAKE) --no-print-directory -C selftests

# make check tests this target in full and the kernel code on the others in
# ALSO_KVERS too (the kselftest collections; see scripts/check.sh), which it
# builds first.  ALSO_KVERS= tests this target only.
ALSO_KVERS	?= $(filter-out $(KVER),$(HOST_KVERS))
check: all
	@for k in $(ALSO_KVERS); do \
		$(MAKE) --no-print-directory KVER=$$k ABI= modules headers selftests || exit 1; \
	done
	@ALSO_KVERS='$(ALSO_KVERS)' scripts/check.sh

# The contributor's loop.  check-host: every host test of make check, the
# same list (check.sh --host): that fetching each target's kernel inputs
# installs no kernel and leaves /boot alone, style and same-series on each
# target (so the other targets' trees too), docs, userspace, fuzzing, the
# harness' and the analysis' tests; no VM.  check-vm: the in-guest suites
# SUITES (dccp sbpn stress traffic keyframe vp8 testbed competing; default all)
# in one VM boot of this target, counted as make check counts them.
check-host: userspace
	@for k in $(ALSO_KVERS); do \
		$(MAKE) --no-print-directory KVER=$$k ABI= headers || exit 1; \
	done
	@ALSO_KVERS='$(ALSO_KVERS)' scripts/check.sh --host

SUITES		?=
check-vm: all
	@scripts/check.sh --vm $(SUITES)

# The main job: scripts/scenarios/demo.toml (its three variants, SIMPLE,
# SBPN2 and the best variant SBPN2+sp+pd+owd+fw, against two TCP Reno
# flows: 13 repetitions of 60 s, 39 runs) in one VM boot, then its tables
# and figures.  A second `make demo` resumes: it only runs what is missing
# (rm -rf build/demo to start afresh; runs of another length, an older
# demo's 16 s ones, are refused rather than resumed).
# The VM's time limit comes from the runs (sbpn-lab timeout: twice their
# estimated wall time and 10 minutes), here and for every campaign below;
# set apart with && so that its error (ONLY matching no run: exit 2) ends
# the recipe instead of leaving vm-run an empty --timeout.
# DEMO_JOBS runs at once: 8, as the 30-pair reference ran, five waves of
# eight runs of 60 s in about 6 minutes on our 2-core machines (each pair
# runs in the same waves, and eight at once matched one at a time run by
# run: Documentation/history.rst, Wall time).  demo.toml decides
# (its [decide] table): the report computes the verdicts on audio and
# whole video frames on time (Documentation/statistics.rst, The demo's
# decision) and opens with the findings demo.toml names, the best
# variant's and SBPN2's paired differences to SIMPLE with those verdicts,
# each beside the shipped 30-pair reference (DEMO_REFERENCE), then says
# when and why each comparison stopped, and draws the per-run figure of
# the first run of each.
# Then, in the same VM boot, the VP8 call (scripts/scenarios/demo-vp8.toml:
# a real encoder whose rate follows CCID 3, SIMPLE and SBPN2, one pair of
# 45 s runs, one at a time as every VP8 run, about 2 minutes), reported
# with frames shown and SSIM on its finding line beside its 30-pair
# reference (DEMO_VP8_REFERENCE) and a figure per run: the rate CCID 3
# allowed, the encoder's target and the screen's SSIM over time.  The VM
# exits with the first campaign's failure, else the second's.
DEMO_JOBS	?= 8
DEMO_REFERENCE	:= Documentation/results/rfc-rtt80-q5-summary.csv
DEMO_RUN	= --jobs $(DEMO_JOBS) scripts/scenarios/demo.toml
DEMO_VP8_REFERENCE := Documentation/results/vp8-tcp-rtt80-q5-summary.csv
DEMO_VP8_RUN	= --jobs 1 scripts/scenarios/demo-vp8.toml
demo: all venv
	@t=$$(scripts/sbpn-lab timeout $(DEMO_RUN)) && v=$$(scripts/sbpn-lab timeout $(DEMO_VP8_RUN)) && \
		scripts/vm-run --timeout $$((t + v)) --out $(BUILD)/demo -- bash -c \
		'scripts/sbpn-lab run $(DEMO_RUN); a=$$?; scripts/sbpn-lab run $(DEMO_VP8_RUN) || exit; exit $$a'
	@.venv/bin/python scripts/sbpn-lab report --runs 'rep=01$$' \
		--reference $(DEMO_REFERENCE) $(BUILD)/demo/demo
	@.venv/bin/python scripts/sbpn-lab report \
		--reference $(DEMO_VP8_REFERENCE) $(BUILD)/demo/demo-vp8

# The shipped example campaigns (Documentation/results/example.tar.xz:
# scripts/scenarios/example.toml made one run at a time and four at a
# time) reported and compared, with nothing built and no VM: what the
# report and compare print and draw, on a fresh clone.
example: venv
	@rm -rf $(ROOT)/build/example && mkdir -p $(ROOT)/build/example
	@tar -xJf Documentation/results/example.tar.xz -C $(ROOT)/build/example
	@.venv/bin/python scripts/sbpn-lab report $(ROOT)/build/example/jobs1/example
	@.venv/bin/python scripts/sbpn-lab compare $(ROOT)/build/example/jobs1/example \
		$(ROOT)/build/example/jobs4/example --figures $(ROOT)/build/example/compare

# Documentation/socket-api.rst from the series' dccp.rst, as the patched
# tree has it (make check-host fails while the two differ).
socket-api: modules
	@scripts/socket-api.py --write --tree $(TREE)

# A scenario of one's own, from any directory: staged into results/, run
# in the VM and reported (sbpn-lab try; Documentation/testbed.rst, Running
# it), e.g. make try SCENARIO=~/my-call.toml.
try: all venv
	@test -n '$(SCENARIO)' || { echo "make try: SCENARIO=FILE, a scenario (TOML)" >&2; exit 2; }
	@.venv/bin/python scripts/sbpn-lab try '$(SCENARIO)'

# The paper's experiments, scripts/scenarios/paper-*.toml, 30 repetitions
# each: 2280 runs of 60 s, about 40 h on two TCG cores, 11 h with JOBS=4 and
# about 7 h with JOBS=6 (see Documentation/results.rst), in one VM boot,
# then a report per campaign in
# RESULTS/<campaign>/report.  ONLY=REGEX keeps the runs whose id matches
# (ONLY='rep=0[1-3]$': 3 repetitions); JOBS=N runs N at once (faster, but
# compare only campaigns run with the same JOBS), JOBS=auto as many as short
# probe runs show to leave the sender and the path undisturbed (each
# campaign's jobs-auto.json).  A second call resumes.  DECIDE=1 runs them
# as the paper's [decide] tables say (sbpn-lab run --decide: rounds of
# 15, then 5 repetitions, each comparison stopping once audio and video
# have their verdicts; Documentation/statistics.rst, The paper's
# decision), all seven campaigns at once sharing the JOBS slots, with the
# looks between rounds made on the host by `sbpn-lab serve-looks`, which
# runs beside the VM.
RESULTS		?= $(ROOT)/results
JOBS		?= 1
PAPER		:= $(sort $(wildcard scripts/scenarios/paper-*.toml))
REPRODUCE_RUN	= --jobs $(JOBS) $(if $(ONLY),--only '$(ONLY)') $(PAPER)
REPRODUCE_HOW	= $(if $(DECIDE),--decide --host-looks)

reproduce: all venv
	@t=$$(scripts/sbpn-lab timeout $(REPRODUCE_RUN)) && mkdir -p $(RESULTS) && \
		{ $(if $(DECIDE),.venv/bin/python scripts/sbpn-lab serve-looks $(RESULTS) & srv=$$!;) \
		  scripts/vm-run --timeout $$t --out $(RESULTS) -- \
			scripts/sbpn-lab run $(REPRODUCE_HOW) $(REPRODUCE_RUN); rc=$$?; \
		  $(if $(DECIDE),kill $$srv;) [ $$rc -eq 0 ]; }
	@for s in $(PAPER); do \
		.venv/bin/python scripts/sbpn-lab report \
			$(RESULTS)/$$(basename $$s .toml) || exit 1; \
	done

# The queueing-policy benchmark: the modules once more, with
# kernel/qpolicy_bench.c in dccp.ko, under build/bench/ (so build/modules/
# never contains it), then one VM boot with those.  BENCH_ARGS: see
# scripts/bench-qpolicy.py --help.
bench: inputs
	$(call dccp_modules,$(BUILD)/bench,SBPN_BENCH=y)
	@BUILD=$(BUILD)/bench scripts/vm-run --timeout 3600 \
		--out $(BUILD)/bench/out -- scripts/bench-qpolicy.py $(BENCH_ARGS)

# The TCP-friendliness benchmark (Documentation/testbed.rst): a greedy DCCP
# sender against 1, 2 or 4 Reno flows, scripts/scenarios/friendliness-*.toml,
# the cells picked by FR_CELLS, 10 runs of 40 s each: SIMPLE and SBPN2 with
# size pacing off (unmodified CCID 3) and on ("dccp: ccid3: optionally space
# packets by their own size", the optional series) over our modules, in
# one VM boot; then the runs with size pacing on (FR_V2_ONLY: SBPN2 only, by
# default) over the old size pacing patch's modules in a second, into campaigns named
# <scenario>-v2; then `sbpn-lab friendliness` prints the table and writes
# FR_RESULTS/friendliness.csv.  The old modules are built under
# build/friendliness-v2 from the series as it was at FR_V2_COMMIT: f5e84ea,
# the last commit before the size pacing patch was rewritten, whose size
# pacing patch is 28ab640's and whose other patches were today's (the
# receiver's open loss interval and the revision of "dccp: stop the TX
# CCID's timers when the connection is over" came after 28ab640), so that
# the two module sets differed in that patch alone.  The fixes of CCID 3's
# arithmetic at its edges ("dccp: ccid3: do not let the send interval round
# down to 0", "dccp: ccid3: give the first loss interval a length without a
# receive rate") came later; a greedy sender of equal packets, whose first
# loss comes after feedback has measured its rate, reaches neither.
# FR_ONLY=REGEX keeps the runs whose id
# matches as well (FR_ONLY='rep=0[1-3]$': three repetitions); a second
# call resumes.
FR_JOBS		?= 8
FR_RESULTS	?= $(BUILD)/friendliness
FR_ONLY		?=
FR_SCENARIOS	:= $(sort $(wildcard scripts/scenarios/friendliness-*.toml))
FR_CELLS	:= tcp_flows=2,|rtt_ms=80,
FR_V2		:= $(BUILD)/friendliness-v2
FR_V2_COMMIT	?= f5e84ea
FR_V2_ONLY	?= policy=sbpn2,size_pacing=True
# --only for sbpn-lab run: the cells, FR_ONLY and (for v2) $(1), all of them.
fr_only		= ^(?=.*(?:$(FR_CELLS)))(?=.*(?:$(FR_ONLY)))$(if $(1),(?=.*(?:$(1))))
# In the guest: one sbpn-lab run per scenario, each into <scenario>-v2;
# $$1 is the --only regex, the rest the scenario files.
FR_V2_RUN	= only=$$1; shift; rc=0; for s; do scripts/sbpn-lab run --jobs $(FR_JOBS) \
		--only "$$only" --campaign "$$(basename "$$s" .toml)-v2" "$$s" || rc=1; \
		done; exit $$rc
FR_CAMPAIGNS	= $(foreach s,$(FR_SCENARIOS),$(FR_RESULTS)/$(basename $(notdir $(s))) \
		$(FR_RESULTS)/$(basename $(notdir $(s)))-v2)

friendliness-v2-modules: inputs
	@rm -rf $(FR_V2)/patches && mkdir -p $(FR_V2)
	@git -C $(ROOT) archive $(FR_V2_COMMIT) patches | tar -x -C $(FR_V2)
	$(call dccp_modules,$(FR_V2),SBPN_VERSION=$(SBPN_VERSION)+v2-$(FR_V2_COMMIT),,$(FR_V2)/patches)
	@echo "friendliness: the old size pacing patch's modules in $(FR_V2)/modules (version" \
		"$(SBPN_VERSION)+v2-$(FR_V2_COMMIT))"

friendliness: all venv friendliness-v2-modules
	@t=$$(scripts/sbpn-lab timeout --jobs $(FR_JOBS) --only '$(call fr_only)' \
		$(FR_SCENARIOS)) && scripts/vm-run --timeout $$t --out $(FR_RESULTS) -- \
		scripts/sbpn-lab run --jobs $(FR_JOBS) --only '$(call fr_only)' $(FR_SCENARIOS)
	@t=$$(scripts/sbpn-lab timeout --jobs $(FR_JOBS) --only '$(call fr_only,$(FR_V2_ONLY))' \
		$(FR_SCENARIOS)) && BUILD=$(FR_V2) scripts/vm-run --timeout $$t --out $(FR_RESULTS) -- \
		sh -c '$(FR_V2_RUN)' sh '$(call fr_only,$(FR_V2_ONLY))' $(FR_SCENARIOS)
	@.venv/bin/python scripts/sbpn-lab friendliness --out $(FR_RESULTS) $(FR_CAMPAIGNS)

# The in-guest suite on the debug kernel (KASAN, kmemleak, lockdep; see
# Documentation/robustness.rst), with our modules built against it.
DEBUG_KDIR	:= $(ROOT)/.cache/debug/$$DEBVER/obj

check-debug: all
	@scripts/debug-kernel.sh
	$(call dccp_modules,$(BUILD)/debug,,$(DEBUG_KDIR))
	@. $(ENV) && BUILD=$(BUILD)/debug \
		VM_IMAGE=$(ROOT)/.cache/debug/$$DEBVER/image \
		scripts/vm-run --timeout 5400 --out $(BUILD)/debug/out -- scripts/debug-check.sh

# The long tier (Documentation/robustness.rst), not part of make check: the
# DCCP stress test in one VM boot, rounds until it has made CALLS (default
# 10^6) sendmsg/setsockopt calls and CYCLES (default 100) module unload
# cycles; it fails if DURATION s (default 7200) end first.  SEED (default 1).
# stress runs it on Debian's kernel, stress-debug on the debug kernel, with a
# kmemleak scan after it and fault injection: STRESS_FAULTS (default 20) of
# every 1000 calls fail one of their first allocations (dccp_stress -f).
# make check runs a 30 s version (a kselftest collection).
DURATION	?= 7200
SEED		?= 1
CALLS		?= 1000000
CYCLES		?= 100
STRESS_FAULTS	?= 20
STRESS_ARGS	= -s $(SEED) -t $(DURATION) -c $(CALLS) -u $(CYCLES)

stress: all
	@scripts/vm-run --timeout $$(($(DURATION) + 600)) --out $(BUILD)/stress -- \
		$(BUILD)/selftests/stress/dccp_stress $(STRESS_ARGS)

stress-debug: all
	@scripts/debug-kernel.sh
	$(call dccp_modules,$(BUILD)/debug,,$(DEBUG_KDIR))
	@. $(ENV) && BUILD=$(BUILD)/debug \
		VM_IMAGE=$(ROOT)/.cache/debug/$$DEBVER/image \
		scripts/vm-run --timeout $$(($(DURATION) + 900)) --out $(BUILD)/debug/stress -- \
		scripts/debug-check.sh $(STRESS_ARGS) -f $(STRESS_FAULTS)

# Fault injection on the debug kernel (Documentation/robustness.rst, Fault
# injection): the kernel and our modules as for check-debug, booted with the
# slab caches of our modules marked for failslab (slub_debug=A and the list
# FI_CACHES of selftests/faults/dccp_faults.c, the one place it is kept);
# selftests/faults/dccp_faults in the VM, then the kmemleak scan
# (scripts/debug-check.sh --faults), failing on any KASAN, lockdep or WARN
# report (vm-run) or kmemleak object.  Then, pass or fail, the table of
# failure points per operation (scripts/faults-table.sh) for robustness.rst.
# FAULTS_ONLY=TEXT runs only the operations whose name contains TEXT
# ("traffic": only phase 2; an empty table is then no failure);
# FAULTS_SECONDS (20), FAULTS_PERCENT (3) and
# FAULTS_SEED (1) set phase 2; FAULTS_TIMEOUT (7200) limits the VM.
FAULTS_CACHES	= $(shell sed -n 's/^.define FI_CACHES[[:space:]]*"\(.*\)"$$/\1/p' \
		  selftests/faults/dccp_faults.c)
FAULTS_OUT	= $(BUILD)/debug/faults
FAULTS_TIMEOUT	?= 7200
FAULTS_ENV	= DCCP_FAULTS_ONLY='$(FAULTS_ONLY)' DCCP_FAULTS_SECONDS='$(FAULTS_SECONDS)' \
		  DCCP_FAULTS_PERCENT='$(FAULTS_PERCENT)' DCCP_FAULTS_SEED='$(FAULTS_SEED)'

faults: all
	@scripts/debug-kernel.sh
	$(call dccp_modules,$(BUILD)/debug,,$(DEBUG_KDIR))
	@[ -n '$(FAULTS_CACHES)' ] || { echo "faults: no FI_CACHES in dccp_faults.c" >&2; exit 1; }
	@. $(ENV) && rc=0 && BUILD=$(BUILD)/debug \
		VM_IMAGE=$(ROOT)/.cache/debug/$$DEBVER/image \
		VM_KERNEL_ARGS='slub_debug=A,$(FAULTS_CACHES)' \
		scripts/vm-run --timeout $(FAULTS_TIMEOUT) --out $(FAULTS_OUT) -- \
		env $(FAULTS_ENV) scripts/debug-check.sh --faults || rc=$$?; \
		echo "faults: failure points per operation ($(FAULTS_OUT)/faults.log):"; \
		scripts/faults-table.sh $(FAULTS_OUT)/faults.log || \
			[ -n '$(FAULTS_ONLY)' ] || rc=1; \
		exit $$rc

# libFuzzer on the model and trace parsers, FUZZ_SECONDS (default 30) each.
fuzz: userspace
	@$(MAKE) --no-print-directory -C userspace/fuzz HDR=$(BUILD)/include run

vm: all
	@scripts/vm-run -- sh -c '$(CMD)'

# The analysis (scripts/sbpnlab stats, report, plots) runs with .venv/bin/python.
venv:
	@scripts/venv.sh

style: inputs
	@scripts/style.sh

series-selftests: inputs
	@scripts/series-selftests.sh

# The targets of this host's archive (not 7.3, which builds the series only
# whole, with patches/7.x), each with its inputs.
series-each:
	@for k in $(filter-out 7.3,$(HOST_KVERS)); do \
		$(MAKE) --no-print-directory KVER=$$k ABI= inputs || exit 1; \
	done
	@KVERS="$(filter-out 7.3,$(HOST_KVERS))" scripts/series-build-each.sh

load: modules
	@scripts/modules.sh load $(BUILD)/modules

unload:
	@scripts/modules.sh unload

# The DKMS package (Documentation/dkms.rst): build/dkms/sbpn-dccp-dkms_*.deb
# with a patched DCCP tree for each target in DKMS_KVERS (this host's
# archive's targets and 7.3), each target's inputs fetched first (the
# others' at their default ABI).
DKMS_KVERS	?= $(HOST_KVERS) 7.3
dkms-deb:
	@for k in $(DKMS_KVERS); do \
		if [ "$$k" = '$(KVER)' ]; then a='$(ABI)'; else a=; fi; \
		$(MAKE) --no-print-directory KVER=$$k ABI=$$a inputs || exit 1; \
	done
	@SBPN_VERSION=$(SBPN_VERSION) scripts/dkms-deb.sh $(DKMS_KVERS)

# The package's test on this target: dkms-install-check installs it in a
# throwaway Debian root with the target's kernel, has dkms build and
# install ours (as a kernel upgrade, then as the package's installation),
# removes it, and checks each time which modules modprobe finds; no VM
# (scripts/dkms-check.sh).  dkms-vm boots the target's VM with the modules
# dkms built there and checks them in the guest (scripts/dkms-vm-check.sh,
# with one SBPN selftest).  dkms-check runs both, the VM last.
DKMS_CHECK	:= $(BUILD)/dkms-check
ifneq ($(filter dkms-install-check dkms-check,$(MAKECMDGOALS)),)
ifeq ($(filter $(KVER),$(DKMS_KVERS)),)
$(error KVER=$(KVER) is not in DKMS_KVERS=$(DKMS_KVERS): the package would have no tree for it)
endif
endif
dkms-install-check: dkms-deb
	@scripts/dkms-check.sh $(ROOT)/build/dkms/sbpn-dccp-dkms_*_all.deb

dkms-vm: selftests
	@[ -f $(DKMS_CHECK)/expect ] || { echo "dkms-vm: no modules built by dkms for $(KVER): run make dkms-install-check" >&2; exit 1; }
	@BUILD=$(DKMS_CHECK) scripts/vm-run --timeout 600 --out $(DKMS_CHECK)/vm-out -- \
		scripts/dkms-vm-check.sh $(DKMS_CHECK)/expect $(BUILD)/selftests/sbpn/sbpn_doc_example

dkms-check: dkms-install-check
	@$(MAKE) --no-print-directory dkms-vm

# scripts/host-deps.sh's package names, looked up in Debian 12's and 13's
# archives (their package lists go to .cache/apt/; no root needed).
host-deps-check:
	@scripts/host-deps-check.sh

clean:
	rm -rf $(BUILD)
	@$(MAKE) --no-print-directory -C selftests clean 2>/dev/null || true
	@if [ -f userspace/Makefile ]; then $(MAKE) --no-print-directory -C userspace clean; fi
