/*
 * lower_memory.c — tile memory and the placement of tensors: the two bump
 * allocators of every tile (region 1 from the end of the kernel library's
 * data, region 0 from the first 16 KiB element past the library's code:
 * workers' data accesses must avoid the element their code runs from,
 * ISA2 §4.1.6.2), the scratch of the current op from the top of each
 * region down, the blocks dead tensors give back, data loaded with the
 * executable; a tensor's pieces, fetching a range of them onto a tile
 * (lower.h), and the planner's linear splits over tiles and workers.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_ops.h"
#include "isa/isa.h"

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


uint32_t lw_tile_used_bytes(const lowering *lw, const ltile *t)
{
    return (t->region0_kept_end - lw->region0_start) + (t->region1_kept_end - lw->region1_start) + (ISA_REGION1_BASE - t->region0_scratch_floor) +
           (lw->mem_end - t->region1_scratch_floor);
}

uint64_t lw_library_bytes(const lowering *lw)
{
    return (uint64_t)(lw->region0_start - lw->mem_base) + (lw->region1_start - ISA_REGION1_BASE);
}

/* The bytes no op has used yet in region r of tile t: between the blocks
 * kept for the run and the ops' scratch. */
static uint64_t new_bytes(const ltile *t, int r)
{
    uint32_t kept = r ? t->region1_kept_end : t->region0_kept_end;
    uint32_t floor = r ? t->region1_scratch_floor : t->region0_scratch_floor;
    return floor > kept ? floor - kept : 0;
}

/* gap[] (new bytes of each region) less the room held back for the
 * records and control program (lower_graph), out of the larger first. */
static void less_held(const ltile *t, uint64_t gap[2])
{
    int wide = gap[1] >= gap[0];
    uint64_t from_wide = t->hold < gap[wide] ? t->hold : gap[wide];
    gap[wide] -= from_wide;
    gap[!wide] -= t->hold - from_wide < gap[!wide] ? t->hold - from_wide : gap[!wide];
}

/* What holds tile `tile`: "; N bytes kept for the run, N the ops'
 * scratch; live tensors hold N bytes there[, N held back ...], the most
 * 'name' N, ..." into held (empty when the tile holds nothing). */
void lw_describe_holders(const lowering *lw, uint32_t tile, char *held, size_t size)
{
    const ltile *t = &lw->tile[tile];
    enum { SHOWN = 4 };
    int top[SHOWN];
    uint64_t top_bytes[SHOWN] = { 0 }, live = 0;
    for (int x = 0; x < lw->g->n_tensors; x++) {
        const ltensor *r = &lw->tensor[x];
        uint64_t b = 0;
        for (size_t k = 0; r->root == x && !r->released && k < r->n_blocks; k++)
            b += r->blocks[k].tile == tile ? r->blocks[k].size : 0;
        live += b;
        for (int k = 0; k < SHOWN && b; k++)
            if (b > top_bytes[k]) {
                memmove(&top[k + 1], &top[k], (size_t)(SHOWN - 1 - k) * sizeof *top);
                memmove(&top_bytes[k + 1], &top_bytes[k], (size_t)(SHOWN - 1 - k) * sizeof *top_bytes);
                top[k] = x;
                top_bytes[k] = b;
                break;
            }
    }
    uint64_t kept = (uint64_t)(t->region0_kept_end - lw->region0_start) + (t->region1_kept_end - lw->region1_start);
    uint64_t scratch = (uint64_t)(ISA_REGION1_BASE - t->region0_scratch_floor) + (lw->mem_end - t->region1_scratch_floor);
    held[0] = 0;
    int len = kept || scratch || live
                  ? snprintf(held, size, "; %llu bytes kept for the run, %llu the ops' scratch; live tensors "
                             "hold %llu bytes there", (unsigned long long)kept, (unsigned long long)scratch,
                             (unsigned long long)live)
                  : 0;
    if (t->hold && len > 0 && (size_t)len < size)
        len += snprintf(held + len, size - (size_t)len, ", %u bytes are held back for the records and "
                        "control program", t->hold);
    for (int k = 0; k < SHOWN && top_bytes[k] && len > 0 && (size_t)len < size; k++)
        len += snprintf(held + len, size - (size_t)len, "%s'%s' %llu", k ? ", " : ", the most ",
                        lw->g->tensors[top[k]].name, (unsigned long long)top_bytes[k]);
}

/* bytes of tile memory for `what`, aligned to `align` (a power of two, at
 * least 8), with
 * the codelets' read slack after it.  Returns 0 and fails when it does not
 * fit. */
/* "does not fit", naming the tile, the block that found no room, what it
 * was for, and the room there was: the largest free block (a released one,
 * or the gap between the blocks kept for the run and the ops' scratch) and
 * the free bytes of both regions. */
static uint32_t no_room_in(lowering *lw, uint32_t tile, uint64_t need, const char *what, enum region_pref pref);

uint32_t lw_no_room(lowering *lw, uint32_t tile, uint64_t need, const char *what)
{
    return no_room_in(lw, tile, need, what, PREFER_REGION1);
}

/* lw_no_room for a block that may go in region 1 only (NEED_REGION1):
 * region 1's largest free block is the one named. */
