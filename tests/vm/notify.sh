#!/bin/sh
# tests/vm/notify.sh: the backward-direction example (examples/notify,
# rpcrdma_bc(3)) in the Soft-RoCE VM; make vmcheck runs it as
# tests/vm/notify-example.  notify_server registers with rpcbind on rdma
# and rdma6; two listeners subscribe, one over each netid; a publisher's
# text reaches both through calls the server makes back on the listeners'
# own connections; a listener that is killed is found gone and forgotten.
#
# One line per check; exit 0 only when all passed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
EX=$B/examples/notify
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
PROG=$((0x20005260))
TMP=$(mktemp -d "${TMPDIR:-/tmp}/notify.XXXXXX")
failures=0
pids=

check() {	# check STATUS TEXT
	if [ "$1" -eq 0 ]; then
		echo "ok: $2"
	else
		echo "FAIL: $2"
		failures=$((failures + 1))
	fi
}

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (20 s)
wait_for() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

show() {	# show FILE: indented
	sed 's/^/    /' "$1"
}

if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
	mkdir -p /run/rpcbind
	rpcbind -f &
	pids="$pids $!"
	i=0
	until rpcinfo -p 127.0.0.1 >/dev/null 2>&1 || [ $i -gt 100 ]; do
		sleep 0.2
		i=$((i + 1))
	done
fi
rpcinfo -p 127.0.0.1 >/dev/null 2>&1
check $? "rpcbind answers"

"$EX/notify_server" >"$TMP/server" 2>&1 &
SERVER=$!
pids="$pids $SERVER"
i=0
until [ "$(rpcinfo 2>/dev/null | grep -c "^ *$PROG *1 *rdma6\? ")" -eq 2 ] ||
	[ $i -gt 100 ]; do
	sleep 0.2
	i=$((i + 1))
done
[ "$(rpcinfo | grep -c "^ *$PROG *1 *rdma6\? ")" -eq 2 ]
check $? "notify_server registered on rdma and rdma6"

"$EX/notify_client" "$H4" listen >"$TMP/l4" 2>&1 &
L4=$!
NETID=rdma6 "$EX/notify_client" "$H6" listen >"$TMP/l6" 2>&1 &
L6=$!
pids="$pids $L4 $L6"
wait_for "$TMP/l4" '^subscribed' && wait_for "$TMP/l6" '^subscribed'
check $? "two listeners subscribed, over rdma and over rdma6"

"$EX/notify_client" "$H4" publish "hello, listeners" >"$TMP/p1" 2>&1
rc=$?
show "$TMP/p1"
[ $rc -eq 0 ] && grep -q '^published to 2 subscriber(s)$' "$TMP/p1"
check $? "publish: the server called 2 subscribers back"
wait_for "$TMP/l4" '^event 1: hello, listeners$' &&
	wait_for "$TMP/l6" '^event 1: hello, listeners$'
check $? "each listener got event 1 on its own connection"

kill -9 "$L4"
wait "$L4" 2>/dev/null
NETID=rdma6 "$EX/notify_client" "$H6" publish "second" >"$TMP/p2" 2>&1
rc=$?
show "$TMP/p2"
[ $rc -eq 0 ] && grep -q '^published to 1 subscriber(s)$' "$TMP/p2"
check $? "after one listener died: published to the 1 left"
wait_for "$TMP/l6" '^event 2: second$'
check $? "the rdma6 listener got event 2"
grep -q 'is gone' "$TMP/server"
check $? "the server forgot the dead listener"
kill -0 "$SERVER" 2>/dev/null
check $? "notify_server still runs"

echo "--- server"
show "$TMP/server"
echo "--- listener (rdma6)"
show "$TMP/l6"
[ $failures -eq 0 ] && echo "PASS: 0 failure(s)" || echo "FAIL: $failures failure(s)"
[ $failures -eq 0 ]
