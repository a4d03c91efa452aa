/*
 * lower.c — the planner and the lowering (lower.h): graph in, executable
 * out.
 *
 * The lowering keeps, per tile, a control program (words of steps for
 * workloads/codelets/supervisor.S), the vertex records its steps point at,
 * the transfers of the exchange phase being built, and two bump allocators
 * (region 1 from the end of the kernel library's data, region 0 from the
 * first 16 KiB element past the library's code: workers' data accesses
 * must avoid the element their code runs from, ISA2 §4.1.6.2).  Memory is
 * not reused within a program: every tensor keeps its own bytes, which is
 * what a single-pass inference of one layer needs and keeps every
 * intermediate tensor readable after the run.
 *
 * Per tensor it keeps the pieces (lower.h).  An op chooses the tiles and
 * pieces of its output; for every input it asks `fetch` for the elements a
 * tile needs at a tile address: when one local piece covers them that is
 * the piece itself, a constant is placed there at compile time, and
 * anything else is received from the tiles that hold it in the op's
 * exchange phase (pieces on the tile itself are copied locally with
 * vtx_copy after the phase).
 */
#include "lower.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange/exchange.h"
#include "lower_internal.h"
#include "ops_impl.h"
#include "isa/fp16.h"
#include "isa/isa.h"
#include "sim/program/tensor_map.h"
#include "workloads/codelets/codelet_library.h"
#include "workloads/codelets/abi.h"

/* ---- small utilities --------------------------------------------------- */

bool lw_fail(lowering *lw, const char *fmt, ...)
{
    if (!lw->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lw->err, lw->err_size, fmt, ap);
        va_end(ap);
        lw->failed = true;
    }
    return false;
}

static bool is_view(graph_op op);

static bool lw_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

bool lw_push_word(lowering *lw, word_vec *v, uint32_t w)
{
    if (!lw_grow((void **)&v->w, &v->cap, v->n + 1, sizeof *v->w))
        return lw_fail(lw, "out of host memory");
    v->w[v->n++] = w;
    return true;
}

const char *lw_node_label(const graph_node *n, int index, char *buf, size_t size)
{
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s)", n->name, graph_ops[n->op].name);
    else
        snprintf(buf, size, "node #%d (%s)", index, graph_ops[n->op].name);
    return buf;
}

/* ---- tile memory --------------------------------------------------------- */

uint32_t lw_global_tile(const lowering *lw, uint32_t i)
{
    return (i / lw->tiles) * lw->tiles_per_chip + i % lw->tiles;
}

uint32_t lw_tile_of(lowering *lw, uint32_t i)
{
    if (i + 1 > lw->op_tiles)
        lw->op_tiles = i + 1;
    return lw->stage * lw->tiles + (lw->op_base + i) % lw->tiles;
}


static uint32_t lw_tile_used_bytes(const lowering *lw, const ltile *t)
{
    return (t->region0_kept_end - lw->region0_start) + (t->region1_kept_end - lw->region1_start) + (ISA_REGION1_BASE - t->region0_scratch_floor) +
           (lw->mem_end - t->region1_scratch_floor);
}

/* bytes of tile memory for `what`, aligned to `align` (a power of two, at
 * least 8), with
 * the codelets' read slack after it.  Returns 0 and fails when it does not
 * fit. */
/* "does not fit", naming the tile, the bytes and what they were for. */
static uint32_t no_room(lowering *lw, uint32_t tile, uint64_t need, const char *what)
{
    uint32_t total = lw->mem_end - ISA_MEMORY_BASE;
    lw_fail(lw, "%s: does not fit: tile %u needs %llu bytes more for %s, with %u of its %u bytes in use "
            "(%u bytes are the kernel library)", lw->g->source, tile, (unsigned long long)need, what,
            lw_tile_used_bytes(lw, &lw->tile[tile]), total,
            (lw->region0_start - ISA_MEMORY_BASE) + (lw->region1_start - ISA_REGION1_BASE));
    return 0;
}

/* Note the block of `bytes` at addr among the tile's blocks (one section
 * each stretch of them in the executable, close_tile). */
static bool note_block(lowering *lw, ltile *t, uint32_t addr, uint64_t bytes)
{
    if (!lw_grow((void **)&t->allocs, &t->cap_allocs, t->n_allocs + 1, sizeof *t->allocs))
        return lw_fail(lw, "out of host memory");
    t->allocs[t->n_allocs++] = (data_item){ .addr = addr, .size = (uint32_t)ALIGN8(bytes ? bytes : 8) };
    return true;
}

/* A new block of `need` bytes aligned to a + 1 in one region, above the
 * tile's persistent blocks; 0 when the region has no room. */
static uint32_t bump_alloc(lowering *lw, uint32_t tile, uint64_t bytes, uint64_t need, uint32_t a, bool region0)
{
    ltile *t = &lw->tile[tile];
    uint32_t *next = region0 ? &t->region0_kept_end : &t->region1_kept_end;
    /* below every scratch block any op has used (lower_internal.h) */
    uint32_t end = region0 ? t->region0_scratch_floor : t->region1_scratch_floor;
    uint64_t at = ((uint64_t)*next + a) & ~(uint64_t)a;
    if (at + need > end)
        return 0;
    *next = (uint32_t)(at + need);
    return note_block(lw, t, (uint32_t)at, bytes) ? (uint32_t)at : 0;
}

uint32_t lw_tile_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                           const char *what)
{
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1;
    for (int attempt = 0; attempt < 2 && !lw->failed; attempt++) {
        uint32_t at = bump_alloc(lw, tile, bytes, need, a, (pref == PREFER_REGION0) == (attempt == 0));
        if (at)
            return at;
    }
    return lw->failed ? 0 : no_room(lw, tile, need, what);
}

uint32_t lw_scratch_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                          const char *what)
{
    ltile *t = &lw->tile[tile];
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1;
    for (int attempt = 0; attempt < 2; attempt++) {
        bool r0 = (pref == PREFER_REGION0) == (attempt == 0);
        uint32_t *low = r0 ? &t->region0_scratch_low : &t->region1_scratch_low, *floor = r0 ? &t->region0_scratch_floor : &t->region1_scratch_floor;
        uint32_t bottom = r0 ? t->region0_kept_end : t->region1_kept_end;
        if (*low < need)
            continue;
        uint64_t at = ((uint64_t)*low - need) & ~(uint64_t)a;
        if (at >= bottom) {
            *low = (uint32_t)at;
            if (at < *floor)
                *floor = (uint32_t)at;
            return (uint32_t)at;
        }
    }
    return no_room(lw, tile, need, what);
}

/* The op is over: its scratch blocks are free for the next op. */
static void release_scratch(lowering *lw)
{
    for (uint32_t i = 0; i < lw->program_tiles; i++) {
        lw->tile[i].region0_scratch_low = ISA_REGION1_BASE;
        lw->tile[i].region1_scratch_low = lw->mem_end;
    }
}

/* A compute set of vtx_fill writing `bytes` (a multiple of 8) of zeros
 * from addr on tile `tile`. */
static bool fill_zeros(lowering *lw, uint32_t tile, uint32_t addr, uint64_t bytes)
{
    uint32_t *recs[CODELET_WORKERS];
    uint32_t off = lw_six_records(lw, tile, KERNEL_FILL_WORDS, recs);
    if (lw->failed)
        return false;
    uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS];
    lw_worker_split(bytes / 8, wl, wh);
    for (int w = 0; w < CODELET_WORKERS; w++)
        kernel_fill_record(recs[w], addr + (uint32_t)(wl[w] * 8), (uint32_t)((wh[w] - wl[w]) * 8));
    return lw_step_run(lw, tile, lw->kernels.vtx_fill, off, KERNEL_FILL_WORDS);
}

uint32_t lw_scratch_zeroed(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                           const char *what)
{
    bytes = (bytes + 7) & ~(uint64_t)7;
    uint32_t a = lw_scratch_alloc(lw, tile, bytes, pref, align, what);
    if (!a || !fill_zeros(lw, tile, a, bytes))
        return 0;
    return a;
}

/* ---- tensor storage and its reuse ---------------------------------------- */

/* Insert free block b at position k of tile t's list. */
static bool insert_free(lowering *lw, ltile *t, size_t k, mem_block b)
{
    if (!lw_grow((void **)&t->free, &t->cap_free, t->n_free + 1, sizeof *t->free))
        return lw_fail(lw, "out of host memory");
    memmove(t->free + k + 1, t->free + k, (t->n_free - k) * sizeof *t->free);
    t->free[k] = b;
    t->n_free++;
    return true;
}

/* First fit of `need` bytes aligned to a + 1 among the released blocks of
 * one region; 0 if none holds it. */
static uint32_t take_released(lowering *lw, ltile *t, uint64_t need, uint32_t a, bool region0)
{
    for (size_t k = 0; k < t->n_free; k++) {
        mem_block *f = &t->free[k];
        if ((f->addr < ISA_REGION1_BASE) != region0)
            continue;
        uint64_t at = ((uint64_t)f->addr + a) & ~(uint64_t)a, end = (uint64_t)f->addr + f->size;
        if (at + need > end)
            continue;
        mem_block tail = { f->tile, (uint32_t)(at + need), (uint32_t)(end - at - need) };
        f->size = (uint32_t)(at - f->addr);
        if (f->size) {
            if (tail.size && !insert_free(lw, t, k + 1, tail))
                return 0;
        } else if (tail.size) {
            *f = tail;
        } else {
            memmove(f, f + 1, (t->n_free - k - 1) * sizeof *f);
            t->n_free--;
        }
        return (uint32_t)at;
    }
    return 0;
}

/* Give block b back to its tile, merged with its neighbours in the same
 * region. */
static bool give_back(lowering *lw, mem_block b)
{
    ltile *t = &lw->tile[b.tile];
    size_t k = 0;
    while (k < t->n_free && t->free[k].addr < b.addr)
        k++;
    bool r0 = b.addr < ISA_REGION1_BASE;
    if (k > 0 && t->free[k - 1].addr + t->free[k - 1].size == b.addr &&
        (t->free[k - 1].addr < ISA_REGION1_BASE) == r0) {
        k--;
        t->free[k].size += b.size;
    } else if (!insert_free(lw, t, k, b)) {
        return false;
    }
    mem_block *f = &t->free[k];
    if (k + 1 < t->n_free && f->addr + f->size == t->free[k + 1].addr &&
        (t->free[k + 1].addr < ISA_REGION1_BASE) == r0) {
        f->size += t->free[k + 1].size;
        memmove(f + 1, f + 2, (t->n_free - k - 2) * sizeof *f);
        t->n_free--;
    }
    return true;
}

uint32_t lw_tensor_alloc(lowering *lw, int tensor, uint32_t tile, uint64_t bytes, enum region_pref pref,
                         uint32_t align, bool zeroed, const char *what)
{
    ltile *t = &lw->tile[tile];
    ltensor *owner = &lw->tensor[lw->tensor[tensor].root];
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1, at = 0;
    bool reused = false;
    /* In the preferred region a released block, else a new one; then the
     * same in the other. */
    for (int attempt = 0; attempt < 2 && !at && !lw->failed; attempt++) {
        bool r0 = (pref == PREFER_REGION0) == (attempt == 0);
        reused = (at = take_released(lw, t, need, a, r0)) != 0;
        if (!at && !lw->failed)
            at = bump_alloc(lw, tile, bytes, need, a, r0);      /* zeros when loaded */
    }
    if (!at)
        return lw->failed ? 0 : no_room(lw, tile, need, what);
    if (reused) {
        /* in the executable as part of the block it was (close_tile merges them) */
        if (!note_block(lw, t, at, bytes))
            return 0;
        lw->rep->reused_bytes += need;
        if (zeroed && !fill_zeros(lw, tile, at, ALIGN8(bytes)))
            return 0;
    }
    if (!lw_grow((void **)&owner->blocks, &owner->cap_blocks, owner->n_blocks + 1, sizeof *owner->blocks)) {
        lw_fail(lw, "out of host memory");
        return 0;
    }
    owner->blocks[owner->n_blocks++] = (mem_block){ tile, at, (uint32_t)need };
    return at;
}

