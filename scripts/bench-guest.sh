#!/bin/bash
# Runs inside the test guest as root, called from scripts/guest-run.sh: the
# A/B benchmark of the RFC cover letter with build/bench/iouh-bench.
# usage: bench-guest.sh REPO OUTDIR
#
# For every cell (op, fs, qd) and round, in the same boot and back to back:
#   baseline  the module unloaded (the kernel is stock)
#   handoff   the module loaded, enabled=1, policy=adaptive (its default)
#   inline    the module loaded, enabled=1, policy=inline (no adaptive punt)
#   nodepth   handoff with depth_max=0 (the adaptive policy without its
#             depth, for an A/B of that setting; not in the defaults)
#   punt      handoff with the cgroup setting on an empty cgroup: every
#             request the module is asked about takes the stock punt
#             (fallback_scope), its hooks live; what being loaded costs
#             without an inline issue or a handoff (not in the defaults)
#   disabled  the module loaded, enabled=0
#   sync      iouh-bench --sync, the same op as a one thread syscall loop
# in the order of BENCH_MODES on odd rounds and reversed on even
# rounds, so slow drift cancels out of the medians.
#
# $OUTDIR/raw.txt gets one line per run: iouh-bench's line (workers= is the
# io-wq threads alive at its end) with mode= set to the A/B mode, then
# round=R; handoff and disabled runs also get the deltas of the module's
# handoffs and inline_done counters and of all fallback_* counters summed,
# and the policy's estimate for the op after the run (rate=, % of recent
# inline issues that slept, from the rates file; - if it has none):
#   op=fsync fs=tmpfs qd=1 mode=handoff ops=221000.0 cpu=100.0 workers=1 round=1 handoffs=0 inline_done=442000 fallbacks=3 rate=0
# A failed run is a comment line "# fail ... rc=N" and makes the exit status 1.
# $OUTDIR/env.txt: key=value lines (kernel, vcpus, secs, rounds, ops, qds, fs).
#
# Then the clients (BENCH_CLIENTS): programs users run, each cell module
# unloaded (baseline) vs loaded with its defaults (handoff), interleaved,
# BENCH_CLIENT_ROUNDS rounds; a line per run like the above with op= the
# client cell, ops= its requests/s (fio: read + write IOPS), cpu= its
# user + system CPU %, ctx= its context switches, and in mode handoff the
# deltas of inline_issued, handoffs and each fallback_* counter that moved
# (fb_<reason>=N):
#   fio-fsync    fio write 4k, fsync after each write, qd 1 and 32
#   fio-fsync4   the same, fsync after every 4th write, qd 32
#   fio-randrw   fio buffered random read/write 4k with crc32c verify,
#                qd 8 and 32
#   fio-write    fio buffered sequential write 4k, no fsync, qd 1 and 32
#   bfs          bfs -jQD (QD-1 io_uring rings) walking a tree of
#                BFS_DIRS x BFS_FILES files again and again for
#                BENCH_CLIENT_SECS, qd 2 and 4; ops= entries/s, each
#                run's first walk checked against find's output
#   bfs-stat     the same walk with -size -1000M, which every entry
#                matches: bfs then stats every entry eagerly through its
#                rings (statx, punted by stock), where a plain walk only
#                opens directories (openat, which stock issues inline
#                from the dentry cache) and closes them
# fio is Debian's package (bookworm: 3.33), found on PATH; bfs is Debian
# unstable's 4.1.4-1 binary with unstable's libc beside it
# (scripts/bfs-fetch.sh, BENCH_BFS: its wrapper); a client that isn't
# there is skipped with a comment line "# skip CLIENT: why".
#
# Environment: IOUH_TMPFS and IOUH_EXT4 (directories on tmpfs and on the
# ext4 disk, as set by guest-run.sh); as make bench's caller set them
# (run-vm.sh passes them on), BENCH_SECS (2), BENCH_ROUNDS
# (3), BENCH_OPS ("fsync statx fadvise renameat openat splice unlinkat
# treewalk walkread nop cost"; "" none, the clients only), BENCH_QDS (all ops but
# cost, which is qd 1 without a sync mode; unset: "1 8 32", unlinkat "1 32
# 128", nop "1"), BENCH_FS ("tmpfs ext4"), BENCH_MODES ("baseline handoff
# inline disabled sync"), BENCH_CLIENTS ("fio-fsync fio-fsync4
# fio-randrw fio-write"; "" none), BENCH_CLIENT_ROUNDS (5), BENCH_CLIENT_SECS
# (3), BENCH_CLIENT_MODES ("baseline handoff").
set -u
REPO=$1
OUTDIR=$2
BIN=$REPO/build/bench/iouh-bench
KO=$REPO/build/module/module/io_uring_handoff.ko
SYSFS=${IOUH_SYSFS:-/sys/kernel/io_uring_handoff}	# overridable to test on a host
SECS=${BENCH_SECS:-2}
ROUNDS=${BENCH_ROUNDS:-3}
OPS=${BENCH_OPS-fsync statx fadvise renameat openat splice unlinkat treewalk walkread nop cost}
QDS=${BENCH_QDS:-}
FSS=${BENCH_FS:-tmpfs ext4}
MODES=${BENCH_MODES:-baseline handoff inline disabled sync}
CLIENTS=${BENCH_CLIENTS-fio-fsync fio-fsync4 fio-randrw fio-write bfs bfs-stat}
BFS=${BENCH_BFS:-$REPO/build/bench/bfs/bfs}
BFS_DIRS=150
BFS_FILES=200
CROUNDS=${BENCH_CLIENT_ROUNDS:-5}
CSECS=${BENCH_CLIENT_SECS:-3}
CMODES=${BENCH_CLIENT_MODES:-baseline handoff}
RAW=$OUTDIR/raw.txt
ERR=$(mktemp /tmp/iouh-bench.err.XXXXXX)
# a run takes SECS plus setup and drain; allow for a slow (TCG) guest
TMO=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 4 + 60 }')
FAILED=0

