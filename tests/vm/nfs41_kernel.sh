# tests/vm/nfs41_kernel.sh - shell functions (sourced, bash) that run the
# Linux kernel's NFS server for NFSv4.1 in the Soft-RoCE VM and mount it
# with the kernel client, for tests/vm/t_nfs41cb.sh.  Every
# step has a deadline; a function that fails says why on standard error
# and returns non-zero: callers fail, never skip.
#
# Adapted from nfs_kernel.sh of the NFSv3 work: the same
# exportfs/rpc.mountd/rpc.nfsd sequence, but an NFSv4-only server: the
# export is the NFSv4 root (fsid=0); NFSv3 is off, so there is no lockd
# (whose own grace period would hold back delegations) and no rpcbind
# (NFSv4 needs none: rpc.mountd only answers nfsd's export queries, and
# an rpcbind left running would serve stale registrations to the VM
# tests that run their own); the grace period is ended at once and the
# lease is 10 s.
#
# Needs, from the host (tests/vm/run's PACKAGES): nfs-kernel-server,
# nfs-common; writable /var/lib/nfs (tests/vm/init).

NFS41K_LOG=${NFS41K_LOG:-/tmp/nfs41_kernel.log}

nfs41k_say() {
	echo "nfs41_kernel: $*" >&2
}

# nfs41k_start EXPORT [RDMA_PORT]: the kernel server exports EXPORT as the
# NFSv4 root (rw, no_root_squash, fsid=0), NFSv4.x only, on tcp and on
# rdma/rdma6 RDMA_PORT (default 20049), grace period over, lease 10 s.
# Whatever was running before (an rpcbind of another test) is left alone.
nfs41k_start() {
	local exp=$1 port=${2:-20049} t
	for t in exportfs rpc.nfsd rpc.mountd; do
		command -v $t >/dev/null || {
			nfs41k_say "$t not installed (Debian nfs-kernel-server)"
			return 1
		}
	done
	[[ -w /var/lib/nfs ]] || { nfs41k_say "/var/lib/nfs is not writable"; return 1; }
	modprobe -a nfsd rpcrdma >>"$NFS41K_LOG" 2>&1
	if ! grep -q ' /proc/fs/nfsd ' /proc/mounts; then
		mount -t nfsd nfsd /proc/fs/nfsd >>"$NFS41K_LOG" 2>&1 ||
			{ nfs41k_say "cannot mount /proc/fs/nfsd"; return 1; }
	fi
	: >/var/lib/nfs/etab
	: >/var/lib/nfs/rmtab
	# client tracking in its plain form (a directory per client): without
	# any, nfsd refuses to end its grace period early (v4_end_grace)
	mkdir -p /var/lib/nfs/v4recovery
	# only before nfsd starts
	echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>>"$NFS41K_LOG"
	echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>>"$NFS41K_LOG"
	timeout 20 exportfs -i -o rw,insecure,no_root_squash,no_subtree_check,fsid=0 \
		"*:$exp" >>"$NFS41K_LOG" 2>&1 || { nfs41k_say "exportfs $exp failed"; return 1; }
	# no MOUNT protocol (NFSv2/v3 only): no listener, no rpcbind
	rpc.mountd -F -N 2 -N 3 >>"$NFS41K_LOG" 2>&1 &
	NFS41K_MOUNTD=$!
	timeout 30 rpc.nfsd -N 3 8 >>"$NFS41K_LOG" 2>&1 ||
		{ nfs41k_say "rpc.nfsd failed"; return 1; }
	grep -q '+4.1' /proc/fs/nfsd/versions ||
		{ nfs41k_say "nfsd does not speak 4.1: $(cat /proc/fs/nfsd/versions)"; return 1; }
	echo "rdma $port" >/proc/fs/nfsd/portlist 2>>"$NFS41K_LOG" ||
		{ nfs41k_say "cannot open rdma port $port (/proc/fs/nfsd/portlist)"; return 1; }
	grep -q "rdma.*$port" /proc/fs/nfsd/portlist ||
		{ nfs41k_say "no rdma listener in /proc/fs/nfsd/portlist"; return 1; }
	# nobody has state to reclaim: OPENs and delegations need not wait
	# (EBUSY once it has ended by itself; if it does not end, OPEN gets
	# NFS4ERR_GRACE for 10 s and retries)
	echo Y >/proc/fs/nfsd/v4_end_grace 2>>"$NFS41K_LOG"
	[[ $(cat /proc/fs/nfsd/v4_end_grace 2>/dev/null) == Y ]] ||
		nfs41k_say "note: the grace period goes on (v4_end_grace)"
	return 0
}

nfs41k_stop() {
	timeout 30 rpc.nfsd 0 >>"$NFS41K_LOG" 2>&1
	timeout 10 exportfs -ua >>"$NFS41K_LOG" 2>&1
	[[ -n ${NFS41K_MOUNTD:-} ]] && kill "$NFS41K_MOUNTD" 2>/dev/null
	NFS41K_MOUNTD=
	return 0
}

# nfs41k_mount SERVER:PATH MNT NETID PORT: NFSv4.1 over NETID (rdma, rdma6,
# tcp), within 60 s.
nfs41k_mount() {
	local what=$1 mnt=$2 netid=$3 port=$4
	mkdir -p "$mnt"
	timeout 60 mount -t nfs -o "vers=4.1,proto=$netid,port=$port" \
		"$what" "$mnt" >>"$NFS41K_LOG" 2>&1 && return 0
	nfs41k_say "mount -o vers=4.1,proto=$netid,port=$port $what failed: $(tail -n 1 "$NFS41K_LOG")"
	return 1
}

nfs41k_umount() {
	timeout 60 umount "$1" >>"$NFS41K_LOG" 2>&1 && return 0
	nfs41k_say "umount $1 failed: $(tail -n 1 "$NFS41K_LOG")"
	timeout 30 umount -f -l "$1" >/dev/null 2>&1
	return 1
}
