#!/bin/bash
# Build the guest initramfs: static busybox, /dev/console, our init.
# usage: initramfs.sh OUT [arm64]
# arm64: the guest's root is the initramfs itself (the host root is x86), so
# it also holds a static bash; both come from Debian's arm64 packages
# (busybox-static, bash-static), downloaded once into CACHE_DIR.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE_DIR:-/var/cache/iouh}
out=$1 arch=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the archive's root is the arm64 guest's /: mktemp's 0700 would keep
# other users from any path (id_creds drops to nobody)
chmod 755 "$tmp"
mkdir -p "$tmp"/{bin,dev,proc,sys,host}
if [ "$arch" = arm64 ]; then
	debs=$CACHE/src/arm64
	mkdir -p "$debs"
	for p in busybox-static bash-static; do
		ls "$debs/${p}_"*.deb >/dev/null 2>&1 ||
			(cd "$debs" && apt-get download -q "$p:arm64" >&2 2>/dev/null)
		dpkg-deb -x "$debs/${p}_"*.deb "$tmp/deb"
	done
	cp "$tmp/deb/bin/busybox" "$tmp/bin/busybox"
	cp "$tmp/deb/bin/bash-static" "$tmp/bin/bash"
	rm -rf "$tmp/deb"
else
	cp /bin/busybox "$tmp/bin/busybox"
fi
cp "$REPO/scripts/initramfs-init" "$tmp/init"
chmod +x "$tmp/init"
# /dev/console must be in the archive or init's output is lost
mknod "$tmp/dev/console" c 5 1
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
