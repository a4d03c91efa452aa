/*
 * asm.c — the assembler proper: statements, directives, instructions,
 * sections, the two passes, and the executable they produce.
 *
 * Pass 1 reads every statement once (after .include, macro and .rept
 * expansion), selects the instruction row for each mnemonic from the kinds
 * of the operands written, and gives every statement its size, so every
 * label gets its offset in its section.  Sections without an address are
 * then placed (asm.h says where).  Pass 2 evaluates every expression with
 * all addresses known, encodes with isa_encode(), and checks what needs
 * addresses: bundle and instruction alignment, immediate ranges, branch
 * targets, rpt bodies.  If pass 1 found errors pass 2 does not run, so a
 * mistake is reported once and not again as a cascade of shifted
 * addresses.
 */
#include "asm.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_internal.h"
#include "isa/fp16.h"

/* ---- errors ---------------------------------------------------------------- */

void asm_error(asm_ctx *a, asm_loc loc, const char *fmt, ...)
{
    if (a->n_errors >= ASM_MAX_ERRORS) {
        a->too_many_errors = true;
        a->stop = true;
        return;
    }
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *file = loc.file < a->n_files ? a->files[loc.file] : "<input>";
    size_t n = strlen(file) + strlen(msg) + (loc.note ? strlen(loc.note) : 0) + 48;
    char *full = asm_alloc(&a->arena, n);
    snprintf(full, n, "%s:%u:%u: error: %s%s", file, loc.line, loc.col, msg, loc.note ? loc.note : "");
    ASM_GROW(a->errors, a->n_errors, a->cap_errors);
    a->errors[a->n_errors++] = full;
}

/* The location of p inside a statement's text. */
static asm_loc at(asm_loc base, const char *text, const char *p)
{
    return asm_loc_col(base, base.col + (uint32_t)(p - text));
}

/* "'foo'" or "end of line", for "found ..." in messages. */
static void found_text(const char *p, char *buf, size_t n)
{
    p = asm_skip_space(p);
    if (!*p) {
        snprintf(buf, n, "end of line");
        return;
    }
    size_t len = 0;
    while (p[len] && p[len] != ',' && !asm_is_space((unsigned char)p[len]) && len < 40)
        len++;
    if (!len)
        len = 1;
    snprintf(buf, n, "'%.*s'", (int)len, p);
}

static bool expect_end(asm_ctx *a, const char *text, const char *p, asm_loc loc, const char *after)
{
    p = asm_skip_space(p);
    if (!*p)
        return true;
    char found[64];
    found_text(p, found, sizeof found);
    asm_error(a, at(loc, text, p), "expected end of statement after %s, found %s", after, found);
    return false;
}

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

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

