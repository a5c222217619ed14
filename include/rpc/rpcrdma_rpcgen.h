/*
 * rpc/rpcrdma_rpcgen.h - lets the server main that "rpcgen -5" writes
 * compile on Linux, unchanged: it is included ahead of the generated file
 * (cc -include rpc/rpcrdma_rpcgen.h -DRPC_SVC_FG, rpcrdma_netid(3)).
 * Installed with rpc/rpcrdma.h; needs nothing of librpcrdma.
 *
 * The generated main first asks whether it was started by a SysV port
 * monitor, with STREAMS ioctls on fd 0 and TLI calls; "-M" code also uses
 * Solaris thread names.  Linux has neither, so this header supplies the
 * names: the STREAMS ioctl numbers of SVR4, which no Linux file on fd 0 (a
 * tty, /dev/null, a pipe, a socket) accepts, so ioctl() fails and the
 * port-monitor branch is never taken; TLI calls that fail; pthread mutexes.
 * -DRPC_SVC_FG keeps the server in the foreground with its stderr.
 */
#ifndef _RPC_RPCRDMA_RPCGEN_H
#define _RPC_RPCRDMA_RPCGEN_H

#include <pthread.h>
#include <sys/ioctl.h>

#define FMNAMESZ 8
#define I_PUSH	 (('S' << 8) | 2)
#define I_POP	 (('S' << 8) | 3)
#define I_LOOK	 (('S' << 8) | 4)

#define T_CLTS	   3
#define T_DATAXFER 5

struct t_info {
	long addr, options, tsdu, etsdu, connect, discon, servtype, flags;
};

static inline int t_getstate(int fd)
{
	(void)fd;
	return -1;
}

static inline int t_getinfo(int fd, struct t_info *info)
{
	(void)fd;
	(void)info;
	return -1;
}

typedef pthread_mutex_t mutex_t;
#define USYNC_THREAD		 0
#define mutex_init(m, type, arg) pthread_mutex_init((m), NULL)
#define mutex_lock(m)		 pthread_mutex_lock(m)
#define mutex_unlock(m)		 pthread_mutex_unlock(m)

#endif
