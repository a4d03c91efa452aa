/*
 * debugger_print.c — showing values and places: a code place with its
 * instruction, registers of a context (print $REG), a compiled program's
 * tensors by name and slice (print TENSOR [SLICE], a few values a line),
 * expressions (print[/FMT] EXPR, debugger_expr.h), tile memory and
 * instructions (x/NFMT ADDR, print SYMBOL), the expressions shown at every
 * stop (display, undisplay, info display) and disassembly with symbols,
 * source lines and breakpoints.
 */
#include "debugger_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/disasm.h"
#include "isa/fp16.h"
#include "sim/engine/program_io.h"

/* ---- code places ---------------------------------------------------------- */

typedef struct sym_ctx {
    const debugger *d;
    uint32_t tile;
} sym_ctx;

/* The disassembler's names: a symbol that starts exactly at addr. */
static const char *symbol_exactly_at(void *ctx, uint32_t addr)
{
    const sym_ctx *c = ctx;
    const exe_symbol *sym = exe_symbol_at(c->d->e, c->tile, addr);
    return sym && sym->addr == addr ? sym->name : NULL;
}

/* The instruction or bundle at pc; returns its bytes (4 or 8). */
size_t dbg_disasm_at(const debugger *d, const ipu_tile *t, uint32_t pc, char *buf, size_t n)
{
    uint32_t w0 = 0, w1 = 0;
    if (tmem_read_bytes(&t->s.mem, pc, &w0, 4) != TMEM_OK) {
        snprintf(buf, n, "(not in tile memory)");
        return 4;
    }
    bool have_w1 = pc + 4 < t->code_end && tmem_read_bytes(&t->s.mem, pc + 4, &w1, 4) == TMEM_OK;
    sym_ctx c = { d, t->tile_id };
    return disasm_bundle_sym(w0, w1, have_w1, pc, symbol_exactly_at, &c, buf, n);
}

/* "tile T, CONTEXT, pc 0x... <sym> (file:line), cycle C" and the
 * instruction there. */
void dbg_print_location(const debugger *d, FILE *out, uint32_t tile, unsigned k, uint32_t pc)
{
    char ctx[24], where[320], insn[200];
    dbg_symbolize(d, tile, pc, where, sizeof where);
    const ipu_tile *t = engine_tile(d->g, tile);
    fprintf(out, "tile %u, %s, pc 0x%x%s, cycle %llu\n", tile, dbg_context_name(k, ctx, sizeof ctx), pc, where,
            (unsigned long long)engine_tile_cycle(d->g, tile));
    if (t && tile_decoded_at(t, pc)) {
        dbg_disasm_at(d, t, pc, insn, sizeof insn);
        fprintf(out, "   0x%x:  %s\n", pc, insn);
    }
}

/* ---- registers, memory, tensors ------------------------------------------- */

/* A context's run mode in words. */
const char *dbg_run_mode_name(uint8_t mode)
{
    switch (mode) {
    case ISA_RUN_INACTIVE: return "inactive";
    case ISA_RUN_RUNNING: return "running";
    case ISA_RUN_SYNC: return "at a sync";
    case ISA_RUN_DONE: return "ended";
    case ISA_RUN_FAULTED: return "faulted";
    default: return "?";
    }
}

/* The two f16 halves of a word, low first. */
static void format_f16_pair(uint32_t v, char *buf, size_t n)
{
    snprintf(buf, n, "[%.6g, %.6g]", fp16_to_f32((f16_t)(v & 0xffff)), fp16_to_f32((f16_t)(v >> 16)));
}

/* The f32 whose bits are v. */
float dbg_bits_f32(uint32_t v)
{
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* A register's name without its '$' as its class ('m', 'a' or 'c' for a
 * CSR, $pc included) and number. */
