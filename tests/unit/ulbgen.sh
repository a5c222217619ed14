#!/bin/sh
# ulbgen.sh - rpcrdma-ulbgen(1): the entries it writes for annotated .x
# files (tests/unit/ulb/annotated.x, nfs3.x) are exactly annotated.conf and
# nfs3.conf, which check_ulb.c loads and checks; rpcgen accepts the
# annotated file; and every .x it cannot bind safely is refused with the
# line and the reason.
set -u
srcdir=${srcdir:-.}
tool="$srcdir/tools/rpcrdma-ulbgen"
dir="$srcdir/tests/unit/ulb"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

if ! python3 "$tool" -o "$tmp/out.conf" "$dir/annotated.x"; then
	echo "FAIL: rpcrdma-ulbgen refused annotated.x"
	fail=1
elif ! diff -u "$dir/annotated.conf" "$tmp/out.conf"; then
	echo "FAIL: rpcrdma-ulbgen output differs from annotated.conf"
	fail=1
fi
# the RFC 1813 excerpt annotated as RFC 8267 says: check_ulb.c compares
# nfs3.conf with the built-in NFSv3 entries
if ! python3 "$tool" -o "$tmp/nfs3.conf" "$dir/nfs3.x"; then
	echo "FAIL: rpcrdma-ulbgen refused nfs3.x"
	fail=1
elif ! diff -u "$dir/nfs3.conf" "$tmp/nfs3.conf"; then
	echo "FAIL: rpcrdma-ulbgen output differs from nfs3.conf"
	fail=1
fi
# the whole of RFC 1813 (rpcrdma-nfs3d's XDR) with -s: the largest reply
# of every bounded procedure, which check_ulb.c compares with the built-in
# NFSv3 entries
if ! python3 "$tool" -s -o "$tmp/nfs3_prot.conf" \
	"$srcdir/examples/nfs3d/nfs3_prot.x"; then
	echo "FAIL: rpcrdma-ulbgen -s refused nfs3_prot.x"
	fail=1
elif ! diff -u "$dir/nfs3_prot.conf" "$tmp/nfs3_prot.conf"; then
	echo "FAIL: rpcrdma-ulbgen -s output differs from nfs3_prot.conf"
	fail=1
fi
# rpcgen is a build requirement (configure): its absence is no skip
if ! command -v rpcgen >/dev/null 2>&1; then
	echo "FAIL: rpcgen not found, cannot check that it accepts annotated.x"
	fail=1
elif ! rpcgen -h "$dir/annotated.x" >/dev/null; then
	echo "FAIL: rpcgen does not accept annotated.x"
	fail=1
fi

# refuse NAME 'expected message' < .x text
refuse() {
	cat > "$tmp/$1.x"
	if python3 "$tool" "$tmp/$1.x" >/dev/null 2>"$tmp/$1.err"; then
		echo "FAIL: $1: accepted"
		fail=1
	elif ! grep -qF -- "$2" "$tmp/$1.err"; then
		echo "FAIL: $1: want '$2', got '$(cat "$tmp/$1.err")'"
		fail=1
	fi
}

refuse after-array "$tmp/after-array.x:3: in the arguments of W the item number of 'arg1.data' depends on the content of the variable-length array 'arg1.names'" <<'X'
struct s { string x<>; };
struct a { s names<4>; int n;
	opaque data<>; /* rpcrdma: ddp */ };
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse in-array "in the results of R annotated data inside the variable-length array 'res.v' has no fixed item number" <<'X'
struct e { opaque d<16>; /* rpcrdma: ddp */ };
struct r { e v<>; };
program P { version V { r R(void) = 1; } = 1; } = 1;
X

refuse after-union "depends on the content of the union 'arg1.u'" <<'X'
union u switch (int k) { case 0: opaque x<>; default: void; };
struct a { u u; opaque data<>; /* rpcrdma: ddp */ };
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse not-data "'arg1.n' is not opaque or string data" <<'X'
struct a { unsigned int n; /* rpcrdma: ddp */ };
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse unbounded "'data' is unbounded: say how much room" <<'X'
struct r { opaque data<>; /* rpcrdma: ddp */ };
program P { version V { r R(void) = 1; } = 1; } = 1;
X

