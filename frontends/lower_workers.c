/*
 * lower_workers.c — a compute set of the six workers on one tile: their
 * vertex records and each worker's share of the work (lower_internal.h's
 * worker_set), for the files that lower one kind of op.
 */
#include "lower_internal.h"

bool lw_workers_begin(lowering *lw, uint32_t tile, uint32_t words, uint64_t units, worker_set *ws)
{
    ws->words = words;
    ws->off = lw_six_records(lw, tile, words, ws->rec);
    lw_worker_split(units, ws->lo, ws->hi);
    return !lw->failed;
}

bool lw_workers_run(lowering *lw, uint32_t tile, uint32_t entry, const worker_set *ws)
{
    return lw_step_run(lw, tile, entry, ws->off, ws->words);
}
