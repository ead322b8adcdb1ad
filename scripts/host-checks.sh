#!/bin/bash
# Host-side checks of make test, one "pass|fail NAME" line each on stdout:
# the module refuses to build against a kernel without core-hooks.patch
# (Debian 12's stock headers) with one line naming the patch; dkms.conf
# selects kernels by the hooks' Kconfig symbol, not by their name; the
# DKMS package passes lintian.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
hdr=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "$hdr" ]; then
	echo "fail host/refuse-stock-build"
	echo "host-checks: no distro linux-headers installed" >&2
	exit 0
fi
cp "$REPO"/module/Kbuild "$REPO"/module/*.[ch] "$tmp/"
out=$(make -C "$hdr" M="$tmp" modules 2>&1)
rc=$?
errors=$(grep -c 'error' <<< "$out")
if [ $rc != 0 ] && [ "$errors" -le 2 ] &&
   grep -q 'lacks the io_uring handoff hooks, build a kernel with core-hooks.patch' <<< "$out"; then
	echo "pass host/refuse-stock-build"
else
	echo "fail host/refuse-stock-build"
	echo "$out" | tail -n 20 >&2
fi

# The stock headers under a name like a patched kernel's: dkms must exclude
# them (exit 77, BUILD_EXCLUSIVE) before it builds anything, as their
# .config lacks CONFIG_IO_URING_HANDOFF. The source is the package's
# (make dkms-deb), unpacked to a private source and dkms tree, so the real
# installation is untouched.
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
kver=${hdr##*/linux-headers-}-handoff
mkdir -p "$tmp/dkms"
dpkg-deb -x "$REPO/build/dkms-deb/io-uring-handoff-dkms_${ver}_all.deb" "$tmp/root"
dkms_args=(-m io_uring_handoff -v "$ver" --sourcetree "$tmp/root/usr/src"
	   --dkmstree "$tmp/dkms")
dkms add "${dkms_args[@]}" > /dev/null 2>&1
out=$(dkms build "${dkms_args[@]}" -k "$kver" \
	--kernelsourcedir "$hdr" 2>&1)
rc=$?
if [ $rc = 77 ] && grep -q 'BUILD_EXCLUSIVE' <<< "$out"; then
	echo "pass host/dkms-excludes-unhooked"
else
	echo "fail host/dkms-excludes-unhooked"
	echo "dkms build exited $rc:" >&2
	echo "$out" | tail -n 20 >&2
fi

# The package as Debian would take it: lintian without an error or warning.
if out=$(lintian "$REPO/build/dkms-deb/io-uring-handoff-dkms_${ver}_all.deb" 2>&1) &&
   ! grep -q '^[EW]: ' <<< "$out"; then
	echo "pass host/dkms-deb-lintian"
else
	echo "fail host/dkms-deb-lintian"
	echo "$out" >&2
fi

# The state inventory: every field of task_struct, thread_struct (x86_64,
# arm64) and io_uring_task in the test kernel's patched source has a verdict
# in inventory/, and every entry names a field (inventory/README.md).
kdir=$(cat "$REPO/build/kdir" 2>/dev/null)
KSRC=$(dirname "$kdir")/src
if [ -z "$kdir" ] || [ ! -d "$KSRC" ]; then
	echo "fail host/state-inventory"
	echo "host-checks: no patched kernel source for build/kdir ('$kdir')" >&2
elif out=$(python3 "$REPO/scripts/inventory-check.py" "$KSRC" 2>&1); then
	echo "pass host/state-inventory"
else
	echo "fail host/state-inventory"
	echo "$out" >&2
fi

# core-hooks.patch keeps the design card's shape: under 1000 added lines,
# comments at most 15% of them, every file it touches named in its
# description (scripts/patch-shape.py).
if out=$(python3 "$REPO/scripts/patch-shape.py" "$REPO/core-hooks.patch" 2>&1); then
	echo "pass host/core-patch-shape"
else
	echo "fail host/core-patch-shape"
	echo "$out" >&2
fi
