#!/bin/bash
# profile.sh - where the time of a NULL call and of an NFSv3 WRITE goes,
# run inside the Soft-RoCE VM by "make profile"
# (tests/bench/rbench.am):
#
#   tests/vm/run --workdir BUILD -- /bin/bash tests/bench/profile.sh BUILD [OUTDIR]
#
# It owns the profiling runs, not the figures: those are rbench.sh's.  In
# one boot, on one rxe device:
#   1. NULL calls over netid rdma, rbench client against rbench server,
#      client in event mode, then in busy-poll mode (--comp poll; the
#      server always sleeps in svc_run's poll, src/glue/svc_rdma.c):
#      - one untraced run: the round trip and CPU per call of this boot;
#      - system calls per NULL call by name, client and server: strace -c -f
#        over two runs of different lengths, the difference divided by
#        the difference of calls, so that start-up, connection set-up,
#        warm-up and tear-down cancel out;
#      - perf record of the client and of the server: top symbols (self),
#        CPU split by object and by class (kernel, librpcrdma, libtirpc,
#        libibverbs, librxe, libc, ...), CPU microseconds per call;
#      - both under callgrind (event mode, RPCRDMA_POLL_US=0), as make
#        bench-rdma counts them (tests/bench/cg.sh): user-space
#        instructions per call by object, and the top 20 functions of each
#        side by their own instructions per call (inclusive=no).
#   2. NFSv3 1 MiB sequential WRITE, the kernel client (vers=3, proto=rdma)
#      against rpcrdma-nfs3d and against the kernel's nfsd, the same tmpfs
#      export (tests/vm/nfs_kernel.sh), fio as rbench.sh runs it: goodput
#      untraced, then one run of each under a system-wide perf record
#      (-a), whose report gives the top symbols and commands system-wide
#      and rpcrdma-nfs3d's own profile (its threads, --pid).
# Everything goes to OUTDIR (default BUILD/profile): summary.txt, the
# condensed result, and one text file per report or trace beside it.
#
# Exit status: 0 when every part was measured, 1 when one could not be
# (summary.txt says which and why), 2 when nothing can run (no perf, no
# strace, no device, no build).  Every step runs under a deadline.
#
# Environment (optional; tests/vm/run passes TIRPC_RDMA_* into the VM):
# TIRPC_RDMA_PROFILE_CALLS (NULL calls per perf run, default 4000),
# TIRPC_RDMA_PROFILE_CG_CALLS (the first callgrind segment, default 100),
# TIRPC_RDMA_PROFILE_STRACE_CALLS (the two strace run lengths, default
# "150 450": both below 500, so both warm up with the same 50 calls,
# rbench_run.c), TIRPC_RDMA_PROFILE_NFS_MIB (file size, default 64),
# TIRPC_RDMA_PROFILE_CALLGRAPH (fp, dwarf or none; default fp),
# TIRPC_RDMA_PROFILE_EVENT (perf event, default: cycles when the vCPU
# counts them, else cpu-clock), TIRPC_RDMA_BENCH_DEV (default rxe0),
# TIRPC_RDMA_BENCH_PORT (first port, default 20200).
set -u

usage() {
	echo "usage: profile.sh BUILDDIR [OUTDIR]" >&2
	exit 2
}
(($# >= 1 && $# <= 2)) || usage
B=$1
OUT=${2:-$B/profile}
RB=$B/tests/bench/rbench
CONF=$B/tests/bench/rbench.conf
NFS3D=$B/examples/nfs3d/rpcrdma-nfs3d
DEV=${TIRPC_RDMA_BENCH_DEV:-rxe0}
A=${RDMA_ADDR4:-192.0.2.1}
PORT=${TIRPC_RDMA_BENCH_PORT:-20200}
CALLS=${TIRPC_RDMA_PROFILE_CALLS:-4000}
CG_N=${TIRPC_RDMA_PROFILE_CG_CALLS:-100}
CG_PORT=$((PORT + 6))
CG_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cg.sh
read -r ST1 ST2 <<<"${TIRPC_RDMA_PROFILE_STRACE_CALLS:-150 450}"
NFS_MIB=${TIRPC_RDMA_PROFILE_NFS_MIB:-64}
CG_MODE=${TIRPC_RDMA_PROFILE_CALLGRAPH:-fp}
EVENT=${TIRPC_RDMA_PROFILE_EVENT:-auto}
NFS_DEPTH=4
TOP=25

die() {
	echo "profile.sh: $*" >&2
	exit 2
}
for n in "$CALLS" "$ST1" "$ST2" "$NFS_MIB" "$CG_N"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "not a positive count: '$n'"
done
((ST2 > ST1)) || die "TIRPC_RDMA_PROFILE_STRACE_CALLS: the second count must be larger"
case $CG_MODE in
fp) CG=(-g) ;;
dwarf) CG=(--call-graph dwarf) ;;
none) CG=() ;;
*) die "TIRPC_RDMA_PROFILE_CALLGRAPH: fp, dwarf or none, not '$CG_MODE'" ;;
esac
for t in perf strace timeout; do
	command -v $t >/dev/null || die "$t not installed (packages linux-perf, strace)"
