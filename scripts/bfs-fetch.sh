#!/bin/bash
# The bench's bfs client: Debian unstable's bfs 4.1.4-1 binary (its source
# package is 404 on the mirror) and, since it needs glibc 2.38 and Debian
# 12 has 2.36, unstable's libc6 beside it, in DIR, not installed. DIR/bfs
# runs it with that libc's loader; the rest (liburing 2.15, libacl, libcap,
# libonig) comes from the host. Exits 1 if either package can't be had.
# usage: bfs-fetch.sh DIR
set -euo pipefail
dir=$1
[ -x "$dir/bfs" ] && exit 0
rm -rf "$dir"
mkdir -p "$dir/deb"
cd "$dir/deb"
apt-get download -q bfs=4.1.4-1 libc6/unstable > /dev/null 2>&1 ||
	{ echo "bfs-fetch: apt-get download bfs=4.1.4-1 libc6/unstable failed" >&2
	  exit 1; }
dpkg-deb -x bfs_4.1.4-1_*.deb "$dir/bfs-root"
dpkg-deb -x libc6_*.deb "$dir/libc-root"
cat > "$dir/bfs" <<'EOS'
#!/bin/sh
d=$(dirname "$(readlink -f "$0")")
l=$d/libc-root/usr/lib/x86_64-linux-gnu
exec "$l/ld-linux-x86-64.so.2" \
	--library-path "$l:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
	"$d/bfs-root/usr/bin/bfs" "$@"
EOS
chmod +x "$dir/bfs"
"$dir/bfs" --version | head -n 1
