/*
 * executable.c — build, write and read the ipusim executable (ELF64, see
 * executable.h for the layout).
 *
 * In memory, sections are kept sorted by (tile, address); that makes the
 * overlap check of exe_add_section a binary search when a builder adds
 * sections in address order (the usual case), and gives written files a
 * deterministic section order.
 *
 * Sections of ipusim's own, all little-endian with fixed-width fields:
 *
 *   .ipusim.tiles    records of 8 bytes:  u32 tile, u32 supervisor_entry
 *   .ipusim.files    records of 4 bytes:  u32 offset of the file name in
 *                    .ipusim.filestr; record k is file index k
 *   .ipusim.filestr  SHT_STRTAB, NUL-terminated source file names
 *   .ipusim.lines    records of 16 bytes: u32 tile, u32 addr, u32 line,
 *                    u32 file (an index into .ipusim.files)
 *   .ipusim.bsp, .ipusim.tensors, .ipusim.machine, .ipusim.model,
 *   .ipusim.ops  opaque blobs
 *
 * Each of them is written only when non-empty; a missing one reads as
 * empty.  Symbols: st_value is the tile-local address (also in ET_REL
 * objects), st_shndx the section the address lies in (a label at the very
 * end of a section belongs to it), locals before globals as ELF requires.
 * With SHN_LORESERVE or more sections, .symtab_shndx carries the section
 * indices (ELF extended numbering); .shstrtab is section 1 so e_shstrndx
 * never needs the escape.
 *
 * Reading checks the ELF header, the section header table and every
 * section's place in the file on the raw bytes before libelf sees them, so
 * that a damaged or hostile file gives a precise message and never reaches
 * a path libelf might mishandle.  Unknown sections without SHF_ALLOC are
 * ignored (room for additions that old readers may skip).
 */
#include "executable.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "exe_internal.h"
#include "exe_store.h"
#include "isa/isa.h"
#include "sim/base/fileio.h"

/* ---------------------------------------------------------------- helpers */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Arrays grow without a capacity field: an array of n elements always has
 * room for cap_for(n), so it must grow exactly when n == cap_for(n). */
static size_t cap_for(size_t n)
{
    if (n == 0)
        return 0;
    size_t c = 8;
    while (c < n)
        c *= 2;
    return c;
}

bool exe_reserve_one(void **arr, size_t n, size_t elem_bytes)
{
    if (n != cap_for(n))
        return true;
    size_t cap = n ? 2 * n : 8;
    void *p = realloc(*arr, cap * elem_bytes);
    if (!p)
        return false;
    *arr = p;
    return true;
}


static int cmp_key(uint32_t tile_a, uint32_t addr_a, uint32_t tile_b, uint32_t addr_b)
{
    if (tile_a != tile_b)
        return tile_a < tile_b ? -1 : 1;
    if (addr_a != addr_b)
        return addr_a < addr_b ? -1 : 1;
    return 0;
}

/* Index of the first section whose (tile, addr) is greater than the key. */
static size_t upper_bound(const ipu_exe *e, uint32_t tile, uint32_t addr)
{
    size_t lo = 0, hi = e->n_sections;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(e->sections[mid].tile, e->sections[mid].addr, tile, addr) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The section holding (tile, addr), or -1.  With at_end, an address just
 * past a section's last byte counts as in it (an end label). */
long exe_find_section(const ipu_exe *e, uint32_t tile, uint32_t addr, bool at_end)
{
    long end_match = -1;
    for (size_t i = upper_bound(e, tile, addr); i-- > 0;) {
        const exe_section *s = &e->sections[i];
        if (s->tile != tile)
            break;
        uint64_t end = (uint64_t)s->addr + s->size;
        if (s->size == 0) {
            if (at_end && s->addr == addr && end_match < 0)
                end_match = (long)i;
            continue;
        }
        /* Non-empty sections on one tile do not overlap, so the nearest
         * one at or below addr is the only one that can hold it. */
        if (addr < end)
            return (long)i;
        if (at_end && addr == end)
            return (long)i;
        break;
    }
    return end_match;
}

/* Overlap of [addr, addr + size) with the non-empty neighbours of
 * position pos in the sorted array; the clashing section or -1. */
static long overlap_at(const ipu_exe *e, size_t pos, uint32_t tile, uint32_t addr, uint32_t size)
{
    if (size == 0)
        return -1;
    uint64_t end = (uint64_t)addr + size;
    for (size_t i = pos; i-- > 0;) {
        const exe_section *s = &e->sections[i];
        if (s->tile != tile)
            break;
        if (s->size == 0)
            continue;
        if ((uint64_t)s->addr + s->size > addr)
            return (long)i;
        break;
    }
    for (size_t i = pos; i < e->n_sections; i++) {
        const exe_section *s = &e->sections[i];
        if (s->tile != tile)
            break;
        if (s->size == 0)
            continue;
        if (s->addr < end)
            return (long)i;
        break;
    }
    return -1;
}

/* Where a section may lie; NULL if fine, else what is wrong. */
static const char *placement_problem(uint32_t addr, uint32_t size, uint32_t flags)
{
    uint64_t end = (uint64_t)addr + size;
    if (addr < ISA_MEMORY_BASE || end > ISA_MEMORY_END)
        return "is outside tile memory [0x4c000, 0xe8000)";
    /* Region 0 is the only executable region (ISA2 §2.8.4). */
    if ((flags & EXE_SEC_EXEC) && end > ISA_REGION1_BASE)
        return "is code outside the executable region [0x4c000, 0x80000)";
    return NULL;
}

/* ---------------------------------------------------------------- builders */

ipu_exe *exe_new(void)
{
    return calloc(1, sizeof(ipu_exe));
}

void exe_free(ipu_exe *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n_sections; i++)
        free(e->sections[i].name);
    exe_store_free(e->store);      /* section bytes and symbol names */
    free(e->replicas.relocs);
    for (size_t i = 0; i < e->n_files; i++)
        free(e->files[i]);
    free(e->sections);
    free(e->symbols);
    free(e->lines);
    free(e->files);
    free(e->tiles);
    free(e->bsp.bytes);
    free(e->tensors.bytes);
    free(e->machine.bytes);
    free(e->model.bytes);
    free(e->ops.bytes);
    free(e);
}

