/*
 * rdemo_client.c - a client of the example program (rdemo.x) written the
 * way any rpcgen client is: clnt_create() and the generated stubs.  The
 * nettype decides the transport: "rdma" or "rdma6" for RPC-over-RDMA,
 * "netpath" for the first transport of $NETPATH that works (NETPATH=rdma:tcp),
 * "tcp" as always.  Nothing else here knows about RDMA.
 *
 * usage: rdemo_client HOST [NETTYPE [MIB]]
 *
 * Calls every procedure - the DIGEST argument is MIB MiB (default 8) -
 * checks every result and says what happened; exit status 1 if any call
 * failed or returned a wrong result.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdemo.h"

#define SUM_N	  100000
#define FILL_LEN  (512 * 1024)
#define FILL_SEED 7

static int failures;

static void report(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void report(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("  %-4s ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static bool call_ok(CLIENT *cl, enum clnt_stat st, const char *what)
{
	if (st == RPC_SUCCESS)
		return true;
	report(false, "%s: %s", what, clnt_sperror(cl, "call failed"));
	return false;
}

static uint32_t fnv1a(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

static void do_null(CLIENT *cl)
{
	if (call_ok(cl, rdemo_null_1(NULL, NULL, cl), "NULL"))
		report(true, "NULL    round trip");
}

static void do_echo(CLIENT *cl)
{
	rdemo_str in = "hello over RPC-over-RDMA", out = NULL;

	if (!call_ok(cl, rdemo_echo_1(&in, &out, cl), "ECHO"))
		return;
	report(out && !strcmp(in, out),
	       "ECHO    \"%s\" (%zu bytes) came back %s", in, strlen(in),
	       out && !strcmp(in, out) ? "unchanged" : "DIFFERENT");
	xdr_free((xdrproc_t)xdr_rdemo_str, (char *)&out);
}

static void do_sum(CLIENT *cl)
{
	rdemo_ints in = { .rdemo_ints_len = SUM_N };
	quad_t want = (quad_t)SUM_N * (SUM_N + 1) / 2, got = 0;

	in.rdemo_ints_val = malloc(SUM_N * sizeof(int));
	if (!in.rdemo_ints_val) {
		report(false, "SUM: out of memory");
		return;
	}
	for (int i = 0; i < SUM_N; i++)
		in.rdemo_ints_val[i] = i + 1;
	if (call_ok(cl, rdemo_sum_1(&in, &got, cl), "SUM"))
		report(got == want,
		       "SUM     1..%d (%zu bytes of ints) = %lld (want %lld)",
		       SUM_N, SUM_N * sizeof(int), (long long)got,
		       (long long)want);
	free(in.rdemo_ints_val);
}

static void do_digest(CLIENT *cl, size_t len)
{
	rdemo_data in = { .rdemo_data_len = len };
	rdemo_digest got = { 0, 0 };
	uint32_t want;

	in.rdemo_data_val = malloc(len ? len : 1);
	if (!in.rdemo_data_val) {
		report(false, "DIGEST: out of memory");
		return;
	}
	for (size_t i = 0; i < len; i++)
		in.rdemo_data_val[i] = (char)(i * 7 + (i >> 12));
	want = fnv1a(in.rdemo_data_val, len);
	if (call_ok(cl, rdemo_digest_1(&in, &got, cl), "DIGEST"))
		report(got.len == len && got.fnv == want,
		       "DIGEST  %zu bytes of opaque sent; server counted %u, "
		       "checksum 0x%08x (want 0x%08x)",
		       len, got.len, got.fnv, want);
	free(in.rdemo_data_val);
}

static void do_fill(CLIENT *cl)
{
	rdemo_fill_args in = { .len = FILL_LEN, .seed = FILL_SEED };
	rdemo_data out = { 0, NULL };
	size_t bad = 0;

	if (!call_ok(cl, rdemo_fill_1(&in, &out, cl), "FILL"))
		return;
	for (u_int i = 0; i < out.rdemo_data_len; i++)
		bad += out.rdemo_data_val[i] != (char)(FILL_SEED + 131u * i);
	report(out.rdemo_data_len == FILL_LEN && !bad,
	       "FILL    reply of %u bytes (far beyond the 4 KiB inline "
	       "threshold): %s",
	       out.rdemo_data_len, bad ? "WRONG BYTES" : "every byte verified");
	xdr_free((xdrproc_t)xdr_rdemo_data, (char *)&out);
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : NULL;
	const char *nettype = argc > 2 ? argv[2] : "rdma";
	size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 8;
	struct timeval slow = { 60, 0 }; /* emulated RDMA is slow */
	char netid[16];
	CLIENT *cl;

	if (!host || mib > 8) {
		fprintf(stderr, "usage: %s HOST [NETTYPE [MIB (at most 8)]]\n",
			argv[0]);
		return 2;
	}
	cl = clnt_create(host, RDEMO_PROG, RDEMO_VERS, nettype);
	if (!cl) {
		clnt_pcreateerror(host);
		return 1;
	}
	clnt_control(cl, CLSET_TIMEOUT, (char *)&slow);
	snprintf(netid, sizeof(netid), "%s", cl->cl_netid ? cl->cl_netid : "?");
	printf("clnt_create(\"%s\", RDEMO_PROG, RDEMO_VERS, \"%s\"): connected over %s\n",
	       host, nettype, netid);
	do_null(cl);
	do_echo(cl);
	do_sum(cl);
	do_digest(cl, mib << 20);
	do_fill(cl);
	clnt_destroy(cl);
	printf("%s: 5 calls over %s, %s\n",
	       strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0],
	       netid, failures ? "SOME FAILED" : "all results verified");
	return failures ? 1 : 0;
}
