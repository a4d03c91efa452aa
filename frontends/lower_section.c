/*
 * lower_section.c — control programs shared between the micro-batches of
 * a pipelined training step (lower_options.share_programs), as PopART runs
 * one program a pipeline stage for every micro-batch, its inputs restored
 * from a stash.  Without it a tile's control program and vertex records
 * grow with the micro-batches, and a board's BERT runs out of tile memory
 * for them.
 *
 * A section is a run of nodes, in the order they are lowered, of one
 * pipeline cycle, stage and phase: a stage's forward or backward pass of
 * one micro-batch (what micro-batch 0's cycles make of weights alone,
 * graph_node.weights_only, a section apart).  Sections alike (the same
 * ops, attributes, shapes and inputs made inside them, node for node: the
 * micro-batch copies of train_pipeline.c) share a key; the first is its
 * template.  Every section is lowered in full, in its stage's arena:
 *
 *   - the arena is as many bytes of each region on every tile of the stage
 *     as its sections need at most, from where the gap between the blocks
 *     kept for the run and the ops' scratch began at the stage's first
 *     section, less where a tile must leave the rest of the program its
 *     room (tile_arena); each section starts with the arena empty (no free
 *     blocks), so that sections alike are placed alike.  The sizes come
 *     from a first lowering that only measures (each section with the
 *     whole gap to itself, its blocks told from the rest's by
 *     mem_block.arena), lower_graph then lowering again with them and a
 *     margin (a quarter more for a stage where a section still finds too
 *     little);
 *   - storage a section does not make but places, read after the stage's
 *     next section (a gradient sum's zeros, in new bytes: zeros when
 *     loaded), and the blocks kept for the run it places (its constants)
 *     go outside the arena, where the rest of the program has them; a
 *     later section of a key is given its template's kept blocks;
 *   - the inputs that differ between micro-batches (what another stage
 *     sent, the micro-batch's data) are first copied into the arena as the
 *     template's copy lies (restored), so the section reads them where the
 *     template did; a running gradient sum it adds into
 *     (graph_node.accumulates) is where the template's was, in place;
 *     weights are the same tensors;
 *   - what the section makes is placed in the arena and read before the
 *     stage's next section, or copied out when the section ends (stashed:
 *     activations kept for the backward pass, what the head reads of the
 *     first stage's micro-batch); blocks outside the arena released
 *     inside it go back when the section ends;
 *   - the op rotation starts at tile 0, and the exchange phase before it is
 *     ended.
 *
 * The lowering is deterministic, so a later section's steps come out word
 * for word the template's: on each tile where they do (compared, never
 * assumed) and the section made no vertex records of its own, they are
 * dropped and a ctl_sub to the template's steps takes their place; the
 * template runs its own through a ctl_sub too, its steps ending with
 * ctl_ret (workloads/codelets/supervisor.S).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "isa/isa.h"
#include "sim/base/hash.h"

enum slot_kind { SLOT_SHARED, SLOT_CARRIED, SLOT_RESTORED };

/* A tile's allocator state: what a section's arena starts from. */
typedef struct arena_state {
    uint32_t kept[2], floor[2], hold;
} arena_state;

typedef struct section {
    int first, last;                  /* its first and last node */
    uint32_t stage;
    int key;                          /* its template's section, -1: not shared */
    int next;                         /* the key's next section, -1: none */
    int next_on_stage;                /* the stage's next section, -1: none */
    uint64_t *sig;                    /* its signature (the template's is compared) */
    size_t n_sig;
    int *slots;                       /* the tensors it reads that are made before it, in order */
    bool *sum_in;                     /* ... each the running sum its reader adds into in place
                                         (graph_node.accumulates: input 0, a GatherGrad's 2) */
    size_t n_slots;
    uint8_t *kind;                    /* template: enum slot_kind of each slot */
    size_t *body;                     /* template: each stage tile's steps [body[2i], body[2i+1]) */
    piece **layout;                   /* template: each restored slot's copy, as laid out */
    size_t *n_layout;
    mem_block *kept;                  /* template: the blocks kept for the run it placed (its
                                         constants, outside the arena), in order */
    size_t n_kept, cap_kept;
} section;

typedef struct restored {
    int t;
    piece *p;                         /* its own pieces, back after the section */
    size_t n, cap;
} restored;

struct lw_sections {
    section *s;
    size_t n;
    int *of_node;                     /* per node: its section, -1 */
    int cur;                          /* the section being lowered, -1 */
    arena_state *start;               /* per program tile: its stage's arena starts from this ... */
    arena_state *res;                 /* ... the arena so far (kept below res.kept, scratch from
                                         res.floor up) ... */
    bool *started;                    /* ... once the stage's first section began (per stage) */
    int release_node;                 /* the node before which the arenas are given back */
    arena_state *outer;               /* each stage tile's state outside the section ... */
    mem_block **outer_free;           /* ... and its free blocks */
    size_t *outer_n_free, *outer_cap_free;
    mem_block *deferred;              /* blocks outside the arena released in the section */
    size_t n_deferred, cap_deferred;
    restored *rest;
    size_t n_rest, cap_rest;
    size_t *mark;                     /* per stage tile: steps, patches, peers, records at the body's start */
    char retry_why[160];
    bool outside;                     /* a block being placed outside the arena */
    bool restoring;                   /* placing the copies of restored inputs (in the arena) */
    size_t kept_next;                 /* a later section: its template's kept block to give next */
    int last_section_node;
};

