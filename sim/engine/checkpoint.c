/*
 * checkpoint.c — checkpoints of the whole machine (engine.h, "Checkpoints"):
 * every tile's architectural and issue state, the engine's bookkeeping
 * (events, barriers, runnable tiles, statistics, trace, stepping state) and
 * the exchange's (channel busy times, counters, open phases' logs, host
 * streams, streaming memory), taken where no tile is in the middle of a run
 * and put back exactly.
 *
 * Sharing.  What a checkpoint holds is reference counted and shared with
 * its base wherever the bytes are the same:
 *   - tile memory pages.  A page is the base's when the tile has not
 *     written it since (the same page) or holds the same bytes; a page
 *     that changed is kept as the 256-byte blocks that differ from the
 *     base's key page (the whole page it keeps blocks against), or, when
 *     more than half of them do, as a new key page: the tile's own page,
 *     shared copy on write with it (memmodel/tile_memory.h), so that taking
 *     a checkpoint copies no page (the tile copies the page when it next
 *     writes it).  Most pages a superstep writes change in a few places
 *     (BERT-Base: a tenth of the bytes of the pages written);
 *   - a tile's issue counts per code word, in chunks of CHUNK_WORDS words
 *     (chunks of zeros are not stored);
 *   - a tile's state (ipu_tile less its pointers), kept as its non-zero
 *     64-bit words and a bitmap of where they go: most of its 1,885 words
 *     (the CSR space of every context) are zero;
 *   - the arrays the run appends to (supersteps, releases, trace segments
 *     and spans, host output) share the base's as a prefix; the other
 *     arrays are the base's when they are the same.
 */
#include "engine_internal.h"

#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A checkpoint names every field of these: a field added to them must be
 * taken and restored here (or said to need neither). */
_Static_assert(sizeof(void *) != 8 || sizeof(struct engine) == 5568, "struct engine changed: see checkpoint.c");
/* Neither taken nor restored: opt (the run's options, the same after a
 * restore), progress_next_s and run_started_s (host-time bookkeeping of
 * the progress report). */
_Static_assert(sizeof(void *) != 8 || sizeof(xch_system) == 336, "xch_system changed: see checkpoint.c");
_Static_assert(sizeof(void *) != 8 || sizeof(engine_stats) == 88, "engine_stats changed: see checkpoint.c");
_Static_assert(sizeof(void *) != 8 || sizeof(xch_log) == 80, "xch_log changed: see checkpoint.c");
/* etile, etile_body and ipu_tile are copied whole, all but their pointers
 * and the debugger's settings in them (encode_tile, take_engine_arrays),
 * which a restore keeps as they are: a field added to them is taken as it
 * is, unless it is one of those. */
_Static_assert(sizeof(void *) != 8 || sizeof(etile) == 256, "etile changed: see its pointers in checkpoint.c");
_Static_assert(sizeof(void *) != 8 || sizeof(ipu_tile) == 15088, "ipu_tile changed: see its pointers in checkpoint.c");
_Static_assert(sizeof(ipu_tile) % sizeof(uint64_t) == 0, "a tile's state is whole 64-bit words");

/* ---- bytes shared with the base ------------------------------------------------ */

/* An array's bytes: the first prefix->bytes are prefix's, the rest its own. */
typedef struct seq {
    uint32_t holders;
    struct seq *prefix;           /* NULL: none */
    size_t bytes;                 /* in all */
    size_t own_bytes;
    uint8_t own[];
} seq;

static void seq_release(seq *s)
{
    while (s && --s->holders == 0) {
        seq *p = s->prefix;
        free(s);
        s = p;
    }
}

static size_t seq_bytes(const seq *s) { return s ? s->bytes : 0; }

/* Whether s's bytes are the first s->bytes of data (bytes long). */
static bool seq_is_prefix(const seq *s, const uint8_t *data, size_t bytes)
{
    if (!s || s->bytes > bytes)
        return false;
    for (; s; s = s->prefix)
        if (s->own_bytes && memcmp(s->own, data + (s->bytes - s->own_bytes), s->own_bytes))
            return false;
    return true;
}

/* data as a seq (NULL for no bytes), sharing base's bytes where base is a
 * prefix of data; *own grows by the bytes it holds alone.  False when out
 * of host memory. */
static bool seq_take(const seq *base, const void *data, size_t bytes, seq **out, size_t *own)
{
    *out = NULL;
    if (bytes == 0)
        return true;
    seq *b = seq_is_prefix(base, data, bytes) ? (seq *)(uintptr_t)base : NULL;
    if (b && b->bytes == bytes) {
        b->holders++;
        *out = b;
        return true;
    }
    size_t start = b ? b->bytes : 0;
    seq *s = malloc(sizeof *s + (bytes - start));
    if (!s)
        return false;
    s->holders = 1;
    s->prefix = b;
    if (b)
        b->holders++;
    s->bytes = bytes;
    s->own_bytes = bytes - start;
    memcpy(s->own, (const uint8_t *)data + start, s->own_bytes);
    *own += sizeof *s + s->own_bytes;
    *out = s;
    return true;
}

static void seq_copy_to(const seq *s, void *dst)
{
    for (; s; s = s->prefix)
        memcpy((uint8_t *)dst + (s->bytes - s->own_bytes), s->own, s->own_bytes);
}

