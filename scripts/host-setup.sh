#!/bin/bash
# Install what the build and the guest need from Debian packages.
# Unstable is added at pin priority 100 so nothing on the system upgrades;
# only the packages named below are taken from it.
set -euo pipefail

STAMP=${CACHE_DIR:-/var/cache/iouh}/host-setup.v4
[ -f "$STAMP" ] && exit 0

SRC=/etc/apt/sources.list.d/iouh-unstable.sources
if [ ! -f "$SRC" ]; then
	cat > "$SRC" <<EOT
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: unstable
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	cat > /etc/apt/preferences.d/iouh-unstable <<EOT
Package: *
Pin: release a=unstable
Pin-Priority: 100
EOT
fi
# bookworm deb-src too, for nothing but completeness of apt's view
export DEBIAN_FRONTEND=noninteractive
# the arm64 lane's guest root comes from Debian's arm64 packages
dpkg --add-architecture arm64
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils \
	kmod qemu-system-x86 busybox-static e2fsprogs python3 rsync \
	dkms dh-dkms debhelper lintian gnuplot-nox dpkg-dev fakeroot linux-headers-amd64 \
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm >/dev/null
apt-get install -y -qq --no-install-recommends -t unstable liburing-dev >/dev/null
mkdir -p "$(dirname "$STAMP")"
touch "$STAMP"
