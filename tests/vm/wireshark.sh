#!/bin/sh
# tests/vm/wireshark.sh: the Wireshark dissector (tools/wireshark/rpcrdma.lua,
# rpcrdma-wireshark(7)) on real captures, INSIDE the Soft-RoCE VM of the
# two-device group (tests/vm/net.am: rxe0 on v0 with 192.0.2.1, the
# client; rxe1 on v1 with 192.0.2.2, the server; every frame crosses the
# veth).  tcpdump captures v0, udp port 4791, while the test suite's own
# programs talk:
#
#   v1, v2  (RPCRDMA_VERSION of the clients; the servers speak both)
#           rpcrdma-ping: NULL calls to examples/rdemo_server;
#           examples/rdemo_client with a ULB table for rdemo (written
#           here): DIGEST's 1 MiB argument in a Read chunk, FILL's result
#           in a Write chunk; rdemo_client without a table: DIGEST and
#           SUM as Long Calls (a Read chunk at position 0), FILL's 512 KiB
#           reply in a Reply chunk, after the server's error to the first
#           Call, which offered none (ERR_CHUNK in v1, REPLY_RESOURCE in
#           v2: the library then resends with one); examples/notify: the
#           server's
#           NOTIFY_EVENT calls back on the listener's connection (the
#           backward direction); in v2 both ends' CONNPROP (the property
#           exchange the library does by default)
#   wire    tests/vm/t_v2 --only wire: its raw client provokes ERR_VERS,
#           INVAL_OPTION, BAD_XDR, READ_CHUNKS, WRITE_CHUNKS, SEGMENTS and
#           REPLY_RESOURCE, and trades REQPROP for RESPROP
#
# For each capture tshark with the plugin (the built-in rpcordma disabled)
# decodes, in one pass, every first or only packet of an RC Send: each
# must have rpcrdma.vers (in the version asked for), none malformed, its
# transport header complete (chunk lists and, for a MSG, the payload
# length: a Send split over packets is not reassembled, but the header is
# in its first one), and each RPC message inside must have rpc.xid equal
# to rpcrdma.xid and the program and procedure of the call made.  Then
# each kind of message above must be there, with its fields.  The wire
# capture holds what t_v2 sends on purpose: a version-3 header, which
# nothing claims, an UPDPROP with BRS 7 and an INITXCH without its body,
# malformed; they are counted exactly, the server's answers must all
# decode.  No Send of these captures is split over packets (each check
# line says how many are); if one were, its first packet must still hold
# the whole transport header, which the plugin decodes without reassembly.
# One line per check; exit 0 only when all passed.  By hand, mkdir
# tests/vm/wireshark-keep in the build tree first: the captures and their
# decodes are copied there, for reading in Wireshark.
# shellcheck disable=SC2016 # awk programs in single quotes, on purpose
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
PING=$B/tools/rpcrdma-ping
RDEMO=$B/examples
NOTIFY=$B/examples/notify
T_V2=$B/tests/vm/t_v2
SERVER_ADDR=${RDMA_ADDR4:-192.0.2.2}
CLIENT_ADDR=${RDMA_CLIENT_ADDR4:-192.0.2.1}
DEV=v0
PROG=$((0x20005250))	# rdemo
NPROG=$((0x20005260))	# notify
NCBPROG=$((0x40005260))	# notify's callback program
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

# rdemo's Upper-Layer Binding (rpcrdma-ulb.conf(5)): DIGEST's data may go
# in a Read chunk, FILL's in a Write chunk as large as the len asked for.
# The server has it too: it places FILL's result only where its own table
# says so.
cat >"$TMP/rdemo.conf" <<'CONF'
0x20005250 1 3 call ddp=0			# RDEMO_DIGEST data
0x20005250 1 4 reply ddp=0 room=arg[0] max=8	# RDEMO_FILL data
CONF

rpcbind_up
check $? "rpcbind answers${RPCBIND:+ (started here)}"
pids="$pids $RPCBIND"	# one started here is stopped on exit
server_up rdemo "$PROG" env -u RPCRDMA_VERSION \
	RPCRDMA_ULB_CONF="$TMP/rdemo.conf" "$RDEMO/rdemo_server"
server_up notify "$NPROG" env -u RPCRDMA_VERSION "$NOTIFY/notify_server"

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

