/*
 * engine.h — the system simulator: chips of tiles, BSP syncs, the exchange,
 * IPU-Links, host and streaming-memory transfers, run by one discrete-event
 * engine, with the tiles of a compute phase simulated on several host
 * threads.
 *
 * The system.  `chips` chips of `tiles_per_chip` tiles (sim/program/machine.def);
 * global tile number = chip * tiles_per_chip + tile.  Only tiles with code
 * in the executable get state (a bow-pod16 has 23,552 tiles).  Each chip has
 * its own tile clock (the machine's, or engine_set_chip_clock).
 *
 * Time.  One clock for everything: picoseconds (sim/base/simtime.h).  A tile
 * counts its own chip's cycles; cycle c of a chip at f Hz starts at
 * ceil(c * 10^12 / f) ps, and a tile told to go at t ps goes at the first
 * cycle starting at or after t.  On-chip quantities (compute, on-chip
 * exchange, the internal sync) are computed in the chip's cycles, off-chip
 * ones (IPU-Links, host, streaming memory, the external sync) in ps, so a
 * faster tile clock makes the first faster and not the second.
 *
 * What runs.  Tiles run their instruction streams directly (sim/engine/tile.h)
 * until they stop: at a sync of zone 1, 2 or 3, at the end of their
 * program, at an exception or at the cycle limit.  Between stops a tile
 * touches nothing but its own state, so every runnable tile is run at once,
 * in parallel (OpenMP, dynamic schedule); the results do not depend on the
 * number of threads or the schedule.  The stops become events.
 *
 * Events.  A binary heap ordered by (time_ps, sequence number).  Ordering
 * rules:
 *   1. an earlier time goes first;
 *   2. at the same time, the lower sequence number goes first; sequence
 *      numbers grow in the order events are pushed, and the stops of one
 *      run of tiles are pushed in increasing global tile number, so the
 *      order never depends on host threads;
 *   3. events are processed up to the earliest time at which a released
 *      tile will run again (a released tile stops strictly later than it
 *      resumes), then the released tiles run, and so on.
 * Kinds: a tile's stop (arrival at a sync, or its end) at the start of the
 * cycle after the instruction that stopped it; a barrier's release.  Time
 * may step back when a tile resumes after a sync 3 at a moment before
 * other members of its group stopped: nothing a group shares with another
 * group (links, host and streaming-memory channels are only shared inside
 * a group) depends on the order groups are processed in, and inside a group
 * phases are processed in their order.
 *
 * BSP.  The sync group of a tile's exchange phase is the set of tiles with
 * code that took part in the barrier that began it: its chip's after a
 * sync 1, the whole system's after a sync 2 and at the start (exchange.h).
 * When every tile of a group has stopped (at a sync of zone 1, 2, 3 or at
 * its end), the group's phase is resolved (xch_resolve): data are moved,
 * each tile's effective arrival is max(its stop, its last byte received,
 * delivery of the last byte it sent since its last barrier — to a tile,
 * the host or streaming memory).  A tile stopped at sync 3 resumes at
 * max(stop, last byte received): its sends go on without it.  A tile's
 * end counts at its effective arrival too, so a chip's run ends when the
 * data its tiles sent have arrived.  A barrier completes when every tile of
 * its group (zone 1: the chip's tiles with code; zone 2: every tile with
 * code) waits at a sync of that zone with its phase resolved; it releases
 *   zone 1: at max(effective arrival) + sync_internal_cycles, in the chip's
 *           cycles;
 *   zone 2: at max(effective arrival in ps) + sync_external_ps_per_hop x
 *           the largest hop count between the chips that have code (1 on
 *           a board, board_hops across boards; at least 1).
 * A tile's clock then jumps to the release: the gap is idle (waiting for
 * slower tiles) and sync time.  Tiles at zone-1 barriers of one chip never
 * wait for another chip.  A tile whose program ended while others wait at
 * a barrier it belongs to is a deadlock, reported with the tiles missing
 * and where each one is.
 *
 * Failures.  A simulated exception on any tile (its own, or a bad exchange
 * found by the resolution) stops the whole run; the tile reported is the
 * lowest-numbered tile with an exception in the step that found it.  A tile
 * reaching max_cycles stops the run the same way (ENGINE_LIMIT).
 *
 * Statistics (engine_stats).  A chip's superstep ends at each barrier
 * release that includes the chip, and its last superstep at the end of its
 * program (the last effective arrival of its tiles).  For a superstep of
 * `cycles` chip cycles:
 *   - busiest_tile: the tile whose effective arrival was last (the lowest
 *     number on a tie): the critical path.  compute_cycles +
 *     exchange_cycles + wait_cycles + sync_cycles = cycles, where for the
 *     busiest tile
 *       compute_cycles  = cycles it issued, less exchange stalls,
 *       exchange_cycles = exchange stalls (set-up, data leaving the tile:
 *                         tile_stats.exchange_stall_cycles) + waiting after
 *                         sync 3 for data + waiting at the barrier for its
 *                         own transfers to land,
 *       wait_cycles     = waiting for tiles of other chips (zone 2),
 *       sync_cycles     = from the group's last arrival to the release
 *                         (the sync latency);
 *   - tile_*_cycles: the same split summed over the chip's tiles with code
 *     (tile-cycles), where tile_idle_cycles counts each tile's wait for the
 *     last arrival of its group (including other chips');
 *     tile_compute + tile_exchange + tile_idle + tile_sync = cycles x tiles;
 *   - instructions, amp_f16_macs, amp_f32_macs: executed in the superstep;
 *     amp_utilisation = (f16 MACs / amp_f16_peak_macs_per_cycle + f32 MACs /
 *     amp_f32_peak_macs_per_cycle) / (tiles_per_chip x cycles): the share
 *     of the whole chip's AMP peak;
 *   - exchange/link/host/stream bytes and busy ps: from the exchange's
 *     counters (exchange.h, xch_chip_stats), for the resolutions done in
 *     the superstep; link/host/stream _ps are the channel's busy time
 *     (bytes / bandwidth), not including latency.
 * Chip totals sum the supersteps; cycles is the chip's last superstep end.
 * Host threads: a batch of fewer than 16 runnable tiles per thread runs on
 * one thread; for bigger ones the engine times its batches and uses the
 * threads while that is faster than one thread (a busy host can make it
 * slower), trying the other way every 16th batch.  Results never depend on
 * it.
 * Simulation speed: host_seconds of engine_run (wall clock), tile_cycles =
 * the tiles' cycles from each resume to the next stop, summed (the clock
 * jumps to a barrier's release or to data arriving after a sync 3 are not
 * counted), instructions executed.
 */
