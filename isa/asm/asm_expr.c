/*
 * asm_expr.c — the assembler's expressions: parsing into a tree, evaluation
 * (now, during the first pass, or final, after layout), numbers, character
 * constants, strings and float literals; plus the small shared utilities
 * (arena, name table, "did you mean").
 *
 * Values are 64-bit two's complement; + - * and << wrap.  During the first
 * pass a label whose section has no address yet evaluates to "offset in
 * section S"; the difference of two such labels in one section is a
 * constant, which is what `(2f - 1f)/8 - 1` and `. - start` need.  Any
 * other use of such a value is not known until the sections are placed.
 */
#include "asm_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/diag.h"

/* ---- arena -------------------------------------------------------------- */

struct asm_chunk {
    struct asm_chunk *next;
    max_align_t data[];
};

#define ASM_CHUNK_BYTES (64u * 1024u)

void *asm_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        panic("out of memory (%zu bytes)", n);
    return q;
}

void *asm_alloc(asm_arena *ar, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    if (!ar->head || ar->used + n > ar->cap) {
        size_t cap = n > ASM_CHUNK_BYTES ? n : ASM_CHUNK_BYTES;
        struct asm_chunk *c = asm_xrealloc(NULL, sizeof *c + cap);
        c->next = ar->head;
        ar->head = c;
        ar->used = 0;
        ar->cap = cap;
    }
    void *p = (char *)ar->head->data + ar->used;
    ar->used += n;
    memset(p, 0, n);
    return p;
}

char *asm_strndup(asm_arena *ar, const char *s, size_t n)
{
    char *d = asm_alloc(ar, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void asm_arena_free(asm_arena *ar)
{
    struct asm_chunk *c = ar->head;
    while (c) {
        struct asm_chunk *next = c->next;
        free(c);
        c = next;
    }
    ar->head = NULL;
    ar->used = ar->cap = 0;
}

/* ---- name table ---------------------------------------------------------- */

struct asm_map_slot {
    const char *name;
    uint32_t ns, value;
    uint64_t hash;
};

static uint64_t map_hash(const char *name, uint32_t ns)
{
    uint64_t h = 1469598103934665603ull ^ ns;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h | 1;   /* 0 marks an empty slot */
}

bool asm_map_get(const asm_map *m, const char *name, uint32_t ns, uint32_t *value)
{
    if (!m->cap)
        return false;
    uint64_t h = map_hash(name, ns);
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const struct asm_map_slot *s = &m->slots[i];
        if (!s->hash)
            return false;
        if (s->hash == h && s->ns == ns && !strcmp(s->name, name)) {
            *value = s->value;
            return true;
        }
    }
}

void asm_map_put(asm_map *m, const char *name, uint32_t ns, uint32_t value)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        struct asm_map_slot *slots = asm_xrealloc(NULL, cap * sizeof *slots);
        memset(slots, 0, cap * sizeof *slots);
        for (size_t i = 0; i < m->cap; i++) {
            struct asm_map_slot *s = &m->slots[i];
            if (!s->hash)
                continue;
            size_t j = s->hash & (cap - 1);
            while (slots[j].hash)
                j = (j + 1) & (cap - 1);
            slots[j] = *s;
        }
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    uint64_t h = map_hash(name, ns);
    size_t i = h & (m->cap - 1);
    for (;; i = (i + 1) & (m->cap - 1)) {
        struct asm_map_slot *s = &m->slots[i];
        if (!s->hash)
            break;
        if (s->hash == h && s->ns == ns && !strcmp(s->name, name)) {
            s->value = value;
            return;
        }
    }
    m->slots[i] = (struct asm_map_slot){ name, ns, value, h };
    m->n++;
}

void asm_map_free(asm_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->n = m->cap = 0;
}

/* ---- "did you mean" ------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[65];
    if (la > 64 || lb > 64)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *asm_suggest(const char *word, const char *const *cands, size_t n)
{
    size_t len = strlen(word);
    size_t limit = len <= 3 ? 1 : 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(cands[i], word))
            continue;
        size_t d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best;
}

/* ---- symbols --------------------------------------------------------------- */

asm_symbol *asm_find_label(asm_ctx *a, const char *name, uint32_t tile)
{
    uint32_t i;
    return asm_map_get(&a->names, name, tile, &i) ? &a->syms[i] : NULL;
}

asm_symbol *asm_find_const(asm_ctx *a, const char *name)
{
    uint32_t i;
    return asm_map_get(&a->names, name, ASM_NS_CONST, &i) ? &a->syms[i] : NULL;
}

