/*
 * test_disasm.c — the disassembler: the text of single instructions and
 * bundles, and round trips assemble(disasm(assemble(src))) == assemble(src)
 * (section bytes, symbols, entries) on the test sources, on a source that
 * uses every row of isa.def (generated here from the table, so new rows are
 * covered without editing this file), and on executables built by hand
 * with things the assembler never writes (invalid words, odd sizes, labels
 * inside bundles, names that need quotes).
 */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isa/asm/asm.h"
#include "isa/asm/disasm.h"
#include "isa/isa.h"
#include "test_util.h"

#define ASM_DIR IPUSIM_SOURCE_DIR "/tests/asm/"

static uint32_t enc(enum isa_op op, ...)
{
    int32_t v[ISA_MAX_OPERANDS] = {0};
    va_list ap;
    va_start(ap, op);
    for (unsigned i = 0; i < isa_get(op)->n_operands; i++)
        v[i] = va_arg(ap, int32_t);
    va_end(ap);
    uint32_t w = 0;
    char err[200];
    if (!isa_encode(op, v, &w, err, sizeof err))
        fprintf(stderr, "test encode failed: %s\n", err);
    return w;
}

static char text[512];

static const char *dis(uint32_t w0, uint32_t w1, bool have_w1, uint32_t pc, size_t *used)
{
    *used = disasm_bundle(w0, w1, have_w1, pc, text, sizeof text);
    return text;
}

/* ---- text ------------------------------------------------------------------- */

static void test_instruction_text(void)
{
    size_t used;
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_F32ADD, 0, 1, 2), 0, false, 0x4c000, &used), "f32add $a0, $a1, $a2");
    CU_ASSERT_EQUAL(used, 4);
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_ADD, 0, 15, 1), 0, false, 0x4c000, &used), "add $m0, $mzero, $m1");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_ADD_I, 3, 4, -5), 0, false, 0x4c000, &used), "add $m3, $m4, -5");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_SETZI, 2, 0x10), 0, false, 0x4c000, &used), "setzi $m2, 0x10");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_AND_I, 2, 3, 7), 0, false, 0x4c000, &used), "and $m2, $m3, 7");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_F32V2ADD, 14, 0, 2), 0, false, 0x4c000, &used),
                           "f32v2add $azeros, $a0:1, $a2:3");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_F32ADD, 15, 1, 2), 0, false, 0x4c000, &used), "f32add $azero, $a1, $a2");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_LD128, 4, 1, 2, 3), 0, false, 0x4c000, &used), "ld128 $a4:7, $m1, $m2, 3");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_LD32STEP, 1, 2, 3, -4), 0, false, 0x4c000, &used),
                           "ld32step $m1, $m2, $m3+=, -4");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_ST64PACE, 2, 0, 3, 2), 0, false, 0x4c000, &used),
                           "st64pace $a2:3, $m0:1+=, $m3, 0b10");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_GET, 1, ISA_CSR_FP_CTL), 0, false, 0x4c000, &used), "get $m1, $FP_CTL");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_BRZ, 7, 0x4c010), 0, false, 0x4c000, &used), "brz $m7, 0x4c010");
    CU_ASSERT_STRING_EQUAL(dis(enc(ISA_OP_NOP), 0, false, 0x4c000, &used), "nop");
}

static void test_bundle_text(void)
{
    size_t used;
    uint32_t m = enc(ISA_OP_LD2XST64PACE, 0, 4, 0, 2, 0), x = enc(ISA_OP_F32V2ADD, 4, 0, 2);
    CU_ASSERT_STRING_EQUAL(dis(m | ISA_COISSUE_BIT, x, true, 0x4c008, &used),
                           "{ ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; f32v2add $a4:5, $a0:1, $a2:3 }");
    CU_ASSERT_EQUAL(used, 8);
    /* Not a bundle: each reason gives a .word of the first word alone. */
    char want[100];
    snprintf(want, sizeof want, ".word 0x%08x // bit 31 set on a word not 8-byte aligned", m | ISA_COISSUE_BIT);
    CU_ASSERT_STRING_EQUAL(dis(m | ISA_COISSUE_BIT, x, true, 0x4c004, &used), want);
    CU_ASSERT_EQUAL(used, 4);
    dis(m | ISA_COISSUE_BIT, 0, false, 0x4c000, &used);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "no aux word follows"));
    CU_ASSERT_EQUAL(used, 4);
    dis(x | ISA_COISSUE_BIT, m, true, 0x4c000, &used);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "aux-pipeline instruction"));
    dis(m | ISA_COISSUE_BIT, m, true, 0x4c000, &used);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "not an aux-pipeline instruction"));
    CU_ASSERT_EQUAL(used, 4);
}