/* Bytes [off, off + len) of s. */
static void seq_read(const seq *s, size_t off, void *dst, size_t len)
{
    for (; s; s = s->prefix) {
        size_t lo = s->bytes - s->own_bytes, hi = s->bytes;
        size_t a = off > lo ? off : lo, b = off + len < hi ? off + len : hi;
        if (a < b)
            memcpy((uint8_t *)dst + (a - off), s->own + (a - lo), b - a);
    }
}

/* ---- what a checkpoint holds ---------------------------------------------------- */

#define CHUNK_WORDS 64u           /* issue counts are shared 512 bytes at a time */
#define TILE_WORDS (sizeof(ipu_tile) / sizeof(uint64_t))
#define MAP_WORDS ((TILE_WORDS + 63) / 64)

/* CHUNK_WORDS issue counts (fewer in a tile's last chunk). */
typedef struct chunk {
    uint32_t holders;
    uint64_t count[];
} chunk;

/* A tile's ipu_tile, pointers cleared: w[0 .. MAP_WORDS) is a bitmap of
 * its non-zero words, which follow in order. */
typedef struct record {
    uint32_t holders;
    uint32_t words;               /* of w */
    uint64_t w[];
} record;

/* A tile's exchange log of its open phase: the sends, the receives, then
 * the data bytes. */
typedef struct log_copy {
    size_t n_sends, n_recvs, data_bytes;
    bool phase_started;
    xch_transfer t[];
} log_copy;

#define BLOCK_BYTES 256u
#define PAGE_BLOCKS (TMEM_PAGE_BYTES / BLOCK_BYTES)
_Static_assert(PAGE_BLOCKS == 64, "a page's blocks are the bits of page_copy.changed");

/* A page of tile memory: key's bytes, but for the blocks in `changed`,
 * which are in blocks[], in order. */
typedef struct page_copy {
    uint32_t holders;
    const uint8_t *key;           /* a page as tile_memory holds them (tmem_page_share) */
    uint64_t changed;             /* bit b: block b */
    uint8_t blocks[];
} page_copy;

typedef struct tile_copy {
    record *rec;
    page_copy *page[TMEM_MAX_PAGES];  /* NULL: never written */
    uint32_t n_chunks;
    chunk **counts;               /* NULL entries: all zero */
    log_copy *log;                /* NULL: an empty log */
} tile_copy;

typedef struct stream_copy {
    uint32_t index;
    size_t cursor;
    seq *data;
} stream_copy;

/* The exchange's arrays (xch_system), in this order in a checkpoint. */
enum { XA_CHIP_HZ, XA_LINK_FREE, XA_HOST_FREE, XA_STREAM_FREE, XA_CHIP_STATS, XA_SPANS, XA_TILE_FREE,
       XA_COUNT };

/* The engine's arrays (struct engine), in this order in a checkpoint. */
enum { EA_ETILES, EA_BODIES, EA_GROUPS, EA_HEAP, EA_RELEASES, EA_RUNNABLE, EA_SUPERSTEPS, EA_SEGS, EA_STAT_CHIPS,
       EA_COUNT };

/* What an etile_body holds besides its tile (ipu_tile comes first). */
#define BODY_REST (sizeof(etile_body) - sizeof(ipu_tile))
_Static_assert(offsetof(etile_body, t) == 0 && BODY_REST > 0, "etile_body is its tile, then the rest");

struct engine_checkpoint {
    const engine *g;
    size_t n_tiles;
    uint32_t chips;
    tile_copy *tiles;
    chip_state *chip;
    seq *ea[EA_COUNT];
    seq *xa[XA_COUNT];
    stream_copy *streams[3];      /* host input, host output, streaming-memory buffers */
    size_t n_streams[3];
    /* the engine's other state */
    uint32_t barrier2_ready;
    uint64_t next_seq;
    uint64_t min_resume_ps;
    double batch_rate[2];
    uint64_t batches;
    enum engine_status status;
    char *message;
    engine_stats stats;           /* chips and supersteps: ea[] */
    bool ran, started, finished, in_events, step_done;
    engine_pause pause;
    size_t supersteps_seen;
    size_t n_received_pending;
    double host_s;
    uint64_t stream_used_bytes;
    bool record_spans;
    size_t own_bytes;             /* host bytes held alone */
};

/* ---- freeing --------------------------------------------------------------------- */

static void free_tile_copy(tile_copy *k)
{
    if (k->rec && --k->rec->holders == 0)
        free(k->rec);
    for (unsigned p = 0; p < TMEM_MAX_PAGES; p++)
        if (k->page[p] && --k->page[p]->holders == 0) {
            tmem_page_release(k->page[p]->key);
            free(k->page[p]);
        }
    for (uint32_t j = 0; k->counts && j < k->n_chunks; j++)
        if (k->counts[j] && --k->counts[j]->holders == 0)
            free(k->counts[j]);
    free(k->counts);
    free(k->log);
}

void engine_checkpoint_free(engine_checkpoint *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->tiles && i < c->n_tiles; i++)
        free_tile_copy(&c->tiles[i]);
    free(c->tiles);
    free(c->chip);
    for (int a = 0; a < EA_COUNT; a++)
        seq_release(c->ea[a]);
    for (int a = 0; a < XA_COUNT; a++)
        seq_release(c->xa[a]);
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < c->n_streams[l]; i++)
            seq_release(c->streams[l][i].data);
        free(c->streams[l]);
    }
    free(c->message);
    free(c);
}