/* ---- signatures ------------------------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t bytes_hash(uint64_t h, const void *p, size_t n)
{
    return mix(h, hash_fnv1a(p, n));
}

static uint64_t attrs_hash(const graph_node *n)
{
    uint64_t h = (uint64_t)n->n_attrs;
    for (int a = 0; a < n->n_attrs; a++) {
        const graph_attr *x = &n->attrs[a];
        h = bytes_hash(mix(h, (uint64_t)x->type), x->name, strlen(x->name));
        h = bytes_hash(mix(h, (uint64_t)x->i), &x->f, sizeof x->f);
        if (x->s)
            h = bytes_hash(h, x->s, strlen(x->s));
        if (x->ints)
            h = bytes_hash(h, x->ints, x->n * sizeof *x->ints);
        if (x->floats)
            h = bytes_hash(h, x->floats, x->n * sizeof *x->floats);
        if (x->tensor && x->tensor->data)
            h = bytes_hash(h, x->tensor->data, (size_t)graph_shape_numel(&x->tensor->shape) * graph_dtype_size(x->tensor->dtype));
    }
    return h;
}

static uint64_t tensor_hash(const graph_tensor *t)
{
    uint64_t h = mix((uint64_t)t->dtype, (uint64_t)t->shape.rank);
    for (int d = 0; d < t->shape.rank; d++)
        h = mix(h, (uint64_t)t->shape.dims[d]);
    return h;
}

static bool push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (!lw_grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = x;
    return true;
}

/* The input of node n that is the running sum it adds into in place
 * (graph_node.accumulates: input 0, a GatherGrad's 2); -1: none. */
static int sum_input(const graph_node *n)
{
    int k = n->op == GRAPH_OP_GATHERGRAD ? 2 : 0;
    return n->accumulates && k < n->n_inputs ? k : -1;
}

static bool member(const lowering *lw, const graph_node *n)
{
    return !n->removed && !graph_node_folded(lw->g, n) && n->cycle >= 0 && n->op != GRAPH_OP_IPU_COPY;
}

/* Section s's signature and the tensors it reads that are made before it. */
static bool sign(lowering *lw, section *s)
{
    const graph *g = lw->g;
    size_t cap = 0, cap_slots = 0, cap_sum_in = 0;
    for (int i = s->first; i <= s->last; i++) {
        const graph_node *n = &g->nodes[i];
        if (!member(lw, n))
            continue;
        uint64_t h = mix(mix(mix((uint64_t)n->op, (uint64_t)n->phase), (uint64_t)n->accumulates), attrs_hash(n));
        if (!push_u64(&s->sig, &s->n_sig, &cap, mix(h, (uint64_t)n->recomputed)))
            return false;
        for (int k = 0; k < n->n_inputs; k++) {
            int t = n->inputs[k], p = t >= 0 ? g->tensors[t].producer : -1;
            uint64_t v;
            if (t < 0) {
                v = 1;
            } else if (p >= s->first && p <= s->last && member(lw, &g->nodes[p])) {
                int o = 0;
                while (o < g->nodes[p].n_outputs && g->nodes[p].outputs[o] != t)
                    o++;
                v = mix(2, mix((uint64_t)(p - s->first), (uint64_t)o));
            } else {
                v = mix(3, tensor_hash(&g->tensors[t]));
                if (!lw_grow((void **)&s->slots, &cap_slots, s->n_slots + 1, sizeof *s->slots) ||
                    !lw_grow((void **)&s->sum_in, &cap_sum_in, s->n_slots + 1, sizeof *s->sum_in))
                    return false;
                s->sum_in[s->n_slots] = k == sum_input(n);
                s->slots[s->n_slots++] = t;
            }
            if (!push_u64(&s->sig, &s->n_sig, &cap, v))
                return false;
        }
        for (int k = 0; k < n->n_outputs; k++)
            if (!push_u64(&s->sig, &s->n_sig, &cap, n->outputs[k] < 0 ? 1 : tensor_hash(&g->tensors[n->outputs[k]])))
                return false;
    }
    return true;
}

/* ---- finding the sections -------------------------------------------------------------------- */

static void free_sections(struct lw_sections *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++) {
        free(x->s[i].sig);
        free(x->s[i].slots);
        free(x->s[i].sum_in);
        free(x->s[i].kind);
        free(x->s[i].body);
        for (size_t k = 0; x->s[i].layout && k < x->s[i].n_slots; k++)
            free(x->s[i].layout[k]);
        free(x->s[i].layout);
        free(x->s[i].n_layout);
        free(x->s[i].kept);
    }
    for (size_t i = 0; i < x->n_rest; i++)
        free(x->rest[i].p);
    free(x->rest);
    free(x->s);
    free(x->of_node);
    free(x->start);
    free(x->res);
    free(x->started);
    free(x->outer);
    free(x->outer_free);
    free(x->outer_n_free);
    free(x->outer_cap_free);
    free(x->deferred);
    free(x->mark);
    free(x);
}

void lw_sections_free(lowering *lw)
{
    free_sections(lw->sections);
    lw->sections = NULL;
}

