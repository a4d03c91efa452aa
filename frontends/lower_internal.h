/*
 * lower_internal.h — the lowering's state and the calls every file of the
 * lowering shares.  Included by the files that lower one kind of op
 * (lower_data.c, lower_gather.c, lower_logic.c, lower_matmul.c) and by
 * lower_workers.c, and through lower_ops.h by the driver's files (lower.c,
 * lower_ops.c, lower_layout.c, lower_memory.c, lower_exchange.c,
 * lower_elementwise.c, lower_program.c).  It holds:
 *   - the state: a tensor's pieces and memory blocks (ltensor), a tile's
 *     control program, vertex records, transfers and memory (ltile), and
 *     the whole lowering (lowering);
 *   - failing and reporting, tile numbering, tile memory and scratch,
 *     vertex records and the steps of the control program, the exchange
 *     phase being built, fetching tensor pieces onto a tile, and the
 *     planner's splits over tiles and workers;
 *   - the entry points of the ops lowered in their own files;
 *   - broadcast geometry and the six workers' compute set (worker_set).
 * Not an interface for anything outside frontends/lower*.c.
 */
#ifndef IPUSIM_FRONTENDS_LOWER_INTERNAL_H
#define IPUSIM_FRONTENDS_LOWER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "kernels.h"
#include "lower.h"
#include "sim/program/phases.h"
#include "memmodel/memory_map.h"
#include "sim/program/op_map.h"
#include "sim/program/tensor_map.h"
#include "workloads/codelets/codelet_library.h"
#include "workloads/codelets/abi.h"

#define ALIGN8(x) (((x) + 7u) & ~(uint64_t)7u)

typedef struct piece {
    uint32_t tile, addr;
    uint64_t first, count;
} piece;

/* A block of tile memory: where and how many bytes (its read slack
 * included). */
typedef struct mem_block {
    uint32_t tile, addr, size;
    bool arena;                       /* while the shared sections' arenas are measured: a block
                                         of the section being lowered (lower_section.c), told
                                         from the rest of the program's blocks, which may lie
                                         at the same addresses then */
} mem_block;

typedef struct ltensor {
    piece *p;
    size_t n, cap;
    int root;                         /* the tensor whose storage this one's pieces are (itself
                                         unless it is a view, lower.c tensor_roots) */
    mem_block *blocks;                /* storage given to it by lw_tensor_alloc ... */
    size_t n_blocks, cap_blocks;
    bool released;                    /* ... returned to its tiles after its last reader */
    bool placed;
    uint32_t element_bytes;
    bool permuted;                    /* pieces count in the order of axes perm[] */
    uint32_t perm[GRAPH_MAX_RANK];    /* (tensor_map.h), e.g. NCHW kept as NHWC */
    bool lhs_spread;                  /* a matmul's A laid out for its plan (lower_input): each */
    uint32_t lhs_base;                /* block spread over its grid row's tiles from this op base */
} ltensor;

typedef struct word_vec {
    uint32_t *w;
    size_t n, cap;
} word_vec;

/* The most bytes one transfer or local copy is given by joining the next
 * bytes of both sides to it (lw_add_transfer). */
#define LW_TRANSFER_MAX_BYTES 65536u
/* Local copies are cut into pieces for the workers no shorter than this
 * (lower_exchange.c, lw_flush_copies): each piece takes a worker record
 * of its own, and a convolution's many small im2col copies cut at 256
 * bytes took ResNet-50's training step past a tile's memory.  Fewer
 * copies than workers are cut down to LW_COPY_FEW_PIECE_MIN_BYTES: a
 * gathered weight block's local part took one worker 3,000 cycles while
 * five sat idle. */
#define LW_COPY_PIECE_MIN_BYTES 4096u
#define LW_COPY_FEW_PIECE_MIN_BYTES 256u

typedef struct xfer {
    uint32_t addr, bytes, peer;       /* peer: endpoint value */
    uint32_t mate;                    /* tile transfers: the other side's index on the peer tile */
    int32_t group;                    /* the sender's multicast group, -1 none (lw_end_phase) */
    uint32_t order;                   /* multicast: the piece's first send on the sender */
    bool emit;                        /* a send that is issued (a multicast piece is sent once) */
} xfer;

typedef struct data_item {
    uint32_t addr, size;
    uint8_t *bytes;                   /* NULL: zero-filled */
    char name[24];
} data_item;

/* A compute set's worker records already on a tile (lw_step_run shares
 * them): where they start, their bytes and a hash of them. */
typedef struct shared_records {
    uint64_t hash;
    uint32_t off, bytes;
} shared_records;

