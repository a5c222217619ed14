#!/bin/sh
# names.sh - the naming rules for file-local functions:
#   - a layer prefix (rw_, rt_, rr_, ulb_, tr_, rl_, and glue's clnt_rdma_,
#     svc_rdma_, rpcrdma_) marks what a unit exports, so a static function
#     in src/FOLDER/*.c carries none: a name with a prefix is always
#     worth looking up in a header;
#   - a static function's name is defined in one file of src/ only (its .c
#     files and headers), so a backtrace says which function it is.
# One FAIL line per offender, naming file:line and the function (for a
# name defined in two files or more, one line naming all its places);
# exit 1 if there is any.
#
# FOLDERS lists every folder of src/ with C files (src/conf is one
# header).
#
#   names.sh              check $srcdir/src/FOLDER/*.c for each FOLDER, and
#                         every *.c and *.h of $srcdir/src for duplicates
#   names.sh FILE...      check those files for both rules (the self-test
#                         below uses it)
#   names.sh --self-test  prove the check can fail: temporary files with
#                         static prefixed functions, and with one static
#                         name in two files, must be reported; files with
#                         neither must not
set -u
FOLDERS="wire ulb trace log transport rpc glue netid"
PREFIXES="rw_ rt_ rr_ ulb_ tr_ rl_ clnt_rdma_ svc_rdma_ rpcrdma_"
srcdir=${srcdir:-.}

# Print "FILE:LINE: NAME" for each static function of the files given (a
# definition or a declaration).  A definition or declaration starts at a
# line beginning with "static"; its text up to the first "(", ";", "=" or
# "{" (it may span lines) ends with the name when "(" comes first and no
# "*" follows it (that would be a pointer to a function).
statics() {
	awk '
	function judge(text, line,    name, rest) {
		gsub(/__attribute__\(\([^)]*\)\)/, "", text)
		if (!match(text, /[(;={]/) || substr(text, RSTART, 1) != "(")
			return
		rest = substr(text, RSTART + 1)
		text = substr(text, 1, RSTART - 1)
		if (rest ~ /^[ \t]*\*/)
			return
		if (!match(text, /[A-Za-z_][A-Za-z0-9_]*[ \t]*$/))
			return
		name = substr(text, RSTART)
		sub(/[ \t]+$/, "", name)
		printf "%s:%d: %s\n", FILENAME, line, name
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

# The static functions of the files given whose name starts with a layer
# prefix.
offenders() {
	statics "$@" | awk -v prefixes="$PREFIXES" '
	BEGIN { np = split(prefixes, pre, " ") }
	{
		for (i = 1; i <= np; i++)
			if (index($NF, pre[i]) == 1) {
				print
				next
			}
	}'
}

# "NAME FILE:LINE FILE:LINE..." for each static function name of the files
# given that more than one file defines or declares (its first place in
# each file).
duplicates() {
	statics "$@" | awk '
	{
		name = $NF
		at = $1
		sub(/:$/, "", at)
		file = at
		sub(/:[0-9]+$/, "", file)
		if ((name, file) in seen)
			next
		seen[name, file] = 1
		n[name]++
		where[name] = where[name] " " at
	}
	END {
		for (name in n)
			if (n[name] > 1)
				print name where[name]
	}' | LC_ALL=C sort
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

# Report each static function name the files given define in more than one
# file, with its places; 1 if there is any.
check_unique() {
	found=$(duplicates "$@") || return 2
	[ -z "$found" ] && return 0
	printf '%s\n' "$found" | while read -r name where; do
		echo "FAIL - static function $name is defined in more than one file: $where"
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
static int twice(void);
static int twice(void)
{
	return 2;
}
static void (*hook)(void);
EOF
	cat >"$tmp/good.h" <<'EOF'
static inline int two(int a)
{
	return a;
}
static void (*hook)(void);
int one(void);
EOF
	cat >"$tmp/dup.h" <<'EOF'
static inline int
one(int a)
{
	return a;
}
EOF
	rc=0
	# expect WHAT N WANT...: $out has N findings, each WANT among them
	expect() {
		what=$1
		nwant=$2
		shift 2
		for want in "$@"; do
			case $out in
			*"$want"*) ;;
			*)
				echo "FAIL - self-test: no \"$want\" in: $out"
				rc=1
				;;
			esac
		done
		n=$(printf '%s\n' "$out" | grep -c '^FAIL')
		[ "$n" -eq "$nwant" ] || {
			echo "FAIL - self-test: $n findings in $what, wanted $nwant: $out"
			rc=1
		}
	}
	out=$(check_files "$tmp/bad.c") && rc=1
	expect bad.c 3 "bad.c:1: static function rw_one" \
		"bad.c:6: static function ulb_two" \
		"bad.c:8: static function rpcrdma_three"
	if ! out=$(check_files "$tmp/good.c"); then
		echo "FAIL - self-test: good.c reported: $out"
		rc=1
	fi
	out=$(check_unique "$tmp/good.c" "$tmp/good.h" "$tmp/dup.h") && rc=1
	expect "good.c, good.h and dup.h" 1 \
		"static function one is defined in more than one file: $tmp/good.c:1 $tmp/dup.h:1"
	if ! out=$(check_unique "$tmp/good.c" "$tmp/good.h"); then
		echo "FAIL - self-test: good.c and good.h reported as duplicates: $out"
		rc=1
	fi
	[ $rc -eq 0 ] && echo "ok - self-test: the check finds the 3 offenders of bad.c and none in good.c, the name one in good.c and dup.h and no other"
	return $rc
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit
fi
if [ $# -gt 0 ]; then
	rc=0
	check_files "$@" || rc=1
	check_unique "$@" || rc=1
	exit $rc
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
set -- $(find "$srcdir/src" -name '*.[ch]' | LC_ALL=C sort)
if [ $# -lt 100 ]; then
	echo "FAIL - only $# C files and headers found under $srcdir/src"
	rc=1
elif check_unique "$@"; then
	n=$(statics "$@" | awk '{ print $NF }' | sort -u | wc -l)
	echo "ok - src: $# files, $n static function names, each defined in one file"
else
	rc=1
fi
exit $rc
