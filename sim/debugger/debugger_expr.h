/*
 * debugger_expr.h — the debugger's expressions (as gdb's print takes them):
 * parsed once into a tree, then evaluated on any tile and context as often
 * as needed — a breakpoint condition is evaluated after every issue of its
 * tile, so evaluation neither parses nor allocates.
 *
 * The language is C's, with C's precedence:
 *   literals      12, 0x1f, 0b101, 1.5, 1e-3
 *   registers     $m0..$m15, $a0..$a15 (raw bits), $pc, $lr ($m10, where
 *                 call leaves its return address), $sp ($m11), $mzero,
 *                 $azero, any CSR by name ($FP_CTL, $COUNT_L, ...) of the
 *                 context evaluated on
 *   values        $cycle (the tile's cycle), $superstep (supersteps ended
 *                 on the tile's chip), $tile, $context
 *   memory        *(f32*)ADDR, *(f16*)ADDR, *(u8*)ADDR, ... of the tile
 *                 evaluated on; *ADDR reads a u32
 *   symbols       a symbol's address on the tile (byte arithmetic: sym+8)
 *   tensors       a compiled program's element: name[i][j] or name[i, j],
 *                 read from whichever tile holds it; 'odd/name'[i] quotes
 *                 a name that is not an identifier
 *   operators     unary - + ! ~ * &, casts (TYPE) and (TYPE*), * / %, + -,
 *                 << >>, < <= > >=, == !=, &, ^, |, &&, ||, parentheses
 * TYPE is bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64 (int,
 * unsigned, float and double name i32, u32, f32, f64).
 *
 * Every value has a type: registers are u32, $cycle u64, memory the type
 * of its pointer, a tensor element its tensor's, a literal the first of
 * i32, i64 (u32, u64 for hex) that holds it, a float literal f64.
 * Integers are computed in 64 bits: as i64, or u64 when an operand is a
 * u64 ($m1 - 6 is -1, not 2^32 - 1; (u32)X wraps as the tile does).
 * Floats are computed in double, the result rounded to the wider operand
 * type (f16 counts as f32: *(f32*)A * 2 is an f32, *(f32*)A * 0.5 an f64).
 * A cast of a register itself to f32 or f16 reads its bits ((f32)$a0 is
 * the f32 in $a0, (f16)$a0 its low half); any other cast converts the
 * value.  Comparisons, ! && || give bool (0 or 1).  Address arithmetic
 * scales by the pointed-to type ((f32*)sym + 1 is sym + 4); a symbol
 * points to bytes.  Float division by zero gives inf or NaN as IEEE says.
 *
 * Type mistakes and unknown names are refused when parsing; division by
 * zero, an address outside tile memory, a symbol the tile does not have or
 * an index out of range when evaluating: each one message, never a crash.
 */
#ifndef IPUSIM_SIM_DEBUGGER_EXPR_H
#define IPUSIM_SIM_DEBUGGER_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "debugger.h"

typedef enum dbg_type {
    DBG_BOOL, DBG_I8, DBG_U8, DBG_I16, DBG_U16, DBG_I32, DBG_U32, DBG_I64, DBG_U64,
    DBG_F16, DBG_F32, DBG_F64,
    DBG_ADDR,                     /* a tile address (32 bits): a symbol, (T*)X */
} dbg_type;

/* A typed value: integers sign- or zero-extended into i / u as their type
 * says, floats (f16, f32 already rounded to their type) in f. */
typedef struct dbg_value {
    dbg_type type;
    union {
        int64_t i;
        uint64_t u;
        double f;
    };
} dbg_value;

typedef struct dbg_expr dbg_expr;

/* Parse text; symbols, tensors, registers and CSRs are resolved now.  NULL
 * with err when the text is not an expression or names nothing known. */
dbg_expr *dbg_expr_parse(const debugger *d, const char *text, char *err, size_t err_size);
/* Its value on a tile and context. */
bool dbg_expr_eval(const debugger *d, const dbg_expr *e, uint32_t tile, unsigned context, dbg_value *v, char *err,
                   size_t err_size);
void dbg_expr_free(dbg_expr *e);
/* The type of the value it gives. */
dbg_type dbg_expr_type(const dbg_expr *e);

/* A value of type t from its little-endian bytes (as many as t has). */
dbg_value dbg_value_from_bytes(dbg_type t, const void *p);
/* Whether a value is non-zero. */
bool dbg_value_true(const dbg_value *v);
/* v as gdb's /FMT shows it: x (hex), d (signed), u (unsigned), o (octal),
 * t (binary) of its bits; c (a character: 65 'A'); f (a float: an integer
 * register's bits as f32 / f16); a (an address, hex); 0 its natural form
 * (decimal, a float in %g with its type's digits, an address in hex).
 * Returns buf. */
char *dbg_value_format(const dbg_value *v, char fmt, char *buf, size_t n);
/* "u32", "f32", "address", ... */
const char *dbg_type_name(dbg_type t);

#endif
