#!/bin/bash
# tests/bench/bench-tool.sh: rpcrdma-bench(1), server and client, INSIDE the
# Soft-RoCE VM; make vmcheck runs it as tests/bench/bench-tool
# (tests/bench/rbench.am).  A server registered with rpcbind serves a
# client over rdma (JSON output) and over rdma6 (text) for a second a test;
# a server at a port serves a client that counts its calls, checks every
# one and forces a version; then the failures: a server that is not there,
# an address without an RDMA device, a bad option (tests/bench/tool-args.sh
# checks the others on the host).  Checks read the tool's
# output, JSON through python3, and its exit status: every test ran, calls
# were answered, the WRITE and READ data moved in Read and Write chunks by
# the counters of both sides, and was checked.
#
# Holds with RPCRDMA_VERSION=1 or 2 in the environment (-V overrides it).
# One line per check; exit 0 only when all passed.  Under TCG every exec
# of a host program costs up to seconds on a loaded machine: the output is
# matched with bash's own [[ =~ ]], not with grep and sed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
BENCH=$B/tools/rpcrdma-bench
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
PROG=536892002	# RBENCH_PROG, tests/bench/rbench.x
PORT=20180
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/../vm/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init bench-tool
rpcbind_before=$(pidof rpcbind)

# has FILE REGEX: a line of FILE matches the extended REGEX
has() {
	local l
	while IFS= read -r l; do
		[[ $l =~ $2 ]] && return 0
	done <"$1"
	return 1
}

# count FILE REGEX: how many lines of FILE match
count() {
	local l n=0
	while IFS= read -r l; do
		[[ $l =~ $2 ]] && n=$((n + 1))
	done <"$1"
	echo $n
}

# run NAME ARGS...: rpcrdma-bench ARGS under a deadline, stdout in
# $TMP/NAME, stderr in $TMP/NAME.err, status in rc
run() {
	name=$1
	shift
	local t0=$SECONDS
	echo "    \$ rpcrdma-bench $*"
	timeout -k 5 100 "$BENCH" "$@" >"$TMP/$name" 2>"$TMP/$name.err"
	rc=$?
	show "$TMP/$name"
	show "$TMP/$name.err"
	echo "    [exit $rc after $((SECONDS - t0)) s]"
}

# server NAME ARGS...: rpcrdma-bench -s ARGS in the background (pid in
# $server), until its listening lines are there (30 s at most); LINES
# is how many it must print
# listening NAME N: server NAME says it listens, N times
listening() {
	[ "$(count "$TMP/$1" '^rpcrdma-bench: listening over ')" -ge "$2" ]
}

server() {
	name=$1 lines=$2
	shift 2
	"$BENCH" -s "$@" >"$TMP/$name" 2>&1 &
	server=$!
	pids="$pids $server"
	wait_until 150 listening "$name" "$lines"
	show "$TMP/$name"
}

# stop PID: SIGTERM, its status in rc
stop() {
	kill "$1"
	wait "$1"
	rc=$?
}

# json FILE PYTHON-EXPRESSION...: each expression, over the report r and
# its tests t (by name), printed with its verdict; the status is the
# number of false ones (255 if the report does not parse)
json() {
	python3 - "$@" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    t = {x["test"]: x for x in r["tests"]}
except Exception as e:
    print("    JSON: %s" % e)
    sys.exit(255)
bad = 0
for e in sys.argv[2:]:
    try:
        ok = bool(eval(e))
    except Exception as x:
        ok = False
        e += " (%s)" % x
    print("    %s %s" % ("true: " if ok else "FALSE:", e))
    bad += not ok
sys.exit(bad)
EOF
}

# ---- rpcbind and a registered server ---------------------------------------

rpcbind_up
check $? "rpcbind answers${RPCBIND:+ (started here)}"

server srv 2 -d 200
SRV=$server
has "$TMP/srv" '^rpcrdma-bench: listening over rdma on 0\.0\.0\.0 port [0-9]+, registered with rpcbind$' &&
	has "$TMP/srv" '^rpcrdma-bench: listening over rdma6 on :: port [0-9]+, registered with rpcbind$'
check $? "-s: listening over rdma and rdma6, registered with rpcbind"
rpcinfo >"$TMP/rpcinfo" 2>&1
[ "$(count "$TMP/rpcinfo" "^ *$PROG +1 +rdma6? ")" -eq 2 ]
check $? "rpcbind lists program $PROG version 1 on rdma and rdma6"