die() { echo "bench: $*" >&2; exit 1; }

mod_loaded() { [ -e "$SYSFS" ]; }

mod_unload() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		mod_loaded || return 0
		rmmod io_uring_handoff 2>/dev/null
		mod_loaded || return 0
		sleep 0.5
	done
	echo "bench: rmmod io_uring_handoff failed" >&2
	return 1
}

mod_enable() {	# 0|1 [policy]
	if ! mod_loaded && ! insmod "$KO"; then
		echo "bench: insmod $KO failed" >&2
		return 1
	fi
	echo "$1" > "$SYSFS/enabled" && [ "$(cat "$SYSFS/enabled")" = "$1" ] ||
		return 1
	# every request a candidate again, whatever mode punt set
	mod_setting cgroup "" || return 1
	[ -z "${2:-}" ] && return 0
	echo "$2" > "$SYSFS/policy" && [ "$(cat "$SYSFS/policy")" = "$2" ]
}

# a setting of the module, written and read back
mod_setting() {	# name value
	echo "$2" > "$SYSFS/$1" && [ "$(cat "$SYSFS/$1")" = "$2" ]
}

# mode punt: the cgroup setting names a cgroup no task is in
SCOPE_NOBODY=/iouh-bench-nobody
scope_nobody() {
	local cg=/sys/fs/cgroup
	if [ ! -d "$cg$SCOPE_NOBODY" ]; then
		mountpoint -q "$cg" || mount -t cgroup2 none "$cg" || return 1
		mkdir "$cg$SCOPE_NOBODY" || return 1
	fi
	mod_setting cgroup "$SCOPE_NOBODY"
}

# the module's default depth_max, read at the first load
DEPTH_MAX=

set_mode() {
	case $1 in
	baseline) mod_unload ;;
	handoff) mod_enable 1 adaptive &&
		{ [ -z "$DEPTH_MAX" ] || mod_setting depth_max "$DEPTH_MAX"; } ;;
	nodepth) mod_enable 1 adaptive && mod_setting depth_max 0 ;;
	punt) mod_enable 1 adaptive && scope_nobody ;;
	inline) mod_enable 1 inline ;;
	disabled) mod_enable 0 ;;
	sync) ;;	# syscalls only, whatever the module state
	*) return 1 ;;
	esac
}

counter() { cat "$SYSFS/$1" 2>/dev/null || echo 0; }

# the requests refused the inline issue, whatever the reason
fallbacks() { cat "$SYSFS"/fallback_* 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }

