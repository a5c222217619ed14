/*
 * bench_wire.c - micro-benchmark of the wire layer against the rpcgen
 * reference codec, measured in the same run so only ratios matter.
 *
 * Usage: bench_wire [hdr] [reduce]   (default: both)
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

int main(int argc, char **argv)
{
	bool hdr = argc < 2, reduce = argc < 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "hdr")) {
			hdr = true;
		} else if (!strcmp(argv[i], "reduce")) {
			reduce = true;
		} else {
			fprintf(stderr, "usage: %s [hdr] [reduce]\n", argv[0]);
			return 2;
		}
	}
	if (hdr)
		bench_hdr_run();
	if (reduce)
		bench_reduce_run();
	return 0;
}