#ifndef IPUSIM_ENGINE_H
#define IPUSIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/elf/executable.h"
#include "sim/program/machine.h"
#include "tile.h"

typedef struct engine engine;

/* The most host threads a run uses: more (from --threads or from
 * OMP_NUM_THREADS) run on this many. */
#define ENGINE_MAX_HOST_THREADS 1024

/* How far a run has got, for a progress report (engine_options.progress). */
typedef struct engine_progress {
    uint32_t supersteps;          /* chip 0's supersteps ended */
    uint64_t simulated_ps;        /* the simulated time the run has reached */
    double host_s;                /* host seconds the run has taken */
} engine_progress;

typedef struct engine_options {
    uint64_t max_cycles;          /* a tile reaching this cycle stops the run (0: 10^10) */
    int threads;                  /* host threads (0: OpenMP's default), at most ENGINE_MAX_HOST_THREADS */
    bool force_threads;           /* every batch on all threads, however small or slow (tests) */
    bool record_trace;            /* keep what engine_write_trace needs */
    uint32_t trace_tile_first;    /* per-tile spans for global tiles first..last */
    uint32_t trace_tile_last;     /*   (first > last: none) */
    /* Called after a superstep ends, at most every progress_s host seconds
     * (0: 1 s); NULL: never.  It reports, it may not touch the engine. */
    void (*progress)(void *ctx, const engine_progress *p);
    void *progress_ctx;
    double progress_s;
} engine_options;

