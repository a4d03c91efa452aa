/*
 * exec_mem.c — loads, stores and triple-packed addresses of the main
 * pipeline (ISA2 §3.4 addressing modes, §3.7.5 memory, §3.7.4.15 tapack,
 * §4.1.1 packed-address helpers).
 *
 * Addressing:
 *   ld/st  $d, $base, $delta, zimm12    EA = $base + $delta + zimm12 * size
 *   *step  $d, $base, $delta+=, simm8   EA = $base + $delta, then
 *                                       $delta += simm8 * size
 *   *pace  ..., $mA:A+1+=, $stride, strimm
 *       three 21-bit addresses packed in an MRF pair (tapack):
 *         $mA   bits 20..0  address 0     bits 31..21  address 2 [10:0]
 *         $mA+1 bits 20..0  address 1     bits 30..21  address 2 [20:11]
 *       Each address the instruction uses is post-incremented by
 *       stride * 8 bytes (one 64-bit atom per unit), where the stride is
 *       chosen by a 2-bit field of the immediate (ISA2 §4.1.1.3,
 *       Tile_ExtractPackedStride):
 *         0b00  +1
 *         0b01  $stride[9:0]    as a signed 10-bit number
 *         0b10  $stride[19:10]  as a signed 10-bit number
 *         0b11  $stride[29:20]  as a signed 10-bit number
 *       Fields of the immediate, from bit 0, in the order of the addresses
 *       the instruction uses:
 *         ld2x64pace   [1:0] load address 0,  [3:2] load address 1
 *         ldst64pace   [1:0] load address 0,  [3:2] store address 2
 *         ld2xst64pace [1:0] load address 0,  [3:2] load address 1,
 *                      [5:4] store address 2
 *         st64pace     [1:0] store address 2
 *       Addresses it does not use are kept as they were; the incremented
 *       ones wrap within 21 bits (TMEM_FULL_ADDRESS_MASK).
 *   Address arithmetic is 32-bit and wraps (ISA2 §2.8.1, footnote 4).
 *
 * Checks, in ISA2's order for each instruction, all before any register or
 * memory is changed (so a faulting instruction leaves no trace): range
 * (ISA_EXC_MEM_RANGE), for ld128 alignment before region, otherwise region
 * before alignment (ISA_EXC_MEM_REGION: 128-bit loads and ld2xst64pace's
 * second load need the interleaved region 1; ISA_EXC_MEM_ALIGN: natural
 * alignment), then, for instructions with several accesses, memory elements
 * (ISA_EXC_MEM_CONFLICT).  ISA2 raises one TEXCPT_INVALID_ADDR for the first
 * three; ipusim tells them apart.
 *
 * Loads into the ARF (ISA_F_ARFW) are queued with isa_defer_a so that the
 * bundle's aux sibling reads the old values.  A main-pipeline instruction
 * may not name one register as two destinations (ISA2 §3.2):
 * ld*step $mX, ..., $mX+= and ld2x64pace with equal destination pairs raise
 * ISA_EXC_INVALID_OPERAND.
 *
 */
#include "exec.h"

#include <stdio.h>

#define PACKED_ADDRESS_MASK 0x1fffffu  /* TMEM_FULL_ADDRESS_MASK: 21 bits */
#define PACKED_ADDRESS_BITS 21u        /* TMEM_BYTE_MAX_ADDRESS_WIDTH */

static const char *mnemonic(const isa_insn *in)
{
    return isa_get((enum isa_op)in->op)->mnemonic;
}

/* ---- checks and faults ----------------------------------------------------- */

enum access_kind {
    ACCESS_ANY,          /* any region */
    ACCESS_INTERLEAVED,  /* region 1 only: ld128, ld2xst64pace's second load */
};

static bool in_range(const tile_memory *m, uint32_t addr)
{
    return addr - m->base < m->size_bytes;
}

static enum isa_flow range_fault(isa_tile_state *t, isa_context *c, const isa_insn *in, uint32_t addr)
{
    return isa_raise(t, c, in, ISA_EXC_MEM_RANGE, addr,
                     "%s at 0x%x: address outside tile memory (0x%x-0x%x)",
                     mnemonic(in), addr, t->mem.base, t->mem.base + t->mem.size_bytes - 1u);
}

static enum isa_flow align_fault(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                 uint32_t addr, unsigned bytes)
{
    return isa_raise(t, c, in, ISA_EXC_MEM_ALIGN, addr,
                     "%s at 0x%x: address not %u-byte aligned", mnemonic(in), addr, bytes);
}

