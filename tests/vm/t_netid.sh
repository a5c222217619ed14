#!/bin/sh
# t_netid.sh: netids rdma and rdma6 through libtirpc's own entry points
# (rpcrdma_netid(3)).  The build installs copies of this script named after
# the part they run:
#   tests/vm/netid-offline  no network (make check runs it on the host too):
#                           t_netid offline, linked, LD_PRELOADed and with a
#                           libtirpc that binds its own calls (as built with
#                           -Bsymbolic-functions), and the start-up check of
#                           a wrongly linked program
#   tests/vm/netid-linked   rpcbind, t_netid server + client, the
#                           system's rpcinfo (its list, -s with and
#                           without LD_PRELOAD, -T rdma/rdma6 with it),
#                           binaries linked -lrpcrdma -ltirpc
#   tests/vm/netid-preload  the same with binaries linked -ltirpc only and
#                           LD_PRELOAD=librpcrdma.so.1, and the system's
#                           rpcinfo -T rdma/rdma6 with LD_PRELOAD
#   tests/vm/netid-symbolic the same, linked, against a libtirpc whose own
#                           calls never reach librpcrdma
#   tests/vm/netid-rpcbind  unregistration at exit, the NFS port convention,
#                           a missing rpcbind (client and server)
#   tests/vm/netid-simple   the simplified interface (t_netid_simple):
#                           rpc_reg() over rdma, rdma6, NETPATH=rdma:tcp and
#                           a visible rdma line, next to tcp; rpc_call()'s
#                           cached CLIENT (one connection to the server, as
#                           rpcrdma-stat counts it), procedures that do not
#                           reply, the failures
# Each check prints one line ("ok - ..." / "FAIL - ..."); the exit status
# is 1 if any failed, 77 (a "SKIP - ..." line says why) if a check could
# not run here and none failed: a pass means every check ran.  The only
# such case: the system's libtirpc has no DT_FLAGS entry to make a
# -Bsymbolic copy of.  The VM parts need root (rpcbind) and rxe0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
part=${T_NETID_PART:-$(basename "$0")}
part=${part#netid-}
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
P=$((0x20005151))
P2=$((0x20005152))
LIB=$top/.libs/librpcrdma.so.1
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init t_netid

# An ASan build of the library needs the ASan runtime first in a program
# that was not built with it.
asan=$(ldd "$LIB" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*libasan[^ ]*\) .*/\1/p')
PRELOAD=${asan:+$asan:}$LIB
# For rpcinfo, which was not built for leak checking.
NOLEAKS=ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0
# libtirpc 1.3.3 leaks a struct netbuf (16 bytes) from its rpcbind address
# cache (rpcb_clnt.c) in rpcb_getmaps() and clnt_create(..., "tcp"), both
# of which the client part calls: ignore leaks allocated inside libtirpc
# for that process only.
echo 'leak:libtirpc.so.3' >"$TMP/lsan.supp"
TIRPC_LEAKS=LSAN_OPTIONS=${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}suppressions=$TMP/lsan.supp

# Run a C test program, pass its lines through, count its failures.
run_prog() {	# run_prog LABEL CMD...
	rp_label=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/out"
	sed 's/^/# stderr: /' "$TMP/err"
	check $rc "$rp_label: exit status $rc"
}

no_selfcheck_warning() {	# no_selfcheck_warning LABEL FILE
	! grep -q 'precedes librpcrdma\|calls its own functions' "$2"
	check $? "$1: the start-up check is silent"
}

# A copy of libtirpc that binds its own calls; sets SYMBOLIC (its
# directory).  0 when made; 77 (a skip line) when libtirpc has no DT_FLAGS
# entry; any other failure is a failed check.
make_symbolic() {
	SYMBOLIC=$TMP/symbolic
	mkdir -p "$SYMBOLIC"
	tirpc=$(ldd "$here/t_netid" | sed -n 's/.*libtirpc.so.3 => \([^ ]*\) .*/\1/p')
	"$here/t_netid_symbolic" "$tirpc" "$SYMBOLIC/libtirpc.so.3"
	ms_rc=$?
	case $ms_rc in
	0) return 0 ;;
	77) skip "-Bsymbolic libtirpc: no DT_FLAGS in '$tirpc' to set DF_SYMBOLIC in" ;;
	*) check "$ms_rc" "a -Bsymbolic copy of libtirpc '$tirpc' made" ;;
	esac
	return 1
}

