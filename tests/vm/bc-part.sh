#!/bin/sh
# bc-part.sh: one group of the backward-direction tests
# (tests/vm/t_bc --only GROUP), each its own VM test within the suite's
# per-test limit.  The build installs copies named after the group:
#   tests/vm/bc-basic tests/vm/bc-threads tests/vm/bc-loss
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$0")
exec "$here/t_bc" --only "${name#bc-}" "$@"
