#!/bin/bash
# The operators' path for the test kernel: install its modules tree, then
# dkms add/build/install the module for it, so the guest can modprobe it.
# usage: dkms.sh KDIR (a kernel build tree with core-hooks.patch)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KDIR=$1
NAME=io_uring_handoff
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
KVER=$(make -s -C "$KDIR" kernelrelease)
SRC=/usr/src/$NAME-$VER
log() { echo "dkms: $*" >&2; }

# /lib/modules/$KVER with modules.dep, as a kernel package would leave it
make -s -C "$KDIR" modules_install INSTALL_MOD_PATH=/ >/dev/null

# the source DKMS builds from: dkms.conf, module/ and arch/, nothing built
dkms remove -m "$NAME" -v "$VER" --all >/dev/null 2>&1 || true
rm -rf "$SRC"
mkdir -p "$SRC"
cp "$REPO/dkms.conf" "$SRC/"
rsync -a --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
	--exclude='.*.cmd' --exclude=Module.symvers --exclude=modules.order \
	"$REPO/module" "$SRC/"
[ -d "$REPO/arch" ] && cp -r "$REPO/arch" "$SRC/"

log "add/build/install $NAME $VER for $KVER"
dkms add -m "$NAME" -v "$VER" >&2
dkms build -m "$NAME" -v "$VER" -k "$KVER" --kernelsourcedir "$KDIR" >&2
dkms install -m "$NAME" -v "$VER" -k "$KVER" --kernelsourcedir "$KDIR" >&2
ko=$(modinfo -k "$KVER" -n "$NAME")
case "$ko" in
*/updates/dkms/*) log "installed $ko" ;;
*) log "modinfo finds $ko, not the DKMS copy"; exit 1 ;;
esac