# capture NAME CMD...: tcpdump on $DEV while CMD runs, into $TMP/NAME.pcap;
# CMD's output in $TMP/NAME.out, its status in cap_rc.
capture() {
	cap_name=$1
	shift
	tcpdump -Z root -i "$DEV" -U -w "$TMP/$cap_name.pcap" udp port 4791 \
		2>"$TMP/$cap_name.tcpdump" &
	cap_dump=$!
	pids="$pids $cap_dump"
	wait_until 100 grep -q 'listening on' "$TMP/$cap_name.tcpdump"
	check $? "$cap_name: tcpdump listening on $DEV"
	"$@" >"$TMP/$cap_name.out" 2>&1
	cap_rc=$?
	sleep 1
	kill -INT "$cap_dump"
	wait "$cap_dump"
}

# The fields of each first or only packet of an RC Send, one line each,
# '|' between fields (the first occurrence of each): SEND First (0), Only
# (4), Only with Immediate (5), Only with Invalidate (0x17).  Columns:
#  1 frame  2 opcode  3 ip.src  4 vers  5 xid  6 proc  7 direction
#  8 reads.count  9 position  10 writes.count  11 reply.count
# 12 err  13 vers_low  14 vers_high  15 rbsiz  16 payload.length
# 17 rpc.xid  18 rpc.msgtyp  19 rpc.program  20 rpc.procedure
# 21 _ws.malformed
FIELDS="frame.number infiniband.bth.opcode ip.src rpcrdma.vers rpcrdma.xid
	rpcrdma.proc rpcrdma.direction rpcrdma.reads.count rpcrdma.position
	rpcrdma.writes.count rpcrdma.reply.count rpcrdma.err
	rpcrdma.vers_low rpcrdma.vers_high rpcrdma.rbsiz
	rpcrdma.payload.length rpc.xid rpc.msgtyp rpc.program
	rpc.procedure _ws.malformed"
decode() {
	set -- "$1"
	for fl in $FIELDS; do
		set -- "$@" -e "$fl"
	done
	pcap=$TMP/$1.pcap
	shift
	ts "$pcap" -Y 'infiniband.bth.opcode == 0 ||
		infiniband.bth.opcode == 4 || infiniband.bth.opcode == 5 ||
		infiniband.bth.opcode == 0x17' -T fields -E separator='|' \
		-E occurrence=f "$@"
}

# rows NAME AWK-CONDITION: how many Sends of capture NAME match.
rows() {
	awk -F'|' "$2 { n++ } END { print n + 0 }" "$TMP/$1.tsv"
}

# answered NAME CALL-CONDITION REPLY-CONDITION: how many Sends matching
# REPLY-CONDITION have the XID of an earlier one matching CALL-CONDITION.
answered() {
	awk -F'|' "$2 { x[\$5] = 1; next }
		$3 && (\$5 in x) { n++ } END { print n + 0 }" "$TMP/$1.tsv"
}

# common NAME VERS PROGS [SENT-BAD]: the checks every capture passes; VERS
# is the version every Send must have, or empty when mixed; PROGS the
# programs the client calls ("a|b", decimal); SENT-BAD an awk condition
# for the Sends malformed on purpose, which are counted apart.
common() {
	decode "$1" >"$TMP/$1.tsv"
	check $? "$1: tshark decoded the capture"
	sends=$(rows "$1" 1)
	split=$(rows "$1" '$2 == 0')
	[ "$sends" -gt 0 ]
	check $? "$1: the capture holds $sends Sends ($split split over packets)"
	nov=$(rows "$1" '$4 == ""')
	if [ -n "$2" ]; then
		other=$(rows "$1" "\$4 != \"\" && \$4 != $2")
		[ "$nov" -eq 0 ] && [ "$other" -eq 0 ]
		check $? "$1: every Send decoded with rpcrdma.vers $2 ($nov without, $other in another)"
	fi
	bad=$(rows "$1" '$21 != "" && !('"${4:-0}"')')
	[ "$bad" -eq 0 ]
	check $? "$1: no frame malformed ($bad)"
	# MSG and NOMSG: the chunk lists to the end; MSG: the payload too
	cut=$(rows "$1" '($6 == 0 || $6 == 1) && ($11 == "" ||
		($6 == 0 && $16 == ""))')
	[ "$cut" -eq 0 ]
	check $? "$1: every MSG/NOMSG header decoded to its end ($cut not)"
	odd=$(rows "$1" '$17 != "" && ($17 != $5 ||
		($18 == 0 && $3 == "'"$CLIENT_ADDR"'" &&
		 $19 !~ /^('"$3"')$/) ||
		($18 == 0 && $3 == "'"$SERVER_ADDR"'" &&
		 !($19 == '"$NCBPROG"' && $20 == 1)))')
	[ "$odd" -eq 0 ]
	check $? "$1: each RPC inside: rpc.xid is rpcrdma.xid, a Call of the program called ($odd not)"
}

