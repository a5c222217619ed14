#!/bin/sh
# tests/vm/ping.sh: rpcrdma-ping(1) against a real server, INSIDE the
# Soft-RoCE VM; make vmcheck runs it as tests/vm/ping-tool (tools/tools.am).
# examples/rdemo_server (an rpcgen -n rdma -n rdma6 main) registers with
# rpcbind - the one running, or one started here and stopped again - and
# rpcrdma-ping calls it over rdma and rdma6, through rpcbind and at its
# port, in both RPC-over-RDMA versions; then the failures: a program not
# registered, a host with no server, a host address without an RDMA
# device, a usage error, and SIGINT.  Checks read the tool's output and
# exit status, and the server's log for the calls that reached it.
#
# Holds with RPCRDMA_VERSION=1 or 2 in the environment (-V overrides it).
# One line per check; exit 0 only when all passed.
set -u
if [ $# -ge 1 ]; then
	B=$1
else
	B=$(cd "$(dirname "$0")/../.." && pwd)	# a copy in the build tree
fi
PING=$B/tools/rpcrdma-ping
SERVER_BIN=$B/examples/rdemo_server
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
NOHOST=192.0.2.99	# on the VM's subnet, nobody there
PROG=$((0x20005250))
UNREG=$((0x20005251))
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init ping
rpcbind_before=$(pidof rpcbind)

# run NAME ARGS...: rpcrdma-ping ARGS, output in $TMP/NAME, status in rc,
# whole seconds taken in secs
run() {
	name=$1
	shift
	echo "    \$ rpcrdma-ping $*"
	t0=$(date +%s%N)
	"$PING" "$@" >"$TMP/$name" 2>&1
	rc=$?
	ms_all=$((($(date +%s%N) - t0) / 1000000))
	secs=$((ms_all / 1000))
	show "$TMP/$name"
	echo "    [exit $rc after $ms_all ms]"
}

# null_calls: NULL calls the server has logged so far
null_calls() {
	grep -c '^rdemo server: NULL ' "$TMP/server"
}

# replies FILE NETID: the reply lines of FILE have seq=1,2,3,... in order
# and name HOST, PROG, vers 1 and NETID; prints how many there are
replies() {
	awk -v netid="$2" '
		/^NULL from / {
			n++
			if ($5 != "'"$PROG"'" || $7 != "1" ||
			    $8 != "(" netid || $10 != "seq=" n ||
			    $11 !~ /^time=[0-9.]+$/)
				bad = 1
		}
		END { print bad ? -1 : n + 0 }' "$1"
}

# good_run FILE NETID COUNT TEXT: exit 0, COUNT replies in order, summary
good_run() {
	[ $rc -eq 0 ] && [ "$(replies "$1" "$2")" -eq "$3" ] &&
		grep -q "^$3 probes sent, $3 answered, 0% lost, time [0-9]* ms$" "$1" &&
		grep -q '^rtt min/avg/max/mdev = [0-9.]*/[0-9.]*/[0-9.]*/[0-9.]* ms$' "$1" &&
		grep -q "^connected to .* over $2 in [0-9.]* ms$" "$1"
	check $? "$4"
}

# ---- rpcbind and the server ---------------------------------------------

rpcbind_up
check $? "rpcbind answers${RPCBIND:+ (started here)}"

# The server speaks both versions whatever RPCRDMA_VERSION the suite runs
# with, so that -V 1 and -V 2 each have a peer (tests/vm/README.md).
server_up server "$PROG" env -u RPCRDMA_VERSION "$SERVER_BIN"
rpcinfo >"$TMP/rpcinfo" 2>&1
[ "$(grep -c "^ *$PROG *1 *rdma6\? " "$TMP/rpcinfo")" -eq 2 ]
check $? "rdemo_server registered on rdma and rdma6"
# its universal address: a.b.c.d.HI.LO
port_of() {	# port_of NETID
	awk -v p="$PROG" -v n="$1" '$1 == p && $2 == 1 && $3 == n {
		k = split($4, f, "."); print f[k - 1] * 256 + f[k] }' \
		"$TMP/rpcinfo"
}
PORT=$(port_of rdma)
PORT6=$(port_of rdma6)

# ---- Calls answered --------------------------------------------------------

before=$(null_calls)
run rdma -c 3 -i 0.2 "$H4" "$PROG" 1
good_run "$TMP/rdma" rdma 3 "-c 3 over rdma, through rpcbind: 3 replies, seq 1..3, summary 0% lost"
[ $(($(null_calls) - before)) -eq 3 ]
check $? "the server logged exactly those 3 NULL calls"

run rdma6 -6 -c 3 -i 0.2 "$H6" "$PROG" 1
good_run "$TMP/rdma6" rdma6 3 "-6 -c 3 over rdma6, through rpcbind: 3 replies, seq 1..3, summary 0% lost"
grep -q "over rdma6" "$TMP/server"
check $? "the server saw calls over rdma6"

run direct -c 2 -i 0.2 -p "$PORT" "$H4" "$PROG" 1
good_run "$TMP/direct" rdma 2 "-p $PORT: connected directly, 2 replies"
grep -q "^connected to $H4 ($H4) port $PORT over rdma in" "$TMP/direct"
check $? "-p: the connection line names the port given"

run badname -c 1 -p "$PORT" "$H4" rdemo_prog_not_in_etc_rpc
[ $rc -eq 2 ] && grep -q "unknown program" "$TMP/badname"
check $? "a program name not in /etc/rpc is a usage error (exit 2)"

