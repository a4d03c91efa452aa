/*
 * isa.c — the instruction table, parsed once, and the encoder/decoder
 * built from it.
 */
#include "isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAIN = ISA_PIPE_MAIN, AUX = ISA_PIPE_AUX };
enum {
    COST_1 = ISA_COST_1, COST_F32DIV = ISA_COST_F32DIV, COST_F32SQRT = ISA_COST_F32SQRT,
    COST_F32EXP = ISA_COST_F32EXP, COST_F32LOG = ISA_COST_F32LOG, COST_F32SIGM = ISA_COST_F32SIGM,
    COST_F32OOX = ISA_COST_F32OOX, COST_F32OORX = ISA_COST_F32OORX, COST_F16TRANS = ISA_COST_F16TRANS
};
enum {
    F_SUP = ISA_F_SUP, F_WRK = ISA_F_WRK, F_CTRL = ISA_F_CTRL, F_LD = ISA_F_LD,
    F_ST = ISA_F_ST, F_AMP = ISA_F_AMP, F_ARFW = ISA_F_ARFW
};

static isa_desc table[ISA_OP_COUNT] = {
#define ISA_INSN(id_, mn_, ops_, major_, funct_, pipe_, cost_, flags_) \
    { .id = #id_, .mnemonic = mn_, .operand_text = ops_, .major = major_, .funct = funct_, \
      .pipe = pipe_, .cost = cost_, .flags = flags_ },
#include "isa.def"
#undef ISA_INSN
};

const isa_desc *isa_table = table;

/* Per major opcode, the rows that use it: decoding scans only these. */
static uint16_t rows_by_major[128][64];
static uint8_t n_rows_by_major[128];

static const struct { const char *name; unsigned number; bool super_only; bool writable; } csrs[] = {
#define W false
#define S true
#define ISA_CSR(id, name, num, owner, wr) { name, num, owner, wr },
#include "csr.def"
#undef ISA_CSR
#undef W
#undef S
};

static void table_fail(const isa_desc *d, const char *why)
{
    /* The table is compiled in: an inconsistent row is a bug in ipusim. */
    fprintf(stderr, "ipusim: panic: isa.def row %s (\"%s\"): %s\n", d->id, d->operand_text, why);
    abort();
}

static void parse_operands(isa_desc *d)
{
    const char *p = d->operand_text;
    unsigned shift = 0;
    d->n_operands = 0;
    while (*p) {
        char tok[8];
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof tok)
            table_fail(d, "bad operand token");
        memcpy(tok, p, n);
        tok[n] = 0;
        p += n;
        if (*p == ',')
            p++;
        if (d->n_operands == ISA_MAX_OPERANDS)
            table_fail(d, "too many operands");
        isa_operand_desc *o = &d->operands[d->n_operands++];
        if (!strcmp(tok, "m")) { o->kind = ISA_OPND_M; o->bits = 4; }
        else if (!strcmp(tok, "m+")) { o->kind = ISA_OPND_M_INC; o->bits = 4; }
        else if (!strcmp(tok, "mp")) { o->kind = ISA_OPND_MP; o->bits = 4; }
        else if (!strcmp(tok, "mp+")) { o->kind = ISA_OPND_MP_INC; o->bits = 4; }
        else if (!strcmp(tok, "a")) { o->kind = ISA_OPND_A; o->bits = 4; }
        else if (!strcmp(tok, "ap")) { o->kind = ISA_OPND_AP; o->bits = 4; }
        else if (!strcmp(tok, "aq")) { o->kind = ISA_OPND_AQ; o->bits = 4; }
        else if (!strcmp(tok, "csr")) { o->kind = ISA_OPND_CSR; o->bits = 8; }
        else if (!strcmp(tok, "t")) { o->kind = ISA_OPND_TARGET; o->bits = 16; }
        else if ((tok[0] == 'u' || tok[0] == 's') && tok[1] >= '0' && tok[1] <= '9') {
            o->kind = tok[0] == 'u' ? ISA_OPND_UIMM : ISA_OPND_SIMM;
            o->bits = (uint8_t)atoi(tok + 1);
            if (o->bits == 0 || o->bits > 24)
                table_fail(d, "immediate width out of range");
        } else
            table_fail(d, "unknown operand kind");
        o->shift = (uint8_t)shift;
        shift += o->bits;
    }
    if (shift > 24)
        table_fail(d, "operands wider than the 24-bit payload");
    d->operand_bits = (uint8_t)shift;
    uint32_t funct_bits = 24 - shift;
    if (funct_bits < 32 && (d->funct >> funct_bits) != 0)
        table_fail(d, "funct does not fit above the operands");
    if (d->major > 0x7f)
        table_fail(d, "major opcode wider than 7 bits");
    uint32_t operand_mask = shift ? ((1u << shift) - 1u) : 0u;
    d->mask = 0x7fffffffu & ~operand_mask;
    d->match = ((uint32_t)d->major << 24) | (d->funct << shift);
}

