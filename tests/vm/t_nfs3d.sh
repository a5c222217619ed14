#!/bin/bash
# tests/vm/t_nfs3d.sh - NFSv3 over RPC-over-RDMA with the Linux kernel, both
# directions, INSIDE the Soft-RoCE VM.  make vmcheck runs copies
# of it named after their part (tests/vm/nfs3d.am):
#
#   nfs3d-kclient4  the kernel client mounts rpcrdma-nfs3d(8) with
#                   vers=3,proto=rdma,port=20049: a file written and read
#                   back with sha256 on both sides, dd 64 MiB, 4 concurrent
#                   readers; clean unmount; the server's counters show the
#                   bulk data moved by Read chunks (WRITE) and Write chunks
#                   (READ)
#   nfs3d-kclient4-ops  the same mount: directories, READDIRPLUS, stat,
#                   rename, symbolic and hard links, chmod, truncate, df,
#                   rm -r, sync; the server restarts under the mount and the
#                   client carries on (file handles survive)
#   nfs3d-kclient6  over proto=rdma6 ([2001:db8::1]): a file written and
#                   read back, dd 8 MiB, the counters
#   nfs3d-knfsd     our NFSv3 client (tests/vm/t_nfs3k) against the kernel
#                   NFS server (nfs-kernel-server, rdma 20049), rdma and
#                   rdma6, and against rpcrdma-nfs3d the same way, with bad
#                   requests that must get NFS errors
#   nfs3d-knfsd-krb5  our NFSv3 client against the kernel NFS server with
#                   sec=krb5:krb5i:krb5p over rdma: a
#                   throw-away Kerberos realm (tests/vm/krb5.sh), the
#                   service principal nfs/HOST in a keytab, rpc.svcgssd
#                   answering the kernel's RPCSEC_GSS upcalls; t_nfs3k -k
#                   (see its header and rpcrdma-gss(7) for what works)
#
# VM_NFS3D_THREADS, if set, is the server's -t (worker threads; 0: all on
# svc_run's thread); unset, its default.
#
# One line per check; exit 0 only when all passed.  Nothing is skipped: a
# kernel client or server that cannot be set up is a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${T_NFS3D_BUILD:-$(cd "$here/../.." && pwd)}
part=${T_NFS3D_PART:-$(basename "$0")}
NFS3D=$B/examples/nfs3d/rpcrdma-nfs3d
T_NFS3K=$B/tests/vm/t_nfs3k
H4=${RDMA_ADDR4:-192.0.2.1}
H6=${RDMA_ADDR6:-2001:db8::1}
PORT=20049
W=$(mktemp -d "${TMPDIR:-/tmp}/t_nfs3d.XXXXXX")
EXP=$W/export
MNT=$W/mnt
NFSK_LOG=$W/nfs_kernel.log
# shellcheck source=tests/vm/nfs_kernel.sh
NFS_KERNEL_SH=@NFS_KERNEL_SH@	# set by tests/vm/nfs3d.am in the copies
[[ -r $NFS_KERNEL_SH ]] || NFS_KERNEL_SH=$here/nfs_kernel.sh
. "$NFS_KERNEL_SH" || { echo "t_nfs3d: cannot read $NFS_KERNEL_SH"; exit 1; }
# shellcheck source=tests/vm/krb5.sh
KRB5_SH=@KRB5_SH@	# set by tests/vm/nfs3d.am in the copies
[[ -r $KRB5_SH ]] || KRB5_SH=$here/krb5.sh
. "$KRB5_SH" || { echo "t_nfs3d: cannot read $KRB5_SH"; exit 1; }
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$here/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
failures=0
checks=0
SRV=
SVCGSSD=

# check lines end with the seconds the script has run (tests/vm/lib.sh)
check_tail() {
	lib_tail=" [${SECONDS}s]"
}