bool dbg_register_ref(const char *name, char *cls, unsigned *num)
{
    static const struct { const char *name; char cls; unsigned num; } aliases[] = {
        { "lr", 'm', ISA_MRF_LR }, { "sp", 'm', ISA_MRF_SP }, { "mzero", 'm', ISA_MRF_ZERO },
        { "azero", 'a', ISA_ARF_ZERO }, { "pc", 'c', ISA_CSR_PC },
    };
    if ((name[0] == 'm' || name[0] == 'a') && name[1] >= '0' && name[1] <= '9') {
        uint32_t r;
        if (!dbg_parse_u32(name + 1, &r) || r > 15 || (name[1] == '0' && name[2]))
            return false;
        *cls = name[0];
        *num = r;
        return true;
    }
    /* The AMP's state: a context's accumulators and the tile's weights. */
    static const struct { const char *prefix; unsigned base, count; } amp[] = {
        { "aacc", DBG_REG_AACC, ISA_AACC_WORDS }, { "cwei", DBG_REG_CWEI, ISA_CWEI_WORDS },
    };
    for (size_t i = 0; i < sizeof amp / sizeof amp[0]; i++) {
        uint32_t r;
        const char *digits = name + 4;
        if (!strncmp(name, amp[i].prefix, 4) && digits[0] >= '0' && digits[0] <= '9' &&
            !(digits[0] == '0' && digits[1]) && dbg_parse_u32(digits, &r) && r < amp[i].count) {
            *cls = 'c';
            *num = amp[i].base + r;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].name)) {
            *cls = aliases[i].cls;
            *num = aliases[i].num;
            return true;
        }
    int csr = isa_csr_number(name);
    if (csr < 0)
        return false;
    *cls = 'c';
    *num = (unsigned)csr;
    return true;
}

/* That register's value in context k of tile t ($COUNT_L/U from the
 * tile's cycle, $PC from the context's pc). */
uint32_t dbg_register_read(const ipu_tile *t, unsigned k, char cls, unsigned num)
{
    const isa_context *c = &t->s.ctx[k];
    if (cls == 'm')
        return c->m[num];
    if (cls == 'a')
        return c->a[num];
    if (num >= DBG_REG_CWEI)
        return t->s.amp.cwei[num - DBG_REG_CWEI];
    if (num >= DBG_REG_AACC)
        return c->amp.aacc[num - DBG_REG_AACC];
    if (num == ISA_CSR_COUNT_L)
        return (uint32_t)t->s.cycle;
    if (num == ISA_CSR_COUNT_U)
        return (uint32_t)(t->s.cycle >> 32);
    if (num == ISA_CSR_PC)
        return c->pc;
    return c->csr[num];
}

/* "$m3", "$a0", "$lr", "$pc", "$FP_CTL" of context k. */
bool dbg_register_value(const ipu_tile *t, unsigned k, const char *name, uint32_t *v, char *kind)
{
    char cls = 0;
    unsigned num = 0;
    *v = 0;
    *kind = 0;
    if (!dbg_register_ref(name, &cls, &num))
        return false;
    *kind = cls;
    *v = dbg_register_read(t, k, cls, num);
    return true;
}

/* print $REG: hex and decimal; an $a register also as f32 and an f16 pair. */
static void print_register(FILE *out, const char *name, char kind, uint32_t v)
{
    if (kind == 'a') {
        char pair[64];
        format_f16_pair(v, pair, sizeof pair);
        fprintf(out, "$%s = 0x%08x (f32 %.9g, f16 %s)\n", name, v, dbg_bits_f32(v), pair);
    } else {
        fprintf(out, "$%s = 0x%08x (%u, %d)\n", name, v, v, (int32_t)v);
    }
}

/* "[1, 0:2]" against t's shape: per dimension a range [lo, hi). */
static bool parse_slice(const char *s, const tmap_tensor *t, uint64_t *lo, uint64_t *hi, FILE *out)
{
    for (uint32_t i = 0; i < t->rank; i++) {
        lo[i] = 0;
        hi[i] = t->dims[i];
    }
    s = dbg_skip_blanks(s);
    if (!*s)
        return true;
    if (*s != '[') {
        dbg_fail(out, "a slice is [I, LO:HI, ...], got '%.64s'", s);
        return false;
    }
    s++;
    for (uint32_t dim = 0;; dim++) {
        s = dbg_skip_blanks(s);
        if (*s == ']' && dim == 0)
            break;
        if (dim >= t->rank) {
            dbg_fail(out, "tensor '%s' has %u dimension%s", t->name, t->rank, t->rank == 1 ? "" : "s");
            return false;
        }
        char *end;
        uint64_t a = 0, b = t->dims[dim];
        bool range = false;
        if (*s != ':') {
            if (*s < '0' || *s > '9') {
                dbg_fail(out, "bad slice at '%.32s'", s);
                return false;
            }
            a = strtoull(s, &end, 10);
            s = end;
        }
        s = dbg_skip_blanks(s);
        if (*s == ':') {
            range = true;
            s = dbg_skip_blanks(s + 1);
            if (*s >= '0' && *s <= '9') {
                b = strtoull(s, &end, 10);
                s = end;
            }
        } else {
            b = a + 1;
        }
        if (!range && a >= t->dims[dim]) {
            dbg_fail(out, "index %llu is out of range for dimension %u (size %llu)", (unsigned long long)a, dim,
                 (unsigned long long)t->dims[dim]);
            return false;
        }
        if (a >= b || b > t->dims[dim]) {
            dbg_fail(out, "slice %llu:%llu is out of range for dimension %u (size %llu)", (unsigned long long)a,
                 (unsigned long long)b, dim, (unsigned long long)t->dims[dim]);
            return false;
        }
        lo[dim] = a;
        hi[dim] = b;
        s = dbg_skip_blanks(s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ']')
            break;
        dbg_fail(out, "bad slice at '%.32s'", s);
        return false;
    }
    if (!dbg_at_end(s + 1)) {
        dbg_fail(out, "unexpected '%.32s' after the slice", s + 1);
        return false;
    }
    return true;
}