typedef struct ltile {
    word_vec steps, records;
    shared_records *shared;           /* open addressing by hash (size a power of two) */
    size_t n_shared, cap_shared;
    size_t *patch;                    /* step words holding record offsets */
    size_t n_patch, cap_patch;
    uint32_t last_record_words;       /* the last record lw_new_record made (padded) */
    size_t *step_refs;                /* step words holding the index of a step (ctl_sub's,
                                         ctl_jump's), made addresses when the steps are placed */
    size_t n_step_refs, cap_step_refs;
    xfer *sends, *recvs;
    size_t n_sends, cap_sends, n_recvs, cap_recvs;
    word_vec copies;                  /* pending local copies: src, dst, bytes */
    uint32_t region0_kept_end, region1_kept_end;  /* blocks kept for the run grow up from here ... */
    mem_block *free;                  /* blocks released by dead tensors and past ops, by address */
    size_t n_free, cap_free;
    uint32_t hold;                    /* new bytes held back in the two regions together for the
                                         vertex records and the control program (lower_graph) */
    uint32_t hold_firm;               /* ... of which blocks kept for the run never take */
    uint32_t region0_scratch_floor, region1_scratch_floor;  /* ... and ops' scratch down to here (the
                                         bytes between are new); below the blocks kept for the run
                                         and above this floor, free blocks are in free[] */
    data_item *data;
    size_t n_data, cap_data;
    data_item *allocs;                /* every block handed out (bytes unused) */
    size_t n_allocs, cap_allocs;
    struct peer_ref {                 /* step words each replica has its own of: an endpoint, */
        size_t word;                  /* or a collective's slice (enum exe_reloc_kind, and */
        uint8_t kind;                 /* RING's and SLICE's shift and slice bytes) */
        uint16_t shift;
        uint32_t slice_bytes;
    } *peers;
    size_t n_peers, cap_peers;
    struct peer_ref *record_words;    /* the same of vertex record words (word: byte offset
                                         in the records) */
    size_t n_record_words, cap_record_words;
    uint64_t compute_estimate_cycles; /* the planner's running estimate */
    uint32_t rec_base, step_base;     /* where the records and steps went (close_tile) ... */
    size_t split_word;                /* ... steps from this word on at step_base2, after a
                                         ctl_jump ending the first block (0: one block) */
    uint32_t step_base2;
} ltile;

typedef struct lowering {
    const graph *g;
    const lower_options *opts;
    lower_report *rep;
    uint32_t tiles;                   /* program tiles: 0 .. tiles - 1 on chip 0 */
    uint32_t tiles_per_chip, replicas;
    uint32_t replica_stride;          /* tiles from a replica to the next: its stages' chips */
    uint32_t stages, stage;           /* pipeline stages (one a chip), the current op's */
    uint32_t program_tiles;           /* stages x tiles: the index space of lw->tile */
    uint32_t *stage_of;               /* per node */
    int32_t *early_op;                /* per node lowered with an earlier one (a running sum's Add,
                                         with the serialised matmul whose output it adds): its op
                                         in the op map (lw_node_op); -1 for the others */
    uint32_t *home_stage;             /* per tensor: the stage an input or variable is placed on */
    int *last_reader;                 /* per tensor root: the last node reading it, INT_MAX
                                         for graph outputs, -1 for none */
    uint32_t sync_step;               /* ctl_sync_chip, or ctl_sync_system with stages */
    uint32_t mem_base, mem_end;       /* the machine's tile memory (machine_memory_base) */
    uint32_t region0_start, region1_start;   /* first free byte of each region on every tile */
    const codelet_library *lib;
    kernel_symbols kernels;           /* addresses of the codelets in the library */
    ltile *tile;                      /* per program tile */
    ltensor *tensor;                  /* per graph tensor */
    bool phase_has_transfers;
    uint32_t next_in_stream, next_out_stream;
    tensor_map *tmap;
    uint64_t phase_bytes;
    uint32_t op_base, op_tiles;       /* the current op's tiles start at op_base (lw_tile_of) */
    const uint32_t *hold_bytes;       /* per program tile: room held back from the start for its
                                         records and control program (NULL: none) */
    const uint32_t *hold_firm;        /* ... of it what the previous lowering needed (the rest is
                                         a margin, lw_tile_alloc) */
    uint32_t *control_bytes;          /* per program tile: the bytes they need, when a tile's
                                         found no room (lower_graph tries again) */
    bool control_no_room;
    /* The block that found no room (no_room_in): its tile and bytes, and
     * whether it was the rest of the program's, outside the shared
     * sections' arenas (lw_sections_failed). */
    uint32_t no_room_tile;
    uint64_t no_room_bytes;
    bool no_room_outside;
    bool no_room_quiet;               /* no room: 0 without failing, for a caller that has
                                         another way (a matmul's C without its fast placement) */
    mem_block *lent;                  /* released blocks the current op holds as scratch */
    size_t n_lent, cap_lent;
    char *err;
    size_t err_size;
    uint32_t syncs;                   /* syncs in the program so far: the superstep being built */
    int cur_phase;                    /* of the nodes lowered last (training): enum
                                         graph_phase, or the all-reduce's (lower.c) */
    program_phases phases;            /* where each phase's supersteps start */
    op_map ops;                       /* which op each superstep's compute and exchange are */
    int32_t cur_op;                   /* the op being lowered (in ops), -1 none */
    struct lw_sections *sections;     /* control programs shared between micro-batches
                                         (lower_section.c); NULL: none */
    const uint32_t *arena_hint;       /* per program tile, 4 words: the bytes of regions 0 and 1
                                         its stage's sections need at most in their arena, and
                                         those the rest of the program took beside them, as a
                                         former lowering measured (NULL: measure now) ... */
    uint32_t *arena_need;             /* ... and as this one measured (lw_arena_margin) */
    bool arena_retry;                 /* lower again with arena_need (lower_graph) */
    bool pin_records;                 /* records are not shared with earlier ones (their
                                         words are relocated for each replica) */
    /* A pipelined step (graph.pipeline_stages, lower.c): in a pipeline
     * cycle each stage's tiles run their own supersteps, ended by chip
     * syncs; the tiles an exchange phase and a sync are for. */
    bool overlap;                     /* the stages of a cycle run at the same time */
    bool in_cycle;
    int cycle;                        /* the cycle being lowered, while in_cycle */
    uint32_t cycle_stage;             /* the stage whose supersteps are being built */
    uint32_t cycle_base;              /* syncs before the cycle */
    uint32_t *stage_syncs;            /* per stage: its syncs in the cycle so far */
    uint32_t scope_lo, scope_hi;      /* program tiles of the phase: all but in a cycle */
    /* Variables kept in streaming memory (lower_streaming.c). */
    int *stream_done;                 /* per tensor: for such a variable, the last node reading
                                         or writing it or its update (-1: none, or not one) */
    uint32_t *stream_base;            /* ... the op base it is placed from (lower_variables) ... */
    int *stream_first;                /* ... and the first node reading it (-1: none) */
    int *stream_queue;                /* the ones read, in the order they are first read ... */
    size_t n_stream_queue, stream_next;   /* ... up to the first not loaded yet */
    int *stream_order;                /* the ones loaded so far, in the order they were */
    size_t n_stream_order, cap_stream_order;
    size_t stream_stored;             /* ... of which the first this many stored back */
    bool failed;
} lowering;