/* ---- a tile ------------------------------------------------------------------------- */

/* The tile's state as words (bitmap, then the non-zero words), without the
 * pointers a restore keeps; the number of words of out. */
static uint32_t encode_tile(const ipu_tile *t, uint64_t *out)
{
    ipu_tile c;
    memcpy(&c, t, sizeof c);
    memset(&c.s.mem, 0, sizeof c.s.mem);
    c.s.xlog = NULL;
    c.code = NULL;
    c.code_shared = false;
    c.counts = NULL;
    const uint64_t *w = (const uint64_t *)(const void *)&c;
    memset(out, 0, MAP_WORDS * sizeof *out);
    uint32_t n = MAP_WORDS;
    for (size_t i = 0; i < TILE_WORDS; i++)
        if (w[i]) {
            out[i / 64] |= 1ull << (i % 64);
            out[n++] = w[i];
        }
    return n;
}

/* Put a record back into t, keeping t's pointers (memory, log, code, counts). */
static void decode_tile(const record *r, ipu_tile *t)
{
    ipu_tile c;
    memset(&c, 0, sizeof c);
    uint64_t *w = (uint64_t *)(void *)&c;
    const uint64_t *v = r->w + MAP_WORDS;
    for (size_t m = 0; m < MAP_WORDS; m++)
        for (uint64_t bits = r->w[m]; bits; bits &= bits - 1)
            w[m * 64 + (size_t)__builtin_ctzll(bits)] = *v++;
    c.s.mem = t->s.mem;
    c.s.xlog = t->s.xlog;
    c.code = t->code;
    c.code_shared = t->code_shared;
    c.counts = t->counts;
    memcpy(t, &c, sizeof c);
}

static bool all_zero(const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i])
            return false;
    return true;
}

/* A page_copy of key with the blocks of `changed` from page; NULL when out
 * of host memory.  *own grows by its bytes (and a whole page for a new key). */
static page_copy *new_page_copy(const uint8_t *key, uint64_t changed, const uint8_t *page, size_t *own)
{
    size_t bytes = sizeof(page_copy) + (size_t)__builtin_popcountll(changed) * BLOCK_BYTES;
    page_copy *c = malloc(bytes);
    if (!c)
        return NULL;
    c->holders = 1;
    c->key = key;
    c->changed = changed;
    uint8_t *to = c->blocks;
    for (uint64_t bits = changed; bits; bits &= bits - 1, to += BLOCK_BYTES)
        memcpy(to, page + (size_t)__builtin_ctzll(bits) * BLOCK_BYTES, BLOCK_BYTES);
    *own += bytes;
    return c;
}

/* Page p of the tile's memory (written) against the base's copy b (NULL:
 * none); NULL when out of host memory. */
static page_copy *take_page(tile_memory *m, uint32_t p, page_copy *b, size_t *own)
{
    const uint8_t *live = tmem_page(m, p);
    /* The base holds this very page: the tile has not written it since. */
    if (b && b->key == live && !b->changed) {
        b->holders++;
        return b;
    }
    uint64_t changed = 0;
    for (unsigned k = 0; b && k < PAGE_BLOCKS; k++)
        if (memcmp(live + k * BLOCK_BYTES, b->key + k * BLOCK_BYTES, BLOCK_BYTES))
            changed |= 1ull << k;
    if (b && changed == b->changed) {
        const uint8_t *from = b->blocks;
        bool same = true;
        for (uint64_t bits = changed; bits && same; bits &= bits - 1, from += BLOCK_BYTES)
            same = !memcmp(from, live + (size_t)__builtin_ctzll(bits) * BLOCK_BYTES, BLOCK_BYTES);
        if (same) {
            b->holders++;
            return b;
        }
    }
    if (b && !changed) {
        /* The same bytes as the base's key: the tile shares that. */
        tmem_page_adopt(m, p, b->key);
        tmem_page_hold(b->key);
        return new_page_copy(b->key, 0, NULL, own);
    }
    if (b && __builtin_popcountll(changed) <= PAGE_BLOCKS / 2) {
        tmem_page_hold(b->key);
        page_copy *c = new_page_copy(b->key, changed, live, own);
        if (!c)
            tmem_page_release(b->key);
        return c;
    }
    /* A new key page: the tile's, shared copy on write. */
    const uint8_t *key = tmem_page_share(m, p);
    page_copy *c = new_page_copy(key, 0, NULL, own);
    if (!c)
        tmem_page_release(key);
    else
        *own += tmem_page_host_bytes();
    return c;
}

/* The tile's memory pages; false when out of host memory. */
static bool take_pages(tile_memory *m, const tile_copy *b, tile_copy *k, size_t *own)
{
    for (uint32_t p = 0; p < TMEM_MAX_PAGES; p++)
        if (tmem_page(m, p) && !(k->page[p] = take_page(m, p, b ? b->page[p] : NULL, own)))
            return false;
    return true;
}

