/*
 * tile_memory.h — one tile's SRAM.
 *
 * Model (ISA2 §2.8, IPU_FACTS.md): addresses [base, base + size).  Region
 * 0 runs from base to ISA_REGION1_BASE (0x80000), is the only executable
 * region and is not interleaved; region 1 runs from 0x80000 to the end and
 * is 2-way interleaved on 64-bit words (address bit 3 picks the element of
 * a pair).  The base is where the machine's region 0 begins
 * (memory_map.h): 0x4C000 on GC200/Bow (208 KiB of region 0, 416 KiB of
 * region 1), 0x60000 on GC2 (128 KiB and 128 KiB).
 * Memory is built of 16 KiB elements, 64 bits wide; the several accesses of
 * one instruction must hit different elements, else a conflict exception.
 * Accesses are naturally aligned, little-endian; loads are 8..128 bits
 * (128 only from region 1), stores 32 or 64 bits (narrower stores are a
 * read-modify-write in software).
 *
 * Storage is allocated lazily in 16 KiB pages on the first write: a chip of
 * 1472 tiles × 624 KiB costs only what programs touch.  Reads of never
 * written memory return zeros (real SRAM would hold garbage; ipusim is
 * deterministic instead).
 *
 * Pages can be shared, copy on write, with snapshots of the memory (the
 * engine's checkpoints, sim/engine/engine.h) and with other tiles' memories
 * (a replica's tile and replica 0's): tmem_page_share hands out a page as
 * it is now, and the memory's next write to that page goes to a
 * copy of its own.  A page is freed with its last holder.  Stores write
 * through wpage[], which holds only the pages this memory holds alone (and
 * no watch moved), so the fast paths cost the same as without sharing.
 *
 * Element numbering (tmem_element; ISA2 §2.8.2, §2.8.4, §2.8.11.1), with
 * off = addr - base and r1 = region1_base - base:
 *   region 0 (off < r1):  element = off / 16 KiB  (linear, one element
 *                         covers 16 KiB of consecutive addresses);
 *   region 1 (off >= r1): pairs of elements cover 32 KiB of addresses;
 *                         pair = (off - r1) / 32 KiB, and address bit 3
 *                         picks the member: element = r1 / 16 KiB +
 *                         2 * pair + ((addr >> 3) & 1).  So 64-bit words
 *                         a and a + 8 are always in different elements.
 *   An odd element left over at the top of region 1 (only with sizes that
 *   are not a whole number of pairs past 0x80000, set by hand) is a single
 *   non-interleaved element, numbered last.
 * GC200/Bow: 13 elements in region 0 (0..12), 13 pairs in region 1
 * (13..38); GC2: 8 in region 0, 4 pairs in region 1.  The region 1 base is 0x80000 when the memory reaches past it;
 * a smaller memory is all region 0.
 *
 * Storage pages are 16 KiB of consecutive addresses (page = off / 16 KiB),
 * which is not the element numbering in region 1: elements decide
 * conflicts only, pages only where bytes live.
 *
 * Checks run in this order: width, then alignment and range as in ISA2
 * Listing 2.6 (alignment first), then region.  A 128-bit load occupies both elements of its pair; callers
 * checking conflicts pass both addr and addr + 8.  Stores of 1, 2 or 16
 * bytes return TMEM_WIDTH (the hardware has no such store; software does a
 * 32-bit read-modify-write, ISA2 §2.8.6).
 *
 * The host must be little-endian (checked at compile time): loads and
 * stores copy bytes straight between the page and the value.
 *
 * Access watches (a debugger's read and access watchpoints): tmem_watch_add
 * watches bytes for the loads and/or stores of instructions.  A page that
 * holds watched bytes is moved out of page[] into the watch's own table,
 * so that every load and store of it takes the cold branch of the fast
 * paths below (page pointer NULL), which notes the access and performs it
 * on the moved page; pages without watched bytes, and every memory with
 * no watch, run exactly as before.  tmem_read_bytes and tmem_write_bytes
 * (the loader, the debugger, the exchange) see the moved pages as ever and
 * are not noted; xsend reads its data with tmem_load_bytes, which is.
 *
 * Not modelled: ECC errors, the exchange-side access clashes of §2.8.11.2.
 */
#ifndef IPUSIM_TILE_MEMORY_H
#define IPUSIM_TILE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ipusim's tile memory assumes a little-endian host"
#endif

