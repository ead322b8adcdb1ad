#!/bin/bash
# The operators' path for the test kernel, the README's Operators section
# on this machine (whose root the guest mounts):
# 1. the kernel with the hooks, installed as far as DKMS looks: its modules
#    tree with the build link (modules_install) and /boot/config-KVER, the
#    file of a linux-image package by which dkms's postinst finds the
#    newest kernel. The host's running kernel (Debian's) is skipped by
#    dkms.conf's BUILD_EXCLUSIVE_CONFIG, which the output shows.
# 2. io-uring-handoff-dkms installed with dpkg, as on a machine that never
#    had the module: the package purged and every DKMS copy removed first.
# 3. what DKMS made: the module installed for KVER under updates/dkms,
#    signed with DKMS's key (which the test kernel trusts, kernel.sh).
# The guest then modprobes it (guest-operator.sh).
# usage: dkms.sh KDIR DEB (a kernel build tree with core-hooks.patch, the
# package from dkms-deb.sh)
set -euo pipefail
KDIR=$1
DEB=$2
NAME=io_uring_handoff
PKG=io-uring-handoff-dkms
KVER=$(make -s -C "$KDIR" kernelrelease)
log() { echo "dkms: $*" >&2; }

make -s -C "$KDIR" modules_install INSTALL_MOD_PATH=/ >/dev/null
cp "$KDIR/.config" "/boot/config-$KVER"

dpkg --purge "$PKG" >/dev/null 2>&1 || true
for v in /var/lib/dkms/"$NAME"/*/; do
	[ -d "$v" ] && dkms remove -m "$NAME" -v "$(basename "$v")" --all >/dev/null 2>&1
done
# what a removal may leave: a copy dkms didn't track, the source
rm -rf /usr/src/"$NAME"-* /var/lib/dkms/"$NAME" /lib/modules/*/updates/dkms/"$NAME".ko*
depmod "$KVER"
log "dpkg -i $(basename "$DEB")"
dpkg -i "$DEB" 2>&1 | sed 's/^/dkms:   /' >&2
[ "${PIPESTATUS[0]}" = 0 ] || { log "dpkg -i failed"; exit 1; }

dkms status -m "$NAME" -k "$KVER" | grep -q ': installed' ||
	{ log "DKMS did not install $NAME for $KVER"; dkms status >&2; exit 1; }
ko=$(modinfo -k "$KVER" -n "$NAME")
case "$ko" in
*/updates/dkms/*) ;;
*) log "modinfo finds $ko, not the DKMS copy"; exit 1 ;;
esac
# the test kernel checks signatures (kernel/signing.config)
signer=$(modinfo -F signer "$ko")
[ "$signer" = "DKMS module signing key" ] ||
	{ log "$ko: signed by '$signer', not by DKMS's key"; exit 1; }
log "installed $ko, signed by DKMS's key"