/* The issue counts, chunk by chunk: the base's chunk when the same. */
static bool take_counts(const ipu_tile *t, const tile_copy *b, tile_copy *k, size_t *own)
{
    uint32_t n_words = t->counts ? (t->code_end - t->code_base) / 4 : 0;
    k->n_chunks = (n_words + CHUNK_WORDS - 1) / CHUNK_WORDS;
    if (!k->n_chunks)
        return true;
    k->counts = calloc(k->n_chunks, sizeof *k->counts);
    if (!k->counts)
        return false;
    *own += k->n_chunks * sizeof *k->counts;
    for (uint32_t j = 0; j < k->n_chunks; j++) {
        const uint64_t *v = t->counts + (size_t)j * CHUNK_WORDS;
        size_t len = n_words - j * CHUNK_WORDS < CHUNK_WORDS ? n_words - j * CHUNK_WORDS : CHUNK_WORDS;
        chunk *bc = b && j < b->n_chunks ? b->counts[j] : NULL;
        if (bc && !memcmp(bc->count, v, len * sizeof *v)) {
            bc->holders++;
            k->counts[j] = bc;
            continue;
        }
        if (all_zero(v, len))
            continue;
        chunk *c = malloc(sizeof *c + len * sizeof *v);
        if (!c)
            return false;
        c->holders = 1;
        memcpy(c->count, v, len * sizeof *v);
        k->counts[j] = c;
        *own += sizeof *c + len * sizeof *v;
    }
    return true;
}

static bool take_log(const xch_log *l, tile_copy *k, size_t *own)
{
    if (!l->n_sends && !l->n_recvs && !l->data_bytes && !l->phase_started)
        return true;
    size_t n = l->n_sends + l->n_recvs, bytes = sizeof *k->log + n * sizeof(xch_transfer) + l->data_bytes;
    log_copy *c = malloc(bytes);
    if (!c)
        return false;
    c->n_sends = l->n_sends;
    c->n_recvs = l->n_recvs;
    c->data_bytes = l->data_bytes;
    c->phase_started = l->phase_started;
    if (l->n_sends)
        memcpy(c->t, l->sends, l->n_sends * sizeof *c->t);
    if (l->n_recvs)
        memcpy(c->t + l->n_sends, l->recvs, l->n_recvs * sizeof *c->t);
    if (l->data_bytes)
        memcpy((uint8_t *)(c->t + n), l->data, l->data_bytes);
    k->log = c;
    *own += bytes;
    return true;
}

/* Everything of tile i but its etile (taken with the others). */
static bool take_tile(engine *g, size_t i, const tile_copy *b, tile_copy *k, size_t *own)
{
    etile *et = &g->tiles[i];
    ipu_tile *t = &et->x->t;
    uint64_t words[MAP_WORDS + TILE_WORDS];
    uint32_t n = encode_tile(t, words);
    if (b && b->rec->words == n && !memcmp(b->rec->w, words, n * sizeof *words)) {
        b->rec->holders++;
        k->rec = b->rec;
    } else {
        k->rec = malloc(sizeof *k->rec + n * sizeof *words);
        if (!k->rec)
            return false;
        k->rec->holders = 1;
        k->rec->words = n;
        memcpy(k->rec->w, words, n * sizeof *words);
        *own += sizeof *k->rec + n * sizeof *words;
    }
    return take_pages(&t->s.mem, b, k, own) && take_counts(t, b, k, own) && take_log(&et->log, k, own);
}

/* Room for the log's contents in l; false when out of host memory. */
static bool reserve_log(xch_log *l, const log_copy *c)
{
    if (!c)
        return true;
    if (c->n_sends > l->cap_sends) {
        xch_transfer *p = realloc(l->sends, c->n_sends * sizeof *p);
        if (!p)
            return false;
        l->sends = p;
        l->cap_sends = c->n_sends;
    }
    if (c->n_recvs > l->cap_recvs) {
        xch_transfer *p = realloc(l->recvs, c->n_recvs * sizeof *p);
        if (!p)
            return false;
        l->recvs = p;
        l->cap_recvs = c->n_recvs;
    }
    if (c->data_bytes > l->data_cap) {
        uint8_t *p = realloc(l->data, c->data_bytes);
        if (!p)
            return false;
        l->data = p;
        l->data_cap = c->data_bytes;
    }
    return true;
}

static void restore_log(xch_log *l, const log_copy *c)
{
    xch_log_clear(l);
    if (!c)
        return;
    l->n_sends = c->n_sends;
    l->n_recvs = c->n_recvs;
    l->data_bytes = c->data_bytes;
    l->phase_started = c->phase_started;
    if (c->n_sends)
        memcpy(l->sends, c->t, c->n_sends * sizeof *c->t);
    if (c->n_recvs)
        memcpy(l->recvs, c->t + c->n_sends, c->n_recvs * sizeof *c->t);
    if (c->data_bytes)
        memcpy(l->data, (const uint8_t *)(c->t + c->n_sends + c->n_recvs), c->data_bytes);
}

/* Tile i as k has it; `built` are its pages kept as blocks, built whole
 * (build_pages), in page order. */
static void restore_tile(engine *g, size_t i, const tile_copy *k, uint8_t *const *built)
{
    etile *et = &g->tiles[i];
    ipu_tile *t = &et->x->t;
    decode_tile(k->rec, t);
    for (uint32_t p = 0; p < TMEM_MAX_PAGES; p++) {
        const page_copy *c = k->page[p];
        if (c && c->changed) {
            tmem_page_adopt(&t->s.mem, p, *built);
            tmem_page_release(*built++);
        } else {
            tmem_page_adopt(&t->s.mem, p, c ? c->key : NULL);
        }
    }
    uint32_t n_words = t->counts ? (t->code_end - t->code_base) / 4 : 0;
    for (uint32_t j = 0; j < k->n_chunks; j++) {
        size_t len = n_words - j * CHUNK_WORDS < CHUNK_WORDS ? n_words - j * CHUNK_WORDS : CHUNK_WORDS;
        uint64_t *v = t->counts + (size_t)j * CHUNK_WORDS;
        if (k->counts[j])
            memcpy(v, k->counts[j]->count, len * sizeof *v);
        else
            memset(v, 0, len * sizeof *v);
    }
    restore_log(&et->log, k->log);
}