finish() {
	[[ -n $SRV ]] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	grep -q " $MNT " /proc/mounts && umount -f -l "$MNT" 2>/dev/null
	[[ $part == nfs3d-knfsd* ]] && nfsk_stop
	[[ -n $SVCGSSD ]] && kill "$SVCGSSD" 2>/dev/null && wait "$SVCGSSD" 2>/dev/null
	krb5_stop
	nfsk_rpcbind_stop
	if ((failures)); then
		echo "--- $part: server log"
		tail -n 20 "$W/srv.log" 2>/dev/null
		echo "--- $part: nfs_kernel log"
		tail -n 20 "$NFSK_LOG" 2>/dev/null
		if [[ $part == nfs3d-knfsd-krb5 ]]; then
			echo "--- $part: rpc.svcgssd log, Kerberos log"
			tail -n 20 "$W/svcgssd.log" 2>/dev/null
			tail -n 10 "$KRB5_LOG" 2>/dev/null
		fi
	fi
	echo "$part: $((checks - failures)) passed, $failures failed"
	rm -rf "$W"
	# explicit: in an EXIT trap, a bare exit keeps the status from before
	exit $((failures ? 1 : 0))
}
trap finish EXIT

sha() {
	sha256sum <"$1" 2>/dev/null | cut -d' ' -f1
}

# same_sha TEXT FILE... : every FILE has the same sha256, which is not empty
same_sha() {
	local text=$1 first f s ok=0
	shift
	first=$(sha "$1")
	[[ -n $first ]] || ok=1
	for f in "$@"; do
		s=$(sha "$f")
		[[ $s == "$first" ]] || ok=1
	done
	check $ok "$text (sha256 ${first:0:16}...)"
}

# ---- rpcrdma-nfs3d ----------------------------------------------------------

# start_nfs3d STATSFILE: the server on EXP; its "exporting" line within 30 s
start_nfs3d() {
	local i
	: >"$W/srv.log"
	# the server speaks both versions (the kernel client speaks 1), as
	# the C tests' servers do (tu_server_env)
	env -u RPCRDMA_VERSION \
		${TIRPC_RDMA_SERVER_VERSION:+RPCRDMA_VERSION=$TIRPC_RDMA_SERVER_VERSION} \
		RPCRDMA_STATS=1 RPCRDMA_STATS_FILE="$1" "$NFS3D" -p $PORT \
		${VM_NFS3D_THREADS:+-t "$VM_NFS3D_THREADS"} "$EXP" \
		>>"$W/srv.log" 2>&1 &
	SRV=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^rpcrdma-nfs3d: exporting' "$W/srv.log" && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	echo "t_nfs3d: rpcrdma-nfs3d did not start: $(tail -n 1 "$W/srv.log")"
	return 1
}

stop_nfs3d() {
	local rc
	kill "$SRV" 2>/dev/null
	wait "$SRV"
	rc=$?
	SRV=
	return $rc
}

# counter FILE ADDR NAME: the value of NAME on the listener ADDR:PORT
counter() {
	grep -F "svc $2:$PORT:" "$1" 2>/dev/null | tr ' ' '\n' |
		grep -A1 -x "$3" | tail -n 1
}

# ---- The workload -------------------------------------------------------------

# data_work MB: data through MNT, checked on the server's side (EXP) too:
# a file written and read back, dd of MB MiB.
data_work() {
	local mb=$1 m=$MNT e=$EXP
	head -c 300001 /dev/urandom >"$W/src1"
	cp "$W/src1" "$m/f1" && sync
	check $? "create and write a 300001-octet file (cp, sync)"
	same_sha "  its octets on the server and through the mount" "$W/src1" "$e/f1" "$m/f1"

	dd if=/dev/urandom of="$W/big.src" bs=1M count="$mb" status=none
	dd if="$W/big.src" of="$m/big" bs=1M conv=fsync status=none
	check $? "dd $mb MiB, 1 MiB blocks, fsync"
	# cmp, not sha256: under TCG sha256 runs at a few MB/s
	cmp -s "$W/big.src" "$e/big"
	check $? "  what the server stored is what was written (cmp)"
	nfsk_drop_caches
	same_sha "  read back over NFS after dropping the client's cache" "$W/big.src" "$m/big"
	rm -f "$m/big"
}

# readers_work: 4 readers of one file at once.
readers_work() {
	local m=$MNT i pids=
	head -c $((4 << 20)) /dev/urandom >"$W/mid.src"
	cp "$W/mid.src" "$m/mid" && sync
	nfsk_drop_caches
	for i in 1 2 3 4; do
		sha "$m/mid" >"$W/reader.$i" &
		pids+=" $!"
	done
	# shellcheck disable=SC2086 # a list of pids
	wait $pids
	cat "$W"/reader.* | sort -u >"$W/readers"
	[[ $(wc -l <"$W/readers") -eq 1 && $(cat "$W/readers") == $(sha "$W/mid.src") ]]
	check $? "4 concurrent readers of a 4 MiB file agree with its source"
	rm -f "$m/mid"
}