# check_rows NAME MIN TEXT AWK-CONDITION: at least MIN Sends match.
check_rows() {
	cr_n=$(rows "$1" "$4")
	[ "$cr_n" -ge "$2" ]
	check $? "$1: $3 ($cr_n)"
}

# check_answered NAME MIN TEXT CALL-CONDITION REPLY-CONDITION
check_answered() {
	cr_n=$(answered "$1" "$4" "$5")
	[ "$cr_n" -ge "$2" ]
	check $? "$1: $3 ($cr_n)"
}

C='$3 == "'$CLIENT_ADDR'"'	# sent by the client
S='$3 == "'$SERVER_ADDR'"'	# sent by the server
for v in 1 2; do
	# everything of this version in one capture: one tshark pass; each
	# client under timeout(1), t_v2 below under its own watchdog
	calls() {
		RPCRDMA_VERSION=$v timeout 60 "$PING" -c 3 -i 0.1 "$SERVER_ADDR" "$PROG" 1 ||
			echo "FAILED: rpcrdma-ping"
		echo "--- with the table"
		RPCRDMA_VERSION=$v RPCRDMA_ULB_CONF="$TMP/rdemo.conf" \
			timeout 60 "$RDEMO/rdemo_client" "$SERVER_ADDR" rdma 1 ||
			echo "FAILED: rdemo_client with the table"
		echo "--- without"
		RPCRDMA_VERSION=$v RPCRDMA_ULB_CONF=/dev/null \
			timeout 60 "$RDEMO/rdemo_client" "$SERVER_ADDR" rdma 1 ||
			echo "FAILED: rdemo_client without the table"
		echo "--- notify"
		RPCRDMA_VERSION=$v "$NOTIFY/notify_client" "$SERVER_ADDR" \
			listen >"$TMP/listen$v" 2>&1 &
		l=$!
		wait_for "$TMP/listen$v" '^subscribed' ||
			echo "FAILED: the listener did not subscribe"
		RPCRDMA_VERSION=$v timeout 60 "$NOTIFY/notify_client" \
			"$SERVER_ADDR" publish "v$v event" ||
			echo "FAILED: publish"
		wait_for "$TMP/listen$v" "^event [0-9]*: v$v event$" ||
			echo "FAILED: the listener got no event"
		kill -9 $l
		wait $l 2>/dev/null
		cat "$TMP/listen$v"
	}
	capture v$v calls
	show "$TMP/v$v.out"
	! grep -q '^FAILED' "$TMP/v$v.out"
	check $? "v$v: ping, rdemo_client with and without the table, notify: all succeeded"
	common v$v $v "$PROG|$NPROG"
	t=v$v

	check_rows $t 3 "NULL Calls inline" "$C"' && $6 == 0 && $18 == 0 && $20 == 0 && $19 == '$PROG
	# Read chunk at a position: DIGEST's data moved by RDMA Read
	check_rows $t 1 "DIGEST Call with a Read chunk at position > 0" \
		"$C"' && $6 == 0 && $8 >= 1 && $9 > 0 && $18 == 0 && $20 == 3'
	# Long Call: the whole RPC message in a Read chunk at position 0
	check_answered $t 2 "Long Calls (NOMSG, Read chunk at position 0) answered inline" \
		"$C"' && $6 == 1 && $8 >= 1 && $9 == 0' \
		"$S"' && $6 == 0 && $18 == 1'
	# Write chunk: FILL's result placed by RDMA Write, the Reply inline
	check_answered $t 1 "FILL Call with a Write chunk, its Reply with the Write chunk used" \
		"$C"' && $6 == 0 && $10 == 1 && $18 == 0 && $20 == 4' \
		"$S"' && $6 == 0 && $10 == 1 && $18 == 1'
	# Reply chunk: FILL's 512 KiB reply without the table
	check_answered $t 1 "FILL Call offering a Reply chunk, answered by NOMSG with it" \
		"$C"' && $6 == 0 && $11 == 1 && $10 == 0 && $18 == 0 && $20 == 4' \
		"$S"' && $6 == 1 && $11 == 1'
	# Without the table the client offers no Reply chunk for FILL at
	# first: the server answers with an error, ERR_CHUNK in v1 and
	# REPLY_RESOURCE in v2, and the client sends the Call again, same
	# XID, with a Reply chunk
	[ $v = 1 ] && e=2 || e=8
	check_answered $t 1 "the server's error $e (no Reply chunk for FILL's reply), the Call resent with one" \
		"$S"' && $6 == 4 && $12 == '"$e" "$C"' && $6 == 0 && $11 == 1 && $20 == 4'
	# the backward direction: the server's Call, the client's Reply
	if [ $v = 2 ]; then
		bc="$S"' && $6 == 0 && $7 == 0 && $18 == 0'
		bcr="$C"' && $6 == 0 && $7 == 1 && $18 == 1'
		fw=$(rows $t "$C"' && $6 == 0 && $18 == 0 && $7 != 0')
		[ "$fw" -eq 0 ]
		check $? "$t: every forward Call has direction CALL ($fw not)"
	else
		bc="$S"' && $6 == 0 && $18 == 0'
		bcr="$C"' && $6 == 0 && $18 == 1'
	fi
	check_answered $t 1 "the server's NOTIFY_EVENT Call, the listener's Reply (backward)" \
		"$bc"' && $19 == '$NCBPROG' && $20 == 1' "$bcr"
	if [ $v = 2 ]; then
		check_rows $t 1 "the client's CONNPROP with its RBSIZ" \
			"$C"' && $6 == 6 && $15 > 0'
		check_rows $t 1 "the server's CONNPROP with its RBSIZ" \
			"$S"' && $6 == 6 && $15 > 0'
	fi
