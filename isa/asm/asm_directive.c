/*
 * asm_directive.c — sections and directives: opening and placing sections,
 * the location counter and the statements that advance it, and every
 * directive (.section, .org, .align, data, strings, floats, .equ, symbol
 * attributes, .entry, .include, .macro, .rept, ...) from one table.
 * Conditionals (.if and its family) are handled with the statements, in
 * asm.c.
 */
#include "asm_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"

/* ---- sections ------------------------------------------------------------------ */

#define TILE_MEMORY_BYTES (ISA_MEMORY_END - ISA_MEMORY_BASE)

static uint32_t default_flags(const char *name)
{
    if (!strcmp(name, ".text") || !strncmp(name, ".text.", 6))
        return EXE_SEC_EXEC;
    if (!strcmp(name, ".data") || !strncmp(name, ".data.", 6))
        return EXE_SEC_WRITE;
    if (!strcmp(name, ".bss") || !strncmp(name, ".bss.", 5))
        return EXE_SEC_WRITE | EXE_SEC_NOBITS;
    return 0;
}

/* "\"ax\"" or "\"aw\", @nobits", for messages. */
static void flags_string(uint32_t flags, char *buf)
{
    snprintf(buf, 24, "\"a%s%s\"%s", flags & EXE_SEC_WRITE ? "w" : "", flags & EXE_SEC_EXEC ? "x" : "",
             flags & EXE_SEC_NOBITS ? ", @nobits" : "");
}

static bool place_section(asm_ctx *a, int32_t idx, int64_t addr, asm_loc loc)
{
    asm_section *s = &a->sections[idx];
    if (s->placed) {
        if (s->base != addr) {
            asm_error(a, loc, "section %s is already placed at 0x%x", s->name, s->base);
            return false;
        }
        return true;
    }
    if (s->size) {
        asm_error(a, loc, "section %s already has content at an address not fixed yet: give its address "
                  "when it is first opened", s->name);
        return false;
    }
    if (addr < ISA_MEMORY_BASE || addr >= ISA_MEMORY_END) {
        asm_error(a, loc, "address 0x%llx is outside tile memory (0x%x..0x%x)", (unsigned long long)addr,
                  ISA_MEMORY_BASE, ISA_MEMORY_END - 1);
        return false;
    }
    if (s->flags & EXE_SEC_EXEC) {
        if (addr >= ISA_REGION1_BASE) {
            asm_error(a, loc, "code section %s at 0x%llx is outside region 0 (0x%x..0x%x), the only executable region",
                      s->name, (unsigned long long)addr, ISA_REGION0_BASE, ISA_REGION1_BASE - 1);
            return false;
        }
        if (addr & 3) {
            asm_error(a, loc, "code section %s at 0x%llx is not 4-byte aligned", s->name, (unsigned long long)addr);
            return false;
        }
    }
    s->placed = s->placed_explicitly = true;
    s->base = (uint32_t)addr;
    s->place_loc = loc;
    return true;
}

/* A new section NAME on the tiles of the current set; registered under
 * its name on each of them unless it only receives what follows a refused
 * reopening (register_name false). */
static int32_t new_section(asm_ctx *a, const char *name, uint32_t flags, bool flags_explicit, asm_loc loc,
                           bool register_name)
{
    ASM_GROW(a->sections, a->n_sections, a->cap_sections);
    asm_section *s = &a->sections[a->n_sections];
    memset(s, 0, sizeof *s);
    s->name = asm_strndup(&a->arena, name, strlen(name));
    s->tile = a->cur_tile;
    s->set = a->cur_set;
    s->flags = flags_explicit ? flags : default_flags(name);
    s->flags_explicit = flags_explicit;
    s->align = 1;
    s->loc = loc;
    const asm_tileset *set = asm_set(a, a->cur_set);
    for (uint32_t i = 0; i < set->n && register_name; i++)
        asm_map_put(&a->section_names, s->name, set->tiles[i], (uint32_t)a->n_sections);
    a->cur_section = (int32_t)a->n_sections++;
    return a->cur_section;
}

/* A section opened under a tile list belongs to that list: reopening it on
 * other tiles, or a section of one of its tiles under a list, is refused
 * (it would need a different content per tile).  Reports it and gives what
 * follows a section of its own, so the statements are still checked. */
static int32_t refuse_reopen(asm_ctx *a, const char *name, uint32_t tile, uint32_t idx, asm_loc loc)
{
    const asm_section *s = &a->sections[idx];
    char had[120], now[120];
    asm_tileset_text(a, s->set, had, sizeof had);
    asm_tileset_text(a, a->cur_set, now, sizeof now);
    asm_error(a, loc, "section %s on tile %u was opened for %s %s (at %s:%u), not for %s %s: reopen it under "
              "the same '.tile' list", name, tile, asm_set(a, s->set)->n > 1 ? "tiles" : "tile", had,
              a->files[s->loc.file], s->loc.line, asm_set(a, a->cur_set)->n > 1 ? "tiles" : "tile", now);
    new_section(a, name, s->flags, true, loc, false);
    return -1;
}

