/*
 * debugger_expr.c — the debugger's expressions (debugger_expr.h): a
 * recursive-descent parser that builds a typed tree, and its evaluator.
 *
 * Every node's type is known when parsing (registers are u32, memory has
 * the type of its pointer, a tensor element its tensor's), so the parser
 * does the promotions and conversions (debugger_expr.h) once, inserting
 * conversion nodes where a value changes, and refuses type mistakes.
 * Sub-trees that read nothing of the machine are computed then (constant
 * folding).  Each node carries the function that evaluates it, chosen by
 * its operation and operand class; evaluation is a walk with raw 64-bit
 * values: no types to look at, no allocation.  A symbol's address on each
 * tile is a table sorted by tile, made when parsing.
 */
#include "debugger_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"

#define MAX_DEPTH 200
#define UNTYPED 0xff              /* an address without a pointed-to type: bytes, read as u32 */

/* ---- types ------------------------------------------------------------------ */

static const struct {
    const char *name;
    uint8_t bits;
    bool is_signed, is_float;
} types[] = {
    [DBG_BOOL] = { "bool", 8, false, false }, [DBG_I8] = { "i8", 8, true, false },
    [DBG_U8] = { "u8", 8, false, false },     [DBG_I16] = { "i16", 16, true, false },
    [DBG_U16] = { "u16", 16, false, false },  [DBG_I32] = { "i32", 32, true, false },
    [DBG_U32] = { "u32", 32, false, false },  [DBG_I64] = { "i64", 64, true, false },
    [DBG_U64] = { "u64", 64, false, false },  [DBG_F16] = { "f16", 16, true, true },
    [DBG_F32] = { "f32", 32, true, true },    [DBG_F64] = { "f64", 64, true, true },
    [DBG_ADDR] = { "address", 32, false, false },
};

/* The names a cast takes. */
static const struct {
    const char *name;
    dbg_type type;
} type_names[] = {
    { "bool", DBG_BOOL }, { "i8", DBG_I8 },   { "u8", DBG_U8 },   { "i16", DBG_I16 }, { "u16", DBG_U16 },
    { "i32", DBG_I32 },   { "u32", DBG_U32 }, { "i64", DBG_I64 }, { "u64", DBG_U64 }, { "f16", DBG_F16 },
    { "f32", DBG_F32 },   { "f64", DBG_F64 }, { "int", DBG_I32 }, { "unsigned", DBG_U32 },
    { "float", DBG_F32 }, { "double", DBG_F64 },
};

/* "u32", "f32", "address", ... */
const char *dbg_type_name(dbg_type t)
{
    return (unsigned)t < sizeof types / sizeof types[0] ? types[t].name : "?";
}

/* A type's class and size. */
static bool is_float(uint8_t t) { return types[t].is_float; }
static bool is_signed_int(uint8_t t) { return !types[t].is_float && types[t].is_signed; }
static unsigned bytes_of(uint8_t t) { return types[t].bits / 8u; }

/* A raw value: the evaluator's, typed by its node. */
typedef union raw {
    int64_t i;
    uint64_t u;
    double f;
} raw;

/* A float rounded to type t (f16, f32; f64 as is). */
static double round_float(double f, uint8_t t)
{
    if (t == DBG_F32)
        return (double)(float)f;
    if (t == DBG_F16)
        return (double)fp16_to_f32(fp16_from_f32((float)f));
    return f;
}

/* An integer wrapped to type t: sign- or zero-extended from its width. */
static void wrap_int(raw *r, uint8_t t)
{
    switch (t) {
    case DBG_BOOL: r->u = r->u != 0; break;
    case DBG_I8: r->i = (int8_t)r->u; break;
    case DBG_U8: r->u = (uint8_t)r->u; break;
    case DBG_I16: r->i = (int16_t)r->u; break;
    case DBG_U16: r->u = (uint16_t)r->u; break;
    case DBG_I32: r->i = (int32_t)r->u; break;
    case DBG_U32: case DBG_ADDR: r->u = (uint32_t)r->u; break;
    default: break;
    }
}

/* A float to an integer type: truncated toward zero, saturated at the
 * type's range (NaN gives 0); a negative float to an unsigned type wraps
 * as it does through i64 ((u32)-1.0 is 0xffffffff). */
static void float_to_int(raw *r, uint8_t t)
{
    double f = r->f;
    unsigned w = types[t].bits;
    if (t == DBG_BOOL) {
        r->u = f != 0;
    } else if (f != f) {
        r->u = 0;
    } else if (types[t].is_signed) {
        int64_t max = w == 64 ? INT64_MAX : (int64_t)((1ull << (w - 1)) - 1), min = -max - 1;
        r->i = f >= (double)max + 1.0 ? max : f < (double)min ? min : (int64_t)f;
    } else {
        uint64_t max = w == 64 ? UINT64_MAX : (1ull << w) - 1;
        if (f >= (double)max + 1.0)
            r->u = max;
        else if (f <= -1.0)
            r->i = f < -9223372036854775808.0 ? INT64_MIN : (int64_t)f;
        else
            r->u = (uint64_t)f;
        wrap_int(r, t);
    }
}

/* Convert r from type `from` to type `to`. */
static void convert(raw *r, uint8_t from, uint8_t to)
{
    if (is_float(from)) {
        if (is_float(to))
            r->f = round_float(r->f, to);
        else
            float_to_int(r, to);
    } else if (is_float(to)) {
        r->f = round_float(is_signed_int(from) ? (double)r->i : (double)r->u, to);
    } else {
        wrap_int(r, to);
    }
}

/* Whether converting from -> to leaves every raw value as it is. */
static bool conversion_is_identity(uint8_t from, uint8_t to)
{
    if (from == to)
        return true;
    if (to == DBG_BOOL)
        return false;
    if (is_float(from) || is_float(to))
        return is_float(from) && is_float(to) && types[to].bits >= types[from].bits;
    if (types[to].bits == 64)
        return true;
    unsigned wf = from == DBG_BOOL ? 1 : types[from].bits, wt = types[to].bits;
    if (!types[from].is_signed)
        return types[to].is_signed ? wt > wf : wt >= wf;
    return types[to].is_signed && wt >= wf;
}

/* The type an operand is computed in: integers in 64 bits (i64, or u64
 * for a u64), f16 as f32, other floats as they are (in double). */
static uint8_t promote(uint8_t t)
{
    if (t == DBG_F16)
        return DBG_F32;
    if (is_float(t))
        return t;
    return t == DBG_U64 ? DBG_U64 : DBG_I64;
}

/* The type two operands meet in: the wider float if either is one, else
 * u64 if either is a u64, else i64. */