/* Which tensors share storage — a view's output is its input's pieces, and
 * a Transpose folded into the MatMul reading it is never made (the MatMul
 * reads its input) — and the last node reading each storage. */
static void tensor_roots(lowering *lw)
{
    const graph *g = lw->g;
    for (int t = 0; t < g->n_tensors; t++) {
        lw->tensor[t].root = t;
        lw->last_reader[t] = -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        int out = n->n_outputs ? n->outputs[0] : -1;
        if (out >= 0 && n->n_inputs &&
            (is_view(n->op) || (n->op == GRAPH_OP_POW && lw_pow_form(g, n) == -3) ||
             (n->op == GRAPH_OP_TRANSPOSE && lw_transpose_into_matmul(g, out))))
            lw->tensor[out].root = lw->tensor[n->inputs[0]].root;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0)
                lw->last_reader[lw->tensor[n->inputs[k]].root] = i;
    }
    for (int i = 0; i < g->n_outputs; i++)
        lw->last_reader[lw->tensor[g->outputs[i]].root] = INT_MAX;
}

/* After node i: the storage of every tensor it was the last to read (or
 * wrote and nobody reads) goes back to its tiles, once the exchange and
 * copies it left pending are in the program. */
static bool release_dead(lowering *lw, int i)
{
    const graph_node *n = &lw->g->nodes[i];
    bool ended = false;
    for (int k = 0; k < n->n_inputs + n->n_outputs && !lw->failed; k++) {
        int t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
        if (t < 0)
            continue;
        ltensor *r = &lw->tensor[lw->tensor[t].root];
        if (r->released || lw->last_reader[lw->tensor[t].root] > i)
            continue;
        if (!ended && !lw_end_phase(lw))
            return false;
        ended = true;
        for (size_t b = 0; b < r->n_blocks; b++)
            if (!give_back(lw, r->blocks[b]))
                return false;
        r->released = true;
    }
    return !lw->failed;
}

bool lw_tile_data(lowering *lw, uint32_t tile, uint32_t addr, const void *bytes, uint32_t size,
                      const char *name)
{
    ltile *t = &lw->tile[tile];
    if (!lw_grow((void **)&t->data, &t->cap_data, t->n_data + 1, sizeof *t->data))
        return lw_fail(lw, "out of host memory");
    data_item *d = &t->data[t->n_data];
    memset(d, 0, sizeof *d);
    d->addr = addr;
    d->size = size;
    if (bytes) {
        d->bytes = malloc(size ? size : 1);
        if (!d->bytes)
            return lw_fail(lw, "out of host memory");
        memcpy(d->bytes, bytes, size);
    }
    snprintf(d->name, sizeof d->name, "%s", name);
    t->n_data++;
    return true;
}

/* ---- steps --------------------------------------------------------------- */

/* Append a record of `words` words (zero-filled) and return its byte
 * offset in the tile's record area; *rec points at its words (valid until
 * the next record). */
/* A record's words rounded up so that records stay 8-byte aligned. */
static uint32_t padded_words(uint32_t words) { return (words + 1u) & ~1u; }

uint32_t lw_new_record(lowering *lw, uint32_t tile, uint32_t words, uint32_t **rec)
{
    ltile *t = &lw->tile[tile];
    size_t at = t->records.n;
    size_t padded = padded_words(words);
    if (!lw_grow((void **)&t->records.w, &t->records.cap, at + padded, sizeof(uint32_t))) {
        lw_fail(lw, "out of host memory");
        *rec = NULL;
        return 0;
    }
    memset(t->records.w + at, 0, padded * sizeof(uint32_t));
    t->records.n += padded;
    *rec = t->records.w + at;
    return (uint32_t)(at * 4);
}

static bool lw_patch_here(lowering *lw, uint32_t tile)
{
    ltile *t = &lw->tile[tile];
    if (!lw_grow((void **)&t->patch, &t->cap_patch, t->n_patch + 1, sizeof *t->patch))
        return lw_fail(lw, "out of host memory");
    t->patch[t->n_patch++] = t->steps.n;
    return true;
}

/* runall of `entry` on the six records of lw_six_records at offset rec0,
 * each of record_words words. */
bool lw_step_run(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec0, uint32_t record_words)
{
    ltile *t = &lw->tile[tile];
    uint32_t rec_bytes = padded_words(record_words) * 4;
    lw_push_word(lw, &t->steps, lw->kernels.ctl_run);
    lw_push_word(lw, &t->steps, entry);
    lw_patch_here(lw, tile);
    lw_push_word(lw, &t->steps, rec0);
    lw_push_word(lw, &t->steps, rec_bytes);
    lw->rep->compute_sets++;
    return !lw->failed;
}

bool lw_step_call(lowering *lw, uint32_t tile, uint32_t entry, uint32_t rec)
{
    ltile *t = &lw->tile[tile];
    lw_push_word(lw, &t->steps, lw->kernels.ctl_call);
    lw_push_word(lw, &t->steps, entry);
    lw_patch_here(lw, tile);
    lw_push_word(lw, &t->steps, rec);
    lw->rep->compute_sets++;
    return !lw->failed;
}

/* Six records of `words` words for one compute set; returns the offset of
 * the first, and recs[k] the words of worker k's. */
uint32_t lw_six_records(lowering *lw, uint32_t tile, uint32_t words, uint32_t *recs[CODELET_WORKERS])
{
    uint32_t padded = padded_words(words);
    uint32_t *all;
    uint32_t off = lw_new_record(lw, tile, padded * CODELET_WORKERS, &all);
    for (int k = 0; k < CODELET_WORKERS; k++)
        recs[k] = all ? all + (size_t)k * padded : NULL;
    return off;
}

/* ---- exchange ------------------------------------------------------------ */

bool lw_add_transfer(lowering *lw, uint32_t from, uint32_t src_addr, uint32_t to, uint32_t dst_addr,
                         uint32_t bytes)
{
    ltile *s = &lw->tile[from], *r = &lw->tile[to];
    if (!lw_grow((void **)&s->sends, &s->cap_sends, s->n_sends + 1, sizeof *s->sends) ||
        !lw_grow((void **)&r->recvs, &r->cap_recvs, r->n_recvs + 1, sizeof *r->recvs))
        return lw_fail(lw, "out of host memory");
    s->sends[s->n_sends++] = (xfer){ src_addr, bytes, to, (uint32_t)r->n_recvs, -1, 0, true };
    r->recvs[r->n_recvs++] = (xfer){ dst_addr, bytes, from, (uint32_t)(s->n_sends - 1), -1, 0, true };
    lw->phase_has_transfers = true;
    lw->rep->exchange_bytes += bytes;
    lw->phase_bytes += bytes;
    return true;
}

/* A receive from the host (or streaming memory): endpoint is the stream. */
bool lw_note_peer(lowering *lw, uint32_t tile, enum peer_kind kind)
{
    ltile *t = &lw->tile[tile];
    if (!lw_grow((void **)&t->peers, &t->cap_peers, t->n_peers + 1, sizeof *t->peers))
        return lw_fail(lw, "out of host memory");
    t->peers[t->n_peers].word = t->steps.n - 1;
    t->peers[t->n_peers++].kind = (uint8_t)kind;
    return true;
}

bool lw_add_host_receive(lowering *lw, uint32_t tile, uint32_t addr, uint32_t bytes, uint32_t endpoint)
{
    ltile *r = &lw->tile[tile];
    if (!lw_grow((void **)&r->recvs, &r->cap_recvs, r->n_recvs + 1, sizeof *r->recvs))
        return lw_fail(lw, "out of host memory");
    r->recvs[r->n_recvs++] = (xfer){ addr, bytes, endpoint, 0, -1, 0, true };
    lw->phase_has_transfers = true;
    return true;
}

bool lw_add_local_copy(lowering *lw, uint32_t tile, uint32_t src, uint32_t dst, uint32_t bytes)
{
    ltile *t = &lw->tile[tile];
    lw_push_word(lw, &t->copies, src);
    lw_push_word(lw, &t->copies, dst);
    lw_push_word(lw, &t->copies, bytes);
    return !lw->failed;
}

/* The copies a tile owes itself, six at a time. */
static bool lw_flush_copies(lowering *lw, uint32_t tile)
{
    ltile *t = &lw->tile[tile];
    size_t n = t->copies.n / 3;
    for (size_t base = 0; base < n; base += CODELET_WORKERS) {
        uint32_t *recs[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, tile, KERNEL_COPY_WORDS, recs);
        if (lw->failed)
            return false;
        for (size_t k = 0; k < CODELET_WORKERS && base + k < n; k++) {
            const uint32_t *c = t->copies.w + (base + k) * 3;
            kernel_copy_record(recs[k], c[0], c[1], c[2]);
        }
        lw_step_run(lw, tile, lw->kernels.vtx_copy, off, KERNEL_COPY_WORDS);
    }
    t->copies.n = 0;
    return !lw->failed;
}

/* When every receiver of a tile's sends in this phase gets the same
 * pieces in the same order (a grid row's rows of A, a bias everyone
 * needs), the sends can be broadcasts: the data leave the tile once and
 * every tile with a matching receive takes them (exchange.h).  Returns the
 * number of distinct pieces (the first `groups` sends are them, in order),
 * or 0 when the sends must stay point to point. */
static size_t broadcast_groups(const ltile *t)
{
    if (t->n_sends < 2)
        return 0;
    /* The pieces are the sends to the first receiver, in order. */
    uint32_t first = t->sends[0].peer;
    size_t groups = 0;
    while (groups < t->n_sends && t->sends[groups].peer == first)
        groups++;
    if (t->n_sends % groups)
        return 0;
    for (size_t k = groups; k < t->n_sends; k++) {
        const xfer *a = &t->sends[k], *b = &t->sends[k % groups];
        if (a->addr != b->addr || a->bytes != b->bytes)
            return 0;
        if (k % groups && a->peer != t->sends[k - 1].peer)
            return 0;
        if (!(k % groups)) {
            /* A new receiver: not one seen before. */
            for (size_t j = 0; j < k; j += groups)
                if (t->sends[j].peer == a->peer)
                    return 0;
        }
    }
    return t->n_sends / groups > 1 ? groups : 0;
}

/* Multicast groups of sender tile i (exchange.h): a piece (an address and
 * size) sent to several tiles, each once, goes out once to a group of the
 * tiles that take it — one group per distinct set of receivers, at most
 * XCH_MULTICAST_GROUPS; other pieces stay point to point.  Marks the sends
 * (group, order, emit) and their receives on the other tiles. */