# ops_work: the namespace and attribute operations on small files.
ops_work() {
	local m=$MNT e=$EXP i
	head -c 300001 /dev/urandom >"$W/src1"
	cp "$W/src1" "$m/f1" && sync
	check $? "create and write a 300001-octet file (cp, sync)"
	same_sha "  its octets on the server and through the mount" "$W/src1" "$e/f1" "$m/f1"

	mkdir -p "$m/d1/d2/d3" && touch "$m/d1/d2/d3/e1" "$m/d1/d2/e2" &&
		[[ -d $e/d1/d2/d3 && -f $e/d1/d2/e2 ]]
	check $? "mkdir -p, touch: the tree exists on the server"
	for i in $(seq 1 40); do : >"$m/d1/many.$i"; done
	[[ $(ls "$m/d1" | wc -l) -eq 41 && $(ls "$e/d1" | wc -l) -eq 41 ]]
	check $? "ls of a directory of 41 entries (READDIRPLUS)"
	[[ $(stat -c %s "$m/f1") -eq 300001 && $(stat -c %i "$m/f1") -eq $(stat -c %i "$e/f1") ]]
	check $? "stat: size and inode number as on the server"

	mv "$m/f1" "$m/d1/f1.renamed" && [[ ! -e $e/f1 && -f $e/d1/f1.renamed ]]
	check $? "rename into a subdirectory"
	same_sha "  the renamed file" "$W/src1" "$m/d1/f1.renamed"

	ln -s f1.renamed "$m/d1/sym" && [[ $(readlink "$m/d1/sym") == f1.renamed &&
		$(readlink "$e/d1/sym") == f1.renamed ]]
	check $? "ln -s, readlink on both sides"
	same_sha "  reading through the symbolic link" "$W/src1" "$m/d1/sym"
	ln "$m/d1/f1.renamed" "$m/hard" && [[ $(stat -c %h "$e/hard") -eq 2 ]]
	check $? "ln (LINK): two links on the server"

	chmod 600 "$m/hard" && [[ $(stat -c %a "$e/d1/f1.renamed") == 600 ]]
	check $? "chmod 600 (SETATTR mode)"
	truncate -s 1000 "$m/hard" && [[ $(stat -c %s "$e/hard") -eq 1000 ]]
	check $? "truncate to 1000 octets (SETATTR size)"

	df -P "$m" | tail -n 1 | awk '{ exit !($2 > 0) }'
	check $? "df (FSSTAT): a size"
	rm -r "$m/d1" "$m/hard" && [[ ! -e $e/d1 && ! -e $e/hard ]]
	check $? "rm -r of the tree (REMOVE, RMDIR)"
	sync
	check $? "sync"
}

# restart_work: the server goes away and comes back under the mount
restart_work() {
	head -c 100000 /dev/urandom >"$W/keep.src"
	cp "$W/keep.src" "$MNT/keep" && sync
	stop_nfs3d
	check $? "the server stops cleanly (SIGTERM)"
	start_nfs3d "$W/stats.2"
	check $? "the server starts again"
	nfsk_drop_caches
	same_sha "after the restart, the client reads its open mount (handles survive)" \
		"$W/keep.src" "$MNT/keep"
	rm -f "$MNT/keep"
}

# ---- Parts ----------------------------------------------------------------------