/* ---- the engine's and the exchange's arrays --------------------------------------- */

/* Where an array of the engine or the exchange is, and its length in bytes. */
typedef struct array_ref {
    const void *data;
    size_t bytes;
} array_ref;

static array_ref exchange_array(engine *g, int a)
{
    xch_system *x = &g->xch;
    size_t chips = g->chips;
    switch (a) {
    case XA_CHIP_HZ: return (array_ref){ x->chip_hz, chips * sizeof *x->chip_hz };
    case XA_LINK_FREE: return (array_ref){ x->link_free_ps, chips * chips * sizeof *x->link_free_ps };
    case XA_HOST_FREE: return (array_ref){ x->host_free_ps, 2 * chips * sizeof *x->host_free_ps };
    case XA_STREAM_FREE: return (array_ref){ x->stream_free_ps, 2 * chips * sizeof *x->stream_free_ps };
    case XA_CHIP_STATS: return (array_ref){ x->chip_stats, chips * sizeof *x->chip_stats };
    case XA_SPANS: return (array_ref){ x->spans, x->n_spans * sizeof *x->spans };
    default: return (array_ref){ NULL, 2 * g->n_tiles * sizeof *x->bus_free };
    }
}

static array_ref engine_array(engine *g, int a)
{
    switch (a) {
    case EA_ETILES: return (array_ref){ NULL, g->n_tiles * sizeof(etile) };
    case EA_BODIES: return (array_ref){ NULL, g->n_tiles * BODY_REST };
    case EA_GROUPS: return (array_ref){ NULL, 3 * (g->chips + 1) * sizeof(uint32_t) };
    case EA_HEAP: return (array_ref){ g->heap, g->n_heap * sizeof *g->heap };
    case EA_RELEASES: return (array_ref){ g->releases, g->n_releases * sizeof *g->releases };
    case EA_RUNNABLE: return (array_ref){ g->runnable, g->n_runnable * sizeof *g->runnable };
    case EA_SUPERSTEPS:
        return (array_ref){ g->stats.supersteps, g->stats.n_supersteps * sizeof *g->stats.supersteps };
    case EA_SEGS: return (array_ref){ g->segs, g->n_segs * sizeof *g->segs };
    case EA_STAT_CHIPS:
        return (array_ref){ g->stats.chips, g->stats.chips ? g->stats.n_chips * sizeof *g->stats.chips : 0 };
    default: return (array_ref){ NULL, 0 };
    }
}

/* The engine's tiles' bookkeeping, without their pointers and debugger
 * settings (etile.x, log, checked, watched) with the rest of their
 * etile_body (an access watch's hit not reported yet), the sync groups'
 * counters, and the
 * outgoing buses' and receive ports' free cycles of the tiles with code
 * (the exchange keeps them for every tile of the system; the others never
 * send or receive). */
static bool take_engine_arrays(engine *g, const engine_checkpoint *b, engine_checkpoint *c)
{
    size_t n = g->n_tiles, k = g->chips + 1;
    etile *copy = malloc(n * sizeof *copy);
    uint32_t *groups = malloc(3 * k * sizeof *groups);
    uint64_t *tile_free = malloc(2 * n * sizeof *tile_free);
    uint8_t *bodies = malloc(n * BODY_REST);
    bool ok = copy && groups && tile_free && bodies;
    if (ok) {
        memcpy(copy, g->tiles, n * sizeof *copy);
        for (size_t i = 0; i < n; i++) {
            copy[i].x = NULL;
            memset(&copy[i].log, 0, sizeof copy[i].log);
            copy[i].checked = copy[i].watched = false;
            memcpy(bodies + i * BODY_REST, (const uint8_t *)g->tiles[i].x + sizeof(ipu_tile), BODY_REST);
            tile_free[2 * i] = g->xch.bus_free[g->tiles[i].tile_id];
            tile_free[2 * i + 1] = g->xch.port_free[g->tiles[i].tile_id];
        }
        memcpy(groups, g->group_members, k * sizeof *groups);
        memcpy(groups + k, g->group_active, k * sizeof *groups);
        memcpy(groups + 2 * k, g->group_open, k * sizeof *groups);
    }
    for (int a = 0; ok && a < EA_COUNT; a++) {
        array_ref r = engine_array(g, a);
        const void *data = a == EA_ETILES ? copy : a == EA_BODIES ? bodies : a == EA_GROUPS ? groups : r.data;
        ok = seq_take(b ? b->ea[a] : NULL, data, r.bytes, &c->ea[a], &c->own_bytes);
    }
    for (int a = 0; ok && a < XA_COUNT; a++) {
        array_ref r = exchange_array(g, a);
        ok = seq_take(b ? b->xa[a] : NULL, a == XA_TILE_FREE ? tile_free : r.data, r.bytes, &c->xa[a],
                      &c->own_bytes);
    }
    free(copy);
    free(groups);
    free(tile_free);
    free(bodies);
    return ok;
}