selfcheck_says_symbolic() {	# selfcheck_says_symbolic LABEL FILE
	n=$(grep -c 'calls its own functions directly' "$2")
	[ "$n" -eq 1 ]
	check $? "$1: the start-up check says libtirpc binds its own calls ($n time(s))"
}

# wait_alive FILE PATTERN SECONDS PID: 0 when FILE has PATTERN, 1 when
# SECONDS pass or PID exits first.
wait_alive() {
	wa_i=0
	while [ $wa_i -lt $(($3 * 5)) ]; do
		has_line "$1" "$2" && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.2
		wa_i=$((wa_i + 1))
	done
	return 1
}

# listed PATTERN: 0 if rpcinfo's list has PATTERN, 1 if rpcinfo answered
# without it, 2 if it did not answer (which must not pass for "gone").
listed() {
	rpcinfo >"$TMP/list" 2>&1 || return 2
	grep -q "^ *100000 " "$TMP/list" || return 2
	grep -q "$1" "$TMP/list" && return 0
	return 1
}

stop_rpcbind() {
	kill "$RPCBIND" 2>/dev/null
	wait "$RPCBIND" 2>/dev/null
	rm -f /run/rpcbind.sock
}

# start_server LOG PATTERN CMD...: sets SERVER, 0 once LOG has PATTERN
start_server() {
	ss_log=$1 ss_pat=$2
	shift 2
	"$@" >"$ss_log" 2>&1 &
	SERVER=$!
	pids="$pids $SERVER"
	wait_alive "$ss_log" "$ss_pat" 60 "$SERVER"
}

stop_server() {	# stop_server LABEL LOG: SIGTERM, exit status 0, no FAIL line
	kill -TERM "$SERVER" 2>/dev/null
	wait "$SERVER"
	rc=$?
	sed 's/^/# server: /' "$2"
	check $rc "$1: server exit status $rc"
	! grep -q '^FAIL' "$2"
	check $? "$1: server checks all ok"
}

# ---- parts --------------------------------------------------------------------

part_offline() {
	run_prog "linked: t_netid offline" "$here/t_netid" offline </dev/null
	no_selfcheck_warning "linked" "$TMP/err"
	run_prog "LD_PRELOAD: t_netid_plain offline" \
		env LD_PRELOAD="$PRELOAD" "$here/t_netid_plain" offline </dev/null
	no_selfcheck_warning "LD_PRELOAD" "$TMP/err"
	if make_symbolic; then
		run_prog "-Bsymbolic libtirpc: t_netid offline" \
			env LD_LIBRARY_PATH="$SYMBOLIC" "$here/t_netid" offline </dev/null
		selfcheck_says_symbolic "-Bsymbolic libtirpc" "$TMP/err"
	fi
	"$here/t_netid_order" >"$TMP/out" 2>"$TMP/err"
	n=$(grep -c 'libtirpc precedes librpcrdma' "$TMP/err")
	[ "$n" -eq 1 ]
	check $? "linked -ltirpc -lrpcrdma: the start-up check says so once ($n): $(head -c 120 "$TMP/err")..."
	grep -q 'answered by libtirpc' "$TMP/out"
	check $? "linked -ltirpc -lrpcrdma: $(cat "$TMP/out")"
}

# has_item LIST ITEM: ITEM is one of the comma-separated LIST.
has_item() {
	case ",$1," in
	*",$2,"*) return 0 ;;
	esac
	return 1
}