/* The type of t's elements: its dtype's when the element size agrees,
 * else an unsigned integer of the element's size; *known says which. */
static bool element_type(const tmap_tensor *t, dbg_type *type, bool *known)
{
    static const struct { uint32_t dtype, bytes; dbg_type type; } dtypes[] = {
        { 1, 4, DBG_F32 }, { 10, 2, DBG_F16 }, { 6, 4, DBG_I32 }, { 7, 8, DBG_I64 },
        { 9, 1, DBG_BOOL }, { 2, 1, DBG_U8 }, { 3, 1, DBG_I8 },
    };
    *known = false;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dtype == t->dtype && dtypes[i].bytes == t->element_bytes) {
            *type = dtypes[i].type;
            *known = true;
            return true;
        }
    switch (t->element_bytes) {
    case 1: *type = DBG_U8; return true;
    case 2: *type = DBG_U16; return true;
    case 4: *type = DBG_U32; return true;
    case 8: *type = DBG_U64; return true;
    default: return false;
    }
}

/* The type of t's elements; false when no expression type fits them. */
bool dbg_element_type(const tmap_tensor *t, dbg_type *type)
{
    bool known;
    return element_type(t, type, &known);
}

/* The tile and address of element idx of t: its number in the stored
 * order (the axes as perm orders them), then the piece holding it. */
bool dbg_tensor_element_place(const tmap_tensor *t, const uint64_t *idx, uint32_t *tile, uint32_t *addr)
{
    uint64_t stored = 0;
    for (uint32_t i = 0; i < t->rank; i++)
        stored = stored * t->dims[t->perm[i]] + idx[t->perm[i]];
    size_t lo = 0, hi = t->n_pieces;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->pieces[mid].first + t->pieces[mid].count <= stored)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == t->n_pieces || t->pieces[lo].first > stored)
        return false;
    const tmap_piece *p = &t->pieces[lo];
    *tile = p->tile;
    *addr = p->addr + (uint32_t)((stored - p->first) * t->element_bytes);
    return true;
}

#define VALUES_PER_LINE 8
#define REPEATS_MIN 10

/* One row of a slice (n elements along the last dimension from idx): 8
 * values a line, each line starting with its first element's index; a run
 * of 10 or more equal values is one "V <repeats N times>". */
static void print_row(FILE *out, const tmap_tensor *t, const uint8_t *row, uint64_t n, const uint64_t *idx, char fmt)
{
    dbg_type type = DBG_U64;
    bool known = false;
    bool fits = element_type(t, &type, &known);
    if (!fmt && !known)
        fmt = 'x';
    uint32_t eb = t->element_bytes;
    unsigned on_line = 0;
    for (uint64_t j = 0; j < n;) {
        uint64_t run = 1;
        while (j + run < n && !memcmp(row + (j + run) * eb, row + j * eb, eb))
            run++;
        if (run < REPEATS_MIN)
            run = 1;
        if (on_line == VALUES_PER_LINE) {
            fputc('\n', out);
            on_line = 0;
        }
        if (on_line == 0) {
            fprintf(out, "  [");
            for (uint32_t i = 0; i < t->rank; i++)
                fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)(idx[i] + (i + 1 == t->rank ? j : 0)));
            fprintf(out, "]");
        }
        dbg_value v = { .type = DBG_U64 };
        if (fits) {
            v = dbg_value_from_bytes(type, row + j * eb);
        } else {
            v.u = 0;
            memcpy(&v.u, row + j * eb, eb < 8 ? eb : 8);
        }
        char text[96];
        fprintf(out, " %s", dbg_value_format(&v, fmt, text, sizeof text));
        if (run > 1)
            fprintf(out, " <repeats %llu times>", (unsigned long long)run);
        on_line++;
        j += run;
    }
    fputc('\n', out);
}

/* print[/FMT] TENSOR [SLICE]: the elements read from every tile's pieces,
 * row by row (at most MAX_PRINT_ELEMENTS). */
