#!/bin/sh
# stat-tool.sh - rpcrdma-stat(1) on the host, from the build directory
# (make check): against tests/unit/statsock_serve, a stand-in program that
# serves fake objects through the library's statistics socket, whose
# counters grow by a known amount at each answer ("calls" by 5, "replies"
# by 4, a connection's "requests" by 3; "credits" 32 and "inflight" 2 stay).
# Checks the answer read by pid, by path and by scanning a directory, the
# growth -i prints, the number of samples -c makes, and each failure the
# tool names: no such process, no socket, a stale socket, not a socket, a
# stopped program (-W), an empty or missing directory, a program that exits
# between samples, usage errors.  tests/vm/stat.sh runs it against real
# RDMA programs in the VM.  One line per check; exit 0 only if all passed.
set -u
unset RPCRDMA_STATS_SOCKET RPCRDMA_STATS
STAT=./tools/rpcrdma-stat
SERVE=./tests/unit/statsock_serve
for f in "$STAT" "$SERVE"; do
	[ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done
# shellcheck source=tests/vm/lib.sh
. "${srcdir:-.}/tests/vm/lib.sh"
lib_init stat-tool
D=$TMP/sock
mkdir "$D"

cleanup() {	# a stopped stand-in must see its SIGTERM
	for p in $pids; do
		kill -CONT "$p" 2>/dev/null
	done
	lib_cleanup
}
trap cleanup EXIT

# run NAME ARGS...: the tool's stdout and stderr in $TMP/NAME, status rc
run() {
	name=$1
	shift
	echo "    \$ rpcrdma-stat $*"
	"$STAT" "$@" >"$TMP/$name" 2>&1
	rc=$?
	show "$TMP/$name" 12
	echo "    [exit $rc]"
}

# start NAME NOBJ: a stand-in serving NOBJ objects in $D, ready within
# 10 s; its pid in $NAME
start() {
	RPCRDMA_STATS_SOCKET=$D "$SERVE" "$2" >"$TMP/$1.out" 2>&1 &
	eval "$1=\$!"
	pids="$pids $!"
	wait_until 50 has_line "$TMP/$1.out" '^ready$'
}

stop() {	# stop PID: SIGTERM, on which a stand-in exits normally
	kill -TERM "$1"
	wait "$1"
}

# value FILE LABEL NAME [N]: the value of NAME of LABEL, the Nth time it
# is printed (the first by default): N counts samples
value() {
	awk -v p="rpcrdma: $2: " -v name="$3" -v want="${4:-1}" '
		substr($0, 1, length(p)) == p {
			n = split(substr($0, length(p) + 1), f, " ")
			for (i = 1; i < n; i += 2)
				if (f[i] == name && ++seen == want)
					print f[i + 1]
		}' "$1"
}

# ---- Reading -----------------------------------------------------------

start A 2
check $? "a stand-in program serves two objects (pid $A)"
[ -S "$D/rpcrdma.$A.sock" ]
check $? "its socket is $D/rpcrdma.$A.sock"

run once -d "$D" "$A"
[ $rc -eq 0 ] &&
	[ "$(sed -n 1p "$TMP/once")" = "pid $A (statsock_serve) $D/rpcrdma.$A.sock:" ] &&
	[ "$(value "$TMP/once" "fake 1" calls)" = 5 ] &&
	[ "$(value "$TMP/once" "fake 2" replies)" = 4 ] &&
	[ "$(value "$TMP/once" "fake 1 conn 192.0.2.5:40001" requests)" = 3 ] &&
	[ "$(value "$TMP/once" "fake 2 conn 192.0.2.5:40002" version)" = 2 ] &&
	! grep -q '^rpcrdma: \(pid\|end\)' "$TMP/once"
check $? "by pid: heading, both objects' counters and connections, exit 0"
[ "$(grep -c '^rpcrdma: fake 1: ' "$TMP/once")" -eq 9 ]
check $? "by pid: the nine lines of a client's counters"

run path "$D/rpcrdma.$A.sock"
[ $rc -eq 0 ] && [ "$(value "$TMP/path" "fake 1" calls)" = 10 ]
check $? "by socket path: the counters of the moment (calls 10 at the second answer)"

start B 1
check $? "a second stand-in (pid $B)"
run scan -d "$D"
first=$(grep '^pid ' "$TMP/scan" | sed -n 1p | cut -d' ' -f2)
second=$(grep '^pid ' "$TMP/scan" | sed -n 2p | cut -d' ' -f2)
lo=$A hi=$B
[ "$A" -gt "$B" ] && lo=$B hi=$A
[ $rc -eq 0 ] && [ "$first" = "$lo" ] && [ "$second" = "$hi" ] &&
	[ "$(grep -c '^pid ' "$TMP/scan")" -eq 2 ]
check $? "no argument: every socket of the directory, by pid ($lo, $hi)"

RPCRDMA_STATS_SOCKET=$D run env
[ $rc -eq 0 ] && [ "$(grep -c '^pid ' "$TMP/env")" -eq 2 ]
check $? "no argument, no -d: the directory RPCRDMA_STATS_SOCKET names"

# ---- Samples -------------------------------------------------------------

# B was asked twice (scan, env): calls 15 now, then 5 more at each sample
run samples -i 0.2 -c 3 -d "$D" "$B"
[ $rc -eq 0 ] && [ "$(grep -c '^sample ' "$TMP/samples")" -eq 3 ] &&
	[ "$(grep -c '^sample [0-9]* at [0-9:]*: growth in the last 0.2 s$' "$TMP/samples")" -eq 2 ]
check $? "-i 0.2 -c 3: three samples, the later two headed as growth"
c1=$(value "$TMP/samples" "fake 1" calls 1)
c2=$(value "$TMP/samples" "fake 1" calls 2)
c3=$(value "$TMP/samples" "fake 1" calls 3)
[ "$c1" = 15 ] && [ "$c2" = 5 ] && [ "$c3" = 5 ]
check $? "-i: the first sample as it is (calls $c1: 15), then the growth ($c2, $c3: 5)"
[ "$(value "$TMP/samples" "fake 1" credits 3)" = 32 ] &&
	[ "$(value "$TMP/samples" "fake 1 conn 192.0.2.5:40001" inflight 2)" = 2 ] &&
	[ "$(value "$TMP/samples" "fake 1 conn 192.0.2.5:40001" requests 3)" = 3 ]
check $? "-i: levels (credits 32, inflight 2) as they are, a connection's requests as growth (3)"

t0=$(date +%s%N)
run count -c 2 -d "$D" "$B"
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 0 ] && [ "$(grep -c '^sample ' "$TMP/count")" -eq 2 ] && [ $ms -ge 900 ]
check $? "-c 2 without -i: two samples a second apart (${ms} ms)"

