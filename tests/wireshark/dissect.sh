#!/bin/sh
# dissect.sh - tools/wireshark/rpcrdma.lua on the host (make check):
# RoCEv2 frames (Ethernet/IPv4/UDP port 4791/BTH RC SEND Only
# + payload + a 4-octet ICRC) made with text2pcap, whose payloads are the
# header vectors of doc/requirements.md §6 (as in tests/unit/hdr_vectors.c) and
# the headers our own codec writes (tests/wireshark/ws_frames), read back
# with tshark and the plugin, the built-in Version One dissector
# (rpcordma) disabled as rpcrdma-wireshark(7) says.  It checks:
#   - each frame's rpcrdma.vers, xid, credits, proc, err, direction and
#     inv_handle;
#   - _ws.malformed marks exactly the frames that are cut short or whose
#     words the XDR does not allow, and none of the good ones;
#   - the RPC message inside a MSG (or OPTIONAL) reaches the ONC RPC
#     dissector: rpc.xid is the header's XID and rpc.program 100003;
#     an NFSv3 WRITE Call and READ Reply whose data moved by RDMA are
#     decoded whole, the moved data given as zeros;
#   - no Lua error, whatever the input.
# Without tshark or text2pcap it says SKIP and exits 77, except in CI
# (CI=true), where tools/bootstrap installs them and a skip would hide
# that the test did not run.
set -u
srcdir=${srcdir:-.}
PLUGIN=$srcdir/tools/wireshark/rpcrdma.lua
FRAMES=./tests/wireshark/ws_frames
# shellcheck source=tests/vm/lib.sh
. "$srcdir/tests/vm/lib.sh"

for t in tshark text2pcap; do
	command -v $t >/dev/null 2>&1 && continue
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $t is not installed (tools/bootstrap installs it)"
		exit 1
	fi
	echo "SKIP: $t is not installed (apt-get install tshark):" \
		"the Wireshark dissector is NOT tested"
	exit 77
done
[ -x "$FRAMES" ] || { echo "FAIL: $FRAMES not built"; exit 1; }
lib_init ws-dissect