static int32_t open_section(asm_ctx *a, const char *name, uint32_t flags, bool flags_explicit, asm_loc loc)
{
    uint32_t idx;
    if (asm_map_get(&a->section_names, name, a->cur_tile, &idx)) {
        asm_section *s = &a->sections[idx];
        if (s->set != a->cur_set)
            return refuse_reopen(a, name, a->cur_tile, idx, loc);
        if (flags_explicit && s->flags != flags) {
            char had[24], now[24];
            flags_string(s->flags, had);
            flags_string(flags, now);
            asm_error(a, loc, "section %s reopened with flags %s; it has %s (opened at %s:%u)", name, now, had,
                      a->files[s->loc.file], s->loc.line);
            return -1;
        }
        a->cur_section = (int32_t)idx;
        return (int32_t)idx;
    }
    const asm_tileset *set = asm_set(a, a->cur_set);
    for (uint32_t i = 1; i < set->n; i++)
        if (asm_map_get(&a->section_names, name, set->tiles[i], &idx))
            return refuse_reopen(a, name, set->tiles[i], idx, loc);
    return new_section(a, name, flags, flags_explicit, loc, true);
}

/* The current section; content before any section directive goes to .text. */
asm_section *asm_cur_sec(asm_ctx *a, asm_loc loc)
{
    if (a->cur_section < 0)
        open_section(a, ".text", 0, false, loc);
    return &a->sections[a->cur_section];
}

/* The `.` nodes of e read before any section (left-deep chains are
 * walked without recursion), given section sec at offset off when sec is
 * not NULL; whether there is one. */
static bool loose_dots(asm_expr *e, const asm_section *sec, int32_t idx)
{
    bool any = false;
    for (; e; e = e->a) {
        if (e->kind == EX_DOT && e->section < 0) {
            any = true;
            if (sec) {
                e->section = idx;
                e->num = sec->size;
            }
        }
        if (e->kind == EX_BINARY)
            any |= loose_dots(e->b, sec, idx);
    }
    return any;
}

/* An expression; `.` in it before any section is where content would go,
 * the current position in .text, which it opens: only an expression with
 * a `.` does (one naming labels alone leaves the sections as they are,
 * so that `.entry` under a `.tile` list opens none). */
asm_expr *asm_parse_expr_here(asm_ctx *a, const char *text, const char **p, asm_loc loc)
{
    asm_expr *e = asm_parse_expr(a, text, p, loc);
    if (e && a->cur_section < 0 && loose_dots(e, NULL, -1)) {
        asm_section *sec = asm_cur_sec(a, loc);
        loose_dots(e, sec, a->cur_section);
    }
    return e;
}

static uint64_t cur_addr(const asm_section *s)
{
    return s->placed ? (uint64_t)s->base + s->size : s->size;
}

