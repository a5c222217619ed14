/*
 * bench.h - the benchmark parts bench_wire runs.
 */
#ifndef TESTS_BENCH_H
#define TESTS_BENCH_H

void bench_hdr_run(void);
void bench_reduce_run(void);

#endif
