/*
 * netconfig.c - netids "rdma" and "rdma6" in libtirpc's netconfig
 * functions: getnetconfigent() supplies both entries when /etc/netconfig
 * lacks them, taddr2uaddr() and uaddr2taddr() convert their addresses,
 * and the NETPATH walker used by the nettype "netpath" entry points.
 *
 * The entries look like the line rpcrdma-netconfig(5) suggests:
 *   rdma   tpi_cots_ord  -  inet   rdma  -  -
 *   rdma6  tpi_cots_ord  -  inet6  rdma  -  -
 * laid out as libtirpc's own parser does (all strings in one block that
 * starts at nc_netid, no lookups), so the stock freenetconfigent() frees
 * them.  Universal addresses use the tcp and tcp6 formats (RFC 5665):
 * "h1.h2.h3.h4.p1.p2" and "x:...:x.p1.p2".
 */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compiler.h"
#include "conf/rc_env.h"
#include "netid/rpcrdma_netid.h"

struct rdma_netid {
	const char *netid;
	int family;
	const char *protofmly;
};

static const struct rdma_netid rdma_netids[] = {
	{ "rdma", AF_INET, NC_INET },
	{ "rdma6", AF_INET6, NC_INET6 },
};

static const struct rdma_netid *find_netid(const char *netid)
{
	if (!netid)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(rdma_netids); i++)
		if (!strcmp(netid, rdma_netids[i].netid))
			return &rdma_netids[i];
	return NULL;
}

int rpcrdma_netid_family(const char *netid)
{
	const struct rdma_netid *n = find_netid(netid);

	return n ? n->family : 0;
}

int rpcrdma_nconf_family(const struct netconfig *nconf)
{
	return nconf ? rpcrdma_netid_family(nconf->nc_netid) : 0;
}

const char *rpcrdma_family_netid(int family)
{
	for (size_t i = 0; i < ARRAY_SIZE(rdma_netids); i++)
		if (rdma_netids[i].family == family)
			return rdma_netids[i].netid;
	return NULL;
}

/* ---- Entries ------------------------------------------------------------- */

struct netconfig *rpcrdma_nconf_make(const char *netid)
{
	const struct rdma_netid *n = find_netid(netid);
	size_t lid, lfam, lproto = sizeof("rdma"), ldev = sizeof("-");
	struct netconfig *nc;
	char *s;

	if (!n)
		return NULL;
	lid = strlen(n->netid) + 1;
	lfam = strlen(n->protofmly) + 1;
	nc = calloc(1, sizeof(*nc));
	s = malloc(lid + lfam + lproto + ldev);
	if (!nc || !s) {
		free(nc);
		free(s);
		return NULL;
	}
	nc->nc_netid = s; /* the block freenetconfigent() frees */
	memcpy(s, n->netid, lid);
	nc->nc_protofmly = memcpy(s + lid, n->protofmly, lfam);
	nc->nc_proto = memcpy(s + lid + lfam, "rdma", lproto);
	nc->nc_device = memcpy(s + lid + lfam + lproto, "-", ldev);
	nc->nc_semantics = NC_TPI_COTS_ORD;
	nc->nc_flag = NC_NOFLAG;
	nc->nc_nlookups = 0;
	nc->nc_lookups = NULL;
	return nc;
}

/*
 * A site's own /etc/netconfig line wins; a missing or unparsable one (e.g.
 * Solaris' "tpi_rdma") is replaced by ours, since the netid alone decides
 * how librpcrdma routes a netconfig.
 */
static struct netconfig *nconf_lookup(const char *netid)
{
	struct netconfig *nc = REAL(getnetconfigent)(netid);

	if (nc || !find_netid(netid))
		return nc;
	return rpcrdma_nconf_make(netid);
}

RPCRDMA_EXPORT struct netconfig *getnetconfigent(const char *netid)
{
	return nconf_lookup(netid);
}

/* ---- Universal addresses ---------------------------------------------------- */

static bool netbuf_sockaddr(int family, const struct netbuf *nb,
			    const void **addr, unsigned int *port)
{
	const struct sockaddr *sa = nb ? nb->buf : NULL;

	if (!sa || nb->len < sizeof(sa_family_t) || sa->sa_family != family)
		return false;
	if (family == AF_INET && nb->len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = nb->buf;

		*addr = &sin->sin_addr;
		*port = ntohs(sin->sin_port);
		return true;
	}
	if (family == AF_INET6 && nb->len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = nb->buf;

		*addr = &sin6->sin6_addr;
		*port = ntohs(sin6->sin6_port);
		return true;
	}
	return false;
}

char *rpcrdma_taddr2uaddr(int family, const struct netbuf *nb)
{
	char host[INET6_ADDRSTRLEN], *ua;
	unsigned int port;
	const void *addr;
	size_t len;

	if (!netbuf_sockaddr(family, nb, &addr, &port) ||
	    !inet_ntop(family, addr, host, sizeof(host)))
		return NULL;
	len = strlen(host) + sizeof(".255.255");
	ua = malloc(len);
	if (ua)
		snprintf(ua, len, "%s.%u.%u", host, (port >> 8) & 0xff,
			 port & 0xff);
	return ua;
}