/* A section with bytes already stored (NULL for none) at position pos of
 * the sorted array; false when the host is out of memory. */
static bool insert_section(ipu_exe *e, size_t pos, uint32_t tile, const char *name, uint32_t addr,
                           const uint8_t *bytes, uint32_t size, uint32_t flags)
{
    exe_section s = {.tile = tile, .addr = addr, .size = size, .flags = flags, .bytes = (uint8_t *)bytes};
    if (!(s.name = dup_str(name)))
        return false;
    if (!exe_reserve_one((void **)&e->sections, e->n_sections, sizeof *e->sections)) {
        free(s.name);
        return false;
    }
    memmove(&e->sections[pos + 1], &e->sections[pos], (e->n_sections - pos) * sizeof *e->sections);
    e->sections[pos] = s;
    e->n_sections++;
    return true;
}

bool exe_add_section(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr,
                     const void *bytes, uint32_t size, uint32_t flags,
                     char *err, size_t err_size)
{
    const char *bad = placement_problem(addr, size, flags);
    if (bad) {
        snprintf(err, err_size, "section %s@%u [0x%x, 0x%llx) %s", name, tile, addr,
                 (unsigned long long)addr + size, bad);
        return false;
    }
    size_t pos = upper_bound(e, tile, addr);
    long clash = overlap_at(e, pos, tile, addr, size);
    if (clash >= 0) {
        const exe_section *c = &e->sections[clash];
        snprintf(err, err_size, "section %s@%u [0x%x, 0x%llx) overlaps section %s@%u [0x%x, 0x%llx)",
                 name, tile, addr, (unsigned long long)addr + size, c->name, c->tile, c->addr,
                 (unsigned long long)c->addr + c->size);
        return false;
    }
    const uint8_t *stored = NULL;
    if (!(flags & EXE_SEC_NOBITS) && size && (e->store || (e->store = exe_store_new())))
        stored = exe_store_intern(e->store, bytes, size);
    if (((flags & EXE_SEC_NOBITS) || !size || stored) && insert_section(e, pos, tile, name, addr, stored, size, flags))
        return true;
    snprintf(err, err_size, "section %s@%u: out of memory", name, tile);
    return false;
}

bool exe_add_section_stored(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr, const uint8_t *bytes,
                            uint32_t size, uint32_t flags)
{
    size_t pos = upper_bound(e, tile, addr);
    return overlap_at(e, pos, tile, addr, size) < 0 && insert_section(e, pos, tile, name, addr, bytes, size, flags);
}

bool exe_add_symbol(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr,
                    uint32_t size, enum exe_symbol_kind kind, bool global)
{
    /* names are stored once (a tensor's name repeats on every tile) */
    char *n = (e->store || (e->store = exe_store_new())) ? (char *)exe_store_intern(e->store, name, strlen(name) + 1)
                                                         : NULL;
    if (!n || !exe_reserve_one((void **)&e->symbols, e->n_symbols, sizeof *e->symbols))
        return false;
    e->symbols[e->n_symbols++] = (exe_symbol){
        .name = n, .tile = tile, .addr = addr, .size = size, .kind = (uint8_t)kind, .global = global};
    return true;
}

uint32_t exe_add_file(ipu_exe *e, const char *path)
{
    for (size_t i = 0; i < e->n_files; i++)
        if (strcmp(e->files[i], path) == 0)
            return (uint32_t)i;
    char *p = dup_str(path);
    if (!p || e->n_files >= UINT32_MAX - 1 ||
        !exe_reserve_one((void **)&e->files, e->n_files, sizeof *e->files)) {
        free(p);
        return UINT32_MAX;
    }
    e->files[e->n_files] = p;
    return (uint32_t)e->n_files++;
}

bool exe_add_line(ipu_exe *e, uint32_t tile, uint32_t addr, uint32_t file, uint32_t line)
{
    if (file >= e->n_files)
        return false;
    if (!exe_reserve_one((void **)&e->lines, e->n_lines, sizeof *e->lines))
        return false;
    e->lines[e->n_lines++] = (exe_line){.tile = tile, .addr = addr, .line = line, .file = file};
    return true;
}

/* The first tile record at or after tile (records are kept by tile). */
static size_t tile_lower_bound(const ipu_exe *e, uint32_t tile)
{
    size_t lo = 0, hi = e->n_tiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->tiles[mid].tile < tile)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool exe_set_entry(ipu_exe *e, uint32_t tile, uint32_t supervisor_entry)
{
    size_t pos = tile_lower_bound(e, tile);
    if (pos < e->n_tiles && e->tiles[pos].tile == tile) {
        e->tiles[pos].supervisor_entry = supervisor_entry;
        return true;
    }
    if (!exe_reserve_one((void **)&e->tiles, e->n_tiles, sizeof *e->tiles))
        return false;
    memmove(&e->tiles[pos + 1], &e->tiles[pos], (e->n_tiles - pos) * sizeof *e->tiles);
    e->tiles[pos] = (exe_tile_record){.tile = tile, .supervisor_entry = supervisor_entry};
    e->n_tiles++;
    return true;
}

bool exe_append_entry(ipu_exe *e, uint32_t tile, uint32_t supervisor_entry)
{
    if (e->n_tiles && e->tiles[e->n_tiles - 1].tile >= tile)
        return exe_set_entry(e, tile, supervisor_entry);
    if (!exe_reserve_one((void **)&e->tiles, e->n_tiles, sizeof *e->tiles))
        return false;
    e->tiles[e->n_tiles++] = (exe_tile_record){.tile = tile, .supervisor_entry = supervisor_entry};
    return true;
}

bool exe_set_blob(exe_blob *b, const void *bytes, size_t size)
{
    uint8_t *p = NULL;
    if (size) {
        p = malloc(size);
        if (!p)
            return false;
        memcpy(p, bytes, size);
    }
    free(b->bytes);
    b->bytes = p;
    b->size = size;
    return true;
}

