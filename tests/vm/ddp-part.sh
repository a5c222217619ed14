#!/bin/sh
# ddp-part.sh: one group of the direct data placement tests
# (tests/vm/t_ddp --only GROUP), so that each stays within the VM suite's
# per-test time limit and runs with its own environment.  The build
# installs copies of this script named after the group:
#   tests/vm/ddp-sizes tests/vm/ddp-misc tests/vm/ddp-regmin
#   tests/vm/ddp-noconf
# and, for the two-device group (tests/vm/net.am), ddp-GROUP-MODE with MODE
# mw or mr: the CLIENT's registration mode (RPCRDMA_REG_MODE).
# t_ddp sets RPCRDMA_ULB_CONF (and RPCRDMA_DDP_REG_MIN) itself, and starts
# and stops its ddpt_server.
here=$(cd "$(dirname "$0")" && pwd)
group=$(basename "$0")
group=${group#ddp-}
case $group in
*-mw | *-mr)
	RPCRDMA_REG_MODE=${group##*-}
	export RPCRDMA_REG_MODE
	group=${group%-*}
	;;
esac
exec "$here/t_ddp" --only "$group" "$@"