int64_t asm_local_count(asm_ctx *a, const char *digits, size_t n, bool bump)
{
    char key[64];
    if (n >= sizeof key)
        n = sizeof key - 1;
    memcpy(key, digits, n);
    key[n] = 0;
    uint32_t i;
    if (!asm_map_get(&a->names, key, ASM_NS_LOCAL, &i)) {
        ASM_GROW(a->local_counts, a->n_local_counts, a->cap_local_counts);
        i = (uint32_t)a->n_local_counts;
        a->local_counts[a->n_local_counts++] = 0;
        asm_map_put(&a->names, asm_strndup(&a->arena, key, n), ASM_NS_LOCAL, i);
    }
    int64_t k = a->local_counts[i];
    if (bump)
        a->local_counts[i]++;
    return k;
}

const char *asm_local_name(asm_ctx *a, const char *digits, size_t n, int64_t k)
{
    char buf[96];
    /* \x01 cannot appear in a user's name, so these never clash. */
    int len = snprintf(buf, sizeof buf, "\x01%.*s:%lld", (int)(n < 60 ? n : 60), digits, (long long)k);
    return asm_strndup(&a->arena, buf, (size_t)len);
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct parser {
    asm_ctx *a;
    const char *text;
    const char *p;
    asm_loc loc;
    int depth;
    bool failed;
} parser;

static uint32_t col_of(const parser *ps, const char *at)
{
    return ps->loc.col + (uint32_t)(at - ps->text);
}

/* The token at p, for "found '...'" in messages. */
static void describe_at(const char *p, char *buf, size_t n)
{
    p = asm_skip_space(p);
    if (!*p) {
        snprintf(buf, n, "end of line");
        return;
    }
    size_t len = 0;
    if (asm_is_ident_char((unsigned char)*p) || *p == '$') {
        while (p[len] && (asm_is_ident_char((unsigned char)p[len]) || p[len] == '$' || p[len] == ':' ||
                          p[len] == '+' || p[len] == '='))
            len++;
    } else
        len = 1;
    if (len > 40)
        len = 40;
    snprintf(buf, n, "'%.*s'", (int)len, p);
}

static void perr(parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *ps, const char *at, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    asm_error(ps->a, asm_loc_col(ps->loc, col_of(ps, at)), "%s", msg);
}

static asm_expr *node(parser *ps, int kind, const char *at)
{
    asm_expr *e = asm_alloc(&ps->a->arena, sizeof *e);
    e->kind = (uint8_t)kind;
    e->col = col_of(ps, at);
    return e;
}

static int digit_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

/* A character after a backslash in a string or character constant. */
static int parse_escape(const char **pp)
{
    const char *p = *pp;
    int c = (unsigned char)*p++;
    switch (c) {
    case 'n': c = '\n'; break;
    case 't': c = '\t'; break;
    case 'r': c = '\r'; break;
    case 'a': c = '\a'; break;
    case 'b': c = '\b'; break;
    case 'f': c = '\f'; break;
    case 'v': c = '\v'; break;
    case 'x': {
        int v = 0, k = 0;
        while (k < 2 && digit_value((unsigned char)*p) < 16) { v = v * 16 + digit_value((unsigned char)*p); p++; k++; }
        c = v;
        break;
    }
    default:
        if (c >= '0' && c <= '7') {
            int v = c - '0', k = 1;
            while (k < 3 && *p >= '0' && *p <= '7') { v = v * 8 + (*p - '0'); p++; k++; }
            c = v & 0xff;
        }
        break;   /* \\ \" \' and anything else stand for themselves */
    }
    *pp = p;
    return c;
}

static asm_expr *parse_binary(parser *ps, int min_prec);

static asm_expr *parse_number(parser *ps)
{
    const char *start = ps->p, *p = ps->p;
    /* Numeric local label references: 1f, 1b (but 0b101 is binary). */
    const char *d = p;
    while (*d >= '0' && *d <= '9')
        d++;
    if ((*d == 'f' || *d == 'b') && !asm_is_ident_char((unsigned char)d[1]) &&
        !(d - p == 1 && p[0] == '0' && *d == 'b' && (d[1] == '0' || d[1] == '1'))) {
        size_t n = (size_t)(d - p);
        if (n > 40) {
            perr(ps, start, "local label '%.40s...' is too long", p);
            return NULL;
        }
        asm_expr *e = node(ps, EX_SYM, start);
        int64_t k = asm_local_count(ps->a, p, n, false);
        if (*d == 'b') {
            if (k == 0) {
                perr(ps, start, "local label '%.*sb' has no earlier definition '%.*s:'", (int)n, p, (int)n, p);
                return NULL;
            }
            k--;
        }
        e->name = asm_local_name(ps->a, p, n, k);
        e->shown = asm_strndup(&ps->a->arena, p, n + 1);
        ps->p = d + 1;
        return e;
    }
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { base = 16; p += 2; }
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) { base = 2; p += 2; }
    uint64_t v = 0;
    const char *digits = p;
    bool overflow = false;
    while (digit_value((unsigned char)*p) < (int)base) {
        unsigned dv = (unsigned)digit_value((unsigned char)*p);
        if (v > (UINT64_MAX - dv) / base)
            overflow = true;
        v = v * base + dv;
        p++;
    }
    if (p == digits || asm_is_ident_char((unsigned char)*p)) {
        const char *q = p;
        while (asm_is_ident_char((unsigned char)*q)) q++;
        perr(ps, start, "malformed number '%.*s'", (int)(q - start > 40 ? 40 : q - start), start);
        return NULL;
    }
    if (overflow) {
        perr(ps, start, "number '%.*s' does not fit in 64 bits", (int)(p - start > 40 ? 40 : p - start), start);
        return NULL;
    }
    asm_expr *e = node(ps, EX_NUM, start);
    e->num = (int64_t)v;
    ps->p = p;
    return e;
}

