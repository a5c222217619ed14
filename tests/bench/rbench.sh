#!/bin/bash
# rbench.sh - driver of the RDMA benchmark (tests/bench/README.md), run inside
# the Soft-RoCE VM by "make bench-rdma" (tests/bench/rbench.am):
#
#   tests/vm/run --workdir BUILD -- /bin/bash tests/bench/rbench.sh BUILD [short|full]
#
# In one boot, on one rxe device, it measures
#   1. NULL RPC round trip over netid rdma, event and busy-poll completion
#      modes, against 2 x t_typical of perftest's ib_send_lat -e / ib_send_lat;
#      event mode as shipped (polling before sleeping, poll_us) and with
#      RPCRDMA_POLL_US=0 on both sides ("sleep": every wait sleeps, as
#      ib_send_lat -e does)
#   2. 64-octet ECHO rate with 1, 8, 32 calls outstanding: threads sharing
#      one CLIENT, and one CLIENT per thread
#   3. 1 MiB goodput of a READ-shaped call (result in a Write chunk) and a
#      WRITE-shaped call (argument in a Read chunk) against ib_write_bw and
#      ib_read_bw at 1 MiB, with 1 call outstanding and with several (threads
#      sharing one CLIENT), and the CLIENT's DDP copy counters
#   4. the same program over libtirpc's "tcp" and over "tcp" with rsockets
#      preloaded (librspreload.so, server and client)
#   5. CPU time per call on both sides; memory per idle connection; how
#      many idle connections one server holds at once, opened by several
#      client processes (asked: 1000), with its fds and registered memory
#      per connection
#   6. NFSv3: the Linux kernel client against rpcrdma-nfs3d(8) and against
#      the kernel's own NFS server, same tmpfs export, same device:
#      sequential 1 MiB write and read goodput and 4 KiB random-read IOPS
#      (fio, O_DIRECT), ratio ours/kernel
#   7. RPC-over-RDMA version 2 against version 1: NULL round trip (event
#      mode) of a client forced to each, and local invalidations per
#      chunked call (a 64 KiB READ, result in a Write chunk, memory
#      windows; per Write chunk offered) with the server's remote
#      invalidation and without it
# and prints one table, then one "BENCH name=..." line per figure, and
# writes the whole result, rounds included, as one JSON file.
#
# Soft-RoCE under TCG follows the host's load, which can move figures by
# 10x within a minute.  So what is compared is measured in interleaved
# rounds (raw verbs, rdma, tcp, rsockets, then again), and each figure is
# the median of its rounds: drift hits all of them alike.
#
# Exit status: 0 when every figure was measured (missing a target is a
# finding, not a failure), 1 when a figure of librpcrdma, perftest or tcp
# could not be measured (its line says why) or the goodput runs moved no
# Write or no Read chunk (their figures would not be what they claim), 2
# when the benchmark itself cannot run.  The rsockets figures may be missing with the reason: they do
# not change the exit status.  Every step runs under a deadline.
#
# Environment (all optional; tests/vm/run passes TIRPC_RDMA_* into the VM):
# TIRPC_RDMA_BENCH_THREADS (calls outstanding in the goodput runs, default
# 1), TIRPC_RDMA_BENCH_RSPRELOAD (path of librspreload.so),
# TIRPC_RDMA_BENCH_DEV (default rxe0), TIRPC_RDMA_BENCH_PORT (first of the
# ports used, default 20100), TIRPC_RDMA_BENCH_NFS3D_THREADS (rpcrdma-nfs3d's
# -t, worker threads; default its own default), TIRPC_RDMA_BENCH_MT_THREADS
# (calls outstanding in the several-outstanding goodput runs, default 4),
# TIRPC_RDMA_BENCH_PIN=1 (pin every server to vCPU 0 and every client to
# vCPU 1 with taskset; tests/vm/run's TIRPC_RDMA_VM_PIN=1 pins the vCPUs
# on the host), TIRPC_RDMA_BENCH_JSON (the JSON file; default
# BUILDDIR/rbench.json), TIRPC_RDMA_BENCH_HOLD (connections asked of the
# held-connections figure, default 1000, spread over 4 client processes).
set -u

usage() {
	echo "usage: rbench.sh BUILDDIR [short|full]" >&2
	exit 2
}
(($# >= 1 && $# <= 2)) || usage
B=$1
MODE=${2:-short}
RB=$B/tests/bench/rbench
CONF=$B/tests/bench/rbench.conf
DEV=${TIRPC_RDMA_BENCH_DEV:-rxe0}
A=${RDMA_ADDR4:-192.0.2.1}
PORT=${TIRPC_RDMA_BENCH_PORT:-20100}
BULK_T=${TIRPC_RDMA_BENCH_THREADS:-1}
MT_T=${TIRPC_RDMA_BENCH_MT_THREADS:-4}
HOLD_N=${TIRPC_RDMA_BENCH_HOLD:-1000} HOLD_PROCS=4 HOLD_SECS=20
JSON=${TIRPC_RDMA_BENCH_JSON:-$B/rbench.json}
SIZE=1048576

# per round: calls of a latency run (at most LAT_SECS seconds of them),
# seconds of a rate or goodput run, iterations of perftest
# NFS_MIB: the file of the NFS runs; NFS_SECS: seconds of a random-read run;
# NFS_ROUNDS: their rounds (each fio run costs seconds of start-up in the VM)
# RS_ROUNDS: the rounds with rsockets runs: each rsockets client spends ~5 s
# in librspreload's connect in the VM (a 5 s poll of its own), so in short
# mode they run in the first 3 rounds only, to keep CI near 5 minutes
# CG_N, CG_BULK, CG_RAW: the calls (1 MiB calls, perftest iterations) of
# the first of the three segments the instruction counts are cut into
# (section 8); valgrind under TCG takes 10-20 ms per small call, 0.5-2 s
# per 1 MiB call
case $MODE in
short)
	CG_N=100 CG_BULK=3 CG_RAW=100
	RS_ROUNDS=3
	ROUNDS=5 LAT_N=1000 LAT_SECS=1 PT_LAT_N=500 SECS=1 BULK_SECS=1 PT_BW_N=10 IDLE=8
	NFS_MIB=16 NFS_SECS=2 NFS_ROUNDS=2
	;;
full)
	CG_N=500 CG_BULK=10 CG_RAW=500
	RS_ROUNDS=5
	ROUNDS=5 LAT_N=10000 LAT_SECS=8 PT_LAT_N=4000 SECS=10 BULK_SECS=6 PT_BW_N=60 IDLE=32
	NFS_MIB=128 NFS_SECS=10 NFS_ROUNDS=5
	;;
*) usage ;;
esac

[[ -x $RB ]] || { echo "rbench.sh: no $RB (make tests/bench/rbench)" >&2; exit 2; }
[[ -r $CONF ]] || { echo "rbench.sh: no $CONF (make tests/bench/rbench.conf)" >&2; exit 2; }
[[ -e /sys/class/infiniband/$DEV ]] || { echo "rbench.sh: no RDMA device $DEV" >&2; exit 2; }
[[ $MT_T =~ ^[1-9][0-9]*$ && $HOLD_N =~ ^[1-9][0-9]*$ ]] ||
	{ echo "rbench.sh: bad TIRPC_RDMA_BENCH_MT_THREADS or _HOLD" >&2; exit 2; }
# Both sides load the Upper-Layer Binding table generated from rbench.x.
export RPCRDMA_ULB_CONF=$CONF
unset RPCRDMA_COMP_MODE RPCRDMA_REG_MODE RPCRDMA_STATS RPCRDMA_VERSION \
	RPCRDMA_REMOTE_INV

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbench.XXXXXX") || exit 2
declare -A SRV RES ERR PTV
cleanup() {
	local k
	for k in "${!SRV[@]}"; do
		[[ -n ${SRV[$k]} ]] && kill -9 "${SRV[$k]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

RSPRELOAD=${TIRPC_RDMA_BENCH_RSPRELOAD:-}
if [[ -z $RSPRELOAD ]]; then
	for f in /usr/lib/*/rsocket/librspreload.so /usr/lib64/rsocket/librspreload.so \
		/usr/lib/rsocket/librspreload.so; do
		[[ -e $f ]] && { RSPRELOAD=$f; break; }
	done
fi

# Pinning (TIRPC_RDMA_BENCH_PIN=1): every server, rbench's and perftest's,
# on vCPU 0 and every client on vCPU 1, so that the two sides of a pair
# never share a vCPU.  Soft-RoCE's packet processing (softirq, rxe's
# tasklets) and the kernel NFS client cannot be pinned; rpcrdma-nfs3d is
# left unpinned too, so that it meets the kernel's nfsd on equal terms.
PIN_SRV=() PIN_CLI=() PIN=off
if [[ ${TIRPC_RDMA_BENCH_PIN:-0} == 1 ]]; then
	if ! command -v taskset >/dev/null; then
		PIN="off (asked, but no taskset)"
	elif (($(nproc) < 2)); then
		PIN="off (asked, but $(nproc) vCPU)"
	else
		PIN_SRV=(taskset -c 0) PIN_CLI=(taskset -c 1)
		PIN="on (servers vCPU 0, clients vCPU 1)"
	fi
fi
# tests/vm/run pins each vCPU thread to a host CPU when asked to
VM_PIN=off
[[ ${TIRPC_RDMA_VM_PIN:-0} == 1 ]] && VM_PIN=on

# The GID index rdma_cm picks for the IPv4 address (informational: perftest
# runs with -R, i.e. rdma_cm resolves it, as librpcrdma does).
gid_index() {
	local g want
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${A//./ })
	for g in /sys/class/infiniband/"$DEV"/ports/1/gids/*; do
		[[ $(cat "$g" 2>/dev/null) == "$want" ]] && { echo "${g##*/}"; return; }
	done
	echo "?"
}

T0=$SECONDS
say() {
	printf '# %4ds %s\n' $((SECONDS - T0)) "$*"
}

ERRORS=0

