#!/bin/bash
# Runs in the guest, sourced by guest-run.sh with the module loaded: the
# stress program (stress/iouh-stress.c) for IOUH_STRESS_SECS (120), while
# the module is unloaded and loaded again every IOUH_STRESS_CYCLE seconds
# (10); in between, every half second, enabled is written 0 then 1 (the
# same unregister without the unload). Every rmmod must finish within 30 s;
# one that doesn't fails the run's rmmod-cycles, and the cycling goes on;
# one still running at 25 s has its kernel stacks dumped, and the summary
# line gives the longest and the total rmmod time.
# IOUH_STRESS_SLOW (1) multiplies the program's time limits (--slow), for
# the debug kernel. The module runs
# with policy=inline, as many handoffs as the mix allows: the adaptive policy
# would punt most blocking requests upfront. Uses record(), load_module(),
# set_policy() and dump_stuck() from guest-run.sh; leaves the module loaded
# (policy adaptive).
# stress_suite stock: the same run on the stock kernel, no module.
STRESS=$BUILD/stress/iouh-stress
# rmmod and its timeout are busybox's, copied to the guest's tmpfs: the
# root is the host's over 9p without a cache, and under the stress kmod's
# exec took 10-40 s paging itself and its libraries in over 9p (its
# /proc/PID/stack, sampled: v9fs reads and lookups, never delete_module)
BB=/tmp/busybox

# sleep $1 seconds while the stress program $pid runs, toggling enabled
toggle_for() {
	local end=$((SECONDS + $1))

	while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.5
		echo 0 > $SYSFS/enabled && echo 1 > $SYSFS/enabled &&
			toggles=$((toggles + 1))
	done
}

# rmmod's kernel stack first (dump_stuck()'s walk of every task takes
# seconds with the stress running), then every task in D. busybox's
# timeout execs its program in its own pid (a forked child watches), so
# the pid of "$BB timeout" is rmmod's.
rmmod_stack() {	# pid of rmmod
	echo "--- rmmod $1 at ${SECONDS}s, $(grep -s '^State' /proc/$1/status)"
	cat /proc/$1/stack 2>/dev/null
	dump_stuck "$1"
}

stress_suite() {
	local secs=${IOUH_STRESS_SECS:-120} cycle=${IOUH_STRESS_CYCLE:-10}
	local slow=${IOUH_STRESS_SLOW:-1}
	local pid rc t0 cycles=0 toggles=0 bad=0 deadline phase=${1:-handoff}
	local took rpid wpid rmmod_max=0 rmmod_sum=0

	if [ ! -x "$STRESS" ]; then
		echo "stress: $STRESS not built"
		record fail "$phase/stress/run"
		return
	fi
	echo "stress: ${secs}s, rmmod/modprobe every ${cycle}s"
	cp "$(command -v busybox)" $BB || { record fail "$phase/stress/run"; return; }
	set_policy inline
	"$STRESS" --secs "$secs" --slow "$slow" > /tmp/stress.out 2>&1 &
	pid=$!
	deadline=$((SECONDS + secs + 120 * slow))
	while [ "$phase" != stock ] && kill -0 $pid 2>/dev/null; do
		toggle_for "$cycle"
		kill -0 $pid 2>/dev/null || break
		if [ $SECONDS -gt $deadline ]; then
			echo "stress: still running after $((secs + 120 * slow))s, killed"
			kill -9 $pid
			break
		fi
		t0=$SECONDS
		# the kernel stacks of a slow one (dump_stuck(), guest-run.sh)
		$BB timeout 30 $BB rmmod io_uring_handoff &
		rpid=$!
		(sleep 25; kill -0 $rpid 2>/dev/null && rmmod_stack $rpid) &
		wpid=$!
		wait $rpid
		rc=$?
		kill $wpid 2>/dev/null
		took=$((SECONDS - t0))
		rmmod_sum=$((rmmod_sum + took))
		[ $took -gt $rmmod_max ] && rmmod_max=$took
		if [ $rc != 0 ]; then
			# a failure, but the rest of the run still cycles
			echo "stress: rmmod exit $rc after $took s (timeout 30 s), at ${SECONDS}s"
			bad=1
			[ -r "$SYSFS/enabled" ] && continue
		fi
		sleep 1
		load_module || { bad=1; break; }
		set_policy inline
		cycles=$((cycles + 1))
	done
	wait $pid
	rc=$?
	tail -n 30 /tmp/stress.out
	echo "stress: $cycles rmmod/modprobe cycles (rmmod max ${rmmod_max}s," \
		"total ${rmmod_sum}s), $toggles enabled toggles"
	if [ $rc = 0 ]; then
		record pass "$phase/stress/run"
	else
		record fail "$phase/stress/run"
	fi
	[ "$phase" = stock ] && return
	if [ $bad = 0 ] && [ $cycles -gt 0 ]; then
		record pass "$phase/stress/rmmod-cycles"
	else
		record fail "$phase/stress/rmmod-cycles"
	fi
	[ -r "$SYSFS/enabled" ] || load_module
	set_policy adaptive
}