bool lw_sections_plan(lowering *lw)
{
    const graph *g = lw->g;
    if (!lw->opts->share_programs || !lw->overlap)
        return true;
    struct lw_sections *x = calloc(1, sizeof *x);
    if (!x || !(x->of_node = malloc(((size_t)g->n_nodes + 1) * sizeof *x->of_node)))
        return free(x), lw_fail(lw, "out of host memory");
    lw->sections = x;
    x->cur = -1;
    x->last_section_node = -1;
    size_t cap = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        x->of_node[i] = -1;
        const graph_node *n = &g->nodes[i];
        if (!member(lw, n))
            continue;
        section *c = x->n ? &x->s[x->n - 1] : NULL;
        const graph_node *l = c ? &g->nodes[c->last] : NULL;
        bool joins = c && l->cycle == n->cycle && lw->stage_of[c->last] == lw->stage_of[i] && l->phase == n->phase &&
                     l->weights_only == n->weights_only;
        for (int k = c ? c->last + 1 : 0; joins && k < i; k++)
            joins = g->nodes[k].removed || graph_node_folded(g, &g->nodes[k]);
        if (!joins) {
            if (!lw_grow((void **)&x->s, &cap, x->n + 1, sizeof *x->s))
                return lw_fail(lw, "out of host memory");
            x->s[x->n++] = (section){ .first = i, .stage = lw->stage_of[i], .key = -1, .next = -1,
                                      .next_on_stage = -1 };
            c = &x->s[x->n - 1];
        }
        c->last = i;
        x->of_node[i] = (int)x->n - 1;
        x->last_section_node = i;
    }
    for (size_t i = 0; i < x->n; i++)
        if (!sign(lw, &x->s[i]))
            return lw_fail(lw, "out of host memory");
    /* keys: the first section with the same stage and signature */
    for (size_t i = 0; i < x->n; i++) {
        section *s = &x->s[i];
        for (size_t j = 0; j < i && s->key < 0; j++) {
            section *t = &x->s[j];
            if (t->stage == s->stage && t->n_sig == s->n_sig && t->n_slots == s->n_slots &&
                !memcmp(t->sig, s->sig, s->n_sig * sizeof *s->sig)) {
                s->key = t->key >= 0 ? t->key : (int)j;
                t->key = s->key;
            }
        }
    }
    /* each key's chain of sections, and what its slots are */
    for (size_t i = 0; i < x->n; i++) {
        section *s = &x->s[i];
        for (size_t j = i + 1; j < x->n && s->next_on_stage < 0; j++)
            if (x->s[j].stage == s->stage)
                s->next_on_stage = (int)j;
        if (s->key < 0)
            continue;
        for (size_t j = i + 1; j < x->n && s->next < 0; j++)
            if (x->s[j].key == s->key)
                s->next = (int)j;
        if (s->key != (int)i)
            continue;
        if (!(s->kind = calloc(s->n_slots + 1, 1)) || !(s->body = calloc(2 * (size_t)lw->tiles, sizeof *s->body)) ||
            !(s->layout = calloc(s->n_slots + 1, sizeof *s->layout)) ||
            !(s->n_layout = calloc(s->n_slots + 1, sizeof *s->n_layout)))
            return lw_fail(lw, "out of host memory");
        for (size_t k = 0; k < s->n_slots; k++) {
            bool same = true;
            for (int j = s->next; j >= 0 && same; j = x->s[j].next)
                same = x->s[j].slots[k] == s->slots[k];
            s->kind[k] = same ? SLOT_SHARED : s->sum_in[k] ? SLOT_CARRIED : SLOT_RESTORED;
        }
    }
    x->release_node = INT_MAX;
    for (int i = x->last_section_node + 1; i < g->n_nodes && x->release_node == INT_MAX; i++)
        if (!g->nodes[i].removed && !graph_node_folded(g, &g->nodes[i]) && g->nodes[i].cycle < 0 &&
            g->nodes[i].op != GRAPH_OP_IPU_COPY)
            x->release_node = i;
    size_t tiles = lw->tiles;
    if (!(x->start = calloc(lw->program_tiles, sizeof *x->start)) ||
        !(x->res = calloc(lw->program_tiles, sizeof *x->res)) || !(x->started = calloc(lw->stages + 1, 1)) ||
        !(x->outer = calloc(tiles, sizeof *x->outer)) || !(x->outer_free = calloc(tiles, sizeof *x->outer_free)) ||
        !(x->outer_n_free = calloc(tiles, sizeof *x->outer_n_free)) ||
        !(x->outer_cap_free = calloc(tiles, sizeof *x->outer_cap_free)) || !(x->mark = calloc(4 * tiles, sizeof *x->mark)))
        return lw_fail(lw, "out of host memory");
    return true;
}

/* ---- the arena --------------------------------------------------------------------------------- */

static arena_state state_of(const ltile *t)
{
    return (arena_state){ { t->region0_kept_end, t->region1_kept_end },
                          { t->region0_scratch_floor, t->region1_scratch_floor }, t->hold };
}

static void set_state(ltile *t, const arena_state *a)
{
    t->region0_kept_end = a->kept[0];
    t->region1_kept_end = a->kept[1];
    t->region0_scratch_floor = a->floor[0];
    t->region1_scratch_floor = a->floor[1];
    t->hold = a->hold;
}

/* Whether block b lies in its stage's arena: below `kept` or from `floor`
 * on within the gap the arena was cut from. */
static bool in_arena(const lowering *lw, mem_block b, const uint32_t kept[2], const uint32_t floor[2])
{
    const arena_state *a = &lw->sections->start[b.tile];
    int r = b.addr >= ISA_REGION1_BASE;
    if (!lw->sections->started[b.tile / lw->tiles])
        return false;
    return (b.addr >= a->kept[r] && b.addr < kept[r]) || (b.addr >= floor[r] && b.addr < a->floor[r]);
}

/* ... as reserved for it so far. */
static bool in_reserved(const lowering *lw, mem_block b)
{
    const arena_state *r = &lw->sections->res[b.tile];
    return in_arena(lw, b, r->kept, r->floor);
}

/* ---- blocks a section placed, while measuring ------------------------------------------------------ */

bool lw_section_measured(const lowering *lw, uint32_t tile)
{
    const struct lw_sections *x = lw->sections;
    return x && x->cur >= 0 && !x->outside && !lw->arena_hint && tile / lw->tiles == x->s[x->cur].stage;
}

/* Whether block b is the arena's: while measuring (the rest of the program
 * then takes from the same gap), one the section placed; else one in the
 * arena as far as the section has taken it. */
