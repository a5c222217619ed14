#!/bin/sh
# tests/vm/stat.sh: rpcrdma-stat(1) against real RDMA programs, INSIDE the
# Soft-RoCE VM; make vmcheck runs it as tests/vm/stat-tool (tools/tools.am).
# examples/rdemo_server runs with RPCRDMA_STATS_SOCKET set; rpcrdma-ping
# (also with it) calls it over rdma, and rpcrdma-stat reads the server's
# counters (its requests at least the calls made), its live connection
# (peer, version in force, credits), the client's counters through the
# client's own socket, -i/-c samples, and the failures: a pid that is gone,
# a process without a socket, another user, a killed server's stale socket.
# A normal exit leaves no socket behind.
#
# Holds with RPCRDMA_VERSION=1 or 2 in the environment (the clients' version;
# the server speaks both).  One line per check; exit 0 only if all passed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
STAT=$B/tools/rpcrdma-stat
PING=$B/tools/rpcrdma-ping
SERVER_BIN=$B/examples/rdemo_server
H4=${RDMA_ADDR4:-192.0.2.1}
PROG=$((0x20005250))
N=5
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
need_rdma
lib_init stat
D=$TMP/sock
mkdir "$D"
rpcbind_before=$(pidof rpcbind)

# run NAME ARGS...: rpcrdma-stat ARGS, output in $TMP/NAME, status in rc
run() {
	name=$1
	shift
	echo "    \$ rpcrdma-stat $*"
	"$STAT" "$@" >"$TMP/$name" 2>&1
	rc=$?
	show "$TMP/$name" 14
	echo "    [exit $rc]"
}

# values FILE LABEL-REGEX NAME: NAME's value on every line whose label
# matches, one per line
values() {
	awk -v re="^rpcrdma: $2: " -v name="$3" '
		$0 ~ re {
			sub(re, "")
			n = split($0, f, " ")
			for (i = 1; i < n; i += 2)
				if (f[i] == name)
					print f[i + 1]
		}' "$1"
}

max_of() {	# max_of: the largest number on stdin, -1 if none
	awk 'BEGIN { m = -1 } $1 + 0 > m { m = $1 + 0 } END { print m }'
}

# ---- rpcbind and the server ---------------------------------------------

rpcbind_up
check $? "rpcbind answers${RPCBIND:+ (started here)}"

server_up server "$PROG" env -u RPCRDMA_VERSION \
	RPCRDMA_STATS_SOCKET="$D" "$SERVER_BIN"
[ -S "$D/rpcrdma.$SERVER.sock" ] &&
	[ "$(stat -c %a "$D/rpcrdma.$SERVER.sock")" = 600 ]
check $? "its statistics socket $D/rpcrdma.$SERVER.sock, mode 600"

# ---- Counters after N calls ------------------------------------------------

RPCRDMA_STATS_SOCKET=$D "$PING" -q -c $N -i 0.1 "$H4" "$PROG" 1 >"$TMP/ping" 2>&1
rc=$?
show "$TMP/ping" 14
[ $rc -eq 0 ] && grep -q "^$N probes sent, $N answered" "$TMP/ping"
check $? "rpcrdma-ping made $N calls over rdma"

run once -d "$D" "$SERVER"
req=$(values "$TMP/once" "svc [^ ]*" requests | max_of)
[ $rc -eq 0 ] && grep -q "^pid $SERVER (rdemo_server) $D/rpcrdma.$SERVER.sock:$" "$TMP/once" &&
	[ "$req" -ge $N ]
check $? "by pid: the server's heading and requests $req >= $N, exit 0"
[ "$(values "$TMP/once" "svc [^ ]*" conns_accepted | max_of)" -ge 1 ]
check $? "the server counted the connection it accepted"
[ "$(ls "$D")" = "rpcrdma.$SERVER.sock" ]
check $? "the client's normal exit removed its own socket (only the server's is left)"

# ---- A live connection, and a client ---------------------------------------

RPCRDMA_STATS_SOCKET=$D "$PING" -i 0.2 "$H4" "$PROG" 1 >"$TMP/live" 2>&1 &
LIVE=$!
pids="$pids $LIVE"
wait_until 150 at_least 3 "$TMP/live" '^NULL from'
check $? "a second rpcrdma-ping (pid $LIVE) keeps calling"

