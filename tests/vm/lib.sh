# shellcheck shell=sh
# tests/vm/lib.sh - what the shell tests of the VM share, sourced by them
# (sh or bash): the check lines in the style of the C tests (t_util.h):
# "ok - TEXT" or "FAIL - TEXT" per check, "# TEXT" for a note, and at the
# end "PASS: 0 failure(s)" or "FAIL: N failure(s)"; the counts of checks
# and failures; the temporary directory and the processes stopped on exit;
# waiting with a deadline; and an rpcbind for the tests that need one.
#
# A script sources it, then calls lib_init NAME: $TMP is a new directory,
# failures, checks and pids start empty, and the EXIT trap runs
# lib_cleanup (a script with more to undo sets its own trap and calls
# lib_cleanup from it).  A copy of a script in the build tree finds this
# file through @VM_LIB_SH@, which the build replaces (tests/vm/vm.am).

# lib_init NAME: the state of a test script; $TMP is NAME.XXXXXX.
lib_init() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	failures=0
	checks=0
	skips=0
	pids=
	trap lib_cleanup EXIT
}

# lib_cleanup: stop the processes in $pids, wait for them, remove $TMP.
lib_cleanup() {
	for lib_p in $pids; do
		kill "$lib_p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

# check_tail: sets lib_tail, what ends each check line: nothing, unless a
# script redefines it (the bash ones add the seconds they have run).
check_tail() {
	lib_tail=
}

# check STATUS TEXT: "ok - TEXT" if STATUS is 0, else "FAIL - TEXT", which
# counts in failures (a script that keeps its own state, without lib_init,
# may leave checks unset).
check() {
	checks=$((${checks:-0} + 1))
	check_tail
	if [ "$1" -eq 0 ]; then
		echo "ok - $2$lib_tail"
	else
		echo "FAIL - $2$lib_tail"
		failures=$((${failures:-0} + 1))
	fi
}

# skip TEXT: a check that cannot run here, "SKIP - TEXT"; counts in skips.
skip() {
	echo "SKIP - $1"
	skips=$((skips + 1))
}

# note TEXT...: "# TEXT".
note() {
	echo "# $*"
}

# show FILE [LINES]: FILE indented, all of it or its first LINES lines.
# The shell's own read: under TCG every program started costs.
show() {
	lib_n=0
	while IFS= read -r lib_l || [ -n "$lib_l" ]; do
		[ $# -ge 2 ] && [ "$lib_n" -ge "$2" ] && break
		printf '    %s\n' "$lib_l"
		lib_n=$((lib_n + 1))
	done <"$1"
}

# lib_done: the last line, "PASS: 0 failure(s)" or "FAIL: N failure(s)";
# returns 0 only if no check failed.
lib_done() {
	if [ "$failures" -eq 0 ]; then
		echo "PASS: 0 failure(s)"
	else
		echo "FAIL: $failures failure(s)"
	fi
	[ "$failures" -eq 0 ]
}

# need_rdma: exit 77 with a SKIP line if this machine has no RDMA device.
need_rdma() {
	if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
		echo "SKIP: no RDMA device"
		exit 77
	fi
}

# wait_until TRIES CMD...: run CMD every 0.2 s until it succeeds, at most
# TRIES + 1 times; the status of its last run.
wait_until() {
	lib_tries=$1
	shift
	lib_i=0
	until "$@"; do
		[ "$lib_i" -ge "$lib_tries" ] && return 1
		sleep 0.2
		lib_i=$((lib_i + 1))
	done
}

# has_line FILE PATTERN: FILE has a line matching PATTERN (grep).
has_line() {
	grep -q -- "$2" "$1" 2>/dev/null
}

# at_least N FILE PATTERN: FILE has N lines or more matching PATTERN.
at_least() {
	[ "$(grep -c -- "$3" "$2" 2>/dev/null)" -ge "$1" ]
}

# wait_for FILE PATTERN: until a line of FILE matches PATTERN (20 s).
wait_for() {
	wait_until 100 has_line "$1" "$2"
}

# rpcbind_answers: the rpcbind of this host answers.
rpcbind_answers() {
	rpcinfo -p 127.0.0.1 >/dev/null 2>&1
}

# on_both_netids PROG VERS: rpcinfo lists PROG VERS on rdma and on rdma6.
on_both_netids() {
	[ "$(rpcinfo 2>/dev/null | grep -c "^ *$1 *$2 *rdma6\? ")" -eq 2 ]
}

# rpcbind_start: an rpcbind of this script's own (its pid in RPCBIND and
# in pids), and a check that it answers and is still running: an rpcbind
# another test left behind answers too, and this one then aborts, whose
# registrations would not be ours.  1 with a failed check if rpcbind is
# not installed or does not answer within 20 s.
rpcbind_start() {
	if ! command -v rpcbind >/dev/null || ! command -v rpcinfo >/dev/null; then
		check 1 "rpcbind and rpcinfo installed (package rpcbind: tests/vm/run's PACKAGES)"
		return 1
	fi
	mkdir -p /run/rpcbind
	rpcbind -f &
	RPCBIND=$!
	pids="$pids $RPCBIND"
	if ! wait_until 100 rpcbind_answers; then
		check 1 "rpcbind started"
		return 1
	fi
	kill -0 "$RPCBIND" 2>/dev/null
	check $? "rpcbind started (pid $RPCBIND, still running)"
}

# rpcbind_up: if no rpcbind answers, start one (its pid in RPCBIND, empty
# otherwise) and wait up to 20 s for it; the status of rpcbind_answers.
rpcbind_up() {
	RPCBIND=
	if ! rpcbind_answers; then
		mkdir -p /run/rpcbind
		rpcbind -f &
		# shellcheck disable=SC2034 # the scripts stop it
		RPCBIND=$!
		wait_until 100 rpcbind_answers
	fi
	rpcbind_answers
}

# server_up NAME PROG CMD...: start CMD, an RPC server of program PROG
# version 1 (its output in $TMP/NAME, its pid in SERVER and in pids), wait
# up to 30 s for it to be registered on rdma and rdma6, and check that it
# is.  ping, stat and wireshark start their servers with it.
server_up() {
	lib_name=$1
	lib_prog=$2
	shift 2
	"$@" >"$TMP/$lib_name" 2>&1 &
	SERVER=$!
	pids="$pids $SERVER"
	wait_until 150 on_both_netids "$lib_prog" 1
	check $? "$lib_name (pid $SERVER) registered on rdma and rdma6"
}
