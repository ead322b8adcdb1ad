#!/bin/bash
# make deb: Debian packages (linux-image, linux-headers) of the patched
# 7.2.13 with a distro config, for operators. Not the minimal test config:
# this takes hours on 2 cores and is never run by CI.
# The config is Debian's own (from the installed linux-headers-*-amd64)
# brought forward with olddefconfig; localversion -handoff.
# DEB_CONFIG_ONLY=1 stops after configuring, to check before the long build.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE_DIR:-/var/cache/iouh}
SRCVER=7.2.13-1
DEB=$CACHE/src/linux-source-7.2_${SRCVER}_all.deb
OUT=${DEB_OUT:-$REPO/build/deb}
dir=$CACHE/deb
log() { echo "deb: $*" >&2; }

base=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
[ -f "$base/.config" ] || { log "no Debian linux-headers-*-amd64 config (make setup)"; exit 1; }
mkdir -p "$CACHE/src" "$OUT"
[ -f "$DEB" ] || (cd "$CACHE/src" && apt-get download -q "linux-source-7.2=$SRCVER")

rm -rf "$dir"
mkdir -p "$dir"
dpkg-deb --fsys-tarfile "$DEB" |
	tar -xO ./usr/src/linux-source-7.2.tar.xz | tar -xJ -C "$dir"
cd "$dir/linux-source-7.2"
patch -p1 --fuzz=0 -s < "$REPO/core-hooks.patch"

cp "$base/.config" .config
# no Debian signing keys here; no BTF (needs pahole); our localversion
scripts/config --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--disable DEBUG_INFO_BTF --disable DEBUG_INFO_DWARF5 \
	--enable DEBUG_INFO_NONE --set-str LOCALVERSION "-handoff" \
	--enable IO_URING --enable MODULES
make olddefconfig >/dev/null
grep -q '^CONFIG_IO_URING=y' .config || { log "olddefconfig lost CONFIG_IO_URING"; exit 1; }
if [ -n "${DEB_CONFIG_ONLY:-}" ]; then
	log "configured $(make -s kernelrelease) in $dir/linux-source-7.2"
	exit 0
fi
log "building bindeb-pkg $(make -s kernelrelease), this takes hours on 2 cores"
make -j"$(nproc)" bindeb-pkg >&2
mv ../*.deb "$OUT/"
log "packages in $OUT"
ls -1 "$OUT"
