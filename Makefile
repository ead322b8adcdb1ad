# io_uring thread identity handoff: build, test and benchmark entry points.
# Everything is set up from Debian packages on first use; the kernel build is
# cached outside the repo (CACHE_DIR, default /var/cache/iouh).

CACHE_DIR ?= /var/cache/iouh
export CACHE_DIR
BUILD := $(CURDIR)/build
KDIR_FILE := $(BUILD)/kdir
KDIR = $(shell cat $(KDIR_FILE))
GUEST_TIMEOUT ?= 3000

.PHONY: help setup kernel module tests liburing test bench clean

help:
	@echo "make test     build kernel + module + tests, run them in a QEMU guest"
	@echo "make bench    A/B benchmark (not implemented yet)"
	@echo "make kernel   build (or reuse) the patched test kernel"
	@echo "make module   build module/ against that kernel"
	@echo "make tests    build tests/ against liburing 2.15"
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

test: module tests liburing
	@echo "test: booting $(KDIR)/arch/x86/boot/bzImage"
	@start=$$(date +%s); \
	scripts/run-vm.sh $(KDIR)/arch/x86/boot/bzImage $(BUILD)/results $(GUEST_TIMEOUT); \
	vm=$$?; echo "test: guest ran $$(( $$(date +%s) - start ))s"; \
	scripts/summary.sh $(BUILD)/results && [ $$vm = 0 ]

bench:
	@echo "bench: not implemented yet, see issue 4"

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C tests clean OUT=$(BUILD)/tests
