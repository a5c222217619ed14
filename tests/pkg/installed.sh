#!/bin/sh
# tests/pkg/installed.sh DIR: runs INSIDE the Soft-RoCE VM for
# tools/debcheck, after the Debian packages were installed on the host
# (the VM's root is the host's).  DIR holds prog_server and prog_client,
# built from tests/pkg/prog.x with the compile lines of the installed
# rpcrdma_netid(3) and nothing of a build tree.  Checks that both resolve
# librpcrdma to the packaged copy under /usr/lib, that the server's rpcgen
# main registers on rdma and rdma6 with the system's rpcbind, and that the
# client's calls over each netid return the right results.  Exits non-zero
# when any check failed.
set -u
DIR=$1
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
PROG=$((0x20005251))
failures=0
pids=

verdict() {	# verdict STATUS TEXT
	if [ "$1" -eq 0 ]; then
		echo "ok: $2"
	else
		echo "FAILED: $2"
		failures=$((failures + 1))
	fi
}

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
}
trap cleanup EXIT

# packaged_lib BINARY: the librpcrdma it loads is librpcrdma1's, in /usr/lib
packaged_lib() {
	lib=$(ldd "$1" | sed -n 's/^\s*librpcrdma\.so\.1 => \(\/[^ ]*\) .*/\1/p')
	echo "$1: librpcrdma.so.1 => ${lib:-not found}"
	[ -n "$lib" ] || return 1
	real=$(readlink -f "$lib")
	case $real in
	/usr/lib/*) ;;
	*) return 1 ;;
	esac
	dpkg -S "$real" | grep -q '^librpcrdma1[:]'
}

# registered NETID...: until rpcinfo lists PROG on every NETID (60 s)
registered() {
	i=0
	while [ $i -lt 300 ]; do
		all=1
		rpcinfo >"$DIR/rpcinfo" 2>/dev/null || all=0
		for n in "$@"; do
			grep -q "^ *$PROG *1 *$n " "$DIR/rpcinfo" || all=0
		done
		[ $all -eq 1 ] && return 0
		kill -0 "$SERVER" 2>/dev/null || return 1
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# client HOST NETID
client() {
	"$DIR/prog_client" "$1" "$2"
	verdict $? "prog_client $1 $2: clnt_create over $2, every result right"
}

[ -z "${LD_LIBRARY_PATH:-}${LD_PRELOAD:-}" ]
verdict $? "neither LD_LIBRARY_PATH nor LD_PRELOAD is set"
for bin in "$DIR/prog_server" "$DIR/prog_client" /usr/sbin/rpcrdma-nfs3d; do
	packaged_lib "$bin"
	verdict $? "$bin loads librpcrdma1's library from /usr/lib"
done

mkdir -p /run/rpcbind
rpcbind -f &
pids="$pids $!"
i=0
until rpcinfo -p 127.0.0.1 >/dev/null 2>&1 || [ $i -gt 100 ]; do
	sleep 0.2
	i=$((i + 1))
done
rpcinfo -p 127.0.0.1 >/dev/null 2>&1
verdict $? "rpcbind answers"

"$DIR/prog_server" 2>"$DIR/server.log" &
SERVER=$!
pids="$pids $SERVER"
registered rdma rdma6
verdict $? "prog_server (rpcgen -5 -n rdma -n rdma6 main) registered on rdma and rdma6"
grep "^ *$PROG " "$DIR/rpcinfo"

client "$H4" rdma
client "$H6" rdma6

kill "$SERVER"
wait "$SERVER" 2>/dev/null
cat "$DIR/server.log"
[ "$(grep -c 'over rdma$' "$DIR/server.log")" -eq 3 ] &&
	[ "$(grep -c 'over rdma6$' "$DIR/server.log")" -eq 3 ]
verdict $? "the server saw 3 calls over rdma and 3 over rdma6"

[ $failures -eq 0 ] && echo "installed: every check passed"
[ $failures -eq 0 ]