static int32_t open_section(asm_ctx *a, const char *name, uint32_t flags, bool flags_explicit, asm_loc loc)
{
    uint32_t idx;
    if (asm_map_get(&a->section_names, name, a->cur_tile, &idx)) {
        asm_section *s = &a->sections[idx];
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
    ASM_GROW(a->sections, a->n_sections, a->cap_sections);
    asm_section *s = &a->sections[a->n_sections];
    memset(s, 0, sizeof *s);
    s->name = asm_strndup(&a->arena, name, strlen(name));
    s->tile = a->cur_tile;
    s->flags = flags_explicit ? flags : default_flags(name);
    s->flags_explicit = flags_explicit;
    s->align = 1;
    s->loc = loc;
    asm_map_put(&a->section_names, s->name, a->cur_tile, (uint32_t)a->n_sections);
    a->cur_section = (int32_t)a->n_sections++;
    return a->cur_section;
}

/* The current section; content before any section directive goes to .text. */
static asm_section *cur_sec(asm_ctx *a, asm_loc loc)
{
    if (a->cur_section < 0)
        open_section(a, ".text", 0, false, loc);
    return &a->sections[a->cur_section];
}

static uint64_t cur_addr(const asm_section *s)
{
    return s->placed ? (uint64_t)s->base + s->size : s->size;
}

/* Add a statement of `size` bytes at the current position. */
static asm_stmt *emit(asm_ctx *a, int kind, uint64_t size, asm_loc loc)
{
    asm_section *s = cur_sec(a, loc);
    uint64_t end = (uint64_t)s->size + size;
    if (end > TILE_MEMORY_BYTES || (s->placed && s->base + end > ISA_MEMORY_END)) {
        if (!s->too_big)
            asm_error(a, loc, "section %s on tile %u grows past the end of tile memory (0x%x)", s->name, s->tile,
                      ISA_MEMORY_END);
        s->too_big = true;
        a->stop = true;   /* what follows would only repeat it */
        return NULL;
    }
    if (!(s->flags & EXE_SEC_NOBITS)) {
        a->total_bytes += size;
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
    st->tile = a->cur_tile;
    st->loc = loc;
    s->size = (uint32_t)end;
    if (kind == ST_INSN || kind == ST_BUNDLE) {
        ASM_GROW(s->stmts, s->n_stmts, s->cap_stmts);
        s->stmts[s->n_stmts++] = a->n_stmts - 1;
    }
    return st;
}

static bool no_bytes_here(asm_ctx *a, asm_loc loc, const char *what)
{
    asm_section *s = cur_sec(a, loc);
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
    asm_section *s = cur_sec(a, loc);
    bool code = (s->flags & EXE_SEC_EXEC) && !(s->flags & EXE_SEC_NOBITS);
    asm_stmt *st = emit(a, code && fill < 0 ? ST_CODEPAD : ST_FILL, n, loc);
    if (st)
        st->fill = (uint8_t)(fill < 0 ? 0 : fill);
}

/* ---- symbols ------------------------------------------------------------------- */

static asm_symbol *new_symbol(asm_ctx *a, const char *name, uint32_t ns, asm_loc loc)
{
    ASM_GROW(a->syms, a->n_syms, a->cap_syms);
    asm_symbol *s = &a->syms[a->n_syms];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->loc = loc;
    asm_map_put(&a->names, name, ns, (uint32_t)a->n_syms);
    a->n_syms++;
    return s;
}

static void define_label(asm_ctx *a, const char *name, const char *shown, bool internal, asm_loc loc)
{
    asm_section *sec = cur_sec(a, loc);
    asm_symbol *old = asm_find_label(a, name, a->cur_tile);
    if (old) {
        asm_error(a, loc, "symbol '%s' is already defined at %s:%u:%u", shown, a->files[old->loc.file],
                  old->loc.line, old->loc.col);
        return;
    }
    old = asm_find_const(a, name);
    if (old) {
        asm_error(a, loc, "'%s' is already defined as a constant at %s:%u:%u", shown, a->files[old->loc.file],
                  old->loc.line, old->loc.col);
        return;
    }
    asm_symbol *s = new_symbol(a, name, a->cur_tile, loc);
    s->kind = SYM_LABEL;
    s->internal = internal;
    s->tile = a->cur_tile;
    s->section = a->cur_section;
    s->offset = sec->size;
    if (!internal)
        sec->n_labels++;
}

enum { DEF_SET, DEF_EQUIV };

static void define_const(asm_ctx *a, const char *name, asm_expr *e, int how, asm_loc loc)
{
    asm_symbol *lab = asm_find_label(a, name, a->cur_tile);
    if (lab) {
        asm_error(a, loc, "'%s' is already defined as a label at %s:%u:%u", name, a->files[lab->loc.file],
                  lab->loc.line, lab->loc.col);
        return;
    }
    asm_symbol *s = asm_find_const(a, name);
    if (s && how == DEF_EQUIV) {
        asm_error(a, loc, "'.equiv' symbol '%s' is already defined at %s:%u:%u", name, a->files[s->loc.file],
                  s->loc.line, s->loc.col);
        return;
    }
    asm_value v;
    enum asm_eval_status st = asm_eval(a, e, a->cur_tile, loc, EVAL_NOW, &v);
    if (st == EV_ERROR)
        return;
    if (!s) {
        s = new_symbol(a, name, ASM_NS_CONST, loc);
        s->kind = SYM_CONST;
    }
    s->loc = loc;
    if (st == EV_OK && v.section < 0) {
        s->known = true;
        s->value = v.v;
        s->expr = NULL;
    } else {
        s->known = false;
        s->expr = e;
        s->expr_tile = a->cur_tile;
    }
}

/* ---- operands and instructions ---------------------------------------------------- */

static const struct { const char *name; uint8_t cls; uint8_t reg; } reg_aliases[] = {
    {"mzero", OPC_M, ISA_MRF_ZERO}, {"lr", OPC_M, ISA_MRF_LR}, {"sp", OPC_M, ISA_MRF_SP},
    {"bp", OPC_M, 8}, {"fp", OPC_M, 9},
    {"azero", OPC_A, ISA_ARF_ZERO}, {"azeros", OPC_AP, 14},
};

/* A small unsigned number of at most 3 digits at *p. */
static int small_number(const char **pp)
{
    const char *p = *pp;
    int v = 0, n = 0;
    while (*p >= '0' && *p <= '9' && n < 4) {
        v = v * 10 + (*p - '0');
        p++;
        n++;
    }
    if (n == 0 || n == 4 || asm_is_ident_char((unsigned char)*p))
        return -1;
    *pp = p;
    return v;
}

static void register_names(const char **names, size_t *n)
{
    static const char *const fixed[] = {"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10",
                                        "m11", "m12", "m13", "m14", "m15", "a0", "a1", "a2", "a3", "a4", "a5",
                                        "a6", "a7", "a8", "a9", "a10", "a11", "a12", "a13", "a14", "a15"};
    *n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        names[(*n)++] = fixed[i];
    for (size_t i = 0; i < sizeof reg_aliases / sizeof reg_aliases[0]; i++)
        names[(*n)++] = reg_aliases[i].name;
    for (unsigned c = 0; c < ISA_CSR_SPACE; c++) {
        const char *nm = isa_csr_name(c);
        if (nm)
            names[(*n)++] = nm;
    }
}

/* Parse one register operand at p (which points at '$'). */
static bool parse_register(asm_ctx *a, const char *text, const char **pp, asm_loc loc, asm_operand *o)
{
    const char *p = *pp, *start = p;
    const char *q = p + 1;
    while (asm_is_ident_char((unsigned char)*q) && *q != '.' && *q != '$')
        q++;
    size_t len = (size_t)(q - p - 1);
    char name[48];
    if (len == 0 || len >= sizeof name) {
        char found[64];
        found_text(start, found, sizeof found);
        asm_error(a, at(loc, text, start), "expected a register name after '$', found %s", found);
        return false;
    }
    memcpy(name, p + 1, len);
    name[len] = 0;
    int cls = -1, reg = -1;
    if ((name[0] == 'm' || name[0] == 'a') && name[1] >= '0' && name[1] <= '9') {
        const char *d = name + 1;
        int v = small_number(&d);
        if (v >= 0 && !*d) {
            if (v > 15) {
                asm_error(a, at(loc, text, start), "no register '$%s': %s registers are $%c0..$%c15", name,
                          name[0] == 'm' ? "MRF" : "ARF", name[0], name[0]);
                return false;
            }
            cls = name[0] == 'm' ? OPC_M : OPC_A;
            reg = v;
        }
    }
    bool numbered = cls >= 0;
    for (size_t i = 0; cls < 0 && i < sizeof reg_aliases / sizeof reg_aliases[0]; i++)
        if (!strcmp(name, reg_aliases[i].name)) {
            cls = reg_aliases[i].cls;
            reg = reg_aliases[i].reg;
        }
    if (cls < 0) {
        int csr = isa_csr_number(name);
        if (csr >= 0) {
            cls = OPC_CSR;
            reg = csr;
        }
    }
    if (cls < 0) {
        const char *names[64 + ISA_CSR_SPACE];
        size_t n;
        register_names(names, &n);
        const char *s = asm_suggest(name, names, n);
        if (s)
            asm_error(a, at(loc, text, start), "unknown register '$%s' (did you mean '$%s'?)", name, s);
        else
            asm_error(a, at(loc, text, start), "unknown register '$%s'", name);
        return false;
    }
    p = q;
    if (*p == ':' && numbered) {
        const char *d = p + 1;
        int hi = small_number(&d);
        if (hi < 0) {
            char found[64];
            found_text(p + 1, found, sizeof found);
            asm_error(a, at(loc, text, p + 1), "expected the last register number of a pair or quad after ':', found %s",
                      found);
            return false;
        }
        if (cls == OPC_M && hi == reg + 1)
            cls = OPC_MP;
        else if (cls == OPC_A && hi == reg + 1)
            cls = OPC_AP;
        else if (cls == OPC_A && hi == reg + 3)
            cls = OPC_AQ;
        else {
            asm_error(a, at(loc, text, start), cls == OPC_M
                      ? "'%.*s' is not an MRF register pair ($mN:N+1)"
                      : "'%.*s' is neither an ARF register pair ($aN:N+1) nor a quad ($aN:N+3)",
                      (int)(d - start), start);
            return false;
        }
        if (hi > 15) {
            asm_error(a, at(loc, text, start), "'%.*s' goes past the last register (15)", (int)(d - start), start);
            return false;
        }
        p = d;
    }
    if (p[0] == '+' && p[1] == '=') {
        if (cls == OPC_M) cls = OPC_M_INC;
        else if (cls == OPC_MP) cls = OPC_MP_INC;
        else {
            asm_error(a, at(loc, text, start), "'%.*s': only MRF registers and pairs can be post-incremented",
                      (int)(p + 2 - start), start);
            return false;
        }
        p += 2;
    }
    o->cls = (uint8_t)cls;
    o->reg = reg;
    o->col = loc.col + (uint32_t)(start - text);
    o->text = asm_strndup(&a->arena, start, (size_t)(p - start));
    *pp = p;
    return true;
}

static bool kind_fits(const isa_operand_desc *k, const asm_operand *o)
{
    switch (k->kind) {
    case ISA_OPND_M: return o->cls == OPC_M;
    case ISA_OPND_M_INC: return o->cls == OPC_M_INC;
    case ISA_OPND_MP: return o->cls == OPC_MP && !(o->reg & 1);
    case ISA_OPND_MP_INC: return o->cls == OPC_MP_INC && !(o->reg & 1);
    case ISA_OPND_A: return o->cls == OPC_A;
    case ISA_OPND_AP: return o->cls == OPC_AP && !(o->reg & 1);
    case ISA_OPND_AQ: return o->cls == OPC_AQ && !(o->reg & 3);
    case ISA_OPND_CSR: return o->cls == OPC_CSR;
    default: return o->cls == OPC_IMM;
    }
}

static void kind_desc(const isa_operand_desc *k, char *buf, size_t n)
{
    switch (k->kind) {
    case ISA_OPND_M: snprintf(buf, n, "MRF register ($m0..$m15)"); break;
    case ISA_OPND_M_INC: snprintf(buf, n, "post-incremented MRF register ($mN+=)"); break;
    case ISA_OPND_MP: snprintf(buf, n, "MRF register pair ($mN:N+1 with N even)"); break;
    case ISA_OPND_MP_INC: snprintf(buf, n, "post-incremented MRF register pair ($mN:N+1+= with N even)"); break;
    case ISA_OPND_A: snprintf(buf, n, "ARF register ($a0..$a15)"); break;
    case ISA_OPND_AP: snprintf(buf, n, "ARF register pair ($aN:N+1 with N even)"); break;
    case ISA_OPND_AQ: snprintf(buf, n, "ARF register quad ($aN:N+3 with N a multiple of 4)"); break;
    case ISA_OPND_CSR: snprintf(buf, n, "control/status register ($NAME)"); break;
    case ISA_OPND_UIMM: snprintf(buf, n, "unsigned %u-bit immediate", k->bits); break;
    case ISA_OPND_SIMM: snprintf(buf, n, "signed %u-bit immediate", k->bits); break;
    default: snprintf(buf, n, "code address (label)"); break;
    }
}

/* The operand kinds of a row as written, with the delta register left out
 * when `short_form` (the "reg, $base, imm" spelling of "reg, $base,
 * $delta, imm" loads and stores). */
static bool short_form_ok(const isa_desc *d)
{
    return d->n_operands >= 3 && d->operands[d->n_operands - 2].kind == ISA_OPND_M &&
           d->operands[d->n_operands - 1].kind == ISA_OPND_UIMM;
}

/* The distinct mnemonics of the table, for "did you mean". */
static size_t all_mnemonics(const char **list)
{
    size_t count = 0;
    for (unsigned i = 0; i < ISA_OP_COUNT; i++) {
        const char *mn = isa_get(i)->mnemonic;
        size_t j;
        for (j = 0; j < count && strcmp(list[j], mn); j++)
            ;
        if (j == count)
            list[count++] = mn;
    }
    return count;
}

/* Parse "mnemonic operands" and select the row.  NULL after an error. */
static asm_insn *parse_insn(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    const char *mn = p;
    while (asm_is_ident_char((unsigned char)*p))
        p++;
    char mnemonic[40];
    size_t mlen = (size_t)(p - mn);
    asm_loc mloc = at(loc, text, mn);
    if (mlen == 0 || (*p && !asm_is_space((unsigned char)*p))) {
        char found[64];
        found_text(mn, found, sizeof found);
        asm_error(a, mloc, "expected an instruction, directive or label, found %s", found);
        return NULL;
    }
    if (mlen >= sizeof mnemonic)
        mlen = sizeof mnemonic - 1;
    memcpy(mnemonic, mn, mlen);
    mnemonic[mlen] = 0;
    enum isa_op rows[32];
    size_t n_rows = isa_lookup_mnemonic(mnemonic, rows, 32);
    if (!n_rows) {
        const char *list[ISA_OP_COUNT];
        size_t nm = all_mnemonics(list);
        const char *s = asm_suggest(mnemonic, list, nm);
        if (s)
            asm_error(a, mloc, "unknown mnemonic '%s' (did you mean '%s'?)", mnemonic, s);
        else
            asm_error(a, mloc, "unknown mnemonic '%s'", mnemonic);
        return NULL;
    }

    /* Operands as written. */
    asm_operand w[ISA_MAX_OPERANDS + 1];
    size_t nw = 0;
    p = asm_skip_space(p);
    while (*p) {
        if (nw == ISA_MAX_OPERANDS + 1) {
            asm_error(a, at(loc, text, p), "too many operands for '%s'", mnemonic);
            return NULL;
        }
        asm_operand *o = &w[nw];
        memset(o, 0, sizeof *o);
        const char *start = p;
        if (*p == ',') {
            asm_error(a, at(loc, text, p), "expected an operand, found ','");
            return NULL;
        }
        if (*p == '$') {
            if (!parse_register(a, text, &p, loc, o))
                return NULL;
        } else {
            o->cls = OPC_IMM;
            o->col = loc.col + (uint32_t)(p - text);
            o->expr = asm_parse_expr(a, text, &p, loc);
            if (!o->expr)
                return NULL;
            const char *e = p;
            while (e > start && asm_is_space((unsigned char)e[-1]))
                e--;
            o->text = asm_strndup(&a->arena, start, (size_t)(e - start));
        }
        nw++;
        p = asm_skip_space(p);
        if (*p == ',') {
            p = asm_skip_space(p + 1);
            if (!*p) {
                asm_error(a, at(loc, text, p), "expected an operand after ',', found end of line");
                return NULL;
            }
            continue;
        }
        if (*p) {
            char found[64];
            found_text(p, found, sizeof found);
            asm_error(a, at(loc, text, p), "expected ',' or end of statement after operand %zu of '%s', found %s",
                      nw, mnemonic, found);
            return NULL;
        }
    }

    /* Row selection: the first row whose operand kinds all fit; otherwise
     * report at the operand where the best attempts failed. */
    static const asm_operand mzero = { OPC_M, ISA_MRF_ZERO, NULL, 0, "$mzero" };
    size_t best_pos = 0;
    bool any_count = false;
    char expected[400] = "";
    unsigned counts = 0;   /* bit n: some row takes n operands */
    for (size_t r = 0; r < n_rows; r++) {
        const isa_desc *d = isa_get(rows[r]);
        counts |= 1u << d->n_operands;
        if (short_form_ok(d))
            counts |= 1u << (d->n_operands - 1);
        for (int form = 0; form < 2; form++) {
            asm_operand v[ISA_MAX_OPERANDS];
            size_t nv = d->n_operands;
            if (form == 0) {
                if (nw != nv)
                    continue;
                memcpy(v, w, nw * sizeof *w);
            } else {
                if (!short_form_ok(d) || nw + 1 != nv)
                    continue;
                memcpy(v, w, (nv - 2) * sizeof *w);
                v[nv - 2] = mzero;
                v[nv - 1] = w[nw - 1];
            }
            any_count = true;
            size_t i;
            for (i = 0; i < nv && kind_fits(&d->operands[i], &v[i]); i++)
                ;
            if (i == nv) {
                if (a->context_mode == 1 && !(d->flags & ISA_F_WRK)) {
                    asm_error(a, mloc, "'%s' cannot be executed by a worker (.worker is in effect)", mnemonic);
                    return NULL;
                }
                if (a->context_mode == 2 && !(d->flags & ISA_F_SUP)) {
                    asm_error(a, mloc, "'%s' cannot be executed by the supervisor (.supervisor is in effect)", mnemonic);
                    return NULL;
                }
                asm_insn *in = asm_alloc(&a->arena, sizeof *in);
                in->op = (uint16_t)rows[r];
                in->n = (uint8_t)nv;
                memcpy(in->opnd, v, nv * sizeof *v);
                in->loc = mloc;
                return in;
            }
            /* Written position of the failing operand. */
            size_t pos = (form == 1 && i == nv - 1) ? nw - 1 : i;
            char desc[100];
            kind_desc(&d->operands[i], desc, sizeof desc);
            if (pos > best_pos || !expected[0]) {
                best_pos = pos;
                snprintf(expected, sizeof expected, "%s", desc);
            } else if (pos == best_pos && !strstr(expected, desc)) {
                size_t used = strlen(expected);
                snprintf(expected + used, sizeof expected - used, " or %s", desc);
            }
        }
    }
    if (!any_count) {
        char list[64] = "";
        int k = 0;
        for (int c = 0; c <= ISA_MAX_OPERANDS; c++)
            if (counts & (1u << c))
                k++;
        int seen = 0;
        for (int c = 0; c <= ISA_MAX_OPERANDS; c++) {
            if (!(counts & (1u << c)))
                continue;
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%d", seen == 0 ? "" : seen == k - 1 ? " or " : ", ", c);
            seen++;
        }
        asm_error(a, mloc, "'%s' takes %s operand%s, found %zu", mnemonic, list,
                  (counts == 2u) ? "" : "s", nw);
        return NULL;
    }
    asm_error(a, asm_loc_col(loc, w[best_pos].col), "expected %s, found '%s'", expected, w[best_pos].text);
    return NULL;
}

/* ---- bundles -------------------------------------------------------------------- */

static void add_to_bundle(asm_ctx *a, asm_insn *in)
{
    if (a->n_bundle == 2) {
        asm_error(a, in->loc, "a bundle holds two instructions; this is a third (the bundle opened at line %u)",
                  a->bundle_loc.line);
        a->bundle_failed = true;
        return;
    }
    a->bundle[a->n_bundle++] = in;
}

static void close_bundle(asm_ctx *a)
{
    a->in_bundle = false;
    if (a->bundle_failed)
        return;
    if (a->n_bundle != 2) {
        asm_error(a, a->bundle_loc, "a bundle needs two instructions, one main and one aux; found %d", a->n_bundle);
        return;
    }
    const isa_desc *d0 = isa_get(a->bundle[0]->op), *d1 = isa_get(a->bundle[1]->op);
    if (d0->pipe == d1->pipe) {
        asm_error(a, a->bundle_loc, "bundle pairs two %s-pipeline instructions ('%s' and '%s'); it needs one main "
                  "and one aux instruction", d0->pipe == ISA_PIPE_MAIN ? "main" : "aux", d0->mnemonic, d1->mnemonic);
        return;
    }
    asm_section *s = cur_sec(a, a->bundle_loc);
    if (!no_bytes_here(a, a->bundle_loc, "a bundle"))
        return;
    if (!(s->flags & EXE_SEC_EXEC)) {
        asm_error(a, a->bundle_loc, "bundle in section %s, which is not executable (use .text or a section with "
                  "flag \"x\")", s->name);
        return;
    }
    asm_stmt *st = emit(a, ST_BUNDLE, ISA_BUNDLE_BYTES, a->bundle_loc);
    if (!st)
        return;
    bool main_first = d0->pipe == ISA_PIPE_MAIN;
    st->insn[0] = a->bundle[main_first ? 0 : 1];
    st->insn[1] = a->bundle[main_first ? 1 : 0];
}

static void single_insn(asm_ctx *a, asm_insn *in)
{
    asm_section *s = cur_sec(a, in->loc);
    if (!no_bytes_here(a, in->loc, "an instruction"))
        return;
    if (!(s->flags & EXE_SEC_EXEC)) {
        asm_error(a, in->loc, "instruction '%s' in section %s, which is not executable (use .text or a section "
                  "with flag \"x\")", isa_get(in->op)->mnemonic, s->name);
        return;
    }
    asm_stmt *st = emit(a, ST_INSN, ISA_INSN_BYTES, in->loc);
    if (st)
        st->insn[0] = in;
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
            asm_error(a, at(c->base, c->text, s), "expected %s, found %s", what, *p ? "'\"\"'" : "an unterminated string");
            return NULL;
        }
        *pp = asm_skip_space(p + 1);
        return asm_strndup(&a->arena, s + 1, (size_t)(p - s - 1));
    }
    if (!asm_is_ident_start((unsigned char)*p) || (p[0] == '.' && !asm_is_ident_char((unsigned char)p[1]))) {
        char found[64];
        found_text(p, found, sizeof found);
        asm_error(a, at(c->base, c->text, p), "expected %s, found %s", what, found);
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
        found_text(p, found, sizeof found);
        asm_error(a, at(c->base, c->text, p), "expected ',' in '%s', found %s", c->name, found);
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
    if (!expect_end(a, c->text, c->args, c->base, c->name))
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
            found_text(s, found, sizeof found);
            asm_error(a, at(c->base, c->text, s), "expected a section name after '.section', found %s", found);
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
                    asm_error(a, at(c->base, c->text, p), "unknown section flag '%c' (the flags are a, w and x)", *p);
                    return;
                }
            }
            if (*p != '"') {
                asm_error(a, at(c->base, c->text, f - 1), "unterminated section flags");
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
                        found_text(p, found, sizeof found);
                        asm_error(a, at(c->base, c->text, p), "expected @progbits or @nobits, found %s", found);
                        return;
                    }
                    p = asm_skip_space(p);
                    if (*p == ',')
                        p = asm_skip_space(p + 1);
                    else
                        goto done;
                }
                addr_loc = at(c->base, c->text, p);
                if (!const_arg(a, c, &p, &addr))
                    return;
                has_addr = true;
            }
        } else {
            addr_loc = at(c->base, c->text, p);
            if (!const_arg(a, c, &p, &addr))
                return;
            has_addr = true;
        }
    }