/* Which region a block goes in: the preferred one, else the other; or
 * only region 1 (the AMP's packed weights: ld128putcs reads region 1
 * only, ISA2 §2.7.7). */
enum region_pref { PREFER_REGION1, PREFER_REGION0, NEED_REGION1 };

/* The count word of a ctl_sends16 / ctl_recvs16 step (supervisor.S) for a
 * run of n >= 2 blocks, and the blocks a count word stands for. */
static inline uint32_t lw_narrow_run_count(uint64_t n) { return (uint32_t)((n / 2 - 1) * 2 + n % 2); }
static inline uint64_t lw_narrow_run_blocks(uint32_t count) { return ((uint64_t)(count >> 1) + 1) * 2 + (count & 1); }
/* Note that the step word just pushed on tile `tile` is an endpoint. */
bool lw_note_peer(lowering *lw, uint32_t tile, enum exe_reloc_kind kind);
/* A send step of `bytes` (whole words) at addr to the host or streaming
 * memory, pushed on the tile's steps now (outside an exchange phase's
 * matched transfers), its endpoint word noted as `kind`. */
bool lw_push_send(lowering *lw, uint32_t tile, uint32_t addr, uint32_t bytes, uint32_t endpoint,
                  enum exe_reloc_kind kind);
/* The same for a RING or SLICE word: the tile's last step word
 * (record_offset < 0) or the record word at that byte offset. */
bool lw_note_rotated(lowering *lw, uint32_t tile, int64_t record_offset, enum exe_reloc_kind kind, uint32_t shift,
                     uint32_t slice_bytes);

/* One exchange phase among rings of replicas: tile i (of every replica)
 * sends or receives x[per_tile i ..] (bytes 0: none) to or from tile i of
 * the replica peer_shift on (mod replicas); an address with slice_shift
 * >= 0 is slice (r + slice_shift) mod replicas of slice_bytes from it (the
 * word replica 0's).  The receives are posted first; then a sync of the
 * whole system (the sync before the phase must be one too:
 * lw_sync_all with ctl_sync_system). */
typedef struct lw_ring_xfer {
    uint32_t addr, bytes;
    int32_t slice_shift;
    uint32_t slice_bytes;
    uint32_t peer_shift;
    bool send;
} lw_ring_xfer;
bool lw_ring_phase(lowering *lw, const lw_ring_xfer *x, size_t per_tile);
/* The pending exchange phase ended (lw_end_phase), then sync `step`
 * (ctl_sync_chip, ctl_sync_system) on every tile: a superstep of its own
 * starts (a new phase of the step; before a ring phase, whose exchange
 * crosses chips, a system sync). */
bool lw_sync_all(lowering *lw, uint32_t step);

