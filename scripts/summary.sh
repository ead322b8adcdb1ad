#!/bin/bash
# Count the guest's results, fail on kernel splats, print the closing line.
set -u
RES=$1
out=$RES/results.txt
bad=0
if [ ! -s "$out" ]; then
	echo "summary: no results from the guest"
	exit 1
fi
# a guest that never got to the end of guest-run.sh is a failure
if [ ! -f "$RES/guest-complete" ]; then
	echo "summary: the guest did not complete scripts/guest-run.sh, see $RES/guest.log:"
	tail -n 20 "$RES/guest.log" 2>/dev/null
	bad=1
fi
pass=$(grep -c '^pass ' "$out")
fail=$(( $(grep -c '^fail ' "$out") + bad ))
skip=$(grep -c '^skip ' "$out")
if grep -nE 'Oops|BUG:|WARNING:|possible recursive locking|circular locking|KASAN|Call Trace' \
	"$RES/console.log" "$RES/dmesg.txt" 2>/dev/null | head -n 40 | grep .; then
	echo "summary: kernel reported a problem in the guest (above)"
	fail=$((fail + 1))
	bad=1
fi
grep '^fail ' "$out" | sed 's/^/summary: /'
cat "$RES/accel"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ $bad = 0 ]
