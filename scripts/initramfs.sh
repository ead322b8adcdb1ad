#!/bin/bash
# Build the guest initramfs: static busybox, /dev/console, our init.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
out=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,host}
cp /bin/busybox "$tmp/bin/busybox"
cp "$REPO/scripts/initramfs-init" "$tmp/init"
chmod +x "$tmp/init"
# /dev/console must be in the archive or init's output is lost
mknod "$tmp/dev/console" c 5 1
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