uint64_t exe_distinct_bytes(const ipu_exe *e)
{
    return exe_store_bytes(e->store);
}

uint64_t exe_section_bytes(const ipu_exe *e)
{
    uint64_t n = 0;
    for (size_t i = 0; i < e->n_sections; i++)
        if (e->sections[i].bytes)
            n += e->sections[i].size;
    return n;
}

/* ---------------------------------------------------------------- lookups */

const exe_symbol *exe_find_symbol(const ipu_exe *e, const char *name)
{
    const exe_symbol *local = NULL;
    for (size_t i = 0; i < e->n_symbols; i++)
        if (strcmp(e->symbols[i].name, name) == 0) {
            if (e->symbols[i].global)
                return &e->symbols[i];
            if (!local)
                local = &e->symbols[i];
        }
    return local;
}

bool exe_symbol_on_tile(const ipu_exe *e, const exe_symbol *s, uint32_t tile)
{
    return s->tile == tile || (s->tile == EXE_EVERY_TILE && tile != EXE_EVERY_TILE && exe_tile(e, tile));
}

const exe_symbol *exe_symbol_at(const ipu_exe *e, uint32_t tile, uint32_t addr)
{
    long sec = exe_find_section(e, tile, addr, false);
    const exe_symbol *best = NULL;
    for (size_t i = 0; i < e->n_symbols; i++) {
        const exe_symbol *s = &e->symbols[i];
        /* a symbol of every tile counts where the tile has a section there */
        if ((s->tile != tile && (s->tile != EXE_EVERY_TILE || sec < 0)) || s->addr > addr)
            continue;
        if (s->size) {
            if (addr - s->addr >= s->size)
                continue;
        } else {
            /* A label without a size covers up to the next one in its
             * section. */
            if (sec < 0)
                continue;
            const exe_section *x = &e->sections[sec];
            if (s->addr < x->addr)
                continue;
        }
        if (!best) {
            best = s;
            continue;
        }
        bool code = s->kind == EXE_SYM_CODE, best_code = best->kind == EXE_SYM_CODE;
        if (code != best_code) {
            if (code)
                best = s;
        } else if (s->addr > best->addr) {
            best = s;
        }
    }
    return best;
}

bool exe_line_at(const ipu_exe *e, uint32_t tile, uint32_t addr,
                 const char **file, uint32_t *line)
{
    long sec = exe_find_section(e, tile, addr, false);
    if (sec < 0)
        return false;
    uint32_t lo = e->sections[sec].addr;
    const exe_line *best = NULL;
    for (size_t i = 0; i < e->n_lines; i++) {
        const exe_line *l = &e->lines[i];
        if (l->tile != tile || l->addr < lo || l->addr > addr)
            continue;
        if (!best || l->addr >= best->addr)
            best = l;
    }
    if (!best || best->file >= e->n_files)
        return false;
    if (file)
        *file = e->files[best->file];
    if (line)
        *line = best->line;
    return true;
}

const exe_tile_record *exe_tile(const ipu_exe *e, uint32_t tile)
{
    size_t pos = tile_lower_bound(e, tile);
    return pos < e->n_tiles && e->tiles[pos].tile == tile ? &e->tiles[pos] : NULL;
}

/* ---------------------------------------------------------------- reading */

typedef struct reader {
    const char *name;
    char *err;
    size_t err_size;
    const uint8_t *img;           /* the file image */
    size_t size;
    size_t shnum;
    Elf64_Shdr *sh;               /* raw section headers, checked */
    const char *shstr;            /* section name table */
    size_t shstr_size;
} reader;

