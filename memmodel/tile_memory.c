/*
 * tile_memory.c — one tile's SRAM: lazily allocated pages, the access rules
 * of ISA2 §2.8 (alignment, range, 128-bit loads from the interleaved region
 * only) and the element mapping that decides conflicts (§2.8.4, §2.8.11).
 * The fixed-size fast paths are inline in tile_memory.h; the rules and the
 * element mapping are described there.
 */
#include "tile_memory.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "memory_map.h"
#include "sim/base/diag.h"

_Static_assert(TMEM_PAGE_BYTES == ISA_ELEMENT_BYTES, "a page is one element's worth of addresses");
_Static_assert((1u << TMEM_PAGE_SHIFT) == TMEM_PAGE_BYTES, "page shift");
_Static_assert(ISA_MEMORY_BASE % TMEM_PAGE_BYTES == 0, "the fast paths rely on a page-aligned base");

/* Bytes of address space covered by one interleaved pair of elements. */
#define PAIR_BYTES (2u * ISA_ELEMENT_BYTES)

_Static_assert(TMEM_MAX_PAGES <= 64, "tmem_watch.pages has a bit per page");

/* A watched range of bytes. */
typedef struct watch_range {
    uint32_t addr, bytes;
    unsigned kinds;                  /* TMEM_WATCH_READ | TMEM_WATCH_WRITE */
} watch_range;

struct tmem_watch {
    uint64_t pages;                  /* bit p: page p holds watched bytes (page[p] is NULL) */
    uint8_t *moved[TMEM_MAX_PAGES];  /* those pages' storage (NULL: never written) */
    watch_range range[TMEM_MAX_WATCHES];
    unsigned n_ranges;
    tmem_access noted[TMEM_NOTED_ACCESSES];  /* accesses to watched pages since tmem_watch_take */
    unsigned n_noted;
};

void tmem_init(tile_memory *m, uint32_t base, uint32_t size_bytes)
{
    ALWAYS(size_bytes > 0 && size_bytes % TMEM_PAGE_BYTES == 0);
    ALWAYS(size_bytes / TMEM_PAGE_BYTES <= TMEM_MAX_PAGES);
    ALWAYS(base % TMEM_PAGE_BYTES == 0 && base >= ISA_MEMORY_BASE && base <= ISA_REGION1_BASE);
    memset(m, 0, sizeof *m);
    m->base = base;
    m->size_bytes = size_bytes;
    uint32_t end = m->base + size_bytes;
    /* A memory that ends before 0x80000 has no interleaved region. */
    m->region1_base = end > ISA_REGION1_BASE ? ISA_REGION1_BASE : end;
}

/* A page's bytes follow a header holding the number of its holders (the
 * memories and the snapshots sharing it); 64 bytes keep the bytes aligned
 * as malloc's.  The count is atomic: tiles of several replicas may share a
 * page and copy it on write from different host threads (the bytes need
 * nothing more: a page is written in place only by its one holder). */
#define PAGE_HEADER_BYTES 64u

static atomic_uint *holders_of(const uint8_t *p)
{
    return (atomic_uint *)(void *)(uintptr_t)(p - PAGE_HEADER_BYTES);
}

static unsigned holders(const uint8_t *p)
{
    return atomic_load_explicit(holders_of(p), memory_order_acquire);
}

/* A new page held once: zeroed, or a copy of `from`. */
static uint8_t *new_page(const uint8_t *from)
{
    uint8_t *b = from ? malloc(PAGE_HEADER_BYTES + TMEM_PAGE_BYTES) : calloc(1, PAGE_HEADER_BYTES + TMEM_PAGE_BYTES);
    if (!b)
        return NULL;
    uint8_t *p = b + PAGE_HEADER_BYTES;
    atomic_init(holders_of(p), 1u);
    if (from)
        memcpy(p, from, TMEM_PAGE_BYTES);
    return p;
}

void tmem_page_hold(const uint8_t *p)
{
    if (p)
        atomic_fetch_add_explicit(holders_of(p), 1u, memory_order_relaxed);
}

void tmem_page_release(const uint8_t *p)
{
    if (p && atomic_fetch_sub_explicit(holders_of(p), 1u, memory_order_acq_rel) == 1)
        free((void *)(uintptr_t)(p - PAGE_HEADER_BYTES));
}

uint8_t *tmem_page_copy(const uint8_t *p)
{
    return new_page(p);
}

size_t tmem_page_host_bytes(void)
{
    return PAGE_HEADER_BYTES + TMEM_PAGE_BYTES;
}

