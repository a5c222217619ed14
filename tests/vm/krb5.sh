# tests/vm/krb5.sh - shell functions (sourced, bash) that run a throw-away
# MIT Kerberos realm inside the Soft-RoCE VM, so that RPCSEC_GSS tests use
# the real krb5 GSS-API mechanism.  Everything lives under one
# directory of the guest's tmpfs ($KRB5_DIR, default /run/krb5): krb5.conf,
# kdc.conf, the database and its stash, the keytab, the credential caches,
# the KDC's log.  The KDC listens on loopback only, on $KRB5_PORT (udp and
# tcp).  Every step has a deadline; a function that fails says why on
# standard error and returns non-zero: callers fail, never skip.
#
# krb5_start exports what the GSS-API reads: KRB5_CONFIG, KRB5_KDC_PROFILE,
# KRB5CCNAME (the user's ticket) and KRB5_KTNAME (the service's keytab);
# KRB5RCACHETYPE=none (no replay cache on disk).  Host names are taken as
# written (no DNS: dns_canonicalize_hostname and rdns off), so a host-based
# service "rtest@$KRB5_HOST" is the principal rtest/$KRB5_HOST@$KRB5_REALM.
#
# Needs, from the host (tests/vm/run's PACKAGES): krb5-kdc (krb5kdc,
# kdb5_util), krb5-admin-server (kadmin.local), krb5-user (kinit, klist,
# kvno).

KRB5_DIR=${KRB5_DIR:-/run/krb5}
KRB5_REALM=${KRB5_REALM:-RTEST.TEST}
KRB5_HOST=${KRB5_HOST:-gss.rtest.test}
KRB5_PORT=${KRB5_PORT:-61088}
KRB5_USER=${KRB5_USER:-alice}
KRB5_USER_PW=${KRB5_USER_PW:-alice-pw-32}
KRB5_LOG=${KRB5_LOG:-$KRB5_DIR/krb5.log}

krb5_say() {
	echo "krb5: $*" >&2
}

# kadmin.local QUERY: one query on the local database, within 30 s.
krb5_admin() {
	timeout 30 kadmin.local -q "$1" >>"$KRB5_LOG" 2>&1 &&
		! tail -n 3 "$KRB5_LOG" | grep -qi 'error\|fail\|not found'
}

# kinit as KRB5_USER into ccache $1 (a FILE: path), with the password on
# standard input; $2, if given, is the ticket's lifetime (kinit -l).
krb5_kinit() {
	local cc=$1 life=${2:-}
	echo "$KRB5_USER_PW" | timeout 30 kinit -c "$cc" ${life:+-l "$life"} \
		"$KRB5_USER@$KRB5_REALM" >>"$KRB5_LOG" 2>&1 ||
		{ krb5_say "kinit $KRB5_USER into $cc failed: $(tail -n 1 "$KRB5_LOG")"; return 1; }
}