static uint32_t no_room_in(lowering *lw, uint32_t tile, uint64_t need, const char *what, enum region_pref pref)
{
    if (lw->no_room_quiet)
        return 0;
    const ltile *t = &lw->tile[tile];
    uint64_t largest[2] = { 0, 0 }, free_bytes = 0, gap[2] = { new_bytes(t, 0), new_bytes(t, 1) };
    less_held(t, gap);
    for (int r = 0; r < 2; r++) {
        largest[r] = gap[r];
        free_bytes += gap[r];
    }
    for (size_t k = 0; k < t->n_free; k++) {
        int r = t->free[k].addr >= ISA_REGION1_BASE;
        if (t->free[k].size > largest[r])
            largest[r] = t->free[k].size;
        free_bytes += t->free[k].size;
    }
    const bool r1 = pref == NEED_REGION1;
    int big = r1 || largest[1] > largest[0];
    char held[512], op[OP_MAP_NAME_MAX_BYTES + OP_MAP_TYPE_BYTES + 16] = "";
    lw_describe_holders(lw, tile, held, sizeof held);
    /* the op taking the block, where `what` does not name it */
    if (lw->cur_op >= 0 && (uint32_t)lw->cur_op < lw->ops.n_ops) {
        const op_map_op *o = &lw->ops.ops[lw->cur_op];
        char quoted[OP_MAP_NAME_MAX_BYTES + 4];
        snprintf(quoted, sizeof quoted, "'%.*s'", OP_MAP_NAME_MAX_BYTES, o->name);
        if (!strstr(what, quoted))
            snprintf(op, sizeof op, " (op %s, %s)", quoted, o->type);
    }
    lw->no_room_tile = tile;
    lw->no_room_bytes = need;
    lw->no_room_outside = !lw_in_arena(lw);
    lw_fail(lw, "%s: does not fit: tile %u has no room for a block of %llu bytes for %s%s in region %s "
            "(largest free block %llu bytes, in region %d; %llu bytes free in all, %u bytes are the kernel library%s)",
            lw->g->source, tile, (unsigned long long)need, what, op,
            r1 ? "1, where the AMP reads its packed weights" : "0 or 1", (unsigned long long)largest[big], big,
            (unsigned long long)free_bytes, (unsigned)lw_library_bytes(lw), held);
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

/* The new bytes of both regions of tile t (between the blocks kept for
 * the run and the ops' scratch) with `left` of them in one region. */
static uint64_t new_bytes_left(const ltile *t, bool region0, uint64_t left)
{
    return left + new_bytes(t, region0);
}

/* A new block of `need` bytes aligned to a + 1 in one region, above the
 * tile's persistent blocks; 0 when the region has no room. */
static uint32_t bump_alloc(lowering *lw, uint32_t tile, uint64_t bytes, uint64_t need, uint32_t a, bool region0,
                           uint32_t reserve);

uint32_t lw_bump_alloc(lowering *lw, uint32_t tile, uint64_t bytes, uint64_t need, uint32_t a, bool region0)
{
    return bump_alloc(lw, tile, bytes, need, a, region0, 0);
}

/* The same, leaving `reserve` new bytes beside the room held back. */
static uint32_t bump_alloc(lowering *lw, uint32_t tile, uint64_t bytes, uint64_t need, uint32_t a, bool region0,
                           uint32_t reserve)
{
    ltile *t = &lw->tile[tile];
    uint32_t *next = region0 ? &t->region0_kept_end : &t->region1_kept_end;
    /* below every scratch block any op has used (lower_internal.h), and
     * the room held back left in the two regions */
    uint64_t end = region0 ? t->region0_scratch_floor : t->region1_scratch_floor;
    uint64_t at = ((uint64_t)*next + a) & ~(uint64_t)a;
    if (at + need > end || ((t->hold || reserve) && new_bytes_left(t, region0, end - at - need) < (uint64_t)t->hold + reserve))
        return 0;
    *next = (uint32_t)(at + need);
    return note_block(lw, t, (uint32_t)at, bytes) ? (uint32_t)at : 0;
}

static bool give_back(lowering *lw, mem_block b);

/* The free block of tile t at a region's scratch floor (it continues the
 * new bytes under it), or t->n_free where there is none. */
static size_t floor_block(const ltile *t, uint32_t floor)
{
    size_t k = 0;
    while (k < t->n_free && t->free[k].addr < floor)
        k++;
    return k < t->n_free && t->free[k].addr == floor ? k : t->n_free;
}

/* Free block k taken up to `end`: what lies above end given back. */
static bool take_floor_block(lowering *lw, uint32_t tile, size_t k, uint64_t end)
{
    ltile *t = &lw->tile[tile];
    uint64_t top = (uint64_t)t->free[k].addr + t->free[k].size;
    mem_block rest = { tile, (uint32_t)end, (uint32_t)(top - end), t->free[k].arena };
    memmove(&t->free[k], &t->free[k + 1], (t->n_free - k - 1) * sizeof *t->free);
    t->n_free--;
    return !rest.size || give_back(lw, rest);
}

/* bump_alloc past the scratch's floor: the new bytes and the free block
 * at the floor, which continues them, taken as one block, the floor
 * raised to its end (what is left of the free block stays free, at the
 * new floor), leaving the room held back in the other region; 0 when
 * they do not hold it.  Part of the block held scratch before: the caller
 * notes it as a reused one (and fills it where it must be zeros). */
static uint32_t bump_into_floor(lowering *lw, uint32_t tile, uint64_t need, uint32_t a, bool region0)
{
    ltile *t = &lw->tile[tile];
    uint32_t *next = region0 ? &t->region0_kept_end : &t->region1_kept_end;
    uint32_t *floor = region0 ? &t->region0_scratch_floor : &t->region1_scratch_floor;
    uint64_t at = ((uint64_t)*next + a) & ~(uint64_t)a;
    size_t k = floor_block(t, *floor);
    if (k == t->n_free || at + need > (uint64_t)*floor + t->free[k].size ||
        (t->hold && new_bytes_left(t, region0, 0) < (uint64_t)t->hold))
        return 0;
    *floor = (uint32_t)(at + need);
    *next = (uint32_t)(at + need);
    return take_floor_block(lw, tile, k, at + need) ? (uint32_t)at : 0;
}

uint64_t lw_fullest_tile(const lowering *lw, uint32_t *fullest)
{
    /* the records and control program: the room held back, else a guess
     * (with the library, 96 KiB); in a shared section's arena, none (the
     * rest of the program's) */
    uint64_t library = lw_library_bytes(lw), guess = 96 * 1024 > library ? 96 * 1024 - library : 0, most = 0;
    if (lw_in_arena(lw))
        guess = 0;
    for (uint32_t i = 0; i < lw->tiles; i++) {
        const ltile *t = &lw->tile[lw->stage * lw->tiles + i];
        uint64_t held = (uint64_t)(t->region0_kept_end - lw->region0_start) + (t->region1_kept_end - lw->region1_start) +
                        (ISA_REGION1_BASE - t->region0_scratch_floor) + (lw->mem_end - t->region1_scratch_floor);
        for (size_t k = 0; k < t->n_free; k++)
            held -= t->free[k].size;
        held += t->hold > guess ? t->hold : guess;
        if (held > most) {
            most = held;
            if (fullest)
                *fullest = lw->stage * lw->tiles + i;
        }
    }
    return most;
}

uint64_t lw_most_on_a_tile(const lowering *lw, int t)
{
    const ltensor *lt = &lw->tensor[t];
    if (!lt->placed || lt->n == 0)
        return 0;
    uint64_t *held = calloc(lw->program_tiles, sizeof *held), most = 0;
    if (!held)
        return 0;
    for (size_t k = 0; k < lt->n; k++) {
        uint64_t *h = &held[lt->p[k].tile];
        *h += lt->p[k].count;
        most = *h > most ? *h : most;
    }
    free(held);
    return most;
}

uint32_t lw_tile_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                           const char *what)
{
    if (lw_section_keeps(lw))
        return lw_section_kept_alloc(lw, tile, bytes, pref, align, what);
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1;
    ltile *t = &lw->tile[tile];
    uint32_t hold = t->hold;
    /* past the room held back; else in its margin over what the last
     * lowering needed (lower_graph), which shrinks by the block */
    for (int attempt = 0; attempt < 4 && !lw->failed; attempt++) {
        if (attempt == 2 && t->hold <= t->hold_firm)
            break;
        if (attempt == 2)
            t->hold = t->hold_firm;
        if (pref == NEED_REGION1 && attempt % 2)
            continue;
        uint32_t at = lw_bump_alloc(lw, tile, bytes, need, a, (pref == PREFER_REGION0) == (attempt % 2 == 0));
        if (at) {
            if (attempt >= 2)
                t->hold = hold - t->hold_firm > need ? hold - (uint32_t)need : t->hold_firm;
            return at;
        }
    }
    t->hold = hold;
    return lw->failed ? 0 : no_room_in(lw, tile, need, what, pref);
}