done:
    if (!expect_end(a, c->text, p, c->base, "'.section'"))
        return;
    int32_t idx = open_section(a, name, flags, flags_explicit, c->loc);
    if (idx >= 0 && has_addr)
        place_section(a, idx, addr, addr_loc);
}

static void d_tile(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t t;
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &t) || !expect_end(a, c->text, p, c->base, "'.tile'"))
        return;
    if (t < 0 || t > ASM_MAX_TILE) {
        asm_error(a, l, "tile number %lld out of range (0..%u)", (long long)t, ASM_MAX_TILE);
        return;
    }
    a->cur_tile = (uint32_t)t;
    a->cur_section = -1;
}

static void d_org(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t v;
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &v) || !expect_end(a, c->text, p, c->base, "'.org'"))
        return;
    asm_section *s = cur_sec(a, c->loc);
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

static void d_align(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    int64_t n, fill = -1;
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &n))
        return;
    if (*p == ',') {
        p++;
        asm_loc fl = at(c->base, c->text, asm_skip_space(p));
        if (!const_arg(a, c, &p, &fill))
            return;
        if (fill < -128 || fill > 255) {
            asm_error(a, fl, "fill byte %lld out of range (-128..255)", (long long)fill);
            return;
        }
        fill &= 0xff;
    }
    if (!expect_end(a, c->text, p, c->base, c->name))
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
    asm_section *s = cur_sec(a, c->loc);
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
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    if (!const_arg(a, c, &p, &n))
        return;
    if (c->arg == 0 && *p == ',') {
        p++;
        asm_loc fl = at(c->base, c->text, asm_skip_space(p));
        if (!const_arg(a, c, &p, &fill))
            return;
        if (fill < -128 || fill > 255) {
            asm_error(a, fl, "fill byte %lld out of range (-128..255)", (long long)fill);
            return;
        }
        fill &= 0xff;
    }
    if (!expect_end(a, c->text, p, c->base, c->name))
        return;
    if (n < 0 || n > (int64_t)TILE_MEMORY_BYTES) {
        asm_error(a, l, "'%s' size %lld out of range (0..%u)", c->name, (long long)n, TILE_MEMORY_BYTES);
        return;
    }
    asm_section *s = cur_sec(a, c->loc);
    if (fill && (s->flags & EXE_SEC_NOBITS)) {
        asm_error(a, c->loc, "'%s' with a fill byte in NOBITS section %s", c->name, s->name);
        return;
    }
    if (n) {
        asm_stmt *st = emit(a, ST_FILL, (uint64_t)n, c->loc);
        if (st)
            st->fill = (uint8_t)fill;
    }
}

