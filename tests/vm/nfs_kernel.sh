# tests/vm/nfs_kernel.sh - shell functions (sourced, bash) that run the
# Linux kernel's NFS server in the Soft-RoCE VM and mount NFS over RDMA,
# for the NFSv3 tests (tests/vm/t_nfs3d.sh) and the NFS figures of the
# RDMA benchmark (tests/bench/rbench.sh).  Every step has a deadline; a
# function that fails says why on standard error and returns non-zero:
# callers fail, never skip.
#
# Needs, from the host (tests/vm/run's PACKAGES): nfs-kernel-server,
# nfs-common, rpcbind; writable /var/lib/nfs (tests/vm/init).

NFSK_LOG=${NFSK_LOG:-/tmp/nfs_kernel.log}

nfsk_say() {
	echo "nfs_kernel: $*" >&2
}

# rpcbind answering on this host, started if it is not (then
# nfsk_rpcbind_stop stops it: the VM tests that follow start their own).
nfsk_rpcbind() {
	local i
	timeout 5 rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
	mkdir -p /run/rpcbind
	rpcbind -w >>"$NFSK_LOG" 2>&1 || { nfsk_say "rpcbind failed"; return 1; }
	NFSK_RPCBIND=1
	for ((i = 0; i < 50; i++)); do
		timeout 5 rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	nfsk_say "rpcbind does not answer"
	return 1
}

# nfsk_start EXPORT [RDMA_PORT [OPTIONS]]: the kernel server exports
# EXPORT (rw, no_root_squash, fsid=1, and ",OPTIONS" if given: sec=krb5,
# say) over NFSv3 on tcp and on rdma/rdma6 RDMA_PORT (default 20049), with
# rpc.mountd registered with rpcbind; READ and WRITE up to 1 MiB.
nfsk_start() {
	local exp=$1 port=${2:-20049} extra=${3:+,$3} t i
	for t in exportfs rpc.nfsd rpc.mountd; do
		command -v $t >/dev/null || {
			nfsk_say "$t not installed (Debian nfs-kernel-server)"
			return 1
		}
	done
	[[ -w /var/lib/nfs ]] || { nfsk_say "/var/lib/nfs is not writable"; return 1; }
	nfsk_rpcbind || return 1
	modprobe -a nfsd rpcrdma >>"$NFSK_LOG" 2>&1
	if ! grep -q ' /proc/fs/nfsd ' /proc/mounts; then
		mount -t nfsd nfsd /proc/fs/nfsd >>"$NFSK_LOG" 2>&1 ||
			{ nfsk_say "cannot mount /proc/fs/nfsd"; return 1; }
	fi
	: >/var/lib/nfs/etab
	: >/var/lib/nfs/rmtab
	# 1 MiB READ and WRITE, as rpcrdma-nfs3d (the default follows the
	# memory size: 256 KiB in the 2 GiB VM); only before nfsd starts
	echo 1048576 >/proc/fs/nfsd/max_block_size 2>>"$NFSK_LOG"
	echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
	echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
	timeout 20 exportfs -i -o rw,insecure,no_root_squash,no_subtree_check,fsid=1$extra \
		"*:$exp" >>"$NFSK_LOG" 2>&1 || { nfsk_say "exportfs $exp failed"; return 1; }
	rpc.mountd -F >>"$NFSK_LOG" 2>&1 &
	NFSK_MOUNTD=$!
	timeout 30 rpc.nfsd 8 >>"$NFSK_LOG" 2>&1 || { nfsk_say "rpc.nfsd failed"; return 1; }
	echo "rdma $port" >/proc/fs/nfsd/portlist 2>>"$NFSK_LOG" ||
		{ nfsk_say "cannot open rdma port $port (/proc/fs/nfsd/portlist)"; return 1; }
	grep -q "rdma.*$port" /proc/fs/nfsd/portlist ||
		{ nfsk_say "no rdma listener in /proc/fs/nfsd/portlist"; return 1; }
	# rpc.mountd registers in the background: a client that asks before
	# gets "Program not registered"
	for ((i = 0; i < 100; i++)); do
		timeout 5 rpcinfo -T tcp 127.0.0.1 100005 3 >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	nfsk_say "rpc.mountd did not register MOUNT v3 over tcp with rpcbind within 20 s"
	return 1
}

nfsk_rpcbind_stop() {
	local i
	[[ -n ${NFSK_RPCBIND:-} ]] || return 0
	NFSK_RPCBIND=
	pkill -x rpcbind
	for ((i = 0; i < 50; i++)); do
		pgrep -x rpcbind >/dev/null || break
		sleep 0.1
	done
	pkill -9 -x rpcbind
	rm -f /run/rpcbind.sock /run/rpcbind.lock
	return 0
}

nfsk_stop() {
	timeout 30 rpc.nfsd 0 >>"$NFSK_LOG" 2>&1
	timeout 10 exportfs -ua >>"$NFSK_LOG" 2>&1
	[[ -n ${NFSK_MOUNTD:-} ]] && kill "$NFSK_MOUNTD" 2>/dev/null
	NFSK_MOUNTD=
	timeout 5 rpcinfo -d 100005 3 >/dev/null 2>&1
	timeout 5 rpcinfo -d 100005 1 >/dev/null 2>&1
	timeout 5 rpcinfo -d 100005 2 >/dev/null 2>&1
	return 0
}

# nfsk_mount SERVER:PATH MNT NETID PORT [OPTIONS]: NFSv3 over RDMA, within
# 60 s (NETID rdma or rdma6; an IPv6 server in brackets).
nfsk_mount() {
	local what=$1 mnt=$2 netid=$3 port=$4 extra=${5:-}
	mkdir -p "$mnt"
	timeout 60 mount -t nfs -o "vers=3,proto=$netid,port=$port,nolock$extra" \
		"$what" "$mnt" >>"$NFSK_LOG" 2>&1 && return 0
	nfsk_say "mount -o vers=3,proto=$netid,port=$port $what failed: $(tail -n 1 "$NFSK_LOG")"
	return 1
}

nfsk_umount() {
	timeout 60 umount "$1" >>"$NFSK_LOG" 2>&1 && return 0
	nfsk_say "umount $1 failed: $(tail -n 1 "$NFSK_LOG")"
	timeout 30 umount -f -l "$1" >/dev/null 2>&1
	return 1
}

# Drop the client's page cache, so that what is read next goes over NFS.
nfsk_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