enum engine_status {
    ENGINE_DONE,                  /* every tile ended its program */
    ENGINE_FAULT,                 /* a simulated exception (engine_message) */
    ENGINE_DEADLOCK,              /* tiles wait at a barrier that cannot complete */
    ENGINE_LIMIT,                 /* a tile reached max_cycles */
    ENGINE_HOST_ERROR,            /* the simulator ran out of host memory */
    ENGINE_PAUSED,                /* engine_continue: a debugger stop (engine_get_pause) */
};

/* Counters shared by supersteps and chip totals (definitions above). */
typedef struct engine_counts {
    uint64_t cycles;
    uint64_t compute_cycles, exchange_cycles, wait_cycles, sync_cycles;
    uint64_t tile_compute_cycles, tile_exchange_cycles, tile_idle_cycles, tile_sync_cycles;
    uint64_t instructions, amp_f16_macs, amp_f32_macs;
    uint64_t exchange_bytes, exchange_transfers, receive_conflict_cycles, late_receives;
    uint64_t link_bytes, link_ps, host_bytes, host_ps, stream_bytes, stream_ps;
} engine_counts;

/* a += b, counter by counter. */
void engine_counts_add(engine_counts *a, const engine_counts *b);

typedef struct engine_superstep {
    uint32_t chip;
    uint32_t index;               /* 0, 1, ... on its chip */
    uint8_t zone;                 /* sync zone that ended it: 1, 2; 0 = end of program */
    uint32_t busiest_tile;        /* global tile number */
    uint64_t start_cycle, end_cycle;
    uint64_t start_ps, end_ps;
    double amp_utilisation;
    engine_counts c;
} engine_superstep;

typedef struct engine_chip_stats {
    uint32_t chip;
    uint32_t tiles;               /* tiles with code */
    uint64_t clock_hz;
    uint32_t supersteps;
    uint32_t busiest_tile;        /* the tile with the most compute cycles in the run */
    uint64_t end_ps;
    double seconds;               /* cycles at the chip's clock */
    double amp_utilisation;
    engine_counts c;              /* sums over its supersteps; c.cycles = its end */
} engine_chip_stats;

typedef struct engine_stats {
    uint32_t n_chips;             /* chips of the machine */
    engine_chip_stats *chips;
    engine_superstep *supersteps; /* every chip's, by end time, then chip */
    size_t n_supersteps;
    uint64_t end_ps;              /* when the last chip ended */
    double host_seconds;
    uint64_t tile_cycles;         /* tile cycles run between resumes and stops */
    uint64_t instructions;
    int host_threads;
    uint64_t batches;             /* runs of the runnable tiles */
    uint64_t parallel_batches;    /* of which on more than one host thread */
} engine_stats;

/* The seed every tile's PRNGs get when a program is loaded (isa_seed_prngs:
 * each context its own sequence, from the seed, the tile and the context). */
#define ENGINE_PRNG_SEED 1u

/* Load every tile of e that has code onto machine m.  Errors (tile beyond
 * the machine, section not fitting, no tile at all) go to err. */
engine *engine_new(const machine *m, const ipu_exe *e, char *err, size_t err_size);
void engine_free(engine *g);

/* Before engine_run: a chip's clock (whole Hz), host input stream n, a
 * streaming-memory buffer's initial contents.  False with err on bad
 * arguments or no host memory. */
bool engine_set_chip_clock(engine *g, uint32_t chip, double hz, char *err, size_t err_size);
bool engine_set_host_input(engine *g, uint32_t stream, const void *data, size_t size);
bool engine_set_stream_buffer(engine *g, uint32_t n, const void *data, size_t size, char *err, size_t err_size);

enum engine_status engine_run(engine *g, const engine_options *o);