void tmem_free(tile_memory *m)
{
    for (unsigned i = 0; i < TMEM_MAX_PAGES; i++) {
        tmem_page_release(m->page[i]);
        m->page[i] = m->wpage[i] = NULL;
        if (m->watch)
            tmem_page_release(m->watch->moved[i]);
    }
    free(m->watch);
    m->watch = NULL;
    m->watching = 0;
    m->pages_allocated = 0;
}

/* Where page number pg's storage pointer lives: page[], or the watch's
 * table when a watch moved it. */
static uint8_t *const *page_slot(const tile_memory *m, uint32_t pg)
{
    if (m->watching && (m->watch->pages >> pg & 1u))
        return &m->watch->moved[pg];
    return &m->page[pg];
}

/* Page pg's storage, wherever it is; NULL when never written. */
static const uint8_t *page_of(const tile_memory *m, uint32_t pg)
{
    return *page_slot(m, pg);
}

uint8_t *tmem_page_for_write(tile_memory *m, uint32_t page)
{
    ALWAYS(page < m->size_bytes / TMEM_PAGE_BYTES);
    uint8_t **slot = (uint8_t **)page_slot(m, page);
    if (!*slot) {
        if (!(*slot = new_page(NULL)))
            return NULL;
        m->pages_allocated++;
    } else if (holders(*slot) > 1) {
        /* Shared with a snapshot: write a copy of our own. */
        uint8_t *own = new_page(*slot);
        if (!own)
            return NULL;
        tmem_page_release(*slot);
        *slot = own;
    }
    /* Stores go straight to a page held alone, unless a watch moved it. */
    if (slot == &m->page[page])
        m->wpage[page] = *slot;
    return *slot;
}

const uint8_t *tmem_page(const tile_memory *m, uint32_t page)
{
    ALWAYS(page < TMEM_MAX_PAGES);
    return page_of(m, page);
}

const uint8_t *tmem_page_share(tile_memory *m, uint32_t page)
{
    ALWAYS(page < TMEM_MAX_PAGES);
    m->wpage[page] = NULL;
    const uint8_t *p = page_of(m, page);
    tmem_page_hold(p);
    return p;
}

void tmem_page_adopt(tile_memory *m, uint32_t page, const uint8_t *p)
{
    ALWAYS(page < TMEM_MAX_PAGES);
    uint8_t **slot = (uint8_t **)page_slot(m, page);
    if (*slot == p)
        return;
    tmem_page_hold(p);
    tmem_page_release(*slot);
    m->pages_allocated += (p != NULL) - (*slot != NULL);
    *slot = (uint8_t *)(uintptr_t)p;
    m->wpage[page] = NULL;
}

/* The pages [addr, addr + n) touches, as a bit mask; n > 0, inside memory. */
static uint64_t page_mask(const tile_memory *m, uint32_t addr, uint32_t n)
{
    uint32_t first = (addr - m->base) >> TMEM_PAGE_SHIFT, last = (addr - m->base + n - 1u) >> TMEM_PAGE_SHIFT;
    return (~0ull >> (63u - last)) & (~0ull << first);
}

/* Note an access of an instruction when it touches a watched page; an
 * access right after the last one noted, of the same kind, extends it. */
static void note_access(const tile_memory *m, uint32_t addr, uint32_t n, bool write)
{
    tmem_watch *w = m->watch;
    if (!(w->pages & page_mask(m, addr, n)))
        return;
    if (w->n_noted) {
        tmem_access *last = &w->noted[w->n_noted - 1];
        if (last->write == write && last->addr + last->bytes == addr) {
            last->bytes += n;
            return;
        }
    }
    if (w->n_noted < TMEM_NOTED_ACCESSES)
        w->noted[w->n_noted++] = (tmem_access){ addr, n, write };
}

/* A checked load (not crossing a page) whose page pointer is NULL. */
static void load_unmapped(const tile_memory *m, uint32_t addr, unsigned bytes, void *dst)
{
    uint32_t off = addr - m->base;
    if (m->watching)
        note_access(m, addr, bytes, false);
    const uint8_t *p = page_of(m, off >> TMEM_PAGE_SHIFT);
    if (p)
        memcpy(dst, p + (off & (TMEM_PAGE_BYTES - 1u)), bytes);
    else
        memset(dst, 0, bytes);
}

uint64_t tmem_load_cold_(const tile_memory *m, uint32_t addr, unsigned bytes)
{
    uint64_t v = 0;
    load_unmapped(m, addr, bytes, &v);
    return v;
}

uint8_t *tmem_page_for_store_(tile_memory *m, uint32_t addr, unsigned bytes)
{
    uint8_t *p = tmem_page_for_write(m, (addr - m->base) >> TMEM_PAGE_SHIFT);
    if (p && m->watching)
        note_access(m, addr, bytes, true);
    return p;
}

