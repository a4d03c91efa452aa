/*
 * isa.h — the ipusim tile instruction set: operations, operand kinds,
 * encoding and decoding.
 *
 * The whole instruction set is the table in isa.def; this header turns its
 * rows into an enum and a descriptor array.  Instructions are 32-bit words:
 *
 *   bit  31      co-issue: this word is the main half of a bundle, the next
 *                word is its aux half (the bundle is 8-byte aligned)
 *   bits 30..24  major opcode
 *   bits 23..0   payload: operands packed from bit 0 upward in assembly
 *                order, then the funct field that tells apart rows sharing
 *                a major
 *
 * Decoding happens once, when a program is loaded (sim/engine/tile.c keeps a
 * decoded copy of every tile's code), never per executed instruction.
 */
#ifndef IPUSIM_ISA_H
#define IPUSIM_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memmodel/memory_map.h"   /* the tile memory map: ISA_MEMORY_BASE ... */


#define ISA_WORKERS            6         /* worker contexts per tile (ISA2 §2.3) */
#define ISA_CONTEXTS           (ISA_WORKERS + 1)  /* context 0 is the supervisor */
#define ISA_SUPERVISOR         0
#define ISA_MRF_ZERO           15        /* $m15 reads as zero, writes are ignored */
#define ISA_ARF_ZERO           15        /* $a15 reads as zero ($a14:15 = $azeros) */
#define ISA_MRF_LR             10        /* $lr: link register used by call */
#define ISA_MRF_SP             11        /* $sp */
#define ISA_INSN_BYTES         4
#define ISA_BUNDLE_BYTES       8
#define ISA_COISSUE_BIT        0x80000000u
#define ISA_RPT_MAX_COUNT      4095u     /* 12-bit immediate count */

/* Sync zones: the operand of the supervisor's sync instruction.  ipusim's own
 * numbering (ISA2 does not publish the exchange/sync instructions). */
enum isa_sync_zone {
    ISA_SYNC_WORKERS  = 0,  /* wait until every worker of this tile has exited */
    ISA_SYNC_INTERNAL = 1,  /* barrier over all tiles of this chip */
    ISA_SYNC_EXTERNAL = 2,  /* barrier over all chips of the sync group */
    ISA_SYNC_EXCHANGE = 3,  /* end of this tile's exchange phase, no barrier
                               (exchange/exchange.h) */
};

enum isa_op {
#define ISA_INSN(id, mn, ops, major, funct, pipe, cost, flags) ISA_OP_##id,
#include "isa.def"
#undef ISA_INSN
    ISA_OP_COUNT,
    ISA_OP_INVALID = ISA_OP_COUNT
};

enum isa_csr {
#define ISA_CSR(id, name, num, owner, wr) ISA_CSR_##id = (num),
#include "csr.def"
#undef ISA_CSR
};
#define ISA_CSR_SPACE 256           /* CSR numbers are 8 bits */

enum isa_pipe { ISA_PIPE_MAIN, ISA_PIPE_AUX };

/* Latency classes.  How many worker cycles each costs is a machine
 * parameter (sim/program/machine.def); ISA2 Table 4.1 gives the IPU2 values. */
enum isa_cost {
    ISA_COST_1,
    ISA_COST_F32DIV,
    ISA_COST_F32SQRT,
    ISA_COST_F32EXP,
    ISA_COST_F32LOG,
    ISA_COST_F32SIGM,
    ISA_COST_F32OOX,
    ISA_COST_F32OORX,
    ISA_COST_F16TRANS,
    ISA_COST_COUNT
};

enum isa_flag {
    ISA_F_SUP  = 1u << 0,
    ISA_F_WRK  = 1u << 1,
    ISA_F_CTRL = 1u << 2,
    ISA_F_LD   = 1u << 3,
    ISA_F_ST   = 1u << 4,
    ISA_F_AMP  = 1u << 5,
    ISA_F_ARFW = 1u << 6,
};

enum isa_operand_kind {
    ISA_OPND_M,        /* $mN */
    ISA_OPND_M_INC,    /* $mN+= */
    ISA_OPND_MP,       /* $mN:N+1 */
    ISA_OPND_MP_INC,   /* $mN:N+1+= */
    ISA_OPND_A,        /* $aN */
    ISA_OPND_AP,       /* $aN:N+1 */
    ISA_OPND_AQ,       /* $aN:N+3 */
    ISA_OPND_CSR,      /* $NAME */
    ISA_OPND_UIMM,     /* unsigned immediate */
    ISA_OPND_SIMM,     /* signed immediate */
    ISA_OPND_TARGET,   /* code address, word offset from ISA_REGION0_BASE */
};

#define ISA_MAX_OPERANDS 5

typedef struct isa_operand_desc {
    uint8_t kind;      /* enum isa_operand_kind */
    uint8_t bits;      /* field width in the encoding */
    uint8_t shift;     /* lowest bit of the field in the word */
} isa_operand_desc;

/* One row of isa.def, with its operand string parsed. */
typedef struct isa_desc {
    const char *id;           /* "LD32STEP_A" */
    const char *mnemonic;     /* "ld32step" */
    const char *operand_text; /* "a,m,m+,s8" as written in isa.def */
    uint8_t major;
    uint32_t funct;
    uint8_t pipe;             /* enum isa_pipe */
    uint8_t cost;             /* enum isa_cost */
    uint32_t flags;           /* enum isa_flag */
    uint8_t n_operands;
    uint8_t operand_bits;     /* total width of the operand fields */
    isa_operand_desc operands[ISA_MAX_OPERANDS];
    uint32_t mask, match;     /* word & mask == match identifies the row */
} isa_desc;

/* A decoded instruction.  Operand values are in assembly order: register
 * numbers (the first register of a pair or quad), CSR numbers, immediates
 * (sign-extended for simm) and targets (as byte addresses). */
typedef struct isa_insn {
    uint16_t op;                       /* enum isa_op */
    uint32_t word;                     /* the encoding it came from */
    int32_t operand[ISA_MAX_OPERANDS];
} isa_insn;

/* The descriptor table, ISA_OP_COUNT entries.  isa_init() must have run. */
extern const isa_desc *isa_table;

/* Parse the table (operand strings, masks).  Idempotent and thread-safe once
 * it has returned; call it from main() before starting threads. */
void isa_init(void);

const isa_desc *isa_get(enum isa_op op);

/* Decode one 32-bit word, ignoring the co-issue bit.  Returns false when no
 * row matches (an illegal instruction). */
bool isa_decode(uint32_t word, isa_insn *out);

/* Encode an instruction from its operand values (as in isa_insn.operand).
 * Returns false and writes a message to err (if not NULL) when an operand
 * does not fit its field, a pair/quad is misaligned, or a target is out of
 * region 0.  The co-issue bit is not set. */
bool isa_encode(enum isa_op op, const int32_t *operand, uint32_t *word,
                char *err, size_t err_size);

/* Rows with this mnemonic, in table order: returns the number written to
 * ops (at most max_ops). */
size_t isa_lookup_mnemonic(const char *mnemonic, enum isa_op *ops, size_t max_ops);

/* CSR names: "$FP_CTL" <-> number.  isa_csr_name returns NULL for an
 * unknown number; isa_csr_number returns -1 for an unknown name (the name
 * is given without '$'). */
const char *isa_csr_name(unsigned number);
int isa_csr_number(const char *name);
bool isa_csr_writable(unsigned number);
bool isa_csr_supervisor_only(unsigned number);

/* Convert between a target field value and a byte address. */
static inline uint32_t isa_target_to_addr(uint32_t field) { return ISA_REGION0_BASE + field * 4u; }

#endif