static void d_data(asm_ctx *a, const dir_call *c)
{
    char what[24];
    snprintf(what, sizeof what, "'%s'", c->name);
    if (!no_bytes_here(a, c->loc, what))
        return;
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
    if (!expect_end(a, c->text, p, c->base, "a value")) {
        free(items);
        return;
    }
    asm_stmt *st = emit(a, ST_DATA, (uint64_t)n * (unsigned)c->arg, c->loc);
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
    asm_stmt *st = emit(a, ST_RAW, n, c->loc);
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
    if (!no_bytes_here(a, c->loc, what))
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
            put_le(bytes + n, bits, 4);
            n += 4;
        } else {
            float f = fabs(d) <= FLT_MAX || !isfinite(d) ? (float)d : copysignf(INFINITY, (float)(d > 0 ? 1 : -1));
            put_le(bytes + n, fp16_from_f32(f), 2);
            n += 2;
        }
        if (*p != ',')
            break;
        p++;
    }
    if (expect_end(a, c->text, p, c->base, "a value"))
        emit_raw(a, c, bytes, n);
    free(bytes);
}

static void d_ascii(asm_ctx *a, const dir_call *c)
{
    char what[24];
    snprintf(what, sizeof what, "'%s'", c->name);
    if (!no_bytes_here(a, c->loc, what))
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
        memcpy(bytes + n, s, len);
        n += len;
        if (c->arg)
            bytes[n++] = 0;
        if (*p != ',')
            break;
        p++;
    }
    if (expect_end(a, c->text, p, c->base, "a string"))
        emit_raw(a, c, bytes, n);
    free(bytes);
}

static void d_equ(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    const char *name = parse_name(a, c, &p, "a symbol name");
    if (!name || !expect_comma(a, c, &p))
        return;
    cur_sec(a, c->loc);   /* `.` in the value refers to a section */
    asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
    if (!e || !expect_end(a, c->text, p, c->base, "the value"))
        return;
    define_const(a, name, e, c->arg, c->loc);
}

static void add_attr(asm_ctx *a, int what, const char *name, uint8_t type, asm_expr *e, asm_loc loc)
{
    ASM_GROW(a->attrs, a->n_attrs, a->cap_attrs);
    a->attrs[a->n_attrs++] = (asm_symattr){ (uint8_t)what, type, name, a->cur_tile, e, loc };
}

static void d_globl(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    for (;;) {
        asm_loc l = at(c->base, c->text, asm_skip_space(p));
        const char *name = parse_name(a, c, &p, "a symbol name");
        if (!name)
            return;
        add_attr(a, 0, name, 0, NULL, l);
        if (*p != ',')
            break;
        p++;
    }
    expect_end(a, c->text, p, c->base, "the symbol name");
}

static void d_type(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    const char *name = parse_name(a, c, &p, "a symbol name");
    if (!name || !expect_comma(a, c, &p))
        return;
    static const struct { const char *word; uint8_t type; } types[] = {
        {"function", SYMT_FUNC}, {"object", SYMT_OBJECT}, {"notype", SYMT_NOTYPE},
    };
    const char *t = p;
    if (*t == '@' || *t == '%')
        t++;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = strlen(types[i].word);
        if (!strncmp(t, types[i].word, n) && !asm_is_ident_char((unsigned char)t[n])) {
            if (expect_end(a, c->text, t + n, c->base, "the symbol type"))
                add_attr(a, 1, name, types[i].type, NULL, l);
            return;
        }
    }
    char found[64];
    found_text(p, found, sizeof found);
    asm_error(a, at(c->base, c->text, p), "expected @function, @object or @notype, found %s", found);
}

static void d_size(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    const char *name = parse_name(a, c, &p, "a symbol name");
    if (!name || !expect_comma(a, c, &p))
        return;
    cur_sec(a, c->loc);   /* `.` in the size refers to a section */
    asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
    if (!e || !expect_end(a, c->text, p, c->base, "the size"))
        return;
    add_attr(a, 2, name, 0, e, l);
}

static void d_entry(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    for (size_t i = 0; i < a->n_entries; i++)
        if (a->entries[i].tile == a->cur_tile) {
            asm_error(a, c->loc, "second '.entry' for tile %u (the first is at %s:%u)", a->cur_tile,
                      a->files[a->entries[i].loc.file], a->entries[i].loc.line);
            return;
        }
    cur_sec(a, c->loc);
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    asm_expr *e = asm_parse_expr(a, c->text, &p, c->base);
    if (!e || !expect_end(a, c->text, p, c->base, "the entry address"))
        return;
    ASM_GROW(a->entries, a->n_entries, a->cap_entries);
    a->entries[a->n_entries++] = (asm_entry){ a->cur_tile, e, l };
}

