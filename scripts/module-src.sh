#!/bin/bash
# Copy the module's source, and nothing else, to DIR: DIR/module (Kbuild,
# *.c, *.h) and DIR/arch/<arch>/*.c, the layout module/Kbuild expects. The
# out-of-tree builds (Makefile's build_module) and the DKMS package
# (dkms-deb.sh) take the same files from here.
# usage: module-src.sh DIR
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1/module"
cp "$REPO"/module/Kbuild "$REPO"/module/*.[ch] "$1/module/"
(cd "$REPO" && cp --parents arch/*/*.c "$1/")
