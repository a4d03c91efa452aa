/*
 * test_isa_table.c — the instruction table is consistent: every row parses,
 * no two rows can match the same word, and encode/decode are inverses.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "isa/isa.h"
#include "test_util.h"

static void test_rows_unambiguous(void)
{
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        for (unsigned j = i + 1; j < ISA_OP_COUNT; j++) {
            const isa_desc *a = isa_get(i), *b = isa_get(j);
            /* Some word matches both iff the matches agree on the common mask. */
            if (((a->match ^ b->match) & a->mask & b->mask) == 0) {
                char msg[200];
                snprintf(msg, sizeof msg, "rows %s and %s overlap", a->id, b->id);
                CU_FAIL_FATAL(msg);
            }
        }
}

static void test_same_major_same_width(void)
{
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        for (unsigned j = i + 1; j < ISA_OP_COUNT; j++) {
            const isa_desc *a = isa_get(i), *b = isa_get(j);
            if (a->major == b->major)
                CU_ASSERT_EQUAL(a->operand_bits, b->operand_bits);
        }
}

static void test_encode_decode_roundtrip(void)
{
    for (unsigned i = 0; i < ISA_OP_COUNT; i++) {
        const isa_desc *d = isa_get(i);
        int32_t ops[ISA_MAX_OPERANDS] = {0};
        /* Use the largest legal value of each operand, then a small one. */
        for (int pass = 0; pass < 2; pass++) {
            for (unsigned k = 0; k < d->n_operands; k++) {
                const isa_operand_desc *o = &d->operands[k];
                switch (o->kind) {
                case ISA_OPND_AP: case ISA_OPND_MP: case ISA_OPND_MP_INC: ops[k] = pass ? 2 : 14; break;
                case ISA_OPND_AQ: ops[k] = pass ? 4 : 12; break;
                case ISA_OPND_SIMM: ops[k] = pass ? -1 : (1 << (o->bits - 1)) - 1; break;
                case ISA_OPND_TARGET: ops[k] = pass ? (int32_t)ISA_REGION0_BASE + 8 : (int32_t)ISA_REGION1_BASE - 4; break;
                default: ops[k] = pass ? 1 : (1 << o->bits) - 1; break;
                }
            }
            uint32_t w;
            char err[200];
            CU_ASSERT_TRUE_FATAL(isa_encode(i, ops, &w, err, sizeof err));
            CU_ASSERT_EQUAL(w & ISA_COISSUE_BIT, 0);
            isa_insn in;
            CU_ASSERT_TRUE_FATAL(isa_decode(w, &in));
            CU_ASSERT_EQUAL(in.op, i);
            for (unsigned k = 0; k < d->n_operands; k++)
                CU_ASSERT_EQUAL(in.operand[k], ops[k]);
            /* The co-issue bit does not change what a word decodes to. */
            CU_ASSERT_TRUE(isa_decode(w | ISA_COISSUE_BIT, &in));
            CU_ASSERT_EQUAL(in.op, i);
        }
    }
}

static void test_encode_rejects(void)
{
    char err[200];
    uint32_t w;
    int32_t ops[ISA_MAX_OPERANDS] = {1, 2, 32768};
    CU_ASSERT_FALSE(isa_encode(ISA_OP_ADD_I, ops, &w, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "signed 16-bit"));
    int32_t pair[ISA_MAX_OPERANDS] = {1, 2, 4};
    CU_ASSERT_FALSE(isa_encode(ISA_OP_F32V2ADD, pair, &w, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "even"));
    int32_t tgt[ISA_MAX_OPERANDS] = {0, (int32_t)ISA_REGION1_BASE};
    CU_ASSERT_FALSE(isa_encode(ISA_OP_BRZ, tgt, &w, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "region 0"));
}

static void test_invalid_words(void)
{
    isa_insn in;
    /* Major 0x7f is unused. */
    CU_ASSERT_FALSE(isa_decode(0x7f000000u, &in));
    CU_ASSERT_EQUAL(in.op, ISA_OP_INVALID);
}

static void test_csr_names(void)
{
    CU_ASSERT_EQUAL(isa_csr_number("FP_CTL"), ISA_CSR_FP_CTL);
    CU_ASSERT_STRING_EQUAL(isa_csr_name(ISA_CSR_REPEAT_COUNT), "REPEAT_COUNT");
    CU_ASSERT_EQUAL(isa_csr_number("NOPE"), -1);
    CU_ASSERT_TRUE(isa_csr_supervisor_only(ISA_CSR_CCCSLOAD));
    CU_ASSERT_FALSE(isa_csr_writable(ISA_CSR_COUNT_L));
}

void test_register(void)
{
    ADD_SUITE("isa_table",
              {"rows are unambiguous", test_rows_unambiguous},
              {"rows sharing a major have one width", test_same_major_same_width},
              {"encode/decode round trip", test_encode_decode_roundtrip},
              {"encode rejects bad operands", test_encode_rejects},
              {"invalid words do not decode", test_invalid_words},
              {"CSR names", test_csr_names});
}
