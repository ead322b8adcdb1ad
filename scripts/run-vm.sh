#!/bin/bash
# Boot the test kernel with the host root shared read-only over 9p and run
# scripts/guest-run.sh in it. KVM if a bounded probe boot works, else TCG.
# IOUH_ARCH=arm64: an arm64 kernel Image on QEMU's virt machine (TCG), its
# root the initramfs (scripts/initramfs.sh arm64).
# usage: run-vm.sh BZIMAGE|IMAGE RESULTS_DIR TIMEOUT_SECONDS
# Exits with the guest's status: 0 if every test passed or skipped.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KIMG=$1 RES=$2 TMO=${3:-2400}
# the guest mounts tmpfs of its own on /tmp and /run; only the repo is bound
# back (scripts/initramfs-init)
for v in IOUH_KO IOUH_BUILD; do
	case ${!v:-} in
	"$REPO"/*) ;;
	/tmp/* | /run/*)
		echo "run-vm: $v=${!v}: the guest can't see the host's /tmp or /run" >&2
		exit 2 ;;
	esac
done
CACHE=${CACHE_DIR:-/var/cache/iouh}
mkdir -p "$RES" "$CACHE"
rm -f "$RES"/*
ARCH=${IOUH_ARCH:-x86_64}
initrd=$RES/../initramfs-$ARCH.gz
"$REPO/scripts/initramfs.sh" "$initrd" "${IOUH_ARCH:-}"

# a fresh ext4 image on virtio-blk; cache=none so fsync reaches the host disk
disk=${IOUH_DISK:-$CACHE/ext4.img}	# IOUH_DISK: to run two guests at once
fresh_disk() {
	rm -f "$disk"
	truncate -s 1G "$disk"
	mkfs.ext4 -q -F "$disk"
}

SMP=${VCPUS:-2}
MEM=${GUEST_MEM:-2G}
# IOUH_CMDLINE: more of the kernel command line (the debug lane: pci=noacpi)
CMDLINE="panic=-1 oops=panic iouh.repo=$REPO${IOUH_CMDLINE:+ $IOUH_CMDLINE}"
if [ "$ARCH" = arm64 ]; then
	qemu_base() {
		echo qemu-system-aarch64 -M virt -nographic -no-reboot \
			-smp "$SMP" -m "$MEM" -kernel "$KIMG" -initrd "$initrd"
	}
	CMDLINE="console=ttyAMA0 $CMDLINE iouh.root=initramfs"
else
	qemu_base() {
		echo qemu-system-x86_64 -nographic -no-reboot \
			-smp "$SMP" -m "$MEM" -kernel "$KIMG" -initrd "$initrd"
	}
	CMDLINE="console=ttyS0 $CMDLINE"
fi
# every IOUH_* and BENCH_* variable of the caller reaches
# scripts/guest-run.sh, which sources this file from the results share
for v in ${!IOUH_@} ${!BENCH_@}; do
	printf 'export %s=%q\n' "$v" "${!v}"
done > "$RES/guest.env"

accel=tcg
# no LA57: 7.2's KASAN, under 5-level paging, takes an interrupt that lands while
# identify_cpu() has the feature bits cleared for a wild access (2 of 6 debug
# boots at 0.9 s); no5lvl on the command line instead hung 2 of 4 TCG boots
cpu=max,la57=off
# arm64: pauth-impdef is QEMU's own pointer authentication hash, much
# faster under TCG than the architected QARMA
[ "$ARCH" = arm64 ] && cpu=max,pauth-impdef=on
if [ "$ARCH" = x86_64 ] && [ -w /dev/kvm ] && [ "${IOUH_ACCEL:-}" != tcg ]; then
	for c in host,-arch-capabilities; do
		if timeout 25 $(qemu_base) -accel kvm -cpu "$c" \
			-append "$CMDLINE iouh.probe=1" 2>&1 </dev/null |
			grep -q IOUH-BOOT-OK; then
			accel=kvm cpu=$c
			break
		fi
	done
fi
echo "vm: accel=$accel cpu=$cpu vcpus=$SMP mem=$MEM" | tee "$RES/accel"

# A boot that hangs before init (seen once: a debug kernel in its i8042
# probe, the host loaded by a kernel build) would cost the whole timeout:
# init prints IOUH-BOOT-OK first, and a guest without it after BOOT_S is
# killed and booted once more (a normal debug boot takes ~80 s under TCG),
# as is one whose console says a PCI device got no interrupt; on x86 the
# second boot takes PCI interrupts from the BIOS (pci=noacpi).
BOOT_S=${IOUH_BOOT_TIMEOUT:-300}
# one boot, [extra kernel command line]; 125: no IOUH-BOOT-OK in BOOT_S or
# a PCI device without its interrupt, else timeout's status
guest() {
	local pid waited=0

	fresh_disk
	timeout "$TMO" $(qemu_base) -accel "$accel" -cpu "$cpu" \
		-append "$CMDLINE${1:+ $1}" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$RES",mount_tag=results,security_model=none \
		-drive file="$disk",if=virtio,format=raw,cache=none \
		</dev/null > "$RES/console.log" 2>&1 &
	pid=$!
	while ! grep -qs IOUH-BOOT-OK "$RES/console.log"; do
		kill -0 "$pid" 2>/dev/null || break
		if [ "$waited" -ge "$BOOT_S" ]; then
			kill "$pid"
			wait "$pid"
			return 125
		fi
		sleep 5
		waited=$((waited + 5))
	done
	# a PCI device left without its interrupt (ACPI's _PRT evaluation hit
	# AE_AML_LOOP_TIMEOUT: 3 of 4 debug soak boots on 7 Dec) hangs the
	# first mount on it: a boot to do again as well
	if grep -qs "no GSI" "$RES/console.log"; then
		kill "$pid"
		wait "$pid"
		return 125
	fi
	wait "$pid"
}
guest
rc=$?
if [ $rc = 125 ]; then
	mv "$RES/console.log" "$RES/console-hung.log"
	echo "vm: no IOUH-BOOT-OK after ${BOOT_S}s or a device without its interrupt, booting again; console tail:"
	tail -n 5 "$RES/console-hung.log"
	# x86: PCI interrupts from the BIOS's PIRQ table, no ACPI _PRT to time
	# out (a debug boot so came up in 48 s, where 5 of 8 had failed)
	if [ "$ARCH" = arm64 ]; then guest; else guest pci=noacpi; fi
	rc=$?
fi
if [ $rc = 124 ]; then
	echo "vm: timed out after ${TMO}s, console tail:"
	tail -n 40 "$RES/console.log"
fi
if ! grep -q IOUH-GUEST-DONE "$RES/console.log"; then
	echo "vm: the guest did not finish, console tail:"
	tail -n 60 "$RES/console.log"
	exit 1
fi
# guest-run.sh's exit status, which init printed: 1 if a test failed
rc=$(sed -n 's/.*IOUH-GUEST-DONE rc=\([0-9]*\).*/\1/p' "$RES/console.log" |
	tail -n 1)
exit "${rc:-1}"