/* The streams of one list: host input, host output or buffers. */
static bool take_streams(const xch_stream *s, size_t n, const engine_checkpoint *b, int list, engine_checkpoint *c)
{
    if (!n)
        return true;
    c->streams[list] = calloc(n, sizeof *c->streams[list]);
    if (!c->streams[list])
        return false;
    c->n_streams[list] = n;
    c->own_bytes += n * sizeof *c->streams[list];
    for (size_t i = 0; i < n; i++) {
        stream_copy *k = &c->streams[list][i];
        k->index = s[i].index;
        k->cursor = s[i].cursor - s[i].start;        /* the bytes held (a buffer's read ones let go) */
        const seq *base = NULL;
        for (size_t j = 0; b && j < b->n_streams[list] && !base; j++)
            if (b->streams[list][j].index == s[i].index)
                base = b->streams[list][j].data;
        if (!seq_take(base, s[i].data ? s[i].data + s[i].start : NULL, s[i].size - s[i].start, &k->data,
                      &c->own_bytes))
            return false;
    }
    return true;
}

/* The engine's scalars (the arrays are taken elsewhere). */
static bool take_scalars(const engine *g, engine_checkpoint *c)
{
    c->chips = g->chips;
    c->n_tiles = g->n_tiles;
    c->chip = malloc(g->chips * sizeof *c->chip);
    size_t len = strlen(g->message) + 1;
    c->message = malloc(len);
    if (!c->chip || !c->message)
        return false;
    memcpy(c->chip, g->chip, g->chips * sizeof *c->chip);
    memcpy(c->message, g->message, len);
    c->own_bytes += sizeof *c + g->chips * sizeof *c->chip + len + g->n_tiles * sizeof *c->tiles;
    c->barrier2_ready = g->barrier2_ready;
    c->next_seq = g->next_seq;
    c->min_resume_ps = g->min_resume_ps;
    memcpy(c->batch_rate, g->batch_rate, sizeof c->batch_rate);
    c->batches = g->batches;
    c->status = g->status;
    c->stats = g->stats;
    c->stats.chips = NULL;
    c->stats.supersteps = NULL;
    c->ran = g->ran;
    c->started = g->started;
    c->finished = g->finished;
    c->in_events = g->in_events;
    c->step_done = g->step_done;
    c->pause = g->pause;
    c->supersteps_seen = g->supersteps_seen;
    c->n_received_pending = g->n_received_pending;
    c->host_s = g->host_s;
    c->stream_used_bytes = g->xch.stream_used_bytes;
    c->record_spans = g->xch.record_spans;
    return true;
}

/* ---- taking -------------------------------------------------------------------------- */

engine_checkpoint *engine_checkpoint_take(engine *g, const engine_checkpoint *base, char *err, size_t err_size)
{
    if (!g->started) {
        snprintf(err, err_size, "no checkpoint before the run has started");
        return NULL;
    }
    if (g->batch_open) {
        snprintf(err, err_size, "no checkpoint while tiles are paused in the middle of their runs: take one at "
                                "the end of a superstep, at the start or at the end of the run");
        return NULL;
    }
    if (base && (base->g != g || base->n_tiles != g->n_tiles)) {
        snprintf(err, err_size, "the base checkpoint is one of another engine");
        return NULL;
    }
    engine_checkpoint *c = calloc(1, sizeof *c);
    if (c) {
        c->g = g;
        c->tiles = calloc(g->n_tiles, sizeof *c->tiles);
    }
    bool ok = c && c->tiles && take_scalars(g, c) && take_engine_arrays(g, base, c);
    for (int l = 0; ok && l < 3; l++) {
        const xch_system *x = &g->xch;
        const xch_stream_list *sl = l == 0 ? &x->host_in : l == 1 ? &x->host_out : &x->buffers;
        ok = take_streams(sl->s, sl->n, base, l, c);
    }
    if (ok) {
        /* Tiles share nothing with each other: each is taken on its own. */
        size_t n = g->n_tiles, own = 0;
        int threads = n < 64 ? 1 : g->threads;
        int failed = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1) reduction(+ : own, failed)
        for (size_t i = 0; i < n; i++)
            failed += !take_tile(g, i, base ? &base->tiles[i] : NULL, &c->tiles[i], &own);
        c->own_bytes += own;
        ok = !failed;
    }
    if (!ok) {
        engine_checkpoint_free(c);
        snprintf(err, err_size, "out of host memory for a checkpoint of %zu tiles", g->n_tiles);
        return NULL;
    }
    return c;
}

/* ---- restoring ----------------------------------------------------------------------- */

/* p with room for `need` elements of `elem` bytes (*cap of them now);
 * *ok false (and p as it was) when out of host memory. */
static void *reserve(void *p, size_t *cap, size_t need, size_t elem, bool *ok)
{
    if (!*ok || need <= *cap)
        return p;
    void *q = realloc(p, need * elem);
    if (!q) {
        *ok = false;
        return p;
    }
    *cap = need;
    return q;
}