static enum isa_flow region_fault(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                  uint32_t addr, const char *what)
{
    return isa_raise(t, c, in, ISA_EXC_MEM_REGION, addr,
                     "%s at 0x%x: %s must be in the interleaved region 1 (from 0x%x)",
                     mnemonic(in), addr, what, t->mem.region1_base);
}

/* One access: range, region, alignment (ld128's alignment comes before its
 * region check, as in ISA2 §3.7.5.3.9; a 16-byte aligned address is region
 * checked the same either way, so only the order of reporting differs). */
static enum isa_flow check_access(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                  uint32_t addr, unsigned bytes, enum access_kind kind)
{
    if (!in_range(&t->mem, addr))
        return range_fault(t, c, in, addr);
    if (bytes == 16 && (addr & 15u))
        return align_fault(t, c, in, addr, bytes);
    if (kind == ACCESS_INTERLEAVED && tmem_is_executable(&t->mem, addr))
        return region_fault(t, c, in, addr, bytes == 16 ? "a 128-bit load" : "the second load");
    if (addr & (bytes - 1u))
        return align_fault(t, c, in, addr, bytes);
    return ISA_FLOW_NEXT;
}

/* Several accesses of one instruction: every range first, then regions,
 * then alignment, then element conflicts (ISA2 §3.7.5.1.2 order). */
static enum isa_flow check_accesses(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                    const uint32_t *addr, const enum access_kind *kind, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!in_range(&t->mem, addr[i]))
            return range_fault(t, c, in, addr[i]);
    for (unsigned i = 0; i < n; i++)
        if (kind[i] == ACCESS_INTERLEAVED && tmem_is_executable(&t->mem, addr[i]))
            return region_fault(t, c, in, addr[i], "the second load");
    for (unsigned i = 0; i < n; i++)
        if (addr[i] & 7u)
            return align_fault(t, c, in, addr[i], 8);
    if (tmem_check_conflict(&t->mem, addr, n) != TMEM_OK) {
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = i + 1; j < n; j++) {
                unsigned e = tmem_element(&t->mem, addr[i]);
                if (e == tmem_element(&t->mem, addr[j]))
                    return isa_raise(t, c, in, ISA_EXC_MEM_CONFLICT, addr[j],
                                     "%s at 0x%x and 0x%x: both accesses hit memory element %u",
                                     mnemonic(in), addr[i], addr[j], e);
            }
        return isa_raise(t, c, in, ISA_EXC_MEM_CONFLICT, addr[0],
                         "%s at 0x%x: memory element conflict", mnemonic(in), addr[0]);
    }
    return ISA_FLOW_NEXT;
}

/* A status from tile memory after the checks above passed: only a store's
 * page allocation can still fail. */
static enum isa_flow memory_status(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                   enum tmem_status st, uint32_t addr)
{
    if (st == TMEM_OK)
        return ISA_FLOW_NEXT;
    return isa_raise(t, c, in, ISA_EXC_MEM_RANGE, addr, "%s at 0x%x: %s", mnemonic(in), addr,
                     st == TMEM_NOMEM ? "the simulator is out of host memory" : tmem_status_name(st));
}

/* ---- plain accesses ------------------------------------------------------- */

/* Load 1, 2, 4, 8 or 16 bytes after checking; the value is returned as
 * little-endian 32-bit words in w[] (unused words zero).  The common widths
 * take tile memory's inline fast paths. */
static enum isa_flow load(isa_tile_state *t, isa_context *c, const isa_insn *in,
                          uint32_t addr, unsigned bytes, uint32_t w[4])
{
    enum isa_flow f = check_access(t, c, in, addr, bytes, bytes == 16 ? ACCESS_INTERLEAVED : ACCESS_ANY);
    if (f != ISA_FLOW_NEXT)
        return f;
    enum tmem_status st;
    uint64_t lo = 0, hi = 0;
    w[0] = w[1] = w[2] = w[3] = 0;
    switch (bytes) {
    case 16:
        st = tmem_load64(&t->mem, addr, &lo);
        if (st == TMEM_OK)
            st = tmem_load64(&t->mem, addr + 8u, &hi);
        w[0] = (uint32_t)lo, w[1] = (uint32_t)(lo >> 32);
        w[2] = (uint32_t)hi, w[3] = (uint32_t)(hi >> 32);
        break;
    case 8:
        st = tmem_load64(&t->mem, addr, &lo);
        w[0] = (uint32_t)lo, w[1] = (uint32_t)(lo >> 32);
        break;
    case 4:
        st = tmem_load32(&t->mem, addr, &w[0]);
        break;
    default: {
        uint8_t buf[2] = {0, 0};
        st = tmem_load(&t->mem, addr, bytes, buf);
        w[0] = (uint32_t)buf[0] | (uint32_t)buf[1] << 8;
        break;
    }
    }
    return memory_status(t, c, in, st, addr);
}

