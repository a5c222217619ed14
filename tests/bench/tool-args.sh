#!/bin/sh
# tests/bench/tool-args.sh: rpcrdma-bench(1)'s command line, on the host
# (make check; no RDMA device needed): every bad option or combination
# ends with exit 2, one line naming the option and the problem, and the
# usage, before anything is connected; --help prints the usage, exit 0.
# The runs themselves are checked in the VM (tests/bench/bench-tool.sh).
set -u
BENCH=./tools/rpcrdma-bench
[ -x "$BENCH" ] || { echo "FAIL: no $BENCH (run from the build directory)"; exit 1; }
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
failures=0

# bad "MESSAGE" ARGS...: exit 2, MESSAGE as the first line, then the usage
bad() {
	want=$1
	shift
	timeout 10 "$BENCH" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(head -n 1 "$TMP/err")" = "rpcrdma-bench: $want" ] &&
		grep -q '^usage: rpcrdma-bench -s ' "$TMP/err" && [ ! -s "$TMP/out" ]; then
		echo "ok: rpcrdma-bench $*: $want"
	else
		echo "FAIL: rpcrdma-bench $*: exit $rc (want 2 and '$want'):"
		sed 's/^/    /' "$TMP/err" "$TMP/out"
		failures=$((failures + 1))
	fi
}

bad "no HOST given (or -s for a server)"
bad "one HOST only" h1 h2
bad "the server takes no HOST: h1" -s h1
bad "bad size (1 to 16m octets): 0" --size 0 h
bad "bad size (1 to 16m octets): 17m" --size 17m h
bad "bad size (1 to 16m octets): 16777217" --size 16777217 h
bad "bad size (1 to 16m octets): 1g" --size 1g h
bad "bad size (1 to 16m octets): -1" --size -1 h
bad "bad thread count (1 to 256): 0" --threads 0 h
bad "bad thread count (1 to 256): 257" --threads 257 h
bad "bad port: 0" -p 0 h
bad "bad port: 65536" -p 65536 h
bad "bad port: 20x" -p 20x h
bad "bad duration: 0" -d 0 h
bad "bad duration: soon" -d soon h
bad "bad call count: 0" -c 0 h
bad "bad timeout: -1" -W -1 h
bad "-d and -c exclude each other" -d 1 -c 10 h
bad "unknown test (null, echo, write, read): ping" -t null,ping h
bad "test listed twice: echo" -t echo,read,echo h
bad "no test named: ," -t , h
bad "-V takes 1, 2 or auto: 3" -V 3 h
bad "--netid takes rdma or rdma6: tcp" --netid tcp h
bad "an option of the server (-s) only: --addr" -a 192.0.2.1 h
bad "an option of the client, not of the server (-s): --test" -s -t null
bad "an option of the client, not of the server (-s): --json" -s --json
bad "an option of the client, not of the server (-s): --poll" -s --poll
bad "an option of the client, not of the server (-s): --calls" -s -c 5
bad "the address is not of the netid's family: 192.0.2.1" -s -6 -a 192.0.2.1
bad "the address is not of the netid's family: 2001:db8::1" -s --netid rdma -a 2001:db8::1

timeout 10 "$BENCH" --help >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^usage: rpcrdma-bench -s ' "$TMP/out" && [ ! -s "$TMP/err" ]; then
	echo "ok: --help: the usage on stdout, exit 0"
else
	echo "FAIL: --help: exit $rc"
	failures=$((failures + 1))
fi

[ $failures -eq 0 ] && echo "PASS: 0 failure(s)" || echo "FAIL: $failures failure(s)"
[ $failures -eq 0 ]