#define TMEM_PAGE_BYTES 16384u
#define TMEM_MAX_PAGES  64u          /* enough for 1 MiB of tile memory */
#define TMEM_PAGE_SHIFT 14u
#define TMEM_NO_ELEMENT 0xFFFFFFFFu  /* tmem_element of an address outside memory */

enum tmem_status {
    TMEM_OK = 0,
    TMEM_RANGE,       /* outside [base, base + size) */
    TMEM_ALIGN,       /* not naturally aligned */
    TMEM_REGION,      /* access kind not allowed in this region (128-bit load from region 0) */
    TMEM_CONFLICT,    /* two accesses of one instruction on one element */
    TMEM_NOMEM,       /* host out of memory allocating a page */
    TMEM_WIDTH,       /* no load/store of this many bytes (stores: 4 or 8 only) */
};

/* The watches of a memory and the pages they moved (tile_memory.c). */
typedef struct tmem_watch tmem_watch;

typedef struct tile_memory {
    uint32_t base;                   /* first valid address */
    uint32_t size_bytes;             /* bytes of SRAM */
    uint32_t region1_base;           /* start of the interleaved region */
    uint32_t watching;               /* non-zero while watch is set: the cold branches look there */
    uint8_t *page[TMEM_MAX_PAGES];   /* NULL until written, or moved to watch->moved */
    uint8_t *wpage[TMEM_MAX_PAGES];  /* page[i] when this memory alone holds it (stores
                                        write through here), else NULL */
    uint32_t pages_allocated;        /* in page[] and watch->moved (shared ones included) */
    tmem_watch *watch;               /* NULL when no access watch is set */
} tile_memory;

/* Set up an empty memory of size_bytes (a multiple of TMEM_PAGE_BYTES, at
 * most TMEM_MAX_PAGES pages) starting at `base` (isa_memory_base of the
 * machine's region 0: ISA_MEMORY_BASE on GC200/Bow). */
void tmem_init(tile_memory *m, uint32_t base, uint32_t size_bytes);
void tmem_free(tile_memory *m);

/* Loads and stores of 1, 2, 4, 8 or 16 bytes with the access rules above.
 * Values are little-endian byte images in buf. */
enum tmem_status tmem_load(const tile_memory *m, uint32_t addr, unsigned bytes, void *buf);
enum tmem_status tmem_store(tile_memory *m, uint32_t addr, unsigned bytes, const void *buf);

/* Fast paths used by the executor (same rules, fixed sizes), inline below.
 * static inline enum tmem_status tmem_load32(const tile_memory *m, uint32_t addr, uint32_t *v);
 * static inline enum tmem_status tmem_load64(const tile_memory *m, uint32_t addr, uint64_t *v);
 * static inline enum tmem_status tmem_store32(tile_memory *m, uint32_t addr, uint32_t v);
 * static inline enum tmem_status tmem_store64(tile_memory *m, uint32_t addr, uint64_t v);
 * On any status but TMEM_OK a load leaves *v unchanged and a store writes
 * nothing. */

/* Storage page number `page` (offset from base / TMEM_PAGE_BYTES, inside
 * the memory), allocated zeroed if needed (where a watch moved it, there),
 * copied first if it is shared; NULL when the host is out of memory.  Not
 * noted by the watches. */
uint8_t *tmem_page_for_write(tile_memory *m, uint32_t page);

/* Sharing pages with snapshots, and between the tiles of replicas that
 * load the same bytes (sim/engine/engine.c): the holder count is atomic,
 * so the memories sharing a page may copy it on write from any thread;
 * snapshots are taken and freed while the tile does not run.
 *   tmem_page:         page `page`'s bytes wherever they are (a watch may
 *                      have moved them); NULL when never written;
 *   tmem_page_share:   the same, held once more for the caller; the memory
 *                      writes a copy of its own from its next write to it;
 *   tmem_page_hold / tmem_page_release: one holder more / less (the last
 *                      release frees it; NULL is ignored);
 *   tmem_page_copy:    a new page with p's bytes, held once by the caller,
 *                      who may write it until a memory adopts it; NULL
 *                      when the host is out of memory;
 *   tmem_page_adopt:   make page `page` the shared page p (NULL: never
 *                      written), held once more; the memory lets go of its
 *                      own. */
