/*
 * nfs3d_main.c - rpcrdma-nfs3d(8): an NFS version 3 server over
 * RPC-over-RDMA, built with rpcgen from RFC 1813's XDR (nfs3_prot.x) and
 * librpcrdma, that the Linux kernel client mounts with
 * "-o vers=3,proto=rdma,port=20049".
 *
 * It owns the process: options, the exported directory, the listeners -
 * NFS program 100003 version 3 on RDMA (netids rdma and rdma6, port 20049
 * by default, not registered with rpcbind, as RPC-over-RDMA services are
 * by convention) and MOUNT program 100005 version 3 on TCP and TCP6
 * (registered with rpcbind, where mount.nfs looks for it, unless -R) -
 * and one svc_run() loop on one thread, which hands READ, WRITE and COMMIT
 * to the worker threads of nfs3d_pool.c (-t).  SIGTERM and SIGINT end
 * svc_run through a signalfd SVCXPRT; the workers answer what is queued
 * and are joined, then everything is unregistered and freed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netconfig.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "nfs3d.h"
#include "tests/vm/t_sig_xprt.h"

#define NFS_RDMA_PORT 20049
/* Worker threads by default, and calls queued for them at most (more are
 * served inline). */
#define DEFAULT_THREADS 4
#define QUEUE_MAX	256

int nfs3d_verbose;

struct opts {
	const char *export;
	const char *addr; /* NULL: both wildcards */
	unsigned long port;
	unsigned long mount_port; /* 0: any */
	bool no_rpcbind;
	bool read_only;
	unsigned long threads; /* 0 or 1: everything on svc_run's thread */
	struct rpcrdma_attr attr;
};

static void usage(void)
{
	fprintf(stderr, "usage: rpcrdma-nfs3d [-rRv] [-a ADDR] [-p PORT] "
			"[-m MOUNTPORT] [-c CREDITS] [-t THREADS] "
			"DIRECTORY\n");
	exit(2);
}

static unsigned long number(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		usage();
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->port = NFS_RDMA_PORT;
	o->threads = DEFAULT_THREADS;
	rpcrdma_attr_init(&o->attr);
	while ((c = getopt(argc, argv, "a:c:m:p:rRt:v")) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'c':
			o->attr.credits = (unsigned int)number(optarg, 4096);
			break;
		case 'm':
			o->mount_port = number(optarg, 65535);
			break;
		case 'p':
			o->port = number(optarg, 65535);
			break;
		case 'r':
			o->read_only = true;
			break;
		case 'R':
			o->no_rpcbind = true;
			break;
		case 't':
			o->threads = number(optarg, 256);
			break;
		case 'v':
			nfs3d_verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	o->export = argv[optind];
}

/* ---- NFS over RDMA ------------------------------------------------------- */

static const char *const proc_names[] = {
	"NULL",	  "GETATTR", "SETATTR",	 "LOOKUP", "ACCESS",  "READLINK",
	"READ",	  "WRITE",   "CREATE",	 "MKDIR",  "SYMLINK", "MKNOD",
	"REMOVE", "RMDIR",   "RENAME",	 "LINK",   "READDIR", "READDIRPLUS",
	"FSSTAT", "FSINFO",  "PATHCONF", "COMMIT",
};

static void nfs_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	if (nfs3d_verbose)
		fprintf(stderr, "rpcrdma-nfs3d: %s (%s)\n",
			rq->rq_proc < sizeof(proc_names) /
						sizeof(proc_names[0]) ?
				proc_names[rq->rq_proc] :
				"?",
			x->xp_netid);
	if (!nfs3d_pool_submit(rq, x))
		nfs_program_3(rq, x);
}

