#!/bin/bash
# Runs inside the guest (chroot on the host root): the project's tests with
# the module unloaded, loaded and loaded+disabled, the liburing suite with it
# loaded, the stress suite, the operator checks. One line per test run in
# /run/results/results.txt: "pass|fail|skip NAME".
#
# IOUH_SUITES	project liburing stress operator (default: all but stress)
# IOUH_MODES	phases of the project tests: stock handoff handoff-single
#		handoff-defer disabled
# IOUH_TESTS	only these project tests (names without a path)
# IOUH_REPEAT	run each project and liburing test this many times (1), to
#		chase flakes
# IOUH_KO	insmod this build of the module instead of modprobe
# IOUH_TIMEOUT	per-test timeout in seconds (60)
# IOUH_LIBURING_TESTS	only these liburing tests (names without .t)
# IOUH_BUILD	the build tree of the tests (build/arm64 in the arm64 lane)
set -u
REPO=$1
RES=/run/results
OUT=$RES/results.txt
SYSFS=/sys/kernel/io_uring_handoff
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# the host's IOUH_* variables, see run-vm.sh
. $RES/guest.env
BUILD=${IOUH_BUILD:-$REPO/build}
LTMO=${IOUH_TIMEOUT:-60}
export IOUH_TMPFS=/tmp/iouh IOUH_EXT4=/run/ext4/iouh
mkdir -p "$IOUH_TMPFS" "$IOUH_EXT4"
: > "$OUT"
ip link set lo up 2>/dev/null || busybox ip link set lo up

record() { echo "$1 $2" >> "$OUT"; echo "[$1] $2"; }

# the module's policy, if it is loaded: adaptive|inline
set_policy() { [ -w $SYSFS/policy ] && echo "$1" > $SYSFS/policy; }

# the kernel stacks of a test that outlived its timeout, and of all in D
dump_stuck() {	# pid of timeout(1)
	local t
	for t in /proc/[0-9]*/task/[0-9]*; do
		grep -qs "^PPid:[[:space:]]*$1\$" "${t%/task/*}/status" ||
			grep -qs '^State:[[:space:]]*D' "$t/status" || continue
		echo "--- stuck: ${t#/proc/} ($(cat "$t/comm" 2>/dev/null)) $(grep -s '^State' "$t/status")"
		cat "$t/stack" 2>/dev/null
	done
}

# a debug kernel's named delay points (tests/helpers.h): a test that was
# killed must not leave one set for the next
delay_points_off() {
	local p
	for p in /sys/module/handoff_hooks/parameters/delay_*; do
		[ -w "$p" ] && echo 0 > "$p"
	done
	return 0
}

run_one() {	# phase name cmd...
	local phase=$1 name=$2 rc tpid wd start=$SECONDS
	shift 2
	timeout -k 10 "$LTMO" "$@" > /tmp/test.out 2>&1 &
	tpid=$!
	# a test that SIGTERM doesn't end: say where it sleeps
	(sleep $((LTMO + 5)) && dump_stuck $tpid) &
	wd=$!
	wait $tpid
	rc=$?
	kill $wd 2>/dev/null
	wait $wd 2>/dev/null
	delay_points_off
	echo "    $phase/$name: $((SECONDS - start))s"
	# what a test noted, whatever its outcome
	grep '^note:' /tmp/test.out | sed "s|^|    $phase/$name: |"
	case $rc in
	0) record pass "$phase/$name" ;;
	77) record skip "$phase/$name" ;;
	*)
		if [ -n "${KNOWN_FAIL:-}" ]; then
			record skip "$phase/$name"
			echo "--- $phase/$name rc=$rc, fails on stock too"
			return
		fi
		record fail "$phase/$name"
		echo "--- $phase/$name rc=$rc"
		tail -n 60 /tmp/test.out ;;
	esac
}

# The tests of the ring phases: those whose rings are IOUH_RING's kind
# (tests/helpers.h), the identity suite and the exactness of results. The
# window_* tests act on the tid, whatever the ring: once is enough.
RING_TESTS="id_* cqe_exact batch_tail inline_issue restart_cqe
	cancel_handed_off"
ring_test() {	# name
	local pat
	for pat in $RING_TESTS; do
		# shellcheck disable=SC2053
		[[ $1 == $pat ]] && return 0
	done
	return 1
}