static int initialised;

void isa_init(void)
{
    if (initialised)
        return;
    for (unsigned i = 0; i < ISA_OP_COUNT; i++) {
        isa_desc *d = &table[i];
        parse_operands(d);
        if (n_rows_by_major[d->major] == 64)
            table_fail(d, "more than 64 rows share a major opcode");
        rows_by_major[d->major][n_rows_by_major[d->major]++] = (uint16_t)i;
    }
    initialised = 1;
}

const isa_desc *isa_get(enum isa_op op)
{
    return op < ISA_OP_COUNT ? &table[op] : NULL;
}

static int32_t sign_extend(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (int32_t)((v ^ m) - m);
}

bool isa_decode(uint32_t word, isa_insn *out)
{
    word &= ~ISA_COISSUE_BIT;
    unsigned major = word >> 24;
    for (unsigned k = 0; k < n_rows_by_major[major]; k++) {
        const isa_desc *d = &table[rows_by_major[major][k]];
        if ((word & d->mask) != d->match)
            continue;
        out->op = rows_by_major[major][k];
        out->word = word;
        for (unsigned i = 0; i < ISA_MAX_OPERANDS; i++)
            out->operand[i] = 0;
        for (unsigned i = 0; i < d->n_operands; i++) {
            const isa_operand_desc *o = &d->operands[i];
            uint32_t field = (word >> o->shift) & ((1u << o->bits) - 1u);
            /* A pair starts at an even register, a quad at a multiple of 4:
             * other field values are not encodings of anything. */
            if (((o->kind == ISA_OPND_MP || o->kind == ISA_OPND_MP_INC || o->kind == ISA_OPND_AP) && (field & 1)) ||
                (o->kind == ISA_OPND_AQ && (field & 3))) {
                out->op = ISA_OP_INVALID;
                out->word = word;
                return false;
            }
            switch (o->kind) {
            case ISA_OPND_SIMM: out->operand[i] = sign_extend(field, o->bits); break;
            case ISA_OPND_TARGET: out->operand[i] = (int32_t)isa_target_to_addr(field); break;
            default: out->operand[i] = (int32_t)field; break;
            }
        }
        return true;
    }
    out->op = ISA_OP_INVALID;
    out->word = word;
    return false;
}