static uint8_t common_type(uint8_t a, uint8_t b)
{
    a = promote(a);
    b = promote(b);
    if (a == DBG_F64 || b == DBG_F64)
        return DBG_F64;
    if (a == DBG_F32 || b == DBG_F32)
        return DBG_F32;
    return a == DBG_U64 || b == DBG_U64 ? DBG_U64 : DBG_I64;
}

/* ---- values ------------------------------------------------------------------ */

/* A value of type t from its bits (little-endian, as many bytes as t has). */
static void from_bits(raw *r, uint64_t bits, uint8_t t)
{
    if (t == DBG_F32) {
        uint32_t w = (uint32_t)bits;
        float f;
        memcpy(&f, &w, 4);
        r->f = f;
    } else if (t == DBG_F64) {
        memcpy(&r->f, &bits, 8);
    } else if (t == DBG_F16) {
        r->f = fp16_to_f32((f16_t)bits);
    } else {
        r->u = bits;
        wrap_int(r, t);
    }
}

/* A value of type t from its little-endian bytes (bytes_of(t) of them). */
dbg_value dbg_value_from_bytes(dbg_type t, const void *p)
{
    uint64_t bits = 0;
    memcpy(&bits, p, bytes_of(t));
    raw r;
    from_bits(&r, bits, t);
    dbg_value v = { .type = t, .u = r.u };
    return v;
}

/* Whether a value is non-zero. */
bool dbg_value_true(const dbg_value *v)
{
    return is_float(v->type) ? v->f != 0 : v->u != 0;
}

