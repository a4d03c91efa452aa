/*
 * micro.h — microbenchmarks held against published figures: `ipusim
 * validate --micro`.
 *
 * Each benchmark is a tile-assembly program in validation/micro/ (its
 * header works the expected figure out by hand), assembled in-process with
 * parameters (.equ TILES, BYTES, ...) put in front of an .include of the
 * file, run on a machine preset by the engine (sim/engine/engine.h), and reduced
 * to one figure from the engine's statistics or from cycles the program
 * recorded in tile memory: tile memory bytes per tile cycle, aggregate
 * memory and exchange bandwidth (TB/s), one tile's exchange bandwidth,
 * tile-to-tile latency, sync cost, IPU-Link latency and bandwidth, host
 * bandwidth each way.  The figure is compared with a published one
 * (Graphcore datasheets and talks, the ISA document, PopLibs' cost models,
 * arXiv:1912.03413 measured on GC2; shared/docs/IPU_FACTS.md) within a
 * stated band.
 *
 * What a pass means: the model's parameters and rules reproduce the
 * published figure when a program exercises them the way the figure was
 * obtained.  Several published figures are themselves what ipusim's
 * parameters were taken from (the IPU-Link hop, the sync costs); those
 * rows check that the whole path — program, exchange, engine — adds
 * nothing unexpected, not that the parameter is right.
 *
 * Quick mode runs the on-chip benchmarks on fewer tiles (the first 92 or
 * 76, one column) and shorter loops; per-tile figures are the same and the
 * aggregate ones are scaled from the tiles that ran to the whole chip.
 */
#ifndef IPUSIM_VALIDATION_MICRO_H
#define IPUSIM_VALIDATION_MICRO_H

#include <stdbool.h>
#include <stddef.h>

/* The programs' directory when no --micro-dir is given. */
#define MICRO_DEFAULT_DIR IPUSIM_SOURCE_DIR "/validation/micro"

typedef struct micro_options {
    const char *dir;                /* programs' directory (NULL: MICRO_DEFAULT_DIR) */
    bool quick;                     /* fewer tiles and shorter loops on chip */
    const char *filter;             /* only benchmarks whose name contains it (NULL: all) */
    int threads;                    /* engine host threads (0: OpenMP's default) */
} micro_options;

typedef struct micro_result {
    const char *name;               /* e.g. "memory_ld2x64pace" */
    const char *machine;            /* preset name */
    const char *unit;
    const char *source;             /* of the published figure */
    double simulated, published;
    double error_pct;               /* 100 x (simulated - published) / published */
    double band_pct;                /* acceptance: |error_pct| <= band_pct */
    bool ran;                       /* false: assembly or the run failed (message) */
    bool pass;
    char message[512];
} micro_result;

/* Number of benchmark rows (benchmark x machine) in the table. */
size_t micro_count(void);

/* Run every row whose name matches o->filter; results in table order.
 * Returns a malloc'd array of *n results (NULL with *n = 0 when nothing
 * matched or the host is out of memory). */
micro_result *micro_run_all(const micro_options *o, size_t *n);

/* The results as a JSON object (cJSON; the caller owns it): each row with
 * its program, figures, band, source and how the figure is derived. */
struct cJSON;
struct cJSON *micro_json(const micro_options *o, const micro_result *r, size_t n);

#endif