/* The rules common to every checked access, in the order of ISA2 Listing
 * 2.6; is_store picks the store widths. */
static enum tmem_status check_access(const tile_memory *m, uint32_t addr, unsigned bytes,
                                     bool is_store)
{
    bool width_ok = is_store ? (bytes == 4 || bytes == 8)
                             : (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16);
    if (!width_ok)
        return TMEM_WIDTH;
    if (addr & (bytes - 1u))
        return TMEM_ALIGN;
    if (addr - m->base >= m->size_bytes)
        return TMEM_RANGE;
    /* 128-bit loads need an interleave factor of at least 2 (§2.8.6). */
    if (bytes == 16 && addr < m->region1_base)
        return TMEM_REGION;
    return TMEM_OK;
}

enum tmem_status tmem_load(const tile_memory *m, uint32_t addr, unsigned bytes, void *buf)
{
    enum tmem_status s = check_access(m, addr, bytes, false);
    if (s != TMEM_OK)
        return s;
    /* Aligned accesses of at most 16 bytes never cross a 16 KiB page. */
    uint32_t off = addr - m->base;
    const uint8_t *p = m->page[off >> TMEM_PAGE_SHIFT];
    if (p)
        memcpy(buf, p + (off & (TMEM_PAGE_BYTES - 1u)), bytes);
    else
        load_unmapped(m, addr, bytes, buf);
    return TMEM_OK;
}

enum tmem_status tmem_store(tile_memory *m, uint32_t addr, unsigned bytes, const void *buf)
{
    enum tmem_status s = check_access(m, addr, bytes, true);
    if (s != TMEM_OK)
        return s;
    uint32_t off = addr - m->base;
    uint8_t *p = m->wpage[off >> TMEM_PAGE_SHIFT];
    if (!p && !(p = tmem_page_for_store_(m, addr, bytes)))
        return TMEM_NOMEM;
    memcpy(p + (off & (TMEM_PAGE_BYTES - 1u)), buf, bytes);
    return TMEM_OK;
}

_Static_assert(PAIR_BYTES == 2u * TMEM_PAGE_BYTES, "tmem_element (inline): a pair of elements is two pages");

enum tmem_status tmem_check_conflict(const tile_memory *m, const uint32_t *addr, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned ei = tmem_element(m, addr[i]);
        if (ei == TMEM_NO_ELEMENT)
            continue;
        for (unsigned j = i + 1; j < n; j++)
            if (tmem_element(m, addr[j]) == ei)
                return TMEM_CONFLICT;
    }
    return TMEM_OK;
}