static enum isa_flow store(isa_tile_state *t, isa_context *c, const isa_insn *in,
                           uint32_t addr, unsigned bytes, const uint32_t *w)
{
    enum isa_flow f = check_access(t, c, in, addr, bytes, ACCESS_ANY);
    if (f != ISA_FLOW_NEXT)
        return f;
    enum tmem_status st = bytes == 8
        ? tmem_store64(&t->mem, addr, (uint64_t)w[1] << 32 | w[0])
        : tmem_store32(&t->mem, addr, w[0]);
    return memory_status(t, c, in, st, addr);
}

/* How a loaded value becomes a register value. */
enum load_format { FMT_RAW, FMT_ZERO8, FMT_SIGN8, FMT_ZERO16, FMT_SIGN16, FMT_BCAST16 };

static uint32_t format_word(uint32_t w, enum load_format fmt)
{
    switch (fmt) {
    case FMT_ZERO8:   return w & 0xffu;
    case FMT_SIGN8:   return (w & 0x80u) ? (w | 0xffffff00u) : (w & 0xffu);
    case FMT_ZERO16:  return w & 0xffffu;
    case FMT_SIGN16:  return (w & 0x8000u) ? (w | 0xffff0000u) : (w & 0xffffu);
    case FMT_BCAST16: return (w & 0xffffu) | (w << 16);
    default:          return w;
    }
}

enum dest_file { DEST_M, DEST_A };

/* Where a load's result goes: MRF registers are written at once; ARF
 * registers are queued until the bundle's aux sibling has read its
 * operands. */
static void write_dest(isa_context *c, enum dest_file file, int reg, const uint32_t *w, unsigned n)
{
    if (file == DEST_A) {
        isa_defer_a(c, reg, w, (int)n);
    } else {
        isa_set_m(c, reg, w[0]);
    }
}

/* ld* $d, $base, $delta, zimm12 */
static enum isa_flow load_offset(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                 unsigned bytes, enum load_format fmt, enum dest_file file)
{
    uint32_t addr = isa_m(c, in->operand[1]) + isa_m(c, in->operand[2]) + (uint32_t)in->operand[3] * bytes;
    uint32_t w[4];
    enum isa_flow f = load(t, c, in, addr, bytes, w);
    if (f != ISA_FLOW_NEXT)
        return f;
    w[0] = format_word(w[0], fmt);
    write_dest(c, file, in->operand[0], w, bytes <= 4 ? 1 : bytes / 4);
    return ISA_FLOW_NEXT;
}

/* ld*step $d, $base, $delta+=, simm8 */
static enum isa_flow load_step(isa_tile_state *t, isa_context *c, const isa_insn *in,
                               unsigned bytes, enum load_format fmt, enum dest_file file)
{
    int delta_reg = in->operand[2];
    if (file == DEST_M && in->operand[0] == delta_reg)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "%s: $m%d is both the destination and the post-incremented delta",
                         mnemonic(in), delta_reg);
    uint32_t delta = isa_m(c, delta_reg);
    uint32_t addr = isa_m(c, in->operand[1]) + delta;
    uint32_t w[4];
    enum isa_flow f = load(t, c, in, addr, bytes, w);
    if (f != ISA_FLOW_NEXT)
        return f;
    w[0] = format_word(w[0], fmt);
    write_dest(c, file, in->operand[0], w, bytes <= 4 ? 1 : bytes / 4);
    isa_set_m(c, delta_reg, delta + (uint32_t)in->operand[3] * bytes);
    return ISA_FLOW_NEXT;
}

/* The value a store writes: an MRF word, an ARF word or an ARF pair. */
static void store_value(const isa_context *c, const isa_insn *in, enum dest_file file,
                        unsigned bytes, uint32_t w[2])
{
    int r = in->operand[0];
    w[0] = file == DEST_M ? isa_m(c, r) : isa_a(c, r);
    w[1] = bytes == 8 ? isa_a(c, r + 1) : 0;
}