/* Add a statement of `size` bytes at the current position. */
asm_stmt *asm_emit(asm_ctx *a, int kind, uint64_t size, asm_loc loc)
{
    asm_section *s = asm_cur_sec(a, loc);
    uint64_t end = (uint64_t)s->size + size;
    if (end > TILE_MEMORY_BYTES || (s->placed && s->base + end > ISA_MEMORY_END)) {
        if (!s->too_big)
            asm_error(a, loc, "section %s on tile %u grows past the end of tile memory (0x%x)", s->name, s->tile,
                      ISA_MEMORY_END);
        s->too_big = true;
        a->stop = true;   /* what follows would only repeat it */
        return NULL;
    }
    uint32_t copies = asm_set(a, s->set)->n;
    if (!asm_count_copies(a, copies, loc))
        return NULL;
    if (!(s->flags & EXE_SEC_NOBITS)) {
        a->total_bytes += size * copies;
        if (a->total_bytes > ASM_MAX_TOTAL_BYTES) {
            asm_error(a, loc, "more than %u MiB of section contents in all", ASM_MAX_TOTAL_BYTES >> 20);
            a->stop = true;
            return NULL;
        }
    }
    ASM_GROW(a->stmts, a->n_stmts, a->cap_stmts);
    asm_stmt *st = &a->stmts[a->n_stmts++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->section = a->cur_section;
    st->offset = s->size;
    st->size = (uint32_t)size;
    st->tile = s->tile;
    st->block = a->block;
    st->loc = loc;
    s->size = (uint32_t)end;
    if (kind == ST_INSN || kind == ST_BUNDLE) {
        ASM_GROW(s->stmts, s->n_stmts, s->cap_stmts);
        s->stmts[s->n_stmts++] = a->n_stmts - 1;
    }
    return st;
}

/* Report bytes put in a NOBITS section; false if so. */
bool asm_no_bytes_here(asm_ctx *a, asm_loc loc, const char *what)
{
    asm_section *s = asm_cur_sec(a, loc);
    if (s->flags & EXE_SEC_NOBITS) {
        asm_error(a, loc, "%s puts bytes in section %s, which is NOBITS (only labels, .space, .align and .org there)",
                  what, s->name);
        return false;
    }
    return true;
}

/* Pad `n` bytes: nops in code (after zero bytes up to a word boundary),
 * the fill byte in data. */
static void pad(asm_ctx *a, uint64_t n, int fill, asm_loc loc)
{
    if (!n)
        return;
    asm_section *s = asm_cur_sec(a, loc);
    bool code = (s->flags & EXE_SEC_EXEC) && !(s->flags & EXE_SEC_NOBITS);
    asm_stmt *st = asm_emit(a, code && fill < 0 ? ST_CODEPAD : ST_FILL, n, loc);
    if (st)
        st->fill = (uint8_t)(fill < 0 ? 0 : fill);
}

/* ---- directives ------------------------------------------------------------------- */

typedef struct dir_call {
    const char *text;          /* the statement */
    const char *args;          /* after the directive name */
    const char *name;          /* the directive, e.g. ".word" */
    asm_loc loc;               /* of the directive */
    asm_loc base;              /* of text[0]: columns inside the statement count from here */
    int arg;                   /* from the table */
} dir_call;

static const char *parse_name(asm_ctx *a, const dir_call *c, const char **pp, const char *what)
{
    const char *p = asm_skip_space(*pp);
    const char *s = p;
    if (*p == '"') {
        p++;
        while (*p && *p != '"')
            p++;
        if (*p != '"' || p == s + 1) {
            asm_error(a, asm_at(c->base, c->text, s), "expected %s, found %s", what, *p ? "'\"\"'" : "an unterminated string");
            return NULL;
        }
        *pp = asm_skip_space(p + 1);
        return asm_strndup(&a->arena, s + 1, (size_t)(p - s - 1));
    }
    if (!asm_is_ident_start((unsigned char)*p) || (p[0] == '.' && !asm_is_ident_char((unsigned char)p[1]))) {
        char found[64];
        asm_found_text(p, found, sizeof found);
        asm_error(a, asm_at(c->base, c->text, p), "expected %s, found %s", what, found);
        return NULL;
    }
    while (asm_is_ident_char((unsigned char)*p))
        p++;
    *pp = asm_skip_space(p);
    return asm_strndup(&a->arena, s, (size_t)(p - s));
}

static bool expect_comma(asm_ctx *a, const dir_call *c, const char **pp)
{
    const char *p = asm_skip_space(*pp);
    if (*p != ',') {
        char found[64];
        asm_found_text(p, found, sizeof found);
        asm_error(a, asm_at(c->base, c->text, p), "expected ',' in '%s', found %s", c->name, found);
        return false;
    }
    *pp = asm_skip_space(p + 1);
    return true;
}

static bool const_arg(asm_ctx *a, const dir_call *c, const char **pp, int64_t *out)
{
    char what[48];
    snprintf(what, sizeof what, "'%s'", c->name);
    return asm_parse_const(a, c->text, pp, c->base, what, out);
}

static void d_section_named(asm_ctx *a, const dir_call *c)
{
    const char *name = c->arg == 0 ? ".text" : c->arg == 1 ? ".data" : ".bss";
    if (!asm_expect_end(a, c->text, c->args, c->base, c->name))
        return;
    open_section(a, name, 0, false, c->loc);
}

static void d_section(asm_ctx *a, const dir_call *c)
{
    const char *p = asm_skip_space(c->args);
    const char *name;
    const char *s = p;
    if (*p == '"') {
        name = parse_name(a, c, &p, "a section name");
        if (!name)
            return;
    } else {
        while (*p && *p != ',' && *p != '"' && !asm_is_space((unsigned char)*p))
            p++;
        if (p == s) {
            char found[64];
            asm_found_text(s, found, sizeof found);
            asm_error(a, asm_at(c->base, c->text, s), "expected a section name after '.section', found %s", found);
            return;
        }
        name = asm_strndup(&a->arena, s, (size_t)(p - s));
        p = asm_skip_space(p);
    }
    uint32_t flags = 0;
    bool flags_explicit = false, has_addr = false;
    int64_t addr = 0;
    asm_loc addr_loc = c->loc;
    if (*p == ',') {
        p = asm_skip_space(p + 1);
        if (*p == '"') {
            const char *f = ++p;
            flags_explicit = true;
            for (; *p && *p != '"'; p++) {
                if (*p == 'a') continue;
                if (*p == 'w') flags |= EXE_SEC_WRITE;
                else if (*p == 'x') flags |= EXE_SEC_EXEC;
                else {
                    asm_error(a, asm_at(c->base, c->text, p), "unknown section flag '%c' (the flags are a, w and x)", *p);
                    return;
                }
            }
            if (*p != '"') {
                asm_error(a, asm_at(c->base, c->text, f - 1), "unterminated section flags");
                return;
            }
            p = asm_skip_space(p + 1);
            if (*p == ',') {
                p = asm_skip_space(p + 1);
                if (*p == '@' || *p == '%') {
                    const char *t = p + 1;
                    if (!strncmp(t, "nobits", 6) && !asm_is_ident_char((unsigned char)t[6])) {
                        flags |= EXE_SEC_NOBITS;
                        p = t + 6;
                    } else if (!strncmp(t, "progbits", 8) && !asm_is_ident_char((unsigned char)t[8])) {
                        p = t + 8;
                    } else {
                        char found[64];
                        asm_found_text(p, found, sizeof found);
                        asm_error(a, asm_at(c->base, c->text, p), "expected @progbits or @nobits, found %s", found);
                        return;
                    }
                    p = asm_skip_space(p);
                    if (*p == ',')
                        p = asm_skip_space(p + 1);
                    else
                        goto done;
                }
                addr_loc = asm_at(c->base, c->text, p);
                if (!const_arg(a, c, &p, &addr))
                    return;
                has_addr = true;
            }
        } else {
            addr_loc = asm_at(c->base, c->text, p);
            if (!const_arg(a, c, &p, &addr))
                return;
            has_addr = true;
        }
    }
done:
    if (!asm_expect_end(a, c->text, p, c->base, "'.section'"))
        return;
    int32_t idx = open_section(a, name, flags, flags_explicit, c->loc);
    if (idx >= 0 && has_addr)
        place_section(a, idx, addr, addr_loc);
}

static void d_tile(asm_ctx *a, const dir_call *c)
{
    uint32_t set;
    if (!asm_parse_tile_list(a, c->text, c->args, c->base, &set))
        return;
    a->cur_set = set;
    a->cur_tile = asm_set(a, set)->tiles[0];
    a->cur_section = -1;
    a->block++;
}

static void d_org(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t v;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &v) || !asm_expect_end(a, c->text, p, c->base, "'.org'"))
        return;
    asm_section *s = asm_cur_sec(a, c->loc);
    if (!s->placed) {
        if (s->size == 0) {
            place_section(a, a->cur_section, v, l);
            return;
        }
        asm_error(a, l, "'.org' in section %s, whose address is not fixed: give the address when the section "
                  "is opened (.section NAME, \"flags\", ADDR) or use .org before its first content", s->name);
        return;
    }
    uint64_t cur = cur_addr(s);
    if (v < 0 || (uint64_t)v < cur) {
        asm_error(a, l, "'.org' 0x%llx is below the current address 0x%llx", (unsigned long long)v,
                  (unsigned long long)cur);
        return;
    }
    pad(a, (uint64_t)v - cur, -1, c->loc);
}