static bool multicast_groups(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    size_t n = t->n_sends;
    size_t *idx = malloc((n + 1) * sizeof *idx);
    uint32_t *set_start = malloc(XCH_MULTICAST_GROUPS * sizeof *set_start);
    uint32_t *set_len = malloc(XCH_MULTICAST_GROUPS * sizeof *set_len);
    uint32_t *peers = malloc((n + 1) * sizeof *peers);
    if (!idx || !set_start || !set_len || !peers) {
        free(idx); free(set_start); free(set_len); free(peers);
        return lw_fail(lw, "out of host memory");
    }
    for (size_t k = 0; k < n; k++)
        idx[k] = k;
    /* Sort by (address, bytes, receiver, position): a piece's sends are
     * together, its receivers in order. */
    const xfer *sv = t->sends;
    {
        /* Bottom-up merge sort (the comparison needs the tile's sends). */
        size_t *tmp = malloc((n + 1) * sizeof *tmp);
        if (!tmp) {
            free(idx); free(set_start); free(set_len); free(peers);
            return lw_fail(lw, "out of host memory");
        }
        for (size_t w = 1; w < n; w *= 2) {
            for (size_t lo = 0; lo < n; lo += 2 * w) {
                size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
                size_t a = lo, b = mid, o = lo;
                while (a < mid || b < hi) {
                    bool take_a = b >= hi;
                    if (a < mid && b < hi) {
                        const xfer *x = &sv[idx[a]], *y = &sv[idx[b]];
                        take_a = x->addr != y->addr ? x->addr < y->addr
                               : x->bytes != y->bytes ? x->bytes < y->bytes
                               : x->peer != y->peer ? x->peer < y->peer : idx[a] < idx[b];
                    }
                    tmp[o++] = take_a ? idx[a++] : idx[b++];
                }
            }
            memcpy(idx, tmp, n * sizeof *idx);
        }
        free(tmp);
    }
    uint32_t groups = 0, n_peers = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && sv[idx[b]].addr == sv[idx[a]].addr && sv[idx[b]].bytes == sv[idx[a]].bytes)
            b++;
        bool distinct = b - a >= 2;
        for (size_t k = a + 1; k < b && distinct; k++)
            distinct = sv[idx[k]].peer != sv[idx[k - 1]].peer;
        if (distinct) {
            /* The group of this set of receivers: an existing one or a new one. */
            uint32_t len = (uint32_t)(b - a), g = 0;
            for (; g < groups; g++) {
                if (set_len[g] != len)
                    continue;
                size_t k = 0;
                while (k < len && peers[set_start[g] + k] == sv[idx[a + k]].peer)
                    k++;
                if (k == len)
                    break;
            }
            if (g == groups && groups < XCH_MULTICAST_GROUPS) {
                set_start[g] = n_peers;
                set_len[g] = len;
                for (size_t k = a; k < b; k++)
                    peers[n_peers++] = sv[idx[k]].peer;
                groups++;
            }
            if (g < groups) {
                size_t first = idx[a];
                for (size_t k = a; k < b; k++)
                    if (idx[k] < first)
                        first = idx[k];
                for (size_t k = a; k < b; k++) {
                    xfer *x = &t->sends[idx[k]];
                    x->group = (int32_t)g;
                    x->order = (uint32_t)first;
                    x->emit = idx[k] == first;
                    xfer *r = &lw->tile[x->peer].recvs[x->mate];
                    r->group = (int32_t)g;
                    r->order = (uint32_t)first;
                }
            }
        }
        a = b;
    }
    free(idx);
    free(set_start);
    free(set_len);
    free(peers);
    return true;
}

/* Receives of a tile in the order they are posted: point to point and
 * host ones as they came, then multicast ones by (sender, group, the
 * sender's order), the order the senders issue them. */
static int cmp_multicast_recv(const void *a, const void *b)
{
    const xfer *x = *(const xfer *const *)a, *y = *(const xfer *const *)b;
    if (x->peer != y->peer) return x->peer < y->peer ? -1 : 1;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* End the exchange phase under construction: on every tile the receives
 * (posted first, so no stream waits for its xrecv), the sends, and a chip
 * sync; then the local copies.  A sender whose pieces all go to the same
 * tiles broadcasts them; otherwise pieces taken by several tiles go out
 * once each to a multicast group.  A phase with no transfers adds nothing. */
bool lw_end_phase(lowering *lw)
{
    if (lw->phase_has_transfers) {
        size_t *bcast = calloc(lw->program_tiles + 1, sizeof *bcast);
        if (!bcast)
            return lw_fail(lw, "out of host memory");
        for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++) {
            bcast[i] = broadcast_groups(&lw->tile[i]);
            if (!bcast[i] && lw->tile[i].n_sends > 1)
                multicast_groups(lw, i);
        }
        const xfer **mc = NULL;
        size_t cap_mc = 0;
        for (uint32_t i = 0; i < lw->program_tiles && !lw->failed; i++) {
            ltile *t = &lw->tile[i];
            size_t n_mc = 0;
            for (size_t k = 0; k < t->n_recvs; k++) {
                const xfer *rv = &t->recvs[k];
                if (rv->group >= 0) {
                    if (!lw_grow((void **)&mc, &cap_mc, n_mc + 1, sizeof *mc))
                        break;
                    mc[n_mc++] = rv;
                    continue;
                }
                lw_push_word(lw, &t->steps, lw->kernels.ctl_recv);
                lw_push_word(lw, &t->steps, rv->addr);
                lw_push_word(lw, &t->steps, (rv->bytes + 3u) & ~3u);
                bool host = rv->peer & XCH_HOST;
                lw_push_word(lw, &t->steps, host ? rv->peer : lw_global_tile(lw, rv->peer));
                lw_note_peer(lw, i, host ? PEER_HOST_IN : PEER_TILE);
            }
            if (n_mc > 1)
                qsort(mc, n_mc, sizeof *mc, cmp_multicast_recv);
            for (size_t k = 0; k < n_mc; k++) {
                lw_push_word(lw, &t->steps, lw->kernels.ctl_recv);
                lw_push_word(lw, &t->steps, mc[k]->addr);
                lw_push_word(lw, &t->steps, (mc[k]->bytes + 3u) & ~3u);
                lw_push_word(lw, &t->steps,
                             xch_multicast_recv((uint32_t)mc[k]->group, lw_global_tile(lw, mc[k]->peer)));
                lw_note_peer(lw, i, PEER_TILE);
            }
            size_t groups = bcast[i];
            for (size_t k = 0; k < (groups ? groups : t->n_sends); k++) {
                const xfer *sd = &t->sends[k];
                if (!groups && !sd->emit)
                    continue;
                lw_push_word(lw, &t->steps, lw->kernels.ctl_send);
                lw_push_word(lw, &t->steps, sd->addr);
                lw_push_word(lw, &t->steps, (sd->bytes + 3u) & ~3u);
                if (groups) {
                    lw_push_word(lw, &t->steps, XCH_BROADCAST);
                } else if (sd->group >= 0) {
                    lw_push_word(lw, &t->steps, xch_multicast_send((uint32_t)sd->group));
                } else {
                    lw_push_word(lw, &t->steps, lw_global_tile(lw, sd->peer));
                    lw_note_peer(lw, i, PEER_TILE);
                }
            }
            lw_push_word(lw, &t->steps, lw->sync_step);
        }
        for (uint32_t i = 0; i < lw->program_tiles; i++)
            lw->tile[i].n_sends = lw->tile[i].n_recvs = 0;
        free(mc);
        free(bcast);
        lw->rep->exchange_phases++;
        lw->phase_has_transfers = false;
    }
    for (uint32_t i = 0; i < lw->program_tiles; i++)
        if (lw->tile[i].copies.n && !lw_flush_copies(lw, i))
            return false;
    lw->phase_bytes = 0;
    return !lw->failed;
}

/* ---- tensors ------------------------------------------------------------- */

bool lw_add_piece(lowering *lw, int tensor, uint32_t tile, uint32_t addr, uint64_t first, uint64_t count)
{
    ltensor *lt = &lw->tensor[tensor];
    if (!lw_grow((void **)&lt->p, &lt->cap, lt->n + 1, sizeof *lt->p))
        return lw_fail(lw, "out of host memory");
    lt->p[lt->n++] = (piece){ tile, addr, first, count };
    lt->placed = true;
    return true;
}

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

static void lw_sort_pieces(lowering *lw, int tensor)
{
    ltensor *lt = &lw->tensor[tensor];
    if (lt->n > 1)
        qsort(lt->p, lt->n, sizeof *lt->p, cmp_piece);
}