done
[[ -x $RB ]] || die "no $RB (make tests/bench/rbench)"
[[ -r $CONF ]] || die "no $CONF (make tests/bench/rbench.conf)"
[[ -e /sys/class/infiniband/$DEV ]] || die "no RDMA device $DEV"
mkdir -p "$OUT" || die "cannot create $OUT"
rm -f "$OUT"/*.txt

WORK=$(mktemp -d "${TMPDIR:-/tmp}/profile.XXXXXX") || exit 2
# perf keeps nothing in $HOME (-N), but reads its config from there: the
# host's root is read-only in the VM.
export HOME=$WORK
unset RPCRDMA_COMP_MODE RPCRDMA_REG_MODE RPCRDMA_STATS RPCRDMA_VERSION \
	RPCRDMA_REMOTE_INV RPCRDMA_ULB_CONF
declare -a KILL=()
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup() {
	local p
	for p in "${KILL[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	nfs_teardown
	rm -rf "$WORK"
}
trap cleanup EXIT

SUMMARY=$WORK/summary
ERRORS=0
T0=$SECONDS
say() {
	printf '# %4ds %s\n' $((SECONDS - T0)) "$*"
}
sum() {
	printf '%s\n' "$*" >>"$SUMMARY"
}
fail() {
	say "ERROR: $*"
	sum "ERROR: $*"
	ERRORS=$((ERRORS + 1))
}

# stop PID SIGNAL SECONDS: SIGNAL, then SIGKILL when PID is still there
# after SECONDS; reaps it.
stop() {
	local pid=$1 sig=$2 secs=$3 i
	kill -"$sig" "$pid" 2>/dev/null
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# wait_for FILE PATTERN SECONDS PID: FILE gets a line matching PATTERN
# while PID lives.
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_for_file FILE SECONDS PID: FILE exists while PID lives.
wait_for_file() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $1 ]] && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ---- perf ------------------------------------------------------------------

# Under TCG the vCPU may count no cycles: then the software clock samples.
perf_setup() {
	local n
	echo -1 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null
	echo 0 >/proc/sys/kernel/kptr_restrict 2>/dev/null
	if [[ $EVENT == auto ]]; then
		EVENT=cpu-clock
		n=$(timeout 60 perf stat -x, -e cycles -- /bin/true 2>&1 >/dev/null | cut -d, -f1 | head -n 1)
		[[ $n =~ ^[0-9]+$ ]] && ((n > 0)) && EVENT=cycles
	fi
	# a short busy loop must give samples, with the call graph asked for
	if ! timeout 120 perf record -q -N -e "$EVENT" "${CG[@]}" -o "$WORK/probe.data" -- \
		/bin/bash -c 'for ((i = 0; i < 20000; i++)); do :; done' >"$WORK/probe.log" 2>&1 ||
		! timeout 60 perf report -i "$WORK/probe.data" --stdio --no-children -g none \
			2>/dev/null | grep -q '%.*bash'; then
		say "perf record -e $EVENT ${CG[*]} gives no samples: $(tail -n 1 "$WORK/probe.log")"
		CG=()
		timeout 120 perf record -q -N -e "$EVENT" -o "$WORK/probe.data" -- \
			/bin/bash -c 'for ((i = 0; i < 20000; i++)); do :; done' >"$WORK/probe.log" 2>&1 ||
			die "perf record -e $EVENT does not work: $(tail -n 1 "$WORK/probe.log")"
		CG_MODE="none (it failed)"
	fi
	rm -f "$WORK/probe.data"
	say "perf $(perf --version | cut -d' ' -f3), event $EVENT, call graph $CG_MODE"
}

# perf_bg DATA perf-record-args...: perf record in the background, PERF_PID.
perf_bg() {
	local data=$1
	shift
	perf record -q -N -e "$EVENT" "${CG[@]}" -o "$data" "$@" >"$data.log" 2>&1 &
	PERF_PID=$!
	KILL+=("$PERF_PID")
	# the file appears once its events are open
	wait_for_file "$data" 30 "$PERF_PID"
	sleep 1
}

# rep DATA NAME SORT [perf report args]: perf report to OUT/NAME.SORT.txt
# (SORT: sym for dso,sym), the sample lines only.
rep() {
	local data=$1 name=$2 sort=$3
	shift 3
	if [[ $sort == sym ]]; then
		set -- --sort dso,sym "$@"
	else
		set -- --sort "$sort" "$@"
	fi
	timeout 300 perf report -i "$data" --stdio --no-children -g none "$@" \
		2>/dev/null >"$WORK/rep.txt"
	{
		grep -m1 '^# Event count' "$WORK/rep.txt"
		grep -m1 '^# Samples' "$WORK/rep.txt"
		grep -E '^ +[0-9.]+%' "$WORK/rep.txt"
	} >"$OUT/$name.${sort%%,*}.txt"
}

# report DATA NAME [perf report args]: the symbols, the objects, the
# commands or threads, and the call graphs of a recording.
report() {
	local data=$1 name=$2
	shift 2
	rep "$data" "$name" sym "$@"
	rep "$data" "$name" dso "$@"
	rep "$data" "$name" comm "$@"
	rep "$data" "$name" pid "$@"
	if ((${#CG[@]})); then
		timeout 300 perf report -i "$data" --stdio --no-children --percent-limit 1 \
			--sort dso,sym "$@" >"$OUT/$name.callgraph.txt" 2>/dev/null
	fi
}

# one_comm DATA COMM NAME: the objects and symbols of the command COMM
# alone, in percent of its own samples, to OUT/NAME.dso.txt and
# OUT/NAME.sym.txt.  Sorted by command first rather than filtered with
# --comm or --pid: perf 6.1 then counts some samples under one sort key and
# not under another.
one_comm() {
	local data=$1 comm=$2 name=$3 k
	for k in dso dso,sym; do
		timeout 300 perf report -i "$data" --stdio --no-children -g none \
			--sort "comm,$k" 2>/dev/null |
			awk -v c="$comm" '$2 == c && /^ +[0-9.]+%/ {
				v = $1; sub(/%/, "", v); t += v; n++; p[n] = v
				sub(/^ +[0-9.]+% +[^ ]+ +/, ""); l[n] = $0 }
				END { printf "# %s: %.2f%% of the samples\n", c, t
				for (i = 1; i <= n; i++) if (t > 0)
					printf "%9.2f%%  %s\n", p[i] * 100 / t, l[i] }' \
			>"$OUT/$name.${k##*,}.txt"
	done
}

# The class of a shared object in perf's dso column.
CLASSIFY='function class(d) {
	if (d ~ /^\[vdso\]/) return "vdso"
	if (d ~ /^\[/) return "kernel"
	if (d ~ /^librpcrdma\./) return "librpcrdma"
	if (d ~ /^libtirpc\./) return "libtirpc"
	if (d ~ /^libibverbs\./) return "libibverbs"
	if (d ~ /^librxe/) return "librxe"
	if (d ~ /^librdmacm\./) return "librdmacm"
	if (d ~ /^libc\.|^libpthread|^ld-linux/) return "libc"
	if (d == "rbench" || d ~ /nfs3d/) return "program"
	return "other"
}'

# pct_line FILE: "kernel 41.2%, librpcrdma 20.1%, ..." from a dso report.
classes() {
	awk "$CLASSIFY"'
		/^ +[0-9.]+%/ { v = $1; sub(/%/, "", v); c[class($2)] += v }
		END { for (k in c) printf "%s %.1f\n", k, c[k] }' "$1" |
		sort -k2,2 -g -r | awk '{ printf "%s%s %s%%", (NR > 1 ? ", " : ""), $1, $2 }'
}

# per_call FILE CALLS: CPU microseconds per call from a cpu-clock
# recording's event count (nanoseconds of samples), or nothing.
per_call() {
	[[ $EVENT == cpu-clock ]] || return 0
	awk -v n="$2" '/^# Event count/ { printf "%.1f", $NF / 1000 / n; exit }' "$1"
}

# nfs3d_share COMM-REPORT SYM-REPORT: rpcrdma-nfs3d's share of the
# system's samples, and its CPU time per MiB written (cpu-clock only).
nfs3d_share() {
	local pct
	pct=$(awk '$2 == "rpcrdma-nfs3d" { v = $1; sub(/%/, "", v); print v; exit }' "$1")
	[[ -n $pct ]] || { echo "no samples of rpcrdma-nfs3d"; return; }
	printf '%s%% of the system samples' "$pct"
	[[ $EVENT == cpu-clock ]] || { echo; return; }
	awk -v p="$pct" -v n="$NFS_MIB" '/^# Event count/ {
		printf ", %.0f us of CPU per MiB written\n", p / 100 * $NF / 1000 / n; exit }' "$2"
}

# busy COMM-REPORT SYM-REPORT: the share of the vCPUs not idle during a
# system-wide recording, and the CPU time it cost per MiB written.
busy() {
	local idle
	idle=$(awk '$2 == "swapper" { v = $1; sub(/%/, "", v); print v; exit }' "$1")
	idle=${idle:-0}
	printf 'idle (swapper) %s%%, busy %s%%' "$idle" "$(awk -v i="$idle" 'BEGIN { printf "%.1f", 100 - i }')"
	[[ $EVENT == cpu-clock ]] || { echo; return; }
	awk -v i="$idle" -v n="$NFS_MIB" '/^# Event count/ {
		printf ", %.0f us of busy CPU per MiB written\n", (100 - i) / 100 * $NF / 1000 / n; exit }' "$2"
}

# sum_top FILE N: the first N lines of a report, indented.
sum_top() {
	grep -E '^ +[0-9.]+%' "$1" | head -n "$2" | sed 's/^ */    /' >>"$SUMMARY"
}