/* The ", FILL" after a directive's first argument (*p at the comma): a byte
 * from -128 to 255, into *fill as 0..255; false after an error. */
static bool fill_arg(asm_ctx *a, const dir_call *c, const char **p, int64_t *fill)
{
    (*p)++;
    asm_loc fl = asm_at(c->base, c->text, asm_skip_space(*p));
    if (!const_arg(a, c, p, fill))
        return false;
    if (*fill < -128 || *fill > 255) {
        asm_error(a, fl, "fill byte %lld out of range (-128..255)", (long long)*fill);
        return false;
    }
    *fill &= 0xff;
    return true;
}

static void d_align(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t n, fill = -1;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &n))
        return;
    if (*p == ',' && !fill_arg(a, c, &p, &fill))
        return;
    if (!asm_expect_end(a, c->text, p, c->base, c->name))
        return;
    if (c->arg == 1) {   /* .p2align */
        if (n < 0 || n > 16) {
            asm_error(a, l, "'.p2align' exponent %lld out of range (0..16)", (long long)n);
            return;
        }
        n = (int64_t)1 << n;
    }
    if (n <= 0 || n > 65536 || (n & (n - 1))) {
        asm_error(a, l, "'%s' needs a power of two from 1 to 65536, found %lld", c->name, (long long)n);
        return;
    }
    asm_section *s = asm_cur_sec(a, c->loc);
    if ((uint32_t)n > s->align)
        s->align = (uint32_t)n;
    uint64_t padding = (uint64_t)(-(int64_t)cur_addr(s)) & (uint64_t)(n - 1);
    if (fill > 0 && (s->flags & EXE_SEC_NOBITS)) {
        asm_error(a, c->loc, "'%s' with a fill byte in NOBITS section %s", c->name, s->name);
        return;
    }
    pad(a, padding, (int)fill, c->loc);
}