# kclient NETID ADDR WORK...: mount over NETID, run each WORK (data MB,
# ops, restart), unmount; with data, the server's counters after.
kclient() {
	local netid=$1 addr=$2 mb=0 what stats=$W/stats.1 rc
	mkdir -p "$EXP" "$MNT"
	nfsk_rpcbind
	check $? "rpcbind runs"
	start_nfs3d "$stats"
	check $? "rpcrdma-nfs3d exports $EXP: $(head -n 1 "$W/srv.log")"
	[[ -n $SRV ]] || return
	timeout 5 rpcinfo -p 127.0.0.1 | grep -q '100005 *3 *tcp'
	check $? "MOUNT v3 over tcp is registered with rpcbind"
	what=$addr:$EXP
	[[ $netid == rdma6 ]] && what="[$addr]:$EXP"
	nfsk_mount "$what" "$MNT" $netid $PORT
	check $? "the kernel client mounts $what with vers=3,proto=$netid,port=$PORT"
	grep -q " $MNT nfs .*proto=$netid" /proc/mounts || return

	shift 2
	while (($#)); do
		case $1 in
		data) mb=$2; data_work "$mb"; shift ;;
		readers) readers_work ;;
		ops) ops_work ;;
		restart) restart_work ;;
		esac
		shift
	done

	nfsk_umount "$MNT"
	check $? "umount"
	stop_nfs3d
	check $? "the server stops cleanly again"

	((mb)) || return
	# counters of the first run: the large file went by chunks
	local laddr=0.0.0.0 rb wb rc_ wc
	[[ $netid == rdma6 ]] && laddr="[::]"
	rc_=$(counter "$stats" $laddr read_chunks) rb=$(counter "$stats" $laddr read_bytes)
	wc=$(counter "$stats" $laddr write_chunks) wb=$(counter "$stats" $laddr write_bytes)
	[[ -n $rb && $rc_ -ge $mb && $rb -ge $((mb << 20)) ]]
	check $? "server counters: WRITE data in Read chunks ($rc_ chunks, $rb octets >= $mb MiB) (V1-RC)"
	[[ -n $wb && $wc -ge $mb && $wb -ge $((mb << 20)) ]]
	check $? "server counters: READ data in Write chunks ($wc chunks, $wb octets >= $mb MiB) (V1-WC)"
	rc=$(counter "$stats" $laddr err_chunk)
	[[ $rc == 0 ]]
	check $? "no RDMA_ERROR sent (err_chunk ${rc:-?})"
}

knfsd() {
	local kexp=$W/kexport
	mkdir -p "$kexp" "$EXP"
	[[ -x $T_NFS3K ]]
	check $? "our NFSv3 client is built ($T_NFS3K)"
	nfsk_start "$kexp" $PORT
	check $? "the kernel NFS server exports $kexp over rdma and rdma6 port $PORT"
	# the kernel speaks version 1 only: our client negotiates (the
	# suite's RPCRDMA_VERSION left out) and must fall back to 1
	env -u RPCRDMA_VERSION "$T_NFS3K" -V 1 -a "$H4" -p $PORT -e "$kexp"
	check $? "t_nfs3k against the kernel server over rdma (negotiated down to version 1)"
	env -u RPCRDMA_VERSION "$T_NFS3K" -V 1 -a "$H6" -m "$H4" -p $PORT \
		-e "$kexp"
	check $? "t_nfs3k against the kernel server over rdma6 (negotiated down to version 1)"
	nfsk_stop
	start_nfs3d "$W/stats.3"
	check $? "rpcrdma-nfs3d exports $EXP"
	# our client in the suite's version (negotiated: 2)
	"$T_NFS3K" -B -V "${RPCRDMA_VERSION:-2}" -a "$H4" -p $PORT -e "$EXP"
	check $? "t_nfs3k against rpcrdma-nfs3d over rdma in version ${RPCRDMA_VERSION:-2}, bad requests too"
	stop_nfs3d
	check $? "rpcrdma-nfs3d stops cleanly"
}