# the queue depths of op: a parallel rm runs deeper than the rest, nop is
# the floor of the qd 1 cells
qds() {	# op
	if [ "$1" = cost ]; then
		echo 1	# the microbench is qd 1 by definition
	elif [ -n "$QDS" ]; then
		echo "$QDS"
	elif [ "$1" = unlinkat ]; then
		echo 1 32 128
	elif [ "$1" = nop ]; then
		echo 1
	else
		echo 1 8 32
	fi
}

fs_dir() {
	case $1 in
	tmpfs) echo "${IOUH_TMPFS:?}/bench" ;;
	ext4) echo "${IOUH_EXT4:?}/bench" ;;
	*) die "unknown fs $1 (tmpfs, ext4)" ;;
	esac
}

modes() {	# round
	if [ $(($1 % 2)) = 1 ]; then
		echo $MODES
	else
		echo $MODES | tr ' ' '\n' | tac | tr '\n' ' '
	fi
}

# the policy's estimate for op on fs: "fsync ext4 93 16" lines, fs "-" for
# path-based ops (no file at issue)
rate() {	# op fs
	awk -v op="$1" -v fs="$2" '$1 == op && ($2 == fs || $2 == "-") {
		print $3; found = 1; exit } END { if (!found) print "-" }' \
		"$SYSFS/rates" 2>/dev/null || echo -
}

run_fail() {	# rc desc
	echo "# fail $2 rc=$1" >> "$RAW"
	echo "bench: FAIL $2 rc=$1"
	tail -n 5 "$ERR"
	FAILED=1
}

run_one() {	# op fs qd mode round
	local op=$1 fs=$2 qd=$3 mode=$4 r=$5 line rc h0 i0 f0 extra=
	local desc="op=$1 fs=$2 qd=$3 mode=$4 round=$5"
	local args=(--op "$op" --dir "$(fs_dir "$fs")" --qd "$qd"
		    --secs "$SECS" --label "$fs")

	# cost has its syscall loops in every mode
	[ "$op:$mode" = cost:sync ] && return
	: > "$ERR"
	if ! set_mode "$mode" 2> "$ERR"; then
		run_fail setup "$desc"
		return
	fi
	[ "$mode" = sync ] && args+=(--sync)
	h0=$(counter handoffs) i0=$(counter inline_done) f0=$(fallbacks)
	line=$(timeout "$TMO" "$BIN" "${args[@]}" 2> "$ERR")
	rc=$?
	case $mode in
	handoff | inline | disabled | nodepth | punt)
		extra=" handoffs=$(($(counter handoffs) - h0))"
		extra+=" inline_done=$(($(counter inline_done) - i0))"
		extra+=" fallbacks=$(($(fallbacks) - f0))"
		extra+=" rate=$(rate "$op" "$fs")" ;;
	esac
	case $line in
	"op=$op fs=$fs qd=$qd mode="*" ops="*" cpu="*) ;;
	*) [ $rc = 0 ] && rc=bad-output ;;
	esac
	if [ "$rc" != 0 ]; then
		run_fail "$rc" "$desc"
		return
	fi
	line=${line/ mode=io_uring / mode=$mode }
	echo "$line round=$r$extra" >> "$RAW"
}

run_cell() {	# op fs qd
	local r m
	for r in $(seq 1 "$ROUNDS"); do
		for m in $(modes "$r"); do
			run_one "$1" "$2" "$3" "$m" "$r"
		done
	done
}

# every counter of the module as "name value" lines, empty if unloaded
counters_all() {
	local f
	mod_loaded || return 0
	for f in "$SYSFS"/inline_issued "$SYSFS"/handoffs "$SYSFS"/fallback_*; do
		[ -r "$f" ] && echo "${f##*/} $(cat "$f")"
	done
}

# " inline_issued=N handoffs=N fb_<reason>=N ..." from two counters_all()
counter_deltas() {	# before after
	awk 'NR == FNR { b[$1] = $2; next }
	     { d = $2 - b[$1]; n = $1; sub(/^fallback_/, "fb_", n)
	       if (n !~ /^fb_/ || d) printf " %s=%d", n, d }' "$1" "$2"
}

