#!/bin/sh
# tests/vm/trace.sh: the RPCRDMA_TRACE log (rpcrdma-trace(7)) of a real
# client and server, INSIDE the Soft-RoCE VM; make vmcheck runs it as
# tests/vm/trace-log (tests/vm/trace.am).  tests/vm/rtest_server listens at
# a port of its own (no rpcbind), rpcrdma-ping makes two NULL calls to it,
# each with RPCRDMA_TRACE naming a file; then the lines are checked: the
# client's connect and the server's accept with the parameters both agreed
# (each side's inline_send is the other's inline_recv), the client's
# version, each call's plan (short) and reply with the XID the server's
# srv_call and srv_reply lines carry, and a disconnect on both sides.
# Then tests/bench/rbench's server, traced, takes 1 MiB WRITE-shaped calls
# from four client threads: its srv_pull lines must show the Reads of
# several Calls posted at once, within max_read_bytes, and each pull
# completed and answered.
#
# Holds with RPCRDMA_VERSION=1, 2 or unset.  One line per check; exit 0
# only when all passed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd) # a copy in the build tree
fi
PING=$B/tools/rpcrdma-ping
SERVER_BIN=$B/tests/vm/rtest_server
RBENCH=$B/tests/bench/rbench
H4=${RDMA_ADDR4:-192.0.2.1}
PROG=$((0x20005243))
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init trace
CT=$TMP/client.trace
ST=$TMP/server.trace
need_rdma

# field FILE EVENT KEY: KEY's value in the first EVENT line of FILE
field() {
	awk -v ev="$2" -v key="$3" '$6 == ev {
		for (i = 7; i <= NF; i++)
			if (index($i, key "=") == 1) {
				print substr($i, length(key) + 2)
				exit
			}
	}' "$1"
}

# ---- The server, the client ------------------------------------------------

env -u RPCRDMA_VERSION RPCRDMA_TRACE="$ST" RPCRDMA_RPCBIND=0 \
	"$SERVER_BIN" -4 -a "$H4" >"$TMP/server" 2>&1 &
SERVER=$!
pids=$SERVER
wait_for "$TMP/server" '^listening on .* port [0-9]*$'
check $? "rtest_server listening (traced into $ST)"
PORT=$(sed -n 's/^listening on .* port \([0-9]*\)$/\1/p' "$TMP/server")

RPCRDMA_TRACE="$CT" "$PING" -c 2 -i 0.2 -W 10 -p "${PORT:-0}" \
	"$H4" "$PROG" 1 >"$TMP/ping" 2>&1
check $? "rpcrdma-ping: 2 NULL calls answered (traced into $CT)"
show "$TMP/ping"
# the client has exited: the server sees the disconnect
wait_for "$ST" ' disconnect code='
kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null
pids=
echo "    --- client trace"
show "$CT"
echo "    --- server trace"
show "$ST"

# ---- Every line has the documented shape -----------------------------------

for f in "$CT" "$ST"; do
	[ -s "$f" ] &&
		! grep -Ev '^rpcrdma-trace: [0-9]+\.[0-9]{6} pid=[0-9]+ conn=[0-9]+ xid=0x[0-9a-f]{8} [a-z_]+( [a-z_]+=[^ ]+)+( reason=.*)?$' "$f"
	check $? "every line of $(basename "$f") is in the documented format"
done

# ---- Connections and what was agreed ---------------------------------------

CONN=$(awk '$6 == "connect" { sub("conn=", "", $4); print $4; exit }' "$CT")
[ "$(grep -c ' connect ' "$CT")" -eq 1 ] &&
	grep -Eq "^[^ ]+ [^ ]+ [^ ]+ conn=$CONN xid=0x00000000 connect peer=$H4:$PORT dev=[^ ]+ inline_send=[1-9][0-9]* inline_recv=[1-9][0-9]* credits=[1-9][0-9]* remote_inv=[01] ord=[0-9]+ ird=[0-9]+$" "$CT"
check $? "client: one connect line, to $H4:$PORT, with inline sizes, credits, ord and ird"
[ "$(grep -c ' accept ' "$ST")" -eq 1 ] &&
	grep -Eq "xid=0x00000000 accept peer=$H4:[0-9]+ dev=[^ ]+ inline_send=[1-9][0-9]* inline_recv=[1-9][0-9]* credits=[1-9][0-9]* remote_inv=[01] ord=[0-9]+ ird=[0-9]+$" "$ST"
check $? "server: one accept line, from $H4, with the same keys"
cs=$(field "$CT" connect inline_send)
cr=$(field "$CT" connect inline_recv)
ss=$(field "$ST" accept inline_send)
sr=$(field "$ST" accept inline_recv)
[ -n "$cs" ] && [ "$cs" = "$sr" ] && [ "$cr" = "$ss" ]
check $? "both sides agree: client sends $cs = server receives $sr, server sends $ss = client receives $cr"

want_vers=
case ${RPCRDMA_VERSION:-} in
1 | 2) want_vers=$RPCRDMA_VERSION ;;
esac
grep -Eq "conn=$CONN xid=0x00000000 version vers=${want_vers:-[12]} state=(probe|chosen) call_inline=[0-9]+ reply_inline=[0-9]+$" "$CT" &&
	grep -Eq "conn=$CONN xid=0x00000000 version vers=${want_vers:-[12]} state=settled " "$CT"