# ---- rdma through rpcbind, JSON --------------------------------------------

run json4 -d 1 --json "$H4"
[ $rc -eq 0 ]
check $? "rdma through rpcbind, 1 s a test, --json: exit 0"
VERS_OK=True
case ${RPCRDMA_VERSION:-} in
1 | 2) VERS_OK="r['rdma_version'] == $RPCRDMA_VERSION" ;;
esac
json "$TMP/json4" "r['netid'] == 'rdma' and r['address'] == '$H4'" \
	"r['failed'] == 0 and [x['test'] for x in r['tests']] == ['null', 'echo', 'write', 'read']" \
	"all(x['ok'] and x['calls'] > 0 and x['calls_per_s'] > 0 for x in r['tests'])" \
	"$VERS_OK" \
	"0 < t['null']['median_us'] <= t['null']['p99_us']" \
	"t['null']['client']['read_chunks'] == 0 and t['null']['client']['write_chunks'] == 0" \
	"t['echo']['size'] == 64 and t['echo']['checked_calls'] == 2" \
	"t['write']['size'] == 1048576 and t['write']['MiB_per_s'] > 0" \
	"t['write']['client']['read_chunks'] >= t['write']['calls'] + 2" \
	"t['write']['client']['read_bytes'] == 1048576 * t['write']['client']['read_chunks']" \
	"t['write']['server']['read_chunks'] == t['write']['client']['read_chunks']" \
	"t['write']['client']['long_calls'] == 0 and t['write']['checked_calls'] == 2" \
	"t['read']['MiB_per_s'] > 0" \
	"t['read']['client']['write_chunks'] >= t['read']['calls'] + 2" \
	"t['read']['client']['write_bytes'] == 1048576 * t['read']['client']['write_chunks']" \
	"t['read']['server']['write_chunks'] == t['read']['client']['write_chunks']" \
	"t['read']['client']['ddp_zero_copies'] + t['read']['client']['ddp_copies'] == t['read']['client']['write_chunks']" \
	"t['read']['client']['reply_chunks'] == 0 and t['read']['checked_calls'] == 2"
check $? "rdma --json: 4 tests with calls; WRITE data in Read chunks, READ data in Write chunks (both sides), checked"

# ---- rdma6 through rpcbind, text -------------------------------------------

run text6 -6 -d 1 --threads 2 "$H6"
[ $rc -eq 0 ] && has "$TMP/text6" '^rpcrdma-bench: 4 test\(s\) passed$'
check $? "rdma6 through rpcbind, --threads 2: exit 0, 4 test(s) passed"
has "$TMP/text6" "^rpcrdma-bench: $H6 \\($H6\\) port [1-9][0-9]* over rdma6, RPC-over-RDMA version [12]; 1 s a test$"
check $? "rdma6: the header names the address, port, netid and version"
has "$TMP/text6" '^null   [1-9][0-9]* calls in [0-9.]+ s, [0-9]+ calls/s: round trip median [0-9.]+ us, p99 [0-9.]+ us'
check $? "rdma6: null: calls, median and p99 round trip"
# block TEST: the line of TEST in text6 and the two counter lines after
# it, into $TMP/block
block() {
	local l n=0
	while IFS= read -r l; do
		[[ $l == "$1 "* ]] && n=3
		if ((n > 0)); then
			echo "$l"
			n=$((n - 1))
		fi
	done <"$TMP/text6" >"$TMP/block"
}
block echo
has "$TMP/block" '^echo   64 octets x 2 thread\(s\): [0-9]+ calls/s \([1-9][0-9]* calls in [0-9.]+ s\); data checked in 4 calls$'
check $? "rdma6: echo, 2 threads: calls/s, 4 calls checked (first and last of each thread)"
block write
has "$TMP/block" '^write  1048576 octets x 2 thread\(s\): [0-9.]+ MiB/s, .*data checked in 4 calls$' &&
	has "$TMP/block" '^       client: calls [0-9]+, read_chunks [1-9][0-9]* ' &&
	has "$TMP/block" '^       server: calls [0-9]+, read_chunks [1-9][0-9]* \(RDMA Read\)'
