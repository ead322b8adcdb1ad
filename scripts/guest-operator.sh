#!/bin/bash
# Runs in the guest, sourced by guest-run.sh: the operators' path. modprobe
# of what DKMS built from the package (scripts/dkms.sh), modinfo, its
# signature, the ABI refusal, rmmod under load, iouh-ab as installed.
# Uses record() from guest-run.sh.
NAME=io_uring_handoff
BADKO=$BUILD/module-badabi/module/$NAME.ko
BENCH=$BUILD/bench/iouh-bench

op_check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@" > /tmp/op.out 2>&1; then
		record pass "operator/$name"
		sed 's/^/    /' /tmp/op.out
	else
		record fail "operator/$name"
		echo "--- operator/$name"
		tail -n 20 /tmp/op.out
	fi
}

# modinfo names the DKMS copy and documents every parameter
# version dkms.conf's, hook_abi the kernel header's, every parameter described
op_modinfo() {
	local ver abi
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$REPO/dkms.conf")
	abi=$(sed -n 's/^+#define IO_URING_HANDOFF_ABI[[:space:]]*\([0-9]*\)$/\1/p' \
		"$REPO/core-hooks.patch")
	modinfo -n $NAME | grep -q /updates/dkms/ &&
	modinfo $NAME | grep -q '^description:' &&
	[ "$(modinfo -F version $NAME)" = "$ver" ] &&
	[ "$(modinfo -F hook_abi $NAME)" = "$abi" ] &&
	modinfo $NAME | grep -q '^parm: *enabled:.' &&
	modinfo $NAME | grep -q '^parm: *policy:.' &&
	modinfo $NAME | grep -q '^parm: *cgroup:.' &&
	! modinfo -p $NAME | grep -v '^[a-z_]*:[^ ]' ||
		{ echo "version $(modinfo -F version $NAME) (dkms.conf $ver), hook_abi $(modinfo -F hook_abi $NAME) ($abi)"; modinfo -p $NAME; return 1; }
	op_params_documented
}

# every parameter modinfo lists is in the README's list, as name=default
op_params_documented() {
	local p missing=
	for p in $(modinfo -p $NAME | cut -d: -f1); do
		grep -q "^- \`$p=" "$REPO/README.md" || missing="$missing $p"
	done
	[ -z "$missing" ] || { echo "README doesn't document:$missing"; return 1; }
}

op_modprobe() {
	modprobe $NAME && [ -r $SYSFS/enabled ] &&
	[ "$(cat /sys/module/$NAME/parameters/enabled)" = Y ] &&
	[ -d /sys/kernel/tracing/events/io_uring_handoff ]
}

op_rmmod() {
	local i
	for i in $(seq 50); do
		modprobe -r $NAME 2>/dev/null && [ ! -e $SYSFS ] && return 0
		sleep 0.2
	done
	return 1
}

# The module's own dmesg lines: not the kernel's one-time "module
# verification failed" of the first unsigned module it loads (the test
# kernel checks signatures, and the copy built here is unsigned).
mod_lines() {
	dmesg | grep "$NAME:" | grep -vc 'module verification failed'
}

# a module built against another hook ABI: refused, one line in dmesg
op_badabi() {
	local before after
	before=$(mod_lines)
	insmod "$BADKO" 2>/dev/null && { rmmod $NAME; return 1; }
	after=$(mod_lines)
	[ ! -e $SYSFS ] && [ $((after - before)) = 1 ] &&
	dmesg | grep "$NAME:" | tail -n 1 | grep -q 'refused hook ABI'
}

# requests issued inline so far: slept or not
inline_sum() {
	cat $SYSFS/inline_issued
}

# rmmod while fsyncs are issued inline: the benchmark goes on as stock,
# modprobe again brings the inline issue back, nothing leaks. policy=inline:
# every blocking fsync hands off, the adaptive policy would punt most
op_rmmod_load() {
	local pid n0 n1 threads
	modprobe $NAME policy=inline || return 1
	"$BENCH" --op fsync --dir "$IOUH_EXT4" --qd 8 --secs 30 > /tmp/op.bench 2>&1 &
	pid=$!
	sleep 3
	n0=$(inline_sum) || return 1
	[ "$n0" -gt 0 ] || { echo "no inline issue before rmmod"; return 1; }
	SECONDS=0
	op_rmmod || { echo "rmmod kept failing under load"; return 1; }
	echo "rmmod under load took ${SECONDS}s"
	sleep 2
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		echo "benchmark ended (rc $?) with the module:"
		cat /tmp/op.bench
		return 1
	fi
	modprobe $NAME policy=inline || return 1
	sleep 3
	n1=$(inline_sum)
	[ "$n1" -gt 0 ] || { echo "no inline issue after modprobe"; return 1; }
	wait $pid || { echo "benchmark failed"; cat /tmp/op.bench; return 1; }
	threads=$(ls /proc/$pid/task 2>/dev/null | wc -l)
	[ "$threads" = 0 ] || { echo "benchmark threads left: $threads"; return 1; }
	[ "$(cat /sys/module/$NAME/refcnt)" = 0 ] ||
		{ echo "module refcnt $(cat /sys/module/$NAME/refcnt)"; return 1; }
	op_rmmod
}