static enum debugger_result print_tensor(debugger *d, const tmap_tensor *t, const char *slice, char fmt, FILE *out)
{
    uint64_t lo[TMAP_MAX_RANK], hi[TMAP_MAX_RANK];
    if (!parse_slice(slice, t, lo, hi, out))
        return DEBUGGER_ERROR;
    uint64_t bytes = program_tensor_bytes(t);
    uint8_t *data = malloc(bytes ? bytes : 1);
    if (!data)
        return dbg_fail(out, "out of host memory for tensor '%s' (%llu bytes)", t->name, (unsigned long long)bytes);
    char err[512];
    if (!program_read_tensor(d->g, t, data, err, sizeof err)) {
        free(data);
        return dbg_fail(out, "%s", err);
    }
    uint64_t count = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        count *= hi[i] - lo[i];
    fprintf(out, "%s: %s [", t->name, tmap_dtype_name(t->dtype));
    for (uint32_t i = 0; i < t->rank; i++)
        fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)t->dims[i]);
    fprintf(out, "]%s%s%s%s%s, %llu element%s shown\n", t->role & TMAP_INPUT ? " input" : "",
            t->role & TMAP_OUTPUT ? " output" : "", t->role & TMAP_WEIGHT ? " weight" : "",
            t->role & TMAP_ACTIVATION ? " activation" : "",
            t->role & TMAP_TRANSIENT ? " (transient: its memory holds it until its last reader)" : "",
            (unsigned long long)count, count == 1 ? "" : "s");
    uint64_t idx[TMAP_MAX_RANK];
    memcpy(idx, lo, sizeof idx);
    uint64_t row = t->rank ? hi[t->rank - 1] - lo[t->rank - 1] : 1;
    for (uint64_t shown = 0; shown < count && shown < MAX_PRINT_ELEMENTS; shown += row) {
        uint64_t flat = 0;
        for (uint32_t i = 0; i < t->rank; i++)
            flat = flat * t->dims[i] + idx[i];
        uint64_t n = MAX_PRINT_ELEMENTS - shown < row ? MAX_PRINT_ELEMENTS - shown : row;
        print_row(out, t, data + flat * t->element_bytes, n, idx, fmt);
        for (uint32_t i = t->rank ? t->rank - 1 : 0; i-- > 0;) {
            if (++idx[i] < hi[i])
                break;
            idx[i] = lo[i];
        }
    }
    if (count > MAX_PRINT_ELEMENTS)
        fprintf(out, "  ... %llu more (print a slice)\n", (unsigned long long)(count - MAX_PRINT_ELEMENTS));
    free(data);
    return DEBUGGER_OK;
}

/* ---- memory and instructions (x/NFMT) ------------------------------------- */

/* count units of FMT at addr of the selected tile: x (hex words), d, u, f
 * (f32), h (f16), b (bytes), or o, t, c, a of words (print/FMT SYMBOL). */
static enum debugger_result examine(debugger *d, uint32_t addr, uint64_t count, char fmt, FILE *out)
{
    const ipu_tile *t = dbg_cur_tile(d);
    unsigned unit = fmt == 'b' ? 1 : fmt == 'h' ? 2 : 4;
    unsigned per_line = fmt == 'b' ? 16 : fmt == 'h' ? 8 : 4;
    uint64_t bytes = count * unit;
    if ((uint64_t)addr + bytes > (uint64_t)t->s.mem.base + t->s.mem.size_bytes || addr < t->s.mem.base)
        return dbg_fail(out, "tile %u: 0x%x-0x%llx is not in tile memory (0x%x-0x%x)", d->tile, addr,
                    (unsigned long long)(addr + bytes - 1), t->s.mem.base, t->s.mem.base + t->s.mem.size_bytes - 1);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t a = addr + (uint32_t)(i * unit);
        uint8_t b[4] = { 0 };
        enum tmem_status st = tmem_read_bytes(&t->s.mem, a, b, unit);
        if (st != TMEM_OK) {
            fprintf(out, "\n");
            return dbg_fail(out, "tile %u: cannot read 0x%x: %s", d->tile, a, tmem_status_name(st));
        }
        if (i % per_line == 0) {
            char where[320] = "";
            const exe_symbol *sym = exe_symbol_at(d->e, d->tile, a);
            if (sym && a == sym->addr)
                snprintf(where, sizeof where, " <%s>", sym->name);
            else if (sym)
                snprintf(where, sizeof where, " <%s+0x%x>", sym->name, a - sym->addr);
            fprintf(out, "%s0x%x%s:", i ? "\n" : "", a, where);
        }
        uint32_t v = 0;
        memcpy(&v, b, unit);
        dbg_value w = { .type = DBG_U32, .u = v };
        char text[96];
        switch (fmt) {
        case 'x': fprintf(out, " 0x%08x", v); break;
        case 'd': fprintf(out, " %d", (int32_t)v); break;
        case 'u': fprintf(out, " %u", v); break;
        case 'f': fprintf(out, " %.9g", dbg_bits_f32(v)); break;
        case 'h': fprintf(out, " %.6g", fp16_to_f32((f16_t)v)); break;
        case 'b': fprintf(out, " %02x", v); break;
        default: fprintf(out, " %s", dbg_value_format(&w, fmt, text, sizeof text)); break;
        }
    }
    fprintf(out, "\n");
    return DEBUGGER_OK;
}

