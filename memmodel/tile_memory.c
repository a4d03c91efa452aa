/*
 * tile_memory.c — one tile's SRAM: lazily allocated pages, the access rules
 * of ISA2 §2.8 (alignment, range, 128-bit loads from the interleaved region
 * only) and the element mapping that decides conflicts (§2.8.4, §2.8.11).
 * The fixed-size fast paths are inline in tile_memory.h; the rules and the
 * element mapping are described there.
 */
#include "tile_memory.h"

#include <stdlib.h>

#include "memory_map.h"
#include "sim/base/diag.h"

_Static_assert(TMEM_PAGE_BYTES == ISA_ELEMENT_BYTES, "a page is one element's worth of addresses");
_Static_assert((1u << TMEM_PAGE_SHIFT) == TMEM_PAGE_BYTES, "page shift");
_Static_assert(ISA_MEMORY_BASE % TMEM_PAGE_BYTES == 0, "the fast paths rely on a page-aligned base");

/* Bytes of address space covered by one interleaved pair of elements. */
#define PAIR_BYTES (2u * ISA_ELEMENT_BYTES)

void tmem_init(tile_memory *m, uint32_t size_bytes)
{
    ALWAYS(size_bytes > 0 && size_bytes % TMEM_PAGE_BYTES == 0);
    ALWAYS(size_bytes / TMEM_PAGE_BYTES <= TMEM_MAX_PAGES);
    memset(m, 0, sizeof *m);
    m->base = ISA_MEMORY_BASE;
    m->size_bytes = size_bytes;
    uint32_t end = m->base + size_bytes;
    /* A memory that ends before 0x80000 has no interleaved region. */
    m->region1_base = end > ISA_REGION1_BASE ? ISA_REGION1_BASE : end;
}

void tmem_free(tile_memory *m)
{
    for (unsigned i = 0; i < TMEM_MAX_PAGES; i++) {
        free(m->page[i]);
        m->page[i] = NULL;
    }
    m->pages_allocated = 0;
}

uint8_t *tmem_page_for_write(tile_memory *m, uint32_t page)
{
    ALWAYS(page < m->size_bytes / TMEM_PAGE_BYTES);
    if (!m->page[page]) {
        m->page[page] = calloc(1, TMEM_PAGE_BYTES);
        if (!m->page[page])
            return NULL;
        m->pages_allocated++;
    }
    return m->page[page];
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
        memset(buf, 0, bytes);
    return TMEM_OK;
}

enum tmem_status tmem_store(tile_memory *m, uint32_t addr, unsigned bytes, const void *buf)
{
    enum tmem_status s = check_access(m, addr, bytes, true);
    if (s != TMEM_OK)
        return s;
    uint32_t off = addr - m->base;
    uint8_t *p = tmem_page_for_write(m, off >> TMEM_PAGE_SHIFT);
    if (!p)
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
        if (m->page[pg] || !all_zero(s, chunk)) {
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
        const uint8_t *p = m->page[off >> TMEM_PAGE_SHIFT];
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