# The project tests force handoffs: with the module loaded each starts with
# policy=inline, or the adaptive policy would punt a forced blocking fsync
# once ext4 fsyncs have slept a few times (tests/policy_adaptive tests it).
# A ring phase (IOUH_RING set) runs RING_TESTS in mode handoff.
project_tests() {	# phase [ring]
	local name
	export IOUH_MODE=${1%%-*} IOUH_RING=${2:-plain}
	for t in "$BUILD"/tests/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		name=$(basename "$t")
		[ -n "${IOUH_TESTS:-}" ] &&
			[[ " $IOUH_TESTS " != *" $name "* ]] && continue
		[ -n "${2:-}" ] && ! ring_test "$name" && continue
		for _ in $(seq "${IOUH_REPEAT:-1}"); do
			set_policy inline
			run_one "$1" "tests/$name" "$t"
		done
	done
	unset IOUH_RING
	set_policy adaptive
}

# The differential suite (tests/diff/README.md): each scenario runs twice
# with the module loaded, enabled=0 (the stock paths) and then enabled=1
# with policy=inline (IOUH_EXPECT_HANDOFF set: it must hand off); both runs
# must pass and print the same lines, what the application observed.
diff_pair() {	# phase name command...
	local ph=$1 name=$2 rc0 rc1
	shift 2
	echo 0 > $SYSFS/enabled
	IOUH_MODE=disabled timeout -k 10 "$LTMO" "$@" > /tmp/diff.0 2> /tmp/diff.0.err
	rc0=$?
	echo 1 > $SYSFS/enabled
	set_policy inline
	IOUH_MODE=handoff timeout -k 10 "$LTMO" "$@" > /tmp/diff.1 2> /tmp/diff.1.err
	rc1=$?
	set_policy adaptive
	if [ $rc0 = 0 ] && [ $rc1 = 0 ] && cmp -s /tmp/diff.0 /tmp/diff.1; then
		record pass "$ph/diff/$name"
		return
	fi
	record fail "$ph/diff/$name"
	echo "--- $ph/diff/$name rc=$rc0 (enabled=0), $rc1 (enabled=1)"
	cat /tmp/diff.0.err /tmp/diff.1.err
	diff -u --label enabled=0 --label enabled=1 /tmp/diff.0 /tmp/diff.1 | head -n 40
}

diff_suite() {	# phase
	local t name seed
	for t in "$BUILD"/tests/diff/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		name=$(basename "$t")
		[ -n "${IOUH_TESTS:-}" ] &&
			[[ " $IOUH_TESTS " != *" $name "* ]] && continue
		diff_pair "$1" "$name" "$t"
	done
	# the stress run's differential mode: IOUH_REPLAY_BATCHES batches per
	# ring (make test-main sets it; 0, the default: not run), one seed
	# per boot, the same in both runs
	t=$BUILD/stress/iouh-stress
	[ -x "$t" ] && [ "${IOUH_REPLAY_BATCHES:-0}" -gt 0 ] || return 0
	[ -n "${IOUH_TESTS:-}" ] &&
		[[ " $IOUH_TESTS " != *" stress_replay "* ]] && return 0
	seed=$(( $(date +%s) % 100000 ))
	echo "diff: stress_replay seed $seed"
	diff_pair "$1" stress_replay "$t" --replay "$IOUH_REPLAY_BATCHES" \
		--seed "$seed"
	# its summaries: ops, time, the handoffs of the enabled=1 run
	tail -n 1 /tmp/diff.0.err /tmp/diff.1.err
}

