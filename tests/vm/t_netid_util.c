/*
 * t_netid_util.c - helpers of the netid tests (t_netid_util.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_netid_util.h"

static struct stat fd0;

int tn_done(const char *who)
{
	NOTE("%s", who);
	return tu_done();
}

/* ---- fd 0 ------------------------------------------------------------------- */

void tn_fd0_init(void)
{
	if (fstat(0, &fd0) < 0) {
		/* Closed: the lowest free fd, i.e. 0, gets /dev/null. */
		if (open("/dev/null", O_RDONLY) != 0 || fstat(0, &fd0) < 0) {
			perror("fd 0");
			exit(1);
		}
	}
}

/* Still the same file: libtirpc's bug closes fd 0, and the next socket
 * then takes its place. */
void tn_check_fd0(const char *after)
{
	struct stat st;
	bool same = !fstat(0, &st) && st.st_dev == fd0.st_dev &&
		    st.st_ino == fd0.st_ino;

	CHECK(same, "fd 0 still open after %s", after);
}

int tn_spare_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("/dev/null");
		exit(1);
	}
	return fd;
}

bool tn_fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* ---- The program ---------------------------------------------------------------- */

void tn_dispatch(struct svc_req *rq, SVCXPRT *x)
{
	char buf[64], *p = buf;
	int v = 0;

	switch (rq->rq_proc) {
	case NULLPROC:
		svc_sendreply(x, TN_XDR_VOID, NULL);
		return;
	case TNETID_INC:
		if (!svc_getargs(x, (xdrproc_t)xdr_int, (char *)&v)) {
			svcerr_decode(x);
			return;
		}
		v++;
		svc_sendreply(x, (xdrproc_t)xdr_int, (char *)&v);
		return;
	case TNETID_WHO:
		snprintf(buf, sizeof(buf), "%s %u",
			 x->xp_netid ? x->xp_netid : "?",
			 (unsigned int)rq->rq_vers);
		svc_sendreply(x, (xdrproc_t)xdr_wrapstring, (char *)&p);
		return;
	default:
		svcerr_noproc(x);
	}
}

/* ---- Calls ------------------------------------------------------------------------- */

bool tn_who(CLIENT *cl, char *buf, size_t len)
{
	struct timeval tv = { 20, 0 };
	enum clnt_stat st;
	char *s = NULL;

	st = clnt_call(cl, TNETID_WHO, TN_XDR_VOID, NULL,
		       (xdrproc_t)xdr_wrapstring, (char *)&s, tv);
	if (st != RPC_SUCCESS) {
		snprintf(buf, len, "%s", clnt_sperror(cl, "WHO"));
		buf[strcspn(buf, "\n")] = '\0';
		return false;
	}
	snprintf(buf, len, "%s", s);
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&s);
	return true;
}

enum clnt_stat tn_inc(CLIENT *cl, int in, int *out)
{
	struct timeval tv = { 20, 0 };

	return clnt_call(cl, TNETID_INC, (xdrproc_t)xdr_int, (char *)&in,
			 (xdrproc_t)xdr_int, (char *)out, tv);
}

static const char *createerr(void)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s", clnt_spcreateerror("error"));
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

void tn_check_client(CLIENT *cl, const char *what, const char *want)
{
	char got[256] = "";
	size_t idlen = strcspn(want, " ");
	bool ok;

	if (!cl) {
		CHECK(false, "%s: no CLIENT (%s)", what, createerr());
		return;
	}
	ok = tn_who(cl, got, sizeof(got)) && !strcmp(got, want) &&
	     cl->cl_netid && strlen(cl->cl_netid) == idlen &&
	     !strncmp(cl->cl_netid, want, idlen);
	CHECK(ok, "%s: answered by \"%s\" (want \"%s\"), cl_netid %s", what,
	      got, want, cl->cl_netid ? cl->cl_netid : "NULL");
	clnt_destroy(cl);
}

void tn_check_createerr(CLIENT *cl, const char *what, const char *want)
{
	const char *got = createerr();

	CHECK(!cl && strstr(got, want), "%s: fails with \"%s\" (%s)", what,
	      want, cl ? "a CLIENT was made" : got);
	if (cl)
		clnt_destroy(cl);
}
