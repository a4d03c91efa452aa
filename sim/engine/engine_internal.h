/*
 * engine_internal.h — the engine's state, shared by engine.c (the event
 * loop and statistics) and trace.c (the trace writer).  Not an API.
 */
#ifndef IPUSIM_ENGINE_INTERNAL_H
#define IPUSIM_ENGINE_INTERNAL_H

#include "engine.h"
#include "exchange/exchange.h"

enum etile_status {
    ET_RUNNABLE,          /* will run in the next batch (from resume_cycle) */
    ET_STOPPED,           /* ran; its stop event is in the queue */
    ET_WAITING,           /* at a sync (zone), stop processed */
    ET_RELEASING,         /* its barrier completed; the release event is queued */
    ET_ENDED,             /* its program ended, stop processed */
    ET_FAULTED,
};

/* A tile with code: its state (cold, big) and the engine's bookkeeping
 * (hot, compact: the serial part of the loop touches only this). */
typedef struct etile_body {
    ipu_tile t;
    /* The access that hit an access watch (ENGINE_PAUSE_ACCESS), by the
     * issue of access_context at access_pc (received: by the exchange,
     * for the xrecv at access_pc); pending: not reported yet. */
    tmem_access access;
    uint32_t access_pc;
    uint8_t access_context;
    bool access_received;
    bool access_pending;
} etile_body;

typedef struct etile {
    etile_body *x;                /* the tile itself */
    xch_log log;                  /* its exchange phase (t.s.xlog points here) */
    uint32_t tile_id;             /* global tile number */
    uint32_t chip;
    uint32_t group;               /* exchange group: chip number, or chips for the system */
    uint8_t state;                /* enum etile_status */
    uint8_t zone;                 /* zone of the sync it stopped at */
    uint8_t stop;                 /* enum tile_stop of the last run */
    bool phase_open;              /* stopped with its phase not yet resolved */
    /* stepping (engine.h): a tile of an open batch is paused mid-run
     * (enum engine_pause_reason), or has ran to its stop */
    uint8_t pause;
    bool ran;
    bool checked;                 /* slow mode, check() after each issue */
    bool watched;                 /* slow mode, has access watches */
    uint8_t pause_context;
    uint32_t pause_pc;
    uint64_t stall_mark;          /* exchange stall cycles when its run started */
    uint64_t resume_cycle;        /* RUNNABLE: when it goes */
    uint64_t run_start;           /* cycle the last run started at */
    uint64_t stop_cycle;          /* cycle after the stopping instruction */
    uint64_t run_stall;           /* exchange stall cycles in the last run */
    uint64_t eff_cycle;           /* effective arrival (engine.h) */
    uint64_t sent_cycle;          /* delivery of the last byte it sent since its last barrier */
    /* tile_stats copied after each run */
    uint64_t instructions, amp_f16_macs, amp_f32_macs;
    /* current superstep */
    uint64_t ss_compute, ss_exchange;
    uint64_t instr_mark, f16_mark, f32_mark;
    /* whole run */
    uint64_t compute_total, run_cycles;
} etile;

typedef struct event {
    uint64_t time_ps;
    uint64_t seq;
    uint32_t kind;                /* EV_STOP, EV_RELEASE */
    uint32_t arg;                 /* tile index, or release index */
} event;

enum { EV_STOP, EV_RELEASE };

typedef struct release {
    uint32_t group;               /* chip, or chips for a zone-2 barrier */
    uint8_t zone;
    uint64_t release_ps;
    uint64_t group_max_ps;        /* last effective arrival of the group */
} release;

typedef struct chip_state {
    size_t first, end;            /* its tiles: g->tiles[first .. end) */
    uint64_t hz;
    uint32_t barrier_ready[3];    /* tiles waiting at zone 1 / 2 with their phase resolved */
    uint32_t done;                /* tiles ended with their phase resolved */
    bool finished;
    uint64_t ss_start_cycle, ss_start_ps;
    uint32_t n_supersteps;
    xch_chip_stats xch_mark;      /* exchange counters at the superstep's start */
} chip_state;

/* A span of a tile's time, for the trace. */
enum seg_kind { SEG_RUN, SEG_EXCHANGE, SEG_IDLE, SEG_SYNC };
typedef struct segment {
    uint32_t tile;                /* index into g->tiles */
    uint8_t kind;
    uint64_t start_cycle, end_cycle;
} segment;

struct engine {
    machine m;
    const ipu_exe *exe;
    uint32_t chips, tiles_per_chip, system_tiles;
    etile *tiles;                 /* tiles with code, by global number */
    etile_body *tile_state;      /* their state, in the same order */
    size_t n_tiles;
    tile_code_cache *code_cache;  /* decoded code the tiles share (tile.h) */
    int32_t *index_of;            /* global tile -> index in tiles, -1 */
    chip_state *chip;
    xch_system xch;
    /* groups 0..chips-1: a chip; chips: the system */
    uint32_t *group_members, *group_active, *group_open;
    uint32_t barrier2_ready;
    /* events */
    event *heap;
    size_t n_heap, cap_heap;
    uint64_t next_seq;
    release *releases;
    size_t n_releases, cap_releases;
    /* runs */
    uint32_t *runnable;
    size_t n_runnable;
    uint64_t min_resume_ps;
    /* results */
    engine_options opt;
    int threads;                  /* host threads */
    double batch_rate[2];         /* tile-cycles per host second of recent batches run
                                     on one thread [0] and on all [1] (run_batch) */
    uint64_t batches;             /* batches timed so far */
    enum engine_status status;
    char message[4096];
    engine_stats stats;
    size_t cap_supersteps;
    /* trace */
    segment *segs;
    size_t n_segs, cap_segs;
    bool ran;
    /* stepping (engine.h) */
    bool started, finished;
    bool debugging;               /* pause conditions set: batches take the slow path */
    bool batch_open;              /* a batch paused before all its tiles stopped */
    bool in_events;               /* paused between two events of the loop */
    bool step_done;               /* step_tile stopped at a sync or its end in this batch */
    engine_debug dbg;
    engine_pause pause;
    size_t supersteps_seen;
    size_t n_checked;
    size_t n_received_pending;    /* tiles with exchange data in an access watch to report */
    uint32_t n_breakpoints;
    double host_s;
    double progress_next_s;       /* host time (seconds_now) of the next progress report */
    double run_started_s;         /* host time this engine_continue began */
};

/* Tiles load many identical pages: the kernel library's code on every
 * tile, a replica's weights and records on replica 0's tile.  Each page
 * with the bytes of one loaded before becomes that one, shared and copied
 * on the first write of any holder (memmodel/tile_memory.h), so the host
 * holds the library once and a replicated program's weights once.  A
 * table of the pages met so far finds them (hash, then the bytes); a
 * tile's pages go in as soon as it is loaded. */
typedef struct page_table {
    const uint8_t **slot;
    uint64_t *hash;
    size_t n_slots, used;
} page_table;

/* Tile memory m's pages into t: each with the bytes of one met before
 * becomes that one (shared, copied on write), the others are kept. */
void page_table_share(page_table *t, tile_memory *m);
void page_table_free(page_table *t);

#endif
