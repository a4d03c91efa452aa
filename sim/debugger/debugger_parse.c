/*
 * debugger_parse.c — the words of a debugger command: blanks, words,
 * numbers, repeat counts, contexts and addresses (numbers or symbols of a
 * tile); the one "error: ..." line a refused command prints; and the names
 * of contexts and code places (symbol and source line) the output uses.
 */
#include "debugger_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One "error: ..." line on out; returns DEBUGGER_ERROR. */
enum debugger_result dbg_fail(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", out);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
    return DEBUGGER_ERROR;
}

/* s past its leading blanks and tabs. */
const char *dbg_skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copy the next blank-separated word of *s into buf (truncated); false at
 * the end of the line. */
bool dbg_next_word(const char **s, char *buf, size_t n)
{
    const char *p = dbg_skip_blanks(*s);
    if (!*p)
        return false;
    size_t k = 0;
    while (*p && *p != ' ' && *p != '\t') {
        if (k + 1 < n)
            buf[k++] = *p;
        p++;
    }
    buf[k] = 0;
    *s = p;
    return true;
}

/* Whether only blanks are left in s. */
bool dbg_at_end(const char *s)
{
    return !*dbg_skip_blanks(s);
}

/* An unsigned number, decimal or 0x hex, the whole text. */
bool dbg_parse_u64(const char *s, uint64_t *v)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (*end || errno)
        return false;
    *v = x;
    return true;
}

/* An unsigned number up to UINT32_MAX, the whole text. */
bool dbg_parse_u32(const char *s, uint32_t *v)
{
    uint64_t x;
    if (!dbg_parse_u64(s, &x) || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

/* "supervisor" or "worker N" for context k. */
const char *dbg_context_name(unsigned k, char *buf, size_t n)
{
    if (k == ISA_SUPERVISOR)
        snprintf(buf, n, "supervisor");
    else
        snprintf(buf, n, "worker %u", k);
    return buf;
}

/* sup, supervisor, 0, w1..w6 or 1..6 as a context number. */
bool dbg_parse_context(const char *s, unsigned *k)
{
    if (!strcmp(s, "sup") || !strcmp(s, "supervisor") || !strcmp(s, "0")) {
        *k = ISA_SUPERVISOR;
        return true;
    }
    if ((s[0] == 'w' && s[1] >= '1' && s[1] <= '6' && !s[2]) || (s[0] >= '1' && s[0] <= '6' && !s[1])) {
        *k = (unsigned)(s[s[0] == 'w'] - '0');
        return true;
    }
    return false;
}

/* The selected tile. */
const ipu_tile *dbg_cur_tile(const debugger *d)
{
    return engine_tile(d->g, d->tile);
}

/* The symbol of that name on a tile, or NULL. */
const exe_symbol *dbg_symbol_on_tile(const debugger *d, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < d->e->n_symbols; i++)
        if (exe_symbol_on_tile(d->e, &d->e->symbols[i], tile) && !strcmp(d->e->symbols[i].name, name))
            return &d->e->symbols[i];
    return NULL;
}

/* " <sym+0x4> (file.S:12)" or what of it is known. */
void dbg_symbolize(const debugger *d, uint32_t tile, uint32_t pc, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = 0;
    const exe_symbol *sym = exe_symbol_at(d->e, tile, pc);
    if (sym) {
        if (pc == sym->addr)
            w += (size_t)snprintf(buf, n, " <%s>", sym->name);
        else
            w += (size_t)snprintf(buf, n, " <%s+0x%x>", sym->name, pc - sym->addr);
    }
    const char *file;
    uint32_t line;
    if (w < n && exe_line_at(d->e, tile, pc, &file, &line))
        snprintf(buf + w, n - w, " (%s:%u)", file, line);
}

/* An address on a tile: a number, SYMBOL or SYMBOL+OFFSET. */
bool dbg_parse_addr(const debugger *d, uint32_t tile, const char *s, uint32_t *addr, FILE *out)
{
    if (dbg_parse_u32(s, addr))
        return true;
    char name[128];
    const char *plus = strchr(s, '+');
    size_t len = plus ? (size_t)(plus - s) : strlen(s);
    if (len == 0 || len >= sizeof name) {
        dbg_fail(out, "bad address '%.64s' (a number, SYMBOL or SYMBOL+OFFSET)", s);
        return false;
    }
    memcpy(name, s, len);
    name[len] = 0;
    uint32_t off = 0;
    if (plus && !dbg_parse_u32(plus + 1, &off)) {
        dbg_fail(out, "bad offset in '%.64s'", s);
        return false;
    }
    const exe_symbol *sym = dbg_symbol_on_tile(d, tile, name);
    if (!sym) {
        dbg_fail(out, "no symbol '%s' on tile %u", name, tile);
        return false;
    }
    *addr = sym->addr + off;
    return true;
}

/* An optional repeat count. */
bool dbg_parse_count(const char *args, uint64_t *n, FILE *out)
{
    char w[64];
    *n = 1;
    if (!dbg_next_word(&args, w, sizeof w))
        return true;
    if (!dbg_parse_u64(w, n) || *n == 0 || *n > MAX_REPEAT || !dbg_at_end(args)) {
        dbg_fail(out, "expected a count from 1 to %llu, got '%.64s'", MAX_REPEAT, w);
        return false;
    }
    return true;
}