# liburing's suite. tests/liburing-skip.txt: not run (why, per line);
# tests/liburing-slow.txt: run only with IOUH_LIBURING_SLOW (1: with the
# rest, only: alone; "make test-liburing-slow"), out of make test's budget;
# tests/liburing-stock.txt: each test's result on the stock kernel, from
# "make liburing-baseline". With the module, a test that fails counts as a
# failure only if it passed on stock.
liburing_suite() {	# phase
	local dir=/tmp/liburing-test t name base
	rm -rf "$dir"
	cp -a "$BUILD/liburing/test" "$dir"
	cd "$dir" || return
	for t in *.t; do
		name=${t%.t}
		[ -n "${IOUH_LIBURING_TESTS:-}" ] &&
			[[ " $IOUH_LIBURING_TESTS " != *" $name "* ]] && continue
		if grep -q "^$name " "$REPO/tests/liburing-slow.txt"; then
			if [ -z "${IOUH_LIBURING_SLOW:-}" ]; then
				record skip "$1/liburing/$name"
				continue
			fi
		elif [ "${IOUH_LIBURING_SLOW:-}" = only ]; then
			continue
		fi
		if grep -q "^$name " "$REPO/tests/liburing-skip.txt"; then
			record skip "$1/liburing/$name"
			continue
		fi
		base=$(sed -n "s/^\([a-z]*\) $name\$/\1/p" \
			"$REPO/tests/liburing-stock.txt" 2>/dev/null)
		KNOWN_FAIL=
		[ "$1" != stock ] && [ -n "$base" ] && [ "$base" != pass ] &&
			KNOWN_FAIL=1
		for _ in $(seq "${IOUH_REPEAT:-1}"); do
			run_one "$1" "liburing/$name" "./$t"
		done
	done
	cd / && rm -rf "$dir"
}

module_check() {	# expect: loaded|unloaded
	if [ "$1" = loaded ] && [ -r $SYSFS/enabled ]; then
		record pass "module/$1"
	elif [ "$1" = unloaded ] && [ ! -e $SYSFS ]; then
		record pass "module/$1"
	else
		record fail "module/$1"
	fi
}

echo "guest: $(uname -r), $(nproc) cpus"
SUITES=${IOUH_SUITES:-project liburing operator}
want() { case " $SUITES " in *" $1 "*) return 0 ;; esac; return 1; }

# a bench boot runs only the benchmark, see scripts/bench-guest.sh
if want bench; then
	if bash "$REPO/scripts/bench-guest.sh" "$REPO" "$RES"; then
		record pass bench
	else
		record fail bench
	fi
	dmesg > $RES/dmesg.txt
	echo "guest: done"; : > $RES/guest-complete
	exit 0
fi

MODES=${IOUH_MODES:-stock handoff handoff-single handoff-defer disabled}
mode() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }

mode stock && want project && project_tests stock
want liburing-stock && liburing_suite stock
want stress-stock && . "$REPO/scripts/guest-stress.sh" && stress_suite stock

# the DKMS copy through modules.dep, as an operator loads it; IOUH_KO
# names another build of the module to insmod instead (A/B of module code)
load_module() {
	if [ -n "${IOUH_KO:-}" ]; then
		insmod "$IOUH_KO"
	else
		modprobe io_uring_handoff
	fi
}
if load_module; then
	record pass module/modprobe
else
	record fail module/modprobe
fi
module_check loaded
# with the module loaded the id_* tests require a handoff, not just allow one
IOUH_EXPECT_HANDOFF=1
export IOUH_EXPECT_HANDOFF
mode handoff && want project && project_tests handoff
mode handoff && want project && diff_suite handoff
# SINGLE_ISSUER, and SINGLE_ISSUER|DEFER_TASKRUN with a registered ring fd
mode handoff-single && want project && project_tests handoff-single single
mode handoff-defer && want project && project_tests handoff-defer defer+regfd
unset IOUH_EXPECT_HANDOFF
# once, with the module: tests/liburing-skip.txt lists what fails on stock
want liburing && liburing_suite handoff
want stress && . "$REPO/scripts/guest-stress.sh" && stress_suite
(cd $SYSFS && grep . *) > $RES/counters-handoff.txt
if mode disabled; then
	echo 0 > $SYSFS/enabled
	want project && project_tests disabled
	(cd $SYSFS && grep . *) > $RES/counters-disabled.txt
	echo 1 > $SYSFS/enabled
fi
if rmmod io_uring_handoff; then
	record pass module/rmmod
else
	record fail module/rmmod
fi
if want operator; then
	. "$REPO/scripts/guest-operator.sh"
	operator_checks
fi
module_check unloaded

dmesg > $RES/dmesg.txt
echo "guest: done"; : > $RES/guest-complete
# the exit status reaches the host (run-vm.sh): 1 if a test failed
! grep -q '^fail ' "$OUT"