/* A new list of streams with the checkpoint's contents, indexed. */
static bool build_streams(const stream_copy *k, size_t n, xch_stream_list *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return true;
    xch_stream *s = calloc(n, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < n; i++) {
        s[i].index = k[i].index;
        s[i].cursor = k[i].cursor;
        s[i].size = s[i].cap = seq_bytes(k[i].data);
        if (s[i].size && !(s[i].data = malloc(s[i].size))) {
            for (size_t j = 0; j < i; j++)
                free(s[j].data);
            free(s);
            return false;
        }
        seq_copy_to(k[i].data, s[i].data);
    }
    *out = (xch_stream_list){ .s = s, .n = n, .cap = n };
    if (!xch_stream_list_index(out)) {
        xch_stream_list_free(out);
        return false;
    }
    return true;
}

/* What a restore makes before it changes anything, so that a host out of
 * memory leaves the engine as it was. */
typedef struct room {
    xch_stream_list streams[3];   /* new stream lists */
    engine_chip_stats *chips;     /* the chip totals (NULL: none yet) */
    uint8_t **built;              /* pages kept as blocks, built whole: tile i's from built_first[i] */
    size_t *built_first;
    size_t n_built;
} room;

static void free_room(room *r)
{
    for (int l = 0; l < 3; l++)
        xch_stream_list_free(&r->streams[l]);
    free(r->chips);
    for (size_t i = 0; r->built && i < r->n_built; i++)
        tmem_page_release(r->built[i]);
    free(r->built);
    free(r->built_first);
}

/* Every page of c kept as blocks, built whole: a copy of its key with the
 * blocks put in. */
static bool build_pages(const engine_checkpoint *c, int threads, room *r)
{
    size_t n = c->n_tiles;
    r->built_first = malloc((n + 1) * sizeof *r->built_first);
    if (!r->built_first)
        return false;
    r->built_first[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (uint32_t p = 0; p < TMEM_MAX_PAGES; p++)
            k += c->tiles[i].page[p] && c->tiles[i].page[p]->changed;
        r->built_first[i + 1] = r->built_first[i] + k;
    }
    r->n_built = r->built_first[n];
    r->built = calloc(r->n_built + 1, sizeof *r->built);
    if (!r->built)
        return false;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1) reduction(+ : failed)
    for (size_t i = 0; i < n; i++) {
        uint8_t **to = r->built + r->built_first[i];
        for (uint32_t p = 0; p < TMEM_MAX_PAGES; p++) {
            const page_copy *pc = c->tiles[i].page[p];
            if (!pc || !pc->changed)
                continue;
            uint8_t *page = tmem_page_copy(pc->key);
            if (!page) {
                failed++;
                break;
            }
            const uint8_t *from = pc->blocks;
            for (uint64_t bits = pc->changed; bits; bits &= bits - 1, from += BLOCK_BYTES)
                memcpy(page + (size_t)__builtin_ctzll(bits) * BLOCK_BYTES, from, BLOCK_BYTES);
            *to++ = page;
        }
    }
    return !failed;
}

/* The room a restore needs: the growable arrays, the tiles' logs, new
 * stream lists, chip totals and pages. */
static bool reserve_all(engine *g, const engine_checkpoint *c, room *r)
{
    xch_system *x = &g->xch;
    bool ok = true;
    memset(r, 0, sizeof *r);
    g->heap = reserve(g->heap, &g->cap_heap, seq_bytes(c->ea[EA_HEAP]) / sizeof *g->heap, sizeof *g->heap, &ok);
    g->releases = reserve(g->releases, &g->cap_releases, seq_bytes(c->ea[EA_RELEASES]) / sizeof *g->releases,
                          sizeof *g->releases, &ok);
    g->stats.supersteps = reserve(g->stats.supersteps, &g->cap_supersteps,
                                  seq_bytes(c->ea[EA_SUPERSTEPS]) / sizeof *g->stats.supersteps,
                                  sizeof *g->stats.supersteps, &ok);
    g->segs = reserve(g->segs, &g->cap_segs, seq_bytes(c->ea[EA_SEGS]) / sizeof *g->segs, sizeof *g->segs, &ok);
    x->spans = reserve(x->spans, &x->cap_spans, seq_bytes(c->xa[XA_SPANS]) / sizeof *x->spans, sizeof *x->spans, &ok);
    for (size_t i = 0; ok && i < g->n_tiles; i++)
        ok = reserve_log(&g->tiles[i].log, c->tiles[i].log);
    for (int l = 0; ok && l < 3; l++)
        ok = build_streams(c->streams[l], c->n_streams[l], &r->streams[l]);
    size_t chip_bytes = seq_bytes(c->ea[EA_STAT_CHIPS]);
    if (ok && chip_bytes && (r->chips = malloc(chip_bytes)) != NULL)
        seq_copy_to(c->ea[EA_STAT_CHIPS], r->chips);
    ok = ok && (!chip_bytes || r->chips) && build_pages(c, g->n_tiles < 64 ? 1 : g->threads, r);
    if (!ok)
        free_room(r);
    return ok;
}