static uint32_t take_released(lowering *lw, ltile *t, uint64_t need, uint32_t a, bool region0, bool high,
                              uint32_t below);

/* Note block [at, at + need) of tile `tile` as the current op's scratch. */
static uint32_t lend(lowering *lw, uint32_t tile, uint32_t at, uint64_t need)
{
    if (!lw_grow((void **)&lw->lent, &lw->cap_lent, lw->n_lent + 1, sizeof *lw->lent)) {
        lw_fail(lw, "out of host memory");
        return 0;
    }
    lw->lent[lw->n_lent++] = (mem_block){ tile, at, (uint32_t)need, lw_section_measured(lw, tile) };
    return at;
}

/* A new scratch block at the top of the bytes no op has used yet in one
 * region (below its lowest scratch block so far, joined to a free block
 * there), leaving `reserve` new bytes beside the room held back; 0 where
 * it does not fit. */
static uint32_t lower_floor(lowering *lw, uint32_t tile, uint64_t need, uint32_t a, bool region0, uint32_t reserve,
                            bool *fresh)
{
    ltile *t = &lw->tile[tile];
    uint32_t *floor = region0 ? &t->region0_scratch_floor : &t->region1_scratch_floor;
    uint64_t bottom = region0 ? t->region0_kept_end : t->region1_kept_end;
    size_t k = floor_block(t, *floor);
    bool joined = k < t->n_free;
    uint64_t top = joined ? (uint64_t)*floor + t->free[k].size : *floor;
    if (top < need + bottom)
        return 0;
    uint64_t at = (top - need) & ~(uint64_t)a;
    if (at < bottom || at >= *floor || (at - bottom < reserve) ||
        (t->hold && new_bytes_left(t, region0, at - bottom) < (uint64_t)t->hold + reserve))
        return 0;
    if (joined && !take_floor_block(lw, tile, k, at + need))
        return 0;
    *fresh = at + need <= *floor;
    *floor = (uint32_t)at;
    return lend(lw, tile, (uint32_t)at, need);
}

