#!/bin/sh
# rr_units.sh - src/rpc's .c files depend on each other one way:
# no file reaches itself again through the functions it calls.
#
# The graph: a.c -> b.c when a.c names a function that b.c defines without
# "static" and that an "rr_*.h" header a.c includes (directly or through
# another src/rpc header) declares - the calls a file can make to another.
# Comments and strings do not count; types shared through a header are not
# dependencies; a call through a function pointer is not seen, which is how
# a lower unit calls back up on purpose (rr_srv_priv.h and rr_call_priv.h say
# where).
# Headers a unit owns are found by their declarations, not their names, so
# a header may also be a whole layer's public interface (rr_serve.h).
#
# Fails with one line per cycle found, "FAIL: cycle a.c -> b.c -> a.c".
# A back edge listed in ALLOWED below is left out of the graph (none is);
# an entry that no longer matches a call fails, so the list only shrinks.
# First it proves it can fail: a cycle built in a temporary directory must
# be reported, and the same files without it must pass.
#
# Usage: rr_units.sh [DIR]   (default $srcdir/src/rpc)
set -u
srcdir=${srcdir:-.}

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }

# Known back edges, "from.c to.c" a line: none now - the requester's calls
# up go through the hooks rr_life.c sets (rr_call_priv.h), as the server's
# through those rr_serve.c sets (rr_srv_priv.h).  Kept so that a back edge
# can only be let in here, in plain sight, with why.
ALLOWED=""

check() {
	ALLOWED=$2 python3 - "$1" <<'EOF'
import os
import re
import sys

top = sys.argv[1]

NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"'
                   r"|'(?:\\.|[^'\\\n])*'", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:[a-z]+/)?rr_[a-z0-9_]*\.h"',
                     re.M)
HEADER = re.compile(r'(rr_[a-z0-9_]*\.h)"')
# a function at column 0: "type name(" or "type *name(", in a header a
# prototype, in a .c file a definition (its line does not end with ';')
FUNC = re.compile(r'^(?!static\b|typedef\b|extern\b|struct\b[^(]*\{|#)'
                  r'[A-Za-z_][^(;={}]*?[\s*]([a-z][a-z0-9_]*)\(', re.M)
# a name not used as a struct, enum or union tag (struct rr_call is no call)
WORD = re.compile(r'(?<!struct )(?<!enum )(?<!union )\b[a-z][a-z0-9_]*\b')


def text(name):
    """name's code without comments and strings, its includes kept"""
    with open(os.path.join(top, name), encoding='utf-8') as f:
        src = f.read()

    def blank(m):
        s = m.group(0)
        return '""' if s[0] in '"\'' else ' ' + '\n' * s.count('\n')
    return '\n'.join(INCLUDE.findall(src)) + '\n' + NOISE.sub(blank, src)


files = sorted(os.listdir(top))
units = [f for f in files if f.startswith('rr_') and f.endswith('.c')]
if len(units) < 2:
    sys.exit('FAIL: no rr_*.c files to check in ' + top)
headers = {f: text(f) for f in files
           if f.startswith('rr_') and f.endswith('.h')}

# who defines each exported function
owner = {}
for u in units:
    for line in text(u).splitlines():
        m = FUNC.match(line)
        if m and not line.rstrip().endswith(';'):
            owner[m.group(1)] = u

declared = {h: {m.group(1) for m in FUNC.finditer(t)}
            for h, t in headers.items()}


def seen_headers(src):
    """The src/rpc headers src includes, directly or through others."""
    todo = HEADER.findall(src)
    seen = set()
    while todo:
        h = todo.pop()
        if h in seen or h not in headers:
            continue
        seen.add(h)
        todo.extend(HEADER.findall(headers[h]))
    return seen


edges = {}
for u in units:
    src = text(u)
    names = set(WORD.findall(src))
    visible = set()
    for h in seen_headers(src):
        visible |= declared[h]
    edges[u] = sorted({owner[f] for f in names & visible
                       if owner.get(f, u) != u})