const uint8_t *tmem_page(const tile_memory *m, uint32_t page);
const uint8_t *tmem_page_share(tile_memory *m, uint32_t page);
void tmem_page_hold(const uint8_t *p);
void tmem_page_release(const uint8_t *p);
uint8_t *tmem_page_copy(const uint8_t *p);
void tmem_page_adopt(tile_memory *m, uint32_t page, const uint8_t *p);
/* Host bytes of one page with its holder count. */
size_t tmem_page_host_bytes(void);

/* The cold branches of the fast paths, for an access already checked
 * (aligned, in range, not crossing a page) whose page pointer is NULL: a
 * page never written, or one a watch moved (then the access is noted);
 * for a store, wpage[]'s: also a page shared with a snapshot.
 * The load (of at most 8 bytes) returns the value; the store's returns
 * the page to store into, allocated if needed (NULL when the host is out
 * of memory).  Values pass by value: the fast paths' operands stay in
 * registers. */
__attribute__((cold)) uint64_t tmem_load_cold_(const tile_memory *m, uint32_t addr, unsigned bytes);
__attribute__((cold)) uint8_t *tmem_page_for_store_(tile_memory *m, uint32_t addr, unsigned bytes);

/* A range or alignment failure of a fixed-size access (alignment first). */
static inline enum tmem_status tmem_fault_(const tile_memory *m, uint32_t addr, uint32_t bytes)
{
    return (addr & (bytes - 1u)) ? TMEM_ALIGN
         : (addr - m->base >= m->size_bytes) ? TMEM_RANGE : TMEM_OK;
}

/* Both checks in one compare: off is in range and aligned iff the bits
 * below the access size are clear and off < size (base is page aligned, so
 * off and addr share their low bits). */
#define TMEM_ACCESS_OK_(m, off, bytes) \
    ((((off) & ((bytes) - 1u)) | (uint32_t)((off) >= (m)->size_bytes)) == 0)

static inline enum tmem_status tmem_load32(const tile_memory *m, uint32_t addr, uint32_t *v)
{
    uint32_t off = addr - m->base;
    if (!TMEM_ACCESS_OK_(m, off, 4u))
        return tmem_fault_(m, addr, 4u);
    const uint8_t *p = m->page[off >> TMEM_PAGE_SHIFT];
    if (p)
        memcpy(v, p + (off & (TMEM_PAGE_BYTES - 1u)), 4);
    else if (__builtin_expect(m->watching != 0, 0))
        *v = (uint32_t)tmem_load_cold_(m, addr, 4u);
    else
        *v = 0;
    return TMEM_OK;
}

static inline enum tmem_status tmem_load64(const tile_memory *m, uint32_t addr, uint64_t *v)
{
    uint32_t off = addr - m->base;
    if (!TMEM_ACCESS_OK_(m, off, 8u))
        return tmem_fault_(m, addr, 8u);
    const uint8_t *p = m->page[off >> TMEM_PAGE_SHIFT];
    if (p)
        memcpy(v, p + (off & (TMEM_PAGE_BYTES - 1u)), 8);
    else if (__builtin_expect(m->watching != 0, 0))
        *v = (uint64_t)tmem_load_cold_(m, addr, 8u);
    else
        *v = 0;
    return TMEM_OK;
}

static inline enum tmem_status tmem_store32(tile_memory *m, uint32_t addr, uint32_t v)
{
    uint32_t off = addr - m->base;
    if (!TMEM_ACCESS_OK_(m, off, 4u))
        return tmem_fault_(m, addr, 4u);
    uint8_t *p = m->wpage[off >> TMEM_PAGE_SHIFT];
    if (!p && !(p = tmem_page_for_store_(m, addr, 4u)))
        return TMEM_NOMEM;
    memcpy(p + (off & (TMEM_PAGE_BYTES - 1u)), &v, 4);
    return TMEM_OK;
}

static inline enum tmem_status tmem_store64(tile_memory *m, uint32_t addr, uint64_t v)
{
    uint32_t off = addr - m->base;
    if (!TMEM_ACCESS_OK_(m, off, 8u))
        return tmem_fault_(m, addr, 8u);
    uint8_t *p = m->wpage[off >> TMEM_PAGE_SHIFT];
    if (!p && !(p = tmem_page_for_store_(m, addr, 8u)))
        return TMEM_NOMEM;
    memcpy(p + (off & (TMEM_PAGE_BYTES - 1u)), &v, 8);
    return TMEM_OK;
}