/* lw_scratch_alloc; *fresh: the block is bytes no block used before
 * (zeros when the executable is loaded, if it holds them). */
static uint32_t scratch_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                              const char *what, bool *fresh)
{
    ltile *t = &lw->tile[tile];
    *fresh = false;
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1;
    /* In the preferred region a free block some op or tensor used before,
     * else new bytes, leaving room for blocks kept for the run that come
     * later (constants, vertex records, the control program), else new
     * bytes of that room; then the same in the other. */
    for (int attempt = 0; attempt < (pref == NEED_REGION1 ? 1 : 2) && !lw->failed; attempt++) {
        bool r0 = (pref == PREFER_REGION0) == (attempt == 0);
        uint32_t at = take_released(lw, t, need, a, r0, true, UINT32_MAX);
        if (at) {
            if (at < (r0 ? t->region0_kept_end : t->region1_kept_end))
                lw->rep->lent_bytes += need;
            return lend(lw, tile, at, need);
        }
        for (int k = 0; k < 2 && !lw->failed; k++)
            if ((at = lower_floor(lw, tile, need, a, r0, k ? 0 : LW_KEPT_RESERVE_BYTES, fresh)) != 0)
                return at;
    }
    return lw->failed ? 0 : no_room_in(lw, tile, need, what, pref);
}

uint32_t lw_scratch_alloc(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                          const char *what)
{
    bool fresh;
    return scratch_alloc(lw, tile, bytes, pref, align, what, &fresh);
}

void lw_scratch_free(lowering *lw, uint32_t tile, uint32_t addr)
{
    for (size_t k = 0; k < lw->n_lent; k++)
        if (lw->lent[k].tile == tile && lw->lent[k].addr == addr) {
            mem_block b = lw->lent[k];
            lw->lent[k] = lw->lent[--lw->n_lent];
            give_back(lw, b);
            return;
        }
}

/* The op is over: its scratch blocks are free for what comes next. */
void lw_release_scratch(lowering *lw)
{
    for (size_t k = 0; k < lw->n_lent && !lw->failed; k++)
        give_back(lw, lw->lent[k]);
    lw->n_lent = 0;
}

/* A compute set of vtx_fill writing `bytes` (a multiple of 8) of zeros
 * from addr on tile `tile`. */
static bool fill_zeros(lowering *lw, uint32_t tile, uint32_t addr, uint64_t bytes)
{
    worker_set ws;
    if (!lw_workers_begin(lw, tile, KERNEL_FILL_WORDS, bytes / 8, &ws))
        return false;
    for (int w = 0; w < CODELET_WORKERS; w++)
        kernel_fill_record(ws.rec[w], addr + (uint32_t)(ws.lo[w] * 8), (uint32_t)((ws.hi[w] - ws.lo[w]) * 8));
    return lw_workers_run(lw, tile, lw->kernels.vtx_fill, &ws);
}

uint32_t lw_scratch_zeroed(lowering *lw, uint32_t tile, uint64_t bytes, enum region_pref pref, uint32_t align,
                           const char *what)
{
    bytes = (bytes + 7) & ~(uint64_t)7;
    bool fresh;
    uint32_t a = scratch_alloc(lw, tile, bytes, pref, align, what, &fresh);
    if (!a)
        return 0;
    /* bytes no block used before are zeros when the executable holds them */
    if (fresh && !lw_in_arena(lw) ? !note_block(lw, &lw->tile[tile], a, bytes) : !fill_zeros(lw, tile, a, bytes))
        return 0;
    return a;
}

/* Insert size into room[] (n slots of one region's), largest first. */
static void room_insert_n(uint64_t *room, int n, uint64_t size)
{
    for (int j = 0; j < n && size; j++)
        if (size > room[j]) {
            uint64_t y = room[j];
            room[j] = size;
            size = y;
        }
}

/* Tile t's LW_ROOM_BLOCKS largest free blocks in each region (room[r *
 * LW_ROOM_BLOCKS ..], largest first): released ones, and the new bytes
 * (between the blocks kept for the run and the ops' scratch, with the free
 * block at the scratch's floor) less the room held back and the reserve
 * for blocks kept for the run (the planners' margin).  as_taken: the new
 * bytes and the block at the floor whole (scratch takes them so in a
 * region before it tries the other: lower_floor without its reserve),
 * always room[r LW_ROOM_BLOCKS] (the floor's slot), the released blocks
 * after it, largest first. */
static void tile_room_as(const ltile *t, uint64_t room[LW_ROOM_SIZE], bool as_taken)
{
    memset(room, 0, LW_ROOM_SIZE * sizeof *room);
    uint64_t gap[2] = { new_bytes(t, 0), new_bytes(t, 1) };
    for (size_t k = 0; k < t->n_free; k++) {
        const mem_block *f = &t->free[k];
        int r = f->addr >= ISA_REGION1_BASE;
        if (f->addr == (r ? t->region1_scratch_floor : t->region0_scratch_floor))
            gap[r] += f->size;
        else
            room_insert_n(room + r * LW_ROOM_BLOCKS + as_taken, LW_ROOM_BLOCKS - as_taken, f->size);
    }
    less_held(t, gap);
    for (int r = 0; r < 2; r++) {
        if (as_taken)
            room[r * LW_ROOM_BLOCKS] = gap[r];
        else
            room_insert_n(room + r * LW_ROOM_BLOCKS, LW_ROOM_BLOCKS,
                          gap[r] > LW_KEPT_RESERVE_BYTES ? gap[r] - LW_KEPT_RESERVE_BYTES : 0);
        room[2 * LW_ROOM_BLOCKS + r] = new_bytes(t, r);
    }
}