static void d_include(asm_ctx *a, const dir_call *c)
{
    const char *p = c->args;
    char *name;
    size_t len;
    if (!asm_parse_string(a, c->text, &p, c->base, &name, &len) || !expect_end(a, c->text, p, c->base, "the file name"))
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
    asm_loc l = at(c->base, c->text, asm_skip_space(p));
    bool ok = const_arg(a, c, &p, &n) && expect_end(a, c->text, p, c->base, "the count");
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
    if (expect_end(a, c->text, c->args, c->base, "'.exitm'"))
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
    if (expect_end(a, c->text, c->args, c->base, c->name))
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

/* ---- conditionals ----------------------------------------------------------------- */

static bool cond_active(const asm_ctx *a)
{
    return a->n_conds == 0 || a->conds[a->n_conds - 1].active;
}

/* Split ".ifc a, b" arguments: compare the two trimmed strings. */
static bool ifc_equal(const char *args)
{
    const char *p = asm_skip_space(args);
    const char *comma = strchr(p, ',');
    if (!comma)
        return !*p;
    const char *e1 = comma;
    while (e1 > p && asm_is_space((unsigned char)e1[-1]))
        e1--;
    const char *q = asm_skip_space(comma + 1);
    const char *e2 = q + strlen(q);
    while (e2 > q && asm_is_space((unsigned char)e2[-1]))
        e2--;
    return e1 - p == e2 - q && !strncmp(p, q, (size_t)(e1 - p));
}

/* Evaluate the condition of an .if-family directive. */
static bool cond_value(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc base, bool *ok)
{
    *ok = true;
    if (!strcmp(dir, ".if") || !strcmp(dir, ".elseif")) {
        int64_t v;
        const char *p = args;
        char what[16];
        snprintf(what, sizeof what, "'%s'", dir);
        if (!asm_parse_const(a, text, &p, base, what, &v) || !expect_end(a, text, p, base, "the condition")) {
            *ok = false;
            return false;
        }
        return v != 0;
    }
    if (!strcmp(dir, ".ifdef") || !strcmp(dir, ".ifndef")) {
        const char *p = asm_skip_space(args);
        const char *s = p;
        while (asm_is_ident_char((unsigned char)*p))
            p++;
        if (p == s) {
            asm_error(a, at(base, text, s), "expected a symbol name after '%s'", dir);
            *ok = false;
            return false;
        }
        char *name = asm_strndup(&a->arena, s, (size_t)(p - s));
        if (!expect_end(a, text, p, base, "the symbol name")) {
            *ok = false;
            return false;
        }
        bool def = asm_find_label(a, name, a->cur_tile) || asm_find_const(a, name);
        return dir[3] == 'd' ? def : !def;
    }
    if (!strcmp(dir, ".ifb") || !strcmp(dir, ".ifnb")) {
        bool blank = !*asm_skip_space(args);
        return dir[3] == 'b' ? blank : !blank;
    }
    /* .ifc / .ifnc */
    bool eq = ifc_equal(args);
    return dir[3] == 'c' ? eq : !eq;
}

static bool is_if(const char *d)
{
    return !strcmp(d, ".if") || !strcmp(d, ".ifdef") || !strcmp(d, ".ifndef") || !strcmp(d, ".ifb") ||
           !strcmp(d, ".ifnb") || !strcmp(d, ".ifc") || !strcmp(d, ".ifnc");
}

/* Handle .if/.elseif/.else/.endif; true if the directive was one. */
static bool conditional(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc base,
                        asm_loc loc, int depth)
{
    if (is_if(dir)) {
        if (a->n_conds == ASM_MAX_COND_DEPTH) {
            asm_error(a, loc, "conditionals nested more than %d deep", ASM_MAX_COND_DEPTH);
            a->stop = true;
            return true;
        }
        bool parent = cond_active(a);
        bool ok = true, v = parent ? cond_value(a, dir, text, args, base, &ok) : false;
        a->conds[a->n_conds++] = (asm_cond){ parent, parent && ok && v, !parent || !ok || v, false, depth, loc };
        return true;
    }
    bool is_else = !strcmp(dir, ".else"), is_elseif = !strcmp(dir, ".elseif"), is_endif = !strcmp(dir, ".endif");
    if (!is_else && !is_elseif && !is_endif)
        return false;
    if (!a->n_conds) {
        asm_error(a, loc, "'%s' without '.if'", dir);
        return true;
    }
    asm_cond *c = &a->conds[a->n_conds - 1];
    if (is_endif) {
        expect_end(a, text, args, base, "'.endif'");
        a->n_conds--;
        return true;
    }
    if (c->seen_else) {
        asm_error(a, loc, "'%s' after '.else' (the '.if' is at line %u)", dir, c->loc.line);
        return true;
    }
    if (is_else) {
        c->seen_else = true;
        c->active = c->parent_active && !c->taken;
        c->taken = true;
        expect_end(a, text, args, base, "'.else'");
        return true;
    }
    if (c->parent_active && !c->taken) {
        bool ok;
        bool v = cond_value(a, ".elseif", text, args, base, &ok);
        c->active = ok && v;
        c->taken = !ok || v;
    } else
        c->active = false;
    return true;
}

/* ---- statements -------------------------------------------------------------------- */

/* A label definition at p: "name:", "123:" or "\"name\":".  Returns the
 * position after ':' or NULL. */
static const char *label_at(const char *p, const char **name, size_t *len, int *type)
{
    const char *q = p;
    if (*p == '"') {
        q = p + 1;
        while (*q && *q != '"')
            q++;
        if (*q != '"' || q == p + 1 || q[1] != ':')
            return NULL;
        *name = p + 1;
        *len = (size_t)(q - p - 1);
        *type = 2;
        return q + 2;
    }
    if (*p >= '0' && *p <= '9') {
        while (*q >= '0' && *q <= '9')
            q++;
        if (*q != ':' || q - p > 40)
            return NULL;
        *type = 1;
    } else if (asm_is_ident_start((unsigned char)*p)) {
        while (asm_is_ident_char((unsigned char)*q))
            q++;
        if (*q != ':' || (q - p == 1 && *p == '.'))
            return NULL;
        *type = 0;
    } else
        return NULL;
    *name = p;
    *len = (size_t)(q - p);
    return q + 1;
}

static const struct directive *find_directive(const char *name, size_t len)
{
    for (size_t i = 0; i < N_DIRECTIVES; i++)
        if (strlen(directives[i].name) == len && !strncmp(directives[i].name, name, len))
            return &directives[i];
    return NULL;
}

/* The directive word at p (".word"), into buf; empty if p is not one. */
static const char *directive_word(const char *p, char *buf, size_t n)
{
    p = asm_skip_space(p);
    buf[0] = 0;
    if (*p != '.' || !asm_is_ident_char((unsigned char)p[1]))
        return p;
    const char *q = p + 1;
    while (asm_is_ident_char((unsigned char)*q))
        q++;
    size_t len = (size_t)(q - p);
    if (len < n) {
        memcpy(buf, p, len);
        buf[len] = 0;
    }
    return q;
}

static void finish_collecting(asm_ctx *a)
{
    asm_stmt_text *body = NULL;
    if (a->n_collect) {
        body = asm_alloc(&a->arena, a->n_collect * sizeof *body);
        memcpy(body, a->collect_body, a->n_collect * sizeof *body);
    }
    if (a->collecting == 1) {
        if (a->collect_macro) {
            a->collect_macro->body = body;
            a->collect_macro->n_body = a->n_collect;
        }
    } else
        asm_push_rept(a, body, a->n_collect, a->collect_count, a->collect_loc);
    a->collecting = 0;
    a->collect_macro = NULL;
    a->n_collect = 0;
}

static void process_stmt(asm_ctx *a, asm_stmt_text *st, int depth)
{
    const char *text = st->text;
    asm_loc loc = st->loc;
    char dir[40];

    if (a->collecting) {
        if (depth < a->collect_depth) {
            asm_error(a, a->collect_loc, a->collecting == 1 ? "'.macro' without '.endm'" : "'.rept' without '.endr'");
            a->collecting = 0;
            a->n_collect = 0;
        } else {
            directive_word(text, dir, sizeof dir);
            if (!strcmp(dir, ".macro") || !strcmp(dir, ".rept") || !strcmp(dir, ".irp"))
                a->collect_nest++;
            else if (!strcmp(dir, ".endm") || !strcmp(dir, ".endr")) {
                bool closes = a->collecting == 1 ? !strcmp(dir, ".endm") : !strcmp(dir, ".endr");
                if (a->collect_nest == 0 && closes) {
                    finish_collecting(a);
                    return;
                }
                if (a->collect_nest > 0)
                    a->collect_nest--;
            }
            ASM_GROW(a->collect_body, a->n_collect, a->cap_collect);
            a->collect_body[a->n_collect++] = *st;
            return;
        }
    }

    /* Find the statement's keyword behind any labels. */
    const char *p = asm_skip_space(text);
    const char *name;
    size_t len;
    int type;
    const char *after;
    const char *body = p;
    while ((after = label_at(body, &name, &len, &type)))
        body = asm_skip_space(after);
    const char *args = directive_word(body, dir, sizeof dir);

    if (dir[0] && conditional(a, dir, text, args, loc, at(loc, text, body), depth))
        return;
    if (!cond_active(a))
        return;

    /* Labels. */
    while ((after = label_at(p, &name, &len, &type))) {
        asm_loc l = at(loc, text, p);
        if (a->in_bundle) {
            asm_error(a, l, "label '%.*s' inside a bundle (the bundle opened at line %u)", (int)len, name,
                      a->bundle_loc.line);
            a->bundle_failed = true;
        } else if (type == 1) {
            int64_t k = asm_local_count(a, name, len, true);
            define_label(a, asm_local_name(a, name, len, k), asm_strndup(&a->arena, name, len), true, l);
        } else {
            char *nm = asm_strndup(&a->arena, name, len);
            define_label(a, nm, nm, false, l);
        }
        p = asm_skip_space(after);
    }
    if (!*p)
        return;

    /* Bundles. */
    bool close = false;
    asm_loc ploc = at(loc, text, p);
    if (*p == '{') {
        if (a->in_bundle) {
            asm_error(a, ploc, "'{' inside a bundle (the bundle opened at line %u)", a->bundle_loc.line);
            a->bundle_failed = true;
        } else {
            a->in_bundle = true;
            a->bundle_loc = ploc;
            a->n_bundle = 0;
            a->bundle_failed = false;
        }
        p = asm_skip_space(p + 1);
        if (label_at(p, &name, &len, &type)) {
            asm_error(a, at(loc, text, p), "label '%.*s' inside a bundle (the bundle opened at line %u)", (int)len,
                      name, a->bundle_loc.line);
            a->bundle_failed = true;
            p = asm_skip_space(label_at(p, &name, &len, &type));
        }
    }
    size_t n = strlen(p);
    while (n && asm_is_space((unsigned char)p[n - 1]))
        n--;
    if (n && p[n - 1] == '}') {
        close = true;
        if (!a->in_bundle) {
            asm_error(a, at(loc, text, p + n - 1), "'}' without '{'");
            return;
        }
        /* A copy without the '}', so columns stay those of the source. */
        size_t off = (size_t)(p - text);
        char *copy = asm_strndup(&a->arena, text, strlen(text));
        copy[off + n - 1] = ' ';
        text = copy;
        p = copy + off;
    }
    p = asm_skip_space(p);
    if (*p) {
        args = directive_word(p, dir, sizeof dir);
        if (dir[0]) {
            const struct directive *d = find_directive(dir, strlen(dir));
            if (a->in_bundle) {
                asm_error(a, at(loc, text, p), "directive '%s' inside a bundle (the bundle opened at line %u)", dir,
                          a->bundle_loc.line);
                a->bundle_failed = true;
            } else if (!d || !d->fn) {
                const char *names[N_DIRECTIVES];
                for (size_t i = 0; i < N_DIRECTIVES; i++)
                    names[i] = directives[i].name;
                const char *s = asm_suggest(dir, names, N_DIRECTIVES);
                if (s)
                    asm_error(a, at(loc, text, p), "unknown directive '%s' (did you mean '%s'?)", dir, s);
                else
                    asm_error(a, at(loc, text, p), "unknown directive '%s'", dir);
            } else {
                dir_call c = { text, args, d->name, at(loc, text, p), loc, d->arg };
                d->fn(a, &c);
                if (a->collecting)
                    a->collect_depth = depth;
            }
        } else {
            const char *w = p;
            while (asm_is_ident_char((unsigned char)*w))
                w++;
            const char *after_word = asm_skip_space(w);
            if (w > p && after_word[0] == '=' && after_word[1] != '=' && !a->in_bundle) {
                /* NAME = EXPR */
                char *cname = asm_strndup(&a->arena, p, (size_t)(w - p));
                const char *q = after_word + 1;
                cur_sec(a, loc);
                asm_expr *e = asm_parse_expr(a, text, &q, loc);
                if (e && expect_end(a, text, q, loc, "the value"))
                    define_const(a, cname, e, DEF_SET, at(loc, text, p));
            } else {
                asm_macro *m = w > p ? asm_find_macro(a, asm_strndup(&a->arena, p, (size_t)(w - p))) : NULL;
                if (m) {
                    if (close) {
                        /* The bundle closes after the macro's statements. */
                        static char brace[] = "}";
                        asm_stmt_text *closing = asm_alloc(&a->arena, sizeof *closing);
                        closing->text = brace;
                        closing->loc = at(loc, text, p + n - 1);
                        closing->loc.note = loc.note;
                        asm_push_rept(a, closing, 1, 1, loc);
                        close = false;
                    }
                    asm_push_macro(a, m, w, at(loc, text, p));
                } else {
                    cur_sec(a, at(loc, text, p));   /* `.` in operands needs a section */
                    asm_insn *in = parse_insn(a, text, p, loc);
                    if (!in) {
                        if (a->in_bundle)
                            a->bundle_failed = true;
                    } else if (a->in_bundle)
                        add_to_bundle(a, in);
                    else
                        single_insn(a, in);
                }
            }
        }
    }
    if (close)
        close_bundle(a);
}

/* ---- layout ------------------------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* The first address in [lo, hi) aligned to `align` where `size` bytes do
 * not overlap any of the sections in `used`. */
static bool first_fit(const asm_ctx *a, const uint32_t *used, size_t n_used, uint32_t lo, uint32_t hi,
                      uint32_t size, uint32_t align, uint32_t *out)
{
    uint64_t cand = ((uint64_t)lo + align - 1) & ~(uint64_t)(align - 1);
    for (;;) {
        bool moved = false;
        for (size_t i = 0; i < n_used; i++) {
            const asm_section *s = &a->sections[used[i]];
            uint64_t b = s->base, e = (uint64_t)s->base + s->size;
            if (s->size && size && cand < e && b < cand + size) {
                cand = (e + align - 1) & ~(uint64_t)(align - 1);
                moved = true;
            }
        }
        if (!moved)
            break;
    }
    if (cand + size > hi)
        return false;
    *out = (uint32_t)cand;
    return true;
}

static void layout_tile(asm_ctx *a, uint32_t tile)
{
    uint32_t *idx = asm_xrealloc(NULL, a->n_sections * sizeof *idx);
    uint32_t *used = asm_xrealloc(NULL, a->n_sections * sizeof *used);
    size_t n = 0, n_used = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].tile == tile)
            idx[n++] = (uint32_t)i;

    /* Sections with an address: in memory, code in region 0, no overlap. */
    for (size_t k = 0; k < n; k++) {
        asm_section *s = &a->sections[idx[k]];
        if (!s->placed)
            continue;
        uint64_t end = (uint64_t)s->base + s->size;
        uint32_t limit = (s->flags & EXE_SEC_EXEC) ? ISA_REGION1_BASE : ISA_MEMORY_END;
        if (end > limit) {
            asm_error(a, s->place_loc, "section %s (0x%x..0x%llx, %u bytes) on tile %u runs past 0x%x, the end of %s",
                      s->name, s->base, (unsigned long long)end - 1, s->size, tile, limit,
                      (s->flags & EXE_SEC_EXEC) ? "region 0 (code must be in region 0)" : "tile memory");
            continue;
        }
        for (size_t j = 0; j < n_used; j++) {
            asm_section *o = &a->sections[used[j]];
            if (s->size && o->size && s->base < (uint64_t)o->base + o->size && o->base < end) {
                asm_error(a, s->place_loc, "section %s (0x%x..0x%llx) overlaps section %s (0x%x..0x%x) on tile %u",
                          s->name, s->base, (unsigned long long)end - 1, o->name, o->base, o->base + o->size - 1, tile);
                break;
            }
        }
        used[n_used++] = idx[k];
    }
    /* The others: code, then initialised data, then NOBITS. */
    for (int cls = 0; cls < 3; cls++) {
        for (size_t k = 0; k < n; k++) {
            asm_section *s = &a->sections[idx[k]];
            int c = (s->flags & EXE_SEC_EXEC) ? 0 : (s->flags & EXE_SEC_NOBITS) ? 2 : 1;
            if (s->placed || c != cls)
                continue;
            uint32_t align = s->align > 8 ? s->align : 8;
            uint32_t base;
            bool ok = cls == 0 ? first_fit(a, used, n_used, ISA_REGION0_BASE, ISA_REGION1_BASE, s->size, align, &base)
                               : (first_fit(a, used, n_used, ISA_REGION1_BASE, ISA_MEMORY_END, s->size, align, &base) ||
                                  first_fit(a, used, n_used, ISA_REGION0_BASE, ISA_REGION1_BASE, s->size, align, &base));
            if (!ok) {
                asm_error(a, s->loc, "section %s (%u bytes) does not fit in the free %s of tile %u", s->name, s->size,
                          cls == 0 ? "region 0" : "memory", tile);
                continue;
            }
            s->base = base;
            s->placed = true;
            used[n_used++] = idx[k];
        }
    }
    free(idx);
    free(used);
}