/*
 * Stepping, for the debugger (sim/debugger/debugger.h).  engine_run is
 * engine_start and engine_continue with no pause conditions.  With pause
 * conditions (engine_set_debug, breakpoints) engine_continue returns
 * ENGINE_PAUSED at the first one met and goes on from exactly there when
 * called again: the results, cycles and statistics of a run with pauses
 * are those of the same run without.  Pauses:
 *   - BREAKPOINT: a context of a tile is about to issue at a breakpoint
 *     (engine_set_breakpoint); the issue has not happened, and continuing
 *     issues it (the breakpoint stays for later visits);
 *   - CYCLE: a tile reached break_cycle of its chip's clock (tiles already
 *     past it when they resume do not stop);
 *   - STEP: step_tile retired one issue (or stopped at a sync or its end);
 *   - CHECK: check() returned true after an issue of a checked tile
 *     (engine_set_tile_checked) or after an event of the loop (exchange
 *     data landing in tile memory);
 *   - ACCESS: an issue of a tile read or wrote bytes of one of its access
 *     watches of that kind (engine_set_access_watch): loads of every
 *     width, the pace forms, ld64putcs / ld128putcs, xsend's read of the
 *     data it sends; stores.  The pause comes after the issue, with the
 *     access in access_addr / access_bytes / access_write (the first that
 *     hit; adjacent accesses of one issue of the same kind are one, so a
 *     128-bit load reports its 16 bytes when its first half hit) and the
 *     issue's context and pc.  Exchange data received into a watched range
 *     count as a write: the pause comes after the event of the loop that
 *     landed them, with tile the receiver, access_received set, context
 *     the supervisor and pc its xrecv that took them, the access that
 *     xrecv's whole buffer; receivers are reported in tile order, one
 *     pause each.  Reads by the debugger, the loader, instruction fetch
 *     and the exchange itself are not accesses.  An issue that is both a
 *     STEP and an ACCESS pauses once, as ACCESS; one that is both a CHECK
 *     and an ACCESS pauses as CHECK, and as ACCESS when continued, before
 *     the tile issues again (only if the watch is still set then);
 *   - SUPERSTEP: a superstep ended (a barrier released, or a chip's
 *     program ended), with superstep_end set;
 *   - INTERRUPT: *interrupt became non-zero (checked every 2^20 cycles of
 *     a tile and between events).
 * Tiles run between their syncs as ever, so at a pause other tiles of the
 * same batch may be at their next sync already.  Several tiles may stop in
 * one batch; the lowest-numbered is reported first, then the next, so a
 * run pauses in the same order with any number of host threads.  Checked
 * tiles, tiles with access watches and step_tile run one cycle at a time,
 * on one host thread (slow mode); the others run as usual.  A tile
 * without access watches runs its loads and stores as without a debugger.
 */
enum engine_pause_reason {
    ENGINE_PAUSE_NONE,
    ENGINE_PAUSE_BREAKPOINT,
    ENGINE_PAUSE_CYCLE,
    ENGINE_PAUSE_STEP,
    ENGINE_PAUSE_CHECK,
    ENGINE_PAUSE_SUPERSTEP,
    ENGINE_PAUSE_INTERRUPT,
    ENGINE_PAUSE_ACCESS,
};

/* What an access watch watches (engine_set_access_watch). */
enum { ENGINE_WATCH_READ = 1, ENGINE_WATCH_WRITE = 2 };

typedef struct engine_pause {
    enum engine_pause_reason reason;
    uint32_t tile;                /* global tile (not SUPERSTEP; CHECK after an event: UINT32_MAX) */
    uint8_t context;              /* the context that issued or was about to (BREAKPOINT, STEP, CHECK) */
    uint32_t pc;                  /* BREAKPOINT: the breakpoint; STEP, CHECK: the address */
    uint64_t cycle;               /* the tile's cycle now */
    uint32_t chip, superstep;     /* SUPERSTEP: the chip and index of the superstep that ended */
    uint32_t access_addr;         /* ACCESS: the access that hit a watch: first byte, */
    uint32_t access_bytes;        /*   bytes, */
    bool access_write;            /*   a store or received data (else a load) */
    bool access_received;         /*   data received by the exchange (pc: the xrecv) */
} engine_pause;

typedef struct engine_debug {
    uint64_t break_cycle;         /* 0: none */
    bool step;                    /* pause after step_tile's next issue */
    uint32_t step_tile;
    bool superstep_end;
    bool (*check)(void *ctx, const engine *g, uint32_t tile);  /* tile UINT32_MAX: after an event */
    void *check_ctx;
    volatile int *interrupt;      /* NULL: none */
} engine_debug;