/* st* $s, $base, $delta, zimm12 */
static enum isa_flow store_offset(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                  unsigned bytes, enum dest_file file)
{
    uint32_t addr = isa_m(c, in->operand[1]) + isa_m(c, in->operand[2]) + (uint32_t)in->operand[3] * bytes;
    uint32_t w[2];
    store_value(c, in, file, bytes, w);
    return store(t, c, in, addr, bytes, w);
}

/* st*step $s, $base, $delta+=, simm8 */
static enum isa_flow store_step(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                unsigned bytes, enum dest_file file)
{
    int delta_reg = in->operand[2];
    uint32_t delta = isa_m(c, delta_reg);
    uint32_t addr = isa_m(c, in->operand[1]) + delta;
    uint32_t w[2];
    store_value(c, in, file, bytes, w);
    enum isa_flow f = store(t, c, in, addr, bytes, w);
    if (f != ISA_FLOW_NEXT)
        return f;
    isa_set_m(c, delta_reg, delta + (uint32_t)in->operand[3] * bytes);
    return ISA_FLOW_NEXT;
}

#define LOAD_OFFSET(ID, BYTES, FMT, FILE) \
    enum isa_flow isa_exec_##ID(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    { return load_offset(t, c, in, BYTES, FMT, FILE); }
#define LOAD_STEP(ID, BYTES, FMT, FILE) \
    enum isa_flow isa_exec_##ID(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    { return load_step(t, c, in, BYTES, FMT, FILE); }
#define STORE_OFFSET(ID, BYTES, FILE) \
    enum isa_flow isa_exec_##ID(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    { return store_offset(t, c, in, BYTES, FILE); }
#define STORE_STEP(ID, BYTES, FILE) \
    enum isa_flow isa_exec_##ID(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    { return store_step(t, c, in, BYTES, FILE); }

LOAD_OFFSET(LDZ8,    1,  FMT_ZERO8,   DEST_M)
LOAD_OFFSET(LDS8,    1,  FMT_SIGN8,   DEST_M)
LOAD_OFFSET(LDZ16,   2,  FMT_ZERO16,  DEST_M)
LOAD_OFFSET(LDS16,   2,  FMT_SIGN16,  DEST_M)
LOAD_OFFSET(LD32,    4,  FMT_RAW,     DEST_M)
LOAD_OFFSET(LD32_A,  4,  FMT_RAW,     DEST_A)
LOAD_OFFSET(LD64,    8,  FMT_RAW,     DEST_A)
LOAD_OFFSET(LD128,   16, FMT_RAW,     DEST_A)
LOAD_OFFSET(LDB16,   2,  FMT_BCAST16, DEST_A)

LOAD_STEP(LD32STEP,   4,  FMT_RAW,     DEST_M)
LOAD_STEP(LD32STEP_A, 4,  FMT_RAW,     DEST_A)
LOAD_STEP(LD64STEP,   8,  FMT_RAW,     DEST_A)
LOAD_STEP(LD128STEP,  16, FMT_RAW,     DEST_A)
LOAD_STEP(LDZ16STEP,  2,  FMT_ZERO16,  DEST_M)
LOAD_STEP(LDS16STEP,  2,  FMT_SIGN16,  DEST_M)
LOAD_STEP(LDZ8STEP,   1,  FMT_ZERO8,   DEST_M)
LOAD_STEP(LDB16STEP,  2,  FMT_BCAST16, DEST_A)

STORE_OFFSET(ST32,   4, DEST_M)
STORE_OFFSET(ST32_A, 4, DEST_A)
STORE_OFFSET(ST64,   8, DEST_A)

STORE_STEP(ST32STEP,   4, DEST_M)
STORE_STEP(ST32STEP_A, 4, DEST_A)
STORE_STEP(ST64STEP,   8, DEST_A)

/* ---- triple-packed addresses ---------------------------------------------- */

/* Tile_ExtractPackedAddress (ISA2 §4.1.1.4). */
static void unpack_addresses(uint32_t lower, uint32_t upper, uint32_t addr[3])
{
    addr[0] = lower & PACKED_ADDRESS_MASK;
    addr[1] = upper & PACKED_ADDRESS_MASK;
    addr[2] = ((lower >> PACKED_ADDRESS_BITS) & 0x7ffu) | (((upper >> PACKED_ADDRESS_BITS) & 0x3ffu) << 11);
}

