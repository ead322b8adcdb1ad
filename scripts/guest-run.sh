#!/bin/bash
# Runs inside the guest (chroot on the host root): the project's tests and
# the liburing suite with the module unloaded, loaded, and loaded+disabled.
# One line per test run in /run/results/results.txt: "pass|fail|skip NAME".
set -u
REPO=$1
RES=/run/results
OUT=$RES/results.txt
BUILD=$REPO/build
SYSFS=/sys/kernel/io_uring_handoff
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# the host's IOUH_* variables, see run-vm.sh
. $RES/guest.env
LTMO=${IOUH_TIMEOUT:-60}
export IOUH_TMPFS=/tmp/iouh IOUH_EXT4=/run/ext4/iouh
mkdir -p "$IOUH_TMPFS" "$IOUH_EXT4"
: > "$OUT"
ip link set lo up 2>/dev/null || busybox ip link set lo up

record() { echo "$1 $2" >> "$OUT"; echo "[$1] $2"; }

run_one() {	# phase name cmd...
	local phase=$1 name=$2 rc
	shift 2
	timeout "$LTMO" "$@" > /tmp/test.out 2>&1
	rc=$?
	case $rc in
	0) record pass "$phase/$name" ;;
	77) record skip "$phase/$name" ;;
	*) record fail "$phase/$name"; echo "--- $phase/$name rc=$rc"; tail -n 20 /tmp/test.out ;;
	esac
}

# IOUH_TESTS: only these project tests (names without a path)
project_tests() {	# mode
	export IOUH_MODE=$1
	for t in "$BUILD"/tests/*; do
		[ -x "$t" ] || continue
		[ -n "${IOUH_TESTS:-}" ] &&
			[[ " $IOUH_TESTS " != *" $(basename "$t") "* ]] && continue
		run_one "$1" "tests/$(basename "$t")" "$t"
	done
}

liburing_suite() {	# phase
	local dir=/tmp/liburing-test t name
	rm -rf "$dir"
	cp -a "$BUILD/liburing/test" "$dir"
	cd "$dir" || return
	for t in *.t; do
		name=${t%.t}
		if grep -qx "$name .*" "$REPO/tests/liburing-skip.txt" 2>/dev/null ||
		   grep -q "^$name " "$REPO/tests/liburing-skip.txt"; then
			record skip "$1/liburing/$name"
			continue
		fi
		run_one "$1" "liburing/$name" "./$t"
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

want project && project_tests stock
want liburing && liburing_suite stock

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
want project && project_tests handoff
unset IOUH_EXPECT_HANDOFF
want liburing && liburing_suite handoff
(cd $SYSFS && grep . *) > $RES/counters-handoff.txt
echo 0 > $SYSFS/enabled
want project && project_tests disabled
(cd $SYSFS && grep . *) > $RES/counters-disabled.txt
echo 1 > $SYSFS/enabled
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