/* One line of disassembly at a: "=>" at pc, "b" at a breakpoint, the
 * symbol and source line, the instruction or bundle; returns its bytes. */
static uint32_t disassembly_line(const debugger *d, const ipu_tile *t, uint32_t a, uint32_t pc, FILE *out)
{
    char insn[200], where[320];
    size_t bytes = dbg_disasm_at(d, t, a, insn, sizeof insn);
    dbg_symbolize(d, t->tile_id, a, where, sizeof where);
    fprintf(out, "%s%s0x%x%s:  %s\n", a == pc ? "=>" : "  ", tile_breakpoint_at(t, a) ? "b " : "  ", a, where, insn);
    return (uint32_t)bytes;
}

/* count instructions or bundles of the selected tile from addr (x/Ni). */
static enum debugger_result examine_code(debugger *d, uint32_t addr, uint64_t count, FILE *out)
{
    const ipu_tile *t = dbg_cur_tile(d);
    uint32_t a = addr & ~3u, pc = t->s.ctx[d->context].pc;
    for (uint64_t i = 0; i < count; i++) {
        if (!tile_decoded_at(t, a)) {
            if (i == 0)
                return dbg_fail(out, "tile %u: 0x%x is outside the code (0x%x-0x%x)", d->tile, a, t->code_base,
                                t->code_end ? t->code_end - 1 : 0);
            break;
        }
        a += disassembly_line(d, t, a, pc, out);
    }
    return DEBUGGER_OK;
}

/* An address from an expression, on the selected tile and context. */
static bool expression_address(debugger *d, const char *cmd, const char *text, uint32_t *addr, FILE *out)
{
    char err[512];
    dbg_expr *e = dbg_expr_parse(d, text, err, sizeof err);
    dbg_value v;
    bool ok = e && dbg_expr_eval(d, e, d->tile, d->context, &v, err, sizeof err);
    dbg_expr_free(e);
    if (!ok) {
        dbg_fail(out, "%s", err);
        return false;
    }
    if (v.type == DBG_F16 || v.type == DBG_F32 || v.type == DBG_F64) {
        dbg_fail(out, "%s needs an address, not a value of type %s", cmd, dbg_type_name(v.type));
        return false;
    }
    bool is_signed = v.type == DBG_I8 || v.type == DBG_I16 || v.type == DBG_I32 || v.type == DBG_I64;
    if ((is_signed && v.i < 0) || v.u > UINT32_MAX) {
        char text_v[96];
        dbg_fail(out, "%s: %s is not a 32-bit address", cmd, dbg_value_format(&v, 0, text_v, sizeof text_v));
        return false;
    }
    *addr = (uint32_t)v.u;
    return true;
}

/* x/NFMT ADDR: args starts at the '/' or after "x". */
enum debugger_result dbg_cmd_x(debugger *d, const char *args, FILE *out)
{
    uint64_t count = 1;
    char fmt = 'x';
    const char *s = args;
    if (*s == '/') {
        s++;
        if (*s >= '0' && *s <= '9') {
            char *end;
            errno = 0;
            count = strtoull(s, &end, 10);
            if (errno || count == 0 || count > MAX_X_UNITS)
                return dbg_fail(out, "x: the count must be 1 to %d", MAX_X_UNITS);
            s = end;
        }
        if (*s && *s != ' ' && *s != '\t') {
            if (!strchr("xdufhbi", *s) || (s[1] && s[1] != ' ' && s[1] != '\t'))
                return dbg_fail(out, "x: unknown format '%.16s' (x hex, d decimal, u unsigned, f f32, h f16, b bytes, "
                                "i instructions)", s);
            fmt = *s++;
        }
    }
    s = dbg_skip_blanks(s);
    if (!*s)
        return dbg_fail(out, "x needs one address: x/NFMT ADDR");
    uint32_t addr;
    if (!expression_address(d, "x", s, &addr, out))
        return DEBUGGER_ERROR;
    return fmt == 'i' ? examine_code(d, addr, count, out) : examine(d, addr, count, fmt, out);
}

