#!/bin/sh
# rt_units.sh - the units of src/transport include each other one way only.
# A unit is an rt_NAME.c with its headers rt_NAME.h and
# rt_NAME_priv.h; a header with no .c of its name (rt_priv.h) belongs to no
# unit, and what it includes counts for each file that includes it.  Unit A
# depends on unit B when a file of A includes a header of B; a cycle among
# those dependencies fails, named unit by unit.  The order and the hooks
# that let a lower unit call up are in src/transport/rt_priv.h.
#
# First a self-test shows the check can fail: a temporary tree with a
# two-file cycle (through a shared header) must fail and name it, the same
# tree without the cycle must pass, and a copy of src/transport where
# rt_buf.c includes rt_reg_priv.h must fail.
#
# Usage: rt_units.sh [DIR]   (default: $srcdir/src/transport)
set -u
srcdir=${srcdir:-.}
passed=0
failed=0

ok() {
	echo "PASS: $*"
	passed=$((passed + 1))
}

bad() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# graph DIR: one line per unit ("rt_buf: rt_conn rt_cq ..."), then either
# "acyclic N" or "cycle rt_a -> rt_b -> rt_a".
graph() {
	# shellcheck disable=SC2046 # the file names split on purpose
	awk '
	function base(f) {
		sub(/.*\//, "", f)
		return f
	}
	function unit_of(h,   s) {
		s = h
		sub(/\.[ch]$/, "", s)
		if ((s ".c") in exists)
			return s
		sub(/_priv$/, "", s)
		if ((s ".c") in exists)
			return s
		return ""
	}
	# What file f (of unit u) reaches: unit headers end the walk, shared
	# ones are walked through.
	function reach(u, f,   i, h, v) {
		if ((u SUBSEP f) in seen)
			return
		seen[u, f] = 1
		for (i = 1; i <= ninc[f]; i++) {
			h = inc[f, i]
			if (!(h in exists))
				continue
			v = unit_of(h)
			if (v == "")
				reach(u, h)
			else if (v != u && !((u SUBSEP v) in dep)) {
				dep[u, v] = 1
				deps[u] = deps[u] " " v
			}
		}
	}
	function visit(u,   n, i, v, k, path) {
		state[u] = 1
		stack[++depth] = u
		n = split(deps[u], to, " ")
		for (i = 1; i <= n; i++) {
			v = to[i]
			if (state[v] == 1) {
				path = v
				for (k = depth; stack[k] != v; k--)
					;
				for (k++; k <= depth; k++)
					path = path " -> " stack[k]
				cycle = path " -> " v
				return 1
			}
			if (state[v] == 0 && visit(v))
				return 1
			n = split(deps[u], to, " ")
		}
		depth--
		state[u] = 2
		return 0
	}
	BEGIN {
		for (i = 1; i < ARGC; i++) {
			exists[base(ARGV[i])] = 1
			files[++nfiles] = base(ARGV[i])
		}
	}
	FNR == 1 {
		f = base(FILENAME)
	}
	/^#[ \t]*include[ \t]*"(transport\/)?rt_[a-z0-9_]+\.h"/ {
		h = $0
		sub(/^[^"]*"/, "", h)
		sub(/".*/, "", h)
		inc[f, ++ninc[f]] = base(h)
	}
	END {
		for (i = 1; i <= nfiles; i++) {
			u = unit_of(files[i])
			if (u == "")
				continue
			if (!(u in isunit)) {
				isunit[u] = 1
				units[++nunits] = u
			}
			reach(u, files[i])
		}
		for (i = 1; i <= nunits; i++)
			print units[i] ":" deps[units[i]]
		for (i = 1; i <= nunits; i++)
			if (state[units[i]] == 0 && visit(units[i])) {
				print "cycle " cycle
				exit
			}
		print "acyclic " nunits
	}' $(ls "$1"/rt_*.c "$1"/rt_*.h 2>/dev/null)
}

# check NAME DIR WANT: WANT is "acyclic" or the cycle expected.
check() {
	out=$(graph "$2")
	last=$(echo "$out" | tail -n 1)
	case "$3" in
	acyclic)
		case "$last" in
		acyclic*) ok "$1: no cycle (${last#acyclic } units)" ;;
		*) bad "$1: unexpected ${last}" ;;
		esac
		;;
	*)
		if [ "$last" = "cycle $3" ]; then
			ok "$1: fails naming the cycle $3"
		else
			bad "$1: expected cycle $3, got: ${last}"
		fi
		;;
	esac
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# A two-file cycle: rt_a.c reaches rt_b.h through a shared header, and
# rt_b.c includes rt_a's private header.
mkdir "$tmp/cyc" "$tmp/line"
printf '#include "transport/rt_shared.h"\n' >"$tmp/cyc/rt_a.c"
printf '#include "transport/rt_b.h"\n' >"$tmp/cyc/rt_shared.h"
: >"$tmp/cyc/rt_a_priv.h"
: >"$tmp/cyc/rt_b.h"
printf '#include "transport/rt_a_priv.h"\n' >"$tmp/cyc/rt_b.c"
check "self-test, two files in a cycle" "$tmp/cyc" "rt_a -> rt_b -> rt_a"
cp "$tmp/cyc"/* "$tmp/line"
: >"$tmp/line/rt_b.c"
check "self-test, the same one way" "$tmp/line" acyclic

dir=${1:-$srcdir/src/transport}
if ! ls "$dir"/rt_*.c >/dev/null 2>&1; then
	bad "no rt_*.c in $dir"
else
	mkdir "$tmp/tr"
	cp "$dir"/rt_*.c "$dir"/rt_*.h "$tmp/tr"
	printf '#include "transport/rt_reg_priv.h"\n' >>"$tmp/tr/rt_buf.c"
	check "self-test, rt_buf.c including rt_reg_priv.h" "$tmp/tr" \
		"rt_buf -> rt_reg -> rt_buf"
	graph "$dir" | sed -e '$d' -e 's/^/  /'
	check "$dir" "$dir" acyclic
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
