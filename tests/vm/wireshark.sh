#!/bin/sh
# tests/vm/wireshark.sh: the Wireshark dissector (tools/wireshark/rpcrdma.lua,
# rpcrdma-wireshark(7)) on a real capture, INSIDE the Soft-RoCE VM of the
# two-device group (tests/vm/net.am: rxe0 on v0 with 192.0.2.1, rxe1 on v1
# with 192.0.2.2, so every frame crosses the veth).  tcpdump captures v0,
# udp port 4791, while rpcrdma-ping makes NULL calls to examples/rdemo_server
# (an rpcgen program) at 192.0.2.2, once with RPCRDMA_VERSION=1 and once
# with RPCRDMA_VERSION=2 in the client (the server speaks both).  For each
# capture tshark with the plugin (the built-in rpcordma disabled) must
# decode every RC Send with rpcrdma.vers, all of them in the version asked
# for, none malformed, and each RPC message inside must have rpc.xid equal
# to rpcrdma.xid and the program's number (issue 34 item 2).
#
# The calls are NULL calls so that every Send fits one packet: the plugin
# does not reassemble a Send split over several (rpcrdma-wireshark(7)).
# One line per check; exit 0 only when all passed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
PING=$B/tools/rpcrdma-ping
SERVER_BIN=$B/examples/rdemo_server
SERVER_ADDR=${RDMA_ADDR4:-192.0.2.2}
DEV=v0
PROG=$((0x20005250))
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
PLUGIN=$(dirname "$VM_LIB_SH")/../../tools/wireshark/rpcrdma.lua
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init wireshark

for t in tcpdump tshark; do
	command -v $t >/dev/null 2>&1 && continue
	check 1 "$t installed (tests/vm/run's PACKAGES)"
	lib_done
	exit 1
done
[ -r "$PLUGIN" ]
check $? "the plugin is at $PLUGIN"
ip link show "$DEV" >/dev/null 2>&1
check $? "$DEV is there (run with --net two, tests/vm/net.am)"

rpcbind_up
check $? "rpcbind answers${RPCBIND:+ (started here)}"
pids="$pids $RPCBIND"	# one started here is stopped on exit
env -u RPCRDMA_VERSION "$SERVER_BIN" >"$TMP/server" 2>&1 &
SERVER=$!
pids="$pids $SERVER"
wait_until 150 on_both_netids "$PROG" 1
check $? "rdemo_server registered"

# ts PCAP ARGS...: tshark with the plugin, rpcordma disabled, and the RPC
# dissector told to decode the Calls of a program it does not know
# (rdemo's), which it otherwise shows as "Continuation data".
ts() {
	f=$1
	shift
	tshark -n -r "$f" -X lua_script:"$PLUGIN" \
		--disable-protocol rpcordma \
		-o rpc.dissect_unknown_programs:TRUE "$@" 2>>"$TMP/tshark.err"
}

for v in 1 2; do
	cap=$TMP/v$v.pcap
	tcpdump -Z root -i "$DEV" -U -w "$cap" udp port 4791 2>"$TMP/tcpdump$v" &
	dump=$!
	pids="$pids $dump"
	wait_until 100 grep -q 'listening on' "$TMP/tcpdump$v"
	check $? "v$v: tcpdump listening on $DEV"
	RPCRDMA_VERSION=$v "$PING" -c 5 -i 0.1 "$SERVER_ADDR" "$PROG" 1 \
		>"$TMP/ping$v" 2>&1
	check $? "v$v: rpcrdma-ping made 5 NULL calls to $SERVER_ADDR"
	show "$TMP/ping$v"
	sleep 1
	kill -INT "$dump"
	wait "$dump"
	show "$TMP/tcpdump$v"

	# RC Sends: SEND Only (4) and SEND Only with Invalidate (0x17);
	# RC SEND First/Middle/Last (0-2) would be a Send split in packets.
	sends=$(ts "$cap" -Y 'infiniband.bth.opcode == 4 ||
		infiniband.bth.opcode == 0x17' -T fields -e frame.number |
		wc -l)
	[ "$sends" -gt 0 ]
	check $? "v$v: the capture holds $sends Sends"
	split=$(ts "$cap" -Y 'infiniband.bth.opcode <= 2' -T fields \
		-e frame.number | wc -l)
	[ "$split" -eq 0 ]
	check $? "v$v: no Send split over packets ($split)"
	ts "$cap" -Y 'rpcrdma' -T fields -e rpcrdma.vers >"$TMP/vers$v"
	decoded=$(wc -l <"$TMP/vers$v")
	[ "$decoded" -eq "$sends" ]
	check $? "v$v: every Send decoded with rpcrdma.vers ($decoded)"
	[ "$(sort -u "$TMP/vers$v")" = "$v" ]
	check $? "v$v: every Send in version $v ($(sort -u "$TMP/vers$v" |
		tr '\n' ' '))"
	bad=$(ts "$cap" -Y '_ws.malformed' -T fields -e frame.number |
		wc -l)
	[ "$bad" -eq 0 ]
	check $? "v$v: no frame malformed ($bad)"
	ts "$cap" -Y 'rpc' -T fields -E separator=, -e rpcrdma.xid \
		-e rpc.xid -e rpc.msgtyp -e rpc.program >"$TMP/rpc$v"
	calls=$(awk -F, '$3 == 0' "$TMP/rpc$v" | wc -l)
	replies=$(awk -F, '$3 == 1' "$TMP/rpc$v" | wc -l)
	[ "$calls" -ge 5 ] && [ "$replies" -ge 5 ]
	check $? "v$v: $calls RPC Calls and $replies Replies inside"
	# A Reply's program is Wireshark's guess from the Call it matched,
	# which needs both in one conversation: only the Calls' is checked.
	awk -F, '$1 != $2 || ($3 == 0 && $4 != '"$PROG"')' "$TMP/rpc$v" \
		>"$TMP/mismatch$v"
	[ ! -s "$TMP/mismatch$v" ]
	check $? "v$v: rpc.xid is rpcrdma.xid, the Calls' rpc.program $PROG"
	show "$TMP/mismatch$v"
done
! grep -qi 'lua error' "$TMP/tshark.err"
check $? "no Lua error"
lib_done