krb5_write_conf() {
	cat >"$KRB5_DIR/krb5.conf" <<EOF
[libdefaults]
	default_realm = $KRB5_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	udp_preference_limit = 1
	ticket_lifetime = 1h
	forwardable = false
[realms]
	$KRB5_REALM = {
		kdc = 127.0.0.1:$KRB5_PORT
	}
[domain_realm]
	$KRB5_HOST = $KRB5_REALM
	.rtest.test = $KRB5_REALM
[logging]
	default = FILE:$KRB5_DIR/lib.log
EOF
	cat >"$KRB5_DIR/kdc.conf" <<EOF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$KRB5_PORT
	kdc_tcp_listen = 127.0.0.1:$KRB5_PORT
[realms]
	$KRB5_REALM = {
		database_name = $KRB5_DIR/principal
		key_stash_file = $KRB5_DIR/stash
		acl_file = $KRB5_DIR/kadm5.acl
		max_life = 2h
		max_renewable_life = 0
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$KRB5_DIR/kdc.log
	admin_server = FILE:$KRB5_DIR/kadmin.log
EOF
	: >"$KRB5_DIR/kadm5.acl"
}

# krb5_start: the realm, its KDC, the service principal rtest/$KRB5_HOST
# in $KRB5_DIR/rtest.keytab and the user's ticket in $KRB5_DIR/user.cc.
krb5_start() {
	local t i
	for t in krb5kdc kdb5_util kadmin.local kinit klist kvno; do
		command -v $t >/dev/null || {
			krb5_say "$t not installed (Debian krb5-kdc, krb5-admin-server, krb5-user)"
			return 1
		}
	done
	rm -rf "$KRB5_DIR"
	mkdir -p "$KRB5_DIR" && chmod 700 "$KRB5_DIR" ||
		{ krb5_say "cannot make $KRB5_DIR"; return 1; }
	export KRB5_CONFIG=$KRB5_DIR/krb5.conf
	export KRB5_KDC_PROFILE=$KRB5_DIR/kdc.conf
	export KRB5CCNAME=FILE:$KRB5_DIR/user.cc
	export KRB5_KTNAME=FILE:$KRB5_DIR/rtest.keytab
	export KRB5RCACHETYPE=none
	krb5_write_conf
	timeout 60 kdb5_util create -s -r "$KRB5_REALM" -P "master-$RANDOM$RANDOM" \
		>>"$KRB5_LOG" 2>&1 || { krb5_say "kdb5_util create failed"; return 1; }
	krb5_admin "addprinc -pw $KRB5_USER_PW $KRB5_USER" ||
		{ krb5_say "addprinc $KRB5_USER failed"; return 1; }
	krb5_admin "addprinc -randkey rtest/$KRB5_HOST" ||
		{ krb5_say "addprinc rtest/$KRB5_HOST failed"; return 1; }
	krb5_admin "ktadd -k $KRB5_DIR/rtest.keytab rtest/$KRB5_HOST" ||
		{ krb5_say "ktadd rtest/$KRB5_HOST failed"; return 1; }
	krb5kdc -n -P "$KRB5_DIR/kdc.pid" >>"$KRB5_LOG" 2>&1 &
	KRB5_KDC_PID=$!
	# the KDC answers once a kinit gets a ticket through it
	for ((i = 0; i < 60; i++)); do
		kill -0 "$KRB5_KDC_PID" 2>/dev/null || break
		krb5_kinit "$KRB5_DIR/user.cc" 2>/dev/null && return 0
		sleep 0.5
	done
	krb5_say "the KDC does not answer on 127.0.0.1:$KRB5_PORT: $(tail -n 2 "$KRB5_DIR/kdc.log" 2>/dev/null)"
	return 1
}

# krb5_stale_ticket CCACHE: a ticket for rtest/$KRB5_HOST that the server can
# no longer read: fetched into CCACHE, then the service's key is changed and
# the keytab written anew (only the new key in it).
krb5_stale_ticket() {
	local cc=$1
	krb5_kinit "$cc" || return 1
	timeout 30 kvno -c "$cc" "rtest/$KRB5_HOST@$KRB5_REALM" >>"$KRB5_LOG" 2>&1 ||
		{ krb5_say "kvno rtest/$KRB5_HOST failed"; return 1; }
	rm -f "$KRB5_DIR/rtest.keytab"
	krb5_admin "ktadd -k $KRB5_DIR/rtest.keytab rtest/$KRB5_HOST" ||
		{ krb5_say "ktadd (new key) failed"; return 1; }
}

# krb5_expired_ticket CCACHE: the user's ticket, expired (a lifetime of
# 2 s, then 4 s waited).
krb5_expired_ticket() {
	krb5_kinit "$1" 2s || return 1
	sleep 4
}

krb5_stop() {
	[[ -n ${KRB5_KDC_PID:-} ]] || return 0
	kill "$KRB5_KDC_PID" 2>/dev/null
	wait "$KRB5_KDC_PID" 2>/dev/null
	KRB5_KDC_PID=
	return 0
}