check $? "client: version ${want_vers:-1 or 2} chosen, then settled by the first reply"

# ---- The calls -------------------------------------------------------------

xids=$(awk -v c="conn=$CONN" '$4 == c && $6 == "call" { print $5 }' "$CT")
[ "$(echo "$xids" | grep -c '^xid=0x')" -eq 2 ] &&
	! echo "$xids" | grep -q '^xid=0x00000000$'
check $? "client: two call lines, each with its XID"
for x in $xids; do
	# the call's plan: a NULL call is Short, no chunk
	grep -Eq "conn=$CONN $x call kind=short vers=[12] send=[0-9]+ payload=[0-9]+ reads=0 read_bytes=0 pzrc=0 writes=0 write_bytes=0 reply_chunk=0$" "$CT" &&
		grep -Eq "conn=$CONN $x reply kind=short len=[0-9]+ writes=0 write_bytes=0 credits=[1-9][0-9]*$" "$CT" &&
		awk -v x="$x" '$5 == x { print $6 }' "$CT" | tr '\n' ' ' |
		grep -qx 'call reply '
	check $? "client: $x planned Short, then its Reply (Short), nothing else"
	grep -Eq " $x srv_call kind=short vers=[12] len=[0-9]+ read_segs=0 read_bytes=0 writes=0 reply_chunk=0$" "$ST" &&
		grep -Eq " $x srv_reply kind=short len=[0-9]+ writes=0 write_bytes=0 credits=[1-9][0-9]*$" "$ST"
	check $? "server: $x received Short and answered Short"
done

# ---- Disconnects -------------------------------------------------------------

grep -Eq "conn=$CONN xid=0x00000000 disconnect code=[0-9]+ reason=.+$" "$CT" &&
	[ "$(grep -c ' disconnect ' "$CT")" -eq 1 ] &&
	[ "$(tail -n 1 "$CT" | awk '{ print $6 }')" = disconnect ]
check $? "client: its connection's disconnect, once, as the last line"
SCONN=$(awk '$6 == "accept" { sub("conn=", "", $4); print $4; exit }' "$ST")
grep -Eq "conn=${SCONN:-none} xid=0x00000000 disconnect code=[0-9]+ reason=.+$" "$ST"
check $? "server: the accepted connection's disconnect"

# ---- Read chunks of several Calls in flight ---------------------------------

PT=$TMP/pull.trace
RB_PORT=20467
RPCRDMA_TRACE="$PT" "$RBENCH" server -n rdma -a "$H4" -p $RB_PORT \
	--lifetime 120 >"$TMP/rbench_server" 2>&1 &
SERVER=$!
pids=$SERVER
wait_for "$TMP/rbench_server" '^rbench: listening'
check $? "rbench server listening on $H4 port $RB_PORT (traced into $PT)"
timeout 60 "$RBENCH" client -a "$H4" -n rdma -p $RB_PORT write -t 4 -s 2 \
	--size 1048576 >"$TMP/rbench_client" 2>&1 &&
	grep -Eq '^RESULT test=write .*calls=[1-9]' "$TMP/rbench_client"
check $? "rbench client: 1 MiB WRITE-shaped calls from 4 threads answered"
show "$TMP/rbench_client"
kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null
pids=
grep -E ' srv_pull | srv_pulled ' "$PT" | head -n 12 | sed 's/^/    /'

pulls=$(grep -c ' srv_pull ' "$PT")
[ "$pulls" -ge 8 ] &&
	! grep ' srv_pull ' "$PT" | grep -Ev ' srv_pull bytes=1048576 pulling=[1-9][0-9]* held=[0-9]+ limit=[0-9]+$'
check $? "server: $pulls srv_pull lines, each of one 1 MiB Read chunk"
awk '$6 == "srv_pull" {
	for (i = 7; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
	if (v["held"] > v["limit"] || v["held"] < v["bytes"]) bad++
	if (v["pulling"] > max) max = v["pulling"]
} END { printf "%d %d\n", bad, max }' "$PT" >"$TMP/pull.sum"
read -r over most <"$TMP/pull.sum"
[ "$over" -eq 0 ]
check $? "server: the pulled data held never over its max_read_bytes ($over lines over)"
[ "$most" -ge 2 ]
check $? "server: the Reads of $most Calls posted at once (at least 2: Read chunks pipelined across Calls)"
[ "$(grep -c ' srv_pulled status=0 ' "$PT")" -eq "$pulls" ]
check $? "server: every pull completed with status 0 ($(grep -c ' srv_pulled status=0 ' "$PT") of $pulls)"
unanswered=$(awk '$6 == "srv_pull" { pulled[$5] = 1 }
	$6 == "srv_reply" { answered[$5] = 1 }
	END { for (x in pulled) n += !(x in answered); print n + 0 }' "$PT")
[ "$unanswered" -eq 0 ]
check $? "server: every pulled Call answered ($unanswered not)"

lib_done