static asm_expr *parse_primary(parser *ps)
{
    const char *p = ps->p = asm_skip_space(ps->p);
    unsigned char c = (unsigned char)*p;
    if (c >= '0' && c <= '9')
        return parse_number(ps);
    if (c == '\'') {
        const char *q = p + 1;
        int v;
        if (*q == '\\' && q[1]) {
            q++;
            v = parse_escape(&q);
        } else if (*q && *q != '\'') {
            v = (unsigned char)*q++;
        } else {
            perr(ps, p, "empty character constant");
            return NULL;
        }
        if (*q != '\'') {
            perr(ps, p, "unterminated character constant");
            return NULL;
        }
        asm_expr *e = node(ps, EX_NUM, p);
        e->num = v;
        ps->p = q + 1;
        return e;
    }
    if (c == '(') {
        ps->p = p + 1;
        asm_expr *e = parse_binary(ps, 0);
        if (!e)
            return NULL;
        ps->p = asm_skip_space(ps->p);
        if (*ps->p != ')') {
            char found[64];
            describe_at(ps->p, found, sizeof found);
            perr(ps, ps->p, "expected ')' to close the '(' at column %u, found %s", col_of(ps, p), found);
            return NULL;
        }
        ps->p++;
        return e;
    }
    if (c == '.' && !asm_is_ident_char((unsigned char)p[1])) {
        asm_expr *e = node(ps, EX_DOT, p);
        asm_ctx *a = ps->a;
        e->section = a->cur_section;
        e->num = a->cur_section >= 0 ? a->sections[a->cur_section].size : 0;
        ps->p = p + 1;
        return e;
    }
    if (asm_is_ident_start(c)) {
        const char *q = p;
        while (asm_is_ident_char((unsigned char)*q))
            q++;
        char *name = asm_strndup(&ps->a->arena, p, (size_t)(q - p));
        ps->p = q;
        /* A constant known now is taken now, so `.set i, i+1` in a .rept
         * sees each value in turn. */
        asm_symbol *s = asm_find_const(ps->a, name);
        if (s && s->known && !asm_find_label(ps->a, name, ps->a->cur_tile)) {
            asm_expr *e = node(ps, EX_NUM, p);
            e->num = s->value;
            return e;
        }
        asm_expr *e = node(ps, EX_SYM, p);
        e->name = e->shown = name;
        return e;
    }
    char found[64];
    describe_at(p, found, sizeof found);
    perr(ps, p, "expected an expression, found %s", found);
    return NULL;
}

static asm_expr *parse_unary(parser *ps)
{
    const char *p = ps->p = asm_skip_space(ps->p);
    int op = -1;
    if (*p == '-') op = OP_NEG;
    else if (*p == '~') op = OP_NOT;
    else if (*p == '!' && p[1] != '=') op = OP_LNOT;
    else if (*p == '+') op = OP_PLUS;
    if (op < 0)
        return parse_primary(ps);
    if (++ps->depth > ASM_MAX_EXPR_NESTING) {
        perr(ps, p, "expression nested more than %d deep", ASM_MAX_EXPR_NESTING);
        return NULL;
    }
    ps->p = p + 1;
    asm_expr *x = parse_unary(ps);
    ps->depth--;
    if (!x)
        return NULL;
    asm_expr *e = node(ps, EX_UNARY, p);
    e->op = (uint8_t)op;
    e->a = x;
    return e;
}

