#!/bin/sh
# t_contract.sh: libtirpc's client/server contract over netid rdma against
# netid tcp (doc/libtirpc-contract.md, tests/vm/t_contract.c): rpcbind, a
# t_contract server of both netids, and the t_contract client that checks
# each entry point and control request over both.  The build installs
# copies of this script named after the part they run:
#   tests/vm/contract-LOOP  LOOP one of run, select, getreq, poll, common:
#                           calls, 4 threads at once, the fd tables and a
#                           closed connection, through a server that loops
#                           with svc_run(), or select() and svc_getreqset(),
#                           or svc_getreq(), or poll() and svc_getreq_poll(),
#                           or svc_getreq_common()
#   tests/vm/contract-clnt  clnt_control's requests, the CLIENT's other
#                           entry points, clnt_create_vers, rpc_call,
#                           rpc_broadcast and clnt_broadcast
#   tests/vm/contract-svc   the svcerr_* family, svc_getargs/freeargs,
#                           svc_getcaller/svc_getrpccaller, SVC_CONTROL,
#                           svc_register/svc_unregister, xprt_unregister,
#                           xprt_register and svc_destroy of the listeners
# One line per check; the exit status is 1 if one failed, 77 without an
# RDMA device.  Needs root (rpcbind) and rxe0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
part=${T_CONTRACT_PART:-$(basename "$0")}
part=${part#contract-}
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init t_contract
need_rdma
# libtirpc 1.3.3 leaks from its rpcbind address cache (rpcb_clnt.c) in
# clnt_create(..., "tcp") and rpcb_getaddr(): ignore leaks allocated
# inside libtirpc (the ASan build's LeakSanitizer).
echo 'leak:libtirpc.so.3' >"$TMP/lsan.supp"
LSAN_OPTIONS=${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}suppressions=$TMP/lsan.supp
export LSAN_OPTIONS

# contract SERVER-ARGS -- CLIENT-ARGS: the server, ready; the client, its
# lines passed through; the server ended by the client (CT_DONE), all its
# own checks passed.
contract() {
	sargs=
	while [ "$1" != -- ]; do
		sargs="$sargs $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # the server's words
	"$here/t_contract" server $sargs >"$TMP/server" 2>&1 &
	SERVER=$!
	pids="$pids $SERVER"
	wait_until 300 has_line "$TMP/server" '^ready'
	rc=$?
	check $rc "server ($sargs ) ready"
	if [ $rc -ne 0 ]; then
		sed 's/^/# server: /' "$TMP/server"
		return
	fi
	"$here/t_contract" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	cat "$TMP/out"
	sed 's/^/# stderr: /' "$TMP/err"
	check $rc "t_contract $*: exit status $rc"
	wait_until 100 eval '! kill -0 $SERVER 2>/dev/null'
	kill -TERM "$SERVER" 2>/dev/null
	wait "$SERVER"
	rc=$?
	sed 's/^/# server: /' "$TMP/server"
	check $rc "server ($sargs ): exit status $rc"
	! grep -q '^FAIL' "$TMP/server"
	check $? "server ($sargs ): its checks all ok"
}

rpcbind_start || {
	lib_done
	exit
}
case $part in
run | select | getreq | poll | common)
	contract "$part" ipv4 -- loops "$part" "$H4"
	;;
clnt)
	contract run ipv4 -- clnt "$H4"
	;;
svc)
	contract select -- svc "$H4" "$H6"
	;;
*)
	echo "usage: contract-{run,select,getreq,poll,common,clnt,svc} (or T_CONTRACT_PART=...)" >&2
	exit 2
	;;
esac
note "contract-$part"
lib_done