static void tile_room(const ltile *t, uint64_t room[LW_ROOM_SIZE])
{
    tile_room_as(t, room, false);
}

void lw_tile_free_room(const lowering *lw, uint32_t tile, uint64_t *largest, uint64_t *total)
{
    uint64_t r[LW_ROOM_SIZE];
    tile_room(&lw->tile[tile], r);
    *largest = *total = 0;
    for (int j = 0; j < 2 * LW_ROOM_BLOCKS; j++) {
        *largest = r[j] > *largest ? r[j] : *largest;
        *total += r[j];
    }
}

static int room_order(const void *a, const void *b)
{
    return memcmp(a, b, LW_ROOM_SIZE * sizeof(uint64_t));
}

bool lw_stage_rooms(const lowering *lw, lw_rooms *out)
{
    out->n = 0;
    out->v = malloc((size_t)lw->tiles * LW_ROOM_SIZE * sizeof *out->v);
    if (!out->v)
        return false;
    for (uint32_t i = 0; i < lw->tiles; i++)
        tile_room_as(&lw->tile[lw->stage * lw->tiles + i], out->v + (size_t)i * LW_ROOM_SIZE, true);
    qsort(out->v, lw->tiles, LW_ROOM_SIZE * sizeof *out->v, room_order);
    for (uint32_t i = 0; i < lw->tiles; i++)
        if (!out->n || room_order(out->v + (out->n - 1) * LW_ROOM_SIZE, out->v + (size_t)i * LW_ROOM_SIZE))
            memmove(out->v + out->n++ * LW_ROOM_SIZE, out->v + (size_t)i * LW_ROOM_SIZE,
                    LW_ROOM_SIZE * sizeof *out->v);
    return true;
}

void lw_least_room(const lowering *lw, uint64_t room[LW_ROOM_SIZE])
{
    for (int j = 0; j < LW_ROOM_SIZE; j++)
        room[j] = UINT64_MAX;
    for (uint32_t i = 0; i < lw->tiles; i++) {
        uint64_t r[LW_ROOM_SIZE];
        tile_room(&lw->tile[lw->stage * lw->tiles + i], r);
        for (int j = 0; j < LW_ROOM_SIZE; j++)
            if (r[j] < room[j])
                room[j] = r[j];
    }
}

bool lw_blocks_fit(const uint64_t room[LW_ROOM_SIZE], const lw_block_need *events, int n)
{
    return lw_blocks_fit_as(room, events, n, false);
}