bool lw_fail(lowering *lw, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool lw_unsupported(lowering *lw, const graph_node *n, int index, const char *why);
const char *lw_node_label(const graph_node *n, int index, char *buf, size_t size);
bool lw_push_word(lowering *lw, word_vec *v, uint32_t w);
const graph_tensor *lw_gt(const lowering *lw, int t);

/* The op's i-th tile: tiles are numbered from where the previous op's
 * ended (round the chip), so that the first tiles do not fill up. */
uint32_t lw_tile_of(lowering *lw, uint32_t i);
/* The global tile number of lowering tile i (stage i / tiles, tile i % tiles). */
uint32_t lw_global_tile(const lowering *lw, uint32_t i);

/* Tile memory: a block aligned to `align` (8, 16, ... bytes) with the
 * codelets' read slack after it; 0 when it does not fit (lw failed with
 * the "does not fit" message naming `what`). */
uint32_t lw_tile_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                       const char *what);
/* Storage of tensor `tensor` (a piece of an op's output, written by the op
 * before anything reads it): a block a dead tensor released, else a new
 * one (lw_tile_alloc).  With zeroed, the block starts as zeros (a new one
 * is zero when loaded; a reused one gets a compute set of vtx_fill).  The
 * block goes back to the tile after the last node reading the tensor
 * (lower_graph). */
uint32_t lw_tensor_alloc(lowering *lw, int tensor, uint32_t tile, uint64_t bytes, enum region_pref pref,
                         uint32_t align, bool zeroed, const char *what);
/* Scratch: a block only the current op uses (fetched copies, casts,
 * received weights, packed operands), free again when the next op starts;
 * never in the executable (no initial contents: the op writes all of it
 * before reading).  Taken from the top of the region down while that stays
 * above the lowest scratch block of any op so far (the blocks kept for the
 * run — tensors, constants, the control program — stay below it); where it
 * would go lower, a block a dead tensor released, lent to the op (a tensor
 * placed there later is written after the op); lower only where neither
 * holds it. */
uint32_t lw_scratch_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                          const char *what);

/* Scratch block `addr` of tile `tile` free again before the op ends: the
 * compute sets that read it are made, and what the op takes next may be
 * placed there (written after them). */
void lw_scratch_free(lowering *lw, uint32_t tile, uint32_t addr);
/* Every scratch block lent free again: the op is over (for the next op),
 * or a serialised matmul's part (for the next part). */
void lw_release_scratch(lowering *lw);
/* The superstep being built ends (its sync is the next step): its
 * exchange and sync belong to the op being lowered (sim/program/op_map.h);
 * lw->syncs counts it. */
void lw_count_sync(lowering *lw);

/* Scratch that starts as zeros: bytes no block used before are loaded as
 * zeros with the executable; a block used before gets a compute set of
 * vtx_fill, before the exchange phase under construction (so the phase may
 * fill part of it); 0 when it does not fit. */
uint32_t lw_scratch_zeroed(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                           const char *what);

/* Data loaded with the executable (bytes NULL: zeros). */
bool lw_tile_data(lowering *lw, uint32_t tile, uint32_t addr, const void *bytes, uint32_t size,
                  const char *name);

/* Vertex records (byte offsets into the tile's record area). */
uint32_t lw_new_record(lowering *lw, uint32_t tile, uint32_t words, uint32_t **rec);
uint32_t lw_six_records(lowering *lw, uint32_t tile, uint32_t words, uint32_t *recs[CODELET_WORKERS]);
/* Steps: a compute set of six workers, a supervisor codelet. */
bool lw_step_run(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec0, uint32_t record_words);
bool lw_step_call(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec);

/* Exchange of the phase being built, and its end (lower.h). */
bool lw_add_transfer(lowering *lw, uint32_t from, uint32_t src_addr, uint32_t to, uint32_t dst_addr,
                     uint32_t bytes);
/* A copy within a tile, done by the vtx_copy compute set that follows the
 * phase's exchange (lw_end_phase). */
bool lw_add_local_copy(lowering *lw, uint32_t tile, uint32_t src, uint32_t dst, uint32_t bytes);
bool lw_add_host_receive(lowering *lw, uint32_t tile, uint32_t addr, uint32_t bytes, uint32_t endpoint);
bool lw_end_phase(lowering *lw);

/* Control programs shared between a pipeline's micro-batches
 * (lower_section.c, lower_options.share_programs).  lw_sections_plan finds
 * the sections and their keys (nothing without the option);
 * lw_section_enter before node i (the first of a section),
 * lw_section_leave after the section's last node; lw_sections_release
 * before node i gives the arenas back once the pipeline is over;
 * lw_sections_done fails a lowering that only measured the arenas. */
bool lw_sections_plan(lowering *lw);
bool lw_section_enter(lowering *lw, int i);
bool lw_section_leave(lowering *lw);
bool lw_section_in(const lowering *lw, int i);
bool lw_sections_release(lowering *lw, int i);
bool lw_sections_done(lowering *lw);
/* The lowering failed: where inside a shared section, its stage's arena
 * asked a quarter larger of the next lowering. */
void lw_sections_failed(lowering *lw);
void lw_sections_free(lowering *lw);
/* Inside a section: whether block b (released) lies outside its arena,
 * held back until the section ends (give_back); whether allocations are
 * in an arena (no block in one is zeros when a section runs again);
 * whether tensor t, placed on `tile`, outlives the stage's next section
 * (then lw_tensor_alloc places it outside the arena, lw_section_outside
 * switching the tile's allocator to the state outside and back); whether
 * a block kept for the run (lw_tile_alloc) goes outside the arena, by
 * lw_section_kept_alloc. */