client_qds() {	# client
	case $1 in
	fio-fsync | fio-write) echo 1 32 ;;
	fio-fsync4) echo 32 ;;
	fio-randrw) echo 8 32 ;;
	bfs | bfs-stat) echo 2 4 ;;
	esac
}

# the bfs client's tree in @dir, and find's sorted listing of it
bfs_tree() {	# dir
	local t=$1/bfs-tree d
	[ -r "$1/bfs-tree.find" ] && return
	rm -rf "$t"
	for d in $(seq 1 "$BFS_DIRS"); do
		mkdir -p "$t/d$d" && (cd "$t/d$d" && touch $(seq -f f%g 1 "$BFS_FILES")) ||
			return 1
	done
	sync
	find "$t" | sort > "$1/bfs-tree.find"
}

# bfs -j@qd [expression] over the tree until @secs are up: "ops=...
# cpu=... ctx=...", entries walked per second; fails if the first walk
# differs from find's (the expression must match every entry)
bfs_walks() {	# dir qd secs [expression...]
	timeout $((CSECS * 4 + 60)) \
		python3 - "$BFS" "$1/bfs-tree" "$1/bfs-tree.find" "$2" "$3" \
		"${@:4}" <<'PY'
import resource, subprocess, sys, time
bfs, tree, ref, qd, secs = sys.argv[1:6]
want = open(ref).read().split()
start, walks, entries = time.monotonic(), 0, 0
while not walks or time.monotonic() - start < float(secs):
    out = subprocess.run([bfs, "-j" + qd, tree] + sys.argv[6:], check=True,
                         stdout=subprocess.PIPE).stdout.decode().split()
    if not walks and sorted(out) != want:
        sys.exit("bfs output differs from find's: %d vs %d entries"
                 % (len(out), len(want)))
    walks += 1
    entries += len(out)
el = time.monotonic() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("ops=%.1f cpu=%.1f ctx=%d" % (entries / el,
      100 * (ru.ru_utime + ru.ru_stime) / el, ru.ru_nvcsw + ru.ru_nivcsw))
PY
}

# fio's job for a client cell, in the array FIO_ARGS
client_fio_args() {	# client dir qd
	FIO_ARGS=(--name=c --ioengine=io_uring --filename="$2/fio.dat"
		  --size=16m --bs=4k --iodepth="$3" --time_based
		  --runtime="$CSECS" --output-format=json)
	case $1 in
	fio-fsync) FIO_ARGS+=(--rw=write --fsync=1) ;;
	fio-fsync4) FIO_ARGS+=(--rw=write --fsync=4) ;;
	fio-randrw) FIO_ARGS+=(--rw=randrw --verify=crc32c) ;;
	fio-write) FIO_ARGS+=(--rw=write) ;;
	esac
}

# "ops=... cpu=... ctx=..." from fio's JSON on stdin; fails on a job error
fio_summary() {
	python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
if j.get("error"):
    sys.exit("fio job error %d" % j["error"])
print("ops=%.1f cpu=%.1f ctx=%d" % (j["read"]["iops"] + j["write"]["iops"],
      j["usr_cpu"] + j["sys_cpu"], j["ctx"]))'
}

client_one() {	# client fs qd mode round
	local c=$1 fs=$2 qd=$3 mode=$4 r=$5 out rc extra=
	local desc="op=$c fs=$fs qd=$qd mode=$mode round=$r"
	local b=$ERR.before a=$ERR.after

	: > "$ERR"
	if ! set_mode "$mode" 2> "$ERR"; then
		run_fail setup "$desc"
		return
	fi
	rm -f "$(fs_dir "$fs")/fio.dat"
	sync
	counters_all > "$b"
	if [ "$c" = bfs ]; then
		out=$(bfs_walks "$(fs_dir "$fs")" "$qd" "$CSECS" 2> "$ERR")
	elif [ "$c" = bfs-stat ]; then
		out=$(bfs_walks "$(fs_dir "$fs")" "$qd" "$CSECS" \
			-size -1000M 2> "$ERR")
	else
		client_fio_args "$c" "$(fs_dir "$fs")" "$qd"
		out=$(set -o pipefail; timeout $((CSECS * 4 + 60)) \
			fio "${FIO_ARGS[@]}" 2> "$ERR" | fio_summary 2>> "$ERR")
	fi
	rc=$?
	counters_all > "$a"
	[ "$mode" = baseline ] || extra=$(counter_deltas "$b" "$a")
	rm -f "$b" "$a" "$(fs_dir "$fs")/fio.dat"
	case $out in
	"ops="*) ;;
	*) [ $rc = 0 ] && rc=bad-output ;;
	esac
	if [ "$rc" != 0 ]; then
		run_fail "$rc" "$desc"
		return
	fi
	echo "op=$c fs=$fs qd=$qd mode=$mode $out round=$r$extra" >> "$RAW"
}