bool lw_blocks_fit_as(const uint64_t room[LW_ROOM_SIZE], const lw_block_need *events, int n, bool floor_first)
{
    uint64_t left[LW_ROOM_SIZE];
    memcpy(left, room, sizeof left);
    enum { MOST_EVENTS = 64 };
    int from[MOST_EVENTS];                /* the room slot each scratch block took, or -1 */
    uint64_t took[MOST_EVENTS];           /* ... and the bytes it took */
    if (n > MOST_EVENTS)
        return false;
    for (int k = 0; k < n; k++) {
        from[k] = -1;
        if (events[k].ends) {
            int e = events[k].ends - 1;
            if (e >= 0 && e < k && from[e] >= 0) {
                left[from[e]] += took[e];
                from[e] = -1;
            }
            continue;
        }
        if (!events[k].bytes)
            continue;
        uint64_t want = lw_block_room(events[k].bytes);
        if (events[k].kept) {
            /* new bytes (of the region it prefers, else the other), which
             * are also the largest room of that region for scratch */
            int r = events[k].pref == PREFER_REGION0 ? 0 : 1;
            if (left[2 * LW_ROOM_BLOCKS + r] < want && events[k].pref != NEED_REGION1)
                r = !r;
            if (left[2 * LW_ROOM_BLOCKS + r] < want)
                return false;
            left[2 * LW_ROOM_BLOCKS + r] -= want;
            uint64_t *big = &left[r * LW_ROOM_BLOCKS];
            for (int j = r * LW_ROOM_BLOCKS; j < (r + 1) * LW_ROOM_BLOCKS; j++)
                big = left[j] > *big ? &left[j] : big;
            *big = *big > want ? *big - want : 0;
            continue;
        }
        int best = -1;
        for (int pass = 0; pass < (events[k].pref == NEED_REGION1 ? 1 : 2) && best < 0; pass++) {
            int r = (events[k].pref == PREFER_REGION0) == (pass == 0) ? 0 : 1;
            if (floor_first && left[r * LW_ROOM_BLOCKS] >= want) {
                best = r * LW_ROOM_BLOCKS;
                break;
            }
            for (int j = r * LW_ROOM_BLOCKS; j < (r + 1) * LW_ROOM_BLOCKS; j++)
                if (left[j] >= want && (best < 0 || left[j] < left[best]))
                    best = j;
        }
        if (best < 0)
            return false;
        left[best] -= want;
        from[k] = best;
        took[k] = want;
    }
    return true;
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

/* `need` bytes aligned to a + 1 out of the free blocks of one region that
 * start below `below`: the lowest that holds them, its low end (a
 * tensor's), or with high the highest, its high end (scratch: the two
 * kinds kept apart, scratch high in its region as it was when it had its
 * own zone — a smallest-fit placement measured 3% slower on ResNet-50's
 * backward pass, its blocks meeting the tensors'); 0 if none holds them. */
static uint32_t take_released(lowering *lw, ltile *t, uint64_t need, uint32_t a, bool region0, bool high,
                              uint32_t below)
{
    size_t found = t->n_free;
    uint64_t at = 0;
    for (size_t k = 0; k < t->n_free; k++) {
        const mem_block *f = &t->free[high ? t->n_free - 1 - k : k];
        if ((f->addr < ISA_REGION1_BASE) != region0 || f->addr >= below)
            continue;
        uint64_t end = (uint64_t)f->addr + f->size;
        uint64_t x = high ? (end >= need ? (end - need) & ~(uint64_t)a : 0) : ((uint64_t)f->addr + a) & ~(uint64_t)a;
        if (x < f->addr || x + need > end)
            continue;
        found = high ? t->n_free - 1 - k : k;
        at = x;
        break;
    }
    if (found == t->n_free)
        return 0;
    mem_block *f = &t->free[found];
    uint64_t end = (uint64_t)f->addr + f->size;
    mem_block tail = { f->tile, (uint32_t)(at + need), (uint32_t)(end - at - need), f->arena };
    f->size = (uint32_t)(at - f->addr);
    if (f->size) {
        if (tail.size && !insert_free(lw, t, found + 1, tail))
            return 0;
    } else if (tail.size) {
        *f = tail;
    } else {
        memmove(f, f + 1, (t->n_free - found - 1) * sizeof *f);
        t->n_free--;
    }
    return (uint32_t)at;
}

/* Give block b back to its tile, merged with its neighbours in the same
 * region. */
bool lw_give_back(lowering *lw, mem_block b)
{
    return give_back(lw, b);
}

static bool give_back(lowering *lw, mem_block b)
{
    if (lw_section_defers(lw, b))
        return !lw->failed;
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
    if (lw_section_outlives(lw, tensor, tile)) {
        /* kept past the stage's next shared section: outside its arena */
        lw_section_outside(lw, tile, true);
        uint32_t at = lw_tensor_alloc(lw, tensor, tile, bytes, pref, align, zeroed, what);
        lw_section_outside(lw, tile, false);
        return at;
    }
    ltile *t = &lw->tile[tile];
    ltensor *owner = &lw->tensor[lw->tensor[tensor].root];
    uint64_t need = ALIGN8(bytes) + CODELET_READ_SLACK_BYTES;
    uint32_t a = (align < 8 ? 8 : align) - 1, at = 0;
    bool reused = false;
    /* Zeros placed outside a shared section's arena from inside it (a
     * gradient sum's, where it is first read): new bytes, zeros when the
     * executable is loaded, where there are any, so that no fill lands in
     * the section's steps, which then stay those of the sections alike. */
    int regions = pref == NEED_REGION1 ? 1 : 2;
    for (int k = 0; k < 2 * regions && zeroed && lw_section_placing_outside(lw) && !at && !lw->failed; k++)
        at = bump_alloc(lw, tile, bytes, need, a, (pref == PREFER_REGION0) == (k % regions == 0),
                        k < regions ? LW_KEPT_RESERVE_BYTES : 0);
    /* In the preferred region a released block among those kept for the
     * run, else a new one (leaving room for constants later ops keep for
     * the run), else one that ops' scratch used (keeping the blocks of
     * tensors and of scratch apart where there is room); then the same in
     * the other; then new bytes of that room. */
    for (int attempt = 0; attempt < 3 && !at && !lw->failed; attempt++) {
        bool r0 = (pref == PREFER_REGION0) == (attempt != 1);
        if (pref == NEED_REGION1 && r0)
            continue;
        if (attempt == 2) {
            for (int k = 0; k < (pref == NEED_REGION1 ? 1 : 2) && !at && !lw->failed; k++)
                at = bump_alloc(lw, tile, bytes, need, a, k ? !r0 : r0, 0);
            /* last, new bytes and the free block at the scratch's floor
             * as one block (the floor raised past it) */
            for (int k = 0; k < (pref == NEED_REGION1 ? 1 : 2) && !at && !lw->failed; k++)
                reused = (at = bump_into_floor(lw, tile, need, a, k ? !r0 : r0)) != 0;
            break;
        }
        reused = (at = take_released(lw, t, need, a, r0, false, r0 ? t->region0_kept_end : t->region1_kept_end)) != 0;
        if (!at && !lw->failed)       /* zeros when loaded */
            at = bump_alloc(lw, tile, bytes, need, a, r0, LW_KEPT_RESERVE_BYTES);
        if (!at && !lw->failed)
            reused = (at = take_released(lw, t, need, a, r0, false, UINT32_MAX)) != 0;
    }
    if (!at)
        return lw->failed ? 0 : no_room_in(lw, tile, need, what, pref);
    if (reused) {
        /* in the executable as part of the block it was (close_tile merges them) */
        if (!note_block(lw, t, at, bytes))
            return 0;
        lw->rep->reused_bytes += need;
        if (at >= (at < ISA_REGION1_BASE ? t->region0_kept_end : t->region1_kept_end))
            lw->rep->reused_scratch_bytes += need;
        if (zeroed && !fill_zeros(lw, tile, at, ALIGN8(bytes)))
            return 0;
    } else if (zeroed && lw_in_arena(lw) && !fill_zeros(lw, tile, at, ALIGN8(bytes))) {
        return 0;
    }
    if (!lw_grow((void **)&owner->blocks, &owner->cap_blocks, owner->n_blocks + 1, sizeof *owner->blocks)) {
        lw_fail(lw, "out of host memory");
        return 0;
    }
    owner->blocks[owner->n_blocks++] = (mem_block){ tile, at, (uint32_t)need, lw_section_measured(lw, tile) };
    return at;
}

/* Which tensors share storage — a view's output is its input's pieces, and
 * so is the output of a node the op table says aliases its input (Pow by 1,
 * a Transpose folded into the MatMul reading it: the MatMul reads its
 * input) — and the last node reading each storage. */
void lw_tensor_roots(lowering *lw)
{
    const graph *g = lw->g;
    for (int t = 0; t < g->n_tensors; t++) {
        lw->tensor[t].root = t;
        lw->last_reader[t] = -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const graph_node *n = &g->nodes[i];
        int out = n->n_outputs ? n->outputs[0] : -1;
        const lw_op_rule *rule = &lw_op_rules[n->op];
        if (out >= 0 && n->n_inputs && (rule->view || (rule->aliases && rule->aliases(g, n))))
            lw->tensor[out].root = lw->tensor[n->inputs[0]].root;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0)
                lw->last_reader[lw->tensor[n->inputs[k]].root] = i;
    }
    for (int i = 0; i < g->n_outputs; i++)
        lw->last_reader[lw->tensor[g->outputs[i]].root] = INT_MAX;
    /* variables and their updates live to the end of the step */
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].is_variable) {
            lw->last_reader[lw->tensor[t].root] = INT_MAX;
            if (g->tensors[t].update >= 0)
                lw->last_reader[lw->tensor[g->tensors[t].update].root] = INT_MAX;
        }
}

