/*
 * disasm.h — the ipusim tile disassembler, driven by the instruction table
 * (isa.def) like the assembler.
 *
 * Text is what the assembler (asm.h) reads back to the same bytes: a word
 * is printed as an instruction only if re-encoding what is printed gives
 * that word again, and a bundle only if it can be one (8-byte aligned, main
 * half with bit 31 then an aux half); anything else is printed as
 * `.word 0x...` with a comment saying why.  Registers print as the
 * assembler spells them ($mzero, $azero, $azeros for the zero registers),
 * immediates in decimal except the stride-select fields of the pace
 * instructions (binary) and the operands of bitwise instructions (hex).
 */
#ifndef IPUSIM_ISA_DISASM_H
#define IPUSIM_ISA_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "isa/isa.h"
#include "isa/elf/executable.h"

/* Name for a code address (a branch target), or NULL to print it in hex.
 * The name must be one the assembler accepts as a symbol. */
typedef const char *(*disasm_symbolizer)(void *ctx, uint32_t addr);

/* One decoded instruction, e.g. "f32add $a0, $a1, $a2".  Returns false
 * (and writes ".word 0x...") when it cannot be printed so that it
 * re-assembles to in->word: an operand field no row allows (an odd pair),
 * an unknown CSR. */
bool disasm_insn(const isa_insn *in, disasm_symbolizer sym, void *ctx, char *buf, size_t n);

/* The instruction or bundle at pc: w0 is the word at pc, w1 the next word
 * (have_w1 false if there is none).  Writes "f32add $a0, $a1, $a2" or
 * "{ ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; f16v4sisoamp ... }"
 * or ".word 0x... // why" and returns the bytes consumed (4 or 8). */
size_t disasm_bundle(uint32_t w0, uint32_t w1, bool have_w1, uint32_t pc, char *buf, size_t n);
size_t disasm_bundle_sym(uint32_t w0, uint32_t w1, bool have_w1, uint32_t pc, disasm_symbolizer sym,
                         void *ctx, char *buf, size_t n);

/* A whole executable as source the assembler turns back into the same
 * section bytes, symbols and entries: per section `.section NAME,
 * "flags"[, @nobits], ADDR`, labels from the symbols (with .globl, .type
 * and .size where they differ from the defaults), code disassembled
 * (address in a comment), data as .word/.byte (.space for runs of zeros),
 * NOBITS as .space, and `.entry`.  A section that is the same on several
 * tiles (name, address, flags, bytes, the symbols in it, the names its
 * branches print) is printed once, under `.tile 0-1471` or `.tile 0, 4-7,
 * 9`, the list of the tiles that hold it; so is an entry; a section or
 * entry of one tile only is under `.tile N`.  Lists come in the order of
 * their first tile, the longest first.  The BSP program and the tensor map
 * are not assembly: a comment gives their sizes.  A symbol the assembler
 * could not define again (a second of one name on a tile, a name with a
 * quote) is a comment.  Returns false with err set if writing to out
 * fails or memory runs out. */
bool disasm_exe(const ipu_exe *e, FILE *out, char *err, size_t n);

#endif
