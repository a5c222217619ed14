#!/bin/sh
# probes.sh - the USDT probes of the built library against rpcrdma-trace(7):
# every event the page documents (its "Events" section: ".TP", ".B NAME",
# ".I KEYS") is a stapsdt note of provider rpcrdma in librpcrdma.so, with
# two arguments (connection, XID) more than it has keys, and the library
# has no probe the page does not document.  Without <sys/sdt.h> at
# configure time the library has no probes: then this test skips, saying
# so (CI installs systemtap-sdt-dev, so there it runs).
set -eu
srcdir=${srcdir:-.}
page=$srcdir/man/rpcrdma-trace.7
for lib in .libs/librpcrdma.so.*; do break; done
[ -e "$lib" ] || { echo "FAIL: .libs/librpcrdma.so.* not built"; exit 1; }
if ! grep -q '^#define HAVE_SYS_SDT_H 1' config.h; then
	echo "SKIP: configure found no sys/sdt.h (install systemtap-sdt-dev): the library has no USDT probes"
	exit 77
fi

# NAME NKEYS for each documented event
want=$(awk '
	/^\.SS Events/ { on = 1; next }
	/^\.S[SH] / { on = 0 }
	on && /^\.TP/ { tp = 1; next }
	on && tp && /^\.B / { name = $2; tp = 0; next }
	on && name != "" && /^\.I / { print name, NF - 1; name = ""; next }
	{ tp = 0 }' "$page" | sort)
[ -n "$want" ] || { echo "FAIL: no event read from $page"; exit 1; }

# NAME NARGS for each rpcrdma probe of the library (a probe may sit at
# several places: each must have the same arguments)
got=$(readelf -n "$lib" | awk '
	/Provider:/ { prov = $2 }
	/Name:/ { name = $2 }
	/Arguments:/ { if (prov == "rpcrdma") print name, NF - 1 }' | sort -u)
fail=0
echo "$want" | while read -r name nkeys; do
	n=$(echo "$got" | awk -v n="$name" '$1 == n { print $2 }')
	if [ -z "$n" ]; then
		echo "FAIL: probe rpcrdma:$name (documented) is not in $lib"
		exit 1
	fi
	if [ "$n" != "$((nkeys + 2))" ]; then
		echo "FAIL: probe rpcrdma:$name has $n argument(s), the page documents $nkeys key(s) + 2"
		exit 1
	fi
	echo "ok: rpcrdma:$name, $n arguments"
done || fail=1
extra=$(echo "$got" | awk '{ print $1 }' | sort -u |
	while read -r name; do
		echo "$want" | grep -q "^$name " || echo "$name"
	done)
if [ -n "$extra" ]; then
	echo "FAIL: probes not documented in rpcrdma-trace(7): $(echo "$extra" | tr '\n' ' ')"
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: $(echo "$want" | wc -l) documented probes in $lib"
exit $fail