static void test_invalid_words(void)
{
    size_t used;
    CU_ASSERT_STRING_EQUAL(dis(0x7f000000u, 0, false, 0x4c000, &used), ".word 0x7f000000 // invalid instruction");
    CU_ASSERT_EQUAL(used, 4);
    /* A pair field holding an odd register is not an instruction: it does
     * not decode, and prints as data. */
    const isa_desc *d = isa_get(ISA_OP_F32V2ADD);
    uint32_t odd = enc(ISA_OP_F32V2ADD, 0, 2, 4) | (1u << d->operands[0].shift);
    isa_insn in;
    CU_ASSERT_FALSE(isa_decode(odd, &in));
    char want[64];
    snprintf(want, sizeof want, ".word 0x%08x // invalid instruction", odd);
    CU_ASSERT_STRING_EQUAL(dis(odd, 0, false, 0x4c000, &used), want);
    /* An unknown CSR number. */
    int32_t ops[ISA_MAX_OPERANDS] = {1, 0xee};
    uint32_t w;
    CU_ASSERT_TRUE_FATAL(isa_encode(ISA_OP_GET, ops, &w, NULL, 0));
    CU_ASSERT_PTR_NULL(isa_csr_name(0xee));
    CU_ASSERT_EQUAL(strncmp(dis(w, 0, false, 0x4c000, &used), ".word ", 6), 0);
    /* A tiny buffer is never overrun. */
    char tiny[8];
    CU_ASSERT_EQUAL(disasm_bundle(enc(ISA_OP_F32ADD, 0, 1, 2), 0, false, 0x4c000, tiny, sizeof tiny), 4);
    CU_ASSERT_STRING_EQUAL(tiny, "f32add ");
}

static const char *sym_loop(void *ctx, uint32_t addr)
{
    (void)ctx;
    return addr == 0x4c010 ? "loop" : NULL;
}

static void test_symbolizer(void)
{
    char buf[100];
    CU_ASSERT_EQUAL(disasm_bundle_sym(enc(ISA_OP_BRNZDEC, 1, 0x4c010), 0, false, 0x4c000, sym_loop, NULL, buf,
                                      sizeof buf), 4);
    CU_ASSERT_STRING_EQUAL(buf, "brnzdec $m1, loop");
    disasm_bundle_sym(enc(ISA_OP_BRNZDEC, 1, 0x4c014), 0, false, 0x4c000, sym_loop, NULL, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "brnzdec $m1, 0x4c014");
}

/* ---- round trips ------------------------------------------------------------------ */

typedef struct sym_key { const char *name; uint32_t tile, addr, size; uint8_t kind; bool global; } sym_key;

static int cmp_key(const void *x, const void *y)
{
    const sym_key *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    if (a->tile != b->tile) return a->tile < b->tile ? -1 : 1;
    if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->kind != b->kind) return a->kind - b->kind;
    return (int)a->global - (int)b->global;
}

static sym_key *keys(const ipu_exe *e)
{
    sym_key *k = malloc((e->n_symbols + 1) * sizeof *k);
    for (size_t i = 0; i < e->n_symbols; i++) {
        const exe_symbol *s = &e->symbols[i];
        k[i] = (sym_key){ s->name, s->tile, s->addr, s->size, s->kind, s->global };
    }
    qsort(k, e->n_symbols, sizeof *k, cmp_key);
    return k;
}

/* Same sections (tile, name, address, size, flags, bytes), symbols and
 * entries; prints the first difference. */