static void d_space(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t n, fill = 0;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &n))
        return;
    if (c->arg == 0 && *p == ',' && !fill_arg(a, c, &p, &fill))
        return;
    if (!asm_expect_end(a, c->text, p, c->base, c->name))
        return;
    if (n < 0 || n > (int64_t)TILE_MEMORY_BYTES) {
        asm_error(a, l, "'%s' size %lld out of range (0..%u)", c->name, (long long)n, TILE_MEMORY_BYTES);
        return;
    }
    asm_section *s = asm_cur_sec(a, c->loc);
    if (fill && (s->flags & EXE_SEC_NOBITS)) {
        asm_error(a, c->loc, "'%s' with a fill byte in NOBITS section %s", c->name, s->name);
        return;
    }
    if (n) {
        asm_stmt *st = asm_emit(a, ST_FILL, (uint64_t)n, c->loc);
        if (st)
            st->fill = (uint8_t)fill;
    }
}

static void emit_raw(asm_ctx *a, const dir_call *c, const uint8_t *bytes, size_t n);

/* The values of .word, .half or .byte when each is a plain number (decimal
 * or 0x hex) that fits: their bytes, little-endian, into *out (malloc'd),
 * without an expression each (the disassembler writes data this way, a
 * lot of it).  False, with nothing kept, for anything else: it is then
 * parsed as expressions, with their messages. */
static bool literal_data(const char *p, unsigned width, uint8_t **out, size_t *n)
{
    size_t cap = 0;
    uint64_t max = width >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * width)) - 1;
    *out = NULL;
    *n = 0;
    for (p = asm_skip_space(p);;) {
        unsigned base = 10;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            base = 16;
            p += 2;
        }
        uint64_t v = 0;
        const char *digits = p;
        for (;; p++) {
            unsigned dv = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
                          : base == 16 && *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                          : base == 16 && *p >= 'A' && *p <= 'F' ? (unsigned)(*p - 'A' + 10) : 99;
            if (dv >= base)
                break;
            if (v > (max - dv) / base)
                break;   /* too big: let the expression give the message */
            v = v * base + dv;
        }
        if (p == digits || p - digits > 20 || asm_is_ident_char((unsigned char)*p) ||
            (*out == NULL && !(*out = malloc(cap = 64 * width))))
            break;
        if (*n + width > cap) {
            uint8_t *bigger = realloc(*out, cap * 2);
            if (!bigger)
                break;
            *out = bigger;
            cap *= 2;
        }
        asm_put_le(*out + *n, v, width);
        *n += width;
        p = asm_skip_space(p);
        if (!*p)
            return true;
        if (*p != ',')
            break;
        p = asm_skip_space(p + 1);
    }
    free(*out);
    *out = NULL;
    return false;
}

static void d_data(asm_ctx *a, const dir_call *c)
{
    char what[24];
    snprintf(what, sizeof what, "'%s'", c->name);
    if (!asm_no_bytes_here(a, c->loc, what))
        return;
    uint8_t *bytes;
    size_t n_bytes;
    if (c->arg <= 4 && literal_data(c->args, (unsigned)c->arg, &bytes, &n_bytes)) {
        emit_raw(a, c, bytes, n_bytes);
        free(bytes);
        return;
    }
    const char *p = asm_skip_space(c->args);
    asm_expr **items = NULL;
    size_t n = 0, cap = 0;
    if (!*p) {
        asm_error(a, c->loc, "'%s' needs at least one value", c->name);
        return;
    }
    for (;;) {
        asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
        if (!e) {
            free(items);
            return;
        }
        ASM_GROW(items, n, cap);
        items[n++] = e;
        if (*p != ',')
            break;
        p = asm_skip_space(p + 1);
    }
    if (!asm_expect_end(a, c->text, p, c->base, "a value")) {
        free(items);
        return;
    }
    asm_stmt *st = asm_emit(a, ST_DATA, (uint64_t)n * (unsigned)c->arg, c->loc);
    if (st) {
        st->width = (uint8_t)c->arg;
        st->n_items = (uint32_t)n;
        st->items = asm_alloc(&a->arena, n * sizeof *items);
        memcpy(st->items, items, n * sizeof *items);
    }
    free(items);
}

