#!/bin/bash
# tests/vm/t_gss.sh - RPCSEC_GSS with a real Kerberos KDC, INSIDE the
# Soft-RoCE VM: tests/vm/krb5.sh makes a throw-away MIT realm
# under /run/krb5 (the KDC on 127.0.0.1, the service principal
# rtest/gss.rtest.test in a keytab, the user alice with a ticket), then
# tests/vm/t_gss runs krb5, krb5i and krb5p over tcp and rdma against its
# own server (see its header).  make vmcheck runs the copy gss-krb5
# (tests/vm/gss.am).
#
# Also prepared here for t_gss: a stale ticket (fetched before the
# service's key changed) and an expired one, in credential caches of
# their own.
#
# One line per check; exit 0 only when all passed.  Nothing is skipped:
# a realm that cannot be set up is a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${T_GSS_BUILD:-$(cd "$here/../.." && pwd)}
T_GSS=$B/tests/vm/t_gss
KRB5_SH=@KRB5_SH@	# set by tests/vm/gss.am in the copy
[[ -r $KRB5_SH ]] || KRB5_SH=$here/krb5.sh
# shellcheck source=tests/vm/krb5.sh
. "$KRB5_SH" || { echo "t_gss: cannot read $KRB5_SH"; exit 1; }
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$here/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"

if [[ -z ${TIRPC_RDMA_VM:-} ]]; then
	echo "SKIP: no RDMA device (run in the VM: tests/vm/run)"
	exit 77
fi
lib_init t_gss
trap 'krb5_stop; lib_cleanup' EXIT

krb5_start
check $? "a Kerberos realm $KRB5_REALM, its KDC on 127.0.0.1:$KRB5_PORT, a ticket for $KRB5_USER"
[[ $failures -eq 0 ]] || { show "$KRB5_LOG" 20; lib_done; exit; }
krb5_stale_ticket "FILE:$KRB5_DIR/stale.cc"
check $? "a stale ticket for rtest/$KRB5_HOST (its key changed since)"
krb5_expired_ticket "FILE:$KRB5_DIR/expired.cc"
check $? "an expired ticket"
export KRB5_HOST KRB5_REALM KRB5_USER
# t_gss kinits a short-lived ticket of its own here (the expiry checks)
export KRB5_USER_PW T_GSS_SHORT_CC=FILE:$KRB5_DIR/short.cc
export T_GSS_STALE_CC=FILE:$KRB5_DIR/stale.cc
export T_GSS_EXPIRED_CC=FILE:$KRB5_DIR/expired.cc
# Under ASan: libtirpc's tcp record stream, past its limit, decodes
# garbage lengths and expects calloc to fail (not ASan's abort); libtirpc
# and MIT Kerberos keep global state that LeakSanitizer counts (the
# server's acceptor credentials, the GSS mechanism's tables).
echo 'leak:libtirpc.so.3' >"$TMP/lsan.supp"
echo 'leak:libgssapi_krb5.so.2' >>"$TMP/lsan.supp"
echo 'leak:libkrb5.so.3' >>"$TMP/lsan.supp"
echo 'leak:libk5crypto.so.3' >>"$TMP/lsan.supp"
export LSAN_OPTIONS=${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}suppressions=$TMP/lsan.supp
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}allocator_may_return_null=1
# arguments go to t_gss (--as-over-tcp: its expiry and window checks only)
"$T_GSS" "$@"
check $? "t_gss: RPCSEC_GSS krb5, krb5i, krb5p over tcp and rdma"
lib_done