static bool same_exe(const ipu_exe *a, const ipu_exe *b)
{
    if (a->n_sections != b->n_sections) {
        fprintf(stderr, "\n%zu sections, then %zu\n", a->n_sections, b->n_sections);
        return false;
    }
    for (size_t i = 0; i < a->n_sections; i++) {
        const exe_section *s = &a->sections[i], *t = NULL;
        for (size_t j = 0; j < b->n_sections && !t; j++)
            if (b->sections[j].tile == s->tile && !strcmp(b->sections[j].name, s->name))
                t = &b->sections[j];
        if (!t || t->addr != s->addr || t->size != s->size || t->flags != s->flags ||
            (s->bytes && (!t->bytes || memcmp(s->bytes, t->bytes, s->size)))) {
            fprintf(stderr, "\nsection %s@%u differs\n", s->name, s->tile);
            return false;
        }
    }
    if (a->n_symbols != b->n_symbols) {
        fprintf(stderr, "\n%zu symbols, then %zu\n", a->n_symbols, b->n_symbols);
        return false;
    }
    sym_key *ka = keys(a), *kb = keys(b);
    bool ok = true;
    for (size_t i = 0; i < a->n_symbols && ok; i++)
        if (cmp_key(&ka[i], &kb[i])) {
            fprintf(stderr, "\nsymbol %s@%u differs\n", ka[i].name, ka[i].tile);
            ok = false;
        }
    free(ka);
    free(kb);
    if (!ok)
        return false;
    if (a->n_tiles != b->n_tiles) {
        fprintf(stderr, "\n%zu entries, then %zu\n", a->n_tiles, b->n_tiles);
        return false;
    }
    for (size_t i = 0; i < a->n_tiles; i++) {
        bool found = false;
        for (size_t j = 0; j < b->n_tiles; j++)
            found |= b->tiles[j].tile == a->tiles[i].tile &&
                     b->tiles[j].supervisor_entry == a->tiles[i].supervisor_entry;
        if (!found) {
            fprintf(stderr, "\nentry of tile %u differs\n", a->tiles[i].tile);
            return false;
        }
    }
    return true;
}

/* Disassemble into a string (caller frees). */
static char *disasm_text(const ipu_exe *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char err[200];
    CU_ASSERT_TRUE(disasm_exe(e, f, err, sizeof err));
    fclose(f);
    return buf;
}

/* Disassemble e, assemble the text, compare. */
static void round_trip(const ipu_exe *e, const char *what)
{
    char *src = disasm_text(e);
    char err[4000];
    ipu_exe *again = asm_assemble_string(src, "disasm.S", NULL, err, sizeof err);
    if (!again)
        fprintf(stderr, "\n%s: the disassembly does not assemble:\n%s\n", what, err);
    CU_ASSERT_PTR_NOT_NULL(again);
    if (again) {
        bool same = same_exe(e, again);
        if (!same)
            fprintf(stderr, "%s: round trip differs; the disassembly was:\n%s\n", what, src);
        CU_ASSERT_TRUE(same);
        /* The text of the text is the same text. */
        char *src2 = disasm_text(again);
        CU_ASSERT_STRING_EQUAL(src, src2);
        free(src2);
    }
    exe_free(again);
    free(src);
}

