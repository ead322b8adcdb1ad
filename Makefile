# io_uring thread identity handoff: build, test and benchmark entry points.
# Everything is set up from Debian packages on first use; the kernel build is
# cached outside the repo (CACHE_DIR, default /var/cache/iouh).

CACHE_DIR ?= /var/cache/iouh
export CACHE_DIR
BUILD := $(CURDIR)/build
KDIR_FILE := $(BUILD)/kdir
KDIR = $(shell cat $(KDIR_FILE))
KDIR_DEBUG = $(shell cat $(BUILD)/kdir-debug)
KDIR_ARM64 = $(shell cat $(BUILD)/kdir-arm64)
# the arm64 lane's cross-build
ARM64_MAKE := ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
GUEST_TIMEOUT ?= 3000
# the debug lane's stress run, and the main lane's: short in make test (the
# cold run's budget), the long form is make soak
STRESS_SECS ?= 60
STRESS_SECS_MAIN ?= 30
# the main lane's stress differential mode (iouh-stress --replay): batches
# per ring, in each of the two runs (tests/diff/README.md)
REPLAY_BATCHES ?= 150
# make soak: SOAK_RUNS boots of the debug kernel, SOAK_SECS of stress each
SOAK_SECS ?= 1800
SOAK_RUNS ?= 3

.PHONY: help setup kernel kernel-debug kernel-arm64 module module-debug arm64 \
	tests liburing operator test test-main test-debug test-arm64 \
	test-liburing-slow liburing-baseline bench soak deb dkms-deb clean

help:
	@echo "make test     build the kernels, module, tests; run the main lane (project"
	@echo "              tests, liburing suite, stress, operator checks), the debug"
	@echo "              lane (lockdep+KASAN kernel: project tests, stress) and the"
	@echo "              arm64 lane (project tests on an arm64 guest) in QEMU"
	@echo "make bench    A/B benchmark in one guest boot: build/bench/results.csv, ratio.png"
	@echo "              (BENCH_SECS=2 BENCH_ROUNDS=3 VCPUS=2 BENCH_OPS=... BENCH_QDS=... BENCH_FS=..."
	@echo "               BENCH_MODES=...), then fio as a client: BENCH_CLIENTS=..."
	@echo "               BENCH_CLIENT_ROUNDS=5 BENCH_CLIENT_SECS=3 BENCH_CLIENT_MODES=..."
	@echo "make test-liburing-slow  the liburing tests make test skips for time"
	@echo "              (tests/liburing-slow.txt), with the module loaded"
	@echo "make soak     the debug kernel's stress with rmmod/modprobe cycles and"
	@echo "              enabled toggles, SOAK_RUNS=3 boots of SOAK_SECS=1800 each:"
	@echo "              build/soak-N/ (not part of make test)"
	@echo "make kernel   build (or reuse) the patched test kernel (kernel-debug: the"
	@echo "              debug lane's, kernel/debug.config on top; kernel-arm64: the"
	@echo "              arm64 lane's, cross-built)"
	@echo "make arm64    the arm64 lane's kernel, module and tests, into build/arm64"
	@echo "make module   build module/ against that kernel, out of tree: build/module/module/"
	@echo "make tests    build tests/ against liburing 2.15"
	@echo "make dkms-deb the Debian package io-uring-handoff-dkms (the module's source"
	@echo "              for DKMS, iouh-ab): build/dkms-deb/"
	@echo "make deb      Debian kernel packages with the hooks, distro config, -handoff"
	@echo "              (hours on 2 cores; not part of make test)"
	@echo "make clean    remove build/ (the kernel cache stays)"

setup:
	@scripts/host-setup.sh

kernel: setup
	@mkdir -p $(BUILD)
	@scripts/kernel.sh test > $(KDIR_FILE).tmp && mv $(KDIR_FILE).tmp $(KDIR_FILE)

kernel-debug: setup
	@mkdir -p $(BUILD)
	@scripts/kernel.sh debug > $(BUILD)/kdir-debug.tmp && \
		mv $(BUILD)/kdir-debug.tmp $(BUILD)/kdir-debug

kernel-arm64: setup
	@mkdir -p $(BUILD)
	@scripts/kernel.sh arm64 > $(BUILD)/kdir-arm64.tmp && \
		mv $(BUILD)/kdir-arm64.tmp $(BUILD)/kdir-arm64