/* The bits of v at its type's width. */
static uint64_t value_bits(const dbg_value *v)
{
    if (v->type == DBG_F64) {
        uint64_t b;
        memcpy(&b, &v->f, 8);
        return b;
    }
    if (v->type == DBG_F32) {
        float f = (float)v->f;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    if (v->type == DBG_F16)
        return fp16_from_f32((float)v->f);
    unsigned bits = types[v->type].bits;
    return bits == 64 ? v->u : v->u & ((1ull << bits) - 1);
}

/* "65 'A'": gdb's /c, the value's low byte. */
static void format_char(uint64_t code, char *buf, size_t n)
{
    unsigned c = (unsigned)(code & 0xff);
    static const char esc_from[] = "\n\t\r\\'", esc_to[] = "ntr\\'";
    const char *e = c ? strchr(esc_from, (int)c) : NULL;
    if (c == 0)
        snprintf(buf, n, "0 '\\0'");
    else if (e)
        snprintf(buf, n, "%u '\\%c'", c, esc_to[e - esc_from]);
    else if (c >= 0x20 && c < 0x7f)
        snprintf(buf, n, "%u '%c'", c, (char)c);
    else
        snprintf(buf, n, "%u '\\%03o'", c, c);
}

/* v's bits (at its width) as a float: f32 for 32 bits, f16 for 16, f64 for 64. */
static void format_bits_as_float(const dbg_value *v, char *buf, size_t n)
{
    uint64_t b = value_bits(v);
    switch (types[v->type].bits) {
    case 64: {
        double f;
        memcpy(&f, &b, 8);
        snprintf(buf, n, "%.17g", f);
        break;
    }
    case 32: {
        uint32_t w = (uint32_t)b;
        float f;
        memcpy(&f, &w, 4);
        snprintf(buf, n, "%.9g", (double)f);
        break;
    }
    case 16: snprintf(buf, n, "%.6g", (double)fp16_to_f32((f16_t)b)); break;
    default: snprintf(buf, n, "%.9g", is_signed_int(v->type) ? (double)v->i : (double)v->u); break;
    }
}

/* v as gdb's /FMT shows it (debugger_expr.h). */
char *dbg_value_format(const dbg_value *v, char fmt, char *buf, size_t n)
{
    uint64_t b = value_bits(v);
    unsigned bits = types[v->type].bits;
    switch (fmt) {
    case 'x': case 'a': snprintf(buf, n, "0x%llx", (unsigned long long)b); break;
    case 'o': snprintf(buf, n, b ? "0%llo" : "0", (unsigned long long)b); break;
    case 'u': snprintf(buf, n, "%llu", (unsigned long long)b); break;
    case 'd': {
        int64_t s = bits == 64 ? (int64_t)b : (int64_t)(b << (64 - bits)) >> (64 - bits);
        snprintf(buf, n, "%lld", (long long)s);
        break;
    }
    case 't': {
        char tmp[65];
        unsigned k = 64;
        tmp[k] = 0;
        do {
            tmp[--k] = (char)('0' + (b & 1));
            b >>= 1;
        } while (b);
        snprintf(buf, n, "%s", tmp + k);
        break;
    }
    case 'c': {
        raw r = { .u = v->u };
        if (is_float(v->type))
            float_to_int(&r, DBG_I64);
        format_char(r.u, buf, n);
        break;
    }
    case 'f':
        if (is_float(v->type))
            return dbg_value_format(v, 0, buf, n);
        format_bits_as_float(v, buf, n);
        break;
    default:
        switch (v->type) {
        case DBG_F64: snprintf(buf, n, "%.17g", v->f); break;
        case DBG_F32: snprintf(buf, n, "%.9g", v->f); break;
        case DBG_F16: snprintf(buf, n, "%.6g", v->f); break;
        case DBG_ADDR: snprintf(buf, n, "0x%llx", (unsigned long long)v->u); break;
        default:
            if (is_signed_int(v->type))
                snprintf(buf, n, "%lld", (long long)v->i);
            else
                snprintf(buf, n, "%llu", (unsigned long long)v->u);
            break;
        }
    }
    return buf;
}

/* ---- the tree ------------------------------------------------------------------ */

enum op {
    OP_CONST, OP_MREG, OP_AREG, OP_CSR, OP_CYCLE, OP_SUPERSTEP, OP_TILE, OP_CONTEXT, OP_SYM, OP_ELEM, OP_LOAD,
    OP_CONV, OP_BITS, OP_NEG, OP_NOT, OP_BNOT,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_SHL, OP_SHR, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
    OP_BAND, OP_BXOR, OP_BOR, OP_LAND, OP_LOR,
    OP_PADD, OP_PSUB, OP_PDIFF,   /* address + integer, address - integer, address - address */
};

typedef struct node node;
typedef struct ectx ectx;
/* A node's evaluation: one function per operation and operand class,
 * chosen when parsing, so a walk makes one well-predicted call a node. */
typedef bool eval_fn(const ectx *c, const node *x, raw *r);

struct node {
    eval_fn *fn;
    uint8_t op;
    uint8_t type;                 /* of its value */
    uint8_t otype;                /* of its operands (both children of a binary node; the child of
                                     a conversion, a load's address) */
    uint8_t pointee;              /* an address's pointed-to type, or UNTYPED */
    int32_t a, b;                 /* children; OP_SYM: its first place and count; OP_ELEM: its
                                     first index in args and the count */
    raw k;                        /* OP_CONST: the value; registers: the number; OP_PADD,
                                     OP_PSUB, OP_PDIFF: the pointed-to size; OP_SYM: its name's
                                     offset in names */
    const tmap_tensor *tensor;    /* OP_ELEM */
};

typedef struct sym_place {
    uint32_t tile, addr;
    size_t seq;                   /* its order in the executable (the first one on a tile wins) */
} sym_place;

struct dbg_expr {
    node *nodes;
    size_t n_nodes, cap_nodes;
    int32_t *args;
    size_t n_args, cap_args;
    sym_place *places;
    size_t n_places, cap_places;
    char *names;
    size_t n_names, cap_names;
    int32_t root;
    uint32_t tiles_per_chip;
    bool reads_tile;              /* registers, memory or the cycle of the tile evaluated on */
};

/* Free a parsed expression (NULL does nothing). */
void dbg_expr_free(dbg_expr *e)
{
    if (!e)
        return;
    free(e->nodes);
    free(e->args);
    free(e->places);
    free(e->names);
    free(e);
}

/* The type of the value e gives. */
dbg_type dbg_expr_type(const dbg_expr *e)
{
    return (dbg_type)e->nodes[e->root].type;
}

/* Room for `more` items of `size` bytes in a growing array. */
static bool grow(void **p, size_t *cap, size_t n, size_t more, size_t size)
{
    if (n + more <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < n + more)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* ---- evaluation ------------------------------------------------------------------ */

struct ectx {
    const debugger *d;
    const dbg_expr *e;
    const node *nodes;
    const ipu_tile *t;            /* the tile evaluated on (NULL: it has no code) */
    const isa_context *k;         /* its context evaluated on */
    uint32_t tile;
    unsigned context;
    char *err;
    size_t err_size;
};

/* Node n's raw value. */
#define EV(c, n, r) ((c)->nodes[n].fn((c), &(c)->nodes[n], (r)))

/* An evaluation error: its message in c->err; returns false. */
static bool efail(const ectx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool efail(const ectx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->err_size, fmt, ap);
    va_end(ap);
    return false;
}

/* Read a value of type t at addr of a tile's memory: straight from its
 * page when the value lies in one that is in page[], else through
 * tmem_read_bytes (a page never written, or one an access watch moved). */
static bool load(const ectx *c, const ipu_tile *t, uint32_t tile, uint64_t addr, uint8_t type, raw *r)
{
    unsigned bytes = bytes_of(type);
    const tile_memory *m = &t->s.mem;
    uint64_t off = addr - m->base, bits = 0;
    if (addr < m->base || off + bytes > m->size_bytes)
        return efail(c, "tile %u: 0x%llx (%u byte%s) is not in tile memory (0x%x-0x%x)", tile,
                     (unsigned long long)addr, bytes, bytes == 1 ? "" : "s", m->base, m->base + m->size_bytes - 1);
    uint32_t in_page = (uint32_t)off & (TMEM_PAGE_BYTES - 1u);
    if (in_page + bytes <= TMEM_PAGE_BYTES) {
        const uint8_t *page = m->page[off >> TMEM_PAGE_SHIFT];
        if (page) {
            switch (bytes) {
            case 1: bits = page[in_page]; break;
            case 2: { uint16_t v; memcpy(&v, page + in_page, 2); bits = v; break; }
            case 4: { uint32_t v; memcpy(&v, page + in_page, 4); bits = v; break; }
            default: memcpy(&bits, page + in_page, 8); break;
            }
        } else {
            tmem_read_bytes(m, (uint32_t)addr, &bits, bytes);
        }
    } else {
        tmem_read_bytes(m, (uint32_t)addr, &bits, bytes);
    }
    from_bits(r, bits, type);
    return true;
}

/* A constant. */
static bool ev_const(const ectx *c, const node *x, raw *r)
{
    (void)c;
    *r = x->k;
    return true;
}

/* Registers and CSRs of the context, the tile's cycle, and where the
 * evaluation is. */
static bool ev_mreg(const ectx *c, const node *x, raw *r) { r->u = c->k->m[x->k.u]; return true; }
static bool ev_areg(const ectx *c, const node *x, raw *r) { r->u = c->k->a[x->k.u]; return true; }
static bool ev_cycle(const ectx *c, const node *x, raw *r)
{
    (void)x;
    r->u = engine_tile_cycle(c->d->g, c->tile);
    return true;
}
static bool ev_tile(const ectx *c, const node *x, raw *r) { (void)x; r->u = c->tile; return true; }
static bool ev_context(const ectx *c, const node *x, raw *r) { (void)x; r->u = c->context; return true; }

/* A CSR as the debugger shows it (dbg_register_read). */
static bool ev_csr(const ectx *c, const node *x, raw *r)
{
    r->u = dbg_register_read(c->t, c->context, 'c', (unsigned)x->k.u);
    return true;
}

/* Supersteps ended on the chip of the tile evaluated on. */
static bool ev_superstep(const ectx *c, const node *x, raw *r)
{
    (void)x;
    r->u = engine_supersteps_done(c->d->g, c->tile / c->e->tiles_per_chip);
    return true;
}

/* A symbol's address on the tile evaluated on. */
static bool ev_symbol(const ectx *c, const node *x, raw *r)
{
    const sym_place *p = c->e->places + x->a;
    size_t lo = 0, hi = (size_t)x->b;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p[mid].tile < c->tile)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* a symbol of every tile sorts last */
    if ((lo == (size_t)x->b || p[lo].tile != c->tile) && x->b > 0 && p[x->b - 1].tile == EXE_EVERY_TILE &&
        exe_tile(c->d->e, c->tile))
        lo = (size_t)x->b - 1;
    if (lo == (size_t)x->b || (p[lo].tile != c->tile && p[lo].tile != EXE_EVERY_TILE))
        return efail(c, "no symbol '%s' on tile %u", c->e->names + x->k.u, c->tile);
    r->u = p[lo].addr;
    return true;
}

/* A tensor element, from whichever tile holds it. */
static bool ev_element(const ectx *c, const node *x, raw *r)
{
    const tmap_tensor *t = x->tensor;
    uint64_t idx[TMAP_MAX_RANK];
    for (int32_t i = 0; i < x->b; i++) {
        raw v;
        if (!EV(c, c->e->args[x->a + i], &v))
            return false;
        if (v.i < 0 || (uint64_t)v.i >= t->dims[i])
            return efail(c, "index %lld is out of range for dimension %d of '%s' (size %llu)", (long long)v.i, i,
                         t->name, (unsigned long long)t->dims[i]);
        idx[i] = (uint64_t)v.i;
    }
    uint32_t tile, addr;
    if (!dbg_tensor_element_place(t, idx, &tile, &addr))
        return efail(c, "no piece of '%s' holds that element", t->name);
    const ipu_tile *holder = engine_tile(c->d->g, tile);
    if (!holder)
        return efail(c, "tile %u has no code in %s", tile, c->d->name);
    return load(c, holder, tile, addr, x->type, r);
}

/* *ADDR on the tile evaluated on. */
static bool ev_load(const ectx *c, const node *x, raw *r)
{
    raw a;
    if (!EV(c, x->a, &a))
        return false;
    if (is_signed_int(x->otype) && a.i < 0)
        return efail(c, "%lld is not an address", (long long)a.i);
    return load(c, c->t, c->tile, a.u, x->type, r);
}

/* A conversion between types. */
static bool ev_conv(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    convert(r, x->otype, x->type);
    return true;
}

/* A register's bits as f32 or f16 ((f32)$a0). */
static bool ev_bits(const ectx *c, const node *x, raw *r)
{
    raw a;
    if (!EV(c, x->a, &a))
        return false;
    from_bits(r, x->type == DBG_F16 ? a.u & 0xffff : a.u & 0xffffffff, x->type);
    return true;
}

/* Unary -. */
static bool ev_neg(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    if (is_float(x->type)) {
        r->f = -r->f;
    } else {
        r->u = 0 - r->u;
        wrap_int(r, x->type);
    }
    return true;
}

/* ! of a bool. */
static bool ev_not(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    r->u = !r->u;
    return true;
}

/* ~, wrapped to the result's type. */
static bool ev_bnot(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    r->u = ~r->u;
    wrap_int(r, x->type);
    return true;
}

/* &&: the right side only when the left is true. */
static bool ev_land(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    return !r->u || EV(c, x->b, r);
}

/* ||: the right side only when the left is false. */
static bool ev_lor(const ectx *c, const node *x, raw *r)
{
    if (!EV(c, x->a, r))
        return false;
    return r->u || EV(c, x->b, r);
}

/* A comparison of operands of one class (f: floats, i: signed, u: unsigned). */
#define COMPARE(name, field, op)                                                                    \
    static bool name(const ectx *c, const node *x, raw *r)                                          \
    {                                                                                               \
        raw a, b;                                                                                   \
        if (!EV(c, x->a, &a) || !EV(c, x->b, &b))                                                   \
            return false;                                                                           \
        r->u = a.field op b.field;                                                                  \
        return true;                                                                                \
    }
COMPARE(ev_lt_f, f, <) COMPARE(ev_le_f, f, <=) COMPARE(ev_gt_f, f, >) COMPARE(ev_ge_f, f, >=)
COMPARE(ev_eq_f, f, ==) COMPARE(ev_ne_f, f, !=)
COMPARE(ev_lt_i, i, <) COMPARE(ev_le_i, i, <=) COMPARE(ev_gt_i, i, >) COMPARE(ev_ge_i, i, >=)
COMPARE(ev_lt_u, u, <) COMPARE(ev_le_u, u, <=) COMPARE(ev_gt_u, u, >) COMPARE(ev_ge_u, u, >=)
COMPARE(ev_eq_u, u, ==) COMPARE(ev_ne_u, u, !=)
#undef COMPARE

/* Integer + - * & ^ | in 64 bits, wrapped to the result's type; float + - * / in double, rounded. */
#define ARITH(name, field, op, finish)                                                              \
    static bool name(const ectx *c, const node *x, raw *r)                                          \
    {                                                                                               \
        raw a, b;                                                                                   \
        if (!EV(c, x->a, &a) || !EV(c, x->b, &b))                                                   \
            return false;                                                                           \
        r->field = a.field op b.field;                                                              \
        finish;                                                                                     \
        return true;                                                                                \
    }
ARITH(ev_add_u, u, +, wrap_int(r, x->type)) ARITH(ev_sub_u, u, -, wrap_int(r, x->type))
ARITH(ev_mul_u, u, *, wrap_int(r, x->type)) ARITH(ev_and_u, u, &, wrap_int(r, x->type))
ARITH(ev_xor_u, u, ^, wrap_int(r, x->type)) ARITH(ev_or_u, u, |, wrap_int(r, x->type))
ARITH(ev_add_f, f, +, r->f = round_float(r->f, x->type)) ARITH(ev_sub_f, f, -, r->f = round_float(r->f, x->type))
ARITH(ev_mul_f, f, *, r->f = round_float(r->f, x->type)) ARITH(ev_div_f, f, /, r->f = round_float(r->f, x->type))
#undef ARITH

/* Integer / and %: division by zero is an error; INT64_MIN / -1 wraps. */
static bool ev_divmod(const ectx *c, const node *x, raw *r)
{
    raw a, b;
    if (!EV(c, x->a, &a) || !EV(c, x->b, &b))
        return false;
    bool div = x->op == OP_DIV;
    if (b.u == 0)
        return efail(c, "division by zero");
    if (!types[x->otype].is_signed)
        r->u = div ? a.u / b.u : a.u % b.u;
    else if (b.i == -1)
        r->u = div ? 0 - a.u : 0;
    else
        r->i = div ? a.i / b.i : a.i % b.i;
    wrap_int(r, x->type);
    return true;
}

/* << and >> (arithmetic for a signed left side); the count must be below the width. */
static bool ev_shift(const ectx *c, const node *x, raw *r)
{
    raw a, b;
    if (!EV(c, x->a, &a) || !EV(c, x->b, &b))
        return false;
    unsigned bits = types[x->type].bits;
    if (b.i < 0 || b.i >= (int64_t)bits)
        return efail(c, "shift count %lld is out of range for %s (0 to %u)", (long long)b.i, types[x->type].name,
                     bits - 1);
    if (x->op == OP_SHL)
        r->u = a.u << b.i;
    else if (types[x->type].is_signed)
        r->i = a.i >> b.i;
    else
        r->u = a.u >> b.i;
    wrap_int(r, x->type);
    return true;
}

/* Address arithmetic: address +- integer x pointed-to size, and the
 * difference of two addresses in pointed-to units. */
static bool ev_address_arith(const ectx *c, const node *x, raw *r)
{
    raw a, b;
    if (!EV(c, x->a, &a) || !EV(c, x->b, &b))
        return false;
    if (x->op == OP_PDIFF) {
        r->i = ((int64_t)a.u - (int64_t)b.u) / (int64_t)x->k.u;
        return true;
    }
    r->u = x->op == OP_PADD ? a.u + (uint64_t)b.i * x->k.u : a.u - (uint64_t)b.i * x->k.u;
    wrap_int(r, DBG_ADDR);
    return true;
}

/* The evaluation of a node of operation op on operands of type otype. */
static eval_fn *pick(uint8_t op, uint8_t otype)
{
    static eval_fn *const leaves[] = {
        [OP_CONST] = ev_const, [OP_MREG] = ev_mreg, [OP_AREG] = ev_areg, [OP_CSR] = ev_csr,
        [OP_CYCLE] = ev_cycle, [OP_SUPERSTEP] = ev_superstep, [OP_TILE] = ev_tile, [OP_CONTEXT] = ev_context,
        [OP_SYM] = ev_symbol, [OP_ELEM] = ev_element, [OP_LOAD] = ev_load, [OP_CONV] = ev_conv,
        [OP_BITS] = ev_bits, [OP_NEG] = ev_neg, [OP_NOT] = ev_not, [OP_BNOT] = ev_bnot,
        [OP_LAND] = ev_land, [OP_LOR] = ev_lor, [OP_DIV] = ev_divmod, [OP_MOD] = ev_divmod,
        [OP_SHL] = ev_shift, [OP_SHR] = ev_shift, [OP_PADD] = ev_address_arith,
        [OP_PSUB] = ev_address_arith, [OP_PDIFF] = ev_address_arith,
    };
    /* By class: floats, signed, unsigned (equality and + - * & ^ | are the
     * same on the bits of signed and unsigned). */
    static eval_fn *const by_class[][3] = {
        [OP_LT] = { ev_lt_f, ev_lt_i, ev_lt_u }, [OP_LE] = { ev_le_f, ev_le_i, ev_le_u },
        [OP_GT] = { ev_gt_f, ev_gt_i, ev_gt_u }, [OP_GE] = { ev_ge_f, ev_ge_i, ev_ge_u },
        [OP_EQ] = { ev_eq_f, ev_eq_u, ev_eq_u }, [OP_NE] = { ev_ne_f, ev_ne_u, ev_ne_u },
        [OP_ADD] = { ev_add_f, ev_add_u, ev_add_u }, [OP_SUB] = { ev_sub_f, ev_sub_u, ev_sub_u },
        [OP_MUL] = { ev_mul_f, ev_mul_u, ev_mul_u }, [OP_DIV] = { ev_div_f, NULL, NULL },
        [OP_BAND] = { NULL, ev_and_u, ev_and_u }, [OP_BXOR] = { NULL, ev_xor_u, ev_xor_u },
        [OP_BOR] = { NULL, ev_or_u, ev_or_u },
    };
    unsigned cls = is_float(otype) ? 0 : types[otype].is_signed ? 1 : 2;
    if (op < sizeof by_class / sizeof by_class[0] && by_class[op][cls])
        return by_class[op][cls];
    return leaves[op];
}

/* e's value on a tile and context: the tile and context looked up once, then the walk. */
bool dbg_expr_eval(const debugger *d, const dbg_expr *e, uint32_t tile, unsigned context, dbg_value *v, char *err,
                   size_t err_size)
{
    ectx c = { d, e, e->nodes, engine_tile(d->g, tile), NULL, tile, context, err, err_size };
    if (context >= ISA_CONTEXTS)
        return efail(&c, "there is no context %u (0 is the supervisor, 1 to %d the workers)", context, ISA_WORKERS);
    if (c.t)
        c.k = &c.t->s.ctx[context];
    else if (e->reads_tile)
        return efail(&c, "tile %u has no code in %s", tile, d->name);
    raw r;
    if (!EV(&c, e->root, &r))
        return false;
    v->type = (dbg_type)e->nodes[e->root].type;
    v->u = r.u;
    return true;
}

/* ---- parsing: nodes ---------------------------------------------------------------- */

typedef struct parser {
    const debugger *d;
    dbg_expr *e;
    const char *s;                /* the next character */
    char *err;
    size_t err_size;
    int depth;
} parser;

/* A parse error: its message in p->err; returns -1 (no node). */
static int32_t fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int32_t fail(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->err_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* The host ran out of memory. */
static int32_t out_of_memory(parser *p) { return fail(p, "out of host memory"); }

/* Node n (valid until the next node is added). */
static node *at(parser *p, int32_t n) { return &p->e->nodes[n]; }

/* Whether a node's value depends on nothing but constants. */
static bool is_const(parser *p, int32_t n) { return at(p, n)->op == OP_CONST; }

/* Whether op reads nothing of the machine (so constants fold). */
static bool is_pure(uint8_t op) { return op >= OP_CONV; }

/* A new node; a pure one of constants becomes a constant at once (unless
 * computing it fails). */
static int32_t add_node(parser *p, uint8_t op, uint8_t type, uint8_t otype, int32_t a, int32_t b, raw k)
{
    dbg_expr *e = p->e;
    if (!grow((void **)&e->nodes, &e->cap_nodes, e->n_nodes, 1, sizeof *e->nodes))
        return out_of_memory(p);
    int32_t n = (int32_t)e->n_nodes++;
    e->nodes[n] = (node){ .fn = pick(op, otype), .op = op, .type = type, .otype = otype, .pointee = UNTYPED,
                          .a = a, .b = b, .k = k };
    if (op == OP_MREG || op == OP_AREG || op == OP_CSR || op == OP_CYCLE || op == OP_LOAD)
        e->reads_tile = true;
    bool fold = is_pure(op) && (a < 0 || is_const(p, a)) && (b < 0 || is_const(p, b));
    if (op == OP_LAND || op == OP_LOR)
        fold = is_const(p, a) && (is_const(p, b) || (at(p, a)->k.u != 0) == (op == OP_LOR));
    if (fold) {
        raw r;
        char err[8];
        ectx c = { p->d, e, e->nodes, NULL, NULL, 0, 0, err, sizeof err };
        if (!EV(&c, n, &r))
            return n;             /* 1 / 0: an error only where it is evaluated (not in 0 && 1 / 0) */
        e->nodes[n] = (node){ .fn = ev_const, .op = OP_CONST, .type = type, .pointee = UNTYPED, .a = -1, .b = -1,
                              .k = r };
    }
    return n;
}

/* A node without children. */
static int32_t add_leaf(parser *p, uint8_t op, uint8_t type, uint64_t k)
{
    return add_node(p, op, type, type, -1, -1, (raw){ .u = k });
}

/* n converted to type t (n itself when no value changes). */
static int32_t to_type(parser *p, int32_t n, uint8_t t)
{
    if (n < 0)
        return -1;
    uint8_t from = at(p, n)->type;
    if (conversion_is_identity(from, t)) {
        if (at(p, n)->op == OP_CONST && from != t)
            at(p, n)->type = t;
        return n;
    }
    return add_node(p, OP_CONV, t, from, n, -1, (raw){ .u = 0 });
}

/* n as a value of type t: a conversion node even where no value changes
 * (the value's type shows in print/x). */
static int32_t retype(parser *p, int32_t n, uint8_t t)
{
    if (n < 0 || at(p, n)->type == t)
        return n;
    if (at(p, n)->op == OP_CONST || !conversion_is_identity(at(p, n)->type, t))
        return to_type(p, n, t);
    return add_node(p, OP_CONV, t, at(p, n)->type, n, -1, (raw){ .u = 0 });
}

/* A binary operator as typed, for messages. */
static const char *op_text(uint8_t op)
{
    static const char *const text[] = {
        [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%",
        [OP_SHL] = "<<", [OP_SHR] = ">>", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">",
        [OP_GE] = ">=", [OP_EQ] = "==", [OP_NE] = "!=", [OP_BAND] = "&", [OP_BXOR] = "^",
        [OP_BOR] = "|", [OP_LAND] = "&&", [OP_LOR] = "||",
    };
    return op < sizeof text / sizeof text[0] && text[op] ? text[op] : "?";
}

/* Address arithmetic: address +- integer (scaled by the pointed-to size),
 * address - address (in pointed-to units). */
static int32_t make_address_arith(parser *p, uint8_t op, int32_t a, int32_t b)
{
    node *x = at(p, a), *y = at(p, b);
    if (op == OP_ADD && x->type != DBG_ADDR) {
        int32_t t = a;
        a = b;
        b = t;
        x = at(p, a);
        y = at(p, b);
    }
    uint8_t pointee = x->pointee;
    uint64_t scale = pointee == UNTYPED ? 1 : bytes_of(pointee);
    if (op == OP_SUB && y->type == DBG_ADDR)
        return add_node(p, OP_PDIFF, DBG_I64, DBG_ADDR, a, b, (raw){ .u = scale });
    if (is_float(y->type))
        return fail(p, "'%s' needs an integer with an address (got %s)", op_text(op), types[y->type].name);
    b = to_type(p, b, DBG_I64);
    int32_t n = add_node(p, op == OP_ADD ? OP_PADD : OP_PSUB, DBG_ADDR, DBG_ADDR, a, b, (raw){ .u = scale });
    if (n >= 0)
        at(p, n)->pointee = pointee;
    return n;
}

/* A binary operation with C's conversions and type rules. */
static int32_t make_binary(parser *p, uint8_t op, int32_t a, int32_t b)
{
    uint8_t ta = at(p, a)->type, tb = at(p, b)->type;
    if (op == OP_LAND || op == OP_LOR) {
        a = to_type(p, a, DBG_BOOL);
        b = to_type(p, b, DBG_BOOL);
        return a < 0 || b < 0 ? -1 : add_node(p, op, DBG_BOOL, DBG_BOOL, a, b, (raw){ .u = 0 });
    }
    if ((op == OP_ADD && (ta == DBG_ADDR || tb == DBG_ADDR)) || (op == OP_SUB && ta == DBG_ADDR))
        return make_address_arith(p, op, a, b);
    bool int_only = op == OP_MOD || op == OP_SHL || op == OP_SHR || op == OP_BAND || op == OP_BXOR || op == OP_BOR;
    if (int_only && (is_float(ta) || is_float(tb)))
        return fail(p, "'%s' needs integer operands (got %s and %s)", op_text(op), types[ta].name, types[tb].name);
    if (op == OP_SHL || op == OP_SHR) {
        uint8_t t = promote(ta);
        a = to_type(p, a, t);
        b = to_type(p, b, DBG_I64);
        return a < 0 || b < 0 ? -1 : add_node(p, op, t, t, a, b, (raw){ .u = 0 });
    }
    uint8_t t = common_type(ta, tb);
    a = to_type(p, a, t);
    b = to_type(p, b, t);
    if (a < 0 || b < 0)
        return -1;
    bool compare = op >= OP_LT && op <= OP_NE;
    return add_node(p, op, compare ? DBG_BOOL : t, t, a, b, (raw){ .u = 0 });
}

/* *X: the value of X's pointed-to type (u32 for an integer or a symbol). */
static int32_t make_load(parser *p, int32_t a)
{
    const node *x = at(p, a);
    if (is_float(x->type))
        return fail(p, "'*' needs an address (got %s)", types[x->type].name);
    uint8_t t = x->type == DBG_ADDR && x->pointee != UNTYPED ? x->pointee : DBG_U32;
    return add_node(p, OP_LOAD, t, x->type, a, -1, (raw){ .u = 0 });
}

/* &X of a symbol (its address) or of *ADDR (the address). */
static int32_t make_address_of(parser *p, int32_t a)
{
    node *x = at(p, a);
    if (x->op == OP_SYM)
        return a;
    if (x->op != OP_LOAD)
        return fail(p, "'&' needs a symbol or *ADDR");
    uint8_t pointee = x->type;
    int32_t n = retype(p, x->a, DBG_ADDR);
    if (n >= 0)
        at(p, n)->pointee = pointee;
    return n;
}

/* A unary operator c applied to node a. */
static int32_t make_unary(parser *p, char c, int32_t a)
{
    uint8_t t = at(p, a)->type;
    switch (c) {
    case '*': return make_load(p, a);
    case '&': return make_address_of(p, a);
    case '!':
        a = to_type(p, a, DBG_BOOL);
        return a < 0 ? -1 : add_node(p, OP_NOT, DBG_BOOL, DBG_BOOL, a, -1, (raw){ .u = 0 });
    case '~':
        if (is_float(t))
            return fail(p, "'~' needs an integer operand (got %s)", types[t].name);
        a = to_type(p, a, promote(t));
        return a < 0 ? -1 : add_node(p, OP_BNOT, promote(t), promote(t), a, -1, (raw){ .u = 0 });
    case '-':
        a = to_type(p, a, promote(t));
        return a < 0 ? -1 : add_node(p, OP_NEG, promote(t), promote(t), a, -1, (raw){ .u = 0 });
    default:
        return retype(p, a, promote(t));
    }
}

/* (TYPE)X and (TYPE*)X; a register cast to f32 or f16 gives its bits. */
static int32_t make_cast(parser *p, uint8_t t, bool pointer, int32_t a)
{
    node *x = at(p, a);
    if (pointer) {
        if (is_float(x->type))
            return fail(p, "a %s is not an address", types[x->type].name);
        if (x->type != DBG_ADDR) {
            a = add_node(p, OP_CONV, DBG_ADDR, x->type, a, -1, (raw){ .u = 0 });
            if (a < 0)
                return -1;
        }
        at(p, a)->pointee = t;
        return a;
    }
    bool reg = x->op == OP_MREG || x->op == OP_AREG || x->op == OP_CSR;
    if (reg && (t == DBG_F32 || t == DBG_F16))
        return add_node(p, OP_BITS, t, x->type, a, -1, (raw){ .u = 0 });
    return retype(p, a, t);
}

/* ---- parsing: the text ------------------------------------------------------------- */

/* Past blanks; the next character. */
static const char *skip(parser *p) { return p->s = dbg_skip_blanks(p->s); }

/* Take token if it comes next. */
static bool eat(parser *p, const char *token)
{
    size_t n = strlen(token);
    if (strncmp(skip(p), token, n))
        return false;
    p->s += n;
    return true;
}

/* A character of an identifier (symbols may have dots). */
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

static int32_t parse_binary(parser *p, int min_prec);
static int32_t parse_unary(parser *p);

/* A number: decimal, 0x hex, 0b binary, 0 octal, or a float (1.5, 1e-3). */
static int32_t parse_number(parser *p)
{
    const char *s = p->s;
    bool prefixed = s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B');
    size_t len = 0;
    while (ident_char(s[len]) ||
           (!prefixed && (s[len] == '+' || s[len] == '-') && len && (s[len - 1] == 'e' || s[len - 1] == 'E')))
        len++;
    char tok[80], *end;
    if (len >= sizeof tok)
        return fail(p, "bad number '%.32s...'", s);
    memcpy(tok, s, len);
    tok[len] = 0;
    p->s += len;
    if (!prefixed && strpbrk(tok, ".eE")) {
        double f = strtod(tok, &end);
        if (*end)
            return fail(p, "bad number '%s'", tok);
        return add_node(p, OP_CONST, DBG_F64, DBG_F64, -1, -1, (raw){ .f = f });
    }
    int base = prefixed ? ((tok[1] == 'x' || tok[1] == 'X') ? 16 : 2) : tok[0] == '0' ? 8 : 10;
    const char *digits = prefixed ? tok + 2 : tok;
    if (!isxdigit((unsigned char)digits[0]) || (base == 16 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')))
        return fail(p, "bad number '%s'", tok);
    errno = 0;
    unsigned long long v = strtoull(digits, &end, base);
    if (*end)
        return fail(p, "bad number '%s'", tok);
    if (errno == ERANGE)
        return fail(p, "the number '%s' does not fit in 64 bits", tok);
    uint8_t t = v <= INT32_MAX ? DBG_I32
              : v <= UINT32_MAX && base != 10 ? DBG_U32
              : v <= INT64_MAX ? DBG_I64 : DBG_U64;
    return add_leaf(p, OP_CONST, t, v);
}

/* $NAME: a register or CSR of the context, or $cycle, $superstep, $tile, $context. */
static int32_t parse_dollar(parser *p)
{
    const char *s = ++p->s;
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
        n++;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), s);
    p->s += n;
    static const struct { const char *name; uint8_t op, type; } values[] = {
        { "cycle", OP_CYCLE, DBG_U64 }, { "superstep", OP_SUPERSTEP, DBG_U32 },
        { "tile", OP_TILE, DBG_U32 },   { "context", OP_CONTEXT, DBG_U32 },
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!strcmp(name, values[i].name))
            return add_leaf(p, values[i].op, values[i].type, 0);
    char cls;
    unsigned num;
    if (n >= sizeof name || !dbg_register_ref(name, &cls, &num))
        return fail(p, "unknown register '$%s' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)", name);
    return add_leaf(p, cls == 'm' ? OP_MREG : cls == 'a' ? OP_AREG : OP_CSR, DBG_U32, num);
}

/* name[i][j] or name[i, j]: the indices of every dimension, each an integer. */
static int32_t parse_element(parser *p, const tmap_tensor *t)
{
    int32_t idx[TMAP_MAX_RANK];
    uint32_t n = 0;
    while (eat(p, "[")) {
        do {
            if (n >= t->rank)
                return fail(p, "tensor '%s' has %u dimension%s", t->name, t->rank, t->rank == 1 ? "" : "s");
            int32_t i = parse_binary(p, 1);
            if (i < 0)
                return -1;
            if (is_float(at(p, i)->type))
                return fail(p, "an index of '%s' must be an integer (got %s)", t->name, types[at(p, i)->type].name);
            i = to_type(p, i, DBG_I64);
            if (i < 0)
                return -1;
            const node *x = at(p, i);
            if (x->op == OP_CONST && (x->k.i < 0 || (uint64_t)x->k.i >= t->dims[n]))
                return fail(p, "index %lld is out of range for dimension %u of '%s' (size %llu)", (long long)x->k.i,
                            n, t->name, (unsigned long long)t->dims[n]);
            idx[n++] = i;
        } while (eat(p, ","));
        if (!eat(p, "]"))
            return fail(p, "missing ']' at '%.32s'", p->s);
    }
    if (n < t->rank)
        return fail(p, "tensor '%s' has %u dimension%s, got %u ind%s", t->name, t->rank, t->rank == 1 ? "" : "s",
                    n, n == 1 ? "ex" : "ices");
    dbg_type type;
    if (!dbg_element_type(t, &type))
        return fail(p, "the elements of '%s' (%s, %u bytes) are of no type an expression reads", t->name,
                    tmap_dtype_name(t->dtype), t->element_bytes);
    dbg_expr *e = p->e;
    if (!grow((void **)&e->args, &e->cap_args, e->n_args, n, sizeof *e->args))
        return out_of_memory(p);
    int32_t first = (int32_t)e->n_args;
    if (n)
        memcpy(e->args + first, idx, n * sizeof *idx);
    e->n_args += n;
    int32_t r = add_node(p, OP_ELEM, type, type, first, (int32_t)n, (raw){ .u = 0 });
    if (r >= 0)
        at(p, r)->tensor = t;
    return r;
}

/* Symbol places by tile, then by their order in the executable. */
static int cmp_place(const void *a, const void *b)
{
    const sym_place *x = a, *y = b;
    if (x->tile != y->tile)
        return x->tile < y->tile ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A symbol: its address on every tile that has it, sorted by tile. */
static int32_t parse_symbol(parser *p, const char *name)
{
    dbg_expr *e = p->e;
    const ipu_exe *x = p->d->e;
    size_t first = e->n_places;
    for (size_t i = 0; i < x->n_symbols; i++) {
        if (strcmp(x->symbols[i].name, name))
            continue;
        if (!grow((void **)&e->places, &e->cap_places, e->n_places, 1, sizeof *e->places))
            return out_of_memory(p);
        e->places[e->n_places++] = (sym_place){ x->symbols[i].tile, x->symbols[i].addr, i };
    }
    size_t count = e->n_places - first;
    if (!count)
        return p->d->tmap ? fail(p, "no symbol or tensor '%s' in %s", name, p->d->name)
                          : fail(p, "no symbol '%s' in %s", name, p->d->name);
    qsort(e->places + first, count, sizeof *e->places, cmp_place);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (!kept || e->places[first + kept - 1].tile != e->places[first + i].tile)
            e->places[first + kept++] = e->places[first + i];
    e->n_places = first + kept;
    size_t len = strlen(name) + 1;
    if (!grow((void **)&e->names, &e->cap_names, e->n_names, len, 1))
        return out_of_memory(p);
    memcpy(e->names + e->n_names, name, len);
    raw k = { .u = e->n_names };
    e->n_names += len;
    return add_node(p, OP_SYM, DBG_ADDR, DBG_ADDR, (int32_t)first, (int32_t)kept, k);
}

/* An identifier or a 'quoted name': a tensor element or a symbol. */
static int32_t parse_name(parser *p)
{
    char name[256];
    size_t n = 0;
    if (*p->s == '\'') {
        const char *close = strchr(p->s + 1, '\'');
        if (!close)
            return fail(p, "missing the closing quote of %.32s", p->s);
        n = (size_t)(close - p->s - 1);
        if (n == 0 || n >= sizeof name)
            return fail(p, "bad name %.*s", (int)(n + 2 < 40 ? n + 2 : 40), p->s);
        memcpy(name, p->s + 1, n);
        p->s = close + 1;
    } else {
        while (ident_char(p->s[n]))
            n++;
        if (n >= sizeof name)
            return fail(p, "the name '%.32s...' is too long", p->s);
        memcpy(name, p->s, n);
        p->s += n;
    }
    name[n] = 0;
    const tmap_tensor *t = p->d->tmap ? tmap_find(p->d->tmap, name) : NULL;
    return t ? parse_element(p, t) : parse_symbol(p, name);
}

/* A number, $NAME, a name, or a parenthesized expression. */
static int32_t parse_primary(parser *p)
{
    const char *s = skip(p);
    if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1])))
        return parse_number(p);
    if (*s == '$')
        return parse_dollar(p);
    if (*s == '\'' || isalpha((unsigned char)*s) || *s == '_' || *s == '.')
        return parse_name(p);
    if (*s == '(') {
        p->s++;
        int32_t x = parse_binary(p, 1);
        if (x < 0)
            return -1;
        if (!eat(p, ")"))
            return fail(p, "missing ')' at '%.32s'", p->s);
        return x;
    }
    if (!*s)
        return fail(p, "the expression is incomplete");
    return fail(p, "bad expression at '%.32s'", s);
}