/* Set up a run (what engine_run does before its loop); ENGINE_DONE, or
 * ENGINE_HOST_ERROR.  Then engine_continue until it returns anything but
 * ENGINE_PAUSED; after that the run is over (statistics final) and
 * engine_continue returns the same status again. */
enum engine_status engine_start(engine *g, const engine_options *o);
enum engine_status engine_continue(engine *g);
/* Pause conditions, changeable at any pause (copied). */
void engine_set_debug(engine *g, const engine_debug *d);
const engine_pause *engine_get_pause(const engine *g);
bool engine_finished(const engine *g);
/* False when the tile has no code or pc does not start an issue there. */
bool engine_set_breakpoint(engine *g, uint32_t global_tile, uint32_t pc, bool on);
/* Run this tile in slow mode and call check() after each of its issues. */
bool engine_set_tile_checked(engine *g, uint32_t global_tile, bool on);
/* Pause (ACCESS) after an issue of this tile reads (ENGINE_WATCH_READ)
 * and/or writes (ENGINE_WATCH_WRITE) any byte of [addr, addr + bytes), or
 * when exchange data land there (WRITE).  on = false removes one watch set
 * with the same arguments; watches are counted, up to 32 per tile.  A tile
 * with a watch runs in slow mode; removing its last watch leaves its
 * memory exactly as it would be without.  False when the tile has no code,
 * the range is empty or not inside its memory, kinds is not a non-empty
 * set of the two, the tile has 32 watches already, or (on = false) no such
 * watch is set. */
bool engine_set_access_watch(engine *g, uint32_t global_tile, uint32_t addr, uint32_t bytes, unsigned kinds,
                             bool on);
/* Supersteps of chip that have ended so far. */
uint32_t engine_supersteps_done(const engine *g, uint32_t chip);
/* Where a tile is in the run: "runnable", "paused (breakpoint)",
 * "at sync 1", "ended", "faulted", ...; NULL when it has no code. */
const char *engine_tile_status(const engine *g, uint32_t global_tile);
/* The cycle a tile stands at in the run, as the statistics count it: its
 * clock, or later where the engine has already moved it on — a tile
 * released from a barrier resumes at the release (the superstep's end
 * cycle), and an ended tile's program counts until the data it sent have
 * landed (its effective arrival).  0 when it has no code. */
uint64_t engine_tile_cycle(const engine *g, uint32_t global_tile);
/* Bring every tile's tile_stats up to date (they are derived lazily). */
void engine_refresh_tile_stats(engine *g);
/* The tile with this global number, for the debugger to change state. */
ipu_tile *engine_tile_mut(engine *g, uint32_t global_tile);

/*
 * Checkpoints, for running backwards in the debugger: the whole machine's
 * state at a moment where no tile is in the middle of a run — right after
 * engine_start, at a pause with no batch open (SUPERSTEP; CHECK or ACCESS
 * after an event; STEP when the step was a sync or an end), or once the
 * run is over — put back exactly by a restore, after which engine_continue
 * goes on as it did from there: the same pauses, results, cycles,
 * statistics, trace and host outputs.
 *
 * A checkpoint holds every tile's architectural state (registers of all
 * contexts, AMP state, memory, cycle, fault) and issue state (barrel slot,
 * ready cycles, rpt, issue counts and totals, statistics, the breakpoint
 * being stepped over), the engine's bookkeeping (each tile's place in the
 * run, barriers, events and their sequence numbers, runnable tiles,
 * statistics and supersteps so far, trace, status and message, stepping
 * state and the last pause) and the exchange's (open phases' logs, buses,
 * ports, links and channels' busy times, counters, host input and output
 * streams, streaming-memory buffers).  Not in it: what never changes after
 * loading (decoded code, the executable, the machine, engine_start's
 * options), and the debugger's settings, which a restore leaves as they
 * are: engine_set_debug's conditions and interrupt flag, breakpoints,
 * checked tiles, access watches.
 *
 * Cost.  A checkpoint taken with a base (an earlier checkpoint of the same
 * engine, NULL: none) shares with it, reference counted, what is byte for
 * byte the same: tile memory (a page that changed is kept as the 256-byte
 * blocks that differ from the base's, or whole when more than half do),
 * issue counts (in chunks of 64 code words), each tile's state, and the
 * arrays the run appends to (supersteps, trace) as a prefix; so it costs
 * about what changed since its base.  A page kept whole is the running
 * tile's own page, shared copy on write: taking a checkpoint copies no
 * page, the tile copies it when it next writes it.  Checkpoints are freed
 * in any order, before or after their engine.  None of these may be called
 * while engine_continue runs.
 */