static void layout(asm_ctx *a)
{
    uint32_t *tiles = asm_xrealloc(NULL, (a->n_sections ? a->n_sections : 1) * sizeof *tiles);
    for (size_t i = 0; i < a->n_sections; i++)
        tiles[i] = a->sections[i].tile;
    qsort(tiles, a->n_sections, sizeof *tiles, cmp_u32);
    for (size_t i = 0; i < a->n_sections; i++)
        if (i == 0 || tiles[i] != tiles[i - 1])
            layout_tile(a, tiles[i]);
    free(tiles);
}

/* ---- pass 2 ------------------------------------------------------------------------- */

typedef struct line_rec { uint32_t tile, addr, file, line; } line_rec;

static bool eval_final(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc, int64_t *out)
{
    asm_value v;
    if (asm_eval(a, e, tile, loc, EVAL_FINAL, &v) != EV_OK)
        return false;
    *out = v.v;
    return true;
}

static bool encode_insn(asm_ctx *a, const asm_insn *in, uint32_t tile, uint32_t *word)
{
    const isa_desc *d = isa_get(in->op);
    int32_t vals[ISA_MAX_OPERANDS] = {0};
    for (unsigned i = 0; i < d->n_operands; i++) {
        const isa_operand_desc *k = &d->operands[i];
        const asm_operand *o = &in->opnd[i];
        if (o->cls != OPC_IMM) {
            vals[i] = o->reg;
            continue;
        }
        asm_loc l = asm_loc_col(in->loc, o->col);
        int64_t v;
        if (!eval_final(a, o->expr, tile, l, &v))
            return false;
        if (k->kind == ISA_OPND_UIMM) {
            int64_t max = ((int64_t)1 << k->bits) - 1;
            if (v < 0 || v > max) {
                asm_error(a, l, "immediate %lld out of range for %s: unsigned %u-bit (0..%lld)", (long long)v,
                          d->mnemonic, k->bits, (long long)max);
                return false;
            }
        } else if (k->kind == ISA_OPND_SIMM) {
            int64_t lim = (int64_t)1 << (k->bits - 1);
            if (v < -lim || v >= lim) {
                asm_error(a, l, "immediate %lld out of range for %s: signed %u-bit (%lld..%lld)", (long long)v,
                          d->mnemonic, k->bits, (long long)-lim, (long long)lim - 1);
                return false;
            }
        } else if (k->kind == ISA_OPND_TARGET) {
            if (v < ISA_REGION0_BASE || v >= ISA_REGION1_BASE) {
                asm_error(a, l, "branch target 0x%llx is outside region 0 (0x%x..0x%x), the only executable region",
                          (unsigned long long)v, ISA_REGION0_BASE, ISA_REGION1_BASE - 1);
                return false;
            }
            if (v & 3) {
                asm_error(a, l, "branch target 0x%llx is not 4-byte aligned", (unsigned long long)v);
                return false;
            }
        }
        vals[i] = (int32_t)v;
    }
    char err[200];
    if (!isa_encode(in->op, vals, word, err, sizeof err)) {
        const char *msg = err;
        if (!strncmp(msg, "operand ", 8) && strchr(msg, ':'))
            msg = asm_skip_space(strchr(msg, ':') + 1);
        asm_error(a, in->loc, "cannot encode '%s': %s", d->mnemonic, msg);
        return false;
    }
    return true;
}