/* "(TYPE)" or "(TYPE*)" at p->s: the type, and past it; false (nothing
 * taken) when the parenthesis holds something else. */
static bool parse_cast(parser *p, uint8_t *t, bool *pointer)
{
    const char *s = dbg_skip_blanks(p->s + 1);
    size_t n = 0;
    while (ident_char(s[n]))
        n++;
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        if (strlen(type_names[i].name) != n || strncmp(type_names[i].name, s, n))
            continue;
        const char *q = dbg_skip_blanks(s + n);
        *pointer = *q == '*';
        if (*pointer)
            q = dbg_skip_blanks(q + 1);
        if (*q != ')')
            return false;
        *t = (uint8_t)type_names[i].type;
        p->s = q + 1;
        return true;
    }
    return false;
}

/* Unary operators and casts, right to left, then a primary. */
static int32_t parse_unary_body(parser *p)
{
    char c = *skip(p);
    if (c == '-' || c == '+' || c == '!' || c == '~' || c == '*' || c == '&') {
        p->s++;
        int32_t x = parse_unary(p);
        return x < 0 ? -1 : make_unary(p, c, x);
    }
    uint8_t t;
    bool pointer;
    if (c == '(' && parse_cast(p, &t, &pointer)) {
        int32_t x = parse_unary(p);
        return x < 0 ? -1 : make_cast(p, t, pointer, x);
    }
    return parse_primary(p);
}