# $(call build_module,DIR,KDIR[,make args]): module/ and arch/'s sources
# copied to DIR and built there against KDIR, DIR/module/io_uring_handoff.ko.
# Out of the source tree: no build's objects mix with another's, or reach a
# DKMS copy of module/.
define build_module
	@rm -rf $(1) && scripts/module-src.sh $(1)
	$(MAKE) -s -C $(2) M=$(1)/module modules $(3)
endef

module: kernel
	$(call build_module,$(BUILD)/module,$(KDIR))

module-debug: kernel-debug
	$(call build_module,$(BUILD)/module-debug,$(KDIR_DEBUG))

# the arm64 lane's module, and its tests statically linked against liburing
# built for arm64
arm64: kernel-arm64
	$(call build_module,$(BUILD)/arm64/module,$(KDIR_ARM64),$(ARM64_MAKE))
	@scripts/liburing.sh arm64
	$(MAKE) -C tests CC=aarch64-linux-gnu-gcc UAPI=$(KDIR_ARM64)/uapi \
		LIBURING=$(BUILD)/arm64/liburing OUT=$(BUILD)/arm64/tests

tests: kernel
	$(MAKE) -C tests UAPI=$(KDIR)/uapi OUT=$(BUILD)/tests
	$(MAKE) -C stress UAPI=$(KDIR)/uapi OUT=$(BUILD)/stress

liburing: setup
	@scripts/liburing.sh

dkms-deb: setup
	@scripts/dkms-deb.sh > /dev/null

# the operator checks: the package installed with dpkg, DKMS's build of it
# the guest modprobes, a module built against another hook ABI, the
# benchmark binary for rmmod under load
operator: module dkms-deb
	@scripts/dkms.sh $(KDIR) $$(ls $(BUILD)/dkms-deb/io-uring-handoff-dkms_*_all.deb)
	$(call build_module,$(BUILD)/module-badabi,$(KDIR),\
		KCFLAGS="-include $(CURDIR)/tests/badabi.h")
	$(MAKE) -C bench UAPI=$(KDIR)/uapi OUT=$(BUILD)/bench

test: module module-debug tests liburing operator arm64
	@scripts/host-checks.sh > $(BUILD)/host-results.txt
	@$(MAKE) -s test-main test-debug test-arm64; \
	scripts/summary.sh $(BUILD)/host-results.txt $(BUILD)/results \
		$(BUILD)/results-debug $(BUILD)/results-arm64

# the lanes on their own; make test runs them all, then sums up
test-main:
	@echo "test: main lane, $(KDIR)/arch/x86/boot/bzImage"
	@start=$$(date +%s); \
	IOUH_STRESS_SECS=$(STRESS_SECS_MAIN) \
	IOUH_REPLAY_BATCHES=$(REPLAY_BATCHES) \
	IOUH_SUITES="project liburing stress operator" \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/results \
		$(GUEST_TIMEOUT); \
	echo "test: main lane guest ran $$(( $$(date +%s) - start ))s"

test-debug:
	@echo "test: debug lane, $(KDIR_DEBUG)/arch/x86/boot/bzImage"
	@start=$$(date +%s); \
	IOUH_STRESS_SECS=$(STRESS_SECS) IOUH_STRESS_SLOW=3 \
	IOUH_MODES="handoff handoff-defer" \
	IOUH_SUITES="project stress" \
	IOUH_KO=$(BUILD)/module-debug/module/io_uring_handoff.ko \
	IOUH_DISK=$(CACHE_DIR)/ext4-debug.img IOUH_CMDLINE=pci=noacpi IOUH_TIMEOUT=180 \
	scripts/run-vm.sh $(KDIR_DEBUG)/arch/x86/boot/bzImage \
		$(BUILD)/results-debug $(GUEST_TIMEOUT); \
	echo "test: debug lane guest ran $$(( $$(date +%s) - start ))s"

# the project tests with the module unloaded and loaded, on QEMU's arm64 virt
# machine (TCG): results-arm64, counted as arm64/
test-arm64:
	@echo "test: arm64 lane, $(KDIR_ARM64)/arch/arm64/boot/Image"
	@start=$$(date +%s); \
	IOUH_ARCH=arm64 IOUH_BUILD=$(BUILD)/arm64 \
	IOUH_MODES="stock handoff" IOUH_SUITES=project \
	IOUH_KO=$(BUILD)/arm64/module/module/io_uring_handoff.ko \
	IOUH_DISK=$(CACHE_DIR)/ext4-arm64.img IOUH_TIMEOUT=180 \
	scripts/run-vm.sh $(KDIR_ARM64)/arch/arm64/boot/Image \
		$(BUILD)/results-arm64 $(GUEST_TIMEOUT); \
	echo "test: arm64 lane guest ran $$(( $$(date +%s) - start ))s"