bad = 0
for line in os.environ.get('ALLOWED', '').splitlines():
    a, b = line.split()
    if b not in edges.get(a, []):
        print('FAIL: allowed edge %s -> %s is gone: drop it from ALLOWED'
              % (a, b))
        bad = 1
        continue
    edges[a].remove(b)

# every cycle, reported once, starting at its smallest file
cycles = set()
state = {}


def walk(u, path):
    state[u] = 1
    path.append(u)
    for v in edges[u]:
        if state.get(v) == 1:
            loop = path[path.index(v):]
            i = loop.index(min(loop))
            cycles.add(tuple(loop[i:] + loop[:i]))
        elif v not in state:
            walk(v, path)
    path.pop()
    state[u] = 2


for u in units:
    if u not in state:
        walk(u, [])
for loop in sorted(cycles):
    print('FAIL: cycle ' + ' -> '.join(loop + (loop[0],)))
print('%d files, %d calls between them, %d cycles'
      % (len(units), sum(len(e) for e in edges.values()), len(cycles)))
sys.exit(1 if cycles or bad else 0)
EOF
}

# A cycle the check must find: a.c calls b.c, which calls back through a
# header that only declares it; c.c names a.c's function in a comment only.
self_test() {
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/rpc"
	cat >"$tmp/rpc/rr_a.h" <<'EOF'
#include "rpc/rr_types.h"
int rr_a_run(struct rr_x *x);
EOF
	cat >"$tmp/rpc/rr_types.h" <<'EOF'
struct rr_x {
	int (*cb)(struct rr_x *x);
};
EOF
	printf 'int rr_b_step(int n);\n' >"$tmp/rpc/rr_b.h"
	cat >"$tmp/rpc/rr_a.c" <<'EOF'
#include "rpc/rr_a.h"
#include "rpc/rr_b.h"

int rr_a_run(struct rr_x *x)
{
	return rr_b_step(1) + x->cb(x);
}
EOF
	cat >"$tmp/rpc/rr_b.c" <<'EOF'
#include "rpc/rr_a.h"
#include "rpc/rr_b.h"

int rr_b_step(int n)
{
	return n ? rr_a_run(0) : 0;
}
EOF
	cat >"$tmp/rpc/rr_c.c" <<'EOF'
#include "rpc/rr_a.h"

/* not a call: rr_a_run(x) */
static int c_only(void)
{
	return 0;
}
EOF
	if out=$(check "$tmp/rpc" "") ||
		! printf '%s\n' "$out" | grep -qx 'FAIL: cycle rr_a.c -> rr_b.c -> rr_a.c'; then
		printf 'FAIL: self-test: the cycle a -> b -> a was not reported:\n%s\n' "$out"
		exit 1
	fi
	# the cycle's back edge allowed: passes
	if ! out=$(check "$tmp/rpc" "rr_b.c rr_a.c"); then
		printf 'FAIL: self-test: an allowed back edge was refused:\n%s\n' "$out"
		exit 1
	fi
	# the same files with b calling down only: no cycle, and c.c's comment
	# is no call
	sed -i 's/rr_a_run(0)/n - 1/' "$tmp/rpc/rr_b.c"
	if ! out=$(check "$tmp/rpc" ""); then
		printf 'FAIL: self-test: a one-way graph was refused:\n%s\n' "$out"
		exit 1
	fi
	# an allowance for an edge that is not there is refused
	if out=$(check "$tmp/rpc" "rr_b.c rr_a.c") ||
		! printf '%s\n' "$out" | grep -q 'rr_b.c -> rr_a.c is gone'; then
		printf 'FAIL: self-test: a stale allowance was accepted:\n%s\n' "$out"
		exit 1
	fi
	rm -rf "$tmp"
	trap - EXIT
}

self_test
check "${1:-$srcdir/src/rpc}" "$ALLOWED"