/* disassemble [ADDR [N]] */
enum debugger_result dbg_cmd_disassemble(debugger *d, const char *args, FILE *out)
{
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[d->context];
    char w[128];
    const char *s = args;
    uint32_t start, pc = c->pc;
    uint64_t count = 8;
    if (dbg_next_word(&s, w, sizeof w)) {
        /* TILE:ADDR: another tile's code, as break takes it. */
        uint32_t tile = d->tile;
        char *colon = strchr(w, ':');
        const char *where = w;
        if (colon) {
            *colon = 0;
            if (!dbg_parse_u32(w, &tile))
                return dbg_fail(out, "bad tile '%s'", w);
            if (!engine_tile(d->g, tile))
                return dbg_fail(out, "tile %u has no code in %s", tile, d->name);
            where = colon + 1;
        }
        if (!dbg_parse_addr(d, tile, where, &start, out))
            return DEBUGGER_ERROR;
        if (dbg_next_word(&s, w, sizeof w) && (!dbg_parse_u64(w, &count) || count == 0 || count > MAX_DISAS))
            return dbg_fail(out, "disassemble: the count must be 1 to %d", MAX_DISAS);
        if (!dbg_at_end(s))
            return dbg_fail(out, "disassemble takes [[TILE:]ADDR [N]]");
        uint32_t selected = d->tile;
        d->tile = tile;
        enum debugger_result r = examine_code(d, start & ~3u, count, out);
        d->tile = selected;
        return r;
    } else {
        /* Three issues before pc, walking from an 8-aligned point that is
         * an issue boundary (a bundle starts 8-aligned). */
        uint32_t from = pc >= 64 ? (pc - 64) & ~7u : 0;
        if (from < t->code_base)
            from = t->code_base;
        uint32_t ring[3] = { pc, pc, pc };
        unsigned n = 0;
        for (uint32_t a = from; a < pc && tile_decoded_at(t, a);) {
            ring[n++ % 3] = a;
            const tile_decoded *dd = tile_decoded_at(t, a);
            a += dd->bytes == 8 && !(dd->invalid & ~TILE_DECODE_BREAKPOINT) ? 8 : 4;
        }
        start = n >= 3 ? ring[n % 3] : n ? ring[0] : pc;
        if (!tile_decoded_at(t, start))
            return dbg_fail(out, "tile %u: pc 0x%x is outside the code (0x%x-0x%x)", d->tile, pc, t->code_base,
                        t->code_end ? t->code_end - 1 : 0);
    }
    return examine_code(d, start, count, out);
}

/* ---- print and display ------------------------------------------------------ */

/* What print and display show: a register (hex and decimal, as print $REG
 * always did), a tensor or a slice of it, the words at a symbol of the
 * selected tile, or an expression. */
enum item_kind { ITEM_REGISTER, ITEM_TENSOR, ITEM_SYMBOL, ITEM_EXPR };

#define MAX_DISPLAYS 64

/* An expression shown at every stop. */
struct dbg_display {
    int id;
    char fmt;                     /* 0 or a /FMT letter */
    enum item_kind kind;
    char *text;                   /* as typed */
    dbg_expr *expr;               /* ITEM_EXPR */
};

/* "/F" at the start of args (print/F, display/F): the letter, and where
 * the text after it starts. */
static bool parse_format(const char *cmd, const char *args, char *fmt, const char **rest, FILE *out)
{
    *fmt = 0;
    *rest = args;
    if (*args != '/')
        return true;
    const char *s = args + 1;
    if (!*s || !strchr("xduotcfa", *s) || (s[1] && s[1] != ' ' && s[1] != '\t')) {
        dbg_fail(out, "%s: unknown format '%.16s' (x hex, d signed, u unsigned, o octal, t binary, c character, "
                 "f float, a address)", cmd, s);
        return false;
    }
    *fmt = *s;
    *rest = s + 1;
    return true;
}

/* The text of a command's argument without its surrounding blanks. */
static void trimmed(const char *s, char *buf, size_t n)
{
    s = dbg_skip_blanks(s);
    snprintf(buf, n, "%s", s);
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        buf[--len] = 0;
}

/* Whether s (after a tensor's name) is nothing or one [SLICE] of numbers,
 * ':' and ','. */
static bool slice_like(const char *s)
{
    s = dbg_skip_blanks(s);
    if (!*s)
        return true;
    if (*s != '[')
        return false;
    return strspn(s + 1, " \t0123456789,:]") == strlen(s + 1);
}