# tests/liburing-slow.txt's liburing tests, with the module: make test skips
# them (its cold budget), results-liburing-slow
test-liburing-slow: module tests liburing
	IOUH_SUITES=liburing IOUH_MODES=none IOUH_LIBURING_SLOW=only \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage \
		$(BUILD)/results-liburing-slow $(GUEST_TIMEOUT)

# tests/liburing-stock.txt: the liburing suite's results on the stock kernel
# (its failures are what it records: a guest that completed will do)
liburing-baseline: module tests liburing
	IOUH_SUITES=liburing-stock IOUH_MODES=none \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/baseline \
		$(GUEST_TIMEOUT) || [ -f $(BUILD)/baseline/guest-complete ]
	{ echo "# liburing's suite on the patched test kernel, module not loaded"; \
	  echo "# (make liburing-baseline). A failure with the module counts only"; \
	  echo "# where this says pass."; \
	  grep ' stock/liburing/' $(BUILD)/baseline/results.txt | \
		sed 's| stock/liburing/| |'; } > tests/liburing-stock.txt

# BENCH_SECS, BENCH_ROUNDS, BENCH_OPS, ... reach scripts/bench-guest.sh as
# they are (run-vm.sh passes BENCH_* on), which has their defaults
BENCH_TIMEOUT ?= 5400

bench: module
	$(MAKE) -C bench UAPI=$(KDIR)/uapi OUT=$(BUILD)/bench
	@# the clients section's fio, Debian's package (the guest shares our root)
	@command -v fio > /dev/null || DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q fio > /dev/null || \
		echo "bench: no fio (apt-get install fio failed), its cells are skipped"
	@# the bfs client: unstable's binary and libc beside it, not installed
	@scripts/bfs-fetch.sh $(BUILD)/bench/bfs > /dev/null || \
		echo "bench: no bfs (scripts/bfs-fetch.sh failed), its cells are skipped"
	@mkdir -p $(BUILD)/bench/vm
	@# the guest's progress lines, live over the results share
	@tail -n 0 --pid=$$$$ -F $(BUILD)/bench/vm/guest.log 2>/dev/null | \
		grep --line-buffered '^bench: cell' & \
	IOUH_SUITES=bench \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/bench/vm $(BENCH_TIMEOUT); \
	vm=$$?; \
	[ $$vm = 0 ] && grep -qx 'pass bench' $(BUILD)/bench/vm/results.txt
	python3 scripts/bench-report.py $(BUILD)/bench/vm
	cp $(BUILD)/bench/vm/results.csv $(BUILD)/bench/
	cp $(BUILD)/bench/vm/ratio.* $(BUILD)/bench/

# The long form of the debug lane's stress: each boot loads the module,
# runs the stress program for SOAK_SECS with rmmod/modprobe every 10 s and
# enabled toggled in between (scripts/guest-stress.sh), then rmmod; the
# summary fails on an error or a splat in any boot's log.
soak: module-debug tests
	@for i in $$(seq $(SOAK_RUNS)); do \
		start=$$(date +%s); \
		echo "soak: run $$i of $(SOAK_RUNS), $(SOAK_SECS) s of stress"; \
		IOUH_STRESS_SECS=$(SOAK_SECS) IOUH_STRESS_SLOW=3 \
		IOUH_MODES=none IOUH_SUITES=stress \
		IOUH_KO=$(BUILD)/module-debug/module/io_uring_handoff.ko \
		IOUH_DISK=$(CACHE_DIR)/ext4-debug.img IOUH_CMDLINE=pci=noacpi \
		scripts/run-vm.sh $(KDIR_DEBUG)/arch/x86/boot/bzImage \
			$(BUILD)/soak-$$i $$(( $(SOAK_SECS) + 1200 )); \
		grep -h '^stress:' $(BUILD)/soak-$$i/guest.log | tail -n 3; \
		echo "soak: run $$i took $$(( $$(date +%s) - start ))s"; \
	done; \
	: > $(BUILD)/soak-host.txt; \
	scripts/summary.sh $(BUILD)/soak-host.txt \
		$$(seq -f '$(BUILD)/soak-%g' $(SOAK_RUNS))

deb: setup
	@scripts/deb.sh

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C tests clean OUT=$(BUILD)/tests