static void add_line(line_rec **lines, size_t *n, size_t *cap, uint32_t tile, uint32_t addr, asm_loc loc)
{
    ASM_GROW(*lines, *n, *cap);
    (*lines)[(*n)++] = (line_rec){ tile, addr, loc.file, loc.line };
}

static void pass2(asm_ctx *a, line_rec **lines, size_t *n_lines)
{
    size_t cap_lines = 0;
    for (size_t i = 0; i < a->n_sections; i++) {
        asm_section *s = &a->sections[i];
        if (!(s->flags & EXE_SEC_NOBITS) && s->size)
            s->bytes = asm_xrealloc(NULL, s->size), memset(s->bytes, 0, s->size);
    }
    for (size_t i = 0; i < a->n_stmts && !a->stop; i++) {
        asm_stmt *st = &a->stmts[i];
        asm_section *s = &a->sections[st->section];
        uint32_t addr = s->base + st->offset;
        uint8_t *out = s->bytes ? s->bytes + st->offset : NULL;
        if (!out && st->kind != ST_FILL)
            continue;   /* NOBITS: rejected in pass 1 */
        switch (st->kind) {
        case ST_INSN: {
            if (addr & 3) {
                asm_error(a, st->loc, "instruction at 0x%x is not 4-byte aligned", addr);
                break;
            }
            uint32_t w;
            if (encode_insn(a, st->insn[0], st->tile, &w)) {
                put_le(out, w, 4);
                add_line(lines, n_lines, &cap_lines, st->tile, addr, st->insn[0]->loc);
            }
            break;
        }
        case ST_BUNDLE: {
            if (addr & 7) {
                asm_error(a, st->loc, "bundle at 0x%x is not 8-byte aligned", addr);
                break;
            }
            uint32_t w0, w1;
            if (encode_insn(a, st->insn[0], st->tile, &w0) && encode_insn(a, st->insn[1], st->tile, &w1)) {
                put_le(out, w0 | ISA_COISSUE_BIT, 4);
                put_le(out + 4, w1, 4);
                add_line(lines, n_lines, &cap_lines, st->tile, addr, st->insn[0]->loc);
                add_line(lines, n_lines, &cap_lines, st->tile, addr + 4, st->insn[1]->loc);
            }
            break;
        }
        case ST_DATA:
            for (uint32_t k = 0; k < st->n_items; k++) {
                int64_t v;
                asm_loc l = asm_loc_col(st->loc, st->items[k]->col);
                if (!eval_final(a, st->items[k], st->tile, l, &v))
                    continue;
                if (st->width < 8) {
                    int64_t lo = -((int64_t)1 << (8 * st->width - 1)), hi = ((int64_t)1 << (8 * st->width)) - 1;
                    if (v < lo || v > hi) {
                        asm_error(a, l, "value %lld does not fit in %u bits (%lld..%lld)", (long long)v,
                                  8u * st->width, (long long)lo, (long long)hi);
                        continue;
                    }
                }
                put_le(out + k * st->width, (uint64_t)v, st->width);
            }
            break;
        case ST_RAW:
            memcpy(out, st->raw, st->size);
            break;
        case ST_FILL:
            if (out)
                memset(out, st->fill, st->size);
            break;
        case ST_CODEPAD: {
            uint32_t k = 0;
            for (; k < st->size && ((addr + k) & 3); k++)
                out[k] = 0;
            for (; k + 4 <= st->size; k += 4)
                put_le(out + k, a->nop_word, 4);
            for (; k < st->size; k++)
                out[k] = 0;
            break;
        }
        }
    }
}

/* The statement holding the instruction word at addr of section s. */
static const asm_insn *insn_at(const asm_ctx *a, const asm_section *s, uint32_t addr)
{
    size_t lo = 0, hi = s->n_stmts;
    uint32_t off = addr - s->base;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const asm_stmt *st = &a->stmts[s->stmts[mid]];
        if (off < st->offset)
            hi = mid;
        else if (off >= st->offset + st->size)
            lo = mid + 1;
        else
            return st->kind == ST_BUNDLE && off >= st->offset + 4 ? st->insn[1] : st->insn[0];
    }
    return NULL;
}

/* rpt bodies (exec.h): the (size+1) bundles after the rpt, 8-byte aligned,
 * with no control instructions; found here rather than as a fault at run
 * time. */
static void check_rpt(asm_ctx *a)
{
    for (size_t i = 0; i < a->n_sections; i++) {
        asm_section *s = &a->sections[i];
        if (!s->bytes)
            continue;
        for (size_t k = 0; k < s->n_stmts; k++) {
            const asm_stmt *st = &a->stmts[s->stmts[k]];
            const asm_insn *in = st->insn[0];
            if (in->op != ISA_OP_RPT && in->op != ISA_OP_RPT_M)
                continue;
            isa_insn dec;
            uint32_t w = (uint32_t)s->bytes[st->offset] | (uint32_t)s->bytes[st->offset + 1] << 8 |
                         (uint32_t)s->bytes[st->offset + 2] << 16 | (uint32_t)s->bytes[st->offset + 3] << 24;
            if (!isa_decode(w, &dec) || (dec.op != ISA_OP_RPT && dec.op != ISA_OP_RPT_M))
                continue;   /* not encoded: already reported */
            uint32_t body = s->base + st->offset + st->size;
            uint64_t end = (uint64_t)body + ((uint64_t)dec.operand[1] + 1) * ISA_BUNDLE_BYTES;
            if (body & 7) {
                asm_error(a, in->loc, "'rpt' body at 0x%x is not 8-byte aligned (the rpt must be at an address "
                          "4 past a multiple of 8)", body);
                continue;
            }
            if (end > (uint64_t)s->base + s->size) {
                asm_error(a, in->loc, "'rpt' body (%u bundles from 0x%x) runs past the end of section %s at 0x%x",
                          (unsigned)dec.operand[1] + 1, body, s->name, s->base + s->size);
                continue;
            }
            for (uint32_t addr = body; addr < end; addr += 4) {
                const uint8_t *b = s->bytes + (addr - s->base);
                uint32_t bw = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                isa_insn bi;
                if (!isa_decode(bw, &bi) || !(isa_get(bi.op)->flags & ISA_F_CTRL))
                    continue;
                const asm_insn *bad = insn_at(a, s, addr);
                asm_error(a, bad ? bad->loc : in->loc, "'rpt' body may not contain control instruction '%s' "
                          "(the rpt is at line %u)", isa_get(bi.op)->mnemonic, in->loc.line);
                break;
            }
        }
    }
}