static void round_trip_file(const char *path, const asm_options *opt)
{
    char err[4000];
    ipu_exe *e = asm_assemble_file(path, opt, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    round_trip(e, path);
    exe_free(e);
}

static void test_round_trip_files(void)
{
    round_trip_file(ASM_DIR "basic.S", NULL);
    round_trip_file(ASM_DIR "macros.S", NULL);
    round_trip_file(ASM_DIR "multitile.S", NULL);
    round_trip_file(ASM_DIR "poplibs_style.S", NULL);
    const char *dirs[] = { ASM_DIR "incdir" };
    asm_options opt = { .include_dirs = dirs, .n_include_dirs = 1 };
    round_trip_file(ASM_DIR "include_main.S", &opt);
}

static void test_round_trip_through_elf(void)
{
    /* What `ipusim asm` then `ipusim disasm` do: write the ELF file, read
     * it back, disassemble, assemble again. */
    char err[4000];
    ipu_exe *e = asm_assemble_file(ASM_DIR "multitile.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    char path[] = "/tmp/ipusim_test_disasm_XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_TRUE_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_TRUE_FATAL(exe_write(e, path, err, sizeof err));
    ipu_exe *r = exe_read(path, err, sizeof err);
    if (!r)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL(r);
    if (r) {
        CU_ASSERT_TRUE(same_exe(e, r));
        round_trip(r, "multitile.S through an ELF file");
    }
    exe_free(r);
    exe_free(e);
    unlink(path);
}

/* ---- every instruction ---------------------------------------------------------------- */

typedef struct strbuf { char *s; size_t n, cap; } strbuf;

static void sb_add(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
}

/* Operand values for row `row`, varied from row to row so that fields
 * landing in the wrong place show up; and their text. */
static void make_operands(unsigned row, int32_t *v, strbuf *b)
{
    const isa_desc *d = isa_get(row);
    for (unsigned i = 0; i < d->n_operands; i++) {
        const isa_operand_desc *k = &d->operands[i];
        unsigned r = (row * 5 + i * 3 + 1) % 16;
        sb_add(b, i ? ", " : " ");
        switch (k->kind) {
        case ISA_OPND_M: v[i] = (int32_t)r; sb_add(b, "$m%u", r); break;
        case ISA_OPND_M_INC: v[i] = (int32_t)r; sb_add(b, "$m%u+=", r); break;
        case ISA_OPND_MP: v[i] = (int32_t)(r & ~1u); sb_add(b, "$m%u:%u", r & ~1u, (r & ~1u) + 1); break;
        case ISA_OPND_MP_INC: v[i] = (int32_t)(r & ~1u); sb_add(b, "$m%u:%u+=", r & ~1u, (r & ~1u) + 1); break;
        case ISA_OPND_A: v[i] = (int32_t)r; sb_add(b, "$a%u", r); break;
        case ISA_OPND_AP: v[i] = (int32_t)(r & ~1u); sb_add(b, "$a%u:%u", r & ~1u, (r & ~1u) + 1); break;
        case ISA_OPND_AQ: v[i] = (int32_t)(r & ~3u); sb_add(b, "$a%u:%u", r & ~3u, (r & ~3u) + 3); break;
        case ISA_OPND_CSR: v[i] = ISA_CSR_FP_CTL; sb_add(b, "$FP_CTL"); break;
        case ISA_OPND_UIMM: {
            uint32_t max = k->bits >= 31 ? 0x7fffffffu : (1u << k->bits) - 1;
            v[i] = (int32_t)((row * 2654435761u + i) % (max + 1u));
            sb_add(b, "%d", v[i]);
            break;
        }
        case ISA_OPND_SIMM: {
            int32_t lim = 1 << (k->bits - 1);
            v[i] = (int32_t)((row * 40503u + i) % (2u * (uint32_t)lim)) - lim;
            sb_add(b, "%d", v[i]);
            break;
        }
        default:
            v[i] = (int32_t)(ISA_REGION0_BASE + 8 * (row % 16));
            sb_add(b, "target + %u", 8 * (row % 16));
            break;
        }
    }
}

typedef struct expect { uint32_t addr; unsigned op; int32_t v[ISA_MAX_OPERANDS]; bool main_of_bundle; } expect;

static bool is_rpt(unsigned row) { return row == ISA_OP_RPT || row == ISA_OP_RPT_M; }

static void test_every_instruction(void)
{
    /* Every row alone, then every main row in a bundle with an aux row
     * (cycling through the aux rows).  A rpt needs its body after it, so a
     * rpt row gets one of 2 bundles. */
    strbuf b = {0};
    expect *ex = calloc(4 * ISA_OP_COUNT, sizeof *ex);
    size_t n_ex = 0;
    uint32_t addr = ISA_REGION0_BASE;
    sb_add(&b, ".text\ntarget:\n");
    for (unsigned row = 0; row < ISA_OP_COUNT; row++) {
        const isa_desc *d = isa_get(row);
        expect *x = &ex[n_ex++];
        x->addr = addr;
        x->op = row;
        if (is_rpt(row)) {
            if (addr % 8 == 0) {
                sb_add(&b, "nop\n");
                x->addr = addr += 4;
            }
        }
        sb_add(&b, "%s", d->mnemonic);
        make_operands(row, x->v, &b);
        if (is_rpt(row)) {
            /* body size field: the last operand; 2 bundles */
            size_t cut = b.n;
            while (b.s[cut - 1] != ',')
                cut--;
            b.n = cut;
            b.s[b.n] = 0;
            sb_add(&b, " 1\n{ nop ; fnop }\n{ nop ; fnop }\n");
            x->v[d->n_operands - 1] = 1;
            addr += 4 + 16;
        } else {
            sb_add(&b, "\n");
            addr += 4;
        }
    }
    sb_add(&b, ".align 8\n");
    addr = (addr + 7) & ~7u;
    unsigned aux = 0;
    for (unsigned row = 0; row < ISA_OP_COUNT; row++) {
        if (isa_get(row)->pipe != ISA_PIPE_MAIN || is_rpt(row))
            continue;
        while (isa_get(aux % ISA_OP_COUNT)->pipe != ISA_PIPE_AUX)
            aux++;
        unsigned arow = aux++ % ISA_OP_COUNT;
        expect *xm = &ex[n_ex++], *xa = &ex[n_ex++];
        xm->addr = addr;
        xm->op = row;
        xm->main_of_bundle = true;
        xa->addr = addr + 4;
        xa->op = arow;
        sb_add(&b, "{ %s", isa_get(row)->mnemonic);
        make_operands(row, xm->v, &b);
        sb_add(&b, " ; %s", isa_get(arow)->mnemonic);
        make_operands(arow, xa->v, &b);
        sb_add(&b, " }\n");
        addr += 8;
    }

    char err[4000];
    ipu_exe *e = asm_assemble_string(b.s, "every.S", NULL, err, sizeof err);
    if (!e)
        fprintf(stderr, "\nthe every-instruction source does not assemble:\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const exe_section *text_sec = &e->sections[0];
    CU_ASSERT_EQUAL_FATAL(text_sec->addr, ISA_REGION0_BASE);
    CU_ASSERT_EQUAL(text_sec->size, addr - ISA_REGION0_BASE);
    for (size_t i = 0; i < n_ex; i++) {
        const uint8_t *p = text_sec->bytes + (ex[i].addr - ISA_REGION0_BASE);
        uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        isa_insn in;
        bool ok = isa_decode(w, &in) && in.op == ex[i].op &&
                  !!(w & ISA_COISSUE_BIT) == ex[i].main_of_bundle;
        for (unsigned k = 0; ok && k < isa_get(ex[i].op)->n_operands; k++)
            ok = in.operand[k] == ex[i].v[k];
        if (!ok)
            fprintf(stderr, "\nrow %s at 0x%x: word 0x%08x\n", isa_get(ex[i].op)->id, ex[i].addr, w);
        CU_ASSERT_TRUE(ok);
        /* The disassembler prints it as an instruction, not a .word. */
        char buf[200];
        disasm_bundle(w, 0, false, ex[i].addr + 4, buf, sizeof buf);
        if (!ex[i].main_of_bundle)
            CU_ASSERT_EQUAL(strncmp(buf, isa_get(ex[i].op)->mnemonic, strlen(isa_get(ex[i].op)->mnemonic)), 0);
    }
    round_trip(e, "every instruction");
    exe_free(e);
    free(ex);
    free(b.s);
}

/* ---- executables the assembler would not write ---------------------------------------- */

static void put32(uint8_t *p, uint32_t w)
{
    p[0] = (uint8_t)w; p[1] = (uint8_t)(w >> 8); p[2] = (uint8_t)(w >> 16); p[3] = (uint8_t)(w >> 24);
}

static void test_round_trip_odd_executable(void)
{
    ipu_exe *e = exe_new();
    char err[300];
    uint8_t code[43] = {0};
    uint32_t m = enc(ISA_OP_LD32_A, 0, 1, 2, 3) | ISA_COISSUE_BIT, x = enc(ISA_OP_F32ADD, 1, 2, 3);
    put32(code + 0, m);                       /* a bundle */
    put32(code + 4, x);
    put32(code + 8, 0x7f000001u);             /* invalid */
    put32(code + 12, m);                      /* co-issue at 4 mod 8 */
    put32(code + 16, m);                      /* a bundle split by a label at +20 */
    put32(code + 20, x);
    put32(code + 24, enc(ISA_OP_BRI, 0x4c014));
    put32(code + 28, enc(ISA_OP_BRI, 0x4c01c));
    put32(code + 32, m);                      /* co-issue with an aux word that is not */
    put32(code + 36, m);
    code[40] = 1; code[41] = 2; code[42] = 3; /* a tail shorter than a word */
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 5, ".text", 0x4c000, code, sizeof code, EXE_SEC_EXEC, err, sizeof err));
    uint8_t data[64] = {1, 2, 3, 4, 5, 6, 7};
    data[63] = 9;
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 5, "my data", 0x80001, data, sizeof data, EXE_SEC_WRITE, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 5, ".bss", 0x90000, NULL, 32, EXE_SEC_WRITE | EXE_SEC_NOBITS, err,
                                         sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 6, ".rodata", 0x80000, data, 8, 0, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "mid_bundle", 0x4c014, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "data at odd", 0x80003, 4, EXE_SYM_DATA, true));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "untyped", 0x4c008, 0, EXE_SYM_OTHER, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "code_in_data", 0x80010, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "end", 0x4c02b, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 5, "in_bss", 0x90010, 16, EXE_SYM_DATA, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 6, "end", 0x80008, 0, EXE_SYM_DATA, false));   /* same name, other tile */
    CU_ASSERT_TRUE(exe_set_entry(e, 5, 0x4c018));
    CU_ASSERT_TRUE(exe_set_entry(e, 7, 0x4c100));                                    /* a tile with no sections */
    round_trip(e, "odd executable");

    char *src = disasm_text(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "    .word 0x7f000001 // invalid instruction"));
    CU_ASSERT_PTR_NULL(strstr(src, "\"my data\":"));   /* a section name, not a label */
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".section \"my data\", \"aw\", 0x80001\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".globl \"data at odd\"\n.size \"data at odd\", 4\n\"data at odd\":\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".type untyped, @notype\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".type code_in_data, @function\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".section .bss, \"aw\", @nobits, 0x90000\n    .space 16\n.size in_bss, 16\nin_bss:\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "bri mid_bundle"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 7\n\n.entry 0x4c100\n"));
    free(src);
    exe_free(e);

    /* A second symbol of one name on one tile (a tensor in pieces) cannot
     * be a label again: it is written with .symbol, the one at the lower
     * address being the label whatever the table's order; a branch to it
     * prints its address, not the label's name. */
    e = exe_new();
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 0, ".data", 0x80000, data, 8, EXE_SEC_WRITE, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 0, ".text", 0x4c000, code, 8, EXE_SEC_EXEC, err, sizeof err));
    put32(code, enc(ISA_OP_BRI, 0x4c004));
    put32(code + 4, enc(ISA_OP_BRI, 0x4c000));
    CU_ASSERT_TRUE_FATAL(exe_add_section(e, 1, ".text", 0x4c000, code, 8, EXE_SEC_EXEC, err, sizeof err));
    CU_ASSERT_TRUE(exe_add_symbol(e, 0, "twice", 0x80004, 4, EXE_SYM_DATA, true));
    CU_ASSERT_TRUE(exe_add_symbol(e, 0, "twice", 0x80000, 0, EXE_SYM_DATA, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 1, "loop", 0x4c000, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE(exe_add_symbol(e, 1, "loop", 0x4c004, 0, EXE_SYM_CODE, false));
    CU_ASSERT_TRUE(exe_set_entry(e, 0, 0x4c000));
    CU_ASSERT_TRUE(exe_set_entry(e, 1, 0x4c000));
    src = disasm_text(e);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "twice:\n    .word 0x04030201\n.symbol twice, @object, 4, global\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "loop:\n    bri 0x4c004"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, ".symbol loop, @function, 0\n    bri loop"));
    round_trip(e, "two symbols of one name");
    free(src);
    exe_free(e);
}

static void test_golden_text(void)
{
    char err[2000];
    ipu_exe *e = asm_assemble_string(".text\n.globl __supervisor\n__supervisor:\n"
                                     "  setzi $m0, 3\n"
                                     "  nop\n"
                                     "loop: { brnzdec $m0, loop ; f32add $a0, $a0, $a1 }\n"
                                     "  exitz $mzero\n"
                                     ".data\nv: .word 7, 8\n.byte 1\n"
                                     ".bss\nb: .space 24\n", "g.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    char *src = disasm_text(e);
    CU_ASSERT_STRING_EQUAL(src,
        "// ipusim disassembly: 3 sections, 4 symbols\n"
        "\n"
        ".tile 0\n"
        "\n"
        ".section .text, \"ax\", 0x4c000\n"
        ".globl __supervisor\n"
        "__supervisor:\n"
        "    setzi $m0, 3                                    // 0x4c000\n"
        "    nop                                             // 0x4c004\n"
        "loop:\n"
        "    { brnzdec $m0, loop ; f32add $a0, $a0, $a1 }    // 0x4c008\n"
        "    exitz $mzero                                    // 0x4c010\n"
        "\n"
        ".section .data, \"aw\", 0x80000\n"
        "v:\n"
        "    .word 0x00000007, 0x00000008\n"
        "    .byte 0x01\n"
        "\n"
        ".section .bss, \"aw\", @nobits, 0x80010\n"
        "b:\n"
        "    .space 24\n"
        "\n"
        ".entry __supervisor\n");
    free(src);
    exe_free(e);
}

/* ---- sections shared by tiles ---------------------------------------------------------- */

/* Occurrences of needle in s. */
static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_shared_sections(void)
{
    /* The same code on four tiles, different data on each (written once
     * per tile): the code once under the list, the data under each tile,
     * the entry once; it assembles back to the same executable. */
    char err[2000];
    ipu_exe *e = asm_assemble_string(".macro body d\n.text\n.globl __supervisor\n__supervisor:\n"
                                     "  setzi $m0, v\nloop: brnzdec $m0, loop\n  exitz $mzero\n"
                                     ".data\nv: .word \\d\n.endm\n"
                                     ".tile 0\nbody 10\n.tile 1\nbody 11\n.tile 2\nbody 12\n.tile 3\nbody 13\n"
                                     ".tile 5\n.text\nnop\n",
                                     "s.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    char *src = disasm_text(e);
    CU_ASSERT_STRING_EQUAL(src,
        "// ipusim disassembly: 9 sections, 12 symbols\n"
        "// each section is shown once, under the '.tile' list of the tiles it is the same on: 6 shown for 5 tiles\n"
        "\n"
        ".tile 0-3\n"
        "\n"
        ".section .text, \"ax\", 0x4c000\n"
        ".globl __supervisor\n"
        "__supervisor:\n"
        "    setzi $m0, 0x80000                              // 0x4c000\n"
        "loop:\n"
        "    brnzdec $m0, loop                               // 0x4c004\n"
        "    exitz $mzero                                    // 0x4c008\n"
        "\n"
        ".entry __supervisor\n"
        "\n"
        ".tile 0\n"
        "\n"
        ".section .data, \"aw\", 0x80000\n"
        "v:\n"
        "    .word 0x0000000a\n"
        "\n"
        ".tile 1\n"
        "\n"
        ".section .data, \"aw\", 0x80000\n"
        "v:\n"
        "    .word 0x0000000b\n"
        "\n"
        ".tile 2\n"
        "\n"
        ".section .data, \"aw\", 0x80000\n"
        "v:\n"
        "    .word 0x0000000c\n"
        "\n"
        ".tile 3\n"
        "\n"
        ".section .data, \"aw\", 0x80000\n"
        "v:\n"
        "    .word 0x0000000d\n"
        "\n"
        ".tile 5\n"
        "\n"
        ".section .text, \"ax\", 0x4c000\n"
        "    nop                                             // 0x4c000\n"
        "\n"
        ".entry 0x4c000\n");
    round_trip(e, "code shared by four tiles");
    free(src);
    exe_free(e);
}

static void test_branch_names_split(void)
{
    /* Three tiles with the same code bytes; its branch goes to a label of
     * another section, named otherwise on tile 2: tiles 0-1 share the
     * code, tile 2 has its own. */
    ipu_exe *e = exe_new();
    char err[300];
    uint8_t code[4], other[4];
    put32(code, enc(ISA_OP_BRI, 0x4c100));
    put32(other, enc(ISA_OP_EXITZ, 15));
    for (uint32_t t = 0; t < 3; t++) {
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".text", 0x4c000, code, 4, EXE_SEC_EXEC, err, sizeof err));
        CU_ASSERT_TRUE_FATAL(exe_add_section(e, t, ".text.b", 0x4c100, other, 4, EXE_SEC_EXEC, err, sizeof err));
        CU_ASSERT_TRUE(exe_add_symbol(e, t, t < 2 ? "done" : "finish", 0x4c100, 0, EXE_SYM_CODE, false));
        CU_ASSERT_TRUE(exe_set_entry(e, t, 0x4c000));
    }
    char *src = disasm_text(e);
    CU_ASSERT_EQUAL(count(src, "\n.tile "), 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 0-1\n\n.section .text, \"ax\", 0x4c000\n    bri done "));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 2\n\n.section .text, \"ax\", 0x4c000\n    bri finish "));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 0-2\n\n.entry 0x4c000\n"));
    round_trip(e, "branch names that differ between tiles");
    free(src);
    exe_free(e);
}

