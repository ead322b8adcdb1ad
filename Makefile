# io_uring thread identity handoff: build, test and benchmark entry points.
# Everything is set up from Debian packages on first use; the kernel build is
# cached outside the repo (CACHE_DIR, default /var/cache/iouh).

CACHE_DIR ?= /var/cache/iouh
export CACHE_DIR
BUILD := $(CURDIR)/build
KDIR_FILE := $(BUILD)/kdir
KDIR = $(shell cat $(KDIR_FILE))
GUEST_TIMEOUT ?= 3000

.PHONY: help setup kernel module tests liburing operator test bench deb clean

help:
	@echo "make test     build kernel + module + tests, run them in a QEMU guest"
	@echo "make bench    A/B benchmark in one guest boot: build/bench/results.csv, ratio.png"
	@echo "              (BENCH_SECS=2 BENCH_ROUNDS=3 VCPUS=2 BENCH_OPS=... BENCH_QDS=... BENCH_FS=...)"
	@echo "make kernel   build (or reuse) the patched test kernel"
	@echo "make module   build module/ against that kernel"
	@echo "make tests    build tests/ against liburing 2.15"
	@echo "make deb      Debian kernel packages with the hooks, distro config, -handoff"
	@echo "              (hours on 2 cores; not part of make test)"
	@echo "make clean    remove build/ (the kernel cache stays)"

setup:
	@scripts/host-setup.sh

kernel: setup
	@mkdir -p $(BUILD)
	@scripts/kernel.sh > $(KDIR_FILE).tmp && mv $(KDIR_FILE).tmp $(KDIR_FILE)

module: kernel
	$(MAKE) -C $(KDIR) M=$(CURDIR)/module modules
	@mkdir -p $(BUILD)/module
	cp module/io_uring_handoff.ko $(BUILD)/module/

tests: kernel
	$(MAKE) -C tests UAPI=$(KDIR)/uapi OUT=$(BUILD)/tests

liburing: setup
	@scripts/liburing.sh

# the operator checks: the DKMS install the guest modprobes, a module built
# against another hook ABI, the benchmark binary for rmmod under load
operator: module
	@scripts/dkms.sh $(KDIR)
	@rm -rf $(BUILD)/module-badabi && mkdir -p $(BUILD)/module-badabi/module
	@cp module/Kbuild module/*.[ch] $(BUILD)/module-badabi/module/
	@cp -r arch $(BUILD)/module-badabi/
	$(MAKE) -s -C $(KDIR) M=$(BUILD)/module-badabi/module modules \
		KCFLAGS="-include $(CURDIR)/tests/badabi.h"
	$(MAKE) -C bench UAPI=$(KDIR)/uapi OUT=$(BUILD)/bench

test: module tests liburing operator
	@scripts/host-checks.sh > $(BUILD)/host-results.txt
	@echo "test: booting $(KDIR)/arch/x86/boot/bzImage"
	@start=$$(date +%s); \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/results $(GUEST_TIMEOUT); \
	vm=$$?; echo "test: guest ran $$(( $$(date +%s) - start ))s"; \
	cat $(BUILD)/host-results.txt >> $(BUILD)/results/results.txt; \
	scripts/summary.sh $(BUILD)/results && [ $$vm = 0 ]

BENCH_SECS ?= 2
BENCH_ROUNDS ?= 3
BENCH_TIMEOUT ?= 5400

bench: module
	$(MAKE) -C bench UAPI=$(KDIR)/uapi OUT=$(BUILD)/bench
	@mkdir -p $(BUILD)/bench/vm
	@# the guest's progress lines, live over the results share
	@tail -n 0 --pid=$$$$ -F $(BUILD)/bench/vm/guest.log 2>/dev/null | \
		grep --line-buffered '^bench: cell' & \
	IOUH_SUITES=bench IOUH_BENCH_SECS=$(BENCH_SECS) \
	IOUH_BENCH_ROUNDS=$(BENCH_ROUNDS) IOUH_BENCH_OPS="$(BENCH_OPS)" \
	IOUH_BENCH_QDS="$(BENCH_QDS)" IOUH_BENCH_FS="$(BENCH_FS)" \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/bench/vm $(BENCH_TIMEOUT); \
	vm=$$?; \
	[ $$vm = 0 ] && grep -qx 'pass bench' $(BUILD)/bench/vm/results.txt
	python3 scripts/bench-report.py $(BUILD)/bench/vm
	cp $(BUILD)/bench/vm/results.csv $(BUILD)/bench/
	cp $(BUILD)/bench/vm/ratio.* $(BUILD)/bench/

deb: setup
	@scripts/deb.sh

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C tests clean OUT=$(BUILD)/tests
