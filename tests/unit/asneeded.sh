#!/bin/sh
# asneeded.sh - the --as-needed trap: a program that calls only libtirpc's
# functions (clnt_create(..., "rdma"), which librpcrdma takes over) names
# no symbol only librpcrdma defines, so a linker run with --as-needed drops
# librpcrdma and the program says "Unknown protocol".  Linked with what
# "pkg-config --libs librpcrdma" gives, librpcrdma must stay NEEDED under
# --as-needed, in either order against -ltirpc; linked -ltirpc first, the
# start-up check must then say so.  The plain "-ltirpc -lrpcrdma" link is
# shown to lose it, so the checks can tell the difference.
# Runs from the build directory (make check); CC defaults to cc.
set -u
CC=${CC:-cc}
LIBS=$PWD/.libs
TMP=$(mktemp -d "${TMPDIR:-/tmp}/asneeded.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0

check() {	# check STATUS MESSAGE
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "FAIL - $2"
		failures=$((failures + 1))
	fi
}

[ -e "$LIBS/librpcrdma.so.1" ] || { echo "FAIL: $LIBS/librpcrdma.so.1 not built"; exit 1; }

# An ASan build of the library needs the ASan runtime first in a program
# that was not built with it.
asan=$(ldd "$LIBS/librpcrdma.so.1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*libasan[^ ]*\) .*/\1/p')
ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0
export ASAN_OPTIONS

cat >"$TMP/prog.c" <<'EOF'
#include <stdio.h>
#include <rpc/rpc.h>

/* Only libtirpc's functions: nothing that only librpcrdma defines. */
int main(void)
{
	CLIENT *cl = clnt_create("127.0.0.1", 0x20005171, 1, "rdma");

	if (cl) {
		clnt_destroy(cl);
		return 0;
	}
	printf("%s\n", clnt_spcreateerror("prog"));
	return 1;
}
EOF

pc_libs=$(PKG_CONFIG_PATH=. pkg-config --define-variable=libdir="$LIBS" --libs librpcrdma)
tirpc_cflags=$(pkg-config --cflags libtirpc)
tirpc_libs=$(pkg-config --libs libtirpc)
echo "# pkg-config --libs librpcrdma: $pc_libs"

# link NAME FLAGS...: prog NAME, linked with --as-needed in force
link() {
	l_name=$1
	shift
	# shellcheck disable=SC2086 # word splitting of the flags is meant
	$CC -Wl,--as-needed $tirpc_cflags -o "$TMP/$l_name" "$TMP/prog.c" "$@" \
		-Wl,-rpath,"$LIBS" 2>"$TMP/$l_name.ld"
	check $? "$l_name: linked ($*)"
}

needed() {	# needed NAME: librpcrdma.so.1 is a NEEDED entry of prog NAME
	readelf -dW "$TMP/$1" | grep -q 'NEEDED.*\[librpcrdma\.so\.1\]'
}

run() {	# run NAME: prog NAME's stdout and stderr in NAME.out
	env ${asan:+LD_PRELOAD="$asan"} "$TMP/$1" >"$TMP/$1.out" 2>&1
	sed "s/^/# $1: /" "$TMP/$1.out"
}

# The trap, for comparison: without the wrapper librpcrdma is dropped.
# shellcheck disable=SC2086
link plain $tirpc_libs -L"$LIBS" -lrpcrdma
if needed plain; then
	echo "SKIP: this linker keeps librpcrdma under --as-needed anyway: nothing to show"
	exit 77
fi
check 0 "plain -ltirpc -lrpcrdma under --as-needed: librpcrdma not NEEDED (the trap)"
run plain
grep -q 'Unknown protocol' "$TMP/plain.out"
check $? "plain: clnt_create(\"rdma\") says Unknown protocol"

# pkg-config's flags alone, and after -ltirpc (the order the trap needs)
# shellcheck disable=SC2086
link pc $pc_libs
needed pc
check $? "pkg-config --libs under --as-needed: librpcrdma NEEDED"
# shellcheck disable=SC2086
link late $tirpc_libs $pc_libs
needed late
check $? "-ltirpc, then pkg-config --libs, under --as-needed: librpcrdma NEEDED"

# Loaded, librpcrdma serves "rdma" (no device on a host: ENODEV, words)
# or, behind libtirpc in the lookup order, says so at start.
run pc
! grep -q 'Unknown protocol' "$TMP/pc.out"
check $? "pc: clnt_create(\"rdma\") reaches librpcrdma: $(head -n 1 "$TMP/pc.out")"
run late
grep -q 'libtirpc precedes librpcrdma in the symbol lookup order' "$TMP/late.out"
check $? "late: the start-up check names the wrong order"

# The rest of the link line keeps the state it had: push/pop, not a bare
# --as-needed (which would impose it on libraries that did not ask).
case $pc_libs in
*-Wl,--push-state,--no-as-needed*-lrpcrdma*-Wl,--pop-state*) r=0 ;;
*) r=1 ;;
esac
check $r "the wrapper restores the linker's state after -lrpcrdma"

echo "asneeded.sh: $([ $failures -eq 0 ] && echo PASS || echo FAIL), $failures failure(s)"
[ $failures -eq 0 ]