static bool fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(reader *r, const char *fmt, ...)
{
    int n = snprintf(r->err, r->err_size, "%s: ", r->name);
    if (n >= 0 && (size_t)n < r->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static const char *sec_name(const reader *r, size_t i)
{
    return r->shstr + r->sh[i].sh_name;
}

/* The ELF header and the section header table, on the raw bytes. */
static bool check_headers(reader *r)
{
    const uint8_t *p = r->img;
    if (r->size == 0)
        return fail(r, "empty file");
    if (r->size < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0)
        return fail(r, "not an ELF file (no ELF magic number)");
    if (r->size < EI_NIDENT)
        return fail(r, "truncated: the ELF identification needs %d bytes but the file has %zu bytes",
                    EI_NIDENT, r->size);
    if (p[EI_CLASS] == ELFCLASS32)
        return fail(r, "ELF32 file; ipusim executables are ELF64");
    if (p[EI_CLASS] != ELFCLASS64)
        return fail(r, "bad ELF class %u", p[EI_CLASS]);
    if (p[EI_DATA] == ELFDATA2MSB)
        return fail(r, "big-endian ELF file; ipusim executables are little-endian");
    if (p[EI_DATA] != ELFDATA2LSB)
        return fail(r, "bad ELF data encoding %u", p[EI_DATA]);
    if (p[EI_VERSION] != EV_CURRENT)
        return fail(r, "unsupported ELF version %u", p[EI_VERSION]);
    Elf64_Ehdr eh;
    if (r->size < sizeof eh)
        return fail(r, "truncated: the ELF header needs %zu bytes but the file has %zu bytes",
                    sizeof eh, r->size);
    memcpy(&eh, p, sizeof eh);
    if (eh.e_machine != EXE_EM_IPUSIM)
        return fail(r, "not an ipusim executable (e_machine %u, expected 0x%x)",
                    eh.e_machine, EXE_EM_IPUSIM);
    if (eh.e_version != EV_CURRENT)
        return fail(r, "unsupported ELF version %u", eh.e_version);
    if (eh.e_flags != EXE_FORMAT_VERSION)
        return fail(r, "executable format version %u, this ipusim reads version %u",
                    eh.e_flags, EXE_FORMAT_VERSION);
    if (eh.e_type != ET_EXEC && eh.e_type != ET_REL)
        return fail(r, "ELF type %u is neither an executable nor an object", eh.e_type);
    if (eh.e_shoff == 0)
        return fail(r, "no section header table");
    if (eh.e_shentsize != sizeof(Elf64_Shdr))
        return fail(r, "section header size %u, expected %zu", eh.e_shentsize, sizeof(Elf64_Shdr));
    if (eh.e_shoff > r->size || r->size - eh.e_shoff < sizeof(Elf64_Shdr))
        return fail(r, "truncated: the section header table at byte %llu is past the end of the "
                    "file (%zu bytes)", (unsigned long long)eh.e_shoff, r->size);
    Elf64_Shdr sh0;
    memcpy(&sh0, p + eh.e_shoff, sizeof sh0);
    /* Extended numbering: the real counts live in section 0. */
    uint64_t shnum = eh.e_shnum ? eh.e_shnum : sh0.sh_size;
    uint64_t shstrndx = eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh.e_shstrndx;
    if (shnum == 0)
        return fail(r, "no sections");
    uint64_t table_end = eh.e_shoff + shnum * sizeof(Elf64_Shdr);
    if (shnum > r->size / sizeof(Elf64_Shdr) || table_end > r->size)
        return fail(r, "truncated: the section header table ends at byte %llu but the file has "
                    "%zu bytes", (unsigned long long)(shnum > r->size ? UINT64_MAX : table_end),
                    r->size);
    r->shnum = (size_t)shnum;
    r->sh = malloc(r->shnum * sizeof *r->sh);
    if (!r->sh)
        return fail(r, "out of memory");
    memcpy(r->sh, p + eh.e_shoff, r->shnum * sizeof *r->sh);

    if (shstrndx == SHN_UNDEF || shstrndx >= r->shnum)
        return fail(r, "section name table index %llu is out of range (%zu sections)",
                    (unsigned long long)shstrndx, r->shnum);
    const Elf64_Shdr *ss = &r->sh[shstrndx];
    if (ss->sh_type != SHT_STRTAB)
        return fail(r, "section name table (section %llu) is not a string table",
                    (unsigned long long)shstrndx);
    if (ss->sh_offset > r->size || ss->sh_size > r->size - ss->sh_offset)
        return fail(r, "truncated: the section name table ends at byte %llu but the file has "
                    "%zu bytes", (unsigned long long)ss->sh_offset + ss->sh_size, r->size);
    if (ss->sh_size == 0 || p[ss->sh_offset + ss->sh_size - 1] != 0)
        return fail(r, "the section name table does not end with a NUL byte");
    r->shstr = (const char *)p + ss->sh_offset;
    r->shstr_size = (size_t)ss->sh_size;

    for (size_t i = 1; i < r->shnum; i++) {
        const Elf64_Shdr *s = &r->sh[i];
        if (s->sh_name >= r->shstr_size)
            return fail(r, "section %zu: name offset %u is beyond the section name table "
                        "(%zu bytes)", i, s->sh_name, r->shstr_size);
        if (s->sh_type == SHT_NOBITS || s->sh_type == SHT_NULL)
            continue;
        if (s->sh_offset > r->size || s->sh_size > r->size - s->sh_offset) {
            unsigned long long end = s->sh_offset + s->sh_size;
            if (end < s->sh_offset)
                end = ULLONG_MAX;
            return fail(r, "truncated: section %s ends at byte %llu but the file has %zu bytes",
                        sec_name(r, i), end, r->size);
        }
    }
    return true;
}

/* "<name>@<tile>" with a decimal tile number. */
static bool parse_tile_name(reader *r, size_t i, char **name, uint32_t *tile)
{
    const char *full = sec_name(r, i);
    const char *at = strrchr(full, '@');
    if (!at)
        return fail(r, "section %s (number %zu) is loadable but its name has no @tile suffix",
                    full, i);
    const char *d = at + 1;
    uint64_t v = 0;
    size_t nd = 0;
    for (; d[nd]; nd++) {
        if (d[nd] < '0' || d[nd] > '9' || nd >= 10)
            return fail(r, "section %s: bad tile number \"%s\"", full, at + 1);
        v = v * 10 + (uint64_t)(d[nd] - '0');
    }
    if (nd == 0 || v > UINT32_MAX)
        return fail(r, "section %s: bad tile number \"%s\"", full, at + 1);
    size_t n = (size_t)(at - full);
    *name = malloc(n + 1);
    if (!*name)
        return fail(r, "out of memory");
    memcpy(*name, full, n);
    (*name)[n] = 0;
    *tile = (uint32_t)v;
    return true;
}

/* A section with the ELF index it came from, for sorting. */
typedef struct keyed_section {
    exe_section s;
    size_t ndx;
} keyed_section;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_section *x = a, *y = b;
    int c = cmp_key(x->s.tile, x->s.addr, y->s.tile, y->s.addr);
    if (c)
        return c;
    return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

/* Put the sections in (tile, address) order, update tile_sec (ELF index ->
 * position) to match, and check that no two non-empty sections of one tile
 * overlap: in sorted order each must start at or after the end of the
 * previous non-empty one. */
static bool sort_sections(reader *r, ipu_exe *e, long *tile_sec)
{
    size_t n = e->n_sections;
    if (n == 0)
        return true;
    keyed_section *k = malloc(n * sizeof *k);
    if (!k)
        return fail(r, "out of memory");
    for (size_t i = 0, j = 0; i < r->shnum; i++)
        if (tile_sec[i] >= 0)
            k[j++] = (keyed_section){e->sections[tile_sec[i]], i};
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t j = 0; j < n; j++) {
        e->sections[j] = k[j].s;
        tile_sec[k[j].ndx] = (long)j;
    }
    free(k);
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const exe_section *s = &e->sections[i];
        if (s->size == 0)
            continue;
        if (last != SIZE_MAX && e->sections[last].tile == s->tile &&
            (uint64_t)e->sections[last].addr + e->sections[last].size > s->addr) {
            const exe_section *p = &e->sections[last];
            return fail(r, "sections %s@%u [0x%x, 0x%llx) and %s@%u [0x%x, 0x%llx) overlap",
                        p->name, p->tile, p->addr, (unsigned long long)p->addr + p->size,
                        s->name, s->tile, s->addr, (unsigned long long)s->addr + s->size);
        }
        last = i;
    }
    return true;
}