# NAME, then vers,xid,credits,proc,err,direction,inv_handle ("-": the
# message has no such field), then the payload as hex words.
cat >"$TMP/vectors" <<'EOF'
V1-TV1	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000000 00000000
V1-TV2	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000000 00000000 12345678 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000 00000000
V1-TV3	1,0x12345678,16,0,-,-,-	12345678 00000001 00000010 00000000 00000000 00000000 00000000 12345678 00000001 00000000 00000000 00000000 00000000
V1-TV4a	2,0x12345678,16,4,1,-,-	12345678 00000002 00000010 00000004 00000001 00000001 00000001
V1-TV4b	1,0x12345678,16,4,1,-,-	12345678 00000001 00000010 00000004 00000001 00000001 00000001
V1-TV5	1,0x12345678,16,4,2,-,-	12345678 00000001 00000010 00000004 00000002
V1-TV6	1,0x12345678,32,1,-,-,-	12345678 00000001 00000020 00000001 00000001 00000000 0000a001 00000800 00007f3a 12340000 00000000 00000000 00000000
V1-TV7	1,0x12345678,32,1,-,-,-	12345678 00000001 00000020 00000001 00000001 00000000 0000a001 00000800 00007f3a 12340000 00000000 00000000 00000001 00000001 0000a006 00004000 00007f3a 12390000
V1-TV8	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000001 00000060 0000a002 00001000 00007f3a 12350000 00000001 00000060 0000a003 00000771 00007f3a 12360000 00000000 00000000 00000000
V1-TV9	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000001 00000002 0000a004 00001000 00007f3a 12370000 0000a005 00001000 00007f3a 12380000 00000000 00000000
V1-TV10a	1,0x12345678,16,0,-,-,-	12345678 00000001 00000010 00000000 00000000 00000001 00000002 0000a004 00001000 00007f3a 12370000 0000a005 00000771 00007f3a 12380000 00000000 00000000
V1-TV11a	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000000 00000001 00000001 0000a006 00004000 00007f3a 12390000
V1-TV11b	1,0x12345678,16,1,-,-,-	12345678 00000001 00000010 00000001 00000000 00000000 00000001 00000001 0000a006 00000bb8 00007f3a 12390000
V1-TV12	1,0x12345678,16,0,-,-,-	12345678 00000001 00000010 00000000 00000000 00000001 00000002 0000a004 00000000 00007f3a 12370000 0000a005 00000000 00007f3a 12380000 00000000 00000000
V1-TV13	1,0x12345678,32,2,-,-,-	12345678 00000001 00000020 00000002 00001000 00001000 00000000 00000000 00000000
V1-TV14	1,0x12345678,32,3,-,-,-	12345678 00000001 00000020 00000003
V2-TV1	2,0x12345678,32,0,-,0,0x00000000	12345678 00000002 00000020 00000000 00000000 00000000 00000000 00000000 00000000
V2-TV2	2,0x12345678,16,0,-,1,0x00000000	12345678 00000002 00000010 00000000 00000001 00000000 00000000 00000000 00000000
V2-TV3	2,0x12345678,32,1,-,0,0x0000a001	12345678 00000002 00000020 00000001 00000000 0000a001 00000001 00000000 0000a001 00000800 00007f3a 12340000 00000000 00000000 00000000
V2-TV4	3,0x12345678,16,4,1,-,-	12345678 00000003 00000010 00000004 00000001 00000001 00000002
V2-TV5	2,0x12345678,16,4,7,-,-	12345678 00000002 00000010 00000004 00000007 00000001 00002000
V2-TV6	2,0x12345678,16,4,9,-,-	12345678 00000002 00000010 00000004 00000009
V2-TV7	2,0x12345678,16,4,4,-,-	12345678 00000002 00000010 00000004 00000004 00000000
V2-TV8	2,0x12345678,16,4,8,-,-	12345678 00000002 00000010 00000004 00000008 00010000
V2-TV9a	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000001 00000001 00000004 00002000 00000001 00000001
V2-TV9b	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000001 00000001 00000004 00002000 00000000
V2-TV10	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000002 00000001 00000004 00002000 00000002 00000004 00000002 00000001 00000003
V2-TV11	2,0x0000c001,32,7,-,-,-	0000c001 00000002 00000020 00000007 00000001 00000001 00000004 00004000
V2-TV12a	2,0x0000c001,16,8,-,-,-	0000c001 00000002 00000010 00000008 00000001 00000001 00000000 00000000
V2-TV12b	2,0x0000c001,16,8,-,-,-	0000c001 00000002 00000010 00000008 00000000 00000000 00000001 00000001 00000004 00003000
V2-TV13	2,0x0000c002,32,9,-,-,-	0000c002 00000002 00000020 00000009 00000001 00000002 00000004 00000002
XC-TV1	2,0x12345679,32,5,-,-,-	12345679 00000002 00000020 00000005 00000000 00000001 00000014 00000001 00000001 00000004 00002000 00000000
XC-TV3	2,0x0000c002,32,5,-,-,-	0000c002 00000002 00000020 00000005 00000000 00000004 00000010 00000003 00000004 00000002 00000000
N-3	1,0x12345678,32,1,-,-,-	12345678 00000001 00000020 00000001 00000000 00000000 00000000
N-6	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000001 00000000 00000000 00000000
N-11	2,0x12345678,32,1,-,0,0x0000beef	12345678 00000002 00000020 00000001 00000000 0000beef 00000001 00000000 0000a001 00000800 00007f3a 12340000 00000000 00000000 00000000
N-14	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000001 00001234 00000004 00000000 00000000
N-15	2,0x12345679,32,5,-,-,-	12345679 00000002 00000020 00000005 00000000 00000063 00000000
bad-N-1	1,0x12345678,32,-,-,-,-	12345678 00000001 00000020
bad-N-2a	1,0x12345678,32,5,-,-,-	12345678 00000001 00000020 00000005 00000000 00000000 00000000
bad-N-2b	2,0x12345678,32,3,-,-,-	12345678 00000002 00000020 00000003 00000000 00000000 00000000 00000000 00000000
bad-N-7	1,0x12345678,32,1,-,-,-	12345678 00000001 00000020 00000001 00000001 00000000 0000a001 00000800
bad-N-12	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000001 00000001 00000100 00002000 00000000
bad-N-13	2,0x12345679,32,6,-,-,-	12345679 00000002 00000020 00000006 00000001 00000001 00000002 00000000 00000000
bad-flag	1,0x12345678,32,1,-,-,-	12345678 00000001 00000020 00000001 00000002 00000000 00000000
bad-dir	2,0x12345678,32,0,-,2,-	12345678 00000002 00000020 00000000 00000002 00000000 00000000 00000000 00000000
bad-nseg	1,0x12345678,16,1,-,-,-	12345678 00000001 00000010 00000001 00000000 00000000 00000001 40000000 0000a006
bad-v1-err	1,0x12345678,16,4,7,-,-	12345678 00000001 00000010 00000004 00000007 00000001 00002000
bad-v2-err-cut	2,0x12345678,16,4,7,-,-	12345678 00000002 00000010 00000004 00000007 00000001
bad-optinfo	2,0x12345679,32,5,-,-,-	12345679 00000002 00000020 00000005 00000000 00000001 00000020 00000001
first-send	2,0x12345678,32,0,-,0,0x00000000	12345678 00000002 00000020 00000000 00000000 00000000 00000001 00000000 0000a001
first-send-rpc	1,0x12345678,32,0,-,-,-	12345678 00000001 00000020 00000000 00000000 00000000 00000000 12345678 00000000 00000002
middle-send	-,-,-,-,-,-,-	12345678 00000001 00000020 00000000 00000000 00000000 00000000
inv-reply	2,0x2a000003,16,0,-,1,0x00000000	2a000003 00000002 00000010 00000000 00000001 00000000 00000000 00000000 00000000 2a000003 00000001 00000000 00000000 00000000 00000000
rdemo-call	2,0x2a0000ff,32,0,-,0,0x00000000	2a0000ff 00000002 00000020 00000000 00000000 00000000 00000000 00000000 00000000 2a0000ff 00000000 00000002 20005250 00000001 00000000 00000000 00000000 00000000 00000000
EOF
# Our codec's headers, and a few of them cut short (bad-cut-*).
"$FRAMES" >"$TMP/codec"
check $? "ws_frames: the codec encodes every header"
cat "$TMP/codec" >>"$TMP/vectors"
awk -F '\t' '
	$1 == "codec-v2-msg-call" { cut = 44 }
	$1 == "codec-v1-nomsg-call" { cut = 40 }
	$1 == "codec-v2-connprop" { cut = 32 }
	$1 == "codec-v2-optional-respxch" { cut = 36 }
	cut { sub(/^codec/, "bad-cut", $1); $3 = substr($3, 1, 2 * cut)
	      print $1 "\t" $2 "\t" $3; cut = 0 }' OFS='\t' "$TMP/codec" \
	>>"$TMP/vectors"