bool lw_section_defers(lowering *lw, mem_block b);
bool lw_in_arena(const lowering *lw);
bool lw_section_outlives(const lowering *lw, int t, uint32_t tile);
void lw_section_outside(lowering *lw, uint32_t tile, bool in);
bool lw_section_keeps(const lowering *lw);
/* Whether a block is being placed outside the arena from inside a section. */
bool lw_section_placing_outside(const lowering *lw);
/* Whether a block placed on `tile` now (a tensor's, or scratch) is the
 * arena's while a lowering measures the arenas (mem_block.arena): inside
 * a section, not outside its arena, on its stage. */
bool lw_section_measured(const lowering *lw, uint32_t tile);
uint32_t lw_section_kept_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                               const char *what);
/* Block b back to its tile's free blocks. */
bool lw_give_back(lowering *lw, mem_block b);

/* Tensors. */
bool lw_add_piece(lowering *lw, int tensor, uint32_t tile, uint32_t addr, uint64_t first, uint64_t count);
/* Whether tensors a and b come in the same pieces (tile, elements; with
 * addresses, the same storage too). */
bool lw_same_pieces(const ltensor *a, const ltensor *b, bool addresses);
/* Where tile `tile` holds elements [first, first + count) of tensor t in
 * one piece, 8-byte aligned, as lw_fetch reads them in place; 0: it does
 * not (t's pieces sorted). */
uint32_t lw_held_at(const lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile);
uint32_t lw_fetch(lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile, enum region_pref pref);
/* The same into a given tile address (count elements from there). */
bool lw_fetch_into(lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile, uint32_t addr);
/* A buffer for `count` elements of tensor t fetched onto `tile` (filled
 * by lw_fetch_into): kept for the run for a constant not placed yet (its
 * data is loaded with the executable), else the op's scratch. */
uint32_t lw_fetch_buffer(lowering *lw, int t, uint64_t count, uint32_t tile, enum region_pref pref, const char *what);
bool lw_place_linear(lowering *lw, int out, uint64_t gran, uint32_t tiles, const char *what);
/* Variables kept in streaming memory (graph_tensor.in_streaming_memory,
 * lower_streaming.c): lw_streaming_plan after the tensors' roots are
 * known; before node i (in its phase) lw_streaming_load places and loads
 * those it reads that are not in tile memory; after it lw_streaming_store
 * stores back those no later node touches, in the order they were loaded
 * (each tile's buffer holds its pieces in that order, read and rewritten
 * every step), and frees their storage; lw_streaming_map puts them in the
 * tensor map (after the tensors in tile memory). */
bool lw_streaming_plan(lowering *lw);
bool lw_streaming_load(lowering *lw, int i);
bool lw_streaming_store(lowering *lw, int i);
bool lw_streaming_map(lowering *lw);
/* Tensor root t's storage back to its tiles now (the exchange and copies
 * pending before it in the program). */
bool lw_release_tensor(lowering *lw, int t);

/* Variable t placed (lower.c: linear pieces in whole rows, a convolution's
 * weights and state channels-last) on the current stage from lw->op_base,
 * with its initial values in the executable or without; or only the tiles
 * it would take counted in lw->op_tiles. */
enum variable_placing { LW_VARIABLE_WITH_INIT, LW_VARIABLE_EMPTY, LW_VARIABLE_TILES_ONLY };
bool lw_place_variable(lowering *lw, int t, enum variable_placing how);
uint64_t lw_gran_of(uint32_t eb);
/* Row-major strides (elements) of a shape. */
void lw_row_major_strides(const graph_shape *s, int64_t *stride);

/* Planning. */
/* The most bytes any tile of the current stage holds now: blocks kept for
 * the run and tensors' blocks, wherever they are, and the room held back
 * for its records and control program (or a guess at it; the library not
 * counted: lower_memory.c); the tile that holds them in *fullest, where
 * not NULL. */
uint64_t lw_fullest_tile(const lowering *lw, uint32_t *fullest);
/* The most elements of tensor t that one tile holds (the most one tile
 * sends when every element goes elsewhere); 0 while t is not placed. */
uint64_t lw_most_on_a_tile(const lowering *lw, int t);
/* What holds a tile: its bytes kept for the run, its ops' scratch, the
 * room held back and its largest live tensors, as "; ..." (empty when it
 * holds nothing). */
void lw_describe_holders(const lowering *lw, uint32_t tile, char *held, size_t size);
/* The bytes of every tile the kernel library takes (both regions). */
uint64_t lw_library_bytes(const lowering *lw);
/* Region 0 above its first 16 KiB element (which the library's code
 * fills): the most rows of A a matmul block may keep there (192 KiB on
 * GC200/Bow, 112 KiB on GC2). */
static inline uint64_t lw_region0_above_code(const lowering *lw)
{
    return ISA_REGION1_BASE - lw->mem_base - 16384u;
}
/* The room for an op's blocks on every tile of the current stage: for the
 * j-th largest free block of a tile in each region (room[r *
 * LW_ROOM_BLOCKS + j]), the least over the tiles; then each region's new
 * bytes (room[2 LW_ROOM_BLOCKS + r], the only room for blocks kept for the
 * run: constants are loaded there with the executable), the least over the
 * tiles. */
