/*
 * debugger_print.c — showing values and places: a code place with its
 * instruction, registers of a context (print $REG), a compiled program's
 * tensors by name and slice (print TENSOR [SLICE]), tile memory (x/NFMT and
 * print SYMBOL) and disassembly with symbols, source lines and breakpoints.
 */
#include "debugger_internal.h"

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
            t ? (unsigned long long)t->s.cycle : 0ull);
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

/* "$m3", "$a0", "$pc", "$FP_CTL" of context k. */
bool dbg_register_value(const ipu_tile *t, unsigned k, const char *name, uint32_t *v, char *kind)
{
    const isa_context *c = &t->s.ctx[k];
    if ((name[0] == 'm' || name[0] == 'a') && name[1] >= '0' && name[1] <= '9') {
        uint32_t r;
        if (!dbg_parse_u32(name + 1, &r) || r > 15 || (name[1] == '0' && name[2]))
            return false;
        *kind = name[0];
        *v = name[0] == 'm' ? c->m[r] : c->a[r];
        return true;
    }
    *kind = 'c';
    if (!strcmp(name, "pc") || !strcmp(name, "PC")) {
        *v = c->pc;
        return true;
    }
    int csr = isa_csr_number(name);
    if (csr < 0)
        return false;
    if (csr == ISA_CSR_COUNT_L)
        *v = (uint32_t)t->s.cycle;
    else if (csr == ISA_CSR_COUNT_U)
        *v = (uint32_t)(t->s.cycle >> 32);
    else if (csr == ISA_CSR_PC)
        *v = c->pc;
    else
        *v = c->csr[csr];
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

/* One tensor element of the tensor map's dtype in words. */
static void format_element(char *buf, size_t n, uint32_t dtype, const uint8_t *p, uint32_t bytes)
{
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    memcpy(&u64, p, bytes < 8 ? bytes : 8);
    memcpy(&u32, p, bytes < 4 ? bytes : 4);
    switch (dtype) {
    case 1: snprintf(buf, n, "%.9g", dbg_bits_f32(u32)); break;
    case 10: snprintf(buf, n, "%.6g", fp16_to_f32((f16_t)u32)); break;
    case 6: snprintf(buf, n, "%d", (int32_t)u32); break;
    case 7: snprintf(buf, n, "%lld", (long long)u64); break;
    case 2: case 9: snprintf(buf, n, "%u", p[0]); break;
    case 3: snprintf(buf, n, "%d", (int8_t)p[0]); break;
    default: snprintf(buf, n, "0x%llx", (unsigned long long)u64); break;
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

/* print TENSOR [SLICE]: the elements read from every tile's pieces, a row a line. */
static enum debugger_result print_tensor(debugger *d, const tmap_tensor *t, const char *slice, FILE *out)
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
    for (uint64_t k = 0; k < count && k < MAX_PRINT_ELEMENTS; k++) {
        uint64_t flat = 0;
        for (uint32_t i = 0; i < t->rank; i++)
            flat = flat * t->dims[i] + idx[i];
        if (k % row == 0) {
            fprintf(out, "%s  [", k ? "\n" : "");
            for (uint32_t i = 0; i < t->rank; i++)
                fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)idx[i]);
            fprintf(out, "]");
        }
        char v[64];
        format_element(v, sizeof v, t->dtype, data + flat * t->element_bytes, t->element_bytes);
        fprintf(out, " %s", v);
        for (uint32_t i = t->rank; i-- > 0;) {
            if (++idx[i] < hi[i])
                break;
            idx[i] = lo[i];
        }
    }
    fprintf(out, "\n");
    if (count > MAX_PRINT_ELEMENTS)
        fprintf(out, "  ... %llu more (print a slice)\n", (unsigned long long)(count - MAX_PRINT_ELEMENTS));
    free(data);
    return DEBUGGER_OK;
}

/* count units of FMT at addr of the selected tile (x/NFMT). */
static enum debugger_result examine(debugger *d, uint32_t addr, uint64_t count, char fmt, FILE *out);