# ---- Failures --------------------------------------------------------------

sleep 0 &
gone=$!
wait $gone
run nopid -d "$D" "$gone"
[ $rc -eq 1 ] && grep -q "rpcrdma.$gone.sock: no such process" "$TMP/nopid"
check $? "a pid that is gone: 'no such process', exit 1"

run nosock -d "$D" $$
[ $rc -eq 1 ] && grep -q "process $$ has no statistics socket $D/rpcrdma.$$.sock (it was not started with RPCRDMA_STATS_SOCKET=$D" "$TMP/nosock"
check $? "a live process without a socket: says so and how to make one, exit 1"

run partial -d "$D" "$A" "$gone"
[ $rc -eq 1 ] && grep -q "^pid $A " "$TMP/partial" && grep -q "no such process" "$TMP/partial"
check $? "one of two unreadable: the other printed, exit 1"

# SIGSTOP reaches every thread of the stand-in shortly after kill returns;
# the check needs them all stopped (state T), or it measures nothing
kill -STOP "$A"
i=0
while grep -qv '^[0-9]* ([^)]*) T' /proc/"$A"/task/*/stat 2>/dev/null &&
	[ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
t0=$(date +%s%N)
run stopped -W 1 -d "$D" "$A"
ms=$((($(date +%s%N) - t0) / 1000000))
kill -CONT "$A"
[ $rc -eq 1 ] && grep -q "no answer within the timeout (-W)" "$TMP/stopped" &&
	[ $ms -ge 900 ] && [ $ms -lt 10000 ]
check $? "a stopped program: 'no answer within the timeout' after -W 1 (${ms} ms), exit 1"
run resumed -d "$D" "$A"
[ $rc -eq 0 ]
check $? "once resumed it answers again (the stopped read did not wedge it)"

: >"$TMP/plain"
run notsock "$TMP/plain"
[ $rc -eq 1 ] && grep -q "plain: not a socket" "$TMP/notsock"
check $? "a file that is not a socket: 'not a socket', exit 1"

mkdir "$TMP/emptydir"
run empty -d "$TMP/emptydir"
[ $rc -eq 1 ] && grep -q "no statistics socket in $TMP/emptydir (start programs with RPCRDMA_STATS_SOCKET=$TMP/emptydir)" "$TMP/empty"
check $? "an empty directory: 'no statistics socket in DIR', exit 1"

run nodir -d "$TMP/missing"
[ $rc -eq 1 ] && grep -q "$TMP/missing: No such file or directory" "$TMP/nodir"
check $? "a missing directory: named, exit 1"

# a program that exits between samples: reported, and the tool ends
start C 1
: >"$TMP/ends"
t0=$(date +%s%N)
"$STAT" -i 0.25 -c 40 -d "$D" "$C" >"$TMP/ends" 2>&1 &
T=$!
until [ "$(grep -c '^pid ' "$TMP/ends")" -ge 2 ] || ! kill -0 $T 2>/dev/null; do
	sleep 0.05
done
stop "$C"
wait $T
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
grep -v '^rpcrdma' "$TMP/ends" | sed 's/^/    /' | head -n 20
n=$(grep -c '^pid ' "$TMP/ends")
[ $rc -eq 1 ] && [ "$n" -ge 2 ] && [ "$n" -lt 40 ] && [ $ms -lt 9000 ] &&
	grep -q "rpcrdma.$C.sock: no such process" "$TMP/ends"
check $? "a program that exits under -i: $n samples, then 'no such process', exit 1"
[ ! -e "$D/rpcrdma.$C.sock" ]
check $? "a normal exit removed its socket"

kill -KILL "$B"
wait "$B" 2>/dev/null
run stale -d "$D" "$B"
[ $rc -eq 1 ] && grep -q "stale socket: no process answers on it" "$TMP/stale"
check $? "a killed program's socket: 'stale socket', exit 1"

for bad in "-i 0" "-c 0" "-W x" "-d $D 0" "-z"; do
	# shellcheck disable=SC2086 # the options are words
	run usage $bad
	[ $rc -eq 2 ] && grep -q '^usage: rpcrdma-stat' "$TMP/usage"
	check $? "usage error '$bad': exit 2 with the usage"
done

stop "$A"
[ ! -e "$D/rpcrdma.$A.sock" ]
check $? "the first stand-in exited normally and removed its socket"

lib_done