enum { LW_ROOM_BLOCKS = 4, LW_ROOM_SIZE = 2 * LW_ROOM_BLOCKS + 2 };
/* New bytes each region keeps back from ops' scratch while other room
 * holds it: for blocks kept for the run that later ops add (constants,
 * and at the end the vertex records and the control program). */
enum { LW_KEPT_RESERVE_BYTES = 24 * 1024 };
void lw_least_room(const lowering *lw, uint64_t room[LW_ROOM_SIZE]);
/* Every tile's room of this stage, each distinct one once (n of them,
 * LW_ROOM_SIZE words each; free v; false: out of host memory), with the
 * new bytes under each region's scratch floor counted whole, as scratch
 * takes them before it tries the other region: the least room is no
 * tile's own, and a tile with more room in one region takes its blocks
 * there and can find less in the other later (lw_blocks_fit on each). */
typedef struct lw_rooms {
    uint64_t *v;
    size_t n;
} lw_rooms;
bool lw_stage_rooms(const lowering *lw, lw_rooms *out);
/* Tile `tile`'s room for scratch the same way: its largest free block, and
 * the bytes of its LW_ROOM_BLOCKS largest in each region together. */
void lw_tile_free_room(const lowering *lw, uint32_t tile, uint64_t *largest, uint64_t *total);
/* The room a block of `bytes` takes in the planners' estimates: 8-byte
 * aligned, with the codelets' read slack and up to 16 bytes of alignment. */
static inline uint64_t lw_block_room(uint64_t bytes)
{
    return ALIGN8(bytes) + CODELET_READ_SLACK_BYTES + 16;
}
/* A block an op will take: bytes (0: none), the region it prefers, and
 * whether it is kept for the run (new bytes only); or, with `ends` k + 1,
 * the op giving back the scratch block it took at event k (nothing when
 * that took none). */
typedef struct lw_block_need {
    uint64_t bytes;
    enum region_pref pref;
    bool kept;
    int ends;
} lw_block_need;
/* Whether an op's blocks all fit the room, taken and given back in the
 * order of the events: each block with the codelets' read slack from the
 * smallest free block that holds it in the region it prefers, else in the
 * other (region 1 alone for NEED_REGION1), and given back to the block it
 * came from.  An estimate: lw_scratch_alloc takes the highest free block
 * that holds it, and blocks given back join their neighbours. */
bool lw_blocks_fit(const uint64_t room[LW_ROOM_SIZE], const lw_block_need *events, int n);
/* The same on one tile's room as lw_stage_rooms gives it (the floor's
 * slot first in each region): floor_first takes a scratch block from the
 * floor's slot where it holds it, as scratch_alloc takes the highest free
 * block, before the smallest other block that does. */
bool lw_blocks_fit_as(const uint64_t room[LW_ROOM_SIZE], const lw_block_need *events, int n, bool floor_first);
uint32_t lw_plan_tiles(const lowering *lw, uint64_t n, uint64_t gran, double cycles_per_element,
                       double fixed_cycles);
void lw_linear_split(uint64_t n, uint64_t gran, uint32_t tiles, uint64_t *lo, uint64_t *hi);
void lw_worker_split(uint64_t units, uint64_t *lo, uint64_t *hi);

/* Ops lowered in other files.  lw_matmul_input_layout: when `tensor` is
 * only the first operand of one matmul (not batched, not transposed), the
 * grid of that matmul's plan with A laid out for it, as
 * poplin::createMatMulInputLHS lays A out: block (i, l) of A (rows i mt
 * .., K l kt ..) spread evenly over the gn tiles (l gm + i) gn + j of the
 * op that take it, so that they gather it from each other (spread);
 * where the operands take more than an eighth of the tiles' memory, a plan
 * with K whole and each grid row's rows on its first tile, which reads
 * them in place and broadcasts them to the rest of the row (not spread). */
typedef struct lw_lhs_layout {
    uint32_t gm, gn, gk;
    uint64_t mt, kt;
    bool spread;
} lw_lhs_layout;
bool lw_matmul_input_layout(lowering *lw, int tensor, lw_lhs_layout *layout);
/* Whether graph input `tensor` feeds a convolution that wants it
 * channels-last (then it is placed in NHWC order). */
bool lw_conv_input_layout(const graph *g, int tensor);
/* Whether run-time tensor `tensor` of rank 4 with more than one kernel tap
 * is kept channels-last (perm 0, 2, 3, 1 as an image): convolution
 * weights [Cout, C, KH, KW] kept as [Cout, KH, KW, C] (a variable, the
 * optimizer's state of one, and element-wise results of them). */
bool lw_weights_channels_last(const graph *g, int tensor);
/* Whether tensor t is made by a Transpose of its last two axes that only
 * feeds MatMuls as their second operand (they read its input instead, and
 * the Transpose is not lowered). */