/* What text names: a register (only without /FMT), a tensor [slice], a
 * symbol of the selected tile by itself, or else an expression (parsed
 * into *expr). */
static bool classify(debugger *d, const char *text, char fmt, enum item_kind *kind, dbg_expr **expr, FILE *out)
{
    *expr = NULL;
    char name[256], cls;
    unsigned num;
    size_t n = strcspn(text, " \t[");
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), text);
    if (!fmt && text[0] == '$' && dbg_at_end(text + n) && dbg_register_ref(name + 1, &cls, &num)) {
        *kind = ITEM_REGISTER;
        return true;
    }
    if (d->tmap && tmap_find(d->tmap, name) && slice_like(text + n)) {
        *kind = ITEM_TENSOR;
        return true;
    }
    bool identifier = n && n < sizeof name && dbg_at_end(text + n) && strspn(name, "abcdefghijklmnopqrstuvwxyz"
                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == n && !isdigit((unsigned char)name[0]) &&
                      !(name[0] == '.' && isdigit((unsigned char)name[1]));
    if (identifier) {
        *kind = ITEM_SYMBOL;
        if (dbg_symbol_on_tile(d, d->tile, name))
            return true;
        if (!d->tmap)
            return dbg_fail(out, "no symbol '%s' on tile %u (%s has no tensor map)", name, d->tile, d->name), false;
        return dbg_fail(out, "no tensor '%s' in %s and no symbol of that name on tile %u", name, d->name, d->tile),
               false;
    }
    char err[512];
    *kind = ITEM_EXPR;
    *expr = dbg_expr_parse(d, text, err, sizeof err);
    if (!*expr)
        return dbg_fail(out, "%s", err), false;
    return true;
}

/* A value as print shows it; an address also as <symbol+offset> of the
 * selected tile. */
static void value_text(const debugger *d, const dbg_value *v, char fmt, char *buf, size_t n)
{
    dbg_value_format(v, fmt, buf, n);
    if (!(fmt == 'a' || (!fmt && v->type == DBG_ADDR)) || v->u > UINT32_MAX)
        return;
    uint32_t a = (uint32_t)v->u;
    const exe_symbol *sym = exe_symbol_at(d->e, d->tile, a);
    size_t len = strlen(buf);
    if (sym && a == sym->addr)
        snprintf(buf + len, n - len, " <%s>", sym->name);
    else if (sym)
        snprintf(buf + len, n - len, " <%s+0x%x>", sym->name, a - sym->addr);
}

/* Show one item on the selected tile and context; in a display, an
 * expression that cannot be evaluated shows why instead of its value. */
static enum debugger_result show_item(debugger *d, enum item_kind kind, char fmt, const char *text,
                                      const dbg_expr *e, bool display, FILE *out)
{
    size_t n = strcspn(text, " \t[");
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), text);
    switch (kind) {
    case ITEM_REGISTER: {
        uint32_t v;
        char cls;
        dbg_register_value(dbg_cur_tile(d), d->context, name + 1, &v, &cls);
        print_register(out, name + 1, cls, v);
        return DEBUGGER_OK;
    }
    case ITEM_TENSOR: return print_tensor(d, tmap_find(d->tmap, name), text + n, fmt, out);
    case ITEM_SYMBOL: {
        const exe_symbol *sym = dbg_symbol_on_tile(d, d->tile, name);
        if (!sym)
            return dbg_fail(out, "no symbol '%s' on tile %u", name, d->tile);
        uint64_t words = sym->size / 4 ? sym->size / 4 : 1;
        return examine(d, sym->addr, words < 64 ? words : 64, fmt ? fmt : 'x', out);
    }
    default: break;
    }
    dbg_value v;
    char err[512], value[400];
    if (!dbg_expr_eval(d, e, d->tile, d->context, &v, err, sizeof err)) {
        if (!display)
            return dbg_fail(out, "%s", err);
        fprintf(out, "%s = <error: %s>\n", text, err);
        return DEBUGGER_OK;
    }
    value_text(d, &v, fmt, value, sizeof value);
    fprintf(out, "%s = %s\n", text, value);
    return DEBUGGER_OK;
}

/* print[/FMT] $REG | TENSOR [SLICE] | SYMBOL | EXPR */
enum debugger_result dbg_cmd_print(debugger *d, const char *args, FILE *out)
{
    char fmt, text[4096];
    const char *rest;
    if (!parse_format("print", args, &fmt, &rest, out))
        return DEBUGGER_ERROR;
    trimmed(rest, text, sizeof text);
    if (!*text)
        return dbg_fail(out, "print needs $REGISTER, a tensor or a symbol");
    enum item_kind kind;
    dbg_expr *e;
    if (!classify(d, text, fmt, &kind, &e, out))
        return DEBUGGER_ERROR;
    enum debugger_result r = show_item(d, kind, fmt, text, e, false, out);
    dbg_expr_free(e);
    return r;
}

