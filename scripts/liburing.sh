#!/bin/bash
# Build liburing 2.15's test suite from Debian's source package into
# build/liburing, with tests/liburing-*.patch applied (fixes of the tests
# themselves, each says why). Cached under CACHE_DIR by version and patches.
# usage: liburing.sh [arm64]
# arm64: only the library, cross-built for the arm64 lane's tests, into
# build/arm64/liburing
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE_DIR:-/var/cache/iouh}
VER=2.15-1
fetch() {	# dst
	rm -rf "$1" && mkdir -p "$CACHE/src"
	(cd "$CACHE/src" && [ -f "liburing_$VER.dsc" ] ||
		apt-get source -q --download-only "liburing=$VER" >&2)
	dpkg-source -q -x "$CACHE/src/liburing_$VER.dsc" "$1" >&2
}
if [ "${1:-}" = arm64 ]; then
	dst=$CACHE/liburing-$VER-arm64
	if [ ! -f "$dst/.done" ]; then
		fetch "$dst"
		(cd "$dst" && ./configure --cc=aarch64-linux-gnu-gcc >/dev/null &&
			make -s -j"$(nproc)" -C src >/dev/null)
		touch "$dst/.done"
	fi
	mkdir -p "$REPO/build/arm64"
	ln -sfn "$dst" "$REPO/build/arm64/liburing"
	exit 0
fi
patches=$(ls "$REPO"/tests/liburing-*.patch 2>/dev/null || true)
key=$(cat $patches /dev/null | sha256sum | cut -c1-8)
dst=$CACHE/liburing-$VER-$key
if [ ! -f "$dst/.done" ]; then
	fetch "$dst"
	for p in $patches; do
		patch -s -d "$dst" -p1 --fuzz=0 < "$p" >&2
	done
	(cd "$dst" && ./configure >/dev/null && make -s -j"$(nproc)" -C src >/dev/null &&
		make -s -j"$(nproc)" -C test >/dev/null 2>&1)
	touch "$dst/.done"
fi
mkdir -p "$REPO/build"
ln -sfn "$dst" "$REPO/build/liburing"