/* The engine's scalars and arrays, room made (reserve_all). */
static void restore_engine(engine *g, const engine_checkpoint *c, const room *r)
{
    memcpy(g->chip, c->chip, g->chips * sizeof *g->chip);
    size_t k = g->chips + 1;
    uint32_t groups[3 * k];
    seq_copy_to(c->ea[EA_GROUPS], groups);
    memcpy(g->group_members, groups, k * sizeof *groups);
    memcpy(g->group_active, groups + k, k * sizeof *groups);
    memcpy(g->group_open, groups + 2 * k, k * sizeof *groups);
    g->barrier2_ready = c->barrier2_ready;
    g->n_heap = seq_bytes(c->ea[EA_HEAP]) / sizeof *g->heap;
    seq_copy_to(c->ea[EA_HEAP], g->heap);
    g->next_seq = c->next_seq;
    g->n_releases = seq_bytes(c->ea[EA_RELEASES]) / sizeof *g->releases;
    seq_copy_to(c->ea[EA_RELEASES], g->releases);
    g->n_runnable = seq_bytes(c->ea[EA_RUNNABLE]) / sizeof *g->runnable;
    seq_copy_to(c->ea[EA_RUNNABLE], g->runnable);
    g->min_resume_ps = c->min_resume_ps;
    memcpy(g->batch_rate, c->batch_rate, sizeof g->batch_rate);
    g->batches = c->batches;
    g->status = c->status;
    snprintf(g->message, sizeof g->message, "%s", c->message);
    engine_superstep *supersteps = g->stats.supersteps;
    free(g->stats.chips);
    g->stats = c->stats;
    g->stats.chips = r->chips;
    g->stats.supersteps = supersteps;
    seq_copy_to(c->ea[EA_SUPERSTEPS], supersteps);
    g->n_segs = seq_bytes(c->ea[EA_SEGS]) / sizeof *g->segs;
    seq_copy_to(c->ea[EA_SEGS], g->segs);
    g->ran = c->ran;
    g->started = c->started;
    g->finished = c->finished;
    g->batch_open = false;
    g->in_events = c->in_events;
    g->step_done = c->step_done;
    g->pause = c->pause;
    g->supersteps_seen = c->supersteps_seen;
    g->n_received_pending = c->n_received_pending;
    g->host_s = c->host_s;
    /* the exchange */
    xch_system *x = &g->xch;
    for (int a = 0; a < XA_SPANS; a++)
        seq_copy_to(c->xa[a], (void *)(uintptr_t)exchange_array(g, a).data);
    for (size_t i = 0; i < g->n_tiles; i++) {
        uint64_t free_cycle[2];
        seq_read(c->xa[XA_TILE_FREE], 2 * i * sizeof *free_cycle, free_cycle, sizeof free_cycle);
        x->bus_free[g->tiles[i].tile_id] = free_cycle[0];
        x->port_free[g->tiles[i].tile_id] = free_cycle[1];
    }
    x->n_spans = seq_bytes(c->xa[XA_SPANS]) / sizeof *x->spans;
    seq_copy_to(c->xa[XA_SPANS], x->spans);
    xch_stream_list_free(&x->host_in);
    xch_stream_list_free(&x->host_out);
    xch_stream_list_free(&x->buffers);
    x->host_in = r->streams[0];
    x->host_out = r->streams[1];
    x->buffers = r->streams[2];
    x->stream_used_bytes = c->stream_used_bytes;
    x->record_spans = c->record_spans;
}

bool engine_checkpoint_restore(engine *g, const engine_checkpoint *c, char *err, size_t err_size)
{
    if (c->g != g || c->n_tiles != g->n_tiles) {
        snprintf(err, err_size, "the checkpoint is one of another engine");
        return false;
    }
    room r;
    if (!reserve_all(g, c, &r)) {
        snprintf(err, err_size, "out of host memory restoring a checkpoint of %zu tiles", g->n_tiles);
        return false;
    }
    restore_engine(g, c, &r);
    /* The tiles' bookkeeping, keeping their pointers, checked and watched flags. */
    for (size_t i = 0; i < g->n_tiles; i++) {
        etile *et = &g->tiles[i], k;
        seq_read(c->ea[EA_ETILES], i * sizeof k, &k, sizeof k);
        k.x = et->x;
        k.log = et->log;
        k.checked = et->checked;
        k.watched = et->watched;
        *et = k;
        seq_read(c->ea[EA_BODIES], i * BODY_REST, (uint8_t *)et->x + sizeof(ipu_tile), BODY_REST);
    }
    size_t n = g->n_tiles;
    int threads = n < 64 ? 1 : g->threads;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
    for (size_t i = 0; i < n; i++)
        restore_tile(g, i, &c->tiles[i], r.built + r.built_first[i]);
    free(r.built);
    free(r.built_first);
    return true;
}

/* ---- what it is ---------------------------------------------------------------------- */

size_t engine_checkpoint_bytes(const engine_checkpoint *c) { return c->own_bytes; }
const engine_pause *engine_checkpoint_pause(const engine_checkpoint *c) { return &c->pause; }
bool engine_checkpoint_finished(const engine_checkpoint *c) { return c->finished; }

uint32_t engine_checkpoint_supersteps(const engine_checkpoint *c, uint32_t chip)
{
    return chip < c->chips ? c->chip[chip].n_supersteps : 0;
}

uint64_t engine_checkpoint_cycle(const engine_checkpoint *c, uint32_t chip)
{
    return chip < c->chips ? c->chip[chip].ss_start_cycle : 0;
}

uint64_t engine_checkpoint_end_ps(const engine_checkpoint *c)
{
    uint64_t end = 0;
    for (uint32_t k = 0; k < c->chips; k++)
        if (c->chip[k].ss_start_ps > end)
            end = c->chip[k].ss_start_ps;
    return end;
}
