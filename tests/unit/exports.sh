#!/bin/sh
# exports.sh - the shared library's ABI: soname, exported symbols and their
# version nodes exactly as src/librpcrdma.map says, and a pkg-config file
# that puts -lrpcrdma before -ltirpc (our entry points must win).
set -eu
srcdir=${srcdir:-.}
lib=$(ls .libs/librpcrdma.so.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || { echo "FAIL: .libs/librpcrdma.so.* not built"; exit 1; }
fail=0

soname=$(readelf -dW "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = librpcrdma.so.1 ] || { echo "FAIL: soname '$soname'"; fail=1; }

# Defined dynamic symbols with their version, e.g. rpcrdma_version@@RPCRDMA_1.0
got=$(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $5 != "LOCAL" && $8 != "" {print $8}' |
	grep -v '^RPCRDMA_[0-9.]*$\|^TIRPC_[0-9.]*$' | sort -u)
# Expected: every "name;" under a node of the map, as name@@NODE.
want=$(awk '/^[A-Z_0-9.]+ *\{/ {node=$1} /^[ \t]+[a-z_][a-z_0-9]*;/ {gsub(/[ \t;]/,""); print $0 "@@" node}' \
	"$srcdir/src/librpcrdma.map" | sort -u)
# two empty lists would be equal
[ -n "$want" ] || { echo "FAIL: no symbol read from src/librpcrdma.map"; fail=1; }
if [ "$got" != "$want" ]; then
	echo "FAIL: exported symbols differ from librpcrdma.map"
	echo "--- exported"; echo "$got"; echo "--- map"; echo "$want"
	fail=1
fi

libs=$(PKG_CONFIG_PATH=. pkg-config --libs librpcrdma)
case $libs in
*-lrpcrdma*-ltirpc*) ;;
*) echo "FAIL: pkg-config --libs gives '$libs'"; fail=1 ;;
esac
[ $fail -eq 0 ] && echo "PASS: soname $soname, $(echo "$want" | wc -l) exported symbol(s), link order ok"
exit $fail