bool lw_release_tensor(lowering *lw, int t)
{
    ltensor *r = &lw->tensor[t];
    if (r->released)
        return true;
    if (!lw_end_phase(lw))
        return false;
    for (size_t b = 0; b < r->n_blocks; b++)
        if (!give_back(lw, r->blocks[b]))
            return false;
    r->released = true;
    return true;
}

bool lw_release_blocks_from(lowering *lw, int t, size_t from)
{
    ltensor *r = &lw->tensor[lw->tensor[t].root];
    if (from >= r->n_blocks)
        return true;
    if (!lw_end_phase(lw))
        return false;
    for (size_t b = from; b < r->n_blocks; b++)
        if (!give_back(lw, r->blocks[b]))
            return false;
    r->n_blocks = from;
    return true;
}

/* After node i: the storage of every tensor it was the last to read (or
 * wrote and nobody reads) goes back to its tiles, once the exchange and
 * copies it left pending are in the program. */
bool lw_release_dead(lowering *lw, int i)
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

bool lw_same_pieces(const ltensor *a, const ltensor *b, bool addresses)
{
    if (a->n != b->n)
        return false;
    for (size_t k = 0; k < a->n; k++)
        if (a->p[k].tile != b->p[k].tile || a->p[k].first != b->p[k].first || a->p[k].count != b->p[k].count ||
            (addresses && a->p[k].addr != b->p[k].addr))
            return false;
    return true;
}

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

void lw_sort_pieces(lowering *lw, int tensor)
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

uint32_t lw_held_at(const lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile)
{
    const ltensor *lt = &lw->tensor[t];
    uint32_t eb = lt->element_bytes;
    if (!lt->placed || !count)
        return 0;
    size_t k = lw_piece_at(lt, first);
    if (k < lt->n && lt->p[k].tile == tile && lt->p[k].first <= first && lt->p[k].first + lt->p[k].count >= first + count &&
        ((lt->p[k].addr + (first - lt->p[k].first) * eb) & 7u) == 0)
        return lt->p[k].addr + (uint32_t)((first - lt->p[k].first) * eb);
    return 0;
}

/* A tile address holding elements [first, first + count) of tensor t on
 * tile `tile`: a local piece, a constant placed now, or a buffer filled in
 * this op's exchange phase.  first must start 8 bytes aligned in the
 * tensor's element order, except at a piece start. */
uint32_t lw_fetch(lowering *lw, int t, uint64_t first, uint64_t count, uint32_t tile, enum region_pref pref)
{
    const graph_tensor *g = lw_gt(lw, t);
    if (count == 0)
        return 0;
    uint32_t held = lw_held_at(lw, t, first, count, tile);
    if (held)
        return held;
    char what[96];
    snprintf(what, sizeof what, g->data ? "constant '%s'" : "a copy of '%s'", g->name);
    uint32_t buf = lw_fetch_buffer(lw, t, count, tile, pref, what);
    if (!buf || !lw_fetch_into(lw, t, first, count, tile, buf))
        return 0;
    return buf;
}