/* Binary operators, C precedence (higher binds tighter). */
static const struct { const char *tok; uint8_t op; uint8_t prec; } binops[] = {
    {"||", OP_LOR, 1}, {"&&", OP_LAND, 2},
    {"<<", OP_SHL, 8}, {">>", OP_SHR, 8},
    {"<=", OP_LE, 7}, {">=", OP_GE, 7}, {"==", OP_EQ, 6}, {"!=", OP_NE, 6},
    {"|", OP_OR, 3}, {"^", OP_XOR, 4}, {"&", OP_AND, 5},
    {"<", OP_LT, 7}, {">", OP_GT, 7},
    {"+", OP_ADD, 9}, {"-", OP_SUB, 9},
    {"*", OP_MUL, 10}, {"/", OP_DIV, 10}, {"%", OP_MOD, 10},
};

static int peek_binop(const char *p, size_t *len)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++) {
        size_t n = strlen(binops[i].tok);
        if (!strncmp(p, binops[i].tok, n)) {
            /* "+=" ends an operand ($m0+=), it is not an addition. */
            if (binops[i].op == OP_ADD && p[1] == '=')
                return -1;
            *len = n;
            return (int)i;
        }
    }
    return -1;
}

static asm_expr *parse_binary(parser *ps, int min_prec)
{
    if (++ps->depth > ASM_MAX_EXPR_NESTING) {
        perr(ps, ps->p, "expression nested more than %d deep", ASM_MAX_EXPR_NESTING);
        return NULL;
    }
    asm_expr *lhs = parse_unary(ps);
    while (lhs) {
        const char *p = ps->p = asm_skip_space(ps->p);
        size_t len;
        int i = peek_binop(p, &len);
        if (i < 0 || binops[i].prec < min_prec)
            break;
        ps->p = p + len;
        asm_expr *rhs = parse_binary(ps, binops[i].prec + 1);
        if (!rhs) {
            lhs = NULL;
            break;
        }
        asm_expr *e = node(ps, EX_BINARY, p);
        e->op = binops[i].op;
        e->a = lhs;
        e->b = rhs;
        lhs = e;
    }
    ps->depth--;
    return lhs;
}

asm_expr *asm_parse_expr(asm_ctx *a, const char *text, const char **pp, asm_loc loc)
{
    parser ps = { .a = a, .text = text, .p = *pp, .loc = loc };
    asm_expr *e = parse_binary(&ps, 0);
    if (e)
        *pp = asm_skip_space(ps.p);
    return e;
}

/* ---- evaluation -------------------------------------------------------------- */

static enum asm_eval_status eval(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc,
                                 enum asm_eval_mode mode, asm_value *out);

static enum asm_eval_status unknown(asm_ctx *a, const char *fmt, const char *arg)
{
    snprintf(a->unknown_why, sizeof a->unknown_why, fmt, arg);
    return EV_UNKNOWN;
}

static enum asm_eval_status eval_symbol(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc,
                                        enum asm_eval_mode mode, asm_value *out)
{
    asm_symbol *s = asm_find_label(a, e->name, tile);
    if (s) {
        const asm_section *sec = &a->sections[s->section];
        if (sec->placed) {
            out->v = (int64_t)sec->base + s->offset;
            out->section = -1;
        } else {
            out->v = s->offset;
            out->section = s->section;
        }
        return EV_OK;
    }
    s = asm_find_const(a, e->name);
    if (s) {
        if (s->known) {
            out->v = s->value;
            out->section = -1;
            return EV_OK;
        }
        if (!s->expr)
            return unknown(a, "'%s' is not defined yet", e->shown);
        if (s->evaluating) {
            asm_error(a, asm_loc_col(loc, e->col), "symbol '%s' is defined in terms of itself", e->shown);
            return EV_ERROR;
        }
        s->evaluating = true;
        enum asm_eval_status st = eval(a, s->expr, s->expr_tile, s->loc, mode, out);
        s->evaluating = false;
        if (st == EV_OK && out->section < 0) {
            s->known = true;
            s->value = out->v;
            s->expr = NULL;
        }
        return st;
    }
    if (mode == EVAL_FINAL) {
        if (e->name[0] == '\x01')
            asm_error(a, asm_loc_col(loc, e->col), "undefined local label '%s': no '%.*s:' follows", e->shown,
                      (int)strlen(e->shown) - 1, e->shown);
        else
            asm_error(a, asm_loc_col(loc, e->col), "undefined symbol '%s'", e->shown);
        return EV_ERROR;
    }
    return unknown(a, e->name[0] == '\x01' ? "local label '%s' is not defined yet" : "'%s' is not defined yet",
                   e->shown);
}

