#!/bin/sh
# v2-part.sh: one group of the RPC-over-RDMA Version Two tests
# (tests/vm/t_v2 --only GROUP), each its own VM test within the suite's
# per-test limit.  The build installs copies named after the group:
#   tests/vm/v2-nego tests/vm/v2-wire tests/vm/v2-resend tests/vm/v2-inv
#   tests/vm/v2-xch
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$0")
exec "$here/t_v2" --only "${name#v2-}" "$@"