run novers -c 2 -i 0.2 -p "$PORT" "$H4" "$PROG"
good_run "$TMP/novers" rdma 2 "-p without VERS: 2 replies"
grep -q "^program $PROG serves versions 1 to 1: probing version 1$" "$TMP/novers"
check $? "without VERS the server's PROG_MISMATCH names its versions (1 to 1)"

run novers6 -6 -c 1 "$H6" "$PROG"
good_run "$TMP/novers6" rdma6 1 "rdma6 through rpcbind without VERS: 1 reply"

for v in 1 2; do
	run "v$v" -V $v -c 2 -i 0.2 "$H4" "$PROG" 1
	[ $rc -eq 0 ] && [ "$(grep -c "(rdma v$v): seq=" "$TMP/v$v")" -eq 2 ]
	check $? "-V $v: both replies show version $v in force"
	run "pv$v" -6 -V $v -c 1 -p "$PORT6" "$H6" "$PROG" 1
	[ $rc -eq 0 ] && grep -q "(rdma6 v$v): seq=1 " "$TMP/pv$v"
	check $? "-V $v with -p (struct rpcrdma_attr): version $v in force over rdma6"
done
case ${RPCRDMA_VERSION:-} in
1 | 2)
	grep -q "(rdma v$RPCRDMA_VERSION): seq=" "$TMP/rdma"
	check $? "without -V, RPCRDMA_VERSION=$RPCRDMA_VERSION is in force"
	;;
esac

run quiet -q -c 2 -i 0.2 "$H4" "$PROG" 1
[ $rc -eq 0 ] && ! grep -q '^NULL ' "$TMP/quiet" &&
	grep -q '^2 probes sent, 2 answered, 0% lost' "$TMP/quiet"
check $? "-q: no reply lines, the summary"

# SIGINT: a run without -c stops after the probe in flight, with a summary
"$PING" -i 0.2 "$H4" "$PROG" 1 >"$TMP/int" 2>&1 &
P=$!
wait_until 100 at_least 3 "$TMP/int" '^NULL from'
kill -INT $P
wait $P
rc=$?
show "$TMP/int"
n=$(grep -c '^NULL from' "$TMP/int")
[ $rc -eq 0 ] && [ "$n" -ge 3 ] &&
	grep -q "^$n probes sent, $n answered, 0% lost" "$TMP/int"
check $? "SIGINT ends an endless run with its summary ($n probes), exit 0"

# ---- Failures ------------------------------------------------------------

run unreg -c 1 -W 3 "$H4" "$UNREG" 1
[ $rc -eq 2 ] && grep -q "RPC: Program not registered" "$TMP/unreg" &&
	grep -q "hint: program $UNREG is not registered on rdma" "$TMP/unreg"
check $? "a program not registered: exit 2, 'Program not registered'"

run badvers -c 2 -i 0.2 -p "$PORT" "$H4" "$PROG" 7
[ $rc -eq 1 ] && [ "$(grep -c 'seq=[12]: RPC: Program/version mismatch' "$TMP/badvers")" -eq 2 ] &&
	grep -q '^2 probes sent, 0 answered, 100% lost' "$TMP/badvers"
check $? "a version the server lacks: each probe names the RPC error, exit 1"

# A host with no server: the tool gives up within -W, by its own clock (a
# process start under TCG alone takes 1 to 6 s, so the wall clock of the
# run only shows that nothing hung).  Through rpcbind the library first
# checks that a device reaches the address (one -W), after the first use
# of libibverbs in the process, which lists the devices: up to 0.9 s under
# TCG, so 2 s of slack there.
for how in rpcbind -p; do
	case $how in
	rpcbind) run nohost -c 1 -W 2 "$NOHOST" "$PROG" 1 ; most=4000 ;;
	-p) run nohost -c 1 -W 2 -p "$PORT" "$NOHOST" "$PROG" 1 ; most=2500 ;;
	esac
	ms=$(sed -n 's/.* (after \([0-9]*\) ms)$/\1/p' "$TMP/nohost")
	[ $rc -eq 2 ] && [ -n "$ms" ] && [ "$ms" -ge 1900 ] &&
		[ "$ms" -le "$most" ] && [ $secs -le 20 ]
	check $? "a host with no server ($how): exit $rc (2) after ${ms:-?} ms (-W 2; ${secs} s in all)"
done

run refused -c 1 -W 2 -p 9 "$H4" "$PROG" 1
[ $rc -eq 2 ] && grep -q "RPC: Remote system error" "$TMP/refused"
check $? "a port nobody listens on: exit 2 with the RPC error"

run nodev -c 1 -W 2 -p "$PORT" 127.0.0.1 "$PROG" 1
[ $rc -eq 2 ] && grep -q "^rpcrdma-ping: 127.0.0.1: .*no RDMA device.*rdma link add" "$TMP/nodev"
check $? "an address without an RDMA device: exit 2 with the library's hint"

run usage -V 3 "$H4" "$PROG" 1
[ $rc -eq 2 ] && grep -q '^usage: rpcrdma-ping' "$TMP/usage"
check $? "-V 3: usage error, exit 2"

# ---- Leave nothing behind -------------------------------------------------

kill "$SERVER"
wait "$SERVER" 2>/dev/null
# an rpcgen main killed by a signal does not unregister (rpcrdma_netid(3))
rpcinfo -d "$PROG" 1
if [ -n "$RPCBIND" ]; then
	kill "$RPCBIND"
	wait "$RPCBIND" 2>/dev/null
fi
[ "$(pidof rpcbind)" = "$rpcbind_before" ]
check $? "no rpcbind left behind or stopped (before: '$rpcbind_before', after: '$(pidof rpcbind)')"

if [ $failures -ne 0 ]; then
	echo "--- server"
	show "$TMP/server"
fi
lib_done