check $? "rdma6: write: MiB/s, Read chunks on both sides, data checked"
block read
has "$TMP/block" '^read   1048576 octets x 2 thread\(s\): [0-9.]+ MiB/s, .*data checked in 4 calls$' &&
	has "$TMP/block" '^       client: .* write_chunks [1-9][0-9]* ' &&
	has "$TMP/block" '^       server: .* write_chunks [1-9][0-9]* \(RDMA Write\)'
check $? "rdma6: read: MiB/s, Write chunks on both sides, data checked"

stop "$SRV"
show "$TMP/srv"
[ $rc -eq 0 ] &&
	has "$TMP/srv" '^rpcrdma-bench: rdma: [1-9][0-9]* calls, 1 connection\(s\); read_chunks [1-9][0-9]* .*write_chunks [1-9][0-9]* ' &&
	has "$TMP/srv" '^rpcrdma-bench: rdma6: [1-9][0-9]* calls, 1 connection\(s\); read_chunks [1-9][0-9]* .*write_chunks [1-9][0-9]* '
check $? "SIGTERM: the server exits 0 with the chunks it moved over rdma and rdma6"
rpcinfo >"$TMP/rpcinfo" 2>&1
! has "$TMP/rpcinfo" "^ *$PROG "
check $? "the server took its registrations back from rpcbind"

run noserver -W 5 "$H4"
[ $rc -eq 2 ] && has "$TMP/noserver.err" 'hint: no rpcrdma-bench server is registered on rdma '
check $? "no server registered: exit 2 with the hint"

# ---- at a port, by count, every call checked --------------------------------

# -V auto: both versions, whatever RPCRDMA_VERSION the suite runs with,
# so that the client's -V 1 has a peer
server port 1 --netid rdma -a "$H4" -p $PORT -V auto -d 200
PSRV=$server
has "$TMP/port" "^rpcrdma-bench: listening over rdma on $H4 port $PORT$"
check $? "-s --netid rdma -a $H4 -p $PORT -V auto: one listener, not registered"

run count -p $PORT -c 50 --verify-all --threads 2 --size 64k -V 1 -t write,read,null --json "$H4"
[ $rc -eq 0 ]
check $? "-p $PORT -c 50 --verify-all --threads 2 --size 64k -V 1: exit 0"
json "$TMP/count" "r['port'] == $PORT and r['rdma_version'] == 1 and r['calls_per_test'] == 50" \
	"[x['test'] for x in r['tests']] == ['write', 'read', 'null']" \
	"all(x['ok'] and x['calls'] == 50 and x['rdma_version'] == 1 for x in r['tests'])" \
	"t['write']['size'] == 65536 and t['write']['threads'] == 2" \
	"t['write']['checked_calls'] == 54 and t['read']['checked_calls'] == 54" \
	"t['write']['server']['read_chunks'] == 54 and t['read']['server']['write_chunks'] == 54" \
	"t['write']['client']['v2_calls'] == 0"
check $? "by count: exactly 50 timed calls a test, each checked (and the 4 of warm-up and end), version 1"

stop "$PSRV"
[ $rc -eq 0 ]
check $? "the server at a port exits 0 on SIGTERM"

run life -s -p $PORT -d 1
[ $rc -eq 0 ] && has "$TMP/life" "^rpcrdma-bench: listening over rdma on 0\\.0\\.0\\.0 port $PORT$"
check $? "-s -d 1: the server ends by itself, exit 0"

# ---- failures ---------------------------------------------------------------

run nodev -W 3 -p $PORT 127.0.0.1
[ $rc -eq 2 ] && has "$TMP/nodev.err" '^rpcrdma-bench: 127\.0\.0\.1: .*no RDMA device.*rdma link add'
check $? "an address without an RDMA device: exit 2 with the library's hint"

run badsize --size 0 "$H4"
[ $rc -eq 2 ] && has "$TMP/badsize.err" '^rpcrdma-bench: bad size \(1 to 16m octets\): 0$' &&
	has "$TMP/badsize.err" '^usage: rpcrdma-bench '
check $? "--size 0: exit 2, 'bad size' and the usage"

# ---- leave nothing behind ---------------------------------------------------

if [ -n "$RPCBIND" ]; then
	kill "$RPCBIND"
	wait "$RPCBIND" 2>/dev/null
fi
[ "$(pidof rpcbind)" = "$rpcbind_before" ]
check $? "no rpcbind left behind or stopped (before: '$rpcbind_before', after: '$(pidof rpcbind)')"

lib_done