/* parse_unary_body, at most MAX_DEPTH deep. */
static int32_t parse_unary(parser *p)
{
    if (++p->depth > MAX_DEPTH)
        return fail(p, "the expression is nested more than %d deep", MAX_DEPTH);
    int32_t x = parse_unary_body(p);
    p->depth--;
    return x;
}

/* The binary operators, two-character ones before their prefixes, with C's precedence. */
static const struct binop {
    const char *text;
    uint8_t op, prec;
} binops[] = {
    { "||", OP_LOR, 1 }, { "&&", OP_LAND, 2 }, { "|", OP_BOR, 3 },  { "^", OP_BXOR, 4 }, { "&", OP_BAND, 5 },
    { "==", OP_EQ, 6 },  { "!=", OP_NE, 6 },   { "<<", OP_SHL, 8 }, { ">>", OP_SHR, 8 }, { "<=", OP_LE, 7 },
    { ">=", OP_GE, 7 },  { "<", OP_LT, 7 },    { ">", OP_GT, 7 },   { "+", OP_ADD, 9 },  { "-", OP_SUB, 9 },
    { "*", OP_MUL, 10 }, { "/", OP_DIV, 10 },  { "%", OP_MOD, 10 },
};

/* The binary operator at s, or NULL. */
static const struct binop *binop_at(const char *s)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (!strncmp(s, binops[i].text, strlen(binops[i].text)))
            return &binops[i];
    return NULL;
}