# rpcinfo_s LABEL HOW [ENV...]: the system's rpcinfo -s (rpcbind's DUMP,
# summarised), run with ENV, lists P with versions 1-5 under netids rdma
# and rdma6 (and tcp, which the server also registers).
rpcinfo_s() {
	rs_label=$1 rs_how=$2
	shift 2
	env "$@" rpcinfo -s "$H4" >"$TMP/out" 2>&1
	rc=$?
	grep "^ *$P \|program" "$TMP/out" | sed 's/^/# rpcinfo -s: /'
	# program version(s) netid(s) service owner
	# shellcheck disable=SC2046 # split into its columns
	set -- $(grep "^ *$P " "$TMP/out")
	[ $rc -eq 0 ] && [ $# -ge 3 ] && has_item "$3" rdma &&
		has_item "$3" rdma6 && has_item "$3" tcp &&
		[ "$(echo "$2" | tr , '\n' | sort -n | tr '\n' ' ')" = "1 2 3 4 5 " ]
	check $? "$rs_label: ${rs_how}rpcinfo -s $H4 lists P, versions 1-5, under netids rdma, rdma6 and tcp (exit $rc)"
}

rpcinfo_checks() {	# rpcinfo_checks LABEL
	rpcinfo >"$TMP/rpcinfo" 2>&1
	n=$(grep -c "^ *$P .* rdma6\? " "$TMP/rpcinfo")
	grep "^ *$P " "$TMP/rpcinfo" | sed 's/^/# rpcinfo: /'
	[ "$n" -eq 8 ]
	check $? "$1: rpcinfo on the server shows $n rdma/rdma6 registrations of P (want 8)"
	rpcinfo_s "$1" ""
	rpcinfo_s "$1" "LD_PRELOAD " "$NOLEAKS" LD_PRELOAD="$PRELOAD"
	env "$NOLEAKS" LD_PRELOAD="$PRELOAD" rpcinfo -T rdma "$H4" $P >"$TMP/out" 2>&1
	rc=$?
	sed 's/^/# /' "$TMP/out"
	[ $rc -eq 0 ] && [ "$(grep -c 'ready and waiting' "$TMP/out")" -eq 5 ]
	check $? "$1: LD_PRELOAD rpcinfo -T rdma $H4 $P: versions 1-5 ready"
	env "$NOLEAKS" LD_PRELOAD="$PRELOAD" rpcinfo -T rdma "$H4" $P 1 >"$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q "version 1 ready and waiting" "$TMP/out"
	check $? "$1: LD_PRELOAD rpcinfo -T rdma $H4 $P 1 (exit $rc): $(cat "$TMP/out")"
	env "$NOLEAKS" LD_PRELOAD="$PRELOAD" rpcinfo -T rdma6 "$H6" $P 3 >"$TMP/out" 2>&1
	grep -q "version 3 ready and waiting" "$TMP/out"
	check $? "$1: LD_PRELOAD rpcinfo -T rdma6 $H6 $P 3: $(cat "$TMP/out")"
	rpcinfo -T rdma "$H4" $P 1 >"$TMP/out" 2>&1
	rc=$?
	# for the reason that matters: libtirpc alone has no netid rdma
	[ $rc -ne 0 ] && grep -q "Could not find rdma" "$TMP/out"
	check $? "$1: without librpcrdma, rpcinfo -T rdma fails (exit $rc): $(cat "$TMP/out")"
}

part_full() {	# part_full LABEL PROGRAM [ENV...]
	pf_label=$1 pf_prog=$2
	shift 2
	rpcbind_start || return
	start_server "$TMP/server" '^ready' env "$@" "$here/$pf_prog" server "$H4" "$H6"
	check $? "$pf_label: server ready"
	run_prog "$pf_label: client" env "$TIRPC_LEAKS" "$@" "$here/$pf_prog" client "$H4" "$H6"
	case $pf_label in
	-Bsymbolic*) selfcheck_says_symbolic "$pf_label client" "$TMP/err" ;;
	*) no_selfcheck_warning "$pf_label client" "$TMP/err" ;;
	esac
	rpcinfo_checks "$pf_label"
	stop_server "$pf_label" "$TMP/server"
	stop_rpcbind
}

part_linked() {
	part_full linked t_netid
}

part_preload() {
	part_full LD_PRELOAD t_netid_plain LD_PRELOAD="$PRELOAD"
}

part_symbolic() {
	make_symbolic || return
	part_full "-Bsymbolic libtirpc" t_netid LD_LIBRARY_PATH="$SYMBOLIC"
}

