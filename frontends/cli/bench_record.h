/*
 * bench_record.h — keeping `ipusim bench` results and comparing with them.
 *
 *   ipusim bench --record validation/bench_results.json
 *       writes every figure of this run, with the host and build it came
 *       from, as JSON (atomically: a run that fails leaves the old file);
 *   ipusim bench --compare validation/bench_results.json
 *       prints each figure beside the recorded one and their ratio, this
 *       run over the record (above 1: faster now).  Figures in only one of
 *       the two are listed as such.  Both options may be given (compare
 *       first, then record).
 *
 * A figure is a named rate where more is better (simulated instructions,
 * tile-cycles per host second).  Timings are only comparable on the same
 * host and build, and with the host otherwise idle: the record keeps the
 * CPU model, the compiler, whether the build was optimised or sanitised,
 * and the 1-minute load average when the run started, and the comparison
 * warns when these differ.  A ratio within noise_fraction of 1 (0.10: a
 * shared machine's run-to-run spread) is reported as "same".
 */
#ifndef IPUSIM_BENCH_RECORD_H
#define IPUSIM_BENCH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "commands.h"

#define BENCH_RECORD_FORMAT 1
#define BENCH_NOISE_FRACTION 0.10

typedef struct bench_figure {
    char *name;       /* "int_loop instructions/s" */
    char *unit;       /* "instructions/s" */
    double value;
} bench_figure;

typedef struct bench_record {
    bench_figure *figures;
    size_t n_figures;
    /* Where the figures come from. */
    char host_cpu[128];
    int host_threads;
    char compiler[128];
    bool optimized, sanitized;
    double load_average;      /* 1 minute, when the run started; < 0 unknown */
    char recorded_utc[32];    /* ISO 8601 */
    /* What to do at the end (from the command line). */
    const char *record_path, *compare_path;
    struct bench_record *baseline;   /* read from compare_path when the option is seen */
} bench_record;

/* Empty record describing this host and build (call before measuring: it
 * samples the load average). */
void bench_record_init(bench_record *r);
void bench_record_free(bench_record *r);
void bench_record_add(bench_record *r, const char *name, const char *unit, double value);

/* --record FILE, --compare FILE: true if argv[*i] was one of them (and *i
 * advanced past its value).  The record to compare with is read at once,
 * so that a bad one is a fatal error before the benchmarks run. */
bool bench_record_option(bench_record *r, const command *self, int argc, char **argv, int *i);

/* After the run: compare (to out) and record, as asked.  Returns false with
 * err set if the record cannot be written. */
bool bench_record_finish(bench_record *r, FILE *out, char *err, size_t err_size);

/* The pieces, for tests. */
bool bench_record_write(const bench_record *r, const char *path, char *err, size_t err_size);
bool bench_record_read(bench_record *r, const char *path, char *err, size_t err_size);
void bench_record_compare(const bench_record *now, const bench_record *before, FILE *out);

#endif