static void emit_raw(asm_ctx *a, const dir_call *c, const uint8_t *bytes, size_t n)
{
    if (!n)
        return;
    asm_stmt *st = asm_emit(a, ST_RAW, n, c->loc);
    if (st) {
        uint8_t *copy = asm_alloc(&a->arena, n);
        memcpy(copy, bytes, n);
        st->raw = copy;
    }
}

static void d_float(asm_ctx *a, const dir_call *c)
{
    char what[24];
    snprintf(what, sizeof what, "'%s'", c->name);
    if (!asm_no_bytes_here(a, c->loc, what))
        return;
    const char *p = c->args;
    uint8_t *bytes = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        double d;
        if (!asm_parse_float(a, c->text, &p, c->base, &d)) {
            free(bytes);
            return;
        }
        if (n + 4 > cap) {
            cap = cap ? cap * 2 : 64;
            bytes = asm_xrealloc(bytes, cap);
        }
        if (c->arg == 4) {
            /* Round to f32 as IEEE does; a double beyond the f32 range
             * must not reach the conversion (undefined in C). */
            float f = fabs(d) <= FLT_MAX || !isfinite(d) ? (float)d
                      : fabs(d) >= 0x1.ffffffp127 ? copysignf(INFINITY, (float)(d > 0 ? 1 : -1))
                                                   : copysignf(FLT_MAX, (float)(d > 0 ? 1 : -1));
            uint32_t bits;
            memcpy(&bits, &f, 4);
            asm_put_le(bytes + n, bits, 4);
            n += 4;
        } else {
            float f = fabs(d) <= FLT_MAX || !isfinite(d) ? (float)d : copysignf(INFINITY, (float)(d > 0 ? 1 : -1));
            asm_put_le(bytes + n, fp16_from_f32(f), 2);
            n += 2;
        }
        if (*p != ',')
            break;
        p++;
    }
    if (asm_expect_end(a, c->text, p, c->base, "a value"))
        emit_raw(a, c, bytes, n);
    free(bytes);
}

static void d_ascii(asm_ctx *a, const dir_call *c)
{
    char what[24];
    snprintf(what, sizeof what, "'%s'", c->name);
    if (!asm_no_bytes_here(a, c->loc, what))
        return;
    const char *p = c->args;
    uint8_t *bytes = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        char *s;
        size_t len;
        if (!asm_parse_string(a, c->text, &p, c->base, &s, &len)) {
            free(bytes);
            return;
        }
        size_t add = len + (c->arg ? 1 : 0);
        if (n + add > cap) {
            cap = (n + add) * 2;
            bytes = asm_xrealloc(bytes, cap);
        }
        if (len) {   /* an empty string adds no bytes (bytes may still be NULL) */
            memcpy(bytes + n, s, len);
            n += len;
        }
        if (c->arg)
            bytes[n++] = 0;
        if (*p != ',')
            break;
        p++;
    }
    if (asm_expect_end(a, c->text, p, c->base, "a string"))
        emit_raw(a, c, bytes, n);
    free(bytes);
}

static void d_equ(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    const char *name = parse_name(a, c, &p, "a symbol name");
    if (!name || !expect_comma(a, c, &p))
        return;
    asm_cur_sec(a, c->loc);   /* `.` in the value refers to a section */
    asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
    if (!e || !asm_expect_end(a, c->text, p, c->base, "the value"))
        return;
    asm_define_const(a, name, e, c->arg, c->loc);
}

static void add_attr(asm_ctx *a, int what, const char *name, uint8_t type, asm_expr *e, asm_loc loc)
{
    ASM_GROW(a->attrs, a->n_attrs, a->cap_attrs);
    a->attrs[a->n_attrs++] = (asm_symattr){ (uint8_t)what, type, name, a->cur_set, e, loc };
}

static void d_globl(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    for (;;) {
        asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
        const char *name = parse_name(a, c, &p, "a symbol name");
        if (!name)
            return;
        add_attr(a, 0, name, 0, NULL, l);
        if (*p != ',')
            break;
        p++;
    }
    asm_expect_end(a, c->text, p, c->base, "the symbol name");
}

/* @function, @object or @notype (or %function, ...) at *pp. */
static bool sym_type_arg(asm_ctx *a, const dir_call *c, const char **pp, uint8_t *type)
{
    static const struct { const char *word; uint8_t type; } types[] = {
        {"function", SYMT_FUNC}, {"object", SYMT_OBJECT}, {"notype", SYMT_NOTYPE},
    };
    const char *p = *pp, *t = p;
    if (*t == '@' || *t == '%')
        t++;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = strlen(types[i].word);
        if (!strncmp(t, types[i].word, n) && !asm_is_ident_char((unsigned char)t[n])) {
            *type = types[i].type;
            *pp = asm_skip_space(t + n);
            return true;
        }
    }
    char found[64];
    asm_found_text(p, found, sizeof found);
    asm_error(a, asm_at(c->base, c->text, p), "expected @function, @object or @notype, found %s", found);
    return false;
}