/* print $REG | TENSOR [SLICE] | SYMBOL */
enum debugger_result dbg_cmd_print(debugger *d, const char *args, FILE *out)
{
    const char *s = dbg_skip_blanks(args);
    if (!*s)
        return dbg_fail(out, "print needs $REGISTER, a tensor or a symbol");
    if (*s == '$') {
        char w[64];
        const char *rest = s + 1;
        if (!dbg_next_word(&rest, w, sizeof w) || !dbg_at_end(rest))
            return dbg_fail(out, "print takes one register");
        uint32_t v;
        char kind;
        if (!dbg_register_value(dbg_cur_tile(d), d->context, w, &v, &kind))
            return dbg_fail(out, "unknown register '$%s' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)", w);
        print_register(out, w, kind, v);
        return DEBUGGER_OK;
    }
    char name[256];
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '[' && n + 1 < sizeof name) {
        name[n] = s[n];
        n++;
    }
    name[n] = 0;
    const tmap_tensor *t = d->tmap ? tmap_find(d->tmap, name) : NULL;
    if (t)
        return print_tensor(d, t, s + n, out);
    const exe_symbol *sym = dbg_symbol_on_tile(d, d->tile, name);
    if (sym && dbg_at_end(s + n)) {
        uint64_t words = sym->size / 4 ? sym->size / 4 : 1;
        return examine(d, sym->addr, words < 64 ? words : 64, 'x', out);
    }
    if (!d->tmap)
        return dbg_fail(out, "no symbol '%s' on tile %u (%s has no tensor map)", name, d->tile, d->name);
    return dbg_fail(out, "no tensor '%s' in %s and no symbol of that name on tile %u", name, d->name, d->tile);
}

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
        switch (fmt) {
        case 'x': fprintf(out, " 0x%08x", v); break;
        case 'd': fprintf(out, " %d", (int32_t)v); break;
        case 'u': fprintf(out, " %u", v); break;
        case 'f': fprintf(out, " %.9g", dbg_bits_f32(v)); break;
        case 'h': fprintf(out, " %.6g", fp16_to_f32((f16_t)v)); break;
        default: fprintf(out, " %02x", v); break;
        }
    }
    fprintf(out, "\n");
    return DEBUGGER_OK;
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
            if (!strchr("xdufhb", *s) || (s[1] && s[1] != ' ' && s[1] != '\t'))
                return dbg_fail(out, "x: unknown format '%.16s' (x hex, d decimal, u unsigned, f f32, h f16, b bytes)",
                                s);
            fmt = *s++;
        }
    }
    char w[128];
    if (!dbg_next_word(&s, w, sizeof w) || !dbg_at_end(s))
        return dbg_fail(out, "x needs one address: x/NFMT ADDR");
    uint32_t addr;
    if (!dbg_parse_addr(d, d->tile, w, &addr, out))
        return DEBUGGER_ERROR;
    return examine(d, addr, count, fmt, out);
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
        if (!dbg_parse_addr(d, d->tile, w, &start, out))
            return DEBUGGER_ERROR;
        if (dbg_next_word(&s, w, sizeof w) && (!dbg_parse_u64(w, &count) || count == 0 || count > MAX_DISAS))
            return dbg_fail(out, "disassemble: the count must be 1 to %d", MAX_DISAS);
        if (!dbg_at_end(s))
            return dbg_fail(out, "disassemble takes [ADDR [N]]");
        start &= ~3u;
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
    uint32_t a = start;
    for (uint64_t i = 0; i < count; i++) {
        if (!tile_decoded_at(t, a)) {
            if (i == 0)
                return dbg_fail(out, "tile %u: 0x%x is outside the code (0x%x-0x%x)", d->tile, a, t->code_base,
                            t->code_end ? t->code_end - 1 : 0);
            break;
        }
        char insn[200], where[320];
        size_t bytes = dbg_disasm_at(d, t, a, insn, sizeof insn);
        dbg_symbolize(d, d->tile, a, where, sizeof where);
        fprintf(out, "%s%s0x%x%s:  %s\n", a == pc ? "=>" : "  ", tile_breakpoint_at(t, a) ? "b " : "  ", a, where,
                insn);
        a += (uint32_t)bytes;
    }
    return DEBUGGER_OK;
}