static void apply_attrs(asm_ctx *a)
{
    for (size_t i = 0; i < a->n_attrs; i++) {
        asm_symattr *t = &a->attrs[i];
        asm_symbol *s = asm_find_label(a, t->name, t->tile);
        if (!s) {
            if (asm_find_const(a, t->name) && t->what != 2)
                continue;   /* an absolute symbol: nothing to export */
            static const char *const dirs[] = {".globl", ".type", ".size"};
            asm_error(a, t->loc, "'%s' names '%s', which is not a label on tile %u", dirs[t->what], t->name, t->tile);
            continue;
        }
        if (t->what == 0)
            s->global = true;
        else if (t->what == 1)
            s->type = t->type;
        else {
            int64_t v;
            if (!eval_final(a, t->expr, t->tile, t->loc, &v))
                continue;
            if (v < 0 || v > UINT32_MAX) {
                asm_error(a, t->loc, "size %lld of '%s' out of range", (long long)v, t->name);
                continue;
            }
            s->size = (uint32_t)v;
            s->has_size = true;
        }
    }
}

/* ---- output ------------------------------------------------------------------------- */

static bool tile_entry(asm_ctx *a, uint32_t tile, uint32_t *entry)
{
    for (size_t i = 0; i < a->n_entries; i++) {
        if (a->entries[i].tile != tile)
            continue;
        int64_t v;
        if (!eval_final(a, a->entries[i].expr, tile, a->entries[i].loc, &v))
            return false;
        if (v < ISA_REGION0_BASE || v >= ISA_REGION1_BASE || (v & 3)) {
            asm_error(a, a->entries[i].loc, "entry 0x%llx is not a 4-byte aligned address in region 0 (0x%x..0x%x)",
                      (unsigned long long)v, ISA_REGION0_BASE, ISA_REGION1_BASE - 1);
            return false;
        }
        *entry = (uint32_t)v;
        return true;
    }
    asm_symbol *s = asm_find_label(a, "__supervisor", tile);
    if (s) {
        const asm_section *sec = &a->sections[s->section];
        *entry = sec->base + s->offset;
        if (!(sec->flags & EXE_SEC_EXEC)) {
            asm_error(a, s->loc, "'__supervisor', the supervisor entry of tile %u, is in section %s, which is not "
                      "executable", tile, sec->name);
            return false;
        }
        if (*entry & 3) {
            asm_error(a, s->loc, "'__supervisor', the supervisor entry of tile %u, at 0x%x is not 4-byte aligned",
                      tile, *entry);
            return false;
        }
        return true;
    }
    uint32_t idx;
    if (asm_map_get(&a->section_names, ".text", tile, &idx) && (a->sections[idx].flags & EXE_SEC_EXEC) &&
        a->sections[idx].size) {
        *entry = a->sections[idx].base;
        return true;
    }
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].tile == tile && (a->sections[i].flags & EXE_SEC_EXEC) && a->sections[i].size) {
            *entry = a->sections[i].base;
            return true;
        }
    return false;
}

static ipu_exe *build_exe(asm_ctx *a, const line_rec *lines, size_t n_lines)
{
    ipu_exe *e = exe_new();
    if (!e) {
        asm_error(a, (asm_loc){ 0, 0, 0, NULL }, "out of memory");
        return NULL;
    }
    uint32_t *file_index = asm_xrealloc(NULL, (a->n_files ? a->n_files : 1) * sizeof *file_index);
    for (size_t i = 0; i < a->n_files; i++)
        file_index[i] = exe_add_file(e, a->files[i]);
    char err[300];
    for (size_t i = 0; i < a->n_sections && !a->n_errors; i++) {
        asm_section *s = &a->sections[i];
        /* An empty section is kept if it holds labels or was placed: what
         * the disassembler prints comes back the same. */
        if (!s->size && !s->n_labels && !s->placed_explicitly)
            continue;
        if (!exe_add_section(e, s->tile, s->name, s->base, s->bytes, s->size, s->flags, err, sizeof err))
            asm_error(a, s->loc, "%s", err);
    }
    for (size_t i = 0; i < a->n_syms; i++) {
        asm_symbol *s = &a->syms[i];
        if (s->kind != SYM_LABEL || s->internal)
            continue;
        const asm_section *sec = &a->sections[s->section];
        enum exe_symbol_kind kind = (sec->flags & EXE_SEC_EXEC) ? EXE_SYM_CODE : EXE_SYM_DATA;
        if (s->type == SYMT_FUNC) kind = EXE_SYM_CODE;
        else if (s->type == SYMT_OBJECT) kind = EXE_SYM_DATA;
        else if (s->type == SYMT_NOTYPE) kind = EXE_SYM_OTHER;
        if (!exe_add_symbol(e, s->tile, s->name, sec->base + s->offset, s->size, kind, s->global))
            asm_error(a, s->loc, "cannot add symbol '%s'", s->name);
    }
    for (size_t i = 0; i < n_lines; i++)
        exe_add_line(e, lines[i].tile, lines[i].addr, file_index[lines[i].file], lines[i].line);
    /* Entries: every tile with code or an .entry, in tile order. */
    uint32_t *tiles = asm_xrealloc(NULL, (a->n_sections + a->n_entries + 1) * sizeof *tiles);
    size_t n_tiles = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].size || a->sections[i].n_labels)
            tiles[n_tiles++] = a->sections[i].tile;
    for (size_t i = 0; i < a->n_entries; i++)
        tiles[n_tiles++] = a->entries[i].tile;
    qsort(tiles, n_tiles, sizeof *tiles, cmp_u32);
    for (size_t i = 0; i < n_tiles; i++) {
        uint32_t entry;
        if ((i == 0 || tiles[i] != tiles[i - 1]) && tile_entry(a, tiles[i], &entry))
            exe_set_entry(e, tiles[i], entry);
    }
    free(tiles);
    free(file_index);
    e->relocatable = false;
    if (a->n_errors) {
        exe_free(e);
        return NULL;
    }
    return e;
}

static void report(asm_ctx *a, char *err, size_t err_size)
{
    if (!err || !err_size)
        return;
    size_t used = 0;
    err[0] = 0;
    for (size_t i = 0; i < a->n_errors && used + 1 < err_size; i++) {
        int k = snprintf(err + used, err_size - used, "%s%s", i ? "\n" : "", a->errors[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    if (a->too_many_errors && used + 1 < err_size)
        snprintf(err + used, err_size - used, "\ntoo many errors; stopping");
}

static void ctx_init(asm_ctx *a, const asm_options *opt)
{
    memset(a, 0, sizeof *a);
    isa_init();
    if (opt)
        a->opt = *opt;
    a->cur_tile = a->opt.default_tile;
    a->cur_section = -1;
    int32_t none[ISA_MAX_OPERANDS] = {0};
    if (!isa_encode(ISA_OP_NOP, none, &a->nop_word, NULL, 0))
        a->nop_word = 0;
}

static void ctx_free(asm_ctx *a)
{
    asm_free_sources(a);
    for (size_t i = 0; i < a->n_sections; i++) {
        free(a->sections[i].bytes);
        free(a->sections[i].stmts);
    }
    free(a->sections);
    free(a->stmts);
    free(a->syms);
    free(a->attrs);
    free(a->entries);
    free(a->local_counts);
    free(a->macros);
    free(a->collect_body);
    free(a->files);
    free(a->errors);
    asm_map_free(&a->names);
    asm_map_free(&a->section_names);
    asm_arena_free(&a->arena);
}

static ipu_exe *assemble(asm_ctx *a, char *err, size_t err_size)
{
    asm_stmt_text st;
    int depth;
    while (!a->stop && asm_next_stmt(a, &st, &depth))
        process_stmt(a, &st, depth);
    if (!a->stop) {
        if (a->collecting)
            asm_error(a, a->collect_loc, a->collecting == 1 ? "'.macro' without '.endm'" : "'.rept' without '.endr'");
        for (int i = 0; i < a->n_conds; i++)
            asm_error(a, a->conds[i].loc, "'.if' without '.endif'");
        if (a->in_bundle)
            asm_error(a, a->bundle_loc, "bundle '{' is not closed with '}'");
    }
    ipu_exe *e = NULL;
    line_rec *lines = NULL;
    size_t n_lines = 0;
    if (!a->n_errors)
        layout(a);
    if (!a->n_errors) {
        pass2(a, &lines, &n_lines);
        apply_attrs(a);
        check_rpt(a);
    }
    if (!a->n_errors)
        e = build_exe(a, lines, n_lines);
    free(lines);
    if (!e)
        report(a, err, err_size);
    else if (err && err_size)
        err[0] = 0;
    ctx_free(a);
    return e;
}

ipu_exe *asm_assemble_file(const char *path, const asm_options *opt, char *err, size_t err_size)
{
    asm_ctx a;
    ctx_init(&a, opt);
    if (!asm_push_file(&a, path, path, (asm_loc){ 0, 0, 0, NULL })) {
        report(&a, err, err_size);
        ctx_free(&a);
        return NULL;
    }
    return assemble(&a, err, err_size);
}

ipu_exe *asm_assemble_string(const char *text, const char *name, const asm_options *opt, char *err,
                             size_t err_size)
{
    asm_ctx a;
    ctx_init(&a, opt);
    asm_push_string(&a, text ? text : "", name ? name : "<string>");
    return assemble(&a, err, err_size);
}
