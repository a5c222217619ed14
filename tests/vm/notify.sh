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
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init notify

rpcbind_up
rc=$?
pids="$pids $RPCBIND"
check $rc "rpcbind answers"

"$EX/notify_server" >"$TMP/server" 2>&1 &
SERVER=$!
pids="$pids $SERVER"
wait_until 100 on_both_netids "$PROG" 1
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
lib_done
