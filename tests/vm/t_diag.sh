#!/bin/sh
# t_diag.sh: what a user hears when RDMA is missing or an address is wrong
# (t_diag.c), and what RPCRDMA_LOG lets through to stderr.  The build
# installs copies of this script named after the part they run:
#   tests/vm/diag-host on a host without an RDMA device (make check): t_diag
#                    nodev under RPCRDMA_LOG unset, quiet, error, info and a value
#                    not understood; stderr must hold exactly the lines the
#                    level allows: one per creation failure (level error),
#                    the warnings of RPCRDMA_PORT and RPCRDMA_ULB_CONF
#                    (level warn), and clnt_pcreateerror's line, which is
#                    the program's and always printed.  Skips (77) on a
#                    host with an RDMA device.
#   tests/vm/diag-vm in the VM: rpcbind running; t_diag noroute to
#                    127.0.0.1 and to the address of a dummy interface (no
#                    RDMA device for either), t_diag nobind on the latter,
#                    and t_diag inuse on the VM's IPv4 and IPv6 addresses.
# One line per check ("ok - ..." / "FAIL - ...", tests/vm/lib.sh); exit 1
# if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
part=${T_DIAG_PART:-$(basename "$0")}
part=${part#diag-}
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
PROG=$here/t_diag
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$(dirname "$0")/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
lib_init t_diag

DUMMY=d0diag
DUMMY_ADDR=198.51.100.1

cleanup() {
	[ -n "${dummy_made:-}" ] && /usr/bin/env ip link del "$DUMMY" 2>/dev/null
	lib_cleanup
}
trap cleanup EXIT

# run LABEL CMD...: the program's checks passed; sets rc.  Its lines and
# stderr are shown, or with BRIEF=1 only its failures.
run() {
	r_label=$1
	shift
	timeout 100 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "${BRIEF:-0}" = 1 ]; then
		grep '^FAIL' "$TMP/out"
	else
		cat "$TMP/out"
		sed 's/^/# stderr: /' "$TMP/err"
	fi
	if [ $rc -eq 77 ]; then
		return 77
	fi
	check "$rc" "$r_label: exit status $rc"
}

count() {	# count PATTERN: lines of stderr matching PATTERN
	grep -c -- "$1" "$TMP/err"
}

# ---- the host: no RDMA device at all -------------------------------------------

# nodev_run LABEL RPCRDMA_LOG-VALUE: t_diag nodev with a warning of each
# kind armed (a bad RPCRDMA_PORT, a RPCRDMA_ULB_CONF that does not exist)
nodev_run() {
	if [ -n "$2" ]; then
		set -- "$1" env RPCRDMA_LOG="$2"
	else
		set -- "$1" env -u RPCRDMA_LOG
	fi
	run "$@" RPCRDMA_PORT=junk RPCRDMA_ULB_CONF="$TMP/none.conf" \
		"$PROG" nodev </dev/null
}

# judge LABEL ERRORS WARNINGS BAD-VALUE-LINES [INFO]: the library's lines
# on stderr, by kind, and clnt_pcreateerror's; INFO 1: level info, where an
# rdma failure on the way to tcp is a line too
judge() {
	want=$(sed -n 's/^library errors: //p' "$TMP/out")
	[ -n "$want" ] && [ "$want" -gt 0 ]
	check $? "$1: t_diag counted its creation failures (${want:-none})"
	[ -n "$want" ] || return
	e=$(count '^rpcrdma: .*no RDMA device on this host (see ibv_devices')
	w=$(count "^rpcrdma: RPCRDMA_PORT='junk' ignored")
	u=$(count "^rpcrdma: $TMP/none.conf: No such file or directory\$")
	b=$(count "^rpcrdma: RPCRDMA_LOG=.* ignored")
	all=$(count '^rpcrdma: ')
	[ "$2" -eq 0 ] && ew=0 || ew=$((want + ${5:-0}))
	[ "$e" -eq "$ew" ]
	check $? "$1: $e line(s) naming the missing device, one per failure ($ew)"
	[ "$w" -eq "$3" ] && [ "$u" -eq "$3" ]
	check $? "$1: warnings: RPCRDMA_PORT $w, RPCRDMA_ULB_CONF $u (each $3)"
	[ "$b" -eq "$4" ]
	check $? "$1: RPCRDMA_LOG value not understood: $b line(s) ($4)"
	[ "$all" -eq $((e + w + u + b)) ]
	check $? "$1: no other line of the library ($all in all)"
	grep -q '^pcreate: RPC: Remote system error - No such device: no RDMA device on this host (see ibv_devices' "$TMP/err"
	check $? "$1: clnt_pcreateerror prints the words (the program's line)"
}

