/*
 * disasm.c — instructions and bundles back to assembly text (disasm.h
 * says what the text promises); whole executables are in disasm_exe.c.
 */
#include "disasm.h"

#include <stdarg.h>
#include <string.h>

/* A bounded string builder: never overflows, always NUL-terminated. */
typedef struct sbuf {
    char *buf;
    size_t n, used;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (!b->n)
        return;
    if (b->used >= b->n)
        b->used = b->n - 1;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->buf + b->used, b->n - b->used, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->used += (size_t)k;
    if (b->used >= b->n)
        b->used = b->n - 1;
}

/* How immediates of a mnemonic are best read. */
static char imm_style(const isa_desc *d)
{
    static const char *const hex[] = {"setzi", "and", "or", "xor", "andc"};
    size_t len = strlen(d->mnemonic);
    if (len >= 4 && !strcmp(d->mnemonic + len - 4, "pace"))
        return 'b';   /* stride-select bits, as poplibs writes them */
    for (size_t i = 0; i < sizeof hex / sizeof hex[0]; i++)
        if (!strcmp(d->mnemonic, hex[i]))
            return 'x';
    return 'd';
}

bool disasm_insn(const isa_insn *in, disasm_symbolizer sym, void *ctx, char *buf, size_t n)
{
    sbuf b = { buf, n, 0 };
    if (n)
        buf[0] = 0;
    const isa_desc *d = isa_get(in->op);
    uint32_t again;
    if (!d || !isa_encode(in->op, in->operand, &again, NULL, 0) || again != (in->word & ~ISA_COISSUE_BIT)) {
        sb_printf(&b, ".word 0x%08x", in->word);
        return false;
    }
    sb_printf(&b, "%s", d->mnemonic);
    char style = imm_style(d);
    for (unsigned i = 0; i < d->n_operands; i++) {
        const isa_operand_desc *k = &d->operands[i];
        int32_t v = in->operand[i];
        sb_printf(&b, i ? ", " : " ");
        switch (k->kind) {
        case ISA_OPND_M:
            if (v == ISA_MRF_ZERO) sb_printf(&b, "$mzero");
            else sb_printf(&b, "$m%d", v);
            break;
        case ISA_OPND_M_INC: sb_printf(&b, "$m%d+=", v); break;
        case ISA_OPND_MP: sb_printf(&b, "$m%d:%d", v, v + 1); break;
        case ISA_OPND_MP_INC: sb_printf(&b, "$m%d:%d+=", v, v + 1); break;
        case ISA_OPND_A:
            if (v == ISA_ARF_ZERO) sb_printf(&b, "$azero");
            else sb_printf(&b, "$a%d", v);
            break;
        case ISA_OPND_AP:
            if (v == 14) sb_printf(&b, "$azeros");
            else sb_printf(&b, "$a%d:%d", v, v + 1);
            break;
        case ISA_OPND_AQ: sb_printf(&b, "$a%d:%d", v, v + 3); break;
        case ISA_OPND_CSR: {
            const char *name = isa_csr_name((unsigned)v);
            if (!name) {
                b.used = 0;
                sb_printf(&b, ".word 0x%08x", in->word);
                return false;
            }
            sb_printf(&b, "$%s", name);
            break;
        }
        case ISA_OPND_TARGET: {
            const char *name = sym ? sym(ctx, (uint32_t)v) : NULL;
            if (name) sb_printf(&b, "%s", name);
            else sb_printf(&b, "0x%x", (uint32_t)v);
            break;
        }
        case ISA_OPND_UIMM:
            if (style == 'b') {
                char bits[40];
                for (unsigned j = 0; j < k->bits && j < 32; j++)
                    bits[j] = (char)('0' + (((uint32_t)v >> (k->bits - 1 - j)) & 1));
                bits[k->bits < 32 ? k->bits : 32] = 0;
                sb_printf(&b, "0b%s", bits);
            } else if (style == 'x' && v > 9)
                sb_printf(&b, "0x%x", (uint32_t)v);
            else
                sb_printf(&b, "%u", (uint32_t)v);
            break;
        default:
            sb_printf(&b, "%d", v);
            break;
        }
    }
    return true;
}

size_t disasm_bundle_sym(uint32_t w0, uint32_t w1, bool have_w1, uint32_t pc, disasm_symbolizer sym,
                         void *ctx, char *buf, size_t n)
{
    sbuf b = { buf, n, 0 };
    if (n)
        buf[0] = 0;
    isa_insn i0, i1;
    char t0[160], t1[160];
    bool ok0 = isa_decode(w0, &i0) && disasm_insn(&i0, sym, ctx, t0, sizeof t0);
    i0.word = w0;
    if (!(w0 & ISA_COISSUE_BIT)) {
        if (ok0)
            sb_printf(&b, "%s", t0);
        else
            sb_printf(&b, ".word 0x%08x // invalid instruction", w0);
        return 4;
    }
    const char *why = NULL;
    if (!have_w1)
        why = "bit 31 set but no aux word follows";
    else if (pc & 7)
        why = "bit 31 set on a word not 8-byte aligned";
    else if (!ok0)
        why = "bit 31 set on an invalid instruction";
    else if (isa_get(i0.op)->pipe != ISA_PIPE_MAIN)
        why = "bit 31 set on an aux-pipeline instruction";
    else if (w1 & ISA_COISSUE_BIT)
        why = "bit 31 set on both words of a bundle";
    else if (!isa_decode(w1, &i1) || !disasm_insn(&i1, sym, ctx, t1, sizeof t1))
        why = "bundle whose aux half is an invalid instruction";
    else if (isa_get(i1.op)->pipe != ISA_PIPE_AUX)
        why = "bundle whose second half is not an aux-pipeline instruction";
    if (why) {
        sb_printf(&b, ".word 0x%08x // %s", w0, why);
        return 4;
    }
    sb_printf(&b, "{ %s ; %s }", t0, t1);
    return 8;
}

size_t disasm_bundle(uint32_t w0, uint32_t w1, bool have_w1, uint32_t pc, char *buf, size_t n)
{
    return disasm_bundle_sym(w0, w1, have_w1, pc, NULL, NULL, buf, n);
}