static bool arena_block(const lowering *lw, mem_block b)
{
    const struct lw_sections *x = lw->sections;
    if (!lw->arena_hint)
        return b.arena;
    const ltile *t = &lw->tile[b.tile];
    const arena_state *r = &x->res[b.tile];
    uint32_t kept[2] = { r->kept[0] > t->region0_kept_end ? r->kept[0] : t->region0_kept_end,
                         r->kept[1] > t->region1_kept_end ? r->kept[1] : t->region1_kept_end };
    uint32_t floor[2] = { r->floor[0] < t->region0_scratch_floor ? r->floor[0] : t->region0_scratch_floor,
                          r->floor[1] < t->region1_scratch_floor ? r->floor[1] : t->region1_scratch_floor };
    return in_arena(lw, b, kept, floor);
}

bool lw_section_defers(lowering *lw, mem_block b)
{
    struct lw_sections *x = lw->sections;
    if (!x || x->cur < 0 || x->outside)
        return false;
    uint32_t lo = x->s[x->cur].stage * lw->tiles;
    if (b.tile < lo || b.tile >= lo + lw->tiles)
        return false;
    if (arena_block(lw, b))
        return false;
    if (!lw_grow((void **)&x->deferred, &x->cap_deferred, x->n_deferred + 1, sizeof *x->deferred)) {
        lw_fail(lw, "out of host memory");
        return true;
    }
    x->deferred[x->n_deferred++] = b;
    return true;
}

bool lw_in_arena(const lowering *lw)
{
    return lw->sections && lw->sections->cur >= 0 && !lw->sections->outside;
}

/* ---- restoring the inputs ---------------------------------------------------------------------- */

/* Slot k's tensor t copied into the arena, its pieces the copy's until
 * the section ends: in the template laid out as t is, in a later section
 * as the template's copy (what another stage sent may lie elsewhere). */
static bool restore(lowering *lw, section *key, size_t k, int t, bool tmpl)
{
    struct lw_sections *x = lw->sections;
    ltensor *lt = &lw->tensor[t];
    for (size_t i = 0; i < x->n_rest; i++)
        if (x->rest[i].t == t)
            return true;
    if (!lt->placed || !lt->n)
        return lw_fail(lw, "internal: '%s', read by a shared section, is not placed", lw_gt(lw, t)->name);
    if (tmpl) {
        for (size_t j = 0; j < lt->n; j++)
            if (lt->p[j].tile / lw->tiles != key->stage || (lt->p[j].count * lt->element_bytes) % 4)
                return lw_fail(lw, "internal: '%s', read by a shared section, is not all on stage %u's tiles in "
                               "whole words", lw_gt(lw, t)->name, key->stage);
        if (!(key->layout[k] = malloc(lt->n * sizeof *lt->p)))
            return lw_fail(lw, "out of host memory");
        memcpy(key->layout[k], lt->p, lt->n * sizeof *lt->p);
        key->n_layout[k] = lt->n;
    }
    if (!lw_grow((void **)&x->rest, &x->cap_rest, x->n_rest + 1, sizeof *x->rest))
        return lw_fail(lw, "out of host memory");
    restored *r = &x->rest[x->n_rest++];
    *r = (restored){ .t = t, .p = lt->p, .n = lt->n, .cap = lt->cap };
    piece *copy = NULL;
    size_t n = key->n_layout[k];
    if (!(copy = malloc((n + 1) * sizeof *copy)))
        return lw_fail(lw, "out of host memory");
    char what[96];
    snprintf(what, sizeof what, "'%s' restored for a shared section", lw_gt(lw, t)->name);
    for (size_t j = 0; j < n && !lw->failed; j++) {
        const piece *p = &key->layout[k][j];
        x->restoring = true;
        uint32_t a = lw_tile_alloc(lw, p->tile, p->count * lt->element_bytes, PREFER_REGION0, 8, what);
        x->restoring = false;
        copy[j] = (piece){ p->tile, a, p->first, p->count };
        if (a)
            lw_fetch_into(lw, t, p->first, p->count, p->tile, a);
    }
    lt->p = copy;
    lt->n = lt->cap = n;
    return !lw->failed;
}

/* A view section s made of a restored input, read after it: its pieces
 * moved from the input's copy in the arena to the input itself. */
static void views_home(lowering *lw, const section *s)
{
    const graph *g = lw->g;
    struct lw_sections *x = lw->sections;
    for (int i = s->first; i <= s->last; i++) {
        const graph_node *n = &g->nodes[i];
        for (int o = 0; member(lw, n) && o < n->n_outputs; o++) {
            int t = n->outputs[o];
            if (t < 0 || lw->tensor[t].root == t || lw->last_reader[lw->tensor[t].root] <= s->last)
                continue;
            ltensor *lt = &lw->tensor[t];
            for (size_t k = 0; k < lt->n; k++) {
                piece *p = &lt->p[k];
                for (size_t r = 0; r < x->n_rest; r++) {
                    const ltensor *copy = &lw->tensor[x->rest[r].t];
                    for (size_t j = 0; j < copy->n && j < x->rest[r].n; j++) {
                        const piece *c = &copy->p[j];
                        uint64_t bytes = c->count * copy->element_bytes;
                        if (c->tile == p->tile && p->addr >= c->addr && p->addr < c->addr + bytes) {
                            p->addr = x->rest[r].p[j].addr + (p->addr - c->addr);
                            r = x->n_rest;
                            break;
                        }
                    }
                }
            }
        }
    }
}