/* The first piece whose range ends after element e. */
static size_t lw_piece_at(const ltensor *lt, uint64_t e)
{
    size_t lo = 0, hi = lt->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lt->p[mid].first + lt->p[mid].count <= e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const graph_tensor *lw_gt(const lowering *lw, int t) { return &lw->g->tensors[t]; }

/* A tile address holding elements [first, first + count) of tensor t on
 * tile `tile`: a local piece, a constant placed now, or a buffer filled in
 * this op's exchange phase.  first must start 8 bytes aligned in the
 * tensor's element order, except at a piece start. */
uint32_t lw_fetch(lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile, enum region_pref pref)
{
    const graph_tensor *g = lw_gt(lw, t);
    ltensor *lt = &lw->tensor[t];
    uint32_t eb = lt->element_bytes;
    if (count == 0)
        return 0;
    if (lt->placed) {
        size_t k = lw_piece_at(lt, first);
        if (k < lt->n && lt->p[k].tile == tile && lt->p[k].first <= first &&
            lt->p[k].first + lt->p[k].count >= first + count &&
            ((lt->p[k].addr + (first - lt->p[k].first) * eb) & 7u) == 0)
            return lt->p[k].addr + (uint32_t)((first - lt->p[k].first) * eb);
    }
    char what[96];
    snprintf(what, sizeof what, g->data ? "constant '%s'" : "a copy of '%s'", g->name);
    /* A constant is loaded with the executable (kept for the whole run); a
     * copy is only this op's (scratch). */
    uint32_t buf = g->data && !lt->placed ? lw_tile_alloc(lw, tile, count * eb, pref, 16, what)
                                          : lw_scratch_alloc(lw, tile, count * eb, pref, 8, what);
    if (!buf || !lw_fetch_into(lw, t, first, count, tile, buf))
        return 0;
    return buf;
}

bool lw_fetch_into(lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile, uint32_t buf)
{
    const graph_tensor *g = lw_gt(lw, t);
    ltensor *lt = &lw->tensor[t];
    uint32_t eb = lt->element_bytes;
    if (g->data && !lt->placed)
        return lw_tile_data(lw, tile, buf, (const uint8_t *)g->data + first * eb, (uint32_t)(count * eb), g->name);
    if (!lt->placed)
        return lw_fail(lw, "internal: tensor '%s' is used before it is computed", g->name);
    for (size_t k = lw_piece_at(lt, first); k < lt->n && lt->p[k].first < first + count; k++) {
        const piece *p = &lt->p[k];
        uint64_t lo = p->first > first ? p->first : first;
        uint64_t hi = p->first + p->count < first + count ? p->first + p->count : first + count;
        uint32_t src = p->addr + (uint32_t)((lo - p->first) * eb);
        uint32_t dst = buf + (uint32_t)((lo - first) * eb);
        uint32_t n = (uint32_t)((hi - lo) * eb);
        if ((src & 3u) || (dst & 3u))
            return lw_fail(lw, "%s: tensor '%s': elements from %llu are not 4-byte aligned on tile %u, which the "
                           "exchange needs (an f16 tensor split at an odd element)", lw->g->source, g->name,
                           (unsigned long long)lo, tile);
        if (p->tile == tile) {
            if (!lw_add_local_copy(lw, tile, src, dst, n))
                return false;
        } else if (!lw_add_transfer(lw, p->tile, src, tile, dst, n)) {
            return false;
        }
    }
    return true;
}

/* ---- planning ------------------------------------------------------------ */

/* How many tiles to spread n elements over, in chunks that are multiples of
 * gran elements: the fewest tiles whose busiest tile's estimated cycles
 * (cycles_per_element x chunk + a fixed cost per compute set) is within 5%
 * of the best over all tile counts, since every tile used also costs
 * exchange set-up and sync participation. */
uint32_t lw_plan_tiles(const lowering *lw, uint64_t n, uint64_t gran, double cycles_per_element,
                           double fixed_cycles)
{
    uint64_t units = (n + gran - 1) / gran;
    uint32_t max_t = units < lw->tiles ? (uint32_t)units : lw->tiles;
    if (max_t == 0)
        return 1;
    double best = 1e300;
    for (uint32_t t = 1; t <= max_t; t++) {
        double c = (double)((units + t - 1) / t * gran) * cycles_per_element + fixed_cycles;
        if (c < best)
            best = c;
    }
    for (uint32_t t = 1; t <= max_t; t++) {
        double c = (double)((units + t - 1) / t * gran) * cycles_per_element + fixed_cycles;
        if (c <= best * 1.05)
            return t;
    }
    return max_t;
}

/* A linear mapping of n elements on `tiles` tiles, chunks multiples of
 * gran: tile i gets [lo[i], hi[i]). */
void lw_linear_split(uint64_t n, uint64_t gran, uint32_t tiles, uint64_t *lo, uint64_t *hi)
{
    uint64_t units = (n + gran - 1) / gran;
    uint64_t base = units / tiles, extra = units % tiles, at = 0;
    for (uint32_t i = 0; i < tiles; i++) {
        uint64_t u = base + (i < extra);
        lo[i] = at * gran < n ? at * gran : n;
        at += u;
        hi[i] = at * gran < n ? at * gran : n;
    }
}

/* Split `units` among the six workers: worker k gets [lo[k], hi[k]). */
void lw_worker_split(uint64_t units, uint64_t *lo, uint64_t *hi)
{
    uint64_t base = units / CODELET_WORKERS, extra = units % CODELET_WORKERS, at = 0;
    for (int k = 0; k < CODELET_WORKERS; k++) {
        lo[k] = at;
        at += base + ((uint64_t)k < extra);
        hi[k] = at;
    }
}

/* Output `out` stored in the order of `in`'s axes (channels-last images
 * through element-wise ops, lower_layout.c). */
static void lw_same_layout(lowering *lw, int out, int in)
{
    ltensor *lo = &lw->tensor[out];
    const ltensor *li = &lw->tensor[in];
    lo->permuted = li->permuted;
    memcpy(lo->perm, li->perm, sizeof lo->perm);
}

/* Give output tensor `out` (eb bytes an element) the same pieces, on the
 * same tiles, as tensor `like`, with new storage; or a linear split. */
static bool lw_place_like(lowering *lw, int out, int like, const char *what)
{
    ltensor *lo = &lw->tensor[out];
    const ltensor *ll = &lw->tensor[like];
    for (size_t k = 0; k < ll->n; k++) {
        const piece *p = &ll->p[k];
        uint32_t a = lw_tensor_alloc(lw, out, p->tile, p->count * lo->element_bytes, PREFER_REGION1, 8, false, what);
        if (!a)
            return false;
        if (!lw_add_piece(lw, out, p->tile, a, p->first, p->count))
            return false;
    }
    return true;
}

bool lw_place_linear(lowering *lw, int out, uint64_t gran, uint32_t tiles, const char *what)
{
    ltensor *lo = &lw->tensor[out];
    uint64_t n = (uint64_t)graph_shape_numel(&lw_gt(lw, out)->shape);
    uint64_t *l = malloc(tiles * sizeof *l), *h = malloc(tiles * sizeof *h);
    if (!l || !h) {
        free(l);
        free(h);
        return lw_fail(lw, "out of host memory");
    }
    lw_linear_split(n, gran, tiles, l, h);
    for (uint32_t i = 0; i < tiles && !lw->failed; i++) {
        if (h[i] == l[i])
            continue;
        uint32_t tile = lw_tile_of(lw, i);
        uint32_t a = lw_tensor_alloc(lw, out, tile, (h[i] - l[i]) * lo->element_bytes, PREFER_REGION1, 8, false, what);
        if (a)
            lw_add_piece(lw, out, tile, a, l[i], h[i] - l[i]);
    }
    free(l);
    free(h);
    return !lw->failed;
}

/* Granularity in elements that keeps pieces 8-byte aligned. */
uint64_t lw_gran_of(uint32_t eb) { return eb >= 8 ? 1 : 8 / eb; }

/* ---- ops ----------------------------------------------------------------- */

static bool is_view(graph_op op)
{
    return op == GRAPH_OP_RESHAPE || op == GRAPH_OP_FLATTEN || op == GRAPH_OP_SQUEEZE ||
           op == GRAPH_OP_UNSQUEEZE || op == GRAPH_OP_IDENTITY || op == GRAPH_OP_DROPOUT;
}

static bool is_runs(graph_op op)
{
    return op == GRAPH_OP_TRANSPOSE || op == GRAPH_OP_SLICE || op == GRAPH_OP_CONCAT || op == GRAPH_OP_EXPAND ||
           op == GRAPH_OP_GATHER;
}

static bool is_reduce(graph_op op)
{
    return op == GRAPH_OP_REDUCESUM || op == GRAPH_OP_REDUCEMEAN || op == GRAPH_OP_REDUCEMAX ||
           op == GRAPH_OP_REDUCEMIN || op == GRAPH_OP_REDUCEPROD || op == GRAPH_OP_REDUCESUMSQUARE ||
           op == GRAPH_OP_REDUCEL1 ||
           op == GRAPH_OP_REDUCEL2 || op == GRAPH_OP_REDUCELOGSUM || op == GRAPH_OP_REDUCELOGSUMEXP;
}

static int unary_function(graph_op op)
{
    switch (op) {
    case GRAPH_OP_RELU: return KERNEL_UNARY_RELU;
    case GRAPH_OP_NEG: return KERNEL_UNARY_NEG;
    case GRAPH_OP_ABS: return KERNEL_UNARY_ABS;
    case GRAPH_OP_EXP: return KERNEL_UNARY_EXP;
    case GRAPH_OP_LOG: return KERNEL_UNARY_LOG;
    case GRAPH_OP_SQRT: return KERNEL_UNARY_SQRT;
    case GRAPH_OP_RECIPROCAL: return KERNEL_UNARY_RECIPROCAL;
    case GRAPH_OP_TANH: return KERNEL_UNARY_TANH;
    case GRAPH_OP_SIGMOID: return KERNEL_UNARY_SIGMOID;
    case GRAPH_OP_ERF: return KERNEL_UNARY_ERF;
    case GRAPH_OP_FLOOR: return KERNEL_UNARY_FLOOR;
    case GRAPH_OP_CEIL: return KERNEL_UNARY_CEIL;
    default: return -1;
    }
}

static int binary_function(graph_op op)
{
    switch (op) {
    case GRAPH_OP_ADD: return KERNEL_BINARY_ADD;
    case GRAPH_OP_SUB: return KERNEL_BINARY_SUB;
    case GRAPH_OP_MUL: return KERNEL_BINARY_MUL;
    case GRAPH_OP_DIV: return KERNEL_BINARY_DIV;
    case GRAPH_OP_MAX: return KERNEL_BINARY_MAX;
    case GRAPH_OP_MIN: return KERNEL_BINARY_MIN;
    default: return -1;
    }
}

/* The broadcast strides (in elements) of input shape `in` against output
 * shape `out`, aligned on the right; 0 where the input's dimension is 1 or
 * missing. */
static void broadcast_strides(const graph_shape *in, const graph_shape *out, int64_t *stride)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int id = d - (out->rank - in->rank);
        if (id < 0 || in->dims[id] == 1) {
            stride[d] = 0;
        } else {
            stride[d] = s;
        }
        if (id >= 0)
            s *= in->dims[id];
    }
}

/* Element offset of input (strides) at the start of output row r (rows of
 * the output's last dimension). */
static int64_t row_offset(const graph_shape *out, const int64_t *stride, int64_t r)
{
    int64_t off = 0;
    for (int d = out->rank - 2; d >= 0; d--) {
        int64_t i = r % out->dims[d];
        r /= out->dims[d];
        off += i * stride[d];
    }
    return off;
}

bool lw_unsupported(lowering *lw, const graph_node *n, int index, const char *why)
{
    lw->rep->unsupported = true;
    char label[160];
    return lw_fail(lw, "%s: %s: %s", lw->g->source, lw_node_label(n, index, label, sizeof label), why);
}

static bool lower_view(lowering *lw, const graph_node *n)
{
    int in = n->inputs[0], out = n->outputs[0];
    if (lw_gt(lw, in)->data && !lw->tensor[in].placed)
        return true;              /* a constant view stays a constant: fetched where used */
    ltensor *li = &lw->tensor[in], *lo = &lw->tensor[out];
    if (li->permuted) {
        if (!graph_shape_equal(&lw_gt(lw, in)->shape, &lw_gt(lw, out)->shape))
            return lw_fail(lw, "internal: a view of the channels-last tensor '%s' that changes its shape",
                           lw_gt(lw, in)->name);
        lw_same_layout(lw, out, in);
    }
    for (size_t k = 0; k < li->n; k++)
        if (!lw_add_piece(lw, out, li->p[k].tile, li->p[k].addr, li->p[k].first, li->p[k].count))
            return false;
    lo->placed = true;
    return true;
}

static bool lower_unary(lowering *lw, const graph_node *n, int index, int function, float a, float b)
{
    int in = n->inputs[0], out = n->outputs[0];
    if (lw_gt(lw, in)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    uint64_t total = (uint64_t)graph_shape_numel(&lw_gt(lw, out)->shape);
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    if (lw->tensor[in].placed && lw->tensor[in].n) {
        if (!lw_place_like(lw, out, in, what))
            return false;
    } else {
        uint32_t tiles = lw_plan_tiles(lw, total, 2, KERNEL_UNARY_CYCLES_PER_ELEMENT, 200);
        if (!lw_place_linear(lw, out, 2, tiles, what))
            return false;
    }
    lw_same_layout(lw, out, in);
    ltensor *lo = &lw->tensor[out];
    uint32_t *src = malloc((lo->n + 1) * sizeof *src);
    if (!src)
        return lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < lo->n && !lw->failed; k++)
        src[k] = lw_fetch(lw, in, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
    if (!lw->failed)
        lw_end_phase(lw);
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        const piece *p = &lo->p[k];
        uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS];
        lw_worker_split((p->count + 1) / 2, wl, wh);
        uint32_t *recs[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, p->tile, KERNEL_UNARY_WORDS, recs);
        if (lw->failed)
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint64_t e0 = wl[w] * 2, e1 = wh[w] * 2 < p->count ? wh[w] * 2 : p->count;
            kernel_unary_record(recs[w], src[k] + (uint32_t)(e0 * 4), p->addr + (uint32_t)(e0 * 4),
                                (uint32_t)(e1 > e0 ? e1 - e0 : 0), function, a, b);
        }
        lw_step_run(lw, p->tile, lw->kernels.vtx_unary_f32, off, KERNEL_UNARY_WORDS);
    }
    free(src);
    return !lw->failed;
}

/* Binary element-wise with numpy broadcasting.  The output is seen as rows
 * of its last dimension; input k's element (r, c) is at row_offset_k(r) +
 * c * colstep_k.  in0 must not be broadcast (commutative ops swap). */