refuse no-field "room: R has no fixed-size field 'arg1.cnt'" <<'X'
struct a { opaque fh<>; unsigned int count; };
struct r { opaque data<>; /* rpcrdma: ddp room=arg.cnt */ };
program P { version V { r R(a) = 1; } = 1; } = 1;
X

refuse no-offset "variable-length data lies both before and after 'arg1.count'" <<'X'
struct a { opaque fh<>; unsigned int count; opaque tag<>; };
struct r { opaque data<>; /* rpcrdma: ddp room=arg.count */ };
program P { version V { r R(a) = 1; } = 1; } = 1;
X

refuse call-room "room= applies to results; 'arg1.data' is in the arguments of W" <<'X'
struct a { opaque data<>; /* rpcrdma: ddp room=4096 */ };
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse stray ":2: rpcrdma annotation must follow a field or a procedure" <<'X'
struct a { opaque data<>; };
/* rpcrdma: ddp */
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse unused ":1: annotated field 'data' of 'a' is not in the arguments or results of any procedure" <<'X'
struct a { opaque data<>; /* rpcrdma: ddp */ };
program P { version V { void W(int) = 1; } = 1; } = 1;
X

refuse keyword ":1: unknown field keyword 'size'" <<'X'
struct a { opaque data<>; /* rpcrdma: ddp size=1 */ };
program P { version V { void W(a) = 1; } = 1; } = 1;
X

refuse proc-keyword "unknown procedure keyword 'room'" <<'X'
struct a { opaque data<>; };
program P { version V { void W(a) = 1; /* rpcrdma: room=1 */ } = 1; } = 1;
X

refuse syntax ":1: expected ';', found '}'" <<'X'
struct a { opaque data<> };
X

refuse undefined "'N' is not a constant defined before this point" <<'X'
struct a { opaque data<N>; };
X

# -s: a reply entry with max= for every bounded result, annotated or not
# (void: max=0), none for an unbounded one; the rest as without -s
cat > "$tmp/sizes.x" <<'X'
struct big { opaque d<>; };
struct small { int a; opaque b<8>; };
program P { version V {
	void N(void) = 0;
	big U(void) = 1;
	small S(int) = 2;
} = 1; } = 7;
X
if ! python3 "$tool" -s -o "$tmp/sizes.conf" "$tmp/sizes.x"; then
	echo "FAIL: -s: refused"
	fail=1
else
	for want in '^7 1 0 reply max=0	# N$' '^7 1 2 reply max=16	# S$'; do
		grep -q "$want" "$tmp/sizes.conf" ||
			{ echo "FAIL: -s: no line '$want'"; fail=1; }
	done
	if grep -q '^7 1 1 ' "$tmp/sizes.conf"; then
		echo "FAIL: -s: an entry for the unbounded U"
		fail=1
	fi
fi
if ! python3 "$tool" -s -o "$tmp/ann-s.conf" "$dir/annotated.x" ||
   [ "$(grep -v ' reply max=[0-9]*	' "$tmp/ann-s.conf")" != \
     "$(grep -v ' reply max=[0-9]*	' "$dir/annotated.conf")" ]; then
	echo "FAIL: -s changes the annotated entries of annotated.x"
	fail=1
fi

# rpcgen's bare 'string' as an argument or result (msg.x's PRINTMESSAGE):
# accepted, as rpcgen does; unbounded, so -s writes no reply entry for it,
# and a bounded one beside it still gets its own
cat > "$tmp/bare.x" <<'X'
program P { version V {
	string ECHO(string) = 1;
	int LEN(string) = 2;
} = 1; } = 9;
X
if ! python3 "$tool" -s -o "$tmp/bare.conf" "$tmp/bare.x" 2>"$tmp/bare.err"; then
	echo "FAIL: bare string: refused: $(cat "$tmp/bare.err")"
	fail=1
elif grep -q '^9 1 1 ' "$tmp/bare.conf" ||
     ! grep -q '^9 1 2 reply max=4	# LEN$' "$tmp/bare.conf"; then
	echo "FAIL: bare string: -s entries: $(grep -v '^#' "$tmp/bare.conf")"
	fail=1
elif command -v rpcgen >/dev/null 2>&1 &&
     ! rpcgen -h "$tmp/bare.x" >/dev/null; then
	echo "FAIL: bare string: rpcgen refuses the file this test uses"
	fail=1
fi

[ $fail -eq 0 ] && echo "PASS: rpcrdma-ulbgen"
exit $fail
