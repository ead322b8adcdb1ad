#!/bin/bash
# Count the results of the host checks and of each guest lane, fail on
# kernel splats, print the closing line.
# usage: summary.sh HOST_RESULTS RESULTS_DIR...
# A lane is named after its directory: results -> main, results-debug ->
# debug; its failures are listed as LANE/phase/test.
set -u
host=$1
shift
pass=0 fail=0 skip=0
# lockdep, KASAN, RCU, list debugging, hung tasks and the rest of the splats
SPLAT='Oops|BUG:|WARNING:|possible recursive locking|circular locking|inconsistent lock state|suspicious RCU usage|KASAN|list_add corruption|list_del corruption|blocked for more than|Call Trace|Kernel panic|Out of memory'

count() {	# file prefix
	local p f s
	p=$(grep -c '^pass ' "$1")
	f=$(grep -c '^fail ' "$1")
	s=$(grep -c '^skip ' "$1")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	grep '^fail ' "$1" | sed "s|^fail |summary: fail $2|"
}

# what a failed test printed, from the lane's guest.log (CI keeps only this)
failed_output() {	# results_dir
	local name
	grep '^fail ' "$1/results.txt" | cut -d' ' -f2 | sort -u | head -n 5 |
	while read -r name; do
		echo "summary: $name printed:"
		awk -v h="--- $name rc=" 'index($0, h) == 1 { n = 12 }
			n > 0 && /^\[/ { n = 0 } n > 0 { print "  " $0; n-- }' \
			"$1/guest.log" 2>/dev/null | head -n 24
	done
}

[ -s "$host" ] && count "$host" ""
for res in "$@"; do
	lane=$(basename "$res")
	lane=${lane#results}
	lane=${lane#-}
	lane=${lane:-main}
	if [ ! -s "$res/results.txt" ]; then
		echo "summary: $lane: no results from the guest"
		fail=$((fail + 1))
		continue
	fi
	count "$res/results.txt" "$lane/"
	failed_output "$res"
	# a guest that never got to the end of guest-run.sh is a failure
	if [ ! -f "$res/guest-complete" ]; then
		echo "summary: $lane: the guest did not complete scripts/guest-run.sh, see $res/guest.log:"
		tail -n 20 "$res/guest.log" 2>/dev/null
		echo "summary: $lane: how the guest ended ($res/console.log):"
		grep -E 'IOUH-GUEST-DONE|Killed process|Kernel panic' \
			"$res/console.log" 2>/dev/null | tail -n 5
		fail=$((fail + 1))
	fi
	if grep -nE "$SPLAT" "$res/console.log" "$res/dmesg.txt" 2>/dev/null |
		head -n 40 | grep .; then
		echo "summary: $lane: the kernel reported a problem (above)"
		fail=$((fail + 1))
	fi
	echo "summary: $lane: $(cat "$res/accel" 2>/dev/null)"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
