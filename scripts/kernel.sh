#!/bin/bash
# Build a test kernel: Debian's linux-source 7.2.13 + core-hooks.patch +
# config fragments on tinyconfig. Cached outside the repo, keyed by a hash
# of the source version, the patch's diffs (not the description above
# them, which patch skips), the fragments and RECIPE. Prints the
# build directory (usable as KDIR for out-of-tree modules) on stdout.
# usage: kernel.sh [test|debug|arm64]
#   test	kernel/test.config + kernel/x86_64.config + kernel/signing.config
#		+ kernel/lsm.config (AppArmor), trusting DKMS's module signing
#		key (created here if missing)
#   debug	the test kernel + kernel/debug.config (lockdep, KASAN, ...)
#		and kernel/delay-points.patch over core-hooks.patch
#   arm64	kernel/test.config + kernel/arm64.config, cross-built with
#		Debian's gcc-aarch64-linux-gnu (an Image, not a bzImage)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE_DIR:-/var/cache/iouh}
SRCVER=7.2.13-1
DEB=$CACHE/src/linux-source-7.2_${SRCVER}_all.deb
PATCH=${CORE_PATCH:-$REPO/core-hooks.patch}
VARIANT=${1:-test}
K=$REPO/kernel
# The arch's make variables and image; kbuild reads ARCH from the
# environment. Not ARCH=x86_64 for x86: tinyconfig would start from 64BIT=y
# and leave off what a 64-bit default turns on after the merge (VMAP_STACK,
# VSYSCALL_EMULATION, protection keys, IBT): the x86 kernels are built with
# the host's ARCH, as they always were.
IMAGE=bzImage
PATCHES=("$PATCH")
case $VARIANT in
test) CONFIGS=("$K/test.config" "$K/x86_64.config" "$K/signing.config"
	"$K/lsm.config") ;;
debug) CONFIGS=("$K/test.config" "$K/x86_64.config" "$K/debug.config")
	PATCHES+=("$K/delay-points.patch") ;;
arm64)
	CONFIGS=("$K/test.config" "$K/arm64.config")
	export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
	IMAGE=Image ;;
*) echo "kernel: unknown variant $VARIANT" >&2; exit 2 ;;
esac

# DKMS signs the modules it builds with its own key pair, made on first
# use; the test kernel trusts that certificate, as a machine trusts a MOK
# enrolled with mokutil. Made here first if missing, with DKMS's own
# command (dkms's prepare_signing()), so the kernel can be built with it.
MOK_KEY=${DKMS_MOK_KEY:-/var/lib/dkms/mok.key}
MOK_CERT=${DKMS_MOK_CERT:-/var/lib/dkms/mok.pub}
mok=
if [ "$VARIANT" = test ]; then
	if [ ! -f "$MOK_KEY" ] || [ ! -f "$MOK_CERT" ]; then
		mkdir -p "$(dirname "$MOK_KEY")"
		openssl req -new -x509 -nodes -days 36500 \
			-subj "/CN=DKMS module signing key" -newkey rsa:2048 \
			-keyout "$MOK_KEY" -outform DER -out "$MOK_CERT" >/dev/null 2>&1
	fi
	mok=$(sha256sum < "$MOK_CERT")
fi

# bump RECIPE when the build steps below change what ends up in the cache
RECIPE=2
key=$( { echo "$SRCVER $RECIPE $VARIANT${mok:+ $mok}"
	  for p in "${PATCHES[@]}"; do sed -n '/^diff --git /,$p' "$p"; done
	  cat "${CONFIGS[@]}"; } | sha256sum | cut -c1-16)
dir=$CACHE/kernel/$key
log() { echo "kernel: $*" >&2; }

if [ -f "$dir/obj/.done" ]; then
	log "cached build $key"
	echo "$dir/obj"
	exit 0
fi

mkdir -p "$CACHE/src"
if [ ! -f "$DEB" ]; then
	log "downloading linux-source-7.2=$SRCVER"
	(cd "$CACHE/src" && apt-get download -q "linux-source-7.2=$SRCVER" >&2)
fi

rm -rf "$dir"
mkdir -p "$dir/obj"
log "unpacking source"
dpkg-deb --fsys-tarfile "$DEB" |
	tar -xO ./usr/src/linux-source-7.2.tar.xz | tar -xJ -C "$dir"
mv "$dir/linux-source-7.2" "$dir/src"

for p in "${PATCHES[@]}"; do
	log "applying $(basename "$p")"
	if ! out=$(cd "$dir/src" && patch -p1 --fuzz=0 -s < "$p" 2>&1); then
		echo "$out" >&2
		log "$(basename "$p") does not apply to linux-source $SRCVER, see above"
		exit 1
	fi
done

log "configuring $VARIANT (tinyconfig + ${CONFIGS[*]##*/})"
make -s -C "$dir/src" O="$dir/obj" tinyconfig >/dev/null
"$dir/src/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" \
	"$dir/obj/.config" "${CONFIGS[@]}" >/dev/null
if [ -n "$mok" ]; then
	openssl x509 -inform DER -in "$MOK_CERT" -out "$dir/dkms-mok.pem"
	"$dir/src/scripts/config" --file "$dir/obj/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "$dir/dkms-mok.pem"
fi
make -s -C "$dir/src" O="$dir/obj" olddefconfig >/dev/null
# every option the fragments ask for must have survived olddefconfig (a
# later fragment's value wins)
missing=0
while IFS== read -r opt val; do
	[ "$val" = n ] && continue
	grep -qx "$opt=$val" "$dir/obj/.config" || { log "config lost $opt=$val"; missing=1; }
done < <(cat "${CONFIGS[@]}" | grep '^CONFIG_' | tac | sort -s -u -t= -k1,1)
[ $missing = 0 ] || exit 1

log "building $VARIANT $IMAGE ($key), this takes several minutes"
start=$(date +%s)
# one job more than CPUs: the serial steps (a directory's link, a
# generated header) leave a CPU idle less often
make -s -C "$dir/src" O="$dir/obj" -j"$(( $(nproc) + 1 ))" $IMAGE modules >&2
# uapi headers for the test programs: liburing 2.15 wants newer than bookworm's
make -s -C "$dir/src" O="$dir/obj" headers_install INSTALL_HDR_PATH="$dir/obj/uapi" >&2
echo "$VARIANT" > "$dir/variant"
touch "$dir/obj/.done"
log "built in $(( $(date +%s) - start ))s"
# keep the two newest builds of each variant
for d in "$CACHE"/kernel/*/; do
	# a symlink aliases another key's build (same diffs): never rm -rf
	# through it; one left dangling is replaced by the next build
	[ -L "${d%/}" ] && continue
	# an if: a last directory of the other variant mustn't fail the loop
	if [ "$(cat "$d/variant" 2>/dev/null || echo test)" = "$VARIANT" ]; then
		printf '%s %s\n' "$(stat -c %Y "$d")" "$d"
	fi
done | sort -rn | tail -n +3 | cut -d' ' -f2- | xargs -r rm -rf
echo "$dir/obj"
