/*
 * executable.h — the ipusim executable: the contract between the compiler
 * (or the assembler) and the simulator.
 *
 * On disk it is an ELF64 little-endian file of type ET_EXEC (ET_REL for an
 * assembled object that has not been placed) with e_machine EXE_EM_IPUSIM,
 * a machine number of ipusim's own.  Layout:
 *
 *   - one ELF section per piece of tile code or data, SHF_ALLOC, with
 *     sh_addr the tile-local address and SHF_EXECINSTR for code; .bss-like
 *     pieces are SHT_NOBITS.  Sections with the same bytes (the kernel
 *     library on every tile, a replica's copy of another's records and
 *     weights) point at one place in the file: each distinct content is
 *     stored once.  Its name is "<name>@<tile>", e.g.
 *     ".text@0" or ".data@1471" (<tile> is the global tile number:
 *     chip * tiles_per_chip + tile).
 *   - ".ipusim.tiles": for every tile that has code, the supervisor entry
 *     address (records of struct exe_tile_record).
 *   - ".symtab"/".strtab": symbols, each tied to its section and so to a
 *     tile (STT_FUNC for code labels, STT_OBJECT for data); a symbol on
 *     every tile with code (EXE_EVERY_TILE) is SHN_ABS, written once.
 *   - ".ipusim.lines": address -> source file and line, for messages and
 *     the debugger.
 *   - ".ipusim.bsp" and ".ipusim.tensors": the BSP control program and the
 *     tensor map, opaque byte blobs to this module, written and read by the
 *     layers that own them.
 *   - ".ipusim.machine": the machine the program was compiled for, an opaque
 *     byte blob here (sim/program/machine.h: "preset=NAME" and a
 *     "param=value" line per overridden parameter).  Optional: assembled
 *     programs and executables written before it existed have none.
 *   - ".ipusim.model": what the compiler knew of the model, an opaque byte
 *     blob here (sim/program/model_record.h: its name and the multiply-adds
 *     its matmuls and convolutions ask for).  Optional, as the machine is.
 *   - ".ipusim.ops": which op of the model each superstep's compute and
 *     exchange belong to, an opaque byte blob here (sim/program/op_map.h).
 *     Optional, as the machine is.
 *   - ".ipusim.replicas": a replicated program's replicas (exe_replicas):
 *     only replica 0's tiles have sections, tile records and symbols in
 *     the file; the others are made from them when it is read.
 *
 * Writing goes to a temporary file renamed into place, so an interrupted
 * write never leaves a half-written executable.  Reading validates
 * everything it relies on and reports the first problem found.
 */
#ifndef IPUSIM_EXECUTABLE_H
#define IPUSIM_EXECUTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXE_EM_IPUSIM 0x4950u     /* e_machine: "IP" */
#define EXE_FORMAT_VERSION 1u     /* e_flags: bumped on incompatible change */

enum exe_section_flags {
    EXE_SEC_EXEC  = 1u << 0,      /* code */
    EXE_SEC_WRITE = 1u << 1,      /* writable data */
    EXE_SEC_NOBITS = 1u << 2,     /* zero-filled, no bytes in the file */
};

typedef struct exe_section {
    char *name;                   /* without the "@tile" suffix: ".text" */
    uint32_t tile;                /* global tile number */
    uint32_t addr;                /* tile-local address of the first byte */
    uint32_t size;                /* bytes */
    uint32_t flags;               /* enum exe_section_flags */
    uint8_t *bytes;               /* size bytes; NULL for NOBITS.  Shared by every
                                     section with the same bytes (exe_store.h) and
                                     never written to */
} exe_section;

enum exe_symbol_kind { EXE_SYM_CODE, EXE_SYM_DATA, EXE_SYM_OTHER };

/* The tile of a symbol that every tile with code has at the same address
 * (the kernel library a compiled program puts on each tile): held once. */
#define EXE_EVERY_TILE UINT32_MAX