static int64_t wrap(uint64_t v) { return (int64_t)v; }

static enum asm_eval_status eval(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc,
                                 enum asm_eval_mode mode, asm_value *out)
{
    if (++a->eval_steps > ASM_MAX_EVAL_STEPS || a->eval_depth >= ASM_MAX_EVAL_DEPTH) {
        asm_error(a, asm_loc_col(loc, e->col), "expression too complex to evaluate (deeper than %d, or more than %d steps)",
                  ASM_MAX_EVAL_DEPTH, ASM_MAX_EVAL_STEPS);
        return EV_ERROR;
    }
    out->section = -1;
    switch (e->kind) {
    case EX_NUM:
        out->v = e->num;
        return EV_OK;
    case EX_DOT: {
        const asm_section *sec = e->section >= 0 ? &a->sections[e->section] : NULL;
        if (!sec || sec->placed) {
            out->v = (sec ? (int64_t)sec->base : 0) + e->num;
        } else {
            out->v = e->num;
            out->section = e->section;
        }
        return EV_OK;
    }
    case EX_SYM: {
        a->eval_depth++;
        enum asm_eval_status st = eval_symbol(a, e, tile, loc, mode, out);
        a->eval_depth--;
        return st;
    }
    default: break;
    }
    asm_value x, y = { 0, -1 };
    a->eval_depth++;
    enum asm_eval_status st = eval(a, e->a, tile, loc, mode, &x);
    if (st == EV_OK && e->kind == EX_BINARY)
        st = eval(a, e->b, tile, loc, mode, &y);
    a->eval_depth--;
    if (st != EV_OK)
        return st;
    if (e->kind == EX_UNARY) {
        if (x.section >= 0 && e->op != OP_PLUS)
            return unknown(a, "%s", "it uses an address not fixed until the sections are placed");
        out->section = x.section;
        switch (e->op) {
        case OP_NEG: out->v = wrap(0u - (uint64_t)x.v); break;
        case OP_NOT: out->v = ~x.v; break;
        case OP_LNOT: out->v = !x.v; break;
        default: out->v = x.v; break;
        }
        return EV_OK;
    }
    /* Section-relative arithmetic: rel + abs, rel - abs, rel - rel (same). */
    if (x.section >= 0 || y.section >= 0) {
        if (e->op == OP_ADD && (x.section < 0 || y.section < 0)) {
            out->v = wrap((uint64_t)x.v + (uint64_t)y.v);
            out->section = x.section >= 0 ? x.section : y.section;
            return EV_OK;
        }
        if (e->op == OP_SUB && y.section < 0) {
            out->v = wrap((uint64_t)x.v - (uint64_t)y.v);
            out->section = x.section;
            return EV_OK;
        }
        if (e->op == OP_SUB && x.section == y.section) {
            out->v = wrap((uint64_t)x.v - (uint64_t)y.v);
            return EV_OK;
        }
        return unknown(a, "%s", "it uses an address not fixed until the sections are placed");
    }
    int64_t l = x.v, r = y.v;
    switch (e->op) {
    case OP_MUL: out->v = wrap((uint64_t)l * (uint64_t)r); break;
    case OP_DIV: case OP_MOD:
        if (r == 0) {
            asm_error(a, asm_loc_col(loc, e->col), "division by zero");
            return EV_ERROR;
        }
        if (l == INT64_MIN && r == -1)
            out->v = e->op == OP_DIV ? INT64_MIN : 0;
        else
            out->v = e->op == OP_DIV ? l / r : l % r;
        break;
    case OP_ADD: out->v = wrap((uint64_t)l + (uint64_t)r); break;
    case OP_SUB: out->v = wrap((uint64_t)l - (uint64_t)r); break;
    case OP_SHL: case OP_SHR:
        if (r < 0 || r > 63) {
            asm_error(a, asm_loc_col(loc, e->col), "shift count %lld out of range (0..63)", (long long)r);
            return EV_ERROR;
        }
        if (e->op == OP_SHL)
            out->v = wrap((uint64_t)l << r);
        else
            out->v = l < 0 ? ~(int64_t)(~(uint64_t)l >> r) : (int64_t)((uint64_t)l >> r);
        break;
    case OP_LT: out->v = l < r; break;
    case OP_LE: out->v = l <= r; break;
    case OP_GT: out->v = l > r; break;
    case OP_GE: out->v = l >= r; break;
    case OP_EQ: out->v = l == r; break;
    case OP_NE: out->v = l != r; break;
    case OP_AND: out->v = l & r; break;
    case OP_XOR: out->v = l ^ r; break;
    case OP_OR: out->v = l | r; break;
    case OP_LAND: out->v = l && r; break;
    case OP_LOR: out->v = l || r; break;
    default: out->v = 0; break;
    }
    return EV_OK;
}

