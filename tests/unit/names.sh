#!/bin/sh
# names.sh - the naming rule for file-local functions (issue 12, item 5):
# a layer prefix (rw_, rt_, rr_, ulb_, tr_, rl_, and glue's clnt_rdma_,
# svc_rdma_, rpcrdma_) marks what a unit exports, so a static function in
# src/FOLDER/*.c carries none.  One FAIL line per offender, naming
# file:line and the function; exit 1 if there is any.
#
# FOLDERS lists every folder of src/ with C files (src/conf is one
# header).
#
#   names.sh              check $srcdir/src/FOLDER/*.c for each FOLDER
#   names.sh FILE...      check those files (the self-test below uses it)
#   names.sh --self-test  prove the check can fail: a temporary file with
#                         static prefixed functions must be reported, one
#                         with unprefixed ones must not
set -u
FOLDERS="wire ulb trace log transport rpc glue netid"
PREFIXES="rw_ rt_ rr_ ulb_ tr_ rl_ clnt_rdma_ svc_rdma_ rpcrdma_"
srcdir=${srcdir:-.}

# Print "FILE:LINE: NAME" for each static function of FILE whose name
# starts with a layer prefix.  A definition or declaration starts at a
# line beginning with "static"; its text up to the first "(", ";", "=" or
# "{" (it may span lines) ends with the name when "(" comes first.
offenders() {
	awk -v prefixes="$PREFIXES" '
	BEGIN { np = split(prefixes, pre, " ") }
	function judge(text, line,    name, i) {
		gsub(/__attribute__\(\([^)]*\)\)/, "", text)
		if (!match(text, /[(;={]/) || substr(text, RSTART, 1) != "(")
			return
		text = substr(text, 1, RSTART - 1)
		if (!match(text, /[A-Za-z_][A-Za-z0-9_]*[ \t]*$/))
			return
		name = substr(text, RSTART)
		sub(/[ \t]+$/, "", name)
		for (i = 1; i <= np; i++)
			if (index(name, pre[i]) == 1) {
				printf "%s:%d: %s\n", FILENAME, line, name
				return
			}
	}
	FNR == 1 { pending = "" }
	pending != "" {
		pending = pending " " $0
		if (pending ~ /[(;={]/) {
			judge(pending, start)
			pending = ""
		}
		next
	}
	/^static[ \t]/ {
		if ($0 ~ /[(;={]/)
			judge($0, FNR)
		else {
			pending = $0
			start = FNR
		}
	}
	' "$@"
}

# Report the offenders of the files given; 1 if there is any.
check_files() {
	found=$(offenders "$@") || return 2
	[ -z "$found" ] && return 0
	printf '%s\n' "$found" | while IFS= read -r l; do
		echo "FAIL - ${l%%: *}: static function ${l##*: } carries a layer prefix (only exports do)"
	done
	return 1
}

self_test() {
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/bad.c" <<'EOF'
static int rw_one(int a)
{
	return a;
}

static const struct thing *
ulb_two(void);
static __attribute__((unused)) void rpcrdma_three(void) {}
static int (*rt_pointer)(void);
static const char *rr_table[] = { "x" };
int rw_exported(void);
EOF
	cat >"$tmp/good.c" <<'EOF'
static int one(int a)
{
	return a;
}
static const char *rr_table[] = { "x" };
static int (*rt_pointer)(void);
int rw_exported(void);
EOF
	rc=0
	out=$(check_files "$tmp/bad.c") && rc=1
	for want in "bad.c:1: static function rw_one" \
		"bad.c:6: static function ulb_two" \
		"bad.c:8: static function rpcrdma_three"; do
		case $out in
		*"$want"*) ;;
		*)
			echo "FAIL - self-test: no \"$want\" in: $out"
			rc=1
			;;
		esac
	done
	n=$(printf '%s\n' "$out" | grep -c '^FAIL')
	[ "$n" -eq 3 ] || {
		echo "FAIL - self-test: $n findings in bad.c, wanted 3: $out"
		rc=1
	}
	if ! out=$(check_files "$tmp/good.c"); then
		echo "FAIL - self-test: good.c reported: $out"
		rc=1
	fi
	[ $rc -eq 0 ] && echo "ok - self-test: the check finds the 3 offenders of bad.c and none in good.c"
	return $rc
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit
fi
if [ $# -gt 0 ]; then
	check_files "$@"
	exit
fi

rc=0
self_test || rc=1
for f in $FOLDERS; do
	set -- "$srcdir"/src/"$f"/*.c
	if [ ! -e "$1" ]; then
		echo "FAIL - no C files in $srcdir/src/$f"
		rc=1
		continue
	fi
	if check_files "$@"; then
		echo "ok - src/$f: $# files, no static function with a layer prefix"
	else
		rc=1
	fi
done
exit $rc