static void unrestore(lowering *lw)
{
    struct lw_sections *x = lw->sections;
    for (size_t i = 0; i < x->n_rest; i++) {
        ltensor *lt = &lw->tensor[x->rest[i].t];
        free(lt->p);
        lt->p = x->rest[i].p;
        lt->n = x->rest[i].n;
        lt->cap = x->rest[i].cap;
    }
    x->n_rest = 0;
}

/* ---- entering and leaving ---------------------------------------------------------------------- */

static void push_ref(lowering *lw, ltile *t, uint32_t index)
{
    if (!lw_grow((void **)&t->step_refs, &t->cap_step_refs, t->n_step_refs + 1, sizeof *t->step_refs)) {
        lw_fail(lw, "out of host memory");
        return;
    }
    t->step_refs[t->n_step_refs++] = t->steps.n;
    lw_push_word(lw, &t->steps, index);
}

/* Tile `tile`'s arena (mine, each region's bytes) when its stage's
 * sections want `want` (the most any tile of the stage needs, so that the
 * plans, made for the tile with least room, have the room they had): as
 * much of each region's gap, but leaving the tile what the rest of the
 * program took of the gap meanwhile (measured too; its blocks go to either
 * region) and the room held back for its records and control program,
 * both regions cut alike where that is less.  A matmul's or a
 * scatter-add's plan takes what room it finds, so the sections' measure,
 * made with the whole gap, runs high: their plans then choose within less,
 * and where they find too little the lowering after says so. */
static void tile_arena(const lowering *lw, uint32_t tile, const uint32_t want[2], uint32_t mine[2])
{
    const ltile *t = &lw->tile[tile];
    uint32_t gap[2] = { t->region0_scratch_floor - t->region0_kept_end, t->region1_scratch_floor - t->region1_kept_end };
    int64_t room = (int64_t)gap[0] + gap[1] - t->hold;
    for (int g = 0; g < 2; g++) {
        room -= lw->arena_hint[4 * (size_t)tile + 2 + (size_t)g];
        mine[g] = want[g] < gap[g] ? want[g] : gap[g];
    }
    uint64_t both = (uint64_t)mine[0] + mine[1];
    if (room < 0)
        room = 0;
    if (both > (uint64_t)room)
        for (int g = 0; g < 2; g++)
            mine[g] = (uint32_t)((uint64_t)mine[g] * (uint64_t)room / both) & ~7u;
}

bool lw_section_enter(lowering *lw, int i)
{
    struct lw_sections *x = lw->sections;
    if (!x || x->cur >= 0 || x->of_node[i] < 0 || x->s[x->of_node[i]].first != i)
        return true;
    int si = x->of_node[i];
    section *s = &x->s[si], *key = s->key >= 0 ? &x->s[s->key] : NULL;
    bool tmpl = key && s->key == si;
    if (!lw_end_phase(lw))
        return false;
    uint32_t lo = s->stage * lw->tiles;
    if (!x->started[s->stage]) {
        /* the stage's arena: the bytes the first lowering found its
         * sections need at most, from the start of the gap its first
         * section finds (the first lowering only measures: every section
         * from the whole gap, the rest of the program beside it as if it
         * were not there) */
        x->started[s->stage] = true;
        uint32_t size[2] = { 0, 0 };
        for (uint32_t k = 0; k < lw->tiles && lw->arena_hint; k++)
            for (int g = 0; g < 2; g++)
                size[g] = lw->arena_hint[4 * (size_t)(lo + k) + (size_t)g] > size[g]
                              ? lw->arena_hint[4 * (size_t)(lo + k) + (size_t)g] : size[g];
        for (uint32_t k = 0; k < lw->tiles; k++) {
            ltile *t = &lw->tile[lo + k];
            arena_state a = state_of(t), r = a;
            a.hold = 0;                   /* the room held back is the rest of the program's */
            if (lw->arena_hint) {
                uint32_t mine[2];
                tile_arena(lw, lo + k, size, mine);
                for (int g = 0; g < 2; g++) {
                    a.floor[g] = a.kept[g] + mine[g];
                    r.kept[g] = r.floor[g] = a.floor[g];
                }
                t->region0_kept_end = a.floor[0];
                t->region1_kept_end = a.floor[1];
            }
            x->start[lo + k] = a;
            x->res[lo + k] = r;
        }
    }
    for (uint32_t k = 0; k < lw->tiles; k++) {
        ltile *t = &lw->tile[lo + k];
        x->outer[k] = state_of(t);
        x->outer_free[k] = t->free;
        x->outer_n_free[k] = t->n_free;
        x->outer_cap_free[k] = t->cap_free;
        t->free = NULL;
        t->n_free = t->cap_free = 0;
        set_state(t, &x->start[lo + k]);
    }
    x->cur = si;
    x->n_deferred = 0;
    x->kept_next = 0;
    lw->op_base = 0;
    lw->op_tiles = 0;
    /* the inputs that differ between micro-batches, into the arena */
    for (size_t k = 0; key && k < s->n_slots && !lw->failed; k++)
        if (key->kind[k] == SLOT_RESTORED)
            restore(lw, key, k, s->slots[k], tmpl);
    if (lw->failed || !lw_end_phase(lw))
        return false;
    for (uint32_t k = 0; k < lw->tiles; k++) {
        ltile *t = &lw->tile[lo + k];
        if (tmpl) {
            lw_push_word(lw, &t->steps, lw->kernels.ctl_sub);
            push_ref(lw, t, (uint32_t)t->steps.n + 3);
            lw_push_word(lw, &t->steps, lw->kernels.ctl_jump);
            push_ref(lw, t, 0);           /* past the ctl_ret, when it is known */
        }
        size_t *m = &x->mark[4 * k];
        m[0] = t->steps.n;
        m[1] = t->n_patch;
        m[2] = t->n_peers;
        m[3] = t->records.n;
    }
    return !lw->failed;
}