/* The memory element an address falls in (0 .. size/16 KiB - 1), taking
 * region 1's interleaving into account (mapping in the comment at the top);
 * TMEM_NO_ELEMENT outside [base, base + size).  Inline, with shifts and
 * masks (the instructions with several accesses look up every address):
 * an element is one page (16 KiB) of addresses in region 0, a pair of
 * elements 2 pages in region 1, and region 1 starts on a page boundary
 * (r1_off is a whole number of pages). */
static inline unsigned tmem_element(const tile_memory *m, uint32_t addr)
{
    uint32_t off = addr - m->base;
    if (off >= m->size_bytes)
        return TMEM_NO_ELEMENT;
    uint32_t r1_off = m->region1_base - m->base;
    if (off < r1_off)
        return off >> TMEM_PAGE_SHIFT;
    uint32_t in_r1 = off - r1_off;
    /* Past the last whole pair: an unpaired last element, not interleaved. */
    uint32_t paired_bytes = (m->size_bytes - r1_off) & ~(2u * TMEM_PAGE_BYTES - 1u);
    return (r1_off >> TMEM_PAGE_SHIFT) + 2u * (in_r1 >> (TMEM_PAGE_SHIFT + 1u))
         + ((addr >> 3) & (unsigned)(in_r1 < paired_bytes));
}

/* TMEM_CONFLICT if any two of the n addresses fall in the same element.
 * Addresses outside memory are ignored here: the access itself reports
 * them. */
enum tmem_status tmem_check_conflict(const tile_memory *m, const uint32_t *addr, unsigned n);

/* Unchecked bulk access for the loader, the debugger and the exchange:
 * only range is checked (no alignment/region rules); the whole of
 * [addr, addr + n) must lie in memory, else TMEM_RANGE and nothing is
 * copied.  n == 0 always succeeds.  Writing zeros to a page never written
 * leaves it unallocated (it reads as zeros anyway). */
enum tmem_status tmem_write_bytes(tile_memory *m, uint32_t addr, const void *src, size_t n);
enum tmem_status tmem_read_bytes(const tile_memory *m, uint32_t addr, void *dst, size_t n);

/* An instruction's bulk read (xsend's data): tmem_read_bytes, noted as a
 * read where it touches watched pages. */
enum tmem_status tmem_load_bytes(const tile_memory *m, uint32_t addr, void *dst, size_t n);

/* ---- access watches ------------------------------------------------------ */

#define TMEM_MAX_WATCHES    32u      /* per memory */
#define TMEM_NOTED_ACCESSES 8u       /* accesses kept between tmem_watch_take calls */

enum { TMEM_WATCH_READ = 1, TMEM_WATCH_WRITE = 2 };

/* A load or store of an instruction (or several adjacent ones of the same
 * kind, merged: a 128-bit load is two 64-bit accesses). */
typedef struct tmem_access {
    uint32_t addr;
    uint32_t bytes;
    bool write;
} tmem_access;

/* Watch [addr, addr + bytes) for loads (TMEM_WATCH_READ) and/or stores
 * (TMEM_WATCH_WRITE) of instructions.  Watches are counted: the same
 * watch set twice needs removing twice.  False when the range is empty or
 * not inside memory, kinds is not a non-empty set of those two, the memory
 * has TMEM_MAX_WATCHES watches already, or the host is out of memory. */
bool tmem_watch_add(tile_memory *m, uint32_t addr, uint32_t bytes, unsigned kinds);
/* Remove one watch set with the same arguments (false when there is none).
 * Removing the last one puts every moved page back: the memory is then
 * exactly as if no watch had been set. */
bool tmem_watch_remove(tile_memory *m, uint32_t addr, uint32_t bytes, unsigned kinds);
unsigned tmem_watch_count(const tile_memory *m);
/* True when an access of that kind to any byte of [addr, addr + bytes)
 * would hit a watch. */
bool tmem_watch_hits(const tile_memory *m, uint32_t addr, uint32_t bytes, bool write);
/* The first access noted since the last call that hit a watch of its kind,
 * in *hit; false when none did.  Forgets the noted accesses either way. */
bool tmem_watch_take(tile_memory *m, tmem_access *hit);

bool tmem_is_executable(const tile_memory *m, uint32_t addr);
const char *tmem_status_name(enum tmem_status s);

/* Host bytes of the pages it holds (for memory accounting). */
size_t tmem_host_bytes(const tile_memory *m);

#endif