run conn -d "$D" "$SERVER"
connre="svc [^ ]* conn ${RDMA_CLIENT_ADDR4:-$H4}:[0-9]*"
nconn=$(grep -c "^rpcrdma: $connre: " "$TMP/conn")
vers=$(values "$TMP/conn" "$connre" version)
[ $rc -eq 0 ] && [ "$nconn" -eq 1 ] &&
	[ "$(values "$TMP/conn" "$connre" requests)" -ge 3 ] &&
	[ "$(values "$TMP/conn" "$connre" max_granted)" -ge 1 ] &&
	[ "$(values "$TMP/conn" "svc [^ ]*" conns_active | max_of)" -eq 1 ]
check $? "the live connection is listed once, with its requests and credits granted"
case ${RPCRDMA_VERSION:-} in
1 | 2)
	[ "$vers" = "$RPCRDMA_VERSION" ]
	check $? "the connection's version in force: $vers (RPCRDMA_VERSION=$RPCRDMA_VERSION)"
	;;
*)
	[ "$vers" = 1 ] || [ "$vers" = 2 ]
	check $? "the connection's version in force: $vers"
	;;
esac

run client -d "$D" "$LIVE"
calls=$(values "$TMP/client" "clnt $H4:[0-9]* prog 0x20005250 v1" calls)
[ $rc -eq 0 ] && [ "${calls:-0}" -ge 3 ] &&
	[ "$(values "$TMP/client" "clnt $H4:[0-9]* prog 0x20005250 v1" credits)" -ge 1 ]
check $? "the client's own socket: its CLIENT's calls (${calls:-none}) and credits"

run both -d "$D"
[ $rc -eq 0 ] && [ "$(grep -c '^pid ' "$TMP/both")" -eq 2 ]
check $? "no argument: both programs of the directory"

kill -INT "$LIVE"
wait "$LIVE"
check $? "the second rpcrdma-ping ended normally"

# ---- Samples ---------------------------------------------------------------

# no client now: after the first sample every counter grows by 0
run samples -i 0.5 -c 3 -d "$D" "$SERVER"
[ $rc -eq 0 ] && [ "$(grep -c '^sample ' "$TMP/samples")" -eq 3 ] &&
	[ "$(grep -c "^pid $SERVER " "$TMP/samples")" -eq 3 ]
check $? "-i 0.5 -c 3: three samples of the server"
first=$(values "$TMP/samples" "svc [^ ]*" requests | max_of)
grown=$(values "$TMP/samples" "svc [^ ]*" requests | sed -n '3,$p' | max_of)
[ "$first" -ge $((N + 3)) ] && [ "$grown" -eq 0 ]
check $? "-i: first sample requests $first, then growth $grown with no client"

# ---- Failures --------------------------------------------------------------

sleep 0 &
gone=$!
wait $gone
run nopid -d "$D" "$gone"
[ $rc -eq 1 ] && grep -q "rpcrdma.$gone.sock: no such process" "$TMP/nopid"
check $? "a pid that is gone: 'no such process', exit 1"

run nosock -d "$D" $$
[ $rc -eq 1 ] && grep -q "process $$ has no statistics socket" "$TMP/nosock"
check $? "a process without a socket: named with the variable to set, exit 1"

chmod 755 "$TMP" "$D"
echo "    \$ setpriv --reuid=nobody ... rpcrdma-stat -d $D $SERVER"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$STAT" -d "$D" "$SERVER" >"$TMP/perm" 2>&1
rc=$?
show "$TMP/perm" 14
[ $rc -eq 1 ] && grep -q "permission denied (the socket belongs to uid 0" "$TMP/perm"
check $? "another user: 'permission denied', naming the owner, exit 1"

kill -TERM "$SERVER"
wait "$SERVER" 2>/dev/null
run stale -d "$D" "$SERVER"
[ $rc -eq 1 ] && grep -q "stale socket: no process answers on it" "$TMP/stale"
check $? "a server killed by a signal: its socket is named stale, exit 1"
rm -f "$D/rpcrdma.$SERVER.sock"

# ---- Leave nothing behind -------------------------------------------------

# an rpcgen main killed by a signal does not unregister (rpcrdma_netid(3))
rpcinfo -d "$PROG" 1
if [ -n "$RPCBIND" ]; then
	kill "$RPCBIND"
	wait "$RPCBIND" 2>/dev/null
fi
[ "$(pidof rpcbind)" = "$rpcbind_before" ]
check $? "no rpcbind left behind or stopped"

if [ $failures -ne 0 ]; then
	echo "--- server"
	show "$TMP/server" 40
fi
lib_done