/* Section data through libelf; NULL (and an error) if libelf disagrees
 * with the raw checks. */
static Elf_Data *scn_data(reader *r, Elf *elf, size_t i)
{
    Elf_Scn *scn = elf_getscn(elf, i);
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    if (!d || d->d_size != r->sh[i].sh_size || (d->d_size && !d->d_buf)) {
        fail(r, "cannot read section %s: %s", sec_name(r, i),
             d ? "size mismatch" : elf_errmsg(-1));
        return NULL;
    }
    return d;
}

/* Indices of the sections of ipusim's own and the symbol tables. */
typedef struct special {
    size_t tiles, files, filestr, lines, bsp, tensors, machine, model, ops, replicas, symtab, xndx;
} special;

static bool note_special(reader *r, size_t *slot, size_t i)
{
    if (*slot)
        return fail(r, "more than one section %s", sec_name(r, i));
    *slot = i;
    return true;
}

static bool read_records(reader *r, Elf *elf, size_t i, size_t rec_bytes,
                         const uint8_t **data, size_t *n)
{
    *data = NULL;
    *n = 0;
    if (!i)
        return true;
    if (r->sh[i].sh_size % rec_bytes)
        return fail(r, "%s: size %llu is not a multiple of the %zu-byte record", sec_name(r, i),
                    (unsigned long long)r->sh[i].sh_size, rec_bytes);
    Elf_Data *d = scn_data(r, elf, i);
    if (!d)
        return false;
    *data = d->d_buf;
    *n = d->d_size / rec_bytes;
    return true;
}

static bool read_blob(reader *r, Elf *elf, size_t i, exe_blob *b)
{
    if (!i || r->sh[i].sh_type == SHT_NOBITS)
        return true;
    Elf_Data *d = scn_data(r, elf, i);
    if (!d)
        return false;
    if (!exe_set_blob(b, d->d_buf, d->d_size))
        return fail(r, "out of memory");
    return true;
}

static bool alloc_array(reader *r, void **arr, size_t n, size_t elem_bytes)
{
    if (n == 0)
        return true;
    *arr = calloc(cap_for(n), elem_bytes);
    if (!*arr)
        return fail(r, "out of memory");
    return true;
}

static bool read_symbols(reader *r, Elf *elf, ipu_exe *e, const special *sp, const long *tile_sec)
{
    size_t si = sp->symtab;
    const Elf64_Shdr *sh = &r->sh[si];
    if (!e->store && !(e->store = exe_store_new()))
        return fail(r, "out of memory");
    if (sh->sh_entsize != sizeof(Elf64_Sym))
        return fail(r, "symbol table entry size %llu, expected %zu",
                    (unsigned long long)sh->sh_entsize, sizeof(Elf64_Sym));
    if (sh->sh_size % sizeof(Elf64_Sym))
        return fail(r, "symbol table size %llu is not a multiple of %zu",
                    (unsigned long long)sh->sh_size, sizeof(Elf64_Sym));
    if (sh->sh_link == 0 || sh->sh_link >= r->shnum || r->sh[sh->sh_link].sh_type != SHT_STRTAB)
        return fail(r, "symbol table links to section %u, which is not a string table",
                    sh->sh_link);
    size_t nsym = (size_t)(sh->sh_size / sizeof(Elf64_Sym));
    Elf_Data *sd = scn_data(r, elf, si);
    Elf_Data *strd = sd ? scn_data(r, elf, sh->sh_link) : NULL;
    if (!strd)
        return false;
    const char *str = strd->d_buf;
    size_t str_size = strd->d_size;
    if (str_size == 0 || str[str_size - 1] != 0)
        return fail(r, "the symbol string table does not end with a NUL byte");
    const uint8_t *xndx = NULL;
    if (sp->xndx) {
        if (r->sh[sp->xndx].sh_size != (uint64_t)nsym * 4)
            return fail(r, "extended section index table has %llu bytes, expected %zu",
                        (unsigned long long)r->sh[sp->xndx].sh_size, nsym * 4);
        Elf_Scn *xs = elf_getscn(elf, sp->xndx);
        /* Raw bytes: the table is little-endian u32s, as is the host. */
        Elf_Data *xd = xs ? elf_rawdata(xs, NULL) : NULL;
        if (!xd || xd->d_size != nsym * 4)
            return fail(r, "cannot read the extended section index table");
        xndx = xd->d_buf;
    }
    if (!alloc_array(r, (void **)&e->symbols, nsym, sizeof *e->symbols))
        return false;
    for (size_t k = 1; k < nsym; k++) {
        GElf_Sym y;
        if (!gelf_getsym(sd, (int)k, &y))
            return fail(r, "cannot read symbol %zu: %s", k, elf_errmsg(-1));
        if (y.st_name >= str_size)
            return fail(r, "symbol %zu: name offset %u is beyond the string table (%zu bytes)",
                        k, y.st_name, str_size);
        const char *nm = str + y.st_name;
        unsigned type = GELF_ST_TYPE(y.st_info), bind = GELF_ST_BIND(y.st_info);
        if (type == STT_SECTION || type == STT_FILE)
            continue;
        size_t ndx = y.st_shndx;
        if (y.st_shndx == SHN_ABS) {
            /* on every tile with code, at the same address (SHN_ABS itself,
             * not an extended index that happens to equal it) */
            if (y.st_value < ISA_MEMORY_BASE || y.st_value > ISA_MEMORY_END || y.st_size > ISA_MEMORY_END - y.st_value)
                return fail(r, "symbol %s [0x%llx, 0x%llx) (on every tile) lies outside tile memory", nm,
                            (unsigned long long)y.st_value, (unsigned long long)(y.st_value + y.st_size));
            char *every = (char *)exe_store_intern(e->store, nm, strlen(nm) + 1);
            if (!every)
                return fail(r, "out of memory");
            e->symbols[e->n_symbols++] = (exe_symbol){
                .name = every, .tile = EXE_EVERY_TILE, .addr = (uint32_t)y.st_value, .size = (uint32_t)y.st_size,
                .kind = type == STT_FUNC ? EXE_SYM_CODE : type == STT_OBJECT ? EXE_SYM_DATA : EXE_SYM_OTHER,
                .global = bind != STB_LOCAL};
            continue;
        }
        if (ndx == SHN_XINDEX) {
            if (!xndx)
                return fail(r, "symbol %s uses an extended section index but there is no "
                            "extended index table", nm);
            ndx = exe_get32(xndx + 4 * k);
        }
        if (ndx == SHN_UNDEF || ndx >= r->shnum || tile_sec[ndx] < 0)
            return fail(r, "symbol %s refers to section %zu, which is not a tile section", nm, ndx);
        const exe_section *s = &e->sections[tile_sec[ndx]];
        if (y.st_value < s->addr || y.st_value > (uint64_t)s->addr + s->size ||
            y.st_size > (uint64_t)s->addr + s->size - y.st_value)
            return fail(r, "symbol %s [0x%llx, 0x%llx) lies outside its section %s",
                        nm, (unsigned long long)y.st_value,
                        (unsigned long long)(y.st_value + y.st_size), sec_name(r, ndx));
        char *copy = (char *)exe_store_intern(e->store, nm, strlen(nm) + 1);
        if (!copy)
            return fail(r, "out of memory");
        e->symbols[e->n_symbols++] = (exe_symbol){
            .name = copy, .tile = s->tile, .addr = (uint32_t)y.st_value,
            .size = (uint32_t)y.st_size,
            .kind = type == STT_FUNC ? EXE_SYM_CODE : type == STT_OBJECT ? EXE_SYM_DATA : EXE_SYM_OTHER,
            .global = bind != STB_LOCAL};
    }
    return true;
}