enum asm_eval_status asm_eval(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc,
                              enum asm_eval_mode mode, asm_value *out)
{
    a->eval_steps = 0;
    a->eval_depth = 0;
    a->unknown_why[0] = 0;
    return eval(a, e, tile, loc, mode, out);
}

bool asm_eval_const(asm_ctx *a, const asm_expr *e, asm_loc loc, const char *what, int64_t *out)
{
    asm_value v;
    enum asm_eval_status st = asm_eval(a, e, a->cur_tile, loc, EVAL_NOW, &v);
    if (st == EV_ERROR)
        return false;
    if (st == EV_OK && v.section >= 0)
        snprintf(a->unknown_why, sizeof a->unknown_why, "it depends on the address of section %s, fixed only "
                 "when the sections are placed", a->sections[v.section].name);
    if (st != EV_OK || v.section >= 0) {
        asm_error(a, loc, "%s needs a value known at this point, but %s", what, a->unknown_why);
        return false;
    }
    *out = v.v;
    return true;
}

/* Evaluate with every address known (pass 2); false after an error. */
bool asm_eval_final(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc, int64_t *out)
{
    asm_value v;
    if (asm_eval(a, e, tile, loc, EVAL_FINAL, &v) != EV_OK)
        return false;
    *out = v.v;
    return true;
}

bool asm_parse_const(asm_ctx *a, const char *text, const char **p, asm_loc loc, const char *what, int64_t *out)
{
    const char *start = asm_skip_space(*p);
    asm_expr *e = asm_parse_expr(a, text, p, loc);
    if (!e)
        return false;
    return asm_eval_const(a, e, asm_loc_col(loc, loc.col + (uint32_t)(start - text)), what, out);
}

/* ---- strings and floats --------------------------------------------------------- */

bool asm_parse_string(asm_ctx *a, const char *text, const char **pp, asm_loc loc, char **out, size_t *len)
{
    const char *p = asm_skip_space(*pp);
    if (*p != '"') {
        char found[64];
        describe_at(p, found, sizeof found);
        asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(p - text)), "expected a string in double quotes, found %s", found);
        return false;
    }
    const char *start = p++;
    size_t cap = strlen(p) + 1, n = 0;
    char *buf = asm_alloc(&a->arena, cap);
    while (*p && *p != '"') {
        int c = (unsigned char)*p++;
        if (c == '\\' && *p)
            c = parse_escape(&p);
        buf[n++] = (char)c;
    }
    if (*p != '"') {
        asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(start - text)), "unterminated string");
        return false;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    *pp = asm_skip_space(p + 1);
    return true;
}

bool asm_parse_float(asm_ctx *a, const char *text, const char **pp, asm_loc loc, double *out)
{
    const char *p = asm_skip_space(*pp);
    const char *start = p;
    char buf[80];
    size_t n = 0;
    while (*p && (isalnum((unsigned char)*p) || *p == '.' || *p == '+' || *p == '-' || *p == '_')) {
        /* a sign only at the start or after an exponent letter */
        if ((*p == '+' || *p == '-') && n > 0 && !strchr("eEpP", buf[n - 1]))
            break;
        if (n + 1 >= sizeof buf)
            break;
        buf[n++] = *p++;
    }
    buf[n] = 0;
    char *end = NULL;
    double d = n ? strtod(buf, &end) : 0.0;
    if (!n || !end || *end) {
        char found[64];
        if (n)
            snprintf(found, sizeof found, "'%.40s'", buf);
        else
            describe_at(p, found, sizeof found);
        asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(start - text)),
                  "expected a floating-point number, found %s", found);
        return false;
    }
    *out = d;
    *pp = asm_skip_space(p);
    return true;
}