/* The port of "ADDR.p1.p2": cuts uaddr (a copy) after ADDR. */
static bool split_port(char *ua, unsigned int *port)
{
	char *lo = strrchr(ua, '.'), *hi, *end;
	unsigned long p1, p2;

	if (!lo)
		return false;
	*lo++ = '\0';
	hi = strrchr(ua, '.');
	if (!hi)
		return false;
	*hi++ = '\0';
	p1 = strtoul(hi, &end, 10);
	if (end == hi || *end || p1 > 255)
		return false;
	p2 = strtoul(lo, &end, 10);
	if (end == lo || *end || p2 > 255)
		return false;
	*port = (unsigned int)(p1 << 8 | p2);
	return true;
}

static struct netbuf *netbuf_new(const void *sa, size_t len)
{
	struct netbuf *nb = malloc(sizeof(*nb));

	if (!nb)
		return NULL;
	nb->buf = malloc(len);
	if (!nb->buf) {
		free(nb);
		return NULL;
	}
	memcpy(nb->buf, sa, len);
	nb->len = nb->maxlen = len;
	return nb;
}

struct netbuf *rpcrdma_uaddr2taddr(int family, const char *uaddr)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct netbuf *nb = NULL;
	unsigned int port;
	char *ua;

	if (!uaddr || !(ua = strdup(uaddr)))
		return NULL;
	if (!split_port(ua, &port))
		goto out;
	if (family == AF_INET && inet_pton(AF_INET, ua, &sin.sin_addr) == 1) {
		sin.sin_port = htons(port);
		nb = netbuf_new(&sin, sizeof(sin));
	} else if (family == AF_INET6 &&
		   inet_pton(AF_INET6, ua, &sin6.sin6_addr) == 1) {
		sin6.sin6_port = htons(port);
		nb = netbuf_new(&sin6, sizeof(sin6));
	}
out:
	free(ua);
	return nb;
}

void rpcrdma_netbuf_free(struct netbuf *nb)
{
	if (nb) {
		free(nb->buf);
		free(nb);
	}
}

RPCRDMA_EXPORT char *taddr2uaddr(const struct netconfig *nconf,
				 const struct netbuf *nbuf)
{
	int family = rpcrdma_nconf_family(nconf);

	if (!family)
		return REAL(taddr2uaddr)(nconf, nbuf);
	return rpcrdma_taddr2uaddr(family, nbuf);
}

RPCRDMA_EXPORT struct netbuf *uaddr2taddr(const struct netconfig *nconf,
					  const char *uaddr)
{
	int family = rpcrdma_nconf_family(nconf);

	if (!family)
		return REAL(uaddr2taddr)(nconf, uaddr);
	return rpcrdma_uaddr2taddr(family, uaddr);
}

/* ---- NETPATH ------------------------------------------------------------------ */

bool rpcrdma_nettype_is_rdma(const char *nettype)
{
	return find_netid(nettype) != NULL;
}

static bool nettype_is_netpath(const char *nettype)
{
	return !nettype || !*nettype || !strcasecmp(nettype, "netpath");
}

/*
 * NETPATH is read with getenv(), not secure_getenv(), on purpose (rc_env.h
 * says so for it alone): libtirpc reads it with getenv() too, and the two
 * must agree on what it says.  A
 * set-user-ID program that saw no NETPATH here would hand the nettype to
 * libtirpc, whose own walk of NETPATH would then meet rdma netconfigs.
 * It names netids, not files.
 */
bool rpcrdma_netpath_has_rdma(const char *nettype)
{
	const char *np = rc_getenv("NETPATH"), *p, *end;

	if (!np || !nettype_is_netpath(nettype))
		return false;
	for (p = np; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		for (size_t i = 0; i < ARRAY_SIZE(rdma_netids); i++) {
			const char *id = rdma_netids[i].netid;

			if ((size_t)(end - p) == strlen(id) &&
			    !strncmp(p, id, end - p))
				return true;
		}
	}
	return false;
}

bool rpcrdma_netpath_begin(struct rpcrdma_netpath *np)
{
	const char *env = rc_getenv("NETPATH");

	np->list = strdup(env ? env : "");
	np->next = np->list;
	return np->list != NULL;
}

/* As libtirpc's __rpc_getconf() for NETPATH: semantics RPC can use only. */
static bool usable(const struct netconfig *nc)
{
	return nc->nc_semantics == NC_TPI_CLTS ||
	       nc->nc_semantics == NC_TPI_COTS ||
	       nc->nc_semantics == NC_TPI_COTS_ORD;
}

struct netconfig *rpcrdma_netpath_next(struct rpcrdma_netpath *np)
{
	struct netconfig *nc;
	char *id;

	while (np->next && *np->next) {
		id = np->next;
		np->next = strchrnul(id, ':');
		if (*np->next)
			*np->next++ = '\0';
		if (!*id)
			continue;
		nc = nconf_lookup(id);
		if (nc && usable(nc))
			return nc;
		if (nc)
			freenetconfigent(nc);
	}
	return NULL;
}

void rpcrdma_netpath_end(struct rpcrdma_netpath *np)
{
	free(np->list);
	np->list = np->next = NULL;
}