static bool read_lines(reader *r, Elf *elf, ipu_exe *e, const special *sp)
{
    const uint8_t *rec;
    size_t n;
    if (!read_records(r, elf, sp->files, FILES_RECORD_BYTES, &rec, &n))
        return false;
    if (n) {
        if (!sp->filestr)
            return fail(r, "%s without %s", SEC_FILES, SEC_FILESTR);
        Elf_Data *d = scn_data(r, elf, sp->filestr);
        if (!d)
            return false;
        const char *str = d->d_buf;
        size_t str_size = d->d_size;
        if (str_size == 0 || str[str_size - 1] != 0)
            return fail(r, "%s does not end with a NUL byte", SEC_FILESTR);
        if (!alloc_array(r, (void **)&e->files, n, sizeof *e->files))
            return false;
        for (size_t i = 0; i < n; i++) {
            uint32_t off = exe_get32(rec + i * FILES_RECORD_BYTES);
            if (off >= str_size)
                return fail(r, "%s: record %zu: name offset %u is beyond %s (%zu bytes)",
                            SEC_FILES, i, off, SEC_FILESTR, str_size);
            if (!(e->files[i] = dup_str(str + off)))
                return fail(r, "out of memory");
            e->n_files++;
        }
    }
    if (!read_records(r, elf, sp->lines, LINES_RECORD_BYTES, &rec, &n))
        return false;
    if (!alloc_array(r, (void **)&e->lines, n, sizeof *e->lines))
        return false;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = rec + i * LINES_RECORD_BYTES;
        exe_line l = {.tile = exe_get32(p), .addr = exe_get32(p + 4), .line = exe_get32(p + 8),
                      .file = exe_get32(p + 12)};
        if (l.file >= e->n_files)
            return fail(r, "%s: record %zu names file %u but there are %zu files",
                        SEC_LINES, i, l.file, e->n_files);
        e->lines[e->n_lines++] = l;
    }
    return true;
}

static int cmp_tile_record(const void *a, const void *b)
{
    uint32_t x = ((const exe_tile_record *)a)->tile, y = ((const exe_tile_record *)b)->tile;
    return (x > y) - (x < y);
}

static bool read_tiles(reader *r, Elf *elf, ipu_exe *e, const special *sp)
{
    const uint8_t *rec;
    size_t n;
    if (!read_records(r, elf, sp->tiles, TILES_RECORD_BYTES, &rec, &n))
        return false;
    if (!alloc_array(r, (void **)&e->tiles, n, sizeof *e->tiles))
        return false;
    for (size_t i = 0; i < n; i++) {
        exe_tile_record t = {.tile = exe_get32(rec + i * TILES_RECORD_BYTES),
                             .supervisor_entry = exe_get32(rec + i * TILES_RECORD_BYTES + 4)};
        if (t.supervisor_entry < ISA_MEMORY_BASE || t.supervisor_entry >= ISA_REGION1_BASE ||
            (t.supervisor_entry & 3u))
            return fail(r, "%s: tile %u: supervisor entry 0x%x is not a word in the executable "
                        "region [0x4c000, 0x80000)", SEC_TILES, t.tile, t.supervisor_entry);
        e->tiles[e->n_tiles++] = t;
    }
    /* Kept by tile (exe_tile searches them), each tile at most once. */
    if (n > 1)
        qsort(e->tiles, n, sizeof *e->tiles, cmp_tile_record);
    for (size_t i = 1; i < n; i++)
        if (e->tiles[i].tile == e->tiles[i - 1].tile)
            return fail(r, "%s: tile %u is listed twice", SEC_TILES, e->tiles[i].tile);
    return true;
}

/* The replicas' description, and the replicas made from replica 0. */
static bool read_replicas(reader *r, Elf *elf, ipu_exe *e, const special *sp)
{
    if (!sp->replicas || r->sh[sp->replicas].sh_type == SHT_NOBITS)
        return true;
    Elf_Data *d = scn_data(r, elf, sp->replicas);
    if (!d)
        return false;
    char why[256];
    for (size_t i = 0; i < e->n_sections; i++)
        if (e->sections[i].tile >= UINT32_MAX / 2)
            return fail(r, "section %s@%u of a replicated program is on no tile of replica 0", e->sections[i].name,
                        e->sections[i].tile);
    if (!exe_replicas_decode(e, d->d_buf, d->d_size, why, sizeof why))
        return fail(r, "%s", why);
    for (size_t i = 0; i < e->n_sections; i++)
        if (e->sections[i].tile >= e->replicas.tile_stride)
            return fail(r, "section %s@%u of a replicated program is on no tile of replica 0 (tiles 0-%u)",
                        e->sections[i].name, e->sections[i].tile, e->replicas.tile_stride - 1);
    for (size_t i = 0; i < e->n_tiles; i++)
        if (e->tiles[i].tile >= e->replicas.tile_stride)
            return fail(r, "%s: tile %u of a replicated program is on no tile of replica 0 (tiles 0-%u)", SEC_TILES,
                        e->tiles[i].tile, e->replicas.tile_stride - 1);
    if (!exe_expand_replicas(e, why, sizeof why))
        return fail(r, "%s", why);
    return true;
}