/* Tile_TripleAddressPack_Lower / _Upper (ISA2 §4.1.1.5-6). */
static void pack_addresses(const uint32_t addr[3], uint32_t *lower, uint32_t *upper)
{
    *lower = (addr[0] & PACKED_ADDRESS_MASK) | ((addr[2] & 0x7ffu) << PACKED_ADDRESS_BITS);
    *upper = (addr[1] & PACKED_ADDRESS_MASK) | (((addr[2] >> 11) & 0x3ffu) << PACKED_ADDRESS_BITS);
}

/* Tile_ExtractPackedStride (ISA2 §4.1.1.3), in 64-bit atoms. */
static int32_t packed_stride(uint32_t stride_reg, unsigned select)
{
    select &= 3u;
    if (select == 0)
        return 1;
    uint32_t field = (stride_reg >> (10u * (select - 1u))) & 0x3ffu;
    return (field & 0x200u) ? (int32_t)field - 0x400 : (int32_t)field;
}

static uint32_t advance_address(uint32_t addr, uint32_t stride_reg, unsigned select)
{
    return (addr + (uint32_t)packed_stride(stride_reg, select) * 8u) & PACKED_ADDRESS_MASK;
}

/* tapack $mD:D+1, $mA0, $mA1, $mA2 (ISA2 §3.7.4.15). */
enum isa_flow isa_exec_TAPACK(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    uint32_t addr[3] = {
        isa_m(c, in->operand[1]), isa_m(c, in->operand[2]), isa_m(c, in->operand[3]),
    };
    uint32_t lower, upper;
    pack_addresses(addr, &lower, &upper);
    isa_set_m(c, in->operand[0], lower);
    isa_set_m(c, in->operand[0] + 1, upper);
    return ISA_FLOW_NEXT;
}

/* The pace forms' common shape: which of the three addresses are used, as
 * what, and which immediate field strides each. */
typedef struct pace_access {
    int slot;                 /* 0, 1 or 2: which packed address */
    bool is_store;
    enum access_kind kind;
} pace_access;

typedef struct pace_result {
    uint64_t loaded[2];
} pace_result;

/* The common case of check_accesses: every access in range, 8-byte
 * aligned and in its region, each on its own element.  False sends the
 * instruction through check_accesses, which reports the first failing
 * check in ISA2's order.  (Checked access by access, so that the compiler
 * knows the loads and stores that follow in range and aligned.) */
static inline bool pace_accesses_ok(const tile_memory *m, const uint32_t *ea, const pace_access *acc, unsigned n)
{
    unsigned element[3];
    _Pragma("GCC unroll 3")
    for (unsigned i = 0; i < n; i++) {
        if (ea[i] - m->base >= m->size_bytes || (ea[i] & 7u)
            || (acc[i].kind == ACCESS_INTERLEAVED && ea[i] < m->region1_base))
            return false;
        element[i] = tmem_element(m, ea[i]);
    }
    bool distinct = true;
    _Pragma("GCC unroll 3")
    for (unsigned i = 0; i < n; i++)
        _Pragma("GCC unroll 3")
        for (unsigned j = i + 1; j < n; j++)
            distinct &= element[i] != element[j];
    return distinct;
}

/* Checks every access, loads, stores `store_data` and post-increments the
 * used addresses in the MRF pair; registers other than the pair are the
 * caller's to write (after this returns NEXT).  Always inlined: each pace
 * instruction passes constant accesses, and the loops over them then
 * unroll into straight code. */
static inline __attribute__((always_inline)) enum isa_flow
pace(isa_tile_state *t, isa_context *c, const isa_insn *in, const pace_access *acc, unsigned n, int pair_reg,
     int stride_reg, uint32_t strimm, uint64_t store_data, pace_result *out)
{
    out->loaded[0] = out->loaded[1] = 0;
    uint32_t packed[3];
    unpack_addresses(isa_m(c, pair_reg), isa_m(c, pair_reg + 1), packed);
    uint32_t ea[3] = {0};
    _Pragma("GCC unroll 3")
    for (unsigned i = 0; i < n; i++)
        ea[i] = packed[acc[i].slot];
    enum isa_flow f;
    if (!pace_accesses_ok(&t->mem, ea, acc, n)) {
        enum access_kind kind[3] = {ACCESS_ANY, ACCESS_ANY, ACCESS_ANY};
        for (unsigned i = 0; i < n; i++)
            kind[i] = acc[i].kind;
        f = check_accesses(t, c, in, ea, kind, n);
        if (f != ISA_FLOW_NEXT)
            return f;
    }

    unsigned loads = 0;
    _Pragma("GCC unroll 3")
    for (unsigned i = 0; i < n; i++) {
        enum tmem_status st = acc[i].is_store
            ? tmem_store64(&t->mem, ea[i], store_data)
            : tmem_load64(&t->mem, ea[i], &out->loaded[loads++]);
        f = memory_status(t, c, in, st, ea[i]);
        if (f != ISA_FLOW_NEXT)
            return f;
    }

    uint32_t stride = isa_m(c, stride_reg);
    _Pragma("GCC unroll 3")
    for (unsigned i = 0; i < n; i++)
        packed[acc[i].slot] = advance_address(packed[acc[i].slot], stride, (strimm >> (2 * i)) & 3u);
    uint32_t lower, upper;
    pack_addresses(packed, &lower, &upper);
    isa_set_m(c, pair_reg, lower);
    isa_set_m(c, pair_reg + 1, upper);
    return ISA_FLOW_NEXT;
}