static bool lower_binary(lowering *lw, const graph_node *n, int index, int function, int in0, int in1)
{
    int out = n->outputs[0];
    const graph_shape *so = &lw_gt(lw, out)->shape;
    if (lw_gt(lw, in0)->dtype != GDT_F32 || lw_gt(lw, in1)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    bool commutative = function == KERNEL_BINARY_ADD || function == KERNEL_BINARY_MUL ||
                       function == KERNEL_BINARY_MAX || function == KERNEL_BINARY_MIN;
    if (!graph_shape_equal(&lw_gt(lw, in0)->shape, so)) {
        if (commutative && graph_shape_equal(&lw_gt(lw, in1)->shape, so)) {
            int t = in0;
            in0 = in1;
            in1 = t;
        } else {
            return lw_unsupported(lw, n, index, "the first input is broadcast (not yet supported)");
        }
    }
    uint64_t total = (uint64_t)graph_shape_numel(so);
    int64_t cols = so->rank ? so->dims[so->rank - 1] : 1;
    int64_t stride1[GRAPH_MAX_RANK];
    broadcast_strides(&lw_gt(lw, in1)->shape, so, stride1);
    bool same = graph_shape_equal(&lw_gt(lw, in1)->shape, so);
    bool scalar = graph_shape_numel(&lw_gt(lw, in1)->shape) == 1;
    bool flat = same || scalar;
    uint64_t row_len = flat ? total : (uint64_t)cols;
    uint64_t gran = flat ? 2 : (uint64_t)cols;
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    if (lw->tensor[in0].placed && lw->tensor[in0].n && (flat || lw->tensor[in0].n <= lw->tiles)) {
        bool rows_whole = true;
        for (size_t k = 0; k < lw->tensor[in0].n && !flat; k++)
            if (lw->tensor[in0].p[k].first % (uint64_t)cols || lw->tensor[in0].p[k].count % (uint64_t)cols)
                rows_whole = false;
        if (rows_whole) {
            if (!lw_place_like(lw, out, in0, what))
                return false;
        } else {
            uint32_t tiles = lw_plan_tiles(lw, total, gran, KERNEL_BINARY_CYCLES_PER_ELEMENT, 200);
            if (!lw_place_linear(lw, out, gran, tiles, what))
                return false;
        }
    } else {
        uint32_t tiles = lw_plan_tiles(lw, total, gran, KERNEL_BINARY_CYCLES_PER_ELEMENT, 200);
        if (!lw_place_linear(lw, out, gran, tiles, what))
            return false;
    }
    /* A channels-last operand: every other operand is one too or a single
     * value (lower_layout.c), so the elements pair up in stored order. */
    if (lw->tensor[in0].permuted || lw->tensor[in1].permuted) {
        if (!flat || (!scalar && lw->tensor[in0].permuted != lw->tensor[in1].permuted))
            return lw_fail(lw, "internal: '%s' mixes channels-last and plain operands", lw_gt(lw, out)->name);
        lw_same_layout(lw, out, lw->tensor[in0].permuted ? in0 : in1);
    }
    ltensor *lo = &lw->tensor[out];
    uint32_t *a0 = malloc((lo->n + 1) * sizeof *a0), *a1 = malloc((lo->n + 1) * sizeof *a1);
    int64_t *base1 = malloc((lo->n + 1) * sizeof *base1);
    if (!a0 || !a1 || !base1) {
        free(a0); free(a1); free(base1);
        return lw_fail(lw, "out of host memory");
    }
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        const piece *p = &lo->p[k];
        a0[k] = lw_fetch(lw, in0, p->first, p->count, p->tile, PREFER_REGION1);
        /* in1's elements this piece needs: one contiguous range. */
        int64_t lo1, hi1;
        if (same) {
            lo1 = (int64_t)p->first;
            hi1 = (int64_t)(p->first + p->count);
        } else if (scalar) {
            lo1 = 0;
            hi1 = 1;
        } else {
            int64_t r0 = (int64_t)(p->first / (uint64_t)cols), r1 = (int64_t)((p->first + p->count) / (uint64_t)cols);
            lo1 = INT64_MAX;
            hi1 = 0;
            for (int64_t r = r0; r < r1; r++) {
                int64_t o = row_offset(so, stride1, r);
                int64_t e = o + (stride1[so->rank - 1] ? cols : 1);
                if (o < lo1) lo1 = o;
                if (e > hi1) hi1 = e;
            }
            lo1 &= ~(int64_t)1;
        }
        base1[k] = lo1;
        a1[k] = lw_fetch(lw, in1, (uint64_t)lo1, (uint64_t)(hi1 - lo1), p->tile, PREFER_REGION1);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    for (size_t k = 0; k < lo->n && !lw->failed; k++) {
        const piece *p = &lo->p[k];
        uint64_t rows = p->count / row_len ? p->count / row_len : 1;
        uint64_t this_cols = flat ? p->count : (uint64_t)cols;
        uint64_t units = flat ? (p->count + 1) / 2 : rows;
        uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS];
        lw_worker_split(units, wl, wh);
        /* Each worker's rows in runs of a constant in1 row step: one record
         * per run, one compute set per round of runs. */
        uint32_t col_step1 = scalar ? 0 : (same || stride1[so->rank - 1]) ? 4 : 0;
        for (int round = 0;; round++) {
            bool any = false;
            uint32_t *recs[CODELET_WORKERS];
            uint32_t off = 0;
            uint64_t start[CODELET_WORKERS];
            for (int w = 0; w < CODELET_WORKERS; w++) {
                /* Find worker w's round-th run. */
                uint64_t r = wl[w];
                int seen = 0;
                start[w] = UINT64_MAX;
                while (r < wh[w]) {
                    uint64_t run_end = r + 1;
                    if (!flat) {
                        int64_t r_abs = (int64_t)(p->first / (uint64_t)cols + r);
                        int64_t o0 = row_offset(so, stride1, r_abs);
                        if (run_end < wh[w]) {
                            int64_t step = row_offset(so, stride1, r_abs + 1) - o0;
                            while (run_end < wh[w] &&
                                   row_offset(so, stride1, r_abs + (int64_t)(run_end - r)) ==
                                       o0 + step * (int64_t)(run_end - r))
                                run_end++;
                        }
                    } else {
                        run_end = wh[w];
                    }
                    if (seen == round) {
                        start[w] = r;
                        wh[w] = wh[w];
                        if (!any) {
                            off = lw_six_records(lw, p->tile, KERNEL_BINARY_WORDS, recs);
                            if (lw->failed)
                                goto out;
                            any = true;
                        }
                        if (flat) {
                            uint64_t e0 = r * 2, e1 = run_end * 2 < p->count ? run_end * 2 : p->count;
                            uint32_t in1_addr = scalar ? a1[k] : a1[k] + (uint32_t)(e0 * 4);
                            kernel_binary_record(recs[w], a0[k] + (uint32_t)(e0 * 4), in1_addr,
                                                 p->addr + (uint32_t)(e0 * 4), 1, (uint32_t)(e1 - e0),
                                                 (uint32_t)((e1 - e0) * 4), 0, col_step1, function);
                        } else {
                            int64_t r_abs = (int64_t)(p->first / (uint64_t)cols + r);
                            int64_t o0 = row_offset(so, stride1, r_abs);
                            int64_t step = run_end - r > 1 ? row_offset(so, stride1, r_abs + 1) - o0 : 0;
                            uint32_t in1_addr = a1[k] + (uint32_t)((o0 - base1[k]) * 4);
                            uint32_t row_bytes = (uint32_t)cols * 4;
                            kernel_binary_record(recs[w], a0[k] + (uint32_t)(r * row_bytes), in1_addr,
                                                 p->addr + (uint32_t)(r * row_bytes), (uint32_t)(run_end - r),
                                                 (uint32_t)this_cols, row_bytes, (uint32_t)(step * 4), col_step1,
                                                 function);
                        }
                        break;
                    }
                    seen++;
                    r = run_end;
                }
            }
            if (!any)
                break;
            for (int w = 0; w < CODELET_WORKERS; w++)
                if (start[w] == UINT64_MAX)
                    kernel_binary_record(recs[w], a0[k], a1[k], p->addr, 0, 0, 0, 0, 0, function);
            lw_step_run(lw, p->tile, lw->kernels.vtx_binary_f32, off, KERNEL_BINARY_WORDS);
        }
    }
out:
    free(a0);
    free(a1);
    free(base1);
    return !lw->failed;
}

/* Softmax / LayerNormalization over the last axis: whole rows per tile.
 * Rows of odd length are kept padded to an even length (the codelets read
 * rows in 64-bit pairs from 8-byte aligned starts): fetched row by row
 * into the padded layout, and the output is a piece a row. */
static bool lower_rows(lowering *lw, const graph_node *n, int index)
{
    int in = n->inputs[0], out = n->outputs[0];
    const graph_shape *s = &lw_gt(lw, in)->shape;
    if (lw_gt(lw, in)->dtype != GDT_F32)
        return lw_unsupported(lw, n, index, "only f32 is supported");
    bool layernorm = n->op == GRAPH_OP_LAYERNORM;
    /* Rows of the axes from `from` on: layer norm's from its axis, softmax's
     * the last axis alone (read with the graph's opset: before 13 the
     * default axis is 1 and every axis from it is normalised; decompose.h
     * moves the others to the last). */
    int from, to;
    if (!ops_softmax_range(lw->g, n, &from, &to) || (!layernorm && from != s->rank - 1))
        return lw_unsupported(lw, n, index, "only the last axis is supported");
    int64_t axis = from;
    uint64_t cols = 1, total = (uint64_t)graph_shape_numel(s);
    for (int64_t d = axis; d < s->rank; d++)
        cols *= (uint64_t)s->dims[d];
    if (!cols || !total)
        return lw_unsupported(lw, n, index, "an empty tensor");
    if (cols > KERNEL_ROW_MAX_COLS)
        return lw_unsupported(lw, n, index, "rows longer than the row codelets take");
    const uint64_t padded = (cols + 1) & ~(uint64_t)1, rows_total = total / cols;
    /* Layer norm's statistics (its training outputs): a value a row. */
    int stat_out[2] = { -1, -1 };
    for (int k = 1; layernorm && k < 3 && k < n->n_outputs; k++)
        stat_out[k - 1] = n->outputs[k];
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, out)->name);
    double per_element = layernorm ? KERNEL_LAYERNORM_CYCLES_PER_ELEMENT : KERNEL_SOFTMAX_CYCLES_PER_ELEMENT;
    /* Per tile: its first row, its rows, where they are and come from. */
    uint32_t tiles = lw_plan_tiles(lw, total, cols, per_element, 300);
    uint64_t *l = malloc((tiles + 1) * sizeof *l), *h = malloc((tiles + 1) * sizeof *h);
    uint32_t *dst = calloc(tiles + 1, sizeof *dst), *src = calloc(tiles + 1, sizeof *src);
    uint32_t *gam = calloc(tiles + 1, sizeof *gam), *bet = calloc(tiles + 1, sizeof *bet);
    uint32_t *tl = calloc(tiles + 1, sizeof *tl);
    uint32_t *stat_addr[2] = { NULL, NULL };
    for (int q = 0; q < 2; q++)
        if (stat_out[q] >= 0)
            stat_addr[q] = calloc(tiles + 1, sizeof *stat_addr[q]);
    if (!l || !h || !dst || !src || !gam || !bet || !tl || (stat_out[0] >= 0 && !stat_addr[0]) ||
        (stat_out[1] >= 0 && !stat_addr[1])) {
        free(l); free(h); free(dst); free(src); free(gam); free(bet); free(tl);
        free(stat_addr[0]);
        free(stat_addr[1]);
        return lw_fail(lw, "out of host memory");
    }
    if (padded == cols) {
        if (!lw_place_linear(lw, out, cols, tiles, what))
            goto out;
        const ltensor *lo = &lw->tensor[out];
        tiles = (uint32_t)lo->n;
        for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
            l[k] = lo->p[k].first / cols;
            h[k] = l[k] + lo->p[k].count / cols;
            tl[k] = lo->p[k].tile;
            dst[k] = lo->p[k].addr;
            src[k] = lw_fetch(lw, in, lo->p[k].first, lo->p[k].count, lo->p[k].tile, PREFER_REGION1);
        }
    } else {
        lw_linear_split(rows_total, 1, tiles, l, h);
        for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
            if (h[k] == l[k])
                continue;
            uint32_t tile = tl[k] = lw_tile_of(lw, k), step = (uint32_t)padded * 4;
            dst[k] = lw_tensor_alloc(lw, out, tile, (h[k] - l[k]) * padded * 4, PREFER_REGION1, 8, false, what);
            src[k] = dst[k] ? lw_scratch_alloc(lw, tile, (h[k] - l[k]) * padded * 4, PREFER_REGION1, 8, what) : 0;
            for (uint64_t r = l[k]; src[k] && r < h[k] && !lw->failed; r++) {
                lw_add_piece(lw, out, tile, dst[k] + (uint32_t)(r - l[k]) * step, r * cols, cols);
                lw_fetch_into(lw, in, r * cols, cols, tile, src[k] + (uint32_t)(r - l[k]) * step);
            }
        }
        lw->tensor[out].placed = true;
    }
    for (uint32_t k = 0; k < tiles && layernorm && !lw->failed; k++) {
        if (h[k] == l[k])
            continue;
        uint32_t tile = tl[k];
        for (int q = 0; q < 2; q++) {
            if (stat_out[q] < 0)
                continue;
            char sw[96];
            snprintf(sw, sizeof sw, "tensor '%s'", lw_gt(lw, stat_out[q])->name);
            stat_addr[q][k] = lw_tensor_alloc(lw, stat_out[q], tile, (h[k] - l[k]) * 4, PREFER_REGION1, 8, false, sw);
            if (stat_addr[q][k])
                lw_add_piece(lw, stat_out[q], tile, stat_addr[q][k], l[k], h[k] - l[k]);
        }
        gam[k] = lw_fetch(lw, n->inputs[1], 0, cols, tile, PREFER_REGION1);
        if (n->n_inputs > 2 && n->inputs[2] >= 0)
            bet[k] = lw_fetch(lw, n->inputs[2], 0, cols, tile, PREFER_REGION1);
    }
    if (!lw->failed)
        lw_end_phase(lw);
    float eps = layernorm ? (float)(graph_attr_find(n, "epsilon") ? graph_attr_float(n, "epsilon") : 1e-5) : 0;
    for (uint32_t k = 0; k < tiles && !lw->failed; k++) {
        if (h[k] == l[k])
            continue;
        uint32_t tile = tl[k], step = (uint32_t)padded * 4;
        if (layernorm && !bet[k]) {
            /* No bias: a zero row. */
            bet[k] = lw_tile_alloc(lw, tile, cols * 4, PREFER_REGION1, 8, "a zero bias");
            if (!bet[k] || !lw_tile_data(lw, tile, bet[k], NULL, (uint32_t)(cols * 4), "zeros"))
                break;
        }
        uint64_t wl[CODELET_WORKERS], wh[CODELET_WORKERS];
        lw_worker_split(h[k] - l[k], wl, wh);
        uint32_t words = layernorm ? KERNEL_LAYERNORM_WORDS : KERNEL_SOFTMAX_WORDS;
        uint32_t *recs[CODELET_WORKERS];
        uint32_t off = lw_six_records(lw, tile, words, recs);
        if (lw->failed)
            break;
        for (int w = 0; w < CODELET_WORKERS; w++) {
            uint32_t o = (uint32_t)wl[w] * step;
            if (layernorm)
                kernel_layernorm_record(recs[w], src[k] + o, dst[k] + o, gam[k], bet[k], (uint32_t)(wh[w] - wl[w]),
                                        (uint32_t)cols, step, eps,
                                        stat_addr[0] ? stat_addr[0][k] + (uint32_t)wl[w] * 4 : 0,
                                        stat_addr[1] ? stat_addr[1][k] + (uint32_t)wl[w] * 4 : 0);
            else
                kernel_softmax_record(recs[w], src[k] + o, dst[k] + o, (uint32_t)(wh[w] - wl[w]), (uint32_t)cols,
                                      step);
        }
        lw_step_run(lw, tile, layernorm ? lw->kernels.vtx_layernorm_rows_f32 : lw->kernels.vtx_softmax_rows_f32, off, words);
    }