# ---- 1. NULL calls ---------------------------------------------------------

# client_run KEY ARGS...: rbench client under a deadline, its RESULT line
# in RES; ARGS may start with a wrapper (strace, perf).
client_run() {
	local key=$1 rc
	shift
	RES=
	timeout -k 5 600 "$@" >"$WORK/$key.out" 2>"$WORK/$key.err"
	rc=$?
	RES=$(grep -m1 '^RESULT ' "$WORK/$key.out")
	[[ $rc == 0 && -n $RES ]] && return 0
	fail "$key: client exit status $rc: $(grep -v '^$' "$WORK/$key.out" "$WORK/$key.err" | tail -n 1)"
	return 1
}

# field NAME: the value of NAME= in RES.
field() {
	local v=" $RES "
	v=${v#* "$1"=}
	printf '%s' "${v%% *}"
}

# strace_run KEY MODE CALLS: strace -c -f of the client (from its start)
# and of the server (attached for the run) over CALLS NULL calls.
strace_run() {
	local key=$1 mode=$2 n=$3 spid
	strace -f -c -o "$WORK/$key.srv.strace" -p "$SRV" 2>"$WORK/$key.srv.slog" &
	spid=$!
	KILL+=("$spid")
	if ! wait_for "$WORK/$key.srv.slog" attached 30 "$spid"; then
		fail "$key: strace cannot attach to the server: $(tail -n 1 "$WORK/$key.srv.slog")"
		stop "$spid" KILL 1
		return 1
	fi
	client_run "$key" strace -f -c -o "$WORK/$key.cli.strace" \
		env RPCRDMA_ULB_CONF="$CONF" "$RB" client -n rdma -a "$A" -p "$PORT" \
		--comp "$mode" lat -N "$n"
	local rc=$?
	stop "$spid" INT 30
	return $rc
}

# syscalls MODE: per NULL call, from the two strace runs of MODE.
syscalls() {
	local m=$1 f k
	for f in cli srv; do
		for k in 1 2; do
			[[ -s $WORK/st_$m.$k.$f.strace ]] ||
				{ fail "null_$m: no strace summary ($f, run $k)"; return 1; }
		done
	done
	cp "$WORK/st_$m.1.cli.strace" "$OUT/null_$m.strace_client_$ST1.txt"
	cp "$WORK/st_$m.2.cli.strace" "$OUT/null_$m.strace_client_$ST2.txt"
	cp "$WORK/st_$m.1.srv.strace" "$OUT/null_$m.strace_server_$ST1.txt"
	cp "$WORK/st_$m.2.srv.strace" "$OUT/null_$m.strace_server_$ST2.txt"
	# strace -c: "% time seconds usecs/call calls [errors] syscall"
	awk -v d=$((ST2 - ST1)) '
		FNR == 1 { f++ }
		NF >= 5 && $4 ~ /^[0-9]+$/ && $NF != "total" { c[f, $NF] = $4; name[$NF] = 1 }
		END {
			for (s in name) {
				cl = (c[2, s] - c[1, s]) / d; sv = (c[4, s] - c[3, s]) / d
				if (cl >= 0.005 || cl <= -0.005 || sv >= 0.005 || sv <= -0.005)
					printf "%-22s %8.2f %8.2f\n", s, cl, sv
				tc += cl; ts += sv
			}
			printf "~total %.2f %.2f\n", tc, ts
		}' "$WORK/st_$m.1.cli.strace" "$WORK/st_$m.2.cli.strace" \
		"$WORK/st_$m.1.srv.strace" "$WORK/st_$m.2.srv.strace" |
		sort -k2,2 -g -r | awk '/^~total/ { t = $0; next } { print }
			END { split(t, v, " "); printf "%-22s %8.2f %8.2f\n", "total", v[2], v[3] }' \
		>"$OUT/null_$m.syscalls.txt"
	sum "  system calls per NULL call (strace -c -f: runs of $ST2 and $ST1 calls, difference / $((ST2 - ST1))):"
	sum "    $(printf '%-22s %8s %8s' syscall client server)"
	sed 's/^/    /' "$OUT/null_$m.syscalls.txt" >>"$SUMMARY"
}

# null_mode MODE: the NULL call runs of one client completion mode.
null_mode() {
	local m=$1 k warm base=(env RPCRDMA_ULB_CONF="$CONF" "$RB" client -n rdma -a "$A" -p "$PORT" --comp "$1")
	say "null_$m: untraced round trips"
	sum ""
	sum "== NULL call over rdma, client --comp $m (server: event, svc_run) =="
	if client_run "plain_$m" "${base[@]}" lat -N 1000 -s 3; then
		sum "  untraced: median $(field median_us) us, p99 $(field p99_us) us, CPU per call: client $(field cli_cpu_us) us, server $(field srv_cpu_us) us ($(field calls) calls)"
	fi
	say "null_$m: strace -c -f, $ST1 and $ST2 calls"
	strace_run "st_$m.1" "$m" "$ST1" && strace_run "st_$m.2" "$m" "$ST2" && syscalls "$m"
	say "null_$m: perf record of client and server, $CALLS calls"
	perf_bg "$WORK/null_$m.srv.data" -p "$SRV"
	client_run "perf_$m" perf record -q -N -e "$EVENT" "${CG[@]}" -o "$WORK/null_$m.cli.data" -- \
		"${base[@]}" lat -N "$CALLS"
	k=$?
	stop "$PERF_PID" INT 120
	((k == 0)) || return 1
	# rb_lat's warm-up: a tenth of the calls, 50 to 200
	warm=$((CALLS / 10 < 50 ? 50 : CALLS / 10 > 200 ? 200 : CALLS / 10))
	sum "  under perf ($EVENT, $CALLS calls plus warm-up): median $(field median_us) us, CPU per call: client $(field cli_cpu_us) us, server $(field srv_cpu_us) us"
	for k in cli srv; do
		local name=null_$m.${k/cli/client}
		name=${name/srv/server}
		if [[ ! -s $WORK/null_$m.$k.data ]]; then
			fail "$name: no perf data: $(tail -n 1 "$WORK/null_$m.$k.data.log" 2>/dev/null)"
			continue
		fi
		report "$WORK/null_$m.$k.data" "$name"
		sum "  ${name#null_"$m".}: $(grep -m1 '^# Samples' "$OUT/$name.sym.txt" | sed 's/^# //'), CPU per call (perf, start-up included): $(per_call "$OUT/$name.sym.txt" "$((CALLS + warm))") us"
		sum "    by class: $(classes "$OUT/$name.dso.txt")"
		sum "    by object:"
		sum_top "$OUT/$name.dso.txt" 8
		sum "    top $TOP symbols (self):"
		sum_top "$OUT/$name.sym.txt" $TOP
	done
}

null_calls() {
	local log=$WORK/srv.log
	env RPCRDMA_ULB_CONF="$CONF" "$RB" server -n rdma -a "$A" -p "$PORT" --lifetime 3600 \
		>"$log" 2>&1 &
	SRV=$!
	KILL+=("$SRV")
	if ! wait_for "$log" '^rbench: listening' 30 "$SRV"; then
		fail "rbench server did not start: $(tail -n 1 "$log")"
		return 1
	fi
	null_mode event
	null_mode poll
	stop "$SRV" TERM 5
}

# ---- 2. NFSv3 WRITE --------------------------------------------------------

NFS_PORT=$((PORT + 4)) NFS_MPORT=$((PORT + 5))
NFS_X=$WORK/nfs_export NFS_MK=$WORK/nfs_mnt_kernel NFS_MO=$WORK/nfs_mnt_ours
# shellcheck disable=SC2034 # nfs_kernel.sh logs there
NFSK_LOG=$WORK/nfs_kernel.log
NFS_SRV='' NFS_UP=''

# fio_write KEY MNT [WRAPPER...]: 1 MiB sequential write of NFS_MIB MiB,
# O_DIRECT, iodepth NFS_DEPTH, as rbench.sh; MIBPS = its goodput.
fio_write() {
	local key=$1 mnt=$2 out
	shift 2
	MIBPS=
	out=$(timeout -k 5 600 "$@" fio --name="$key" --directory="$mnt" --direct=1 \
		--ioengine=libaio --iodepth=$NFS_DEPTH --minimal --rw=write --bs=1M \
		--size="${NFS_MIB}M" --filename="$key" --end_fsync=1 2>"$WORK/$key.err")
	rm -f "$mnt/$key"
	out=$(grep -m1 ';' <<<"$out")
	if [[ -z $out ]]; then
		fail "$key: fio failed: $(grep -v '^$' "$WORK/$key.err" | tail -n 1)"
		return 1
	fi
	# terse v3: write bandwidth in KiB/s is field 48
	MIBPS=$(cut -d';' -f48 <<<"$out" | awk '{ printf "%.1f", $1 / 1024 }')
}

nfs_setup() {
	command -v fio >/dev/null || { fail "nfs: fio not installed (package fio)"; return 1; }
	[[ -x $NFS3D ]] || { fail "nfs: no $NFS3D (make examples/nfs3d/rpcrdma-nfs3d)"; return 1; }
	# shellcheck disable=SC1091 # nfs_kernel.sh is checked on its own
	. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../vm" && pwd)/nfs_kernel.sh" ||
		{ fail "nfs: cannot read nfs_kernel.sh"; return 1; }
	NFS_UP=1
	mkdir -p "$NFS_X" "$NFS_MK" "$NFS_MO"
	nfsk_start "$NFS_X" 20049 2>"$WORK/nfs.err" ||
		{ fail "nfs: kernel NFS server: $(tail -n 1 "$WORK/nfs.err")"; return 1; }
	"$NFS3D" -R -p $NFS_PORT -m $NFS_MPORT "$NFS_X" >"$WORK/nfs3d.log" 2>&1 &
	NFS_SRV=$!
	KILL+=("$NFS_SRV")
	wait_for "$WORK/nfs3d.log" '^rpcrdma-nfs3d: exporting' 30 "$NFS_SRV" ||
		{ fail "nfs: rpcrdma-nfs3d did not start: $(tail -n 1 "$WORK/nfs3d.log")"; return 1; }
	nfsk_mount "$A:$NFS_X" "$NFS_MK" rdma 20049 2>"$WORK/nfs.err" ||
		{ fail "nfs: $(tail -n 1 "$WORK/nfs.err")"; return 1; }
	nfsk_mount "$A:$NFS_X" "$NFS_MO" rdma $NFS_PORT ",mountport=$NFS_MPORT,mountproto=tcp" \
		2>"$WORK/nfs.err" || { fail "nfs: $(tail -n 1 "$WORK/nfs.err")"; return 1; }
}

nfs_teardown() {
	[[ -n $NFS_UP ]] || return 0
	NFS_UP=
	grep -q " $NFS_MO " /proc/mounts && nfsk_umount "$NFS_MO"
	grep -q " $NFS_MK " /proc/mounts && nfsk_umount "$NFS_MK"
	[[ -n $NFS_SRV ]] && stop "$NFS_SRV" TERM 5
	NFS_SRV=
	nfsk_stop
	nfsk_rpcbind_stop
	grep -q " $NFS_X " /proc/mounts && umount "$NFS_X"
}

nfs_write() {
	local r n m k g
	declare -A G=()
	sum ""
	sum "== NFSv3 1 MiB sequential WRITE, kernel client vers=3 proto=rdma, ${NFS_MIB} MiB, fio O_DIRECT iodepth $NFS_DEPTH, same tmpfs export =="
	nfs_setup || return 1
	for r in 1 2; do
		for k in kernel:$NFS_MK ours:$NFS_MO; do
			IFS=: read -r n m <<<"$k"
			say "nfs: write to $n, untraced, round $r"
			fio_write "w_${n}_$r" "$m" && G[$n]+="$MIBPS "
		done
	done
	for n in kernel ours; do
		g=$(tr ' ' '\n' <<<"${G[$n]:-}" | awk 'NF { s += $1; k++ } END { if (k) printf "%.1f", s / k }')
		G[$n.mean]=$g
		sum "  goodput untraced, $n: ${G[$n]:-none} MiB/s (mean ${g:-n/a})"
	done
	if [[ -n ${G[ours.mean]} && -n ${G[kernel.mean]} ]]; then
		sum "  ratio rpcrdma-nfs3d / knfsd: $(awk -v o="${G[ours.mean]}" -v k="${G[kernel.mean]}" 'BEGIN { printf "%.2f", o / k }')"
	fi
	for k in kernel:$NFS_MK ours:$NFS_MO; do
		IFS=: read -r n m <<<"$k"
		say "nfs: write to $n under perf record -a"
		fio_write "p_$n" "$m" perf record -q -N -a -e "$EVENT" "${CG[@]}" \
			-o "$WORK/nfs_$n.data" -- || continue
		sum ""
		sum "  -- $n server, under perf record -a: $MIBPS MiB/s --"
		report "$WORK/nfs_$n.data" "nfs_$n.all"
		sum "    system-wide: $(grep -m1 '^# Samples' "$OUT/nfs_$n.all.sym.txt" | sed 's/^# //'), $(nproc) vCPUs"
		sum "    $(busy "$OUT/nfs_$n.all.comm.txt" "$OUT/nfs_$n.all.sym.txt")"
		sum "    by command:"
		sum_top "$OUT/nfs_$n.all.comm.txt" 10
		sum "    by class: $(classes "$OUT/nfs_$n.all.dso.txt")"
		sum "    top $TOP symbols system-wide (self):"
		sum_top "$OUT/nfs_$n.all.sym.txt" $TOP
		if [[ $n == ours ]]; then
			one_comm "$WORK/nfs_$n.data" rpcrdma-nfs3d nfs_ours.nfs3d
			sum "    rpcrdma-nfs3d alone (all its threads; % of its own samples):"
			sum "    $(nfs3d_share "$OUT/nfs_ours.all.comm.txt" "$OUT/nfs_ours.all.sym.txt")"
			sum "    by thread (% of the system's samples):"
			grep -E '^ +[0-9.]+% +[0-9]+:rpcrdma-nfs3d' "$OUT/nfs_ours.all.pid.txt" |
				sed 's/^ */    /' >>"$SUMMARY"
			sum "    by class: $(classes "$OUT/nfs_ours.nfs3d.dso.txt")"
			sum "    top $TOP symbols (self):"
			sum_top "$OUT/nfs_ours.nfs3d.sym.txt" $TOP
		fi
	done
	nfs_teardown
}

# ---- 3. NULL calls under callgrind ----------------------------------------

# The instructions of a NULL call per side by function,
# counted as make bench-rdma counts them (tests/bench/cg.sh, rbench.sh's
# section 8): rbench's server and client under callgrind, event mode
# without polling (RPCRDMA_POLL_US=0), segments of CG_N, CG_N and 2 x CG_N
# calls, each call after a pause that is not counted; per function its
# own instructions (inclusive=no) per call.  Written by cg.sh's cg_top,
# not callgrind_annotate, whose 3.19 charges whole call trees to
# __libc_start_main in a dump taken within them.  The dumps stay in
# OUT/callgrind (kcachegrind reads them; --dump-line=no: by function only).
cg_null() {
	local d=$OUT/callgrind slog=$WORK/cg_srv.log spid side f s n=$CG_N
	local -a files kv
	command -v valgrind >/dev/null || { fail "callgrind: valgrind not installed (package valgrind)"; return 1; }
	# shellcheck source=tests/bench/cg.sh
	. "$CG_SH" || { fail "callgrind: cannot read $CG_SH"; return 1; }
	rm -rf "$d"
	mkdir -p "$d" || { fail "callgrind: cannot create $d"; return 1; }
	say "callgrind: rbench server and client under callgrind, NULL calls in segments of $n, $n, $((2 * n))"
	env RPCRDMA_ULB_CONF="$CONF" RPCRDMA_POLL_US=0 valgrind --tool=callgrind --dump-line=no \
		--callgrind-out-file="$d/srv.out" "$RB" server -n rdma -a "$A" -p "$CG_PORT" \
		--lifetime 3600 --callgrind >"$slog" 2>&1 &
	spid=$!
	KILL+=("$spid")
	if ! wait_for "$slog" '^rbench: listening' 180 "$spid"; then
		fail "callgrind: rbench server did not start: $(grep -v '^==' "$slog" | tail -n 1)"
		stop "$spid" KILL 1
		return 1
	fi
	client_run cg_null env RPCRDMA_ULB_CONF="$CONF" RPCRDMA_POLL_US=0 valgrind \
		--tool=callgrind --dump-line=no --callgrind-out-file="$d/cli.out" "$RB" client \
		-n rdma -a "$A" -p "$CG_PORT" --comp event count -N "$n" --kinds null \
		--gap-us 10000
	s=$?
	stop "$spid" TERM 10
	((s == 0)) || return 1
	sum ""
	sum "== NULL call over rdma under callgrind: user-space instructions (Ir) per call, RPCRDMA_POLL_US=0 =="
	sum "  segments of $n, $n and $((2 * n)) calls; per call the mean of (3rd - 1st) / $n and (3rd - 2nd) / $n"
	for side in client server; do
		files=()
		for s in 1 2 3; do
			f=$(cg_index "$d/$([[ $side == client ]] && echo cli || echo srv).out" | awk -F'\t' -v l="null $s" '$1 == l { print $2; exit }')
			[[ -n $f ]] || { fail "callgrind: no dump 'null $s' of the $side"; continue 2; }
			files+=("$f")
		done
		# (no process substitution: the VM has no /dev/fd)
		mapfile -t kv <<<"$(cg_sum "${files[@]}" | cut -f2)"
		cg_top 20 "$n $n $((2 * n))" "${files[@]}" >"$OUT/null_callgrind.$side.txt"
		sum "  $side: $(cg_per_call "$n $n $((2 * n))" "${kv[@]}" | sed 's/ memcpy=.*spread_pct=/ spread_pct=/; s/ units=.*//')"
		sum "    top 20 functions by their own instructions per call (inclusive=no), share of the total:"
		sed 's/^/    /' "$OUT/null_callgrind.$side.txt" >>"$SUMMARY"
	done
}

# ---- Run -------------------------------------------------------------------

: >"$SUMMARY"
perf_setup
sum "profile.sh: rbench NULL calls and NFSv3 WRITE on $DEV ($A), $(uname -r), perf event $EVENT, call graph $CG_MODE"
sum "Percentages are of the samples of the process or system named; self time (--no-children)."
null_calls
cg_null
nfs_write
sum ""
sum "Elapsed $((SECONDS - T0)) s.  Reports: $OUT/*.txt (sym: dso,sym; dso; comm; pid; callgraph)."
cp "$SUMMARY" "$OUT/summary.txt"
cat "$OUT/summary.txt"
if ((ERRORS)); then
	echo "profile.sh: $ERRORS part(s) could not be measured"
	exit 1
fi
exit 0