/* "N: [/F ]WHAT = VALUE" of one display. */
static void show_display(debugger *d, const struct dbg_display *s, FILE *out)
{
    fprintf(out, "%d: ", s->id);
    if (s->fmt)
        fprintf(out, "/%c ", s->fmt);
    show_item(d, s->kind, s->fmt, s->text, s->expr, true, out);
}

/* Every display, at a stop. */
void dbg_show_displays(debugger *d, FILE *out)
{
    for (size_t i = 0; i < d->n_displays; i++)
        show_display(d, &d->displays[i], out);
}

/* info display */
void dbg_info_display(debugger *d, FILE *out)
{
    if (!d->n_displays) {
        fprintf(out, "There are no auto-display expressions now.\n");
        return;
    }
    fprintf(out, "Auto-display expressions now in effect:\nNum Expression\n");
    for (size_t i = 0; i < d->n_displays; i++) {
        const struct dbg_display *s = &d->displays[i];
        char id[16];
        snprintf(id, sizeof id, "%d:", s->id);
        if (s->fmt)
            fprintf(out, "%-4s/%c %s\n", id, s->fmt, s->text);
        else
            fprintf(out, "%-4s%s\n", id, s->text);
    }
}

/* Room for one more display. */
static bool grow_displays(debugger *d)
{
    if (d->n_displays < d->cap_displays)
        return true;
    size_t cap = d->cap_displays ? d->cap_displays * 2 : 8;
    struct dbg_display *p = realloc(d->displays, cap * sizeof *p);
    if (!p)
        return false;
    d->displays = p;
    d->cap_displays = cap;
    return true;
}

/* display[/FMT] [EXPR]: shown now and at every stop; without EXPR, every display now. */
enum debugger_result dbg_cmd_display(debugger *d, const char *args, FILE *out)
{
    char fmt, text[4096];
    const char *rest;
    if (!parse_format("display", args, &fmt, &rest, out))
        return DEBUGGER_ERROR;
    trimmed(rest, text, sizeof text);
    if (!*text) {
        if (fmt)
            return dbg_fail(out, "display/%c needs an expression", fmt);
        dbg_show_displays(d, out);
        return DEBUGGER_OK;
    }
    if (d->n_displays >= MAX_DISPLAYS)
        return dbg_fail(out, "there are %d displays already (undisplay some)", MAX_DISPLAYS);
    struct dbg_display s = { .fmt = fmt };
    if (!classify(d, text, fmt, &s.kind, &s.expr, out))
        return DEBUGGER_ERROR;
    s.text = strdup(text);
    if (!s.text || !grow_displays(d)) {
        free(s.text);
        dbg_expr_free(s.expr);
        return dbg_fail(out, "out of host memory");
    }
    s.id = ++d->last_display;
    d->displays[d->n_displays++] = s;
    show_display(d, &s, out);
    return DEBUGGER_OK;
}

/* undisplay N | all */
enum debugger_result dbg_cmd_undisplay(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w))
        return dbg_fail(out, "undisplay needs a display number or 'all'");
    if (!dbg_at_end(rest))
        return dbg_fail(out, "undisplay takes one display number or 'all'");
    if (!strcmp(w, "all")) {
        dbg_free_displays(d);
        fprintf(out, "Deleted all displays.\n");
        return DEBUGGER_OK;
    }
    uint32_t id;
    if (!dbg_parse_u32(w, &id))
        return dbg_fail(out, "undisplay needs a display number or 'all', got '%s'", w);
    for (size_t i = 0; i < d->n_displays; i++)
        if (d->displays[i].id == (int)id) {
            free(d->displays[i].text);
            dbg_expr_free(d->displays[i].expr);
            memmove(&d->displays[i], &d->displays[i + 1], (d->n_displays - i - 1) * sizeof *d->displays);
            d->n_displays--;
            fprintf(out, "Deleted display %u.\n", id);
            return DEBUGGER_OK;
        }
    return dbg_fail(out, "no display number %u", id);
}

/* Free the displays (their numbers go on from the last one). */
void dbg_free_displays(debugger *d)
{
    for (size_t i = 0; i < d->n_displays; i++) {
        free(d->displays[i].text);
        dbg_expr_free(d->displays[i].expr);
    }
    free(d->displays);
    d->displays = NULL;
    d->n_displays = d->cap_displays = 0;
}
