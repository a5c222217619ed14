#!/bin/bash
# tests/vm/t_nfs41cb.sh - NFSv4.1 callbacks from the Linux kernel NFS
# server over RPC-over-RDMA, INSIDE the Soft-RoCE VM.  make
# vmcheck runs a copy named tests/vm/nfs41cb (tests/vm/nfs41cb.am).
#
# It starts the kernel server (nfs41_kernel.sh: NFSv4.x, rdma 20049,
# export on a tmpfs), mounts it with the kernel NFS client (vers=4.1 over
# rdma: the second client, whose write recalls the delegation), runs
# tests/vm/t_nfs41cb (our client; it owns every protocol check), then
# unmounts and stops the server.  One line per check; exit 0 only when
# all passed.  Nothing is skipped: a kernel server or client that cannot
# be set up is a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${T_NFS41CB_BUILD:-$(cd "$here/../.." && pwd)}
T=$B/tests/vm/t_nfs41cb
H4=${RDMA_ADDR4:-192.0.2.1}
PORT=20049
W=$(mktemp -d "${TMPDIR:-/tmp}/t_nfs41cb.XXXXXX")
EXP=$W/export
MNT=$W/mnt
NFS41K_LOG=$W/nfs41_kernel.log
# shellcheck source=tests/vm/nfs41_kernel.sh
NFS41_KERNEL_SH=@NFS41_KERNEL_SH@	# set by tests/vm/nfs41cb.am in the copy
[[ -r $NFS41_KERNEL_SH ]] || NFS41_KERNEL_SH=$here/nfs41_kernel.sh
. "$NFS41_KERNEL_SH" || { echo "FAIL - cannot read $NFS41_KERNEL_SH"; exit 1; }
VM_LIB_SH=@VM_LIB_SH@	# the copies in the build tree name it (tests/vm/vm.am)
[ -r "$VM_LIB_SH" ] || VM_LIB_SH=$here/lib.sh
# shellcheck source=tests/vm/lib.sh
. "$VM_LIB_SH"
failures=0
started=
# the rpcbind of the test before, if any: ours must not stay behind
rpcbind_before=$(pidof rpcbind)

# check lines end with the seconds the script has run (tests/vm/lib.sh)
check_tail() {
	lib_tail=" [${SECONDS}s]"
}

finish() {
	if grep -q " $MNT " /proc/mounts; then
		nfs41k_umount "$MNT"
		check $? "the kernel client unmounts"
	fi
	if [[ -n $started ]]; then
		nfs41k_stop
		grep -qs rdma /proc/fs/nfsd/portlist
		check $((!$?)) "the kernel server stopped (no rdma listener left)"
	fi
	[[ $(pidof rpcbind) == "$rpcbind_before" ]]
	check $? "no rpcbind started or stopped (before: '$rpcbind_before', after: '$(pidof rpcbind)')"
	if ((failures)); then
		echo "--- nfs41cb: nfs41_kernel log"
		tail -n 20 "$NFS41K_LOG" 2>/dev/null
		echo "--- nfs41cb: dmesg"
		dmesg | tail -n 15
	fi
	rm -rf "$W"
	echo "nfs41cb: $failures failure(s) in the wrapper"
	# explicit: in an EXIT trap, a bare exit keeps the status from before
	exit $((failures ? 1 : 0))
}
trap finish EXIT

mkdir -p "$EXP" "$MNT"
echo "# kernel $(uname -r)"
started=1
nfs41k_start "$EXP" "$PORT"
check $? "the kernel NFS server: NFSv4.1 on rdma port $PORT, export $EXP"
((failures)) && exit 1
nfs41k_mount "$H4:/" "$MNT" rdma "$PORT"
check $? "the kernel NFS client mounts $H4:/ with vers=4.1,proto=rdma"
((failures)) && exit 1
"$T" "$EXP" "$MNT" "$PORT"
check $? "t_nfs41cb: our NFSv4.1 client and its callbacks"
