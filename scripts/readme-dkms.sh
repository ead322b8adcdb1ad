#!/bin/bash
# The README's DKMS install commands (its Operators block, from mkdir to dkms
# install), the example kernel release replaced by KVER, one per line on
# stdout, after checking each line's shape so that nothing but these runs as
# root: the version must be dkms.conf's, the copy list is the README's to
# say. scripts/dkms.sh runs them; host-checks.sh copies what they copy.
# usage: readme-dkms.sh KVER
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
KVER=$1
NAME=io_uring_handoff
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
log() { echo "readme-dkms: $*" >&2; }

cmds=$(sed -n '/^    mkdir -p \/usr\/src\//,/^    dkms install /p' \
	"$REPO/README.md" |
	sed -e 's/^    //' -e 's/ *#.*$//' -e "s/ -k [^ ]*-handoff/ -k $KVER/")
dst="/usr/src/$NAME-$VER"
shapes=("mkdir -p ${dst//./\\.}"
	"cp -r [A-Za-z0-9._/ -]+ ${dst//./\\.}/"
	"dkms add $NAME/${VER//./\\.}"
	"dkms install $NAME/${VER//./\\.} -k ${KVER//./\\.}")
mapfile -t lines <<< "$cmds"
if [ "${#lines[@]}" != 4 ]; then
	log "README.md: no Operators block from mkdir to dkms install -k ...-handoff"
	exit 1
fi
for i in 0 1 2 3; do
	if ! grep -Exq -- "${shapes[$i]}" <<< "${lines[$i]}"; then
		log "README.md: '${lines[$i]}' is not '${shapes[$i]}'"
		exit 1
	fi
done
echo "$cmds"