typedef struct exe_symbol {
    char *name;
    uint32_t tile;                /* global tile number, or EXE_EVERY_TILE */
    uint32_t addr;
    uint32_t size;
    uint8_t kind;                 /* enum exe_symbol_kind */
    bool global;
} exe_symbol;

typedef struct exe_line {
    uint32_t tile;
    uint32_t addr;
    uint32_t line;
    uint32_t file;                /* index into exe.files */
} exe_line;

typedef struct exe_tile_record {
    uint32_t tile;
    uint32_t supervisor_entry;    /* address the supervisor starts at */
} exe_tile_record;

typedef struct exe_blob {
    uint8_t *bytes;
    size_t size;
} exe_blob;

/* A data-parallel program's replicas.  Replica 0's tiles are the tiles
 * below tile_stride; replica r (1 <= r < count) runs the same images on
 * tiles + r x tile_stride, except for the words the relocations name: the
 * endpoints of its control programs, which name its own tiles and host
 * streams, its neighbours in a ring of replicas, and the slices of a
 * collective's blocks it works on in each step.  A file holds replica 0 and this description; reading it makes
 * the other replicas (exe_expand_replicas), each sharing replica 0's bytes
 * but where a relocation changes them. */
enum exe_reloc_kind {
    EXE_RELOC_TILE,               /* a tile number: + r x tile_stride */
    EXE_RELOC_TILE_HIGH,          /* one in the word's high half: + (r x tile_stride) << 16 */
    EXE_RELOC_HOST_IN,            /* host input stream: index + r x input_streams */
    EXE_RELOC_HOST_OUT,           /* host output stream: index + r x output_streams */
    EXE_RELOC_RING,               /* a tile of replica (r + shift) mod count, the word
                                     replica 0's (a ring of replicas: shift 1 the next,
                                     count - 1 the previous) */
    EXE_RELOC_SLICE,              /* an address in a block of count slices of slice_bytes:
                                     slice (r + shift) mod count, the word replica 0's
                                     (slice shift); a collective's part of the block */
};
#define EXE_RELOC_KINDS 6

typedef struct exe_reloc {
    uint32_t tile;                /* replica 0's tile */
    uint32_t addr;                /* of the 4-byte word */
    uint8_t kind;                 /* enum exe_reloc_kind */
    uint16_t shift;               /* RING and SLICE: replicas on (below count) */
    uint32_t slice_bytes;         /* SLICE: the distance between slices */
} exe_reloc;

#define EXE_REPLICAS_MAX 256u     /* the largest pod, a POD256 */

typedef struct exe_replicas {
    uint32_t count;               /* 0 or 1: the program is not replicated */
    uint32_t tile_stride;
    uint32_t input_streams, output_streams;   /* host streams of one replica */
    exe_reloc *relocs;
    size_t n_relocs;
    bool expanded;                /* replicas 1 .. count - 1 are in the sections */
} exe_replicas;

typedef struct ipu_exe {
    exe_section *sections; size_t n_sections;
    exe_symbol *symbols;   size_t n_symbols;
    exe_line *lines;       size_t n_lines;
    char **files;          size_t n_files;
    exe_tile_record *tiles; size_t n_tiles;   /* by tile */
    exe_blob bsp;                 /* .ipusim.bsp, may be empty */
    exe_blob tensors;             /* .ipusim.tensors, may be empty */
    exe_blob machine;             /* .ipusim.machine, may be empty */
    exe_blob model;               /* .ipusim.model, may be empty */
    exe_blob ops;                 /* .ipusim.ops, may be empty */
    bool relocatable;             /* ET_REL: an object not yet placed */
    struct exe_store *store;      /* the sections' distinct bytes, each once */
    exe_replicas replicas;
} ipu_exe;

ipu_exe *exe_new(void);
void exe_free(ipu_exe *e);

/* Builders copy what they are given.  They return false only when the host
 * runs out of memory or a section overlaps another one on the same tile
 * (err explains). */
bool exe_add_section(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr,
                     const void *bytes, uint32_t size, uint32_t flags,
                     char *err, size_t err_size);
bool exe_add_symbol(ipu_exe *e, uint32_t tile, const char *name, uint32_t addr,
                    uint32_t size, enum exe_symbol_kind kind, bool global);