# One text2pcap packet per line: BTH (opcode 0x04 RC SEND Only, P_Key
# 0xffff, QP 0x11, PSN = line number), the payload, a zero ICRC.  first-*
# are RC SEND First (0x00): a Send split over packets, whose header may go
# on past the packet and whose RPC message is not decoded, neither being
# malformed; middle-* RC SEND Middle (0x01), which the plugin must not
# claim even if it looks like a header; inv-* RC SEND Only with Invalidate
# (0x17), a v2 Reply to a Call that named handle 0xa103 (V2-RI-4), whose
# IETH comes before the payload.
n=0
while IFS='	' read -r name want hex; do
	n=$((n + 1))
	case $name in
	first-*) op=00 ;;
	middle-*) op=01 ;;
	inv-*) op=17 ;;
	*) op=04 ;;
	esac
	printf '000000 %s 00 ff ff 00 00 00 11 00 00 00 %02x' $op $((n % 256))
	[ $op = 17 ] && printf ' 00 00 a1 03'
	echo "$hex" | tr -d ' \n' | sed 's/../ &/g'
	echo ' 00 00 00 00'
done <"$TMP/vectors" >"$TMP/frames.txt"
text2pcap -q -4 192.0.2.1,192.0.2.2 -u 4791,4791 "$TMP/frames.txt" \
	"$TMP/f.pcap" 2>"$TMP/text2pcap.err"
check $? "text2pcap wrote $n frames"

ts() {
	tshark -n -r "$TMP/f.pcap" -X lua_script:"$PLUGIN" \
		--disable-protocol rpcordma "$@" 2>>"$TMP/stderr"
}

# The decoded words, frame by frame.
ts -T fields -E separator=, -E occurrence=f -e rpcrdma.vers \
	-e rpcrdma.xid -e rpcrdma.credits -e rpcrdma.proc -e rpcrdma.err \
	-e rpcrdma.direction -e rpcrdma.inv_handle >"$TMP/fields"
check $? "tshark read the capture with the plugin"
i=0
while IFS='	' read -r name want hex; do
	i=$((i + 1))
	got=$(sed -n "${i}p" "$TMP/fields")
	exp=$(echo "$want" | sed 's/-//g')
	[ "$got" = "$exp" ]
	check $? "$name: decoded $got (want $exp)"
done <"$TMP/vectors"

# rpcrdma.reply is in every MSG/NOMSG header; rpcrdma.reply.count says
# whether the Reply chunk is there (V1-TV11a/b have one, V1-TV1 none).
for nc in V1-TV1,0 V1-TV11a,1 V1-TV11b,1 V2-TV3,0; do
	name=${nc%,*}
	i=$(awk -F '\t' -v n="$name" '$1 == n { print NR }' "$TMP/vectors")
	got=$(ts -Y "frame.number == $i" -T fields -e rpcrdma.reply.count)
	[ "$got" = "${nc#*,}" ]
	check $? "$name: rpcrdma.reply.count $got (want ${nc#*,})"
