/*
 * asm_insn.c — instructions: registers and operands as written, selection
 * of the instruction row from the kinds of the operands, bundles of one
 * main and one aux instruction, and the encoding of an instruction in
 * pass 2 with its immediates checked against their fields.
 */
#include "asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        asm_found_text(start, found, sizeof found);
        asm_error(a, asm_at(loc, text, start), "expected a register name after '$', found %s", found);
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
                asm_error(a, asm_at(loc, text, start), "no register '$%s': %s registers are $%c0..$%c15", name,
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
            asm_error(a, asm_at(loc, text, start), "unknown register '$%s' (did you mean '$%s'?)", name, s);
        else
            asm_error(a, asm_at(loc, text, start), "unknown register '$%s'", name);
        return false;
    }
    p = q;
    if (*p == ':' && numbered) {
        const char *d = p + 1;
        int hi = small_number(&d);
        if (hi < 0) {
            char found[64];
            asm_found_text(p + 1, found, sizeof found);
            asm_error(a, asm_at(loc, text, p + 1), "expected the last register number of a pair or quad after ':', found %s",
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
            asm_error(a, asm_at(loc, text, start), cls == OPC_M
                      ? "'%.*s' is not an MRF register pair ($mN:N+1)"
                      : "'%.*s' is neither an ARF register pair ($aN:N+1) nor a quad ($aN:N+3)",
                      (int)(d - start), start);
            return false;
        }
        if (hi > 15) {
            asm_error(a, asm_at(loc, text, start), "'%.*s' goes past the last register (15)", (int)(d - start), start);
            return false;
        }
        p = d;
    }
    if (p[0] == '+' && p[1] == '=') {
        if (cls == OPC_M) cls = OPC_M_INC;
        else if (cls == OPC_MP) cls = OPC_MP_INC;
        else {
            asm_error(a, asm_at(loc, text, start), "'%.*s': only MRF registers and pairs can be post-incremented",
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

/* The mnemonic at *pp, into mnemonic (size bytes), and the rows that spell
 * it, *pp moved past it; 0 after an error. */
static size_t parse_mnemonic(asm_ctx *a, const char *text, const char **pp, asm_loc loc, char *mnemonic,
                             size_t size, enum isa_op *rows, size_t max_rows)
{
    const char *p = *pp;
    const char *mn = p;
    while (asm_is_ident_char((unsigned char)*p))
        p++;
    size_t mlen = (size_t)(p - mn);
    asm_loc mloc = asm_at(loc, text, mn);
    if (mlen == 0 || (*p && !asm_is_space((unsigned char)*p))) {
        char found[64];
        asm_found_text(mn, found, sizeof found);
        asm_error(a, mloc, "expected an instruction, directive or label, found %s", found);
        return 0;
    }
    if (mlen >= size)
        mlen = size - 1;
    memcpy(mnemonic, mn, mlen);
    mnemonic[mlen] = 0;
    size_t n_rows = isa_lookup_mnemonic(mnemonic, rows, max_rows);
    if (!n_rows) {
        const char *list[ISA_OP_COUNT];
        size_t nm = all_mnemonics(list);
        const char *s = asm_suggest(mnemonic, list, nm);
        if (s)
            asm_error(a, mloc, "unknown mnemonic '%s' (did you mean '%s'?)", mnemonic, s);
        else
            asm_error(a, mloc, "unknown mnemonic '%s'", mnemonic);
        return 0;
    }
    *pp = p;
    return n_rows;
}

/* The operands written after the mnemonic, into w (room for one more than
 * any row takes); false after an error. */
static bool parse_operands(asm_ctx *a, const char *text, const char *p, asm_loc loc, const char *mnemonic,
                           asm_operand *w, size_t *n_written)
{
    size_t nw = 0;
    p = asm_skip_space(p);
    while (*p) {
        if (nw == ISA_MAX_OPERANDS + 1) {
            asm_error(a, asm_at(loc, text, p), "too many operands for '%s'", mnemonic);
            return false;
        }
        asm_operand *o = &w[nw];
        memset(o, 0, sizeof *o);
        const char *start = p;
        if (*p == ',') {
            asm_error(a, asm_at(loc, text, p), "expected an operand, found ','");
            return false;
        }
        if (*p == '$') {
            if (!parse_register(a, text, &p, loc, o))
                return false;
        } else {
            o->cls = OPC_IMM;
            o->col = loc.col + (uint32_t)(p - text);
            o->expr = asm_parse_expr(a, text, &p, loc);
            if (!o->expr)
                return false;
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
                asm_error(a, asm_at(loc, text, p), "expected an operand after ',', found end of line");
                return false;
            }
            continue;
        }
        if (*p) {
            char found[64];
            asm_found_text(p, found, sizeof found);
            asm_error(a, asm_at(loc, text, p), "expected ',' or end of statement after operand %zu of '%s', found %s",
                      nw, mnemonic, found);
            return false;
        }
    }
    *n_written = nw;
    return true;
}

/* "'op' takes 2 or 3 operands, found 1": counts has bit n set when some
 * row takes n operands. */
static void report_operand_count(asm_ctx *a, asm_loc mloc, const char *mnemonic, unsigned counts, size_t nw)
{
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
}

/* The first row whose operand kinds all fit the operands written (or the
 * short form, $mzero left out before the last operand); otherwise report
 * where the best attempts failed.  NULL after an error. */
static asm_insn *select_row(asm_ctx *a, const enum isa_op *rows, size_t n_rows, const asm_operand *w,
                            size_t nw, const char *mnemonic, asm_loc loc, asm_loc mloc)
{
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
        report_operand_count(a, mloc, mnemonic, counts, nw);
        return NULL;
    }
    asm_error(a, asm_loc_col(loc, w[best_pos].col), "expected %s, found '%s'", expected, w[best_pos].text);
    return NULL;
}

/* Parse "mnemonic operands" and select the row.  NULL after an error. */
asm_insn *asm_parse_insn(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    asm_loc mloc = asm_at(loc, text, p);
    char mnemonic[40];
    enum isa_op rows[32];
    size_t n_rows = parse_mnemonic(a, text, &p, loc, mnemonic, sizeof mnemonic, rows, 32);
    if (!n_rows)
        return NULL;
    asm_operand w[ISA_MAX_OPERANDS + 1];
    size_t nw;
    if (!parse_operands(a, text, p, loc, mnemonic, w, &nw))
        return NULL;
    return select_row(a, rows, n_rows, w, nw, mnemonic, loc, mloc);
}

/* ---- bundles -------------------------------------------------------------------- */

/* Add an instruction to the open bundle. */
void asm_add_to_bundle(asm_ctx *a, asm_insn *in)
{
    if (a->n_bundle == 2) {
        asm_error(a, in->loc, "a bundle holds two instructions; this is a third (the bundle opened at line %u)",
                  a->bundle_loc.line);
        a->bundle_failed = true;
        return;
    }
    a->bundle[a->n_bundle++] = in;
}

/* Close the open bundle: one main and one aux instruction, in code. */
void asm_close_bundle(asm_ctx *a)
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
    asm_section *s = asm_cur_sec(a, a->bundle_loc);
    if (!asm_no_bytes_here(a, a->bundle_loc, "a bundle"))
        return;
    if (!(s->flags & EXE_SEC_EXEC)) {
        asm_error(a, a->bundle_loc, "bundle in section %s, which is not executable (use .text or a section with "
                  "flag \"x\")", s->name);
        return;
    }
    asm_stmt *st = asm_emit(a, ST_BUNDLE, ISA_BUNDLE_BYTES, a->bundle_loc);
    if (!st)
        return;
    bool main_first = d0->pipe == ISA_PIPE_MAIN;
    st->insn[0] = a->bundle[main_first ? 0 : 1];
    st->insn[1] = a->bundle[main_first ? 1 : 0];
}

/* An instruction outside a bundle. */
void asm_single_insn(asm_ctx *a, asm_insn *in)
{
    asm_section *s = asm_cur_sec(a, in->loc);
    if (!asm_no_bytes_here(a, in->loc, "an instruction"))
        return;
    if (!(s->flags & EXE_SEC_EXEC)) {
        asm_error(a, in->loc, "instruction '%s' in section %s, which is not executable (use .text or a section "
                  "with flag \"x\")", isa_get(in->op)->mnemonic, s->name);
        return;
    }
    asm_stmt *st = asm_emit(a, ST_INSN, ISA_INSN_BYTES, in->loc);
    if (st)
        st->insn[0] = in;
}

/* ---- encoding ------------------------------------------------------------------- */

/* Encode an instruction (pass 2): immediates in range, branch targets in
 * region 0. */
bool asm_encode_insn(asm_ctx *a, const asm_insn *in, uint32_t tile, uint32_t *word)
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
        if (!asm_eval_final(a, o->expr, tile, l, &v))
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