static void d_type(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    const char *name = parse_name(a, c, &p, "a symbol name");
    uint8_t type;
    if (!name || !expect_comma(a, c, &p) || !sym_type_arg(a, c, &p, &type))
        return;
    if (asm_expect_end(a, c->text, p, c->base, "the symbol type"))
        add_attr(a, 1, name, type, NULL, l);
}

/* .symbol NAME, TYPE, SIZE[, global|local]: one more symbol of the
 * executable here, which expressions do not name (asm.h). */
static void d_symbol(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    const char *name = parse_name(a, c, &p, "a symbol name");
    uint8_t type;
    if (!name || !expect_comma(a, c, &p) || !sym_type_arg(a, c, &p, &type) || !expect_comma(a, c, &p))
        return;
    asm_cur_sec(a, c->loc);   /* `.` in the size refers to a section */
    asm_expr *size = asm_parse_expr(a, c->text, &p, c->base);
    if (!size)
        return;
    bool global = false;
    if (*p == ',') {
        p = asm_skip_space(p + 1);
        if (!strncmp(p, "global", 6) && !asm_is_ident_char((unsigned char)p[6])) {
            global = true;
            p += 6;
        } else if (!strncmp(p, "local", 5) && !asm_is_ident_char((unsigned char)p[5]))
            p += 5;
        else {
            char found[64];
            asm_found_text(p, found, sizeof found);
            asm_error(a, asm_at(c->base, c->text, p), "expected global or local, found %s", found);
            return;
        }
    }
    if (asm_expect_end(a, c->text, p, c->base, "'.symbol'"))
        asm_define_symbol(a, name, type, size, global, c->loc);
}

static void d_size(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    const char *name = parse_name(a, c, &p, "a symbol name");
    if (!name || !expect_comma(a, c, &p))
        return;
    asm_cur_sec(a, c->loc);   /* `.` in the size refers to a section */
    asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
    if (!e || !asm_expect_end(a, c->text, p, c->base, "the size"))
        return;
    add_attr(a, 2, name, 0, e, l);
}

static void d_entry(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    const asm_tileset *set = asm_set(a, a->cur_set);
    for (uint32_t i = 0; i < set->n; i++) {
        uint32_t k;
        if (asm_map_get(&a->entry_tiles, ".entry", set->tiles[i], &k)) {
            asm_error(a, c->loc, "second '.entry' for tile %u (the first is at %s:%u)", set->tiles[i],
                      a->files[a->entries[k].loc.file], a->entries[k].loc.line);
            return;
        }
    }
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    asm_expr *e = asm_parse_expr_here(a, c->text, &p, c->base);
    if (!e || !asm_expect_end(a, c->text, p, c->base, "the entry address"))
        return;
    ASM_GROW(a->entries, a->n_entries, a->cap_entries);
    for (uint32_t i = 0; i < set->n; i++)
        asm_map_put(&a->entry_tiles, ".entry", set->tiles[i], (uint32_t)a->n_entries);
    a->entries[a->n_entries++] = (asm_entry){ a->cur_set, e, l };
}

static void d_include(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    char *name;
    size_t len;
    if (!asm_parse_string(a, c->text, &p, c->base, &name, &len) || !asm_expect_end(a, c->text, p, c->base, "the file name"))
        return;
    if (strlen(name) != len) {
        asm_error(a, c->loc, "include file name contains a NUL byte");
        return;
    }
    asm_include(a, name, c->loc);
}

static void d_macro(asm_ctx *a, const dir_call *c)
{
    asm_macro *m = asm_define_macro(a, c->text, c->args, c->base);
    /* Collect the body even after an error, so it is not assembled. */
    a->collecting = 1;
    a->collect_macro = m;
    a->collect_nest = 0;
    a->n_collect = 0;
    a->collect_loc = c->loc;
}

static void d_rept(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t n = 0;
    asm_loc l = asm_at(c->base, c->text, asm_skip_space(p));
    bool ok = const_arg(a, c, &p, &n) && asm_expect_end(a, c->text, p, c->base, "the count");
    if (ok && (n < 0 || n > ASM_MAX_STATEMENTS)) {
        asm_error(a, l, "'.rept' count %lld out of range (0..%u)", (long long)n, ASM_MAX_STATEMENTS);
        ok = false;
    }
    a->collecting = 2;
    a->collect_nest = 0;
    a->n_collect = 0;
    a->collect_count = ok ? (uint64_t)n : 0;
    a->collect_loc = c->loc;
}