out:
    free(l); free(h); free(dst); free(src); free(gam); free(bet); free(tl);
    free(stat_addr[0]);
    free(stat_addr[1]);
    return !lw->failed;
}

/* Graph inputs: linear pieces, each fed by its own host stream. */
static bool lower_input(lowering *lw, int t)
{
    const graph_tensor *g = lw_gt(lw, t);
    uint64_t total = (uint64_t)graph_shape_numel(&g->shape);
    uint32_t eb = lw->tensor[t].element_bytes;
    uint64_t gran = lw_gran_of(eb);
    char what[96];
    snprintf(what, sizeof what, "input '%s'", g->name);
    /* The rows of a matmul's A: one block of its grid rows per grid row,
     * in region 0, on the grid row's first tile (which uses them in place
     * and broadcasts them to the rest of its row). */
    uint64_t rows;
    uint32_t step;
    if (g->shape.rank == 4 && lw_conv_input_layout(lw->g, t)) {
        /* An image for a convolution: kept channels-last (NHWC), whole
         * pixels per tile, spread over the tiles: every tile's pixels go to
         * the several tiles whose output rows need them (im2col), so the
         * fewer pixels a tile sends from, the sooner the exchange ends. */
        ltensor *lt = &lw->tensor[t];
        lt->permuted = true;
        lt->perm[0] = 0;
        lt->perm[1] = 2;
        lt->perm[2] = 3;
        lt->perm[3] = 1;
        uint64_t pixel = (uint64_t)g->shape.dims[1];
        while ((pixel * eb) % 8)
            pixel *= 2;
        uint32_t tiles = lw_plan_tiles(lw, total, pixel, 4.0, 200);
        return lw_place_linear(lw, t, pixel, tiles, what);
    }
    if (g->shape.rank >= 1 && lw_matmul_input_layout(lw, t, &rows, &step)) {
        uint64_t cols = (uint64_t)g->shape.dims[g->shape.rank - 1];
        for (uint64_t r = 0, i = 0; r * cols < total && !lw->failed; r += rows, i++) {
            uint64_t n = (total - r * cols < rows * cols ? total - r * cols : rows * cols);
            uint32_t tile = lw_tile_of(lw, (uint32_t)(i * step));
            uint32_t a = lw_tensor_alloc(lw, t, tile, n * eb, PREFER_REGION0, 8, false, what);
            if (a)
                lw_add_piece(lw, t, tile, a, r * cols, n);
        }
        return !lw->failed;
    }
    if (g->shape.rank >= 1) {
        /* Whole rows where they stay 8-byte aligned, so row ops need no exchange. */
        uint64_t cols = (uint64_t)g->shape.dims[g->shape.rank - 1];
        if (cols && (cols * eb) % 8 == 0)
            gran = cols;
    }
    uint32_t tiles = lw_plan_tiles(lw, total, gran, 1.0, 200);
    return lw_place_linear(lw, t, gran, tiles, what);
}

/* ---- the whole program --------------------------------------------------- */

/* Pow reaches the lowering in its direct forms; decompose.h rewrites the
 * other f32 ones into Exp, Log and Mul, which needs an f32 exponent (a
 * constant of another dtype is converted there, a run-time one would need
 * a Cast the tile does not have). */
static bool pow_supported(const graph *g, const graph_node *n, const char **why)
{
    graph_dtype base = g->tensors[n->inputs[0]].dtype, exponent = g->tensors[n->inputs[1]].dtype;
    if (lower_pow_is_direct(g, n))
        return true;
    if (base != GDT_F32)
        *why = "only f32 bases are lowered";
    else if (graph_dtype_is_int(exponent) && !g->tensors[n->inputs[1]].data)
        *why = "a run-time exponent must be f32 (casts from integers to f32 are not lowered)";
    else if (exponent != GDT_F32 && !g->tensors[n->inputs[1]].data)
        *why = "a run-time exponent must be f32";
    else
        *why = "only constant exponents 2, 1, 0.5, -1 and -0.5 are lowered directly (decompose the others first)";
    return false;
}

static bool node_supported(const lowering *lw, const graph_node *n, const char **why)
{
    (void)lw;
    *why = NULL;
    for (int k = 1; k < n->n_outputs && n->op != GRAPH_OP_LAYERNORM; k++)
        if (n->outputs[k] >= 0) {
            *why = "only the first output is lowered (the others are for training)";
            return false;
        }
    if (is_view(n->op) || n->op == GRAPH_OP_CONSTANT)
        return true;
    if (lw_logic_handles(lw->g, n))
        return lw_logic_supported(lw->g, n, why);
    if (unary_function(n->op) >= 0)
        return true;
    if (binary_function(n->op) >= 0) {
        if (n->n_inputs != 2) {
            *why = "only two inputs are supported";
            return false;
        }
        return true;
    }
    if (n->op == GRAPH_OP_SOFTMAX || n->op == GRAPH_OP_LAYERNORM)
        return true;
    if (is_runs(n->op) || n->op == GRAPH_OP_CAST || is_reduce(n->op))
        return true;                  /* the details are checked when lowering */
    if (n->op == GRAPH_OP_MAXPOOL || n->op == GRAPH_OP_AVERAGEPOOL || n->op == GRAPH_OP_GLOBALAVERAGEPOOL)
        return lw_channels_last_ok(lw->g, n, why);
    if (n->op == GRAPH_OP_POW)
        return pow_supported(lw->g, n, why);
    if (n->op == GRAPH_OP_CLIP || n->op == GRAPH_OP_LOGSOFTMAX) {
        /* left by decompose.h: a dtype it does not rewrite */
        *why = graph_dtype_is_int(lw->g->tensors[n->inputs[0]].dtype)
                   ? "integer arithmetic is supported on i32 only (the tile is 32-bit)"
                   : "only f32 is supported";
        return false;
    }
    if (n->op == GRAPH_OP_MATMUL || n->op == GRAPH_OP_GEMM || n->op == GRAPH_OP_FUSED_MATMUL ||
        n->op == GRAPH_OP_CONV || n->op == GRAPH_OP_FUSED_CONV)
        return lw_matmul_supported(lw->g, n, why);
    *why = "no lowering for this op yet";
    return false;
}

bool lower_supports(const graph *g, const lower_options *o, char *err, size_t err_size)
{
    lowering lw = { .g = g, .opts = o };
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        const char *why;
        bool ok = true;
        for (int k = 0; k < n->n_outputs && ok; k++)
            if (n->outputs[k] >= 0 && g->tensors[n->outputs[k]].data)
                ok = true;
        /* Nodes whose outputs were folded to constants need no code. */
        bool folded = true;
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0 && !g->tensors[n->outputs[k]].data)
                folded = false;
        if (folded)
            continue;
        if (!node_supported(&lw, n, &why)) {
            char label[160];
            snprintf(err, err_size, "%s: %s: %s", g->source, lw_node_label(n, i, label, sizeof label), why);
            return false;
        }
    }
    return true;
}

/* Close tile i's control program and place its records and steps (once). */
/* Words of the control-program step whose handler is h (supervisor.S);
 * 0 for a word that is no handler. */
static size_t step_words(const lowering *lw, uint32_t h)
{
    const kernel_symbols *k = &lw->kernels;
    if (h == k->ctl_run || h == k->ctl_send || h == k->ctl_recv)
        return 4;
    if (h == k->ctl_call)
        return 3;
    if (h == k->ctl_jump)
        return 2;
    if (h == k->ctl_sync_chip || h == k->ctl_sync_system || h == k->ctl_end)
        return 1;
    return 0;
}

/* Tile i's control program in one block where a region has room for it;
 * else in two, one a region: the first (in the larger room) ends at a step
 * boundary with a ctl_jump to the second. */
static bool place_steps(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    const uint64_t slack = CODELET_READ_SLACK_BYTES;
    uint64_t bytes = t->steps.n * 4;
    uint64_t room1 = t->region1_scratch_floor > ALIGN8(t->region1_kept_end) ? t->region1_scratch_floor - ALIGN8(t->region1_kept_end) : 0;
    uint64_t room0 = t->region0_scratch_floor > ALIGN8(t->region0_kept_end) ? t->region0_scratch_floor - ALIGN8(t->region0_kept_end) : 0;
    t->split_word = 0;
    if (lw->opts->control_room_bytes) {
        room1 = room1 < lw->opts->control_room_bytes ? room1 : lw->opts->control_room_bytes;
        room0 = room0 < lw->opts->control_room_bytes ? room0 : lw->opts->control_room_bytes;
    }
    if (ALIGN8(bytes) + slack <= (room1 > room0 ? room1 : room0)) {
        t->step_base = lw_tile_alloc(lw, i, bytes, PREFER_REGION1, 8, "the control program");
        return t->step_base != 0;
    }
    bool first_r1 = room1 >= room0;
    uint64_t first_room = first_r1 ? room1 : room0, second_room = first_r1 ? room0 : room1;
    /* the last step boundary whose steps and the jump fit the first room */
    size_t w = 0, split = 0;
    while (w < t->steps.n && (w + 2) * 4 + slack <= first_room) {
        split = w;
        size_t n = step_words(lw, t->steps.w[w]);
        if (!n)
            return lw_fail(lw, "internal: tile %u: word %zu of the control program is no step", i, w);
        w += n;
    }
    uint64_t rest = (t->steps.n - split) * 4;
    if (!split || ALIGN8(rest) + slack > second_room)
        return no_room(lw, i, ALIGN8(bytes) + slack - first_room - second_room + 8, "the control program") != 0;
    t->step_base = bump_alloc(lw, i, (split + 2) * 4, ALIGN8((split + 2) * 4) + slack, 7, !first_r1);
    t->step_base2 = bump_alloc(lw, i, rest, ALIGN8(rest) + slack, 7, first_r1);
    t->split_word = split;
    lw->rep->split_programs++;
    return t->step_base && t->step_base2;
}