done

# The raw client of t_v2's wire group and v2t_server (started by t_v2,
# at RDMA_ADDR4): errors and property messages, v1 and v2 mixed.
V2TPROG=$((0x20005244))
capture wire "$T_V2" --only wire
t=wire
grep -q '^PASS' "$TMP/$t.out" && [ "$cap_rc" -eq 0 ]
check $? "$t: t_v2 --only wire passed (status $cap_rc)"
grep -v '^ok' "$TMP/$t.out" >"$TMP/$t.notok"
show "$TMP/$t.notok" 20
# Sent on purpose: UPDPROP {BRS 7} (0x3006), which the XDR does not allow,
# and an xcharext INITXCH (0x3003) without its optinfo body, which a server
# with xcharext off refuses unread; the plugin reads the body by opttype
# and finds it missing.  The raw Calls behind over-limit headers are to
# t_svc_util's default program (rtest's, 0x20005243), never executed.
upd='($6 == 9 && $5 == "0x00003006") || ($6 == 5 && $5 == "0x00003003")'
common $t "" "$V2TPROG|$((0x20005243))" "$upd"
check_rows $t 2 "the client's UPDPROP BRS 7 and empty INITXCH are malformed" \
	"$C"' && $21 != "" && ('"$upd"')'
nov=$(rows $t '$4 == ""')
[ "$nov" -eq 1 ]
check $? "$t: one Send not claimed, the version-3 header ($nov)"
nov=$(rows $t "$S"' && $4 == ""')
[ "$nov" -eq 0 ]
check $? "$t: every Send of the server decoded ($nov not)"
check_rows $t 1 "ERR_VERS 1-2 for the version-3 header, in version 3, its XID" \
	"$S"' && $6 == 4 && $12 == 1 && $13 == 1 && $14 == 2 && $4 == 3 && $5 == "0x00003001"'
check_rows $t 2 "INVAL_OPTION for the OPTIONAL messages" \
	"$S"' && $6 == 4 && $12 == 9 && $4 == 2'
check_answered $t 1 "REQPROP answered by RESPROP, same XID" \
	"$C"' && $6 == 7' "$S"' && $6 == 8'
check_rows $t 2 "BAD_XDR (UPDPROP BRS 7, an inv_handle of no chunk)" \
	"$S"' && $6 == 4 && $12 == 2 && $4 == 2'
for e in 4:READ_CHUNKS 5:WRITE_CHUNKS 6:SEGMENTS 8:REPLY_RESOURCE; do
	check_rows $t 1 "${e#*:}" "$S"' && $6 == 4 && $12 == '"${e%%:*}"
done
check_rows $t 2 "NULL in v1 and v2 answered inline" \
	"$S"' && $6 == 0 && $18 == 1'
check_rows $t 1 "the resent FILL answered in the Reply chunk, With Invalidate" \
	"$S"' && $2 == 23 && $6 == 1 && $11 == 1'

! grep -qi 'lua error' "$TMP/tshark.err"
check $? "no Lua error"
show "$TMP/tshark.err" 10
# by hand: copies of the captures and their decodes, for reading
if [ -d "$B/tests/vm/wireshark-keep" ]; then
	cp "$TMP"/*.pcap "$TMP"/*.tsv "$TMP"/*.out "$B/tests/vm/wireshark-keep/"
fi
lib_done