/* Tile k's steps of a later section of a key the same, word for word, as
 * its template's, and no vertex records of their own (a compute set alike
 * shares the template's, lw_step_run, lw_step_call): dropped for a
 * ctl_sub to the template's. */
static bool share_tile(lowering *lw, const section *key, uint32_t k, const size_t *m)
{
    ltile *t = &lw->tile[key->stage * lw->tiles + k];
    size_t b0 = key->body[2 * k], n = t->steps.n - m[0];
    if (n <= 2 || n != key->body[2 * k + 1] - b0 || t->records.n != m[3] ||
        memcmp(t->steps.w + m[0], t->steps.w + b0, n * 4))
        return false;
    t->steps.n = m[0];
    t->n_patch = m[1];
    t->n_peers = m[2];
    lw_push_word(lw, &t->steps, lw->kernels.ctl_sub);
    push_ref(lw, t, (uint32_t)b0);
    lw->rep->shared_control_bytes += (n - 2) * 4;
    return true;
}

/* Pieces of tensor v within `from` (n of them) moved to the same places
 * in `to`. */
static void move_pieces(ltensor *v, const piece *from, const piece *to, size_t n, uint32_t eb)
{
    for (size_t k = 0; k < v->n; k++)
        for (size_t j = 0; j < n; j++)
            if (from[j].tile == v->p[k].tile && v->p[k].addr >= from[j].addr &&
                v->p[k].addr < from[j].addr + from[j].count * eb) {
                v->p[k].addr = to[j].addr + (v->p[k].addr - from[j].addr);
                break;
            }
}

/* Storage section s made (a tensor and its views) that is read after it:
 * left in the arena where it is read before the stage's next section
 * (or, after the last, before the arenas are given back), else copied out
 * (stashed), its views moved with it. */
static bool outputs_out(lowering *lw, const section *s)
{
    const graph *g = lw->g;
    int until = s->next_on_stage >= 0 ? lw->sections->s[s->next_on_stage].first : lw->sections->release_node;
    for (int i = s->first; i <= s->last && !lw->failed; i++) {
        const graph_node *n = &g->nodes[i];
        for (int o = 0; member(lw, n) && o < n->n_outputs; o++) {
            int t = n->outputs[o];
            if (t < 0 || lw->tensor[t].root != t)
                continue;
            ltensor *lt = &lw->tensor[t];
            if (lt->released || lw->last_reader[t] <= s->last || !lt->placed)
                continue;
            /* (measuring: the blocks the section placed) */
            bool arena = false;
            for (size_t k = 0; k < lt->n && !arena && lw->arena_hint; k++)
                arena = in_reserved(lw, (mem_block){ lt->p[k].tile, lt->p[k].addr, 0 });
            for (size_t b = 0; b < lt->n_blocks && !arena && !lw->arena_hint; b++)
                arena = lt->blocks[b].arena;
            /* the arena's blocks are never the rest of the program's */
            size_t kept = 0;
            for (size_t b = 0; b < lt->n_blocks; b++)
                if (lw->arena_hint ? !in_reserved(lw, lt->blocks[b])
                                   : !lt->blocks[b].arena)
                    lt->blocks[kept++] = lt->blocks[b];
            lt->n_blocks = kept;
            if (!arena || lw->last_reader[t] < until)
                continue;
            piece *old = lt->p;
            size_t n_old = lt->n;
            lt->p = NULL;
            lt->n = lt->cap = 0;
            char what[96];
            snprintf(what, sizeof what, "'%s' stashed from a shared section", lw_gt(lw, t)->name);
            uint32_t *addr = malloc((n_old + 1) * sizeof *addr);
            if (!addr) {
                free(old);
                return lw_fail(lw, "out of host memory");
            }
            if (lw_blocks_for_pieces(lw, t, old, n_old, PREFER_REGION0, false, what, addr))
                for (size_t k = 0; k < n_old && !lw->failed; k++) {
                    uint32_t bytes = (uint32_t)(old[k].count * lt->element_bytes), a = addr[k] ? addr[k] : old[k].addr;
                    if (!bytes || lw_add_local_copy(lw, old[k].tile, old[k].addr, a, bytes))
                        lw_add_piece(lw, t, old[k].tile, a, old[k].first, old[k].count);
                }
            free(addr);
            if (!lw->failed && lt->n == n_old)
                for (int j = s->first; j <= s->last; j++)
                    for (int q = 0; member(lw, &g->nodes[j]) && q < g->nodes[j].n_outputs; q++) {
                        int v = g->nodes[j].outputs[q];
                        if (v >= 0 && v != t && lw->tensor[v].root == t)
                            move_pieces(&lw->tensor[v], old, lt->p, n_old, lt->element_bytes);
                    }
            free(old);
        }
    }
    return !lw->failed;
}

/* What tile `tile` (its state `now` at a section's end, from the whole
 * gap) needs of its stage's arena: the bytes taken from the bottom and the
 * top of each region, the most of any section. */
static void note_need(lowering *lw, uint32_t tile, const arena_state *now)
{
    const arena_state *a = &lw->sections->start[tile];
    if (!lw->arena_need && !(lw->arena_need = calloc(4 * (size_t)lw->program_tiles + 1, sizeof *lw->arena_need))) {
        lw_fail(lw, "out of host memory");
        return;
    }
    uint32_t *need = lw->arena_need + 4 * (size_t)tile;
    for (int g = 0; g < 2; g++) {
        uint32_t n = (now->kept[g] - a->kept[g]) + (a->floor[g] - now->floor[g]);
        need[g] = n > need[g] ? n : need[g];
    }
}