/* One RDMA listener on addr (numeric) or the wildcard of family. */
static SVCXPRT *rdma_listen(int family, const char *addr, unsigned int port,
			    const struct rpcrdma_attr *attr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	SVCXPRT *x;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		s4->sin_port = htons(port);
		if (addr && inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return NULL;
	} else {
		s6->sin6_port = htons(port);
		if (addr && inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return NULL;
	}
	x = svc_rdma_create((struct sockaddr *)&ss, attr);
	/* no netconfig: RPC-over-RDMA services are not registered */
	if (x && !svc_reg(x, NFS_PROGRAM, NFS_V3, nfs_dispatch, NULL)) {
		svc_destroy(x);
		x = NULL;
	}
	return x;
}

/* ---- MOUNT over TCP --------------------------------------------------- */

/* A listening TCP socket of family on port (0: any); -1 with errno. */
static int tcp_socket(int family, unsigned int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		len = sizeof(struct sockaddr_in6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static unsigned int sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return ntohs(ss.ss_family == AF_INET6 ?
			     ((struct sockaddr_in6 *)&ss)->sin6_port :
			     ((struct sockaddr_in *)&ss)->sin_port);
}

/* MOUNT v3 on netid ("tcp" or "tcp6"); its port in *port. */
static SVCXPRT *mount_listen(const char *netid, unsigned int *port,
			     bool rpcbind)
{
	struct netconfig *nc = getnetconfigent(netid);
	SVCXPRT *x = NULL;
	int fd;

	if (!nc)
		return NULL;
	fd = tcp_socket(!strcmp(netid, "tcp6") ? AF_INET6 : AF_INET, *port);
	if (fd >= 0)
		x = svc_tli_create(fd, nc, NULL, 0, 0);
	if (!x) {
		if (fd >= 0)
			close(fd);
		freenetconfigent(nc);
		return NULL;
	}
	*port = sock_port(fd);
	if (rpcbind)
		rpcb_unset(MOUNT_PROGRAM, MOUNT_V3, nc);
	if (!svc_reg(x, MOUNT_PROGRAM, MOUNT_V3, mount_program_3,
		     rpcbind ? nc : NULL)) {
		fprintf(stderr,
			"rpcrdma-nfs3d: cannot register MOUNT over "
			"%s%s\n",
			netid, rpcbind ? " with rpcbind" : "");
		svc_destroy(x);
		x = NULL;
	}
	freenetconfigent(nc);
	return x;
}

/* ---- main -------------------------------------------------------------- */

struct xprts {
	SVCXPRT *rdma4, *rdma6, *mnt4, *mnt6, *sig;
};

static bool start(const struct opts *o, struct xprts *x)
{
	unsigned int mport = (unsigned int)o->mount_port;
	bool want4 = !o->addr || !strchr(o->addr, ':');
	bool want6 = !o->addr || strchr(o->addr, ':');

	if (want4)
		x->rdma4 = rdma_listen(AF_INET, o->addr, (unsigned int)o->port,
				       &o->attr);
	if (want6)
		x->rdma6 = rdma_listen(AF_INET6, o->addr, (unsigned int)o->port,
				       &o->attr);
	if ((want4 && !x->rdma4 && o->addr) ||
	    (want6 && !x->rdma6 && o->addr) || (!x->rdma4 && !x->rdma6)) {
		fprintf(stderr,
			"rpcrdma-nfs3d: cannot listen for NFS over "
			"RDMA on port %lu\n",
			o->port);
		return false;
	}
	x->mnt4 = mount_listen("tcp", &mport, !o->no_rpcbind);
	x->mnt6 = mount_listen("tcp6", &mport, !o->no_rpcbind);
	if (!x->mnt4) {
		fprintf(stderr,
			"rpcrdma-nfs3d: cannot serve MOUNT over TCP "
			"(port %u)\n",
			mport);
		return false;
	}
	printf("rpcrdma-nfs3d: exporting %s: NFSv3 over%s%s port %lu, "
	       "MOUNT v3 over tcp%s port %u%s, %lu worker thread(s)\n",
	       nfs3d_exp.path, x->rdma4 ? " rdma" : "",
	       x->rdma6 ? " rdma6" : "", o->port, x->mnt6 ? " tcp6" : "", mport,
	       o->no_rpcbind ? "" : " (rpcbind)",
	       o->threads < 2 ? 0 : o->threads);
	fflush(stdout);
	return true;
}

static void stop(const struct opts *o, struct xprts *x)
{
	if (!o->no_rpcbind)
		svc_unreg(MOUNT_PROGRAM, MOUNT_V3);
	if (x->mnt6)
		svc_destroy(x->mnt6);
	if (x->mnt4)
		svc_destroy(x->mnt4);
	/* each destroys the connections it accepted */
	if (x->rdma6)
		svc_destroy(x->rdma6);
	if (x->rdma4)
		svc_destroy(x->rdma4);
	if (x->sig)
		svc_destroy(x->sig);
}

int main(int argc, char **argv)
{
	struct xprts x = { 0 };
	struct opts o;
	int rc = 0;

	parse(argc, argv, &o);
	/* the client applies its umask; modes arrive as meant */
	umask(0);
	signal(SIGPIPE, SIG_IGN);
	if (!nfs3d_export_open(o.export, o.read_only))
		return 1;
	x.sig = t_sig_xprt();
	if (!x.sig || !nfs3d_pool_start((unsigned int)o.threads, QUEUE_MAX) ||
	    !start(&o, &x))
		rc = 1;
	else
		svc_run();
	/* queued calls are answered while their connections exist */
	nfs3d_pool_stop();
	stop(&o, &x);
	close(nfs3d_exp.root_fd);
	free((char *)nfs3d_exp.path);
	return rc;
}