/* [addr, addr + n) inside memory, without overflow. */
static bool range_ok(const tile_memory *m, uint32_t addr, size_t n)
{
    uint32_t off = addr - m->base;
    return off < m->size_bytes && n <= (size_t)(m->size_bytes - off);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

enum tmem_status tmem_write_bytes(tile_memory *m, uint32_t addr, const void *src, size_t n)
{
    if (n == 0)
        return TMEM_OK;
    if (!range_ok(m, addr, n))
        return TMEM_RANGE;
    const uint8_t *s = src;
    uint32_t off = addr - m->base;
    while (n) {
        uint32_t in_page = off & (TMEM_PAGE_BYTES - 1u);
        size_t chunk = TMEM_PAGE_BYTES - in_page;
        if (chunk > n)
            chunk = n;
        uint32_t pg = off >> TMEM_PAGE_SHIFT;
        if (page_of(m, pg) || !all_zero(s, chunk)) {
            uint8_t *p = tmem_page_for_write(m, pg);
            if (!p)
                return TMEM_NOMEM;
            memcpy(p + in_page, s, chunk);
        }
        s += chunk;
        off += (uint32_t)chunk;
        n -= chunk;
    }
    return TMEM_OK;
}

enum tmem_status tmem_read_bytes(const tile_memory *m, uint32_t addr, void *dst, size_t n)
{
    if (n == 0)
        return TMEM_OK;
    if (!range_ok(m, addr, n))
        return TMEM_RANGE;
    uint8_t *d = dst;
    uint32_t off = addr - m->base;
    while (n) {
        uint32_t in_page = off & (TMEM_PAGE_BYTES - 1u);
        size_t chunk = TMEM_PAGE_BYTES - in_page;
        if (chunk > n)
            chunk = n;
        const uint8_t *p = page_of(m, off >> TMEM_PAGE_SHIFT);
        if (p)
            memcpy(d, p + in_page, chunk);
        else
            memset(d, 0, chunk);
        d += chunk;
        off += (uint32_t)chunk;
        n -= chunk;
    }
    return TMEM_OK;
}

enum tmem_status tmem_load_bytes(const tile_memory *m, uint32_t addr, void *dst, size_t n)
{
    enum tmem_status st = tmem_read_bytes(m, addr, dst, n);
    if (st == TMEM_OK && n && m->watching)
        note_access(m, addr, (uint32_t)n, false);
    return st;
}

/* ---- access watches -------------------------------------------------------- */

/* Move the pages that hold watched bytes out of page[], and back those
 * that no longer do. */
static void place_pages(tile_memory *m)
{
    tmem_watch *w = m->watch;
    uint64_t want = 0;
    for (unsigned i = 0; i < w->n_ranges; i++)
        want |= page_mask(m, w->range[i].addr, w->range[i].bytes);
    for (unsigned pg = 0; pg < TMEM_MAX_PAGES; pg++) {
        bool was = w->pages >> pg & 1u, is = want >> pg & 1u;
        if (is && !was) {
            w->moved[pg] = m->page[pg];
            m->page[pg] = m->wpage[pg] = NULL;
        } else if (was && !is) {
            m->page[pg] = w->moved[pg];
            w->moved[pg] = NULL;
            if (m->page[pg] && holders(m->page[pg]) == 1)
                m->wpage[pg] = m->page[pg];
        }
    }
    w->pages = want;
}

bool tmem_watch_add(tile_memory *m, uint32_t addr, uint32_t bytes, unsigned kinds)
{
    if (!bytes || !range_ok(m, addr, bytes) || !kinds || (kinds & ~(unsigned)(TMEM_WATCH_READ | TMEM_WATCH_WRITE)))
        return false;
    if (!m->watch) {
        m->watch = calloc(1, sizeof *m->watch);
        if (!m->watch)
            return false;
    }
    tmem_watch *w = m->watch;
    if (w->n_ranges == TMEM_MAX_WATCHES)
        return false;
    w->range[w->n_ranges++] = (watch_range){ addr, bytes, kinds };
    m->watching = 1;
    place_pages(m);
    return true;
}

bool tmem_watch_remove(tile_memory *m, uint32_t addr, uint32_t bytes, unsigned kinds)
{
    tmem_watch *w = m->watch;
    unsigned i = 0;
    while (w && i < w->n_ranges && !(w->range[i].addr == addr && w->range[i].bytes == bytes &&
                                     w->range[i].kinds == kinds))
        i++;
    if (!w || i == w->n_ranges)
        return false;
    memmove(&w->range[i], &w->range[i + 1], (w->n_ranges - i - 1) * sizeof w->range[0]);
    w->n_ranges--;
    place_pages(m);
    if (w->n_ranges == 0) {
        free(w);
        m->watch = NULL;
        m->watching = 0;
    }
    return true;
}

unsigned tmem_watch_count(const tile_memory *m)
{
    return m->watch ? m->watch->n_ranges : 0;
}

bool tmem_watch_hits(const tile_memory *m, uint32_t addr, uint32_t bytes, bool write)
{
    const tmem_watch *w = m->watch;
    unsigned kind = write ? TMEM_WATCH_WRITE : TMEM_WATCH_READ;
    for (unsigned i = 0; w && bytes && i < w->n_ranges; i++) {
        const watch_range *r = &w->range[i];
        /* Overlap of [addr, addr + bytes) and [r->addr, r->addr + r->bytes), in 64 bits. */
        if ((r->kinds & kind) && (uint64_t)addr + bytes > r->addr && (uint64_t)r->addr + r->bytes > addr)
            return true;
    }
    return false;
}

bool tmem_watch_take(tile_memory *m, tmem_access *hit)
{
    tmem_watch *w = m->watch;
    if (!w || !w->n_noted)
        return false;
    bool found = false;
    for (unsigned i = 0; i < w->n_noted && !found; i++)
        if (tmem_watch_hits(m, w->noted[i].addr, w->noted[i].bytes, w->noted[i].write)) {
            *hit = w->noted[i];
            found = true;
        }
    w->n_noted = 0;
    return found;
}

bool tmem_is_executable(const tile_memory *m, uint32_t addr)
{
    return addr >= m->base && addr < m->region1_base;
}

const char *tmem_status_name(enum tmem_status s)
{
    switch (s) {
    case TMEM_OK: return "ok";
    case TMEM_RANGE: return "address outside tile memory";
    case TMEM_ALIGN: return "misaligned access";
    case TMEM_REGION: return "access not allowed in this memory region";
    case TMEM_CONFLICT: return "memory element conflict";
    case TMEM_NOMEM: return "host out of memory";
    case TMEM_WIDTH: return "unsupported access width";
    }
    return "unknown memory status";
}

size_t tmem_host_bytes(const tile_memory *m)
{
    return (size_t)m->pages_allocated * TMEM_PAGE_BYTES;
}