static bool read_elf(reader *r, Elf *elf, ipu_exe *e)
{
    size_t shnum = 0, shstrndx = 0;
    if (elf_kind(elf) != ELF_K_ELF || elf_getshdrnum(elf, &shnum) != 0 ||
        elf_getshdrstrndx(elf, &shstrndx) != 0)
        return fail(r, "cannot read ELF: %s", elf_errmsg(-1));
    if (shnum != r->shnum)
        return fail(r, "cannot read ELF: libelf sees %zu sections, expected %zu", shnum, r->shnum);
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh))
        return fail(r, "cannot read ELF: %s", elf_errmsg(-1));
    e->relocatable = eh.e_type == ET_REL;

    long *tile_sec = malloc(r->shnum * sizeof *tile_sec);
    if (!tile_sec)
        return fail(r, "out of memory");
    size_t n_tile = 0;
    special sp = {0};
    bool ok = true;
    for (size_t i = 0; i < r->shnum && ok; i++) {
        tile_sec[i] = -1;
        if (i == 0)
            continue;
        const Elf64_Shdr *s = &r->sh[i];
        const char *nm = sec_name(r, i);
        if (s->sh_flags & SHF_ALLOC) {
            n_tile++;
            continue;
        }
        if (s->sh_type == SHT_SYMTAB)
            ok = note_special(r, &sp.symtab, i);
        else if (s->sh_type == SHT_SYMTAB_SHNDX)
            ok = note_special(r, &sp.xndx, i);
        else if (!strcmp(nm, SEC_TILES))
            ok = note_special(r, &sp.tiles, i);
        else if (!strcmp(nm, SEC_FILES))
            ok = note_special(r, &sp.files, i);
        else if (!strcmp(nm, SEC_FILESTR))
            ok = note_special(r, &sp.filestr, i);
        else if (!strcmp(nm, SEC_LINES))
            ok = note_special(r, &sp.lines, i);
        else if (!strcmp(nm, SEC_BSP))
            ok = note_special(r, &sp.bsp, i);
        else if (!strcmp(nm, SEC_TENSORS))
            ok = note_special(r, &sp.tensors, i);
        else if (!strcmp(nm, SEC_MACHINE))
            ok = note_special(r, &sp.machine, i);
        else if (!strcmp(nm, SEC_MODEL))
            ok = note_special(r, &sp.model, i);
        else if (!strcmp(nm, SEC_OPS))
            ok = note_special(r, &sp.ops, i);
        else if (!strcmp(nm, SEC_REPLICAS))
            ok = note_special(r, &sp.replicas, i);
    }
    ok = ok && alloc_array(r, (void **)&e->sections, n_tile, sizeof *e->sections);
    for (size_t i = 1; i < r->shnum && ok; i++) {
        const Elf64_Shdr *s = &r->sh[i];
        if (!(s->sh_flags & SHF_ALLOC))
            continue;
        const char *nm = sec_name(r, i);
        if (s->sh_type != SHT_PROGBITS && s->sh_type != SHT_NOBITS) {
            ok = fail(r, "section %s: type %u is neither PROGBITS nor NOBITS", nm, s->sh_type);
            break;
        }
        exe_section x = {0};
        x.flags = (s->sh_flags & SHF_EXECINSTR ? EXE_SEC_EXEC : 0u) |
                  (s->sh_flags & SHF_WRITE ? EXE_SEC_WRITE : 0u) |
                  (s->sh_type == SHT_NOBITS ? EXE_SEC_NOBITS : 0u);
        if (s->sh_addr > UINT32_MAX || s->sh_size > UINT32_MAX ||
            placement_problem((uint32_t)s->sh_addr, (uint32_t)s->sh_size, x.flags)) {
            const char *why = s->sh_addr > UINT32_MAX || s->sh_size > UINT32_MAX
                ? "is outside tile memory [0x4c000, 0xe8000)"
                : placement_problem((uint32_t)s->sh_addr, (uint32_t)s->sh_size, x.flags);
            ok = fail(r, "section %s [0x%llx, 0x%llx) %s", nm, (unsigned long long)s->sh_addr,
                      (unsigned long long)(s->sh_addr + s->sh_size), why);
            break;
        }
        if (!(ok = parse_tile_name(r, i, &x.name, &x.tile)))
            break;
        x.addr = (uint32_t)s->sh_addr;
        x.size = (uint32_t)s->sh_size;
        if (s->sh_type == SHT_PROGBITS && x.size) {
            /* Sections at one place in the file share their bytes. */
            Elf_Data *d = scn_data(r, elf, i);
            if (d && (e->store || (e->store = exe_store_new())))
                x.bytes = exe_store_keyed(e->store, s->sh_offset, d->d_buf, x.size);
            if (!x.bytes) {
                free(x.name);
                ok = d ? fail(r, "out of memory") : false;
                break;
            }
        }
        tile_sec[i] = (long)e->n_sections;
        e->sections[e->n_sections++] = x;
    }
    ok = ok && sort_sections(r, e, tile_sec) && read_tiles(r, elf, e, &sp) &&
         read_lines(r, elf, e, &sp) && read_blob(r, elf, sp.bsp, &e->bsp) &&
         read_blob(r, elf, sp.tensors, &e->tensors) && read_blob(r, elf, sp.machine, &e->machine) &&
         read_blob(r, elf, sp.model, &e->model) && read_blob(r, elf, sp.ops, &e->ops) &&
         (!sp.symtab || read_symbols(r, elf, e, &sp, tile_sec)) && read_replicas(r, elf, e, &sp);
    free(tile_sec);
    return ok;
}