/* Returns the file index for a source file name (added once). */
uint32_t exe_add_file(ipu_exe *e, const char *path);
bool exe_add_line(ipu_exe *e, uint32_t tile, uint32_t addr, uint32_t file, uint32_t line);
bool exe_set_entry(ipu_exe *e, uint32_t tile, uint32_t supervisor_entry);
bool exe_set_blob(exe_blob *b, const void *bytes, size_t size);

/* Replicas: a word of replica 0's sections that each replica changes
 * (false: out of memory), and the replicas made from replica 0 (sections,
 * tile records, symbols and lines of tiles below tile_stride) once the
 * description is complete; false with err when a relocation is not in a
 * section of replica 0 or the tiles overflow. */
bool exe_add_reloc(ipu_exe *e, uint32_t tile, uint32_t addr, enum exe_reloc_kind kind);
/* A RING or SLICE relocation (the word as replica 0 has it: its tile is
 * replica shift's, its address slice shift's). */
bool exe_add_reloc_rotated(ipu_exe *e, uint32_t tile, uint32_t addr, enum exe_reloc_kind kind, uint32_t shift,
                           uint32_t slice_bytes);
bool exe_expand_replicas(ipu_exe *e, char *err, size_t err_size);

/* The bytes of the sections' distinct contents and of the symbols'
 * distinct names (what the file holds of them), and the bytes of all the
 * sections' contents together. */
uint64_t exe_distinct_bytes(const ipu_exe *e);
uint64_t exe_section_bytes(const ipu_exe *e);

/* Write to path (temporary file + rename).  On failure returns false and
 * err names the file and the reason; the old file, if any, is untouched. */
bool exe_write(const ipu_exe *e, const char *path, char *err, size_t err_size);

/* Read and validate.  On failure returns NULL and err names the file and
 * what is wrong with it ("prog.elf: not an ipusim executable (e_machine
 * 62, expected 0x4950)", "prog.elf: section .text@3 extends past the end of
 * the file", ...). */
ipu_exe *exe_read(const char *path, char *err, size_t err_size);
/* The same from a memory image (used by the fuzzers and tests). */
ipu_exe *exe_read_memory(const void *image, size_t size, const char *name,
                         char *err, size_t err_size);

/* What an executable asks of the machine, read from its headers, section
 * names and small record sections without reading its tile images. */
typedef struct exe_summary {
    bool any_tile;                /* some section or tile record names a tile */
    uint32_t last_tile;           /* the highest global tile number named */
    exe_blob machine;             /* .ipusim.machine, may be empty */
} exe_summary;

/* Fills s (exe_summary_free releases it); false with err naming the file
 * and the problem, as exe_read would for its headers.  A pipe is left for
 * exe_read to take (it can be read once): true with an empty summary; its
 * summary comes from exe_summary_of once it has been read. */
bool exe_read_summary(const char *path, exe_summary *s, char *err, size_t err_size);
/* The same summary of an executable already read (false: out of memory). */
bool exe_summary_of(const ipu_exe *e, exe_summary *s);
void exe_summary_free(exe_summary *s);

/* Lookups. */
/* The first symbol of that name (on one tile, or on every tile). */
const exe_symbol *exe_find_symbol(const ipu_exe *e, const char *name);
/* Whether s is on tile: its own, or every tile with code when s's tile
 * is EXE_EVERY_TILE. */
bool exe_symbol_on_tile(const ipu_exe *e, const exe_symbol *s, uint32_t tile);
/* The symbol covering (tile, addr), preferring code labels; NULL if none. */
const exe_symbol *exe_symbol_at(const ipu_exe *e, uint32_t tile, uint32_t addr);
/* Source position of (tile, addr): the line record at or before addr in the
 * same section; false if unknown. */
bool exe_line_at(const ipu_exe *e, uint32_t tile, uint32_t addr,
                 const char **file, uint32_t *line);
const exe_tile_record *exe_tile(const ipu_exe *e, uint32_t tile);

#endif
