#!/bin/bash
# Runs inside the test guest as root, called from scripts/guest-run.sh: the
# A/B benchmark of the RFC cover letter with build/bench/iouh-bench.
# usage: bench-guest.sh REPO OUTDIR
#
# For every cell (op, fs, qd) and round, in the same boot and back to back:
#   baseline  the module unloaded (the kernel is stock)
#   handoff   the module loaded, enabled=1, policy=adaptive (its default)
#   inline    the module loaded, enabled=1, policy=inline (no adaptive punt)
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
# Environment: IOUH_TMPFS and IOUH_EXT4 (directories on tmpfs and on the
# ext4 disk, as set by guest-run.sh); as make bench's caller set them
# (run-vm.sh passes them on), BENCH_SECS (2), BENCH_ROUNDS
# (3), BENCH_OPS ("fsync statx fadvise renameat openat splice unlinkat
# treewalk nop"), BENCH_QDS (all ops; unset: "1 8 32", unlinkat "1 32
# 128", nop "1"), BENCH_FS ("tmpfs ext4"), BENCH_MODES ("baseline handoff
# inline disabled sync").
set -u
REPO=$1
OUTDIR=$2
BIN=$REPO/build/bench/iouh-bench
KO=$REPO/build/module/module/io_uring_handoff.ko
SYSFS=${IOUH_SYSFS:-/sys/kernel/io_uring_handoff}	# overridable to test on a host
SECS=${BENCH_SECS:-2}
ROUNDS=${BENCH_ROUNDS:-3}
OPS=${BENCH_OPS:-fsync statx fadvise renameat openat splice unlinkat treewalk nop}
QDS=${BENCH_QDS:-}
FSS=${BENCH_FS:-tmpfs ext4}
MODES=${BENCH_MODES:-baseline handoff inline disabled sync}
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
	[ -z "${2:-}" ] && return 0
	echo "$2" > "$SYSFS/policy" && [ "$(cat "$SYSFS/policy")" = "$2" ]
}

set_mode() {
	case $1 in
	baseline) mod_unload ;;
	handoff) mod_enable 1 adaptive ;;
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
	if [ -n "$QDS" ]; then
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
	handoff | inline | disabled)
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
for fs in $FSS; do
	rm -rf "$(fs_dir "$fs")"
done
mod_unload || FAILED=1
echo "bench: $ncells cells, $ROUNDS rounds in ${SECONDS}s, failed=$FAILED"
exit $FAILED
