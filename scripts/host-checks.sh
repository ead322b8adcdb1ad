#!/bin/bash
# Host-side checks of make test, one "pass|fail NAME" line each on stdout:
# the module refuses to build against a kernel without core-hooks.patch
# (Debian 12's stock headers) with one line naming the patch.
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