bool isa_encode(enum isa_op op, const int32_t *operand, uint32_t *word, char *err, size_t err_size)
{
    if (op >= ISA_OP_COUNT) {
        if (err) snprintf(err, err_size, "no such operation");
        return false;
    }
    const isa_desc *d = &table[op];
    uint32_t w = d->match;
    for (unsigned i = 0; i < d->n_operands; i++) {
        const isa_operand_desc *o = &d->operands[i];
        int64_t v = operand[i];
        uint32_t field;
        switch (o->kind) {
        case ISA_OPND_M: case ISA_OPND_M_INC: case ISA_OPND_A:
            if (v < 0 || v > 15) goto range;
            field = (uint32_t)v;
            break;
        case ISA_OPND_MP: case ISA_OPND_MP_INC: case ISA_OPND_AP:
            if (v < 0 || v > 14) goto range;
            if (v & 1) {
                if (err) snprintf(err, err_size, "operand %u: register pair must start at an even register", i + 1);
                return false;
            }
            field = (uint32_t)v;
            break;
        case ISA_OPND_AQ:
            if (v < 0 || v > 12) goto range;
            if (v & 3) {
                if (err) snprintf(err, err_size, "operand %u: register quad must start at a multiple of 4", i + 1);
                return false;
            }
            field = (uint32_t)v;
            break;
        case ISA_OPND_CSR: case ISA_OPND_UIMM:
            if (v < 0 || v >= ((int64_t)1 << o->bits)) goto range;
            field = (uint32_t)v;
            break;
        case ISA_OPND_SIMM:
            if (v < -((int64_t)1 << (o->bits - 1)) || v >= ((int64_t)1 << (o->bits - 1))) goto range;
            field = (uint32_t)v & ((1u << o->bits) - 1u);
            break;
        case ISA_OPND_TARGET:
            if (v < (int64_t)ISA_REGION0_BASE || v >= (int64_t)ISA_REGION1_BASE) {
                if (err) snprintf(err, err_size, "operand %u: target 0x%llx is outside region 0 (0x%x-0x%x), the only executable region",
                                  i + 1, (unsigned long long)v, ISA_REGION0_BASE, ISA_REGION1_BASE - 1);
                return false;
            }
            if (v & 3) {
                if (err) snprintf(err, err_size, "operand %u: target 0x%llx is not 4-byte aligned", i + 1, (unsigned long long)v);
                return false;
            }
            field = (uint32_t)((v - ISA_REGION0_BASE) >> 2);
            break;
        default:
            if (err) snprintf(err, err_size, "operand %u: unknown kind", i + 1);
            return false;
        }
        w |= field << o->shift;
        continue;
    range:
        if (err) {
            if (o->kind == ISA_OPND_SIMM)
                snprintf(err, err_size, "operand %u: %lld does not fit a signed %u-bit immediate (%lld..%lld)", i + 1,
                         (long long)v, o->bits, -((long long)1 << (o->bits - 1)), ((long long)1 << (o->bits - 1)) - 1);
            else if (o->kind == ISA_OPND_UIMM || o->kind == ISA_OPND_CSR)
                snprintf(err, err_size, "operand %u: %lld does not fit an unsigned %u-bit immediate (0..%lld)", i + 1,
                         (long long)v, o->bits, ((long long)1 << o->bits) - 1);
            else
                snprintf(err, err_size, "operand %u: register number %lld out of range", i + 1, (long long)v);
        }
        return false;
    }
    *word = w;
    return true;
}

size_t isa_lookup_mnemonic(const char *mnemonic, enum isa_op *ops, size_t max_ops)
{
    size_t n = 0;
    for (unsigned i = 0; i < ISA_OP_COUNT && n < max_ops; i++)
        if (!strcmp(table[i].mnemonic, mnemonic))
            ops[n++] = (enum isa_op)i;
    return n;
}

const char *isa_csr_name(unsigned number)
{
    for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++)
        if (csrs[i].number == number)
            return csrs[i].name;
    return NULL;
}

int isa_csr_number(const char *name)
{
    for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++)
        if (!strcmp(csrs[i].name, name))
            return (int)csrs[i].number;
    return -1;
}

bool isa_csr_writable(unsigned number)
{
    for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++)
        if (csrs[i].number == number)
            return csrs[i].writable;
    return false;
}

bool isa_csr_supervisor_only(unsigned number)
{
    for (size_t i = 0; i < sizeof csrs / sizeof csrs[0]; i++)
        if (csrs[i].number == number)
            return csrs[i].super_only;
    return false;
}