part_rpcbind() {
	rpcbind_start || return
	# Registered while it runs, gone after a normal exit.
	start_server "$TMP/one" '^ready' "$here/t_netid" serve-one rdma $P2 1
	check $? "serve-one rdma: ready"
	rpcinfo | grep -q "^ *$P2 *1 *rdma "
	check $? "rpcinfo shows program $P2 on rdma"
	run_prog "clnt_create through rpcbind" "$here/t_netid" call rdma "$H4" $P2 1
	stop_server "serve-one rdma" "$TMP/one"
	listed "^ *$P2 "
	[ $? -eq 1 ]
	check $? "rpcbind answers: program $P2 unregistered at exit"
	# rdma6 the same way.
	start_server "$TMP/one" '^ready' "$here/t_netid" serve-one rdma6 $P2 2
	check $? "serve-one rdma6: ready"
	run_prog "clnt_create rdma6 through rpcbind" "$here/t_netid" call rdma6 "$H6" $P2 2
	stop_server "serve-one rdma6" "$TMP/one"
	listed "^ *$P2 "
	[ $? -eq 1 ]
	check $? "rpcbind answers: program $P2 (rdma6) unregistered at exit"
	# NFS: port 20049 on both sides, no rpcbind registration.
	start_server "$TMP/nfs" '^ready' env RPCRDMA_RPCBIND=0 "$here/t_netid" serve-one rdma 100003 3
	grep -q '^ready port 20049' "$TMP/nfs"
	check $? "NFS server on rdma: $(grep '^ready' "$TMP/nfs")"
	listed "^ *100003 .* rdma "
	[ $? -eq 1 ]
	check $? "RPCRDMA_RPCBIND=0: rpcbind answers, not registered"
	run_prog "NFS client, port 20049 by convention" "$here/t_netid" call rdma "$H4" 100003 3
	stop_server "NFS server" "$TMP/nfs"
	# No rpcbind at all.
	stop_rpcbind
	start_server "$TMP/one" '^ready' "$here/t_netid" serve-one rdma $P2 1
	check $? "no rpcbind: the server still serves"
	grep -q 'not registered with rpcbind' "$TMP/one"
	check $? "no rpcbind: the server says: $(grep 'rpcrdma: ' "$TMP/one" | head -n 1)"
	port=$(sed -n 's/^ready port //p' "$TMP/one")
	run_prog "no rpcbind" "$here/t_netid" norpcbind "$H4" "${port:-0}"
	stop_server "no rpcbind" "$TMP/one"
}

# ---- netid-simple -------------------------------------------------------------

SIMPLE=$here/t_netid_simple
PS=$((0x20005160)) PT=$((0x20005161)) PN=$((0x20005162)) PM=$((0x20005163))
PE=$((0x20005164)) PV=$((0x20005165))

# uaddr PROG VERS NETID: the address rpcinfo lists, empty if none.
uaddr() {
	awk -v p="$1" -v v="$2" -v n="$3" \
		'$1 == p && $2 == v && $3 == n { print $4; exit }' "$TMP/rpcinfo"
}

simple_rpcinfo() {
	rpcinfo >"$TMP/rpcinfo" 2>&1
	grep "^ *\($PS\|$PT\|$PN\|$PM\|$PV\) " "$TMP/rpcinfo" | sed 's/^/# rpcinfo: /'
	a=$(uaddr $PS 1 rdma)
	[ -n "$a" ] && [ "$(uaddr $PS 2 rdma)" = "$a" ] && [ "$(uaddr $PN 1 rdma)" = "$a" ] &&
		[ "$(uaddr $PM 1 rdma)" = "$a" ] &&
		[ "$(awk '$3 == "rdma"' "$TMP/rpcinfo" | wc -l)" -eq 4 ]
	check $? "rpcinfo: $PS v1 and v2, $PN, $PM on rdma, all at $a (one transport)"
	[ -n "$(uaddr $PS 1 rdma6)" ]
	check $? "rpcinfo: $PS v1 on rdma6 at $(uaddr $PS 1 rdma6)"
	a=$(uaddr $PS 1 tcp)
	[ -n "$a" ] && [ "$(uaddr $PN 1 tcp)" = "$a" ] && [ -n "$(uaddr $PT 1 tcp)" ] &&
		[ -n "$(uaddr $PM 1 tcp)" ]
	check $? "rpcinfo: $PS and $PN (NETPATH=rdma:tcp) on one tcp transport, $PT and $PM on tcp"
	[ -n "$(uaddr $PV 1 tcp)" ] && [ -z "$(uaddr $PV 1 rdma)" ]
	check $? "rpcinfo: $PV (\"visible\", NETPATH=rdma:tcp) on tcp, not on rdma"
}

