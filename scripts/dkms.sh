#!/bin/bash
# The operators' path for the test kernel: install its modules tree, as a
# kernel package would, then run the README's DKMS commands as written (its
# Operators block, from mkdir to dkms install, in the repo's directory), the
# example kernel release replaced by the test kernel's, so the guest can
# modprobe the DKMS copy. A README that drifts from what works fails here.
# scripts/readme-dkms.sh reads the commands and checks their shapes.
# usage: dkms.sh KDIR (a kernel build tree with core-hooks.patch)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KDIR=$1
NAME=io_uring_handoff
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
KVER=$(make -s -C "$KDIR" kernelrelease)
log() { echo "dkms: $*" >&2; }

# /lib/modules/$KVER with modules.dep and the build link
make -s -C "$KDIR" modules_install INSTALL_MOD_PATH=/ >/dev/null

cmds=$("$REPO/scripts/readme-dkms.sh" "$KVER")

# a clean slate, as on a machine that never had the module
dkms remove -m "$NAME" -v "$VER" --all >/dev/null 2>&1 || true
rm -rf "/usr/src/$NAME-$VER"
log "README's commands for $KVER:"
sed 's/^/dkms:   /' <<< "$cmds" >&2
(cd "$REPO" && bash -euo pipefail -c "$cmds") >&2
ko=$(modinfo -k "$KVER" -n "$NAME")
case "$ko" in
*/updates/dkms/*) log "installed $ko" ;;
*) log "modinfo finds $ko, not the DKMS copy"; exit 1 ;;
esac