bool lw_transpose_into_matmul(const graph *g, int t);
/* Tensor t is a Cast of an f16 tensor to f32 read only as the weights of
 * matmuls and convolutions (B of MatMul, Gemm, FusedMatMul; W of Conv,
 * FusedConv, ConvTranspose), directly or through a Transpose folded into
 * a MatMul's B: they read the f16 tensor (an f16 weight, train.c) and the
 * Cast is never made (lower_matmul.c). */
bool lw_cast_into_matmul(const graph *g, int t);
bool lw_matmul_supported(const graph *g, const graph_node *n, const char **why);
bool lw_lower_matmul(lowering *lw, const graph_node *n, int index);
/* A gradient of a convolution as the AMP computes it: lower_conv_grad.c
 * describes the node, lower_matmul.c plans and lowers the matmul.
 *   - the data gradient (weights false): the convolution, stride 1, of the
 *     image [N, C, H, W] (channels-last) with its pixels dh, dw apart and
 *     zeros between, by the weights `other` [C, Cout, KH, KW] read flipped,
 *     plus `bias` (-1 none): result [N, Cout, OH, OW] channels-last;
 *   - the weight gradient: dW [Cout, C, KH, KW] (kept as [Cout, KH, KW, C])
 *     of the convolution of the image by a window of stride sh, sw and
 *     pads ph, pw, `other` being dY [N, Cout, OH, OW] (channels-last). */
typedef struct lw_conv_grad {
    bool weights, f32_inputs;
    int image, other, bias, result;
    int64_t n_img, c_in, h, w, dh, dw;
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t oh, ow, c_out;
} lw_conv_grad;
bool lw_lower_conv_grad(lowering *lw, const graph_node *n, int index, const lw_conv_grad *cg);
/* ConvTranspose and ConvWeightGrad (lower_conv_grad.c). */
bool lw_conv_transpose_supported(const graph *g, const graph_node *n, const char **why);
bool lw_lower_conv_transpose(lowering *lw, const graph_node *n, int index);
bool lw_conv_weight_grad_supported(const graph *g, const graph_node *n, const char **why);
bool lw_lower_conv_weight_grad(lowering *lw, const graph_node *n, int index);
/* Gather with indices computed at run time (lower_gather.c). */
bool lw_lower_gather(lowering *lw, const graph_node *n, int index);
/* Comparisons, Where, logical ops and integer arithmetic (lower_logic.c):
 * whether the node is one of them (then the two others decide and lower
 * it; the f32 element-wise ops of lower.c take the rest). */
bool lw_logic_handles(const graph *g, const graph_node *n);
bool lw_logic_supported(const graph *g, const graph_node *n, const char **why);
bool lw_lower_logic(lowering *lw, const graph_node *n, int index);
/* lower_data.c: data movement in runs (Transpose, Slice, Concat, Expand,
 * Gather with constant indices), casts, reductions over the last axes,
 * and the exact forms of Pow (lw_pow_form: a kernel_unary function, -2 for
 * x * x, -3 for x itself, -1 for none). */
bool lw_lower_runs(lowering *lw, const graph_node *n, int index);
bool lw_lower_cast(lowering *lw, const graph_node *n, int index);
bool lw_lower_reduce(lowering *lw, const graph_node *n, int index);
int lw_pow_form(const graph *g, const graph_node *n);
bool lw_lower_pool(lowering *lw, const graph_node *n, int index);
/* The gradients of MaxPool (lower_pool_grad.c) and of the embedding
 * lookup, a scatter-add into the table's rows (lower_gather.c). */
bool lw_lower_maxpool_grad(lowering *lw, const graph_node *n, int index);
bool lw_lower_gather_grad(lowering *lw, const graph_node *n, int index);
/* x + scale y over the output's pieces, in place over x where it may
 * (lower_elementwise.c; vtx_scaled_add_*). */
bool lw_lower_scaled_add(lowering *lw, const graph_node *n, int index);
/* An Add of a micro-batch's gradient into a running sum in place
 * (graph_node.accumulates) that can run over ranges of its elements:
 * f32, the sum's shape, neither operand channels-last. */
bool lw_accumulate_range_ok(const lowering *lw, const graph_node *n);
/* Such an Add (node `index`) over its elements [e0, e1) (even, or the
 * end): the output placed over the sum first where it is not yet; the
 * gradient's elements there fetched to the sum's tiles and added, in
 * rounds of as much of each of the sum's pieces as the tiles have room
 * to copy. */
bool lw_accumulate_range(lowering *lw, const graph_node *n, int index, uint64_t e0, uint64_t e1);
/* Tensor t's blocks from its from-th on given back before its last
 * reader, the exchange phase ended first (a serialised matmul's part of
 * its output, once added into a running sum). */
bool lw_release_blocks_from(lowering *lw, int t, size_t from);
/* Node i's op added to the op map (named by the node, else "#i"); -1,
 * failed, when out of host memory. */
int32_t lw_node_op(lowering *lw, int i);
bool lw_lower_adam_updater(lowering *lw, const graph_node *n, int index);
/* A stage's arena: `need` bytes as measured and the margin given them
 * (a quarter and 4 KB; lower_section.c, lower_graph). */