# knfsd_krb5: t_nfs3k under RPCSEC_GSS against the kernel NFS server.
knfsd_krb5() {
	local kexp=$W/kexport sec i rc rdma_st tcp_st
	# rpc.svcgssd maps alice, who has no account here, to the export's
	# anonuid: the export must be writable by anyone
	mkdir -p "$kexp" && chmod 1777 "$kexp"
	krb5_start
	check $? "a Kerberos realm $KRB5_REALM, its KDC on 127.0.0.1:$KRB5_PORT, a ticket for $KRB5_USER"
	((failures)) && return
	krb5_admin "addprinc -randkey nfs/$KRB5_HOST" &&
		krb5_admin "ktadd -k $KRB5_DIR/nfs.keytab nfs/$KRB5_HOST"
	check $? "the service principal nfs/$KRB5_HOST in $KRB5_DIR/nfs.keytab"
	modprobe -a auth_rpcgss rpcsec_gss_krb5 >>"$NFSK_LOG" 2>&1 &&
		[[ -e /proc/net/rpc/auth.rpcsec.init/channel ]]
	check $? "the kernel's RPCSEC_GSS modules: auth_rpcgss, rpcsec_gss_krb5"
	# the kernel's legacy upcall (no gssproxy): rpc.svcgssd accepts the
	# context with the key of nfs/HOST (-p takes a Kerberos principal)
	KRB5_KTNAME=FILE:$KRB5_DIR/nfs.keytab rpc.svcgssd -f -v \
		-p "nfs/$KRB5_HOST@$KRB5_REALM" >>"$W/svcgssd.log" 2>&1 &
	SVCGSSD=$!
	# ready once it holds the upcall channel open
	for ((i = 0; i < 100; i++)); do
		ls -l "/proc/$SVCGSSD/fd" 2>/dev/null | grep -q auth.rpcsec.init && break
		kill -0 "$SVCGSSD" 2>/dev/null || break
		sleep 0.1
	done
	ls -l "/proc/$SVCGSSD/fd" 2>/dev/null | grep -q auth.rpcsec.init
	check $? "rpc.svcgssd answers the kernel's RPCSEC_GSS upcalls"
	nfsk_start "$kexp" $PORT "sec=krb5:krb5i:krb5p"
	check $? "the kernel NFS server exports $kexp with sec=krb5:krb5i:krb5p over rdma port $PORT"
	((failures)) && return
	# the kernel speaks version 1 only: our client negotiates down
	for sec in krb5 krb5i; do
		timeout 120 env -u RPCRDMA_VERSION "$T_NFS3K" -k $sec \
			-s "nfs@$KRB5_HOST" -a "$H4" -p $PORT -e "$kexp"
		check $? "t_nfs3k -k $sec against the kernel server over rdma: NULL, CREATE, WRITE 1 MiB, GETATTR, READ inline and of 1 MiB"
	done
	# krb5p: the kernel refuses libtirpc's wrapped arguments over tcp as
	# well; what matters here is that rdma ends as tcp does
	timeout 120 env -u RPCRDMA_VERSION "$T_NFS3K" -k krb5p \
		-s "nfs@$KRB5_HOST" -a "$H4" -p $PORT -e "$kexp" >"$W/krb5p.rdma"
	rc=$?
	cat "$W/krb5p.rdma"
	check $rc "t_nfs3k -k krb5p over rdma: NULL (and CREATE measured)"
	# libtirpc's clnt_vc leaks the verifier of a failed accepted Reply
	# (ours frees it, src/glue/clnt_msg.c): LeakSanitizer, in ASan
	# builds, is told so for this libtirpc-only run alone
	echo 'leak:libtirpc.so.3' >"$W/lsan.supp"
	timeout 120 env LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$W/lsan.supp" \
		"$T_NFS3K" -T -k krb5p -s "nfs@$KRB5_HOST" \
		-a "$H4" -p 2049 -e "$kexp" >"$W/krb5p.tcp"
	rc=$?
	cat "$W/krb5p.tcp"
	check $rc "t_nfs3k -T -k krb5p over tcp, libtirpc alone: NULL (and CREATE measured)"
	rdma_st=$(sed -n 's/^krb5p CREATE status: //p' "$W/krb5p.rdma")
	tcp_st=$(sed -n 's/^krb5p CREATE status: //p' "$W/krb5p.tcp")
	[[ -n $rdma_st && $rdma_st == "$tcp_st" && $rdma_st == 11 ]]
	check $? "krb5p CREATE: the kernel answers over rdma (clnt_stat ${rdma_st:-none}) as over tcp with libtirpc (${tcp_st:-none}): RPC_CANTDECODEARGS (11)"
}

echo "$part: build $B"
case $part in
nfs3d-kclient4) kclient rdma "$H4" data 64 readers ;;
nfs3d-kclient4-ops) kclient rdma "$H4" ops restart ;;
nfs3d-kclient6) kclient rdma6 "$H6" data 8 ;;
nfs3d-knfsd) knfsd ;;
nfs3d-knfsd-krb5) knfsd_krb5 ;;
*)
	echo "t_nfs3d: unknown part '$part'"
	failures=1
	;;
esac