/* Read from a mutable image (libelf's elf_memory takes a char *). */
static ipu_exe *read_image(uint8_t *img, size_t size, const char *name, char *err, size_t err_size)
{
    reader r = {.name = name, .err = err, .err_size = err_size, .img = img, .size = size};
    ipu_exe *e = NULL;
    Elf *elf = NULL;
    if (!check_headers(&r))
        goto out;
    if (elf_version(EV_CURRENT) == EV_NONE) {
        fail(&r, "libelf is out of date");
        goto out;
    }
    elf = elf_memory((char *)img, size);
    if (!elf) {
        fail(&r, "cannot read ELF: %s", elf_errmsg(-1));
        goto out;
    }
    e = exe_new();
    if (!e) {
        fail(&r, "out of memory");
        goto out;
    }
    if (!read_elf(&r, elf, e)) {
        exe_free(e);
        e = NULL;
    }
out:
    if (elf)
        elf_end(elf);
    free(r.sh);
    return e;
}

ipu_exe *exe_read_memory(const void *image, size_t size, const char *name,
                         char *err, size_t err_size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        snprintf(err, err_size, "%s: out of memory", name);
        return NULL;
    }
    if (size)
        memcpy(copy, image, size);
    ipu_exe *e = read_image(copy, size, name, err, err_size);
    free(copy);
    return e;
}

ipu_exe *exe_read(const char *path, char *err, size_t err_size)
{
    /* Mapped: only the parts the headers point at are read. */
    file_image f;
    if (!file_image_open(&f, path, READ_LIMIT_EXECUTABLE, "an executable may have", READ_FIFO, err, err_size))
        return NULL;
    ipu_exe *e = read_image(f.data, f.size, path, err, err_size);
    file_image_close(&f);
    return e;
}

/* ---------------------------------------------------------------- summary */

/* The tiles and the machine blob of a checked image: only the headers, the
 * section names and the small record sections are touched. */
static bool summarise(reader *r, exe_summary *s)
{
    if (!check_headers(r))
        return false;
    uint32_t replicas = 0, stride = 0;
    for (size_t i = 1; i < r->shnum; i++) {
        const Elf64_Shdr *h = &r->sh[i];
        const char *nm = sec_name(r, i);
        if (h->sh_flags & SHF_ALLOC) {
            char *base;
            uint32_t tile;
            if (!parse_tile_name(r, i, &base, &tile))
                return false;
            free(base);
            if (!s->any_tile || tile > s->last_tile)
                s->last_tile = tile;
            s->any_tile = true;
        } else if (!strcmp(nm, SEC_TILES) && h->sh_type == SHT_PROGBITS) {
            if (h->sh_size % TILES_RECORD_BYTES)
                return fail(r, "%s: size %llu is not a multiple of the %u-byte record", nm,
                            (unsigned long long)h->sh_size, TILES_RECORD_BYTES);
            for (uint64_t k = 0; k < h->sh_size; k += TILES_RECORD_BYTES) {
                uint32_t tile = exe_get32(r->img + h->sh_offset + k);
                if (!s->any_tile || tile > s->last_tile)
                    s->last_tile = tile;
                s->any_tile = true;
            }
        } else if (!strcmp(nm, SEC_REPLICAS) && h->sh_type == SHT_PROGBITS) {
            if (h->sh_size < 12)
                return fail(r, "%s: truncated header", nm);
            if (exe_get32(r->img + h->sh_offset) != EXE_REPLICAS_FORMAT)
                return fail(r, "%s: not of this version's layout (compile the program again)", nm);
            replicas = exe_get32(r->img + h->sh_offset + 4);
            stride = exe_get32(r->img + h->sh_offset + 8);
        } else if (!strcmp(nm, SEC_MACHINE) && h->sh_type == SHT_PROGBITS) {
            if (s->machine.size)
                return fail(r, "more than one section %s", nm);
            if (!exe_set_blob(&s->machine, r->img + h->sh_offset, (size_t)h->sh_size))
                return fail(r, "out of memory");
        }
    }
    /* the last replica's tiles (exe_read checks the record in full) */
    if (replicas > 1 && s->any_tile && stride && s->last_tile < stride &&
        (uint64_t)(replicas - 1) * stride + s->last_tile < UINT32_MAX / 2)
        s->last_tile += (replicas - 1) * stride;
    return true;
}

bool exe_read_summary(const char *path, exe_summary *s, char *err, size_t err_size)
{
    *s = (exe_summary){ 0 };
    /* A pipe can be read once only: the caller takes it whole with exe_read
     * and summarises it with exe_summary_of. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        return true;
    file_image f;
    if (!file_image_open(&f, path, READ_LIMIT_EXECUTABLE, "an executable may have", 0, err, err_size))
        return false;
    reader r = {.name = path, .err = err, .err_size = err_size, .img = f.data, .size = f.size};
    bool ok = summarise(&r, s);
    free(r.sh);
    file_image_close(&f);
    if (!ok)
        exe_summary_free(s);
    return ok;
}

bool exe_summary_of(const ipu_exe *e, exe_summary *s)
{
    *s = (exe_summary){ 0 };
    for (size_t i = 0; i < e->n_sections; i++) {
        if (!s->any_tile || e->sections[i].tile > s->last_tile)
            s->last_tile = e->sections[i].tile;
        s->any_tile = true;
    }
    for (size_t i = 0; i < e->n_tiles; i++) {
        if (!s->any_tile || e->tiles[i].tile > s->last_tile)
            s->last_tile = e->tiles[i].tile;
        s->any_tile = true;
    }
    if (e->replicas.count > 1 && !e->replicas.expanded && s->any_tile)
        s->last_tile += (e->replicas.count - 1) * e->replicas.tile_stride;
    return exe_set_blob(&s->machine, e->machine.bytes, e->machine.size);
}

void exe_summary_free(exe_summary *s)
{
    free(s->machine.bytes);
    *s = (exe_summary){ 0 };
}