static int cmp_alloc(const void *a, const void *b)
{
    const data_item *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool close_tile(lowering *lw, uint32_t i)
{
    ltile *t = &lw->tile[i];
    /* Blocks given to several tensors in turn overlap: one section each
     * stretch of memory. */
    if (t->n_allocs > 1)
        qsort(t->allocs, t->n_allocs, sizeof *t->allocs, cmp_alloc);
    size_t n = 0;
    for (size_t k = 0; k < t->n_allocs; k++) {
        data_item *prev = n ? &t->allocs[n - 1] : NULL;
        if (prev && t->allocs[k].addr < prev->addr + prev->size) {
            uint32_t end = t->allocs[k].addr + t->allocs[k].size;
            if (end > prev->addr + prev->size)
                prev->size = end - prev->addr;
        } else {
            t->allocs[n++] = t->allocs[k];
        }
    }
    t->n_allocs = n;
    lw_push_word(lw, &t->steps, lw->kernels.ctl_end);
    if (lw->failed)
        return false;
    uint32_t rec_bytes = (uint32_t)(t->records.n * 4);
    t->rec_base = rec_bytes ? lw_tile_alloc(lw, i, rec_bytes, PREFER_REGION1, 8, "vertex records") : 0;
    if (lw->failed || !place_steps(lw, i))
        return false;
    for (size_t k = 0; k < t->n_patch; k++)
        t->steps.w[t->patch[k]] += t->rec_base;
    return true;
}

/* Tile i's sections in the executable, for replica r (on chip r: tile
 * numbers, tile endpoints and host streams moved on by a chip's worth). */
static bool finish_tile(lowering *lw, uint32_t i, uint32_t r, ipu_exe *e)
{
    ltile *t = &lw->tile[i];
    uint32_t rec_bytes = (uint32_t)(t->records.n * 4), step_bytes = (uint32_t)(t->steps.n * 4);
    uint32_t rec_base = t->rec_base, step_base = t->step_base;
    uint32_t gt = lw_global_tile(lw, i) + r * lw->tiles_per_chip;
    uint32_t *steps = t->steps.w;
    if (r) {
        steps = malloc(step_bytes);
        if (!steps)
            return lw_fail(lw, "out of host memory");
        memcpy(steps, t->steps.w, step_bytes);
        for (size_t k = 0; k < t->n_peers; k++) {
            uint32_t *w = &steps[t->peers[k].word];
            switch (t->peers[k].kind) {
            case PEER_TILE: *w += r * lw->tiles_per_chip; break;
            case PEER_HOST_IN: *w = XCH_HOST | ((*w & XCH_ENDPOINT_INDEX) + r * lw->rep->input_streams); break;
            default: *w = XCH_HOST | ((*w & XCH_ENDPOINT_INDEX) + r * lw->rep->output_streams); break;
            }
        }
    }
    bool ok;
    if (t->split_word) {
        /* the first block, its jump, and the second block */
        size_t first = t->split_word;
        uint32_t *head = malloc((first + 2) * 4);
        ok = head != NULL;
        if (ok) {
            memcpy(head, steps, first * 4);
            head[first] = lw->kernels.ctl_jump;
            head[first + 1] = t->step_base2;
            ok = exe_add_section(e, gt, ".control", step_base, head, (uint32_t)(first + 2) * 4, 0, lw->err,
                                 lw->err_size) &&
                 exe_add_section(e, gt, ".control.1", t->step_base2, steps + first,
                                 (uint32_t)(t->steps.n - first) * 4, 0, lw->err, lw->err_size);
        } else {
            snprintf(lw->err, lw->err_size, "out of host memory");
        }
        free(head);
    } else {
        ok = exe_add_section(e, gt, ".control", step_base, steps, step_bytes, 0, lw->err, lw->err_size);
    }
    if (r)
        free(steps);
    if (!ok)
        return lw_fail(lw, "tile %u: %s", gt, lw->err);
    uint32_t i_saved = i;
    i = gt;
    char err[256];
    /* The library image, with this tile's control program in ctl_table. */
    const ipu_exe *img = lw->lib->image;
    for (size_t s = 0; s < img->n_sections; s++) {
        const exe_section *sec = &img->sections[s];
        const uint8_t *bytes = sec->bytes;
        uint8_t *copy = NULL;
        if (bytes && lw->kernels.ctl_table >= sec->addr && lw->kernels.ctl_table + 4 <= sec->addr + sec->size) {
            copy = malloc(sec->size);
            if (!copy)
                return lw_fail(lw, "out of host memory");
            memcpy(copy, bytes, sec->size);
            memcpy(copy + (lw->kernels.ctl_table - sec->addr), &step_base, 4);
            bytes = copy;
        }
        ok = exe_add_section(e, i, sec->name, sec->addr, bytes, sec->size, sec->flags, err, sizeof err);
        free(copy);
        if (!ok)
            return lw_fail(lw, "tile %u: %s", i, err);
    }
    for (size_t s = 0; s < img->n_symbols; s++)
        if (img->symbols[s].global)
            exe_add_symbol(e, i, img->symbols[s].name, img->symbols[s].addr, img->symbols[s].size,
                           (enum exe_symbol_kind)img->symbols[s].kind, true);
    if (rec_bytes && !exe_add_section(e, i, ".vertex", rec_base, t->records.w, rec_bytes, EXE_SEC_WRITE, err,
                                      sizeof err))
        return lw_fail(lw, "tile %u: %s", i, err);
    /* One section per block: zero-filled unless data were placed in it. */
    for (size_t a = 0; a < t->n_allocs; a++) {
        const data_item *blk = &t->allocs[a];
        if (blk->addr == rec_base || blk->addr == step_base || (t->split_word && blk->addr == t->step_base2))
            continue;
        uint8_t *bytes = NULL;
        for (size_t d = 0; d < t->n_data; d++) {
            const data_item *di = &t->data[d];
            if (!di->bytes || di->addr < blk->addr || di->addr >= blk->addr + blk->size)
                continue;
            if (!bytes && !(bytes = calloc(1, blk->size)))
                return lw_fail(lw, "out of host memory");
            uint32_t n = di->size < blk->addr + blk->size - di->addr ? di->size : blk->addr + blk->size - di->addr;
            memcpy(bytes + (di->addr - blk->addr), di->bytes, n);
        }
        char name[40];
        snprintf(name, sizeof name, bytes ? ".data.%zu" : ".bss.%zu", a);
        ok = exe_add_section(e, i, name, blk->addr, bytes, blk->size, EXE_SEC_WRITE | (bytes ? 0 : EXE_SEC_NOBITS),
                             err, sizeof err);
        free(bytes);
        if (!ok)
            return lw_fail(lw, "tile %u: %s", i, err);
    }
    if (!exe_set_entry(e, i, lw->kernels.supervisor))
        return lw_fail(lw, "out of host memory");
    uint64_t used = lw_tile_used_bytes(lw, t) + (lw->region0_start - ISA_MEMORY_BASE) + (lw->region1_start - ISA_REGION1_BASE);
    if (used > lw->rep->max_tile_bytes) {
        lw->rep->max_tile_bytes = used;
        lw->rep->max_tile = i_saved;
    }
    return true;
}

/* Tensor map entries (and symbols on each tile) for every tensor kept. */
static bool map_tensor(lowering *lw, ipu_exe *e, int t, uint32_t role, uint32_t r)
{
    const graph_tensor *g = lw_gt(lw, t);
    const ltensor *lt = &lw->tensor[t];
    uint64_t dims[TMAP_MAX_RANK];
    for (int d = 0; d < g->shape.rank && d < TMAP_MAX_RANK; d++)
        dims[d] = (uint64_t)g->shape.dims[d];
    /* Replica r's copy is "replicaR/NAME" (replica 0 keeps the name). */
    char *name = malloc(strlen(g->name) + 24);
    if (!name)
        return lw_fail(lw, "out of host memory");
    if (r)
        sprintf(name, "replica%u/%s", r, g->name);
    else
        strcpy(name, g->name);
    if (lw->tensor[lt->root].released)
        role |= TMAP_TRANSIENT;
    tmap_tensor *mt = tmap_add_tensor(lw->tmap, name, (uint32_t)g->dtype, lt->element_bytes, (uint32_t)g->shape.rank, dims,
                                      role);
    free(name);
    if (!mt)
        return lw_fail(lw, "out of host memory");
    if (lt->permuted)
        for (int d = 0; d < g->shape.rank; d++)
            mt->perm[d] = lt->perm[d];
    for (size_t k = 0; k < lt->n; k++) {
        uint32_t stream = TMAP_NO_STREAM;
        if (role & TMAP_INPUT)
            stream = lw->next_in_stream++;
        else if (role & TMAP_OUTPUT)
            stream = lw->next_out_stream++;
        uint32_t tile = lw_global_tile(lw, lt->p[k].tile) + r * lw->tiles_per_chip;
        if (!tmap_add_piece(mt, tile, lt->p[k].addr, lt->p[k].first, lt->p[k].count, stream))
            return lw_fail(lw, "out of host memory");
        if (!(role & TMAP_OUTPUT) || (role & TMAP_INPUT))
            exe_add_symbol(e, tile, g->name, lt->p[k].addr, (uint32_t)(lt->p[k].count * lt->element_bytes), EXE_SYM_DATA, true);
    }
    return true;
}

/* Pipeline stages: the ops, in their order, cut into lw->stages runs of
 * about equal estimated work (multiply-accumulates for matmuls and
 * convolutions over the AMP's rate, elements for the rest), each run on
 * its own chip. */
static void assign_stages(lowering *lw)
{
    const graph *g = lw->g;
    double *cost = calloc((size_t)g->n_nodes + 1, sizeof *cost), total = 0;
    if (!cost)
        return;
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        if (n->n_outputs < 1 || n->outputs[0] < 0 || g->tensors[n->outputs[0]].data || is_view(n->op))
            continue;
        double out = (double)graph_shape_numel(&g->tensors[n->outputs[0]].shape);
        double c = out;
        if (n->op == GRAPH_OP_MATMUL || n->op == GRAPH_OP_GEMM || n->op == GRAPH_OP_FUSED_MATMUL) {
            const graph_shape *a = &g->tensors[n->inputs[0]].shape;
            c += out * (double)a->dims[a->rank - 1] / 16.0;
        } else if (n->op == GRAPH_OP_CONV || n->op == GRAPH_OP_FUSED_CONV) {
            const graph_shape *w = &g->tensors[n->inputs[1]].shape;
            c += out * (double)(graph_shape_numel(w) / w->dims[0]) / 16.0;
        }
        cost[i] = c;
        total += c;
    }
    double acc = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        uint32_t s = (uint32_t)(acc / (total > 0 ? total : 1) * lw->stages);
        lw->stage_of[i] = s < lw->stages ? s : lw->stages - 1;
        acc += cost[i];
    }
    free(cost);
}