static void d_unmatched(asm_ctx *a, const dir_call *c)
{
    asm_error(a, c->loc, "'%s' without '%s'", c->name, c->arg == 0 ? ".macro" : ".rept");
}

static void d_exitm(asm_ctx *a, const dir_call *c)
{
    if (asm_expect_end(a, c->text, c->args, c->base, "'.exitm'"))
        asm_exit_macro(a, c->loc);
}

static void d_error(asm_ctx *a, const dir_call *c)
{
    const char *p = asm_skip_space(c->args);
    char *msg = NULL;
    size_t len;
    if (*p == '"') {
        if (!asm_parse_string(a, c->text, &p, c->base, &msg, &len))
            return;
    }
    asm_error(a, c->loc, "%s", msg && *msg ? msg : "'.error' directive");
}

static void d_ignore(asm_ctx *a, const dir_call *c)
{
    (void)a;
    (void)c;
}

static void d_mode(asm_ctx *a, const dir_call *c)
{
    if (asm_expect_end(a, c->text, c->args, c->base, c->name))
        a->context_mode = c->arg;
}

static const struct directive {
    const char *name;
    void (*fn)(asm_ctx *a, const dir_call *c);
    int arg;
} directives[] = {
    {".text", d_section_named, 0}, {".data", d_section_named, 1}, {".bss", d_section_named, 2},
    {".section", d_section, 0}, {".tile", d_tile, 0}, {".org", d_org, 0},
    {".align", d_align, 0}, {".balign", d_align, 0}, {".p2align", d_align, 1},
    {".word", d_data, 4}, {".long", d_data, 4}, {".int", d_data, 4}, {".4byte", d_data, 4},
    {".half", d_data, 2}, {".short", d_data, 2}, {".hword", d_data, 2}, {".2byte", d_data, 2},
    {".byte", d_data, 1}, {".quad", d_data, 8}, {".8byte", d_data, 8},
    {".float", d_float, 4}, {".single", d_float, 4}, {".half_float", d_float, 2}, {".f16", d_float, 2},
    {".ascii", d_ascii, 0}, {".asciz", d_ascii, 1}, {".string", d_ascii, 1},
    {".space", d_space, 0}, {".skip", d_space, 0}, {".zero", d_space, 1},
    {".equ", d_equ, DEF_SET}, {".set", d_equ, DEF_SET}, {".equiv", d_equ, DEF_EQUIV},
    {".globl", d_globl, 0}, {".global", d_globl, 0}, {".type", d_type, 0}, {".size", d_size, 0},
    {".symbol", d_symbol, 0},
    {".entry", d_entry, 0}, {".include", d_include, 0},
    {".macro", d_macro, 0}, {".endm", d_unmatched, 0}, {".exitm", d_exitm, 0},
    {".rept", d_rept, 0}, {".endr", d_unmatched, 1},
    {".error", d_error, 0}, {".warning", d_ignore, 0}, {".file", d_ignore, 0}, {".ident", d_ignore, 0},
    {".worker", d_mode, 1}, {".supervisor", d_mode, 2},
    /* conditionals are handled before the table; listed for suggestions */
    {".if", NULL, 0}, {".ifdef", NULL, 0}, {".ifndef", NULL, 0}, {".ifb", NULL, 0}, {".ifnb", NULL, 0},
    {".ifc", NULL, 0}, {".ifnc", NULL, 0}, {".elseif", NULL, 0}, {".else", NULL, 0}, {".endif", NULL, 0},
};

#define N_DIRECTIVES (sizeof directives / sizeof directives[0])

/* Run directive dir (its arguments at args), or report it unknown; true if
 * it ran. */
bool asm_directive(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc loc, asm_loc base)
{
    const struct directive *d = NULL;
    for (size_t i = 0; i < N_DIRECTIVES && !d; i++)
        if (!strcmp(directives[i].name, dir))
            d = &directives[i];
    if (!d || !d->fn) {
        const char *names[N_DIRECTIVES];
        for (size_t i = 0; i < N_DIRECTIVES; i++)
            names[i] = directives[i].name;
        const char *s = asm_suggest(dir, names, N_DIRECTIVES);
        if (s)
            asm_error(a, loc, "unknown directive '%s' (did you mean '%s'?)", dir, s);
        else
            asm_error(a, loc, "unknown directive '%s'", dir);
        return false;
    }
    dir_call c = { text, args, d->name, loc, base, d->arg };
    d->fn(a, &c);
    return true;
}