bool lw_section_leave(lowering *lw)
{
    struct lw_sections *x = lw->sections;
    if (!x || x->cur < 0)
        return true;
    section *s = &x->s[x->cur], *key = s->key >= 0 ? &x->s[s->key] : NULL;
    bool tmpl = key && s->key == x->cur, more = false;
    if (!lw_end_phase(lw))
        return false;
    uint32_t lo = s->stage * lw->tiles;
    for (uint32_t k = 0; k < lw->tiles && !lw->failed; k++) {
        ltile *t = &lw->tile[lo + k];
        const size_t *m = &x->mark[4 * k];
        arena_state now = state_of(t), *r = &x->res[lo + k], *out = &x->outer[k];
        if (tmpl) {
            key->body[2 * k] = m[0];
            key->body[2 * k + 1] = t->steps.n;
            lw_push_word(lw, &t->steps, lw->kernels.ctl_ret);
            t->steps.w[m[0] - 1] = (uint32_t)t->steps.n;      /* the template's ctl_jump */
        } else if (key && share_tile(lw, key, k, m)) {
            lw->rep->shared_section_tiles++;
        }
        if (!lw->arena_hint) {
            /* measured: what the arena would need, the arena so far */
            note_need(lw, lo + k, &now);
            for (int g = 0; g < 2; g++) {
                r->kept[g] = now.kept[g] > r->kept[g] ? now.kept[g] : r->kept[g];
                r->floor[g] = now.floor[g] < r->floor[g] ? now.floor[g] : r->floor[g];
            }
            more = true;
        }
        free(t->free);
        t->free = x->outer_free[k];
        t->n_free = x->outer_n_free[k];
        t->cap_free = x->outer_cap_free[k];
        set_state(t, out);
    }
    x->cur = -1;
    /* the program goes on to find what every section needs, and fails at
     * its end (lw_sections_done) */
    if (more && !lw->arena_retry) {
        lw->arena_retry = true;
        snprintf(x->retry_why, sizeof x->retry_why, "internal: the shared sections' arenas were only measured");
    }
    views_home(lw, s);
    unrestore(lw);
    for (size_t k = 0; k < x->n_deferred && !lw->failed; k++)
        lw_give_back(lw, x->deferred[k]);
    x->n_deferred = 0;
    if (key && !tmpl)
        lw->rep->shared_sections++;
    return outputs_out(lw, s);
}

/* Before node i: once the pipeline is over, the arenas given back. */
bool lw_sections_release(lowering *lw, int i)
{
    struct lw_sections *x = lw->sections;
    if (!x || i != x->release_node)
        return true;
    for (uint32_t tile = 0; tile < lw->program_tiles && !lw->failed; tile++) {
        if (!x->started[tile / lw->tiles])
            continue;
        const arena_state *a = &x->start[tile], *r = &x->res[tile];
        if (!lw->arena_hint) {
            /* measured: what the rest of the program took of the gap
             * meanwhile, which the arena must leave it */
            const ltile *t = &lw->tile[tile];
            uint32_t kept[2] = { t->region0_kept_end, t->region1_kept_end };
            uint32_t floor[2] = { t->region0_scratch_floor, t->region1_scratch_floor };
            if (!lw->arena_need && !(lw->arena_need = calloc(4 * (size_t)lw->program_tiles + 1, sizeof *lw->arena_need)))
                return lw_fail(lw, "out of host memory");
            /* (less the blocks free again by then: those the rest took
             * and gave back, which its later blocks could have had) */
            uint64_t back[2] = { 0, 0 };
            for (size_t f = 0; f < t->n_free; f++) {
                const mem_block *b = &t->free[f];
                int g = b->addr >= ISA_REGION1_BASE;
                if (b->addr >= a->kept[g] && b->addr + b->size <= kept[g])
                    back[g] += b->size;
            }
            for (int g = 0; g < 2; g++) {
                uint64_t took = (kept[g] > a->kept[g] ? kept[g] - a->kept[g] : 0) +
                                (a->floor[g] > floor[g] ? a->floor[g] - floor[g] : 0);
                lw->arena_need[4 * (size_t)tile + 2 + (size_t)g] = (uint32_t)(took > back[g] ? took - back[g] : 0);
            }
            continue;
        }
        for (int g = 0; g < 2; g++) {
            if (r->kept[g] > a->kept[g])
                lw_give_back(lw, (mem_block){ tile, a->kept[g], r->kept[g] - a->kept[g] });
            if (a->floor[g] > r->floor[g])
                lw_give_back(lw, (mem_block){ tile, r->floor[g], a->floor[g] - r->floor[g] });
        }
    }
    return !lw->failed;
}

bool lw_section_in(const lowering *lw, int i)
{
    const struct lw_sections *x = lw->sections;
    return x && x->cur >= 0 && x->of_node[i] == x->cur;
}

bool lw_sections_done(lowering *lw)
{
    if (lw->sections && lw->arena_retry)
        return lw_fail(lw, "%s: %s", lw->g->source, lw->sections->retry_why);
    return !lw->failed;
}

/* ---- storage outside the arena ------------------------------------------------------------------ */

/* The last node that reads tensor t's storage, or the running sum it
 * starts: a node adding into it in place (graph_node.accumulates) reads
 * it on as its output. */
static int storage_end(const lowering *lw, int t)
{
    const graph *g = lw->g;
    int r = lw->tensor[t].root, end = lw->last_reader[r];
    while (end >= 0 && end < g->n_nodes) {      /* (past the nodes: a graph output) */
        const graph_node *n = &g->nodes[end];
        int k = sum_input(n);
        if (k < 0 || n->inputs[k] < 0 || lw->tensor[n->inputs[k]].root != r || n->outputs[0] < 0)
            break;
        r = lw->tensor[n->outputs[0]].root;
        if (lw->last_reader[r] <= end)
            break;
        end = lw->last_reader[r];
    }
    return end;
}