ipu_exe *lower_graph(const graph *g, const lower_options *o, lower_report *report, char *err, size_t err_size)
{
    lower_report dummy;
    lowering lw = { .g = g, .opts = o, .rep = report ? report : &dummy, .err = err, .err_size = err_size };
    memset(lw.rep, 0, sizeof *lw.rep);
    const machine *m = o->machine;
    uint32_t per_chip = machine_u32(m, MP_tiles_per_chip);
    lw.tiles = o->tiles && o->tiles < per_chip ? o->tiles : per_chip;
    lw.tiles_per_chip = per_chip;
    /* Pipeline stages, one a chip, or data-parallel replicas, one a chip:
     * the program for chip 0 copied. */
    uint32_t chips = machine_u32(m, MP_chips);
    lw.stages = o->pipeline ? o->pipeline : 1;
    if (lw.stages > chips) {
        snprintf(err, err_size, "%s: %u pipeline stages on a machine of %u chip%s", g->source, lw.stages, chips,
                 chips == 1 ? "" : "s");
        return NULL;
    }
    lw.replicas = o->replicas ? o->replicas : lw.stages > 1 ? 1 : chips;
    if (lw.replicas * lw.stages > chips) {
        snprintf(err, err_size, "%s: %u replicas%s on a machine of %u chip%s", g->source, lw.replicas,
                 lw.stages > 1 ? " of a pipeline" : "", chips, chips == 1 ? "" : "s");
        return NULL;
    }
    if (lw.stages > 1 && lw.replicas > 1) {
        snprintf(err, err_size, "%s: pipeline stages and replicas together are not yet supported", g->source);
        return NULL;
    }
    lw.program_tiles = lw.stages * lw.tiles;
    lw.mem_end = ISA_MEMORY_BASE + machine_u32(m, MP_tile_memory_bytes);
    lw.rep->memory_bytes = machine_u32(m, MP_tile_memory_bytes);
    ipu_exe *e = NULL;
    lw.lib = codelet_library_get(err, err_size);
    if (!lw.lib)
        return NULL;
    if (!kernel_symbols_find(lw.lib, &lw.kernels, err, err_size))
        return NULL;
    if (!lower_supports(g, o, err, err_size)) {
        lw.rep->unsupported = true;
        return NULL;
    }
    lw.region0_start = (lw.lib->region0_end + ELEMENT_BYTES - 1) / ELEMENT_BYTES * ELEMENT_BYTES;
    lw.region1_start = (uint32_t)ALIGN8(lw.lib->region1_end);
    if (lw.mem_end <= ISA_REGION1_BASE) {
        snprintf(err, err_size, "%s: the machine's tile memory (%u bytes) has no region 1; ipusim compiles for "
                 "GC200/Bow-sized tiles", g->source, machine_u32(m, MP_tile_memory_bytes));
        return NULL;
    }
    lw.tile = calloc(lw.program_tiles, sizeof *lw.tile);
    lw.sync_step = lw.stages > 1 ? lw.kernels.ctl_sync_system : lw.kernels.ctl_sync_chip;
    lw.stage_of = calloc((size_t)g->n_nodes + 1, sizeof *lw.stage_of);
    if (lw.stage_of && lw.stages > 1)
        assign_stages(&lw);
    lw.tensor = calloc((size_t)g->n_tensors + 1, sizeof *lw.tensor);
    lw.last_reader = calloc((size_t)g->n_tensors + 1, sizeof *lw.last_reader);
    lw.tmap = tmap_new();
    if (!lw.tile || !lw.tensor || !lw.tmap || !lw.stage_of || !lw.last_reader) {
        snprintf(err, err_size, "out of host memory");
        goto done;
    }
    for (uint32_t i = 0; i < lw.program_tiles; i++) {
        lw.tile[i].region0_kept_end = lw.region0_start;
        lw.tile[i].region1_kept_end = lw.region1_start;
        lw.tile[i].region0_scratch_floor = ISA_REGION1_BASE;
        lw.tile[i].region1_scratch_floor = lw.mem_end;
    }
    release_scratch(&lw);
    for (int t = 0; t < g->n_tensors; t++)
        lw.tensor[t].element_bytes = (uint32_t)graph_dtype_size(g->tensors[t].dtype);
    tensor_roots(&lw);

    /* 1. Inputs from the host. */
    for (int i = 0; i < g->n_inputs && !lw.failed; i++) {
        int t = g->inputs[i];
        if (g->tensors[t].data)
            continue;
        if (!lower_input(&lw, t))
            break;
    }
    uint32_t stream = 0;
    for (int i = 0; i < g->n_inputs && !lw.failed; i++) {
        const ltensor *lt = &lw.tensor[g->inputs[i]];
        if (g->tensors[g->inputs[i]].data)
            continue;
        for (size_t k = 0; k < lt->n; k++)
            lw_add_host_receive(&lw, lt->p[k].tile, lt->p[k].addr, (uint32_t)(lt->p[k].count * lt->element_bytes),
                                XCH_HOST | stream++);
    }
    lw.rep->input_streams = stream;
    if (!lw.failed)
        lw_end_phase(&lw);

    /* 2. The ops. */
    for (int i = 0; i < g->n_nodes && !lw.failed; i++) {
        const graph_node *n = &g->nodes[i];
        bool folded = true;
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0 && !g->tensors[n->outputs[k]].data)
                folded = false;
        if (folded)
            continue;
        lw.rep->ops++;
        /* Each op starts where the previous one's tiles ended, so no tile
         * holds the first piece of everything. */
        if (lw.stage_of[i] != lw.stage) {
            lw.stage = lw.stage_of[i];
            lw.op_base = 0;
        } else {
            lw.op_base = (lw.op_base + lw.op_tiles) % lw.tiles;
        }
        lw.op_tiles = 0;
        release_scratch(&lw);
        int f;
        if (is_view(n->op))
            lower_view(&lw, n);
        else if (lw_logic_handles(g, n))
            lw_lower_logic(&lw, n, i);
        else if ((f = unary_function(n->op)) >= 0)
            lower_unary(&lw, n, i, f, 0, 0);
        else if ((f = binary_function(n->op)) >= 0)
            lower_binary(&lw, n, i, f, n->inputs[0], n->inputs[1]);
        else if (n->op == GRAPH_OP_POW && (f = lw_pow_form(g, n)) != -1) {
            if (f == -2)
                lower_binary(&lw, n, i, KERNEL_BINARY_MUL, n->inputs[0], n->inputs[0]);
            else if (f == -3)
                lower_view(&lw, n);
            else
                lower_unary(&lw, n, i, f, 0, 0);
        } else if (n->op == GRAPH_OP_TRANSPOSE && lw_transpose_into_matmul(g, n->outputs[0]))
            ;                         /* read transposed by the MatMul that uses it */
        else if (n->op == GRAPH_OP_GATHER && !g->tensors[n->inputs[1]].data)
            lw_lower_gather(&lw, n, i);
        else if (is_runs(n->op))
            lw_lower_runs(&lw, n, i);
        else if (n->op == GRAPH_OP_CAST)
            lw_lower_cast(&lw, n, i);
        else if (is_reduce(n->op))
            lw_lower_reduce(&lw, n, i);
        else if (n->op == GRAPH_OP_MAXPOOL || n->op == GRAPH_OP_AVERAGEPOOL || n->op == GRAPH_OP_GLOBALAVERAGEPOOL)
            lw_lower_pool(&lw, n, i);
        else if (n->op == GRAPH_OP_SOFTMAX || n->op == GRAPH_OP_LAYERNORM)
            lower_rows(&lw, n, i);
        else if (n->op == GRAPH_OP_MATMUL || n->op == GRAPH_OP_GEMM || n->op == GRAPH_OP_FUSED_MATMUL ||
                 n->op == GRAPH_OP_CONV || n->op == GRAPH_OP_FUSED_CONV)
            lw_lower_matmul(&lw, n, i);
        else
            lw_unsupported(&lw, n, i, "no lowering for this op yet");
        for (int k = 0; k < n->n_outputs && !lw.failed; k++)
            if (n->outputs[k] >= 0)
                lw_sort_pieces(&lw, n->outputs[k]);
        if (!lw.failed)
            release_dead(&lw, i);
    }

    /* 3. Outputs to the host. */
    e = exe_new();
    if (!e) {
        lw_fail(&lw, "out of host memory");
        goto done;
    }
    for (int i = 0; i < g->n_outputs && !lw.failed; i++) {
        int t = g->outputs[i];
        if (!lw.tensor[t].placed) {
            /* A constant (or an input passed through): place it on tile 0. */
            const graph_tensor *gtn = lw_gt(&lw, t);
            uint64_t n = (uint64_t)graph_shape_numel(&gtn->shape);
            if (!gtn->data) {
                lw_fail(&lw, "%s: output '%s' is never computed", g->source, gtn->name);
                break;
            }
            uint32_t a = lw_fetch(&lw, t, 0, n, 0, PREFER_REGION1);
            if (a)
                lw_add_piece(&lw, t, 0, a, 0, n);
        }
    }
    /* The outputs leave in a superstep of their own, after a chip sync, so
     * the statistics show the computation apart from the host transfers. */
    if (!lw.failed)
        lw_end_phase(&lw);
    for (uint32_t i = 0; i < lw.program_tiles && !lw.failed; i++)
        lw_push_word(&lw, &lw.tile[i].steps, lw.sync_step);
    for (int i = 0; i < g->n_outputs && !lw.failed; i++) {
        const ltensor *lt = &lw.tensor[g->outputs[i]];
        for (size_t k = 0; k < lt->n; k++) {
            ltile *tt = &lw.tile[lt->p[k].tile];
            lw_push_word(&lw, &tt->steps, lw.kernels.ctl_send);
            lw_push_word(&lw, &tt->steps, lt->p[k].addr);
            lw_push_word(&lw, &tt->steps, (uint32_t)((lt->p[k].count * lt->element_bytes + 3) & ~3ull));
            lw_push_word(&lw, &tt->steps, XCH_HOST | lw.rep->output_streams++);
            lw_note_peer(&lw, lt->p[k].tile, PEER_HOST_OUT);
        }
    }
    /* The tensor map: inputs and outputs first (their streams are numbered
     * in this order, as the steps above), then weights and activations. */
    for (uint32_t r = 0; r < lw.replicas && !lw.failed; r++) {
        for (int i = 0; i < g->n_inputs && !lw.failed; i++)
            if (!g->tensors[g->inputs[i]].data)
                map_tensor(&lw, e, g->inputs[i], TMAP_INPUT, r);
        for (int i = 0; i < g->n_outputs && !lw.failed; i++)
            map_tensor(&lw, e, g->outputs[i], TMAP_OUTPUT, r);
        for (int t = 0; t < g->n_tensors && !lw.failed; t++)
            if (lw.tensor[t].placed && !g->tensors[t].is_input && !g->tensors[t].is_output)
                map_tensor(&lw, e, t, g->tensors[t].data ? TMAP_WEIGHT : TMAP_ACTIVATION, r);
    }
    /* Tiles past the last one holding anything only sync: they get no
     * code, and the syncs of the rest do not wait for them. */
    uint32_t used = 1;
    for (uint32_t i = 0; i < lw.program_tiles; i++)
        if (lw.tile[i].n_allocs || lw.tile[i].records.n)
            used = i + 1;
    if (lw.stages > 1)
        used = lw.program_tiles;      /* every stage's tiles take part in the system syncs */
    for (uint32_t i = 0; i < used && !lw.failed; i++)
        close_tile(&lw, i);
    for (uint32_t r = 0; r < lw.replicas && !lw.failed; r++)
        for (uint32_t i = 0; i < used && !lw.failed; i++)
            finish_tile(&lw, i, r, e);
    lw.rep->tiles_used = lw.stages > 1 ? lw.tiles : used;
    lw.rep->replicas = lw.replicas;
    lw.rep->stages = lw.stages;
    if (!lw.failed) {
        uint8_t *blob;
        size_t size;
        if (!tmap_encode(lw.tmap, &blob, &size) || !exe_set_blob(&e->tensors, blob, size)) {
            lw_fail(&lw, "out of host memory");
        }
        free(blob);
    }
done:
    free(lw.stage_of);
    free(lw.last_reader);
    if (lw.tile) {
        for (uint32_t i = 0; i < lw.program_tiles; i++) {
            ltile *t = &lw.tile[i];
            free(t->steps.w);
            free(t->records.w);
            free(t->patch);
            free(t->sends);
            free(t->recvs);
            free(t->copies.w);
            for (size_t d = 0; d < t->n_data; d++)
                free(t->data[d].bytes);
            free(t->data);
            free(t->allocs);
            free(t->peers);
            free(t->free);
        }
    }
    if (lw.tensor)
        for (int t = 0; t < g->n_tensors; t++) {
            free(lw.tensor[t].p);
            free(lw.tensor[t].blocks);
        }
    free(lw.tile);
    free(lw.tensor);
    tmap_free(lw.tmap);
    if (lw.failed || !e) {
        exe_free(e);
        return NULL;
    }
    return e;
}