# svc_value FILE LABEL-REGEX NAME: NAME's value on the line of rpcrdma-stat's
# output whose label matches (empty if none).
svc_value() {
	awk -v re="^rpcrdma: $2: " -v name="$3" '
		$0 ~ re {
			sub(re, "")
			n = split($0, f, " ")
			for (i = 1; i < n; i += 2)
				if (f[i] == name)
					print f[i + 1]
		}' "$1"
}

# The server's counters after the "calls" client: one connection per
# listener, which served every call.
simple_conns() {	# simple_conns CALLS-PER-NETID
	"$top/tools/rpcrdma-stat" -d "$TMP/sock" "$SERVER" >"$TMP/stat" 2>&1
	rc=$?
	grep "^rpcrdma: svc " "$TMP/stat" | sed 's/^/# /'
	for l in 'svc 0\.0\.0\.0:[0-9]*' 'svc \[::\]:[0-9]*'; do
		c=$(svc_value "$TMP/stat" "$l" conns_accepted)
		r=$(svc_value "$TMP/stat" "$l" requests)
		[ $rc -eq 0 ] && [ "${c:-x}" = 1 ] && [ -n "$1" ] && [ "${r:-0}" -ge "$1" ]
		check $? "rpcrdma-stat, listener '$l': ${c:-no} connection(s) accepted (want 1), ${r:-no} requests (want >= ${1:-?})"
	done
}

part_simple() {
	rpcbind_start || return
	mkdir -p "$TMP/sock"
	start_server "$TMP/server" '^ready' env RPCRDMA_STATS_SOCKET="$TMP/sock" \
		"$SIMPLE" server "$H4" "$H6"
	check $? "rpc_reg server ready"
	simple_rpcinfo
	run_prog "rpc_call over rdma and rdma6" env "$TIRPC_LEAKS" "$SIMPLE" calls "$H4" "$H6"
	simple_conns "$(sed -n 's/^# calls per netid: //p' "$TMP/out")"
	run_prog "tcp beside rdma, NETPATH, no replies" env "$TIRPC_LEAKS" "$SIMPLE" more "$H4" "$H6"
	run_prog "rpc_reg failures" env "$TIRPC_LEAKS" "$SIMPLE" errors
	n=$(grep -c "rpc_reg: *can't reassign procedure number 0" "$TMP/err")
	[ "$n" -eq 2 ]
	check $? "rpc_reg(NULLPROC): the same words over rdma and tcp ($n times, want 2)"
	grep -q "rpcrdma: rpc_reg: couldn't register prog $PE vers 2 for rdma" "$TMP/err" &&
		grep -q "rpc_reg: *couldn't register prog $PE vers 3 for tcp" "$TMP/err"
	check $? "rpc_reg() on a program another dispatch function has: the same words over rdma and tcp"
	# A visible rdma entry (which rpcrdma-netconfig(5) advises against)
	# puts rdma into libtirpc's nettype "visible".
	{ cat /etc/netconfig && echo 'rdma tpi_cots_ord v inet rdma - -'; } >"$TMP/netconfig"
	run_prog "rpc_reg(\"visible\"), a visible rdma line in /etc/netconfig" \
		env "$TIRPC_LEAKS" unshare -m sh -c 'mount --bind "$1" /etc/netconfig && exec "$2" visible "$3"' \
		sh "$TMP/netconfig" "$SIMPLE" "$H4"
	stop_server "rpc_reg server" "$TMP/server"
	rpcinfo >"$TMP/rpcinfo" 2>&1
	[ -z "$(uaddr $PS 1 rdma)" ] && [ -z "$(uaddr $PS 1 rdma6)" ] && [ -z "$(uaddr $PN 1 rdma)" ] &&
		grep -q "^ *100000 " "$TMP/rpcinfo"
	check $? "rpcbind answers: the rdma registrations of rpc_reg() gone at exit"
	stop_rpcbind
}

case $part in
offline | linked | preload | symbolic | rpcbind | simple) "part_$part" ;;
*)
	echo "usage: netid-{offline,linked,preload,symbolic,rpcbind,simple} (or T_NETID_PART=...)" >&2
	exit 2
	;;
esac
if [ $failures -eq 0 ] && [ $skips -gt 0 ]; then
	echo "SKIP: netid-$part: $skips check(s) could not run here, none failed"
	exit 77
fi
note "netid-$part"
lib_done