# field KEY NAME: the value of NAME= in the RESULT line stored under KEY.
field() {
	local line=" ${RES[$1]:-} " v
	v=${line#* "$2"=}
	[[ $v == "$line" ]] && return 1
	printf '%s' "${v%% *}"
}

# ---- Servers ---------------------------------------------------------------

# alive SRVKEY: the server runs; if it died, ERR[SRVKEY] says how.
alive() {
	local pid=${SRV[$1]:-} rc
	[[ -n $pid ]] || return 1
	kill -0 "$pid" 2>/dev/null && return 0
	wait "$pid" 2>/dev/null
	rc=$?
	if ((rc > 128)); then
		ERR[$1]="the server was killed by SIG$(kill -l $((rc - 128)))"
	else
		ERR[$1]="the server exited with status $rc: $(tail -n 1 "$WORK/$1.srv" | tr -d '"')"
	fi
	SRV[$1]=
	return 1
}

# stop_server SRVKEY: SIGTERM, then SIGKILL after 5 s.
stop_server() {
	local pid=${SRV[$1]:-} i
	[[ -n $pid ]] || return 0
	kill "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	SRV[$1]=
}

# start_server SRVKEY NETID PORT [VAR=VALUE...]: start rbench server and
# wait (SRV_WAIT s, 30 by default, at most; 0: not at all) for its
# "listening" line; ERR[SRVKEY] on failure.  SRV_WRAP: a command the server runs under
# (valgrind), SRV_ARGS: more arguments of the server; none by default.
SRV_WRAP=() SRV_ARGS=() SRV_WAIT=30
start_server() {
	local key=$1 netid=$2 port=$3 log=$WORK/$1.srv i
	shift 3
	say "$key: ${SRV_WRAP[*]:+${SRV_WRAP[*]} }rbench server -n $netid -p $port $* ${SRV_ARGS[*]}"
	"${PIN_SRV[@]}" env "$@" "${SRV_WRAP[@]}" "$RB" server -n "$netid" -a "$A" -p "$port" \
		--lifetime 3600 "${SRV_ARGS[@]}" >"$log" 2>&1 &
	SRV[$key]=$!
	((SRV_WAIT)) || return 0
	for ((i = 0; i < SRV_WAIT * 10; i++)); do
		grep -q '^rbench: listening' "$log" && return 0
		alive "$key" || break
		sleep 0.1
	done
	if [[ -n ${SRV[$key]} ]]; then
		ERR[$key]="the server did not start within $SRV_WAIT s"
		stop_server "$key"
	fi
	ERR[$key]="cannot start: ${ERR[$key]}"
	say "$key: ERROR: ${ERR[$key]}"
	return 1
}

# ---- Runs ------------------------------------------------------------------

# client KEY SRVKEY SECONDS "VAR=VALUE ..." ARGS...: one rbench client run
# under a deadline, if the server still runs; its RESULT line goes to
# RES[KEY], or the reason to ERR[KEY].  CLI_WRAP: a command the client
# runs under (valgrind), none by default.
CLI_WRAP=()
client() {
	local key=$1 srv=$2 limit=$3 envs=$4 out rc line
	shift 4
	if ! alive "$srv"; then
		ERR[$key]=${ERR[$srv]:-no server}
		return 1
	fi
	say "$key: rbench client $*"
	# shellcheck disable=SC2086 # envs is a list of assignments
	out=$("${PIN_CLI[@]}" env $envs timeout -k 5 "$limit" "${CLI_WRAP[@]}" "$RB" client \
		-a "$A" "$@" 2>"$WORK/$key.err")
	rc=$?
	line=$(grep -m1 '^RESULT ' <<<"$out")
	if ((rc == 0)) && [[ -n $line ]]; then
		RES[$key]=${line#RESULT }
		return 0
	fi
	line=$(grep -m1 '^ERROR ' <<<"$out")
	if [[ -n $line ]]; then
		line=${line#*reason=\"}
		ERR[$key]=${line%\"}
	elif ((rc == 124 || rc == 137)); then
		ERR[$key]="timed out after $limit s"
	elif ((rc > 128)); then
		ERR[$key]="client killed by SIG$(kill -l $((rc - 128)))"
	else
		ERR[$key]="exit status $rc: $(grep -v '^$' "$WORK/$key.err" | tail -n 1 | tr -d '"')"
	fi
	alive "$srv" || ERR[$key]+=" (${ERR[$srv]})"
	say "$key: ERROR: ${ERR[$key]}"
	return 1
}

# perftest KEY COLUMN CMD ARGS...: server in the background, client against
# it (retried for 10 s while the server starts), both with -d DEV -R and a port of
# their own.  PTV[KEY] = column COLUMN of the client's result line.
PT_PORT=$((PORT + 10))
perftest() {
	local key=$1 column=$2 port=$((PT_PORT++)) slog clog spid try ok=0 line limit=120 rc=0
	shift 2
	slog=$WORK/$key.srv clog=$WORK/$key.cli
	if ! command -v "$1" >/dev/null; then
		ERR[$key]="$1 not installed (package perftest)"
		return 1
	fi
	say "$key: $* -d $DEV -R -p $port"
	"${PIN_SRV[@]}" timeout -k 5 "$limit" "$@" -d "$DEV" -R -p "$port" >"$slog" 2>&1 &
	spid=$!
	for ((try = 0; try < 20; try++)); do
		sleep 0.5
		"${PIN_CLI[@]}" timeout -k 5 "$limit" "$@" -d "$DEV" -R -p "$port" "$A" \
			>"$clog" 2>&1
		rc=$?
		if ((rc == 0)); then
			ok=1
			break
		fi
		# A client that died of a signal or timed out had connected: its
		# server is no longer waiting for another (a retry would hang
		# until the limit).
		((rc > 123)) && break
		kill -0 "$spid" 2>/dev/null || break
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	# the line after the column headers
	line=$(awk '/t_typical|BW average/ { getline; print; exit }' "$clog")
	if ((ok)) && [[ -n $line ]]; then
		PTV[$key]=$(awk -v n="$column" '{ print $n }' <<<"$line")
		return 0
	fi
	ERR[$key]="$1 failed: $(grep -v '^[ -]*$' "$clog" | tail -n 1 | tr -d '"')"
	((rc > 128 && rc != 137)) && ERR[$key]+=" (client killed by SIG$(kill -l $((rc - 128))))"
	((rc == 124 || rc == 137)) && ERR[$key]+=" (client timed out after $limit s)"
	say "$key: ERROR: ${ERR[$key]}"
	return 1
}

# median of the numbers on stdin
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR) printf "%s\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# combine KEY "MEDIAN-FIELDS" "SUM-FIELDS": RES[KEY] from the rounds
# RES[KEY.1..ROUNDS], medians of some fields and sums of the others, plus
# rounds=N; or ERR[KEY] = the first round's error when no round succeeded.
combine() {
	local key=$1 f r n=0 out="" v
	for ((r = 1; r <= ROUNDS; r++)); do
		[[ -n ${RES[$key.$r]:-} ]] && n=$((n + 1))
	done
	if ((n == 0)); then
		for ((r = 1; r <= ROUNDS; r++)); do
			[[ -n ${ERR[$key.$r]:-} ]] && { ERR[$key]=${ERR[$key.$r]}; return 1; }
		done
		ERR[$key]="not measured"
		return 1
	fi
	for f in $2; do
		v=$(for ((r = 1; r <= ROUNDS; r++)); do field "$key.$r" "$f" && echo; done | median)
		out+=" $f=$v"
	done
	for f in $3; do
		v=0
		for ((r = 1; r <= ROUNDS; r++)); do
			[[ -n ${RES[$key.$r]:-} ]] && v=$((v + $(field "$key.$r" "$f")))
		done
		out+=" $f=$v"
	done
	RES[$key]="${out# } rounds=$n"
}

# pcombine KEY: PTV[KEY] = median of PTV[KEY.1..ROUNDS], PTR[KEY] = rounds.
declare -A PTR
pcombine() {
	local key=$1 r n=0
	for ((r = 1; r <= ROUNDS; r++)); do
		[[ -n ${PTV[$key.$r]:-} ]] && n=$((n + 1))
	done
	if ((n == 0)); then
		for ((r = 1; r <= ROUNDS; r++)); do
			[[ -n ${ERR[$key.$r]:-} ]] && { ERR[$key]=${ERR[$key.$r]}; return 1; }
		done
		ERR[$key]="not measured"
		return 1
	fi
	PTV[$key]=$(for ((r = 1; r <= ROUNDS; r++)); do
		[[ -n ${PTV[$key.$r]:-} ]] && echo "${PTV[$key.$r]}"; done | median)
	PTR[$key]=$n
}

# ---- Measurements ----------------------------------------------------------

say "rbench $MODE mode: device $DEV, $A (GID index $(gid_index)), $ROUNDS rounds, ULB table $CONF"
say "pinning: in the VM $PIN; vCPUs on the host $VM_PIN"

BULK_LIMIT=$((BULK_SECS + 120))
RATE_LIMIT=$((SECS + 120))
LAT_LIMIT=$((LAT_SECS + 120))
CG_LIMIT=$((300 + CG_N * 4 / 10 + CG_BULK * 64))
RS_ENV=
[[ -n $RSPRELOAD ]] && RS_ENV="LD_PRELOAD=$RSPRELOAD"

# rdma: librpcrdma on both sides; tcp: libtirpc's own netid, kernel TCP
# over the veth address; rs: tcp with librspreload.so in server and client.
start_server srv_rdma rdma $PORT
# event mode without polling before sleeping, on both sides: the figure
# that compares with ib_send_lat -e, which sleeps on every completion
start_server srv_sleep rdma $((PORT + 6)) RPCRDMA_POLL_US=0
start_server srv_tcp tcp $((PORT + 1))
if [[ -z $RSPRELOAD ]]; then
	ERR[srv_rs]="librspreload.so not found (package librdmacm1)"
elif [[ ! -r $RSPRELOAD ]]; then
	ERR[srv_rs]="cannot read $RSPRELOAD"
elif start_server srv_rs tcp $((PORT + 2)) "$RS_ENV" &&
	! grep -qF "$(realpath "$RSPRELOAD")" "/proc/${SRV[srv_rs]}/maps" 2>/dev/null; then
	# the dynamic linker only warns about a preload it cannot load
	stop_server srv_rs
	ERR[srv_rs]="$RSPRELOAD was not loaded into the server"
fi
[[ -n ${ERR[srv_rs]:-} ]] && say "srv_rs: ERROR: ${ERR[srv_rs]}"

# 1, 4, 5: round trips and CPU per call, in rounds.  ib_send_lat reports
# one-way latency: an RPC round trip compares with 2 x t_typical.
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: round trips"
	perftest pt_lat_poll.$r 5 ib_send_lat -n "$PT_LAT_N"
	perftest pt_lat_event.$r 5 ib_send_lat -e -n "$PT_LAT_N"
	client lat_rdma_event.$r srv_rdma $LAT_LIMIT "" -n rdma -p $PORT --comp event lat -N $LAT_N -s $LAT_SECS
	client lat_rdma_poll.$r srv_rdma $LAT_LIMIT "" -n rdma -p $PORT --comp poll lat -N $LAT_N -s $LAT_SECS
	client lat_rdma_sleep.$r srv_sleep $LAT_LIMIT "RPCRDMA_POLL_US=0" -n rdma -p $((PORT + 6)) \
		--comp event lat -N $LAT_N -s $LAT_SECS
	client lat_tcp.$r srv_tcp $LAT_LIMIT "" -n tcp -p $((PORT + 1)) lat -N $LAT_N -s $LAT_SECS
	((r <= RS_ROUNDS)) &&
		client lat_rs.$r srv_rs $LAT_LIMIT "$RS_ENV" -n tcp -p $((PORT + 2)) lat -N $LAT_N -s $LAT_SECS
done
stop_server srv_sleep

# 3, 4: 1 MiB goodput, in rounds
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: 1 MiB goodput"
	perftest pt_write_bw.$r 4 ib_write_bw -s $SIZE -n "$PT_BW_N"
	for k in rdma:srv_rdma:$PORT: tcp:srv_tcp:$((PORT + 1)): rs:srv_rs:$((PORT + 2)):"$RS_ENV"; do
		IFS=: read -r n s p e <<<"$k"
		[[ $n == rs ]] && ((r > RS_ROUNDS)) && continue
		client read_$n.$r $s $BULK_LIMIT "$e" -n "${n/rs/tcp}" -p "$p" read \
			-t "$BULK_T" -s $BULK_SECS --size $SIZE
	done
	# several calls outstanding: MT_T threads sharing one CLIENT
	client read_mt.$r srv_rdma $BULK_LIMIT "" -n rdma -p $PORT read \
		-t "$MT_T" -s $BULK_SECS --size $SIZE
	perftest pt_read_bw.$r 4 ib_read_bw -s $SIZE -n "$PT_BW_N"
	for k in rdma:srv_rdma:$PORT: tcp:srv_tcp:$((PORT + 1)): rs:srv_rs:$((PORT + 2)):"$RS_ENV"; do
		IFS=: read -r n s p e <<<"$k"
		[[ $n == rs ]] && ((r > RS_ROUNDS)) && continue
		client write_$n.$r $s $BULK_LIMIT "$e" -n "${n/rs/tcp}" -p "$p" write \
			-t "$BULK_T" -s $BULK_SECS --size $SIZE
	done
	client write_mt.$r srv_rdma $BULK_LIMIT "" -n rdma -p $PORT write \
		-t "$MT_T" -s $BULK_SECS --size $SIZE
done
stop_server srv_tcp
stop_server srv_rs

# 7: version 2 against version 1 (the server speaks both), in rounds
INV_ENV="RPCRDMA_REG_MODE=mw RPCRDMA_VERSION"
for ((r = 1; r <= ROUNDS; r++)); do
	say "round $r/$ROUNDS: version 2 against version 1"
	for v in 1 2; do
		client lat_v$v.$r srv_rdma $LAT_LIMIT "RPCRDMA_VERSION=$v" -n rdma -p $PORT \
			--comp event lat -N $LAT_N -s $LAT_SECS
	done
	client inv_on.$r srv_rdma $BULK_LIMIT "$INV_ENV=2" -n rdma -p $PORT read \
		-t 1 -s $BULK_SECS --size 65536
	client inv_off.$r srv_rdma $BULK_LIMIT "$INV_ENV=2 RPCRDMA_REMOTE_INV=0" -n rdma \
		-p $PORT read -t 1 -s $BULK_SECS --size 65536
done

# 2: ECHO rate
for t in 1 8 32; do
	client rate_shared_$t srv_rdma $RATE_LIMIT "" -n rdma -p $PORT rate -t $t -s $SECS --size 64
	client rate_perclient_$t srv_rdma $RATE_LIMIT "" -n rdma -p $PORT rate -t $t --per-thread \
		-s $SECS --size 64
done
stop_server srv_rdma

# 5: memory per idle connection, on a fresh server, so that memory freed
# by the runs above cannot be reused by the new connections unseen
if start_server srv_idle rdma $((PORT + 3)); then
	client idle_rdma srv_idle $((IDLE * 5 + 120)) "" -n rdma -p $((PORT + 3)) idle --conns $IDLE
	stop_server srv_idle
fi

# 5: connections held at once.  HOLD_PROCS client processes, HOLD_N
# connections asked in all, each process opening idle connections (one NULL
# call each, 2 credits) to one fresh server until one is refused or
# HOLD_SECS run out; when all have stopped, the server's fds and registered
# memory are counted, then every client checks each of its connections
# with a NULL call.  A connection takes several fds on both sides, so the
# fd limit of server and clients is raised to HOLD_NOFILE for this: what
# shows is then the library's own limit, or the fds it needs.  Never an
# error of the benchmark: the figure says what happened and why it stopped.
HOLD_PORT=$((PORT + 7)) HOLD_NOFILE=16384

# mr_bytes PID: the registered memory of PID (rdma resource show mr), or n/a
mr_bytes() {
	local out
	out=$(rdma resource show mr 2>/dev/null) || { echo n/a; return; }
	awk -v pid="$1" '
		{ p = m = ""; for (i = 1; i < NF; i++) {
			if ($i == "pid") p = $(i + 1); if ($i == "mrlen") m = $(i + 1) } }
		p == pid { sum += m } END { print sum + 0 }' <<<"$out"
}

fd_count() {
	local f n=0
	for f in /proc/"$1"/fd/*; do
		[[ -e $f || -L $f ]] && n=$((n + 1))
	done
	echo $n
}

# raise_nofile: the shell's fd limit to HOLD_NOFILE (root may raise the hard
# one), or as far as it goes; restore_nofile SOFT HARD puts it back.
raise_nofile() {
	ulimit -Hn "$HOLD_NOFILE" 2>/dev/null
	ulimit -Sn "$HOLD_NOFILE" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"
}
restore_nofile() {
	ulimit -Sn "$1"
	ulimit -Hn "$2" 2>/dev/null
}

hold_conns() {
	local soft hard per n i pid spid left end
	local -a pids=()
	soft=$(ulimit -Sn) hard=$(ulimit -Hn)
	raise_nofile
	start_server srv_hold rdma $HOLD_PORT
	spid=${SRV[srv_hold]:-}
	if [[ -z $spid ]]; then
		restore_nofile "$soft" "$hard"
		return 1
	fi
	H_FDS0=$(fd_count "$spid") H_MR0=$(mr_bytes "$spid")
	H_RSS0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$spid/status")
	H_LIMIT=$(awk '/^Max open files/ { print $4 }' "/proc/$spid/limits")
	per=$(((HOLD_N + HOLD_PROCS - 1) / HOLD_PROCS)) left=$HOLD_N
	say "hold: $HOLD_PROCS clients, $HOLD_N idle connections asked (fd limit $H_LIMIT)"
	# no timeout(1) around them: it would not pass SIGUSR1 on; each
	# client ends itself (alarm) after its opening time plus a margin
	for ((i = 1; i <= HOLD_PROCS && left > 0; i++)); do
		n=$((left < per ? left : per)) left=$((left - n))
		"${PIN_CLI[@]}" "$RB" client -a "$A" -n rdma -p $HOLD_PORT hold \
			--conns $n -s $HOLD_SECS >"$WORK/hold.$i.out" 2>"$WORK/hold.$i.err" &
		pids+=($!)
	done
	restore_nofile "$soft" "$hard"
	end=$((SECONDS + HOLD_SECS + 20))
	for i in "${!pids[@]}"; do
		while ((SECONDS < end)) && kill -0 "${pids[$i]}" 2>/dev/null &&
			! grep -q '^HELD ' "$WORK/hold.$((i + 1)).out"; do
			sleep 0.2
		done
	done
	H_FDS1=$(fd_count "$spid") H_MR1=$(mr_bytes "$spid")
	H_RSS1=$(awk '/^VmRSS:/ { print $2 }' "/proc/$spid/status" 2>/dev/null)
	kill -USR1 "${pids[@]}" 2>/dev/null
	end=$((SECONDS + 30))
	for pid in "${pids[@]}"; do
		while ((SECONDS < end)) && kill -0 "$pid" 2>/dev/null; do
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	alive srv_hold || true
	stop_server srv_hold
}
# the server's fds, registered memory and VmRSS (KiB) before and while
# held, and its fd limit
H_FDS0=0 H_FDS1=0 H_MR0=n/a H_MR1=n/a H_RSS0=0 H_RSS1=0 H_LIMIT=unknown
hold_conns

# 6: NFSv3 with the kernel client: rpcrdma-nfs3d against the kernel's nfsd.
# Both export the same tmpfs directory at once (nfsd on 20049 with mountd
# through rpcbind, ours on PORT+4 with MOUNT on PORT+5, unregistered), each
# mounted once; fio runs alternate between the two mounts in rounds.
NFS3D=$B/examples/nfs3d/rpcrdma-nfs3d
NFS_KERNEL_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")/../vm" && pwd)/nfs_kernel.sh
NFS_PORT=$((PORT + 4)) NFS_MPORT=$((PORT + 5)) NFS_DEPTH=4
NFS_X=$WORK/nfs_export NFS_MK=$WORK/nfs_mnt_kernel NFS_MO=$WORK/nfs_mnt_ours
NFSK_LOG=$WORK/nfs_kernel.log

# nfs_fio KEY MNT FIO-ARGS...: one fio run under a deadline; RES[KEY] =
# "MiBps=... iops=..." of its read or write side, or ERR[KEY].
nfs_fio() {
	local key=$1 mnt=$2 out bw iops
	shift 2
	say "$key: fio $*"
	out=$(timeout -k 5 $((NFS_SECS + 180)) fio --name="$key" --directory="$mnt" \
		--direct=1 --ioengine=libaio --iodepth=$NFS_DEPTH --minimal "$@" \
		2>"$WORK/$key.err")
	if [[ $? -ne 0 || -z $out ]]; then
		ERR[$key]="fio failed: $(grep -v '^$' "$WORK/$key.err" | tail -n 1 | tr -d '"')"
		say "$key: ERROR: ${ERR[$key]}"
		return 1
	fi
	# terse v3: read bandwidth (KiB/s) and IOPS are fields 7, 8; write 48, 49
	if [[ " $* " == *" --rw=write "* ]]; then
		bw=$(cut -d';' -f48 <<<"$out") iops=$(cut -d';' -f49 <<<"$out")
	else
		bw=$(cut -d';' -f7 <<<"$out") iops=$(cut -d';' -f8 <<<"$out")
	fi
	RES[$key]="MiBps=$(awk -v b="$bw" 'BEGIN { printf "%.2f", b / 1024 }') iops=$iops"
}

nfs_setup() {
	local i
	if ! command -v fio >/dev/null; then
		ERR[nfs]="fio not installed (package fio)"
		return 1
	fi
	# shellcheck source=tests/vm/nfs_kernel.sh
	. "$NFS_KERNEL_SH" || { ERR[nfs]="cannot read $NFS_KERNEL_SH"; return 1; }
	mkdir -p "$NFS_X" "$NFS_MK" "$NFS_MO"
	say "nfs: the kernel NFS server exports $NFS_X on rdma port 20049"
	if ! nfsk_start "$NFS_X" 20049 2>"$WORK/nfs.err"; then
		ERR[nfs_kernel]="kernel NFS server: $(tail -n 1 "$WORK/nfs.err")"
		return 1
	fi
	say "nfs: rpcrdma-nfs3d exports it on rdma port $NFS_PORT"
	env -u RPCRDMA_ULB_CONF RPCRDMA_STATS=1 RPCRDMA_STATS_FILE="$WORK/nfs3d.stats" \
		"$NFS3D" -R -p $NFS_PORT -m $NFS_MPORT \
		${TIRPC_RDMA_BENCH_NFS3D_THREADS:+-t "$TIRPC_RDMA_BENCH_NFS3D_THREADS"} \
		"$NFS_X" >"$WORK/nfs_ours.srv" 2>&1 &
	SRV[nfs_ours]=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^rpcrdma-nfs3d: exporting' "$WORK/nfs_ours.srv" && break
		alive nfs_ours || break
		sleep 0.1
	done
	if ! grep -q '^rpcrdma-nfs3d: exporting' "$WORK/nfs_ours.srv"; then
		ERR[nfs_ours]="rpcrdma-nfs3d did not start: $(tail -n 1 "$WORK/nfs_ours.srv")"
		return 1
	fi
	nfsk_mount "$A:$NFS_X" "$NFS_MK" rdma 20049 2>"$WORK/nfs.err" ||
		{ ERR[nfs_kernel]="$(tail -n 1 "$WORK/nfs.err")"; return 1; }
	nfsk_mount "$A:$NFS_X" "$NFS_MO" rdma $NFS_PORT \
		",mountport=$NFS_MPORT,mountproto=tcp" 2>"$WORK/nfs.err" ||
		{ ERR[nfs_ours]="$(tail -n 1 "$WORK/nfs.err")"; return 1; }
	return 0
}

nfs_teardown() {
	grep -q " $NFS_MO " /proc/mounts && nfsk_umount "$NFS_MO"
	grep -q " $NFS_MK " /proc/mounts && nfsk_umount "$NFS_MK"
	stop_server nfs_ours
	declare -F nfsk_stop >/dev/null && nfsk_stop
	declare -F nfsk_rpcbind_stop >/dev/null && nfsk_rpcbind_stop
}

if nfs_setup; then
	for ((r = 1; r <= NFS_ROUNDS; r++)); do
		say "round $r/$NFS_ROUNDS: NFSv3, kernel client"
		for k in kernel:$NFS_MK ours:$NFS_MO; do
			IFS=: read -r n m <<<"$k"
			nfs_fio nfs_write_$n.$r "$m" --rw=write --bs=1M --size=${NFS_MIB}M \
				--filename=seq.$r --end_fsync=1
			nfs_fio nfs_read_$n.$r "$m" --rw=read --bs=1M --size=${NFS_MIB}M \
				--filename=seq.$r
			nfs_fio nfs_rand_$n.$r "$m" --rw=randread --bs=4k --size=${NFS_MIB}M \
				--filename=seq.$r --runtime=$NFS_SECS --time_based
			rm -f "$m/seq.$r"
		done
	done
fi
nfs_teardown
for n in kernel ours; do
	for t in write read rand; do
		ROUNDS=$NFS_ROUNDS combine nfs_${t}_$n "MiBps iops" ""
	done
done

# 8: instructions per call, counted by callgrind (tests/bench/cg.sh), in
# event mode without polling on both sides (RPCRDMA_POLL_US=0), so that no
# spinning is counted: one rbench server and one client (rbench count:
# NULL, 64-octet ECHO, 1 MiB READ-shaped and WRITE-shaped calls), each
# cutting its counts around segments of CG_N, CG_N and 2 x CG_N calls
# (CG_BULK for 1 MiB).  The 1 MiB calls are counted on each side against
# a peer that does not run under valgrind (srv_cgpeer, a client without
# it): against one that does, a call takes 0.5-2 s, and the client's wait
# wakes every 200 ms slice a varying number of times, a few hundred
# instructions each.  And perftest's ib_send_lat -e -s 64, both sides
# under callgrind, cut by libcgcut.so after CG_RAW_WARM iterations into
# segments of CG_RAW, CG_RAW and 2 x CG_RAW iterations.  After everything
# else: the counts are not times, but how many completions one wake-up of
# ours finds depends on timing.  perftest's counts do not (each of its
# waits sleeps for one completion), so it runs while rbench's server
# starts under valgrind, which takes half a minute under TCG.
CG=${TIRPC_RDMA_BENCH_CG_DIR:-$B/rbench-callgrind}
CG_PORT=$((PORT + 8))
CGCUT=$B/tests/bench/.libs/libcgcut.so
CG_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cg.sh
CG_OPTS=(--tool=callgrind --dump-line=no)
CG_RAW_WARM=50 CG_RAW_RX=64
# a pause before each counted call of ours (not counted: rbench.c)
CG_GAP_US=10000
CG_KINDS="null echo read write"

# cg_perftest: ib_send_lat -e under callgrind with the cuts, server in the
# background, client retried while the server starts (valgrind takes
# 10-20 s to start under TCG); ERR[cg_raw] on failure.  ib_send_lat posts
# a Receive per iteration but in its last rx-depth iterations, so the
# segments end before those: with -r CG_RAW_RX (default 512) it needs that
# many iterations fewer to reach its steady loop's end.
cg_perftest() {
	local port=$((PT_PORT++)) n=$CG_RAW e0 e1 e2 e3 iters spid try rc=1 end
	# two completion events per iteration (one for the Send, one for the
	# Receive): the cuts fall between iterations
	e0=$((2 * CG_RAW_WARM + 1)) e1=$((e0 + 2 * n)) e2=$((e1 + 2 * n)) e3=$((e2 + 4 * n))
	iters=$((CG_RAW_WARM + 4 * n + CG_RAW_RX + 10))
	local -a ptcmd=(ib_send_lat -e -d "$DEV" -R -p "$port" -n "$iters" -s 64 -r "$CG_RAW_RX")
	local -a envs=(LD_PRELOAD="$CGCUT" CGCUT_AT="$e0 $e1 $e2 $e3" CGCUT_NAME=raw)
	say "cg_raw: callgrind: ${ptcmd[*]}, cuts at completion events $e0 $e1 $e2 $e3"
	"${PIN_SRV[@]}" env "${envs[@]}" timeout -k 5 300 valgrind "${CG_OPTS[@]}" \
		--callgrind-out-file="$CG/raws.out" "${ptcmd[@]}" >"$WORK/cg_raws.log" 2>&1 &
	spid=$!
	end=$((SECONDS + 120))
	for ((try = 1; SECONDS < end; try++)); do
		sleep 2
		rm -f "$CG"/rawc.out*
		"${PIN_CLI[@]}" env "${envs[@]}" timeout -k 5 240 valgrind "${CG_OPTS[@]}" \
			--callgrind-out-file="$CG/rawc.out" "${ptcmd[@]}" "$A" >"$WORK/cg_rawc.log" 2>&1
		rc=$?
		((rc == 0 || rc > 123)) && break
		kill -0 "$spid" 2>/dev/null || break
	done
	for ((try = 0; try < 300; try++)); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	if ((rc != 0)); then
		ERR[cg_raw]="ib_send_lat -e under callgrind failed (status $rc): $(grep -v '^[ -]*$' \
			"$WORK/cg_rawc.log" | grep -v '^==' | tail -n 1 | tr -d '"')"
		say "cg_raw: ERROR: ${ERR[cg_raw]}"
		return 1
	fi
}

# cg_side KEY OUT "UNITS" [UNIT-KEY]: RES[KEY] = instructions per call of
# the dumps of OUT cut at "NAME 1..3" (NAME: KEY's kind; CG_F, CG_S),
# UNITS the calls of each segment, or, with UNIT-KEY, that count of each
# dump (write_calls: perftest's sends, i.e. its iterations), with
# cq_events, the calls of ibv_get_cq_event() per call (the wake-ups on a
# completion event; the server's include those that find none, as its
# completion channel does not block); else ERR[KEY].  CG_SEG[KEY]: the
# segments' totals.
cg_side() {
	local key=$1 out=$2 units=$3 uk=${4:-} name=${1#cg_} s f v kv=() u=""
	name=${name%_*}
	for s in 1 2 3; do
		f=${CG_F[$out|$name $s]:-}
		if [[ -z $f || -z ${CG_S[$f]:-} ]]; then
			ERR[$key]="no callgrind dump '$name $s' of ${out##*/}"
			return 1
		fi
		kv+=("${CG_S[$f]}")
		if [[ -n $uk ]]; then
			v=${CG_S[$f]#*"$uk"=}
			u+=" ${v%% *}"
		fi
	done
	[[ -n $uk ]] && units=${u# }
	RES[$key]=$(cg_per_call "$units" "${kv[@]}")
	[[ -n ${RES[$key]} ]] || { ERR[$key]="segments of $units calls give no figure"; return 1; }
	RES[$key]+=" segments=${units// /,}"
	CG_SEG[$key]=$(for f in "${kv[@]}"; do v=${f#*total=}; echo "${v%% *}"; done | paste -sd,)
}

# cg_read: CG_F[OUT|LABEL], the dump of OUT cut at LABEL, for rbench's and
# perftest's dumps; CG_S[FILE], cg_sum's line of each segment's dump.
declare -A CG_F CG_S
cg_read() {
	local out label f kv
	local -a files=()
	for out in "$CG/cli.out" "$CG/srv.out" "$CG/rawc.out" "$CG/raws.out"; do
		while IFS=$'\t' read -r label f; do
			[[ -n $f ]] || continue
			CG_F[$out|$label]=$f
			[[ $label == *' '[123] ]] && files+=("$f")
		done <<<"$(cg_index "$out")"
	done
	((${#files[@]})) || return 0
	while IFS=$'\t' read -r f kv; do
		[[ -n $f ]] && CG_S[$f]=$kv
	done <<<"$(cg_sum "${files[@]}")"
}

declare -A CG_SEG
cg_measure() {
	local k n run side
	local -a bulk=(--kinds "null,echo")
	if ! command -v valgrind >/dev/null; then
		ERR[cg]="valgrind not installed (package valgrind)"
		return 1
	fi
	# shellcheck source=tests/bench/cg.sh
	. "$CG_SH" || { ERR[cg]="cannot read $CG_SH"; return 1; }
	rm -rf "$CG"
	mkdir -p "$CG" || { ERR[cg]="cannot create $CG"; return 1; }
	# rbench's server starts in the background while perftest runs
	SRV_WRAP=(valgrind "${CG_OPTS[@]}" --callgrind-out-file="$CG/srv.out") SRV_ARGS=(--callgrind)
	SRV_WAIT=0
	start_server srv_cg rdma $CG_PORT RPCRDMA_POLL_US=0
	SRV_WRAP=() SRV_ARGS=() SRV_WAIT=30
	start_server srv_cgpeer rdma $((CG_PORT + 1)) RPCRDMA_POLL_US=0
	if [[ ! -e $CGCUT ]]; then
		ERR[cg_raw]="no $CGCUT (configure found no valgrind/callgrind.h: package valgrind)"
	elif command -v ib_send_lat >/dev/null; then
		cg_perftest
	else
		ERR[cg_raw]="ib_send_lat not installed (package perftest)"
	fi
	for ((n = 0; n < 1800; n++)); do
		grep -q '^rbench: listening' "$WORK/srv_cg.srv" && break
		alive srv_cg || break
		sleep 0.1
	done
	if ! grep -q '^rbench: listening' "$WORK/srv_cg.srv"; then
		alive srv_cg && ERR[srv_cg]="the server did not start under valgrind within 180 s"
		stop_server srv_cg
		ERR[srv_cg]="cannot start: ${ERR[srv_cg]:-the server did not start}"
		say "srv_cg: ERROR: ${ERR[srv_cg]}"
	else
		# the client's 1 MiB calls against srv_cgpeer, if it runs
		alive srv_cgpeer && bulk=(--bulk-port $((CG_PORT + 1)))
		CLI_WRAP=(valgrind "${CG_OPTS[@]}" --callgrind-out-file="$CG/cli.out")
		client cg_count srv_cg $CG_LIMIT "RPCRDMA_POLL_US=0" -n rdma -p $CG_PORT \
			--comp event count -N "$CG_N" --bulk-calls "$CG_BULK" --size $SIZE "${bulk[@]}" \
			--gap-us $CG_GAP_US
		CLI_WRAP=()
		if [[ -n ${RES[cg_count]:-} && $(field cg_count valgrind) == 0 ]]; then
			ERR[cg_count]="rbench count did not run under valgrind"
			RES[cg_count]=
		fi
		# the server's 1 MiB calls, from a client not under valgrind
		client cg_count_bulk srv_cg $CG_LIMIT "RPCRDMA_POLL_US=0" -n rdma -p $CG_PORT \
			--comp event count -N "$CG_N" --bulk-calls "$CG_BULK" --size $SIZE \
			--kinds read,write --gap-us $CG_GAP_US
		stop_server srv_cg
	fi
	stop_server srv_cgpeer
	say "cg: reading the dumps ($CG)"
	cg_read
	for side in client server; do
		if [[ -z ${ERR[cg_raw]:-} ]]; then
			cg_side cg_raw_$side "$CG/raw${side:0:1}.out" "" write_calls
		else
			ERR[cg_raw_$side]=${ERR[cg_raw]}
		fi
		# without a client's figures, the report says why (cg_count...)
		for k in $CG_KINDS; do
			n=$CG_N run=cg_count
			if [[ $k == read || $k == write ]]; then
				n=$CG_BULK
				[[ $side == server ]] && run=cg_count_bulk
				[[ $side == client && ${bulk[0]} == --kinds ]] && continue
			fi
			[[ -n ${RES[$run]:-} ]] || continue
			cg_side cg_${k}_$side "$CG/$([[ $side == client ]] && echo cli || echo srv).out" \
				"$n $n $((2 * n))"
		done
	done
}
cg_measure

ELAPSED=$((SECONDS - T0))

for k in pt_lat_poll pt_lat_event pt_write_bw pt_read_bw; do
	pcombine $k
done
LAT_F="median_us p99_us cli_cpu_us srv_cpu_us"
BULK_F="write_chunks read_chunks reply_chunks long_calls ddp_copies ddp_zero_copies srv_ddp_copies foreign_results"
for n in rdma_event rdma_poll rdma_sleep tcp rs; do
	combine lat_$n "$LAT_F" "calls reply_chunks registrations"
done
for n in rdma tcp rs mt; do
	combine read_$n MiBps "$BULK_F"
	combine write_$n MiBps "$BULK_F"
done
for v in 1 2; do
	combine lat_v$v "$LAT_F rdma_version" "calls"
done
for n in on off; do
	combine inv_$n "MiBps rdma_version" "calls_sent invalidations remote_invalidations write_chunks"
done

# ---- Report ----------------------------------------------------------------

TABLE=$WORK/table
LINES=$WORK/lines
: >"$TABLE"
: >"$LINES"

# row NAME MEASURED REFERENCE RATIO TARGET MET
row() {
	printf '%-30s %-40s %-34s %6s %7s %s\n' "$@" >>"$TABLE"
	FIG_ROW[$1]="\"measured\": $(json_str "$2"), \"reference\": $(json_str "$3"), \"ratio\": $(json_val "$4"), \"target\": $(json_str "$5"), \"met\": $(json_str "$6")"
}

# bench NAME KEY=VALUE...
declare -a FIG_ORDER=()
declare -A FIG_ROW PR
bench() {
	local name=$1
	shift
	printf 'BENCH name=%s %s\n' "$name" "$*" >>"$LINES"
	FIG_ORDER+=("$name")
}

# ---- JSON ------------------------------------------------------------------
# Written by the shell (the VM's root is the host's, whose python3 may not
# be there): strings quoted and escaped, numbers bare, "n/a" a string.

# json_str TEXT: TEXT as a JSON string.
json_str() {
	local t=$1
	t=${t//\\/\\\\} t=${t//\"/\\\"} t=${t//$'\t'/\\t} t=${t//$'\n'/\\n}
	t=${t//$'\r'/}
	printf '"%s"' "$t"
}

# json_val TEXT: a JSON number when TEXT is one, null when empty, else a
# string.
json_val() {
	if [[ -z $1 ]]; then
		printf 'null'
	elif [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
		printf '%s' "$1"
	else
		json_str "$1"
	fi
}

# rounds_of KEY FIELD [N]: FIELD of RES[KEY.1..N] (N: ROUNDS) as a JSON
# array, null for a round that failed.
rounds_of() {
	local key=$1 f=$2 n=${3:-$ROUNDS} r v out=""
	for ((r = 1; r <= n; r++)); do
		if v=$(field "$key.$r" "$f"); then
			out+=",$(json_val "$v")"
		else
			out+=",null"
		fi
	done
	printf '[%s]' "${out#,}"
}

# prounds_of KEY: perftest's PTV[KEY.1..ROUNDS] as a JSON array.
prounds_of() {
	local r out=""
	for ((r = 1; r <= ROUNDS; r++)); do
		if [[ -n ${PTV[$1.$r]:-} ]]; then
			out+=",$(json_val "${PTV[$1.$r]}")"
		else
			out+=",null"
		fi
	done
	printf '[%s]' "${out#,}"
}

# per_round NAME LABEL ARRAY [LABEL ARRAY...]: the rounds of figure NAME.
per_round() {
	local name=$1 out=""
	shift
	while (($# >= 2)); do
		out+=", $(json_str "$1"): $2"
		shift 2
	done
	PR[$name]=${out#, }
}

# json_fields "KEY=VALUE ...": the pairs of a BENCH line (values possibly
# "quoted") as JSON members.
json_fields() {
	local rest=$1 out="" k v
	while [[ $rest =~ ^\ *([A-Za-z0-9_]+)=(\"([^\"]*)\"|([^ ]*))(.*)$ ]]; do
		k=${BASH_REMATCH[1]} rest=${BASH_REMATCH[5]}
		if [[ ${BASH_REMATCH[2]} == \"* ]]; then
			v=$(json_str "${BASH_REMATCH[3]}")
		else
			v=$(json_val "${BASH_REMATCH[4]}")
		fi
		out+=", $(json_str "$k"): $v"
	done
	printf '%s' "${out#, }"
}

# write_json FILE: the whole result.
write_json() {
	local line name sep="" kv
	{
		printf '{\n  "benchmark": "rbench",\n  "mode": %s,\n  "rounds": %s,\n' \
			"$(json_str "$MODE")" "$ROUNDS"
		printf '  "rsockets_rounds": %s,\n' "$RS_ROUNDS"
		printf '  "nfs_rounds": %s,\n  "pin_in_vm": %s,\n  "pin_vcpus_on_host": %s,\n' \
			"$NFS_ROUNDS" "$(json_str "$PIN")" "$(json_str "$VM_PIN")"
		printf '  "device": %s,\n  "address": %s,\n  "date": %s,\n  "elapsed_s": %s,\n' \
			"$(json_str "$DEV")" "$(json_str "$A")" \
			"$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$ELAPSED"
		printf '  "goodput_threads": %s,\n  "goodput_mt_threads": %s,\n  "errors": %s,\n' \
			"$BULK_T" "$MT_T" "$ERRORS"
		printf '  "kernel": %s,\n  "figures": [' "$(json_str "$(uname -r)")"
		while IFS= read -r line; do
			line=${line#BENCH name=}
			name=${line%% *} kv=${line#"$name"}
			printf '%s\n    {"name": %s' "$sep" "$(json_str "$name")"
			[[ -n ${FIG_ROW[$name]:-} ]] && printf ', %s' "${FIG_ROW[$name]}"
			printf ', "fields": {%s}' "$(json_fields "$kv")"
			[[ -n ${PR[$name]:-} ]] && printf ', "per_round": {%s}' "${PR[$name]}"
			printf '}'
			sep=,
		done <"$LINES"
		printf '\n  ]\n}\n'
	} >"$1"
}

# fig_error NAME WHY [COUNTS]: a figure that could not be measured.
fig_error() {
	row "$1" "ERROR: $2" "" "" "" ""
	bench "$1" "error=\"$2\""
	[[ ${3:-1} == 1 ]] && ERRORS=$((ERRORS + 1))
}

# met OP VALUE TARGET: yes or no.
met() {
	awk -v op="$1" -v v="$2" -v t="$3" 'BEGIN {
		ok = op == "le" ? v <= t : op == "ge" ? v >= t : op == "lt" ? v < t : v > t
		print ok ? "yes" : "no" }'
}

opsym() {
	case $1 in le) echo "<=" ;; ge) echo ">=" ;; lt) echo "<" ;; gt) echo ">" ;; esac
}

calc() {
	awk "BEGIN { printf \"%.${2:-2}f\", $1 }"
}

# the reason a figure is missing: the first error among KEYs
why() {
	local k
	for k in "$@"; do
		[[ -n ${ERR[$k]:-} ]] && { printf '%s' "${ERR[$k]}"; return; }
	done
	printf 'not measured'
}

# 1. NULL round trip against 2 x ib_send_lat t_typical
for m in event poll sleep; do
	name=null_rtt_$m pt=pt_lat_$m key=lat_rdma_$m
	ref="ib_send_lat"
	[[ $m == event ]] && ref="ib_send_lat -e"
	[[ $m == sleep ]] && ref="ib_send_lat -e" pt=pt_lat_event
	if [[ -n ${RES[$key]:-} && -n ${PTV[$pt]:-} ]]; then
		med=$(field $key median_us) p99=$(field $key p99_us)
		raw=$(calc "2 * ${PTV[$pt]}" 1)
		ratio=$(calc "$med / $raw")
		ok=$(met le "$ratio" 1.3)
		row $name "median $med us, p99 $p99 us" "2x $ref: $raw us" "$ratio" "<=1.3" "$ok"
		per_round $name median_us "$(rounds_of $key median_us)" \
			p99_us "$(rounds_of $key p99_us)" raw_one_way_us "$(prounds_of $pt)"
		bench $name "median_us=$med p99_us=$p99 raw_us=$raw ratio=$ratio target=1.3 op=le met=$ok rounds=$(field $key rounds) calls=$(field $key calls) reply_chunks=$(field $key reply_chunks) registrations=$(field $key registrations)"
	else
		fig_error $name "$(why $key $pt srv_rdma)"
	fi
done

# 2. ECHO rate
for mode in shared perclient; do
	for t in 1 8 32; do
		name=echo_rate_${mode}_$t key=rate_${mode}_$t
		if [[ -n ${RES[$key]:-} ]]; then
			r=$(field $key calls_per_s) nc=$(field $key clients)
			row $name "$r calls/s" "$t thread(s), $nc CLIENT(s), 64 B" "" "" ""
			bench $name "calls_per_s=$r threads=$t clients=$nc size=64"
		else
			fig_error $name "$(why $key srv_rdma)"
		fi
	done
done
# threads sharing one CLIENT against one thread: at least as many calls
# (libtirpc over tcp serialises them: a caller expects the rate of one)
for t in 8 32; do
	name=echo_rate_shared_${t}_vs_1
	if [[ -n ${RES[rate_shared_$t]:-} && -n ${RES[rate_shared_1]:-} ]]; then
		r=$(field rate_shared_$t calls_per_s) r1=$(field rate_shared_1 calls_per_s)
		ratio=$(calc "$r / $r1")
		ok=$(met ge "$ratio" 1.0)
		row $name "$t threads: $r calls/s" "1 thread: $r1 calls/s" "$ratio" ">=1.0" "$ok"
		bench $name "calls_per_s=$r one_thread_calls_per_s=$r1 ratio=$ratio target=1.0 op=ge met=$ok threads=$t"
	else
		fig_error $name "$(why rate_shared_$t rate_shared_1 srv_rdma)"
	fi
done

# 3. 1 MiB goodput against ib_write_bw / ib_read_bw
# goodput NAME KEY PT REFNAME TARGET THREADS
goodput() {
	local name=$1 key=$2 pt=$3 refname=$4 target=$5 t=$6 g raw ratio ok
	if [[ -n ${RES[$key]:-} && -n ${PTV[$pt]:-} ]]; then
		g=$(field $key MiBps) raw=${PTV[$pt]}
		ratio=$(calc "$g / $raw")
		ok=$(met ge "$ratio" "$target")
		row $name "$g MiB/s, $t outstanding" "$refname 1 MiB: $raw MiB/s" "$ratio" ">=$target" "$ok"
		per_round $name MiBps "$(rounds_of $key MiBps)" raw_MiBps "$(prounds_of $pt)"
		bench $name "MiBps=$g raw_MiBps=$raw ratio=$ratio target=$target op=ge met=$ok threads=$t rounds=$(field $key rounds) write_chunks=$(field $key write_chunks) read_chunks=$(field $key read_chunks) reply_chunks=$(field $key reply_chunks) long_calls=$(field $key long_calls) ddp_copies=$(field $key ddp_copies) ddp_zero_copies=$(field $key ddp_zero_copies) srv_ddp_copies=$(field $key srv_ddp_copies)"
	else
		fig_error $name "$(why $key $pt srv_rdma)"
	fi
}
goodput goodput_write_chunk read_rdma pt_write_bw "ib_write_bw" 0.95 "$BULK_T"
goodput goodput_read_chunk write_rdma pt_read_bw "ib_read_bw" 0.95 "$BULK_T"
# several calls outstanding (threads sharing one CLIENT), as perftest
# keeps several RDMA operations outstanding
goodput goodput_write_chunk_mt read_mt pt_write_bw "ib_write_bw" 0.95 "$MT_T"
goodput goodput_read_chunk_mt write_mt pt_read_bw "ib_read_bw" 0.95 "$MT_T"

# DDP copies: none wanted, and the DDP paths must have been taken
if [[ -n ${RES[read_rdma]:-} || -n ${RES[write_rdma]:-} ]]; then
	cp=0 zc=0 scp=0 wch=0 rch=0 fr=0
	for k in read_rdma write_rdma; do
		[[ -n ${RES[$k]:-} ]] || continue
		cp=$((cp + $(field $k ddp_copies))) zc=$((zc + $(field $k ddp_zero_copies)))
		scp=$((scp + $(field $k srv_ddp_copies))) fr=$((fr + $(field $k foreign_results)))
		wch=$((wch + $(field $k write_chunks))) rch=$((rch + $(field $k read_chunks)))
	done
	ok=no
	((cp == 0 && fr == 0 && zc > 0 && rch > 0)) && ok=yes
	ref="server: $scp copied; ${wch}W ${rch}R chunks"
	row ddp_copies "client: $cp copied, $zc zero-copy" "$ref" "" "0" "$ok"
	bench ddp_copies "copies=$cp zero_copies=$zc srv_copies=$scp write_chunks=$wch read_chunks=$rch foreign_results=$fr target=0 op=le met=$ok"
	# The goodput figures are of Write and Read chunks: without them
	# they measure something else, which is an error, not a finding.
	if [[ -n ${RES[read_rdma]:-} && -n ${RES[write_rdma]:-} ]] &&
		((wch == 0 || rch == 0)); then
		fig_error ddp_paths "DDP not used: ${wch} Write and ${rch} Read chunks"
	fi
else
	fig_error ddp_copies "$(why read_rdma write_rdma srv_rdma)"
fi

# 4. tcp and tcp over rsockets, against rdma (event mode: every side sleeps)
# versus NAME KEY RDMAKEY FIELD UNIT OP TARGET COUNTS DESC SRVKEY
versus() {
	local name=$1 key=$2 rkey=$3 f=$4 unit=$5 op=$6 target=$7 counts=$8 desc=$9 srv=${10}
	local v rv ratio ok=- tshow=- extra=""
	if [[ -z ${RES[$key]:-} ]]; then
		fig_error $name "$(why $key $srv)" "$counts"
		return
	fi
	v=$(field $key "$f")
	[[ $f == median_us ]] && extra=", p99 $(field $key p99_us) us"
	[[ $op != - ]] && tshow="$(opsym "$op")$target"
	if [[ -z ${RES[$rkey]:-} ]]; then
		# measured, but nothing to compare with (counted with rdma's figure)
		row $name "$v $unit$extra" "rdma $desc: n/a (see its line)" "-" "$tshow" "-"
		bench $name "$f=$v rdma_$f=n/a ratio=n/a target=$target op=$op met=n/a rounds=$(field $key rounds)"
		return
	fi
	rv=$(field $rkey "$f")
	per_round $name "$f" "$(rounds_of "$key" "$f")" "rdma_$f" "$(rounds_of "$rkey" "$f")"
	ratio=$(calc "$rv / $v")
	[[ $op != - ]] && ok=$(met "$op" "$ratio" "$target")
	row $name "$v $unit$extra" "rdma $desc: $rv $unit" "$ratio" "$tshow" "$ok"
	bench $name "$f=$v rdma_$f=$rv ratio=$ratio target=$target op=$op met=$ok rounds=$(field $key rounds)"
}
versus tcp_null_rtt lat_tcp lat_rdma_event median_us us - - 1 "event" srv_tcp
versus tcp_goodput_read_shaped read_tcp read_rdma MiBps MiB/s - - 1 "READ" srv_tcp
versus tcp_goodput_write_shaped write_tcp write_rdma MiBps MiB/s - - 1 "WRITE" srv_tcp
versus rsockets_null_rtt lat_rs lat_rdma_event median_us us lt 1 0 "event" srv_rs
versus rsockets_goodput_read_shaped read_rs read_rdma MiBps MiB/s gt 1 0 "READ" srv_rs
versus rsockets_goodput_write_shaped write_rs write_rdma MiBps MiB/s gt 1 0 "WRITE" srv_rs

# 5. CPU per NULL call, memory per idle connection
for k in rdma_event rdma_poll rdma_sleep tcp rs; do
	name=cpu_per_call_$k srv=srv_${k%_*} counts=1
	[[ $k == rdma_sleep ]] && srv=srv_sleep
	[[ $k == rs ]] && name=cpu_per_call_rsockets counts=0
	if [[ -n ${RES[lat_$k]:-} ]]; then
		c=$(field lat_$k cli_cpu_us) s=$(field lat_$k srv_cpu_us)
		row $name "client $c us, server $s us" "user+system per NULL call" "" "" ""
		per_round $name cli_us "$(rounds_of lat_$k cli_cpu_us)" srv_us "$(rounds_of lat_$k srv_cpu_us)"
		bench $name "cli_us=$c srv_us=$s calls=$(field lat_$k calls) rounds=$(field lat_$k rounds)"
	else
		fig_error $name "$(why lat_$k $srv)" $counts
	fi
done
regnote="registered bytes: rdma resource show mr"
if [[ -n ${RES[idle_rdma]:-} ]]; then
	sr=$(field idle_rdma srv_rss_kb_per_conn) sg=$(field idle_rdma srv_reg_bytes_per_conn)
	cr=$(field idle_rdma cli_rss_kb_per_conn) cg=$(field idle_rdma cli_reg_bytes_per_conn)
	[[ $sg == n/a ]] && regnote="registered bytes n/a: 'rdma resource show mr' unavailable"
	row mem_idle_conn "server: $sr KiB RSS, $sg B reg." "client: $cr KiB RSS, $cg B reg." "" "" ""
	bench mem_idle_conn "conns=$IDLE srv_rss_kb=$sr srv_reg_bytes=$sg cli_rss_kb=$cr cli_reg_bytes=$cg"
else
	fig_error mem_idle_conn "$(why idle_rdma srv_idle)"
fi

# held connections: never counted as an error (the figure says what
# happened), but a client that printed nothing is reported
conns_held() {
	local i f held=0 alive=0 procs=0 open=0 v stop="" srvwhy kv fpc mpc rpc
	declare -A h
	for ((i = 1; i <= HOLD_PROCS; i++)); do
		f=$WORK/hold.$i.out
		[[ -e $f ]] || continue
		procs=$((procs + 1))
		RES[hold]=$(grep -m1 '^HELD ' "$f")
		RES[hold]=${RES[hold]#HELD }
		if [[ -z ${RES[hold]} ]]; then
			v=$(grep -m1 '^ERROR ' "$f")
			[[ -z $v ]] && v="client $i printed nothing: $(tail -n 1 "$WORK/hold.$i.err")"
			stop+="; ${v#ERROR }"
			continue
		fi
		held=$((held + $(field hold conns)))
		open=$(awk -v a="$open" -v b="$(field hold open_s)" 'BEGIN { print (b > a ? b : a) }')
		v=${RES[hold]#*stopped=\"} v=${v%\"}
		[[ $v == "all asked for were opened" || -n ${h[$v]:-} ]] || stop+="; client: $v"
		h[$v]=1
		v=$(grep -m1 '^RESULT ' "$f")
		v=${v#* alive=} v=${v%% *}
		[[ $v =~ ^[0-9]+$ ]] && alive=$((alive + v))
	done
	((procs)) || { fig_error conns_held "$(why srv_hold)" 0; return; }
	[[ -z $stop ]] && stop="; all asked for were opened"
	srvwhy=$(grep -m1 -iE 'refused|too many|cannot|fail' "$WORK/srv_hold.srv" | tr -d '"')
	[[ -n $srvwhy ]] && stop+="; server: ${srvwhy}"
	[[ $H_LIMIT =~ ^[0-9]+$ ]] && ((H_FDS1 + 8 >= H_LIMIT)) &&
		stop+="; server: $H_FDS1 fds open, its limit is $H_LIMIT"
	stop=${stop#; }
	fpc=n/a mpc=n/a rpc=n/a
	if ((held)); then
		fpc=$(calc "($H_FDS1 - $H_FDS0) / $held")
		rpc=$(calc "(${H_RSS1:-0} - ${H_RSS0:-0}) / $held" 1)
		[[ $H_MR0 != n/a && $H_MR1 != n/a ]] && mpc=$(calc "($H_MR1 - $H_MR0) / $held" 0)
	fi
	ok=$(met ge "$held" "$HOLD_N")
	row conns_held "$held of $HOLD_N held ($alive answered)" \
		"server: $fpc fds, $mpc B reg./conn" "$(calc "$held / $HOLD_N")" ">=$HOLD_N" "$ok"
	kv="held=$held asked=$HOLD_N alive=$alive procs=$procs open_s=$open"
	kv+=" srv_fds_per_conn=$fpc srv_reg_bytes_per_conn=$mpc srv_rss_kb_per_conn=$rpc"
	kv+=" srv_fds_before=$H_FDS0 srv_fds_held=$H_FDS1 srv_fd_limit=$H_LIMIT"
	kv+=" target=$HOLD_N op=ge met=$ok"
	bench conns_held "$kv stopped=\"$stop\""
	HOLD_STOP=$stop
}
HOLD_STOP=
conns_held

# 7. version 2 against version 1
if [[ -n ${RES[lat_v1]:-} && -n ${RES[lat_v2]:-} ]]; then
	m1=$(field lat_v1 median_us) m2=$(field lat_v2 median_us)
	g1=$(field lat_v1 rdma_version) g2=$(field lat_v2 rdma_version)
	ratio=$(calc "$m2 / $m1" 3)
	ok=$(met le "$ratio" 1.05)
	# a run that did not speak the version it was forced to measures
	# nothing of what this figure claims
	if [[ $g1 != 1 || $g2 != 2 ]]; then
		fig_error v2_null_rtt "the clients spoke versions $g1 and $g2, not 1 and 2"
	else
		row v2_null_rtt "v2: median $m2 us" "v1: median $m1 us" "$ratio" "<=1.05" "$ok"
		per_round v2_null_rtt v2_median_us "$(rounds_of lat_v2 median_us)" \
			v1_median_us "$(rounds_of lat_v1 median_us)"
		bench v2_null_rtt "v2_median_us=$m2 v1_median_us=$m1 ratio=$ratio target=1.05 op=le met=$ok rounds=$(field lat_v2 rounds)"
	fi
else
	fig_error v2_null_rtt "$(why lat_v1 lat_v2 srv_rdma)"
fi
if [[ -n ${RES[inv_on]:-} && -n ${RES[inv_off]:-} ]]; then
	# per chunked call: each READ offers one Write chunk; the counter
	# calls also holds the uncounted STATS calls around the run
	pon=$(field inv_on write_chunks) lon=$(field inv_on invalidations)
	ron=$(field inv_on remote_invalidations)
	poff=$(field inv_off write_chunks) loff=$(field inv_off invalidations)
	if ((pon == 0 || poff == 0)); then
		fig_error v2_remote_inv "no chunked calls measured ($pon and $poff)"
	else
		lpon=$(calc "$lon / $pon") lpoff=$(calc "$loff / $poff")
		rpon=$(calc "$ron / $pon")
		saved=$(calc "$lpoff - $lpon")
		ok=$(met ge "$saved" 1)
		row v2_remote_inv "v2: $lpon local, $rpon remote per call" "no remote inv.: $lpoff local per call" "-$saved" ">=1 fewer" "$ok"
		per_round v2_remote_inv invalidations "$(rounds_of inv_on invalidations)" \
			write_chunks "$(rounds_of inv_on write_chunks)" \
			invalidations_without "$(rounds_of inv_off invalidations)" \
			write_chunks_without "$(rounds_of inv_off write_chunks)"
		bench v2_remote_inv "local_per_call=$lpon remote_per_call=$rpon local_per_call_without=$lpoff saved=$saved target=1 op=ge met=$ok chunked_calls=$pon chunked_calls_without=$poff rounds=$(field inv_on rounds)"
	fi
else
	fig_error v2_remote_inv "$(why inv_on inv_off srv_rdma)"
fi

# 6. NFSv3: ours against the kernel's server, kernel client on both
# nfs_versus NAME TEST FIELD UNIT DESC
nfs_versus() {
	local name=$1 t=$2 f=$3 unit=$4 desc=$5 o k ratio ok
	if [[ -n ${RES[nfs_${t}_ours]:-} && -n ${RES[nfs_${t}_kernel]:-} ]]; then
		o=$(field nfs_${t}_ours "$f") k=$(field nfs_${t}_kernel "$f")
		ratio=$(calc "$o / $k")
		ok=$(met ge "$ratio" 0.8)
		row $name "rpcrdma-nfs3d: $o $unit" "kernel nfsd: $k $unit" "$ratio" ">=0.8" "$ok"
		per_round $name "$f" "$(rounds_of nfs_${t}_ours "$f" "$NFS_ROUNDS")" \
			"knfsd_$f" "$(rounds_of nfs_${t}_kernel "$f" "$NFS_ROUNDS")"
		bench $name "$f=$o knfsd_$f=$k ratio=$ratio target=0.8 op=ge met=$ok rounds=$(field nfs_${t}_ours rounds) desc=\"$desc\""
	else
		fig_error $name "$(why nfs nfs_ours nfs_kernel nfs_${t}_ours nfs_${t}_kernel)"
	fi
}
NFS_DESC="${NFS_MIB} MiB file, fio O_DIRECT iodepth $NFS_DEPTH"
nfs_versus nfs3_write_goodput write MiBps MiB/s "1 MiB sequential write, $NFS_DESC"
nfs_versus nfs3_read_goodput read MiBps MiB/s "1 MiB sequential read, $NFS_DESC"
nfs_versus nfs3_randread_iops rand iops IOPS "4 KiB random read, $NFS_SECS s, $NFS_DESC"
# the direct data placement behind ours: its server's counters
if [[ -s $WORK/nfs3d.stats ]]; then
	# (no process substitution: the VM has no /dev/fd)
	read -r nrc nrb nwc nwb nrp <<<"$(awk '{ for (i = 1; i < NF; i++) {
		if ($i == "read_chunks") rc += $(i + 1); if ($i == "read_bytes") rb += $(i + 1)
		if ($i == "write_chunks") wc += $(i + 1); if ($i == "write_bytes") wb += $(i + 1)
		if ($i == "reply_chunks") rp += $(i + 1) } }
		END { print rc + 0, rb + 0, wc + 0, wb + 0, rp + 0 }' "$WORK/nfs3d.stats")"
	row nfs3d_chunks "Read: $nrc chunks, $nrb B" "Write: $nwc chunks, $nwb B" "" "" ""
	bench nfs3d_chunks "read_chunks=$nrc read_bytes=$nrb write_chunks=$nwc write_bytes=$nwb reply_chunks=$nrp"
else
	fig_error nfs3d_chunks "$(why nfs_ours nfs)"
fi

# 8. Instructions per call (callgrind), per side: by object, against raw
# verbs (ib_send_lat -e, per iteration) and ECHO against NULL
# cg_kv KEY: the by-object fields of RES[KEY], then its spread
cg_kv() {
	local f out=""
	for f in librpcrdma libtirpc libc provider other total; do
		out+=" $f=$(field "$1" $f)"
	done
	printf '%s' "${out# }"
}
# cg_rounds NAME KEY: the segments' totals into the JSON
cg_rounds() {
	per_round "$1" segment_units "[$(field "$2" segments)]" segment_total "[${CG_SEG[$2]:-}]"
}
for side in client server; do
	key=cg_raw_$side
	if [[ -n ${RES[$key]:-} ]]; then
		row insn_raw_$side "$(field $key total) Ir/iteration (+-$(field $key spread_pct)%)" \
			"provider $(field $key provider), libc $(field $key libc)" "" "" ""
		cg_rounds insn_raw_$side $key
		bench insn_raw_$side "provider=$(field $key provider) libc=$(field $key libc) other=$(field $key other) total=$(field $key total) spread_pct=$(field $key spread_pct) segments=$(field $key segments) size=64"
	else
		fig_error insn_raw_$side "$(why $key cg_raw cg)"
	fi
done
for side in client server; do
	key=cg_null_$side raw=cg_raw_$side
	if [[ -n ${RES[$key]:-} ]]; then
		lib=$(field $key librpcrdma) tot=$(field $key total) sp=$(field $key spread_pct)
		ok=$(met le "$lib" 1000)
		row insn_null_$side "librpcrdma $lib, total $tot Ir (+-$sp%)" \
			"libtirpc $(field $key libtirpc), libc $(field $key libc), prov. $(field $key provider)" \
			"" "<=1000" "$ok"
		cg_rounds insn_null_$side $key
		bench insn_null_$side "$(cg_kv $key) spread_pct=$sp cq_events=$(field $key cq_events) segments=$(field $key segments) target=1000 op=le met=$ok"
		if [[ -n ${RES[$raw]:-} ]]; then
			rt=$(field $raw total)
			ratio=$(calc "$tot / $rt")
			ok=$(met le "$ratio" 2)
			row insn_null_${side}_vs_raw "total $tot Ir/call" "ib_send_lat -e: $rt Ir/iteration" \
				"$ratio" "<=2" "$ok"
			bench insn_null_${side}_vs_raw "total=$tot raw=$rt ratio=$ratio target=2 op=le met=$ok"
		else
			fig_error insn_null_${side}_vs_raw "$(why $raw cg_raw cg)"
		fi
	else
		fig_error insn_null_$side "$(why $key cg_count srv_cg cg)"
		fig_error insn_null_${side}_vs_raw "$(why $key cg_count srv_cg cg)"
	fi
	key=cg_echo_$side nul=cg_null_$side
	if [[ -n ${RES[$key]:-} && -n ${RES[$nul]:-} ]]; then
		tot=$(field $key total) nt=$(field $nul total) sp=$(field $key spread_pct)
		ratio=$(calc "$tot / $nt" 3)
		ok=$(met le "$ratio" 1.1)
		rr=n/a
		[[ -n ${RES[$raw]:-} ]] && rr=$(calc "$tot / $(field $raw total)")
		row insn_echo64_$side "librpcrdma $(field $key librpcrdma), total $tot Ir (+-$sp%)" \
			"NULL: total $nt Ir" "$ratio" "<=1.1" "$ok"
		cg_rounds insn_echo64_$side $key
		bench insn_echo64_$side "$(cg_kv $key) null_total=$nt ratio=$ratio raw_ratio=$rr spread_pct=$sp cq_events=$(field $key cq_events) segments=$(field $key segments) size=64 target=1.1 op=le met=$ok"
	else
		fig_error insn_echo64_$side "$(why $key $nul cg_count srv_cg cg)"
	fi
	# READ-shaped: the result in a Write chunk; WRITE-shaped: the argument
	# in a Read chunk
	for k in read:write_chunk write:read_chunk; do
		key=cg_${k%%:*}_$side name=insn_${k#*:}_$side
		if [[ -n ${RES[$key]:-} ]]; then
			tot=$(field $key total) sp=$(field $key spread_pct)
			rr=n/a
			[[ -n ${RES[$raw]:-} ]] && rr=$(calc "$tot / $(field $raw total)" 1)
			row $name "librpcrdma $(field $key librpcrdma), total $tot Ir (+-$sp%)" \
				"memcpy $(field $key memcpy), memset $(field $key memset)" "" "" ""
			cg_rounds $name $key
			bench $name "$(cg_kv $key) memcpy=$(field $key memcpy) memset=$(field $key memset) raw_ratio=$rr spread_pct=$sp cq_events=$(field $key cq_events) segments=$(field $key segments) size=$SIZE"
		else
			if [[ $side == client ]]; then
				fig_error $name "$(why $key cg_count srv_cg srv_cgpeer cg)"
			else
				fig_error $name "$(why $key cg_count_bulk srv_cg cg)"
			fi
		fi
	done
done

echo
echo "RPC-over-RDMA benchmark, $MODE mode: $DEV on $A, perftest -R, $ROUNDS interleaved rounds (rsockets $RS_ROUNDS), $ELAPSED s"
echo "Pinning: in the VM $PIN; vCPU threads on the host $VM_PIN."
printf '%-30s %-40s %-34s %6s %7s %s\n' figure measured reference ratio target met
printf '%s\n' "$(printf '%.0s-' {1..128})"
cat "$TABLE"
echo "Each figure: the median of its rounds.  Ratios: rdma/raw verbs; rdma/tcp and rdma/rsockets"
echo "(round-trip time, or MiB/s).  Goodput: $BULK_T call(s) outstanding on one CLIENT, MiB/s = 2^20 B/s"
echo "as perftest.  Idle connections: $IDLE, $regnote.  NFS: ratio rpcrdma-nfs3d / kernel nfsd, the"
echo "kernel client on both, $NFS_DESC, same tmpfs export.  Goodput *_mt: $MT_T calls outstanding"
echo "(threads sharing one CLIENT).  Held connections: $HOLD_PROCS client processes; stopped: ${HOLD_STOP:-n/a}."
echo "insn_*: user-space instructions (Ir) per call counted by callgrind, RPCRDMA_POLL_US=0 on both sides,"
echo "segments of $CG_N, $CG_N, $((2 * CG_N)) calls ($CG_BULK, $CG_BULK, $((2 * CG_BULK)) of 1 MiB; raw: ib_send_lat -e -s 64, $CG_RAW, $CG_RAW, $((2 * CG_RAW)) iterations):"
echo "per call = mean of (3rd - 1st) and (3rd - 2nd) over the difference of calls, +- half their difference."
echo
cat "$LINES"
if write_json "$JSON" 2>"$WORK/json.err"; then
	echo "rbench: the whole result as JSON: $JSON"
else
	echo "rbench: cannot write $JSON: $(tail -n 1 "$WORK/json.err")"
fi
if ((ERRORS)); then
	echo "rbench: $ERRORS figure(s) could not be measured"
	exit 1
fi
exit 0