done

# Malformed: exactly the bad-* frames.
awk -F '\t' '$1 ~ /^bad-/ { print NR }' "$TMP/vectors" >"$TMP/bad.want"
ts -Y _ws.malformed -T fields -e frame.number >"$TMP/bad.got"
cmp -s "$TMP/bad.want" "$TMP/bad.got"
check $? "_ws.malformed marks exactly frames $(tr '\n' ' ' <"$TMP/bad.want")"
[ -s "$TMP/bad.got" ] || check 1 "_ws.malformed found no frame at all"
ts -Y 'rpcrdma.malformed' -T fields -e frame.number >"$TMP/bad.ours"
cmp -s "$TMP/bad.want" "$TMP/bad.ours"
check $? "each is marked by the plugin's own rpcrdma.malformed item"

# The RPC messages inside: rpc.xid equals rdma_xid, the program is NFS.
for name in V1-TV2 codec-v1-msg-call codec-v2-msg-call \
	codec-v2-optional-call; do
	i=$(awk -F '\t' -v n="$name" '$1 == n { print NR }' "$TMP/vectors")
	got=$(ts -Y "frame.number == $i" -T fields -E separator=, \
		-e rpcrdma.xid -e rpc.xid -e rpc.program)
	xid=${got%%,*}
	[ -n "$xid" ] && [ "$got" = "$xid,$xid,100003" ]
	check $? "$name: RPC Call inside: $got (rdma_xid,rpc.xid,rpc.program)"
done
# NFSv3 with its data moved by RDMA (RFC 8166 3.4.5-3.4.6): the RPC
# dissector is given the message with each moved item as zeros
# (rpcrdma.placed.length), so that NFS decodes it whole (the malformed
# check above finds none of these frames).  WRITE's data came in a Read
# chunk, READ's result in a Write chunk.
for nc in nfs-v1-write-call,4096,7,4096 nfs-v2-write-call,4096,7,4096 \
	nfs-v1-read-reply,100,6,100 nfs-v2-read-reply,100,6,100; do
	name=${nc%%,*}
	i=$(awk -F '\t' -v n="$name" '$1 == n { print NR }' "$TMP/vectors")
	got=$(ts -Y "frame.number == $i" -T fields -E separator=, \
		-E occurrence=f -e rpcrdma.placed.length -e nfs.procedure_v3 \
		-e nfs.count3)
	[ "$got" = "${nc#*,}" ]
	check $? "$name: $got (moved octets, NFS procedure, count; want ${nc#*,})"
done
i=$(awk -F '\t' '$1 == "inv-reply" { print NR }' "$TMP/vectors")
got=$(ts -Y "frame.number == $i" -T fields -E separator=, \
	-E occurrence=f -e infiniband.ieth -e rpc.xid -e rpc.msgtyp)
[ "$got" = "0000a103,0x2a000003,1" ]
check $? "inv-reply: after the IETH, the RPC Reply inside: $got"

# A Call to a program Wireshark does not know (rdemo's, 0x20005250) is
# decoded with the preference rpcrdma-wireshark(7) names.
i=$(awk -F '\t' '$1 == "rdemo-call" { print NR }' "$TMP/vectors")
got=$(ts -o rpc.dissect_unknown_programs:TRUE -Y "frame.number == $i" \
	-T fields -E separator=, -e rpc.xid -e rpc.program)
[ "$got" = "0x2a0000ff,$((0x20005250))" ]
check $? "rdemo-call: with rpc.dissect_unknown_programs: $got"

# Every frame but the middle-* ones is claimed, and no input raised a Lua
# error.
awk -F '\t' '$1 !~ /^middle-/ { print NR }' "$TMP/vectors" >"$TMP/ours.want"
ts -Y rpcrdma -T fields -e frame.number >"$TMP/ours.got"
cmp -s "$TMP/ours.want" "$TMP/ours.got"
check $? "the plugin claimed $(wc -l <"$TMP/ours.got") of $n frames, all but the SEND Middle ones"
ts -Y 'rpcrdma && rpc' -T fields -e frame.number >"$TMP/rpc.got"
! grep -qx "$(awk -F '\t' '$1 == "first-send-rpc" { print NR }' \
	"$TMP/vectors")" "$TMP/rpc.got"
check $? "the part of an RPC message in a SEND First is not decoded"
ts -V >"$TMP/verbose"
! grep -qi 'lua error' "$TMP/verbose" "$TMP/stderr"
check $? "no Lua error"
grep -i 'lua error' "$TMP/verbose" "$TMP/stderr" | head -5
lib_done