uint32_t lw_fetch_buffer(lowering *lw, int t, uint64_t count, uint32_t tile, enum region_pref pref, const char *what)
{
    /* A constant is loaded with the executable (kept for the whole run); a
     * copy is only this op's (scratch). */
    uint64_t bytes = count * lw->tensor[t].element_bytes;
    return lw_gt(lw, t)->data && !lw->tensor[t].placed ? lw_tile_alloc(lw, tile, bytes, pref, 16, what)
                                                        : lw_scratch_alloc(lw, tile, bytes, pref, 8, what);
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
void lw_same_layout(lowering *lw, int out, int in)
{
    ltensor *lo = &lw->tensor[out];
    const ltensor *li = &lw->tensor[in];
    lo->permuted = li->permuted;
    memcpy(lo->perm, li->perm, sizeof lo->perm);
}

/* Give output tensor `out` (eb bytes an element) the same pieces, on the
 * same tiles, as tensor `like`, with new storage; or a linear split. */
bool lw_place_like(lowering *lw, int out, int like, const char *what)
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

/* lw_place_linear, its blocks starting as zeros where `zeroed`. */
static bool place_linear(lowering *lw, int out, uint64_t gran, uint32_t tiles, bool zeroed, const char *what)
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
        uint32_t a = lw_tensor_alloc(lw, out, tile, (h[i] - l[i]) * lo->element_bytes, PREFER_REGION1, 8, zeroed, what);
        if (a)
            lw_add_piece(lw, out, tile, a, l[i], h[i] - l[i]);
    }
    free(l);
    free(h);
    return !lw->failed;
}

bool lw_place_linear(lowering *lw, int out, uint64_t gran, uint32_t tiles, const char *what)
{
    return place_linear(lw, out, gran, tiles, false, what);
}

bool lw_lower_zeros(lowering *lw, const graph_node *n, int index)
{
    (void)lw, (void)n, (void)index;   /* placed where first read: lw_place_zeros */
    return true;
}

bool lw_blocks_for_pieces(lowering *lw, int t, const piece *like, size_t n, enum region_pref pref, bool zeroed,
                          const char *what, uint32_t *addr)
{
    uint32_t eb = lw->tensor[t].element_bytes;
    uint64_t *at = calloc(lw->program_tiles, sizeof *at);    /* bytes, then 1 << 32 | the next address */
    if (!at)
        return lw_fail(lw, "out of host memory");
    for (size_t k = 0; k < n; k++)
        at[like[k].tile] += ALIGN8(like[k].count * eb);
    for (size_t k = 0; k < n && !lw->failed; k++) {
        uint64_t *x = &at[like[k].tile];
        if (*x >> 32 == 0 && *x)
            *x = (uint64_t)1 << 32 | lw_tensor_alloc(lw, t, like[k].tile, *x, pref, 8, zeroed, what);
        addr[k] = *x >> 32 ? (uint32_t)*x : 0;
        if (*x >> 32)
            *x += ALIGN8(like[k].count * eb);
    }
    free(at);
    return !lw->failed;
}

/* Whether tensor x is placed as a Zeros of `total` elements may be laid out. */
static bool zeros_may_be_like(const lowering *lw, int x, uint64_t total)
{
    const ltensor *l = &lw->tensor[x];
    return l->placed && l->n && !l->permuted && (uint64_t)graph_shape_numel(&lw_gt(lw, x)->shape) == total;
}

bool lw_place_zeros(lowering *lw, const graph_node *n)
{
    const graph *g = lw->g;
    for (int i = 0; i < n->n_inputs && !lw->failed; i++) {
        int t = n->inputs[i], p = t >= 0 ? g->tensors[t].producer : -1;
        if (p < 0 || g->nodes[p].op != GRAPH_OP_ZEROS || lw->tensor[t].placed)
            continue;
        uint64_t total = (uint64_t)graph_shape_numel(&lw_gt(lw, t)->shape);
        const ltensor *ll = NULL;
        const graph_node *z = &g->nodes[p];
        int like = z->n_inputs ? z->inputs[0] : -1;
        if (like >= 0 && zeros_may_be_like(lw, like, total))
            ll = &lw->tensor[like];
        for (int k = 0; k < n->n_inputs && !ll; k++) {
            int x = n->inputs[k];
            if (x >= 0 && x != t && zeros_may_be_like(lw, x, total))
                ll = &lw->tensor[x];
        }
        ltensor *lo = &lw->tensor[t];
        char what[96];
        snprintf(what, sizeof what, "tensor '%s'", lw_gt(lw, t)->name);
        if (!ll) {
            uint64_t gran = lw_gran_of(lo->element_bytes);
            if (place_linear(lw, t, gran, lw_plan_tiles(lw, total, gran, 1.0, 200), true, what) && !lo->placed)
                lo->placed = true;            /* an empty tensor */
            continue;
        }
        /* one block a tile, its pieces in it: one compute set fills it */
        uint32_t *addr = malloc((ll->n + 1) * sizeof *addr);
        if (!addr)
            return lw_fail(lw, "out of host memory");
        if (lw_blocks_for_pieces(lw, t, ll->p, ll->n, PREFER_REGION1, true, what, addr))
            for (size_t k = 0; k < ll->n && !lw->failed; k++)
                if (ll->p[k].count)
                    lw_add_piece(lw, t, ll->p[k].tile, addr[k], ll->p[k].first, ll->p[k].count);
        free(addr);
        if (!lo->placed && !lw->failed)
            lo->placed = true;                /* an empty tensor */
    }
    return !lw->failed;
}

/* Granularity in elements that keeps pieces 8-byte aligned. */
uint64_t lw_gran_of(uint32_t eb) { return eb >= 8 ? 1 : 8 / eb; }