static void split64(uint64_t v, uint32_t *w)
{
    w[0] = (uint32_t)v;
    w[1] = (uint32_t)(v >> 32);
}

static uint64_t arf_pair(const isa_context *c, int r)
{
    return (uint64_t)isa_a(c, r + 1) << 32 | isa_a(c, r);
}

/* ld2x64pace $aD0:D0+1, $aD1:D1+1, $mA:A+1+=, $mS, strimm2x2 */
enum isa_flow isa_exec_LD2X64PACE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    int d0 = in->operand[0], d1 = in->operand[1];
    if (d0 == d1)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "ld2x64pace: both loads name the destination $a%d:%d", d0, d0 + 1);
    static const pace_access acc[] = {{0, false, ACCESS_ANY}, {1, false, ACCESS_ANY}};
    pace_result r;
    enum isa_flow f = pace(t, c, in, acc, 2, in->operand[2], in->operand[3], (uint32_t)in->operand[4], 0, &r);
    if (f != ISA_FLOW_NEXT)
        return f;
    uint32_t w[2];
    split64(r.loaded[0], w);
    isa_defer_a(c, d0, w, 2);
    split64(r.loaded[1], w);
    isa_defer_a(c, d1, w, 2);
    return ISA_FLOW_NEXT;
}

/* ldst64pace $aD:D+1, $aS:S+1, $mA:A+1+=, $mS, strimm2x2: load from address
 * 0, store to address 2. */
enum isa_flow isa_exec_LDST64PACE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    static const pace_access acc[] = {{0, false, ACCESS_ANY}, {2, true, ACCESS_ANY}};
    pace_result r;
    enum isa_flow f = pace(t, c, in, acc, 2, in->operand[2], in->operand[3], (uint32_t)in->operand[4],
                           arf_pair(c, in->operand[1]), &r);
    if (f != ISA_FLOW_NEXT)
        return f;
    uint32_t w[2];
    split64(r.loaded[0], w);
    isa_defer_a(c, in->operand[0], w, 2);
    return ISA_FLOW_NEXT;
}

/* ld2xst64pace $aD:D+3, $aS:S+1, $mA:A+1+=, $mS, strimm3x2: loads from
 * addresses 0 and 1 (address 1 in region 1, ISA2 §3.7.5.1.2), store to
 * address 2. */
enum isa_flow isa_exec_LD2XST64PACE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    static const pace_access acc[] = {
        {0, false, ACCESS_ANY}, {1, false, ACCESS_INTERLEAVED}, {2, true, ACCESS_ANY},
    };
    pace_result r;
    enum isa_flow f = pace(t, c, in, acc, 3, in->operand[2], in->operand[3], (uint32_t)in->operand[4],
                           arf_pair(c, in->operand[1]), &r);
    if (f != ISA_FLOW_NEXT)
        return f;
    uint32_t w[4];
    split64(r.loaded[0], w);
    split64(r.loaded[1], w + 2);
    isa_defer_a(c, in->operand[0], w, 4);
    return ISA_FLOW_NEXT;
}

/* st64pace $aS:S+1, $mA:A+1+=, $mS, strimm2: store to address 2. */
enum isa_flow isa_exec_ST64PACE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    static const pace_access acc[] = {{2, true, ACCESS_ANY}};
    pace_result r;
    return pace(t, c, in, acc, 1, in->operand[1], in->operand[2], (uint32_t)in->operand[3],
                arf_pair(c, in->operand[0]), &r);
}
