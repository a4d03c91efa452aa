/*
 * asm.h — the ipusim tile assembler: assembly source in, an in-memory
 * executable (isa/elf/executable.h) out.
 *
 * The assembler is driven by the instruction table (isa.def): a mnemonic
 * names one or more rows, and the row whose operand kinds match what was
 * written is encoded with isa_encode().  Nothing about individual
 * instructions is written here.
 *
 * Source language (close to the GNU-as dialect of Graphcore's poplibs
 * codelets; see tests/asm/ for examples):
 *
 *   statements   one per line, or several separated by ';'.  Comments: '#'
 *                or '//' to the end of the line, '/' '*' ... '*' '/'.
 *   labels       `name:` (per tile: each tile has its own label namespace),
 *                numeric local labels `1:` referenced as `1f` (next) and
 *                `1b` (previous), quoted names `"any name":`.
 *   bundles      `{ main ; aux }` on one line, or `{` ... `}` over several
 *                lines.  One main-pipeline and one aux-pipeline instruction
 *                (either order in the source); encoded main word first with
 *                bit 31 set, then the aux word.  A bundle must sit at an
 *                8-byte aligned address: the assembler never pads silently.
 *   operands     $m0..$m15 ($mzero=$m15, $lr=$m10, $sp=$m11, $bp=$m8,
 *                $fp=$m9), $a0..$a15 ($azero=$a15), pairs $m0:1 / $a0:1
 *                ($azeros=$a14:15), quads $a0:3, post-increment `$m1+=`
 *                and `$m0:1+=`, CSRs by name (`$FP_CTL`), immediates and
 *                targets as expressions.  The load/store rows written
 *                "reg, $base, $delta, imm" also accept "reg, $base, imm"
 *                (delta $mzero), as poplibs writes them.
 *   expressions  64-bit integers: decimal, 0x, 0b, character constants,
 *                symbols, `.` (the address of the current statement; in a
 *                bundle, of the bundle), 1f/1b, and the C operators
 *                ( ) unary - + ~ !, * / %, + -, << >>, < <= > >=, == !=,
 *                &, ^, |, &&, ||.  Forward references are resolved in a
 *                second pass.
 *   directives   .text .data .bss .section NAME[, "awx"[, @nobits][, ADDR]]
 *                .tile LIST .org ADDR .align/.balign N .p2align N
 *                .word/.long/.int/.4byte (32 bits) .half/.short/.hword/.2byte
 *                .byte .quad/.8byte .float/.single (f32) .half_float/.f16
 *                (f16, round to nearest even) .ascii .asciz/.string
 *                .space/.skip N[, fill]
 *                .zero N .equ/.set NAME, EXPR  NAME = EXPR  .equiv
 *                .globl/.global .type NAME, @function|@object|@notype
 *                .size NAME, EXPR .symbol NAME, TYPE, SIZE[, global|local]
 *                .entry EXPR .include "file"
 *                .macro NAME args (arg=default, arg:req, arg:vararg) ...
 *                .endm (\arg, \@, \() in the body) .exitm .rept N ... .endr
 *                .if/.ifdef/.ifndef/.ifb/.ifnb/.ifc/.ifnc .elseif .else
 *                .endif .error "msg" .worker/.supervisor (check that the
 *                following instructions may run in that context)
 *                .file .ident .warning (accepted, ignored).
 *
 * Tiles.  `.tile N` selects the global tile for what follows (tile 0, or
 * asm_options.default_tile, before any).  `.tile 0-1471` or `.tile 0,
 * 4-7, 9` selects a list of tiles: what follows (sections and their
 * contents, labels, .globl/.type/.size, .entry, line records) is put on
 * every tile of the list, and the executable is exactly what the source
 * written once per tile of the list, in tile order, gives.  A list is
 * items separated by commas, each a tile or FIRST-LAST (FIRST <= LAST);
 * a '-' outside parentheses separates a range, so write (A - B) for a
 * difference (`.tile CHIP * 1472 + T` is one tile as before, `.tile
 * T - 1` is a range: `.tile (T - 1)` the tile before T); a tile may
 * be named once, and a list may name at most 1,048,576 tiles.  A section
 * opened under a list has one address and one content on all of its
 * tiles: it is reopened only under the same list (a section of one of its
 * tiles cannot be opened under another list, nor it under one tile); a
 * section without an address must be placed at the same address on each
 * tile (give an address when other sections differ between the tiles);
 * a statement naming a label must assemble to the same bytes on each
 * tile.  What is evaluated while reading (.if, .space, .org, .ifdef) sees
 * the first tile of the list; constants (.equ, .set) and macros are not
 * per tile.  `.equ`, `.set` and `.size` before any section open .text
 * (as content would), `.entry` only when its expression has a `.`.
 *
 * Placement.  Sections are per tile (or per list of tiles, above; content
 * before any section directive goes to .text).  A
 * section placed with `.section NAME, "flags", ADDR` or with `.org ADDR`
 * while still empty sits at that tile address.  The others are placed after
 * the first pass, in the order they were opened, at the first free address
 * aligned to max(8, the section's largest .align): code sections from
 * the start of tile memory (region 0, the only executable region: 0x4C000,
 * or asm_options.memory_base), initialised data from
 * 0x80000 (region 1, then region 0 if region 1 is full), NOBITS sections
 * (.bss) after that, from the first free address from 0x80000.  `.org ADDR`
 * in a section with content pads up to the tile address ADDR (it is an
 * absolute address, not an offset).  Sections may not overlap.  Flags
 * default by name: .text* "ax", .data* "aw", .bss* "aw" NOBITS, others
 * "a".  An empty section is kept only if it holds labels or was placed.
 *
 * Checks that need addresses: bundles 8-byte and instructions 4-byte
 * aligned, immediates in range, branch targets 4-byte aligned in region 0,
 * and rpt bodies (exec.h): 8-byte aligned, inside the section, free of
 * control instructions.
 *
 * Entry.  The supervisor entry of a tile is `.entry EXPR` if given, else
 * the tile's symbol `__supervisor` (which must be in a code section), else
 * the start of its .text, else the start of its first code section.
 *
 * Output.  Sections keep their names (".text"), their tile and address;
 * labels become symbols (code or data by their section, overridden by
 * .type; global after .globl); numeric local labels are not exported; one
 * line record per instruction word.  Constants (.equ) are not exported.
 * `.symbol NAME, @object, 32, global` adds a symbol at `.` that no
 * expression names, so its name may be one a label or another .symbol of
 * the tile has: an executable may hold several symbols of one name on a
 * tile (a tensor in pieces), and this writes the second and later ones.
 *
 * Errors.  Every message is "file:line:col: error: what was expected, what
 * was found".  Statements expanded from a macro are located at the macro
 * body line and the message ends with "(in macro 'NAME' expanded at
 * file:line:col)".  The assembler collects up to 20 errors; the first pass
 * stops before the second when it found any, so no cascade follows.
 *
 * Limits (hostile input, e.g. from a fuzzer, never crashes the assembler):
 * include depth 32 and include cycles are errors; macro expansion depth 64;
 * 16,000,000 statements after expansion (asm_options.max_statements; a
 * whole 4-chip program is about 1.2 million); 32,000,000 statements and
 * labels as put on tiles, one under a `.tile` list counting once per tile
 * (the disassembly of a one-chip BERT layer is about 8.3 million); 512 MiB
 * of source text (a file, and the files read together); 64 MiB of
 * macro-expanded text; expressions nested 200 deep; 256 MiB of section
 * bytes in all (a section under a list counting once per tile).
 */
#ifndef IPUSIM_ISA_ASM_H
#define IPUSIM_ISA_ASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/elf/executable.h"

typedef struct asm_options {
    const char *const *include_dirs;  /* searched for .include after the including file's directory */
    size_t n_include_dirs;
    uint32_t default_tile;            /* the tile before any .tile directive (0) */
    bool no_include;                  /* refuse .include (for fuzzing) */
    uint32_t max_statements;          /* statements after expansion; 0: 16,000,000 */
    uint32_t memory_base;             /* the machine's first byte of tile memory, where sections
                                         without an address start (0: ISA_MEMORY_BASE, GC200/Bow;
                                         memmodel/memory_map.h) */
} asm_options;

/* Assemble a file, or a string named `name` in messages (and whose
 * directory, if the name has one, is searched first by .include).  opt may
 * be NULL for the defaults.  On failure returns NULL and writes the error
 * messages to err, one per line, the first error first (truncated to
 * err_size).  The result is freed with exe_free(). */
ipu_exe *asm_assemble_file(const char *path, const asm_options *opt, char *err, size_t err_size);
ipu_exe *asm_assemble_string(const char *text, const char *name, const asm_options *opt,
                             char *err, size_t err_size);

#endif