client_modes() {	# round
	if [ $(($1 % 2)) = 1 ]; then
		echo $CMODES
	else
		echo $CMODES | tr ' ' '\n' | tac | tr '\n' ' '
	fi
}

# the clients section: skips a client that isn't installed
run_clients() {
	local c fs qd r m
	for c in $CLIENTS; do
		case $c in
		fio-*) if ! command -v fio > /dev/null; then
				echo "# skip $c: no fio on PATH (apt install fio)" >> "$RAW"
				echo "bench: skip $c, no fio"
				continue
			fi ;;
		bfs | bfs-stat)
			if [ ! -x "$BFS" ] || ! "$BFS" --version > /dev/null 2>&1; then
				echo "# skip $c: no $BFS (scripts/bfs-fetch.sh)" >> "$RAW"
				echo "bench: skip $c, no $BFS"
				continue
			fi
			for fs in $FSS; do
				echo "bench: bfs tree on $fs, elapsed ${SECONDS}s"
				bfs_tree "$(fs_dir "$fs")" ||
					die "cannot make the bfs tree on $fs"
			done ;;
		*) die "unknown client $c" ;;
		esac
		for fs in $FSS; do
			for qd in $(client_qds "$c"); do
				echo "bench: client $c $fs $qd, elapsed ${SECONDS}s"
				for r in $(seq 1 "$CROUNDS"); do
					for m in $(client_modes "$r"); do
						client_one "$c" "$fs" "$qd" "$m" "$r"
					done
				done
			done
		done
	done
}

[ -x "$BIN" ] || die "$BIN missing, build it with make -C bench"
[ -r "$KO" ] || die "$KO missing"
mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
: > "$RAW" || die "cannot write $RAW"
for fs in $FSS; do
	d=$(fs_dir "$fs")
	mkdir -p "$d" || die "cannot create $d"
done
trap 'mod_unload; rm -f "$ERR"' EXIT
# fail fast if the module cannot do the A/B at all
mod_enable 1 || die "cannot load and enable the module"
DEPTH_MAX=$(cat "$SYSFS/depth_max" 2>/dev/null)
mod_unload || die "cannot unload the module"

{
	echo "kernel=$(uname -r)"
	echo "vcpus=$(nproc)"
	echo "secs=$SECS"
	echo "rounds=$ROUNDS"
	echo "ops=$OPS"
	echo "qds=${QDS:-1 8 32, unlinkat 1 32 128, nop 1}"
	echo "fs=$FSS"
	echo "modes=$MODES"
	echo "clients=$CLIENTS"
	echo "client_rounds=$CROUNDS"
	echo "client_secs=$CSECS"
	echo "client_modes=$CMODES"
	echo "fio=$(fio --version 2>/dev/null || echo none)"
	echo "bfs=$("$BFS" --version 2>/dev/null | head -n 1 || echo none)"
} > "$OUTDIR/env.txt"

read -ra b <<< "$FSS"
ncells=0
for op in $OPS; do
	read -ra c <<< "$(qds "$op")"
	ncells=$((ncells + ${#b[@]} * ${#c[@]}))
done
i=0
SECONDS=0
for op in $OPS; do
	for fs in $FSS; do
		for qd in $(qds "$op"); do
			i=$((i + 1))
			echo "bench: cell $i/$ncells $op $fs $qd, elapsed ${SECONDS}s"
			sync
			run_cell "$op" "$fs" "$qd"
		done
	done
done
run_clients
for fs in $FSS; do
	rm -rf "$(fs_dir "$fs")"
done
mod_unload || FAILED=1
echo "bench: $ncells cells, $ROUNDS rounds in ${SECONDS}s, failed=$FAILED"
exit $FAILED
