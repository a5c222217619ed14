#!/bin/sh
# clnt-part.sh: one part of the client tests (tests/vm/t_clnt --only PART),
# so that each stays well within the VM suite's per-test time limit.  The
# build installs copies of this script named after the part:
#   tests/vm/clnt-PART        against t_clnt's fake responder
#   tests/vm/clnt-rtest-PART  against the project's tests/vm/rtest_server
#                             (one process per test address)
# t_clnt starts, kills, restarts and stops the servers itself.
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$0")
case $name in
clnt-rtest-*)
	T_CLNT_SERVER="$here/rtest_server -a %a -p %p -c %c"
	export T_CLNT_SERVER
	;;
esac
exec "$here/t_clnt" --only "${name##*-}" "$@"