typedef struct engine_checkpoint engine_checkpoint;

/* The machine's state now; NULL with err before engine_start, while a
 * batch is open (a tile paused in the middle of its run), when base is
 * another engine's, or out of host memory. */
engine_checkpoint *engine_checkpoint_take(engine *g, const engine_checkpoint *base, char *err, size_t err_size);
/* Put g back into c's state (debugger settings stay); false with err when
 * c is another engine's or the host is out of memory (g then unchanged). */
bool engine_checkpoint_restore(engine *g, const engine_checkpoint *c, char *err, size_t err_size);
void engine_checkpoint_free(engine_checkpoint *c);
/* Host bytes c holds that its base does not (pages shared with the running
 * engine count as c's). */
size_t engine_checkpoint_bytes(const engine_checkpoint *c);
/* Where c was taken: supersteps of chip that had ended, and the chip's
 * cycle at the end of the last of them (0, 0 at the start); when the last
 * superstep of any chip ended (ps); the pause it was taken at; whether the
 * run was over. */
uint32_t engine_checkpoint_supersteps(const engine_checkpoint *c, uint32_t chip);
uint64_t engine_checkpoint_cycle(const engine_checkpoint *c, uint32_t chip);
uint64_t engine_checkpoint_end_ps(const engine_checkpoint *c);
const engine_pause *engine_checkpoint_pause(const engine_checkpoint *c);
bool engine_checkpoint_finished(const engine_checkpoint *c);

/* After engine_run: what stopped it ("" when ENGINE_DONE). */
const char *engine_message(const engine *g);
const engine_stats *engine_get_stats(const engine *g);
/* The chips of st with code on them (a replica or a stage each). */
uint32_t engine_chips_used(const engine_stats *st);

/* The AMP over a whole run.  issued_utilisation: the MACs the AMP issued
 * as a share of the peak of the chips with code (tiles_per_chip x cycles
 * each, f32 MACs at the f32 rate), as amp_utilisation is per chip.
 * useful_*: the same for the model's own MACs (model_macs, from the
 * executable's record; 0: not known, and these stay 0), the issued share
 * scaled by model / issued MACs — padding of K and N to the AMP's weight
 * blocks and output groups, and pipeline fill, left out. */
typedef struct engine_amp_summary {
    uint64_t issued_macs;         /* f16 and f32 */
    double issued_utilisation;
    uint64_t model_macs;
    double useful_utilisation;
    double issued_per_model_mac;  /* issued_macs / model_macs (0: not known) */
} engine_amp_summary;
engine_amp_summary engine_amp_totals(const engine *g, const engine_stats *st, uint64_t model_macs);
/* Host output stream n, or NULL when nothing was sent to it. */
const uint8_t *engine_host_output(const engine *g, uint32_t stream, size_t *size);
const uint8_t *engine_stream_buffer(const engine *g, uint32_t n, size_t *size);
uint8_t *engine_stream_buffer_mut(engine *g, uint32_t n, size_t *size);

/* Tiles with code, in increasing global number. */
size_t engine_tile_count(const engine *g);
const ipu_tile *engine_tile_at(const engine *g, size_t i);
/* The tile with this global number, or NULL when it has no code. */
const ipu_tile *engine_tile(const engine *g, uint32_t global_tile);
uint64_t engine_chip_clock_hz(const engine *g, uint32_t chip);

/* Chrome trace event JSON (sim/engine/trace.c): one process per chip, supersteps
 * and their phases as spans, a counter of running tiles, off-chip transfers,
 * and per-tile spans for the tiles chosen in engine_options.  Needs
 * record_trace.  Written atomically; false with err on failure. */
bool engine_write_trace(const engine *g, const char *path, char *err, size_t err_size);

#endif
