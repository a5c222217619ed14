/*
 * prog_client.c - calls prog.x's procedures over the netid it is given
 * (tools/debcheck): clnt_create(host, PROG, VERS, netid), the rpcgen stubs,
 * every result checked.  Prints one line per call; exits 0 only when all
 * were right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#define SUM_LEN	 (256u * 1024)
#define FILL_LEN (128u * 1024)

/*
 * The octets both sides expect, a hash of their position so that data out
 * of place shows, and their checksum (FNV-1a).
 */
static char prog_octet(unsigned int i)
{
	return (char)((i * 2654435761u) >> 24);
}

static unsigned int prog_sum(const unsigned char *data, unsigned int len)
{
	unsigned int sum = 2166136261u, i;

	for (i = 0; i < len; i++)
		sum = (sum ^ data[i]) * 16777619u;
	return sum;
}

static int check_echo(CLIENT *clnt)
{
	text arg = "hello over RDMA";
	text *result = echo_1(&arg, clnt);

	if (!result) {
		clnt_perror(clnt, "ECHO");
		return 1;
	}
	if (strcmp(*result, arg) != 0) {
		printf("ECHO: got \"%s\", sent \"%s\"\n", *result, arg);
		return 1;
	}
	printf("ECHO: \"%s\" came back\n", *result);
	return 0;
}

static int check_sum(CLIENT *clnt)
{
	unsigned char *data = malloc(SUM_LEN);
	unsigned int *result, want, i;
	blob arg;

	if (!data)
		return 1;
	for (i = 0; i < SUM_LEN; i++)
		data[i] = (unsigned char)prog_octet(i);
	want = prog_sum(data, SUM_LEN);
	arg.blob_len = SUM_LEN;
	arg.blob_val = (char *)data;
	result = sum_1(&arg, clnt);
	free(data);
	if (!result) {
		clnt_perror(clnt, "SUM");
		return 1;
	}
	if (*result != want) {
		printf("SUM: server's checksum %08x, %08x expected\n", *result,
		       want);
		return 1;
	}
	printf("SUM: %u octets, checksum %08x as sent\n", SUM_LEN, *result);
	return 0;
}

static int check_fill(CLIENT *clnt)
{
	unsigned int len = FILL_LEN, i;
	blob *result = fill_1(&len, clnt);

	if (!result) {
		clnt_perror(clnt, "FILL");
		return 1;
	}
	if (result->blob_len != FILL_LEN) {
		printf("FILL: %u octets, %u asked\n", result->blob_len, len);
		return 1;
	}
	for (i = 0; i < FILL_LEN; i++) {
		if (result->blob_val[i] != prog_octet(i)) {
			printf("FILL: octet %u is wrong\n", i);
			return 1;
		}
	}
	printf("FILL: %u octets, each as the server wrote it\n", len);
	return 0;
}

int main(int argc, char **argv)
{
	CLIENT *clnt;
	int failed;

	if (argc != 3) {
		fprintf(stderr, "usage: %s HOST NETID\n", argv[0]);
		return 2;
	}
	clnt = clnt_create(argv[1], PROG, VERS, argv[2]);
	if (!clnt) {
		clnt_pcreateerror(argv[1]);
		return 1;
	}
	failed = check_echo(clnt) + check_sum(clnt) + check_fill(clnt);
	clnt_destroy(clnt);
	return failed ? 1 : 0;
}