/* Operands joined by operators of precedence min_prec or higher, left to right. */
static int32_t parse_binary(parser *p, int min_prec)
{
    int32_t lhs = parse_unary(p);
    while (lhs >= 0) {
        const struct binop *b = binop_at(skip(p));
        if (!b || b->prec < min_prec)
            break;
        p->s += strlen(b->text);
        if (++p->depth > MAX_DEPTH)
            return fail(p, "the expression is nested more than %d deep", MAX_DEPTH);
        int32_t rhs = parse_binary(p, b->prec + 1);
        p->depth--;
        if (rhs < 0)
            return -1;
        lhs = make_binary(p, b->op, lhs, rhs);
    }
    return lhs;
}

/* Parse the whole text as one expression. */
dbg_expr *dbg_expr_parse(const debugger *d, const char *text, char *err, size_t err_size)
{
    dbg_expr *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    e->tiles_per_chip = machine_u32(&d->m, MP_tiles_per_chip);
    if (!e->tiles_per_chip)
        e->tiles_per_chip = 1;
    parser p = { d, e, text, err, err_size, 0 };
    e->root = parse_binary(&p, 1);
    if (e->root >= 0 && *skip(&p)) {
        if (p.s[0] == '=' && p.s[1] != '=')
            e->root = fail(&p, "'=' would assign, which the debugger does not do (compare with '==')");
        else
            e->root = fail(&p, "bad expression at '%.32s'", p.s);
    }
    if (e->root < 0) {
        dbg_expr_free(e);
        return NULL;
    }
    return e;
}
