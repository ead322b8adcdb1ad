#!/bin/bash
# make dkms-deb: the Debian package io-uring-handoff-dkms (debian/, built
# with dh-dkms as Debian builds its DKMS packages): the module's source
# under /usr/src for DKMS, and iouh-ab. Built from a staging copy of what
# the package ships, so no build output of the repository can reach it.
# The versions must agree: debian/changelog's, dkms.conf's PACKAGE_VERSION
# and the module's MODULE_VERSION.
# Prints the .deb's path on stdout.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${DKMS_DEB_OUT:-$REPO/build/dkms-deb}
log() { echo "dkms-deb: $*" >&2; }

deb_ver=$(cd "$REPO" && dpkg-parsechangelog -S Version)
conf_ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$REPO/dkms.conf")
mod_ver=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' "$REPO/module/handoff_main.c")
if [ "$deb_ver" != "$conf_ver" ] || [ "$conf_ver" != "$mod_ver" ]; then
	log "versions differ: debian/changelog $deb_ver, dkms.conf $conf_ver, MODULE_VERSION $mod_ver"
	exit 1
fi

stage=$OUT/io-uring-handoff-$deb_ver
rm -rf "$OUT"
mkdir -p "$stage/scripts"
cd "$REPO"
cp -r debian dkms.conf README.md "$stage/"
scripts/module-src.sh "$stage"
cp scripts/iouh-ab "$stage/scripts/"
(cd "$stage" && dpkg-buildpackage -b -us -uc) > "$OUT/build.log" 2>&1 ||
	{ tail -n 30 "$OUT/build.log" >&2; log "dpkg-buildpackage failed, $OUT/build.log"; exit 1; }
deb=$OUT/io-uring-handoff-dkms_${deb_ver}_all.deb
[ -f "$deb" ] || { log "no $deb"; exit 1; }
log "built $deb"
echo "$deb"