part_host() {
	nodev_run "default level" ""
	[ $rc -eq 77 ] && { echo "SKIP: this host has an RDMA device"; exit 77; }
	judge "default level" 1 1 0
	# the same checks again: only the levels' lines are news
	BRIEF=1
	nodev_run "RPCRDMA_LOG=quiet" quiet
	judge "RPCRDMA_LOG=quiet" 0 0 0
	nodev_run "RPCRDMA_LOG=error" error
	judge "RPCRDMA_LOG=error" 1 0 0
	nodev_run "RPCRDMA_LOG=1" 1
	judge "RPCRDMA_LOG=1" 1 0 0
	nodev_run "RPCRDMA_LOG=info" info
	judge "RPCRDMA_LOG=info" 1 1 0 1
	nodev_run "RPCRDMA_LOG=loud" loud
	judge "RPCRDMA_LOG=loud (the default)" 1 1 1
}

# ---- the VM -------------------------------------------------------------------------

# A local address on an interface without an RDMA device (the VM's only
# device, rxe0, is on v0); removed again at exit.
make_dummy() {
	/usr/bin/env ip link add "$DUMMY" type dummy &&
		dummy_made=1 &&
		/usr/bin/env ip addr add "$DUMMY_ADDR/24" dev "$DUMMY" &&
		/usr/bin/env ip link set "$DUMMY" up
	check $? "a dummy interface $DUMMY with $DUMMY_ADDR (no RDMA device)"
}

# A set-user-ID program ignores librpcrdma's variables (secure_getenv):
# RPCRDMA_LOG=quiet does not silence it, RPCRDMA_ULB_CONF names no file
# for it; the same program not set-user-ID obeys both.
setuid_ignores_env() {
	cp "$PROG" "$TMP/t_diag_suid" && chown nobody "$TMP/t_diag_suid" &&
		chmod 4755 "$TMP/t_diag_suid"
	check $? "a set-user-ID (nobody) copy of t_diag"
	BRIEF=1
	run "plain, RPCRDMA_LOG=quiet" env RPCRDMA_LOG=quiet \
		"$PROG" noroute 127.0.0.1
	[ "$(count '^rpcrdma: ')" -eq 0 ]
	check $? "plain, RPCRDMA_LOG=quiet: no line of the library"
	run "set-user-ID, RPCRDMA_LOG=quiet" env RPCRDMA_LOG=quiet \
		"$TMP/t_diag_suid" noroute 127.0.0.1
	[ "$(count '^rpcrdma: rdma: no RDMA device for address 127.0.0.1')" -eq 1 ]
	check $? "set-user-ID, RPCRDMA_LOG=quiet ignored: the error is printed"
	run "plain, RPCRDMA_ULB_CONF" env RPCRDMA_ULB_CONF="$TMP/none.conf" \
		"$PROG" noroute 127.0.0.1
	[ "$(count "^rpcrdma: $TMP/none.conf: ")" -eq 1 ]
	check $? "plain: RPCRDMA_ULB_CONF is read (its file is missing)"
	run "set-user-ID, RPCRDMA_ULB_CONF" env RPCRDMA_ULB_CONF="$TMP/none.conf" \
		"$TMP/t_diag_suid" noroute 127.0.0.1
	[ "$(count "none.conf")" -eq 0 ]
	check $? "set-user-ID: RPCRDMA_ULB_CONF ignored"
	BRIEF=0
}

part_vm() {
	# libtirpc 1.3.3 leaks a struct netbuf from its rpcbind address cache
	# in clnt_create(..., "tcp"), which noroute calls (as t_netid.sh)
	echo 'leak:libtirpc.so.3' >"$TMP/lsan.supp"
	LSAN_OPTIONS=${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}suppressions=$TMP/lsan.supp
	export LSAN_OPTIONS
	rpcbind_start || return
	run "no device for 127.0.0.1, rpcbind running" "$PROG" noroute 127.0.0.1
	grep -q '^rpcrdma: rdma: no RDMA device for address 127.0.0.1' "$TMP/err"
	check $? "the library says it once on stderr: $(head -n 1 "$TMP/err")"
	setuid_ignores_env
	if make_dummy; then
		run "no device for $DUMMY_ADDR, rpcbind running" \
			"$PROG" noroute "$DUMMY_ADDR"
		run "a listener on $DUMMY_ADDR" "$PROG" nobind "$DUMMY_ADDR"
		grep -q "^rpcrdma: svc_rdma_create: cannot bind RDMA listener to $DUMMY_ADDR: no RDMA device for address $DUMMY_ADDR" "$TMP/err"
		check $? "the library says why: $(head -n 1 "$TMP/err")"
	fi
	run "IPv4 port in use" "$PROG" inuse "$H4"
	run "IPv6 port in use" "$PROG" inuse "$H6"
	grep -q '^rpcrdma: svc_rdma_create: cannot bind RDMA listener to ' "$TMP/err"
	check $? "the library says why: $(head -n 1 "$TMP/err")"
}

case $part in
host | vm) "part_$part" ;;
*)
	echo "usage: diag-host | diag-vm (or T_DIAG_PART=...)" >&2
	exit 2
	;;
esac
note "diag-$part"
lib_done