static inline uint32_t lw_arena_margin(uint32_t need)
{
    return need + need / 4 + 4096;
}

/* Zeros: nothing where the node is; before the first node that reads
 * it (lw_place_zeros, lower_graph), storage that starts as zeros
 * (lw_tensor_alloc's zeroed) laid out as the Zeros' own input where that
 * is placed (the weight of a gradient sum), else as the reader's first
 * placed input of as many elements (an accumulating Add's micro-batch
 * gradient), its pieces in one block a tile; else in even runs
 * (lower_memory.c). */
bool lw_lower_zeros(lowering *lw, const graph_node *n, int index);
bool lw_place_zeros(lowering *lw, const graph_node *n);
/* Storage for tensor t's pieces laid out as `like` (n pieces: tile,
 * count): one block a tile (lw_tensor_alloc, in the order the tiles first
 * come), the tile's pieces one after the other in it, 8-byte aligned;
 * each piece's address in addr[k] (0 for a piece of no elements on a tile
 * that has no block).  A Zeros' storage, a section's stash. */
bool lw_blocks_for_pieces(lowering *lw, int t, const piece *like, size_t n, enum region_pref pref, bool zeroed,
                          const char *what, uint32_t *addr);
/* ReplicatedAllReduce: a ring over the replicas (lower_collectives.c). */
bool lw_lower_all_reduce(lowering *lw, const graph_node *n, int index);
/* IpuCopy: the input's pieces sent to the same tiles of the node's stage,
 * in the exchange phase being built (lower_collectives.c). */
bool lw_lower_ipu_copy(lowering *lw, const graph_node *n, int index);
/* Output `out` of node `index` in the storage of its input `in` where this
 * node is the last to read it (`other`: another operand, -1 none, that
 * must not share it); false when it may not (lower_elementwise.c). */
bool lw_place_in_place(lowering *lw, int out, int in, int other, int index);
/* Variable r's new value `out` (its update) computed by node `index`, no
 * later node reading r: out may be written over r's pieces. */
bool lw_variable_updated_in_place(lowering *lw, int r, int out, int index);
/* Ops that keep their image channels-last (NHWC): convolutions and pools. */
bool lw_channels_last_op(graph_op op);
/* Tensor t's storage order: NCHW seen as NHWC (perm 0, 2, 3, 1) when
 * permuted, else its own (the perm still set, for the views that copy it). */
void lw_keep_channels_last(ltensor *t, bool permuted);
/* The tensors kept channels-last (lower_layout.c), per tensor; malloc'd. */
bool *lw_nhwc_set(const graph *g);
bool lw_channels_last_ok(const graph *g, const graph_node *n, const char **why);
/* Shape s is one value per channel of the rank-4 image shape img ([C, 1, 1]
 * or [1, C, 1, 1]), which element-wise ops broadcast over an image kept
 * channels-last as a row of C over its pixels. */
bool lw_per_channel(const graph_shape *s, const graph_shape *img);
/* After ConvWeightGrad n: its result, computed as [Cout, KH, KW, C], turned
 * into ONNX order where its readers need that (lower_layout.c). */
bool lw_weight_grad_to_onnx_order(lowering *lw, const graph_node *n, int index);
/* Reduction n reads its rank-4 image channels-last (over N, H and W). */
bool lw_reduce_reads_nhwc(const graph *g, const graph_node *n);

/* Geometry and compute sets for the files that lower one kind of op. */
/* Broadcast strides (elements) of an input of shape `in` against the output
 * shape `out`, aligned on the right; 0 where the input's dimension is 1 or
 * missing. */
void lw_broadcast_strides(const graph_shape *in, const graph_shape *out, int64_t *stride);
/* The input's element offset (with those strides) at the start of output
 * row r (rows of the output's last dimension; lower_logic.c). */
int64_t lw_row_offset(const graph_shape *out, const int64_t *stride, int64_t r);
/* A compute set of the six workers on a tile (lower_workers.c): their
 * vertex records (each `words` words; NULL when they did not fit, lw
 * failed) and worker w's share [lo[w], hi[w]) of `units` (lw_worker_split:
 * the first units % 6 take one more).  Fill the records between
 * lw_workers_begin (false when lw has failed, the records then perhaps
 * NULL) and lw_workers_run, which steps the tile into the compute set. */
/* A record's words rounded up so that records stay 8-byte aligned. */
static inline uint32_t lw_padded_words(uint32_t words) { return (words + 1u) & ~1u; }

typedef struct worker_set {
    uint32_t *rec[CODELET_WORKERS];
    uint64_t lo[CODELET_WORKERS], hi[CODELET_WORKERS];
    uint32_t off, words;
} worker_set;
bool lw_workers_begin(lowering *lw, uint32_t tile, uint32_t words, uint64_t units, worker_set *ws);
bool lw_workers_run(lowering *lw, uint32_t tile, uint32_t entry, const worker_set *ws);
/* The byte offset of worker w's record in the tile's record area. */
static inline uint32_t lw_worker_record(const worker_set *ws, int w)
{
    return ws->off + (uint32_t)w * lw_padded_words(ws->words) * 4;
}

#endif