# Secure Boot's half we can test: DKMS signed its copy with its own key
# (scripts/dkms.sh), which the test kernel trusts as a machine trusts an
# enrolled MOK (kernel.sh), so it loads without the unsigned-module taint:
# out of tree (O) only. make module's copy, unsigned, shows E: the check
# can fail.
op_signed() {
	local signer taint
	signer=$(modinfo -F signer $NAME)
	[ "$signer" = "DKMS module signing key" ] ||
		{ echo "DKMS copy signed by '$signer'"; return 1; }
	modprobe $NAME || return 1
	taint=$(cat /sys/module/$NAME/taint)
	op_rmmod || return 1
	[ "$taint" = O ] || { echo "DKMS copy loaded with taint '$taint'"; return 1; }
	insmod "$BUILD/module/module/$NAME.ko" || return 1
	taint=$(cat /sys/module/$NAME/taint)
	op_rmmod || return 1
	case $taint in
	*E*) echo "signed: taint O; unsigned: taint $taint" ;;
	*) echo "unsigned copy loaded with taint '$taint', no E"; return 1 ;;
	esac
}

# iouh-ab, the operators' A/B of any command, as the package installs it
# (/usr/sbin/iouh-ab from io-uring-handoff-dkms, scripts/iouh-ab): a short
# statx benchmark in both modes, inline issues counted only with enabled=1,
# the CSV form, --watch, enabled restored, a clear refusal once unloaded
op_ab() {
	local ab=/usr/sbin/iouh-ab n0 n1 rc
	modprobe $NAME policy=inline || return 1
	"$ab" --rounds 2 --warmup 1 -- "$BENCH" --op statx \
		--dir "$IOUH_TMPFS" --qd 1 --secs 1 > /tmp/op.ab || return 1
	cat /tmp/op.ab
	grep -q '^enabled=0 ' /tmp/op.ab && grep -q '^enabled=1 ' /tmp/op.ab &&
		grep -q 'min/median/max: ' /tmp/op.ab ||
		{ echo "no table"; return 1; }
	n0=none n1=none
	# no /dev/fd in the guest: a here-string, not < <(...)
	read -r n0 n1 <<< "$(sed -n 's/^inline_issued *\([0-9]*\) *\([0-9]*\)$/\1 \2/p' /tmp/op.ab)"
	n0=${n0:-none} n1=${n1:-none}
	[ "$n0" = 0 ] && [ "$n1" != none ] && [ "$n1" -gt 0 ] ||
		{ echo "inline_issued moved $n0 (enabled=0), $n1 (enabled=1)"; return 1; }
	[ "$(cat $SYSFS/enabled)" = 1 ] || { echo "enabled not restored"; return 1; }
	"$ab" --rounds 2 --warmup 0 --csv -- true > /tmp/op.csv &&
		[ "$(wc -l < /tmp/op.csv)" = 5 ] &&
		head -n 1 /tmp/op.csv | grep -q '^round,enabled,wall_s,cpu_s,.*inline_issued' ||
		{ echo "CSV:"; cat /tmp/op.csv; return 1; }
	[ "$("$ab" --watch --count 2 --interval 0.5 | wc -l)" = 3 ] ||
		{ echo "--watch: not a header and 2 lines"; return 1; }
	op_rmmod || return 1
	"$ab" -- true 2> /tmp/op.err
	rc=$?
	[ $rc = 2 ] && grep -q 'not loaded' /tmp/op.err ||
		{ echo "unloaded: rc $rc, $(cat /tmp/op.err)"; return 1; }
}

operator_checks() {
	op_check modinfo op_modinfo
	op_check badabi-refused op_badabi
	op_check modprobe op_modprobe
	op_check rmmod op_rmmod
	op_check dkms-signed op_signed
	op_check rmmod-under-load op_rmmod_load
	op_check iouh-ab op_ab
	# whatever the outcome, leave no benchmark and no module behind
	pkill -f iouh-bench
	op_rmmod
}