static void test_many_tiles(void)
{
    /* A chip's worth of tiles with one kernel and a word of data each: the
     * kernel is printed once, the text grows by a few lines a tile. */
    enum { TILES = 1472 };
    strbuf b = { NULL, 0, 0 };
    sb_add(&b, ".tile 0-%d\n.text\n__supervisor:\n", TILES - 1);
    for (int i = 0; i < 200; i++)
        sb_add(&b, "  { add $m0, $m0, %d ; f32add $a0, $a0, $a1 }\n", i);
    sb_add(&b, "  exitz $mzero\n");
    for (int t = 0; t < TILES; t++)
        sb_add(&b, ".tile %d\n.section .data, \"aw\", 0x80000\n.word %d\n", t, t % 7);
    char err[2000];
    ipu_exe *e = asm_assemble_string(b.s, "many.S", NULL, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->n_sections, 2 * TILES);
    char *src = disasm_text(e);
    CU_ASSERT_EQUAL(count(src, ".section .text"), 1);
    CU_ASSERT_EQUAL(count(src, "f32add"), 200);
    /* The data is one of seven words: tiles t, t+7, ... share it. */
    CU_ASSERT_EQUAL(count(src, ".section .data"), 7);
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 0-1471\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(src, "\n.tile 0, 7, 14, 21,"));
    CU_ASSERT_TRUE(strlen(src) < 30000);
    round_trip(e, "a chip's worth of tiles");
    free(src);
    exe_free(e);
    free(b.s);
}

void test_register(void)
{
    ADD_SUITE("disasm_text",
              {"instructions", test_instruction_text},
              {"bundles", test_bundle_text},
              {"invalid words", test_invalid_words},
              {"symbolizer", test_symbolizer});
    ADD_SUITE("disasm_round_trip",
              {"test sources", test_round_trip_files},
              {"through an ELF file", test_round_trip_through_elf},
              {"every row of isa.def", test_every_instruction},
              {"executables the assembler would not write", test_round_trip_odd_executable},
              {"golden text", test_golden_text});
    ADD_SUITE("disasm_shared",
              {"a section several tiles hold is printed once", test_shared_sections},
              {"branch names that differ keep the tiles apart", test_branch_names_split},
              {"a chip's worth of tiles", test_many_tiles});
}