/* Whether tensor t, being placed on `tile` inside a section, is storage
 * the section does not make (a gradient sum's zeros, placed where first
 * read) that is read after the stage's next section: then it is placed
 * outside the arena (lw_tensor_alloc), where the rest of the program keeps
 * it.  What the section makes is placed in the arena, where the sections
 * alike place it alike, and stashed when the section ends (outputs_out). */
bool lw_section_outlives(const lowering *lw, int t, uint32_t tile)
{
    const struct lw_sections *x = lw->sections;
    if (!x || x->cur < 0 || x->outside)
        return false;
    const section *s = &x->s[x->cur];
    int p = lw->g->tensors[lw->tensor[t].root].producer;
    if (p >= 0 && x->of_node[p] == x->cur)
        return false;
    int until = s->next_on_stage >= 0 ? x->s[s->next_on_stage].first : x->release_node;
    return tile / lw->tiles == s->stage && storage_end(lw, t) >= until;
}

/* Tile `tile`'s allocator switched to the state outside the section (in)
 * and back (!in). */
void lw_section_outside(lowering *lw, uint32_t tile, bool in)
{
    struct lw_sections *x = lw->sections;
    uint32_t k = tile % lw->tiles;
    ltile *t = &lw->tile[tile];
    arena_state inner = state_of(t);
    mem_block *f = t->free;
    size_t n = t->n_free, cap = t->cap_free;
    t->free = x->outer_free[k];
    t->n_free = x->outer_n_free[k];
    t->cap_free = x->outer_cap_free[k];
    set_state(t, &x->outer[k]);
    x->outer[k] = inner;
    x->outer_free[k] = f;
    x->outer_n_free[k] = n;
    x->outer_cap_free[k] = cap;
    x->outside = in;
}

void lw_sections_failed(lowering *lw)
{
    struct lw_sections *x = lw->sections;
    if (!x || !lw->arena_hint || lw->arena_retry)
        return;
    uint32_t tile = lw->no_room_tile;
    bool rest = lw->no_room_outside && lw->no_room_bytes && tile < lw->program_tiles && x->started[tile / lw->tiles];
    if (!rest && x->cur < 0)
        return;
    free(lw->arena_need);
    if (!(lw->arena_need = malloc((4 * (size_t)lw->program_tiles + 1) * sizeof *lw->arena_need)))
        return;
    memcpy(lw->arena_need, lw->arena_hint, 4 * (size_t)lw->program_tiles * sizeof *lw->arena_need);
    lw->arena_retry = true;
    if (rest) {
        /* a block of the rest of the program, outside the arena, on a
         * tile of a stage with one: the measure of what the rest takes
         * there (made when the pipeline was over, lw_sections_release)
         * ran low; the tile's arena leaves it the block and a margin more */
        uint64_t more = (uint64_t)lw->arena_need[4 * (size_t)tile + 3] + lw_arena_margin((uint32_t)lw->no_room_bytes);
        uint32_t lo = tile / lw->tiles * lw->tiles;
        for (uint32_t k = 0; k < lw->tiles; k++) {
            uint32_t *r = &lw->arena_need[4 * (size_t)(lo + k) + 3];
            *r = more > *r ? (more < UINT32_MAX ? (uint32_t)more : UINT32_MAX - 1) : *r;
        }
        return;
    }
    /* a section found its arena too small (the measure is of the sections
     * with the whole gap to themselves): a quarter more for its stage */
    for (uint32_t k = 0; k < lw->tiles; k++)
        for (int g = 0; g < 2; g++) {
            uint32_t *n = &lw->arena_need[4 * (size_t)(x->s[x->cur].stage * lw->tiles + k) + (size_t)g];
            *n = lw_arena_margin(*n);
        }
}

/* ---- blocks kept for the run ----------------------------------------------------------------------- */

bool lw_section_placing_outside(const lowering *lw)
{
    const struct lw_sections *x = lw->sections;
    return x && x->cur >= 0 && x->outside;
}

bool lw_section_keeps(const lowering *lw)
{
    const struct lw_sections *x = lw->sections;
    return x && x->cur >= 0 && !x->outside && !x->restoring;
}

/* A block kept for the run placed inside a section (a constant loaded
 * with the executable): outside the arena, which the stage's other
 * sections write over; a later section of a key is given its template's
 * block (the same data, placed again at the same address), so that their
 * steps stay alike. */
uint32_t lw_section_kept_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                               const char *what)
{
    struct lw_sections *x = lw->sections;
    section *s = &x->s[x->cur], *key = s->key >= 0 ? &x->s[s->key] : NULL;
    if (key && key != s) {
        if (x->kept_next >= key->n_kept || key->kept[x->kept_next].tile != tile ||
            key->kept[x->kept_next].size != (uint32_t)bytes) {
            lw_fail(lw, "internal: tile %u: a shared section places %s where its template placed no such block",
                    tile, what);
            return 0;
        }
        return key->kept[x->kept_next++].addr;
    }
    lw_section_outside(lw, tile, true);
    uint32_t at = lw_tile_alloc(lw, tile, bytes, pref, align, what);
    lw_section_outside(lw, tile, false);
    if (at && key) {
        if (!lw_grow((void **)&key->kept, &key->cap_kept, key->n_kept + 1, sizeof *key->kept)) {
            lw_fail(lw, "out of host memory");
            return 0;
        }
        key->kept[key->n_kept++] = (mem_block){ tile, at, (uint32_t)bytes };
    }
    return at;
}
