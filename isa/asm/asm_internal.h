/*
 * asm_internal.h — what the pieces of the assembler share: source
 * positions, the arena, the name table, expressions, and the assembler's
 * state.  Not part of the public contract (that is asm.h).
 *
 *   asm_expr.c       expression parsing and evaluation, numbers, strings;
 *                    the arena, the name table, "did you mean"
 *   asm_source.c     source files, statements, .include, macros, .rept
 *   asm.c            the first pass: statements, labels, conditionals,
 *                    bundles opened and closed, symbol definitions; error
 *                    messages; the entry points (asm.h)
 *   asm_insn.c       instructions: registers, operands, row selection,
 *                    bundles, encoding in pass 2
 *   asm_directive.c  sections, the location counter, every directive
 *   asm_tiles.c      tile lists (`.tile 0-3, 7`): parsing, the interned
 *                    sets of tiles, their text for messages
 *   asm_output.c     section placement, pass 2, rpt checks, symbol
 *                    attributes, entries, the executable
 */
#ifndef IPUSIM_ISA_ASM_INTERNAL_H
#define IPUSIM_ISA_ASM_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asm.h"
#include "isa/isa.h"

/* Limits against hostile input (asm.h). */
#define ASM_MAX_ERRORS          20
#define ASM_MAX_FRAMES          160      /* all nested sources together */
#define ASM_MAX_INCLUDE_DEPTH   32
#define ASM_MAX_MACRO_DEPTH     64
#define ASM_MAX_STATEMENTS      16000000u
#define ASM_MAX_EXPANSION_BYTES (64u << 20)
/* Source text, read whole before it is parsed: a file, and all files
 * together with what they include.  512 MiB holds what `ipusim disasm`
 * writes for a one-chip program with about 190 MB of distinct section
 * contents (about 2.7 bytes of text a byte of data; code shared by many
 * tiles is written once); the 256 MiB of section contents and the
 * statement limit bound the program beyond that, so the text is the
 * memory this limit stands for. */
#define ASM_MAX_FILE_BYTES      (512u << 20)
#define ASM_MAX_LINE_BYTES      (1u << 20)   /* one statement after substitution */
#define ASM_MAX_TOTAL_BYTES     (256u << 20) /* section bytes over all tiles */
#define ASM_MAX_EXPR_NESTING    200
#define ASM_MAX_EVAL_STEPS      200000   /* node visits for one evaluation */
#define ASM_MAX_EVAL_DEPTH      2000
#define ASM_MAX_COND_DEPTH      256
#define ASM_MAX_TILE            0xFFFEFFFFu
#define ASM_MAX_LIST_TILES      (1u << 20)   /* tiles one `.tile` list may name */
/* Statements and labels as put on tiles: one under a `.tile` list counts
 * once per tile of it (each copy costs a line record or a symbol of the
 * executable, not a parsed statement).  The disassembly of a one-chip
 * BERT layer is about 8.3 million. */
#define ASM_MAX_TILE_COPIES     32000000u

/* A source position.  file indexes asm_ctx.files; col is 1-based. */
typedef struct asm_loc {
    uint32_t file, line, col;
    const char *note;          /* " (in macro 'm' expanded at f:l:c)" or NULL */
} asm_loc;

/* ---- memory ------------------------------------------------------------ */

typedef struct asm_arena {
    struct asm_chunk *head;
    size_t used, cap;
} asm_arena;

void *asm_alloc(asm_arena *ar, size_t n);            /* zeroed */
char *asm_strndup(asm_arena *ar, const char *s, size_t n);
void asm_arena_free(asm_arena *ar);
void *asm_xrealloc(void *p, size_t n);               /* panics when out of memory */

/* Grow a vector (ptr, count, capacity) to hold one more element. */
#define ASM_GROW(ptr, n, cap) do { \
        if ((n) == (cap)) { \
            (cap) = (cap) ? (cap) * 2 : 16; \
            (ptr) = asm_xrealloc((ptr), (cap) * sizeof *(ptr)); \
        } \
    } while (0)

/* ---- the name table: (name, namespace) -> index ------------------------ */

/* Namespaces: a tile number for labels, or one of these. */
#define ASM_NS_CONST   0xFFFFFFFFu   /* .equ / .set / = */
#define ASM_NS_MACRO   0xFFFFFFFEu
#define ASM_NS_LOCAL   0xFFFFFFFDu   /* numeric local label counters */

typedef struct asm_map {
    struct asm_map_slot *slots;
    size_t n, cap;
} asm_map;

bool asm_map_get(const asm_map *m, const char *name, uint32_t ns, uint32_t *value);
void asm_map_put(asm_map *m, const char *name, uint32_t ns, uint32_t value); /* name must outlive the map */
void asm_map_free(asm_map *m);

/* ---- expressions -------------------------------------------------------- */

enum asm_expr_kind { EX_NUM, EX_SYM, EX_DOT, EX_UNARY, EX_BINARY };

enum asm_expr_op {
    OP_NEG, OP_NOT, OP_LNOT, OP_PLUS,
    OP_MUL, OP_DIV, OP_MOD, OP_ADD, OP_SUB, OP_SHL, OP_SHR,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_XOR, OP_OR, OP_LAND, OP_LOR,
};

typedef struct asm_expr {
    uint8_t kind;              /* enum asm_expr_kind */
    uint8_t op;                /* enum asm_expr_op */
    uint32_t col;
    int64_t num;               /* EX_NUM value; EX_DOT offset in its section */
    int32_t section;           /* EX_DOT */
    const char *name;          /* EX_SYM: name looked up (internal for 1f/1b) */
    const char *shown;         /* EX_SYM: as written */
    struct asm_expr *a, *b;
} asm_expr;

/* A value: absolute (section < 0) or an offset in a section whose address
 * is not known yet (before layout). */
typedef struct asm_value {
    int64_t v;
    int32_t section;
} asm_value;

enum asm_eval_mode { EVAL_NOW, EVAL_FINAL };
enum asm_eval_status { EV_OK, EV_UNKNOWN, EV_ERROR };

/* ---- sources ------------------------------------------------------------ */

/* One statement of source text: a line, or the part of a line between ';'. */
typedef struct asm_stmt_text {
    char *text;                /* NUL-terminated, comments blanked */
    asm_loc loc;               /* of text[0] */
} asm_stmt_text;

typedef struct asm_macro {
    const char *name;
    char **params; char **defaults; bool *required; size_t n_params;
    bool vararg;               /* the last parameter takes the rest */
    asm_stmt_text *body; size_t n_body, cap_body;
    asm_loc loc;
} asm_macro;

typedef struct asm_frame asm_frame;

/* ---- tile lists ----------------------------------------------------------- */

/* The tiles a `.tile` list names, ascending, each once.  Sets are interned
 * (asm_ctx.sets), so two sets are the same set when their indexes are. */
typedef struct asm_tileset {
    const uint32_t *tiles;
    uint32_t n;
    uint64_t hash;
} asm_tileset;

/* ---- assembly state ------------------------------------------------------ */

/* A section of one tile, or of every tile of a `.tile` list: one address
 * and one content, on each of those tiles. */
typedef struct asm_section {
    char *name;
    uint32_t tile;             /* the first tile of set */
    uint32_t set;              /* index into asm_ctx.sets */
    uint32_t flags;            /* enum exe_section_flags */
    bool placed;               /* base is fixed */
    bool placed_explicitly;
    bool flags_explicit;
    bool too_big;              /* "larger than tile memory" already reported */
    bool layout_reported;      /* a placement error already reported */
    uint32_t base;
    uint32_t align;            /* largest .align seen, at least 1 */
    uint32_t size;             /* the location counter */
    uint8_t *bytes;            /* pass 2 */
    uint32_t n_labels;
    asm_loc loc, place_loc;
    size_t *stmts; size_t n_stmts, cap_stmts;   /* instruction statements, for rpt checks */
} asm_section;

enum asm_opnd_class {
    OPC_M, OPC_M_INC, OPC_MP, OPC_MP_INC, OPC_A, OPC_AP, OPC_AQ, OPC_CSR, OPC_IMM
};

typedef struct asm_operand {
    uint8_t cls;               /* enum asm_opnd_class */
    int32_t reg;               /* register number (first of a pair/quad) or CSR */
    asm_expr *expr;            /* OPC_IMM */
    uint32_t col;
    const char *text;          /* as written, for messages */
} asm_operand;

typedef struct asm_insn {
    uint16_t op;               /* enum isa_op */
    uint8_t n;
    asm_operand opnd[ISA_MAX_OPERANDS];
    asm_loc loc;               /* of the mnemonic */
} asm_insn;

enum asm_stmt_kind { ST_INSN, ST_BUNDLE, ST_DATA, ST_RAW, ST_FILL, ST_CODEPAD };

typedef struct asm_stmt {
    uint8_t kind;
    uint8_t width;             /* ST_DATA: bytes per item */
    uint8_t fill;              /* ST_FILL */
    int32_t section;
    uint32_t offset, size;
    uint32_t tile;             /* the first tile of the section's set */
    uint32_t block;            /* asm_ctx.block when it was read */
    asm_loc loc;
    asm_insn *insn[2];         /* ST_INSN: [0]; ST_BUNDLE: main, aux */
    asm_expr **items;          /* ST_DATA */
    uint32_t n_items;
    const uint8_t *raw;        /* ST_RAW */
} asm_stmt;

enum asm_sym_kind { SYM_LABEL, SYM_CONST };
enum asm_sym_type { SYMT_DEFAULT, SYMT_FUNC, SYMT_OBJECT, SYMT_NOTYPE };

typedef struct asm_symbol {
    const char *name;
    uint32_t tile;             /* labels */
    uint8_t kind;              /* enum asm_sym_kind */
    uint8_t type;              /* enum asm_sym_type */
    bool internal;             /* numeric local label: not exported */
    bool unnamed;              /* .symbol: exported, not in the name table; expr is its size */
    bool global;
    bool has_size;
    bool known;                /* SYM_CONST: value is known */
    bool evaluating;           /* SYM_CONST: cycle detection */
    int32_t section;           /* SYM_LABEL */
    uint32_t offset;           /* SYM_LABEL */
    uint32_t block;            /* SYM_LABEL: asm_ctx.block when defined */
    uint32_t size;
    int64_t value;             /* SYM_CONST */
    asm_expr *expr;            /* SYM_CONST defined by an expression not known yet */
    uint32_t expr_tile;
    asm_loc loc;
} asm_symbol;

/* A directive applied to a symbol once everything is defined. */
typedef struct asm_symattr {
    uint8_t what;              /* 0 .globl, 1 .type, 2 .size */
    uint8_t type;
    const char *name;
    uint32_t set;              /* the tiles it applies to */
    asm_expr *expr;
    asm_loc loc;
} asm_symattr;

typedef struct asm_entry {
    uint32_t set;              /* the tiles it applies to */
    asm_expr *expr;
    asm_loc loc;
} asm_entry;

typedef struct asm_cond {
    bool parent_active;        /* the enclosing block is assembled */
    bool active;               /* this branch is assembled */
    bool taken;                /* some branch of this .if was taken */
    bool seen_else;
    int depth;                 /* sources open when it began (.exitm ends it) */
    asm_loc loc;
} asm_cond;

typedef struct asm_ctx {
    asm_arena arena;
    asm_options opt;

    /* files: names as shown in messages */
    char **files; size_t n_files, cap_files;
    char **buffers; size_t n_buffers, cap_buffers;   /* freed at the end */

    /* errors */
    char **errors; size_t n_errors, cap_errors;
    bool too_many_errors;

    /* sources */
    asm_frame *frames[ASM_MAX_FRAMES];
    int n_frames;
    int include_depth, macro_depth;
    uint64_t n_statements;
    uint64_t expansion_bytes;
    uint64_t source_bytes;     /* files and strings read, together */
    uint64_t tile_copies;      /* statements and labels, once per tile they are on */
    uint64_t macro_counter;    /* \@ */
    bool stop;                 /* a fatal limit was hit: stop reading */

    /* collecting a .macro or .rept body */
    int collecting;            /* 0 no, 1 macro, 2 rept */
    int collect_depth;         /* frame depth where collection began */
    int collect_nest;
    asm_macro *collect_macro;
    asm_stmt_text *collect_body; size_t n_collect, cap_collect;
    uint64_t collect_count;
    asm_loc collect_loc;

    asm_macro **macros; size_t n_macros, cap_macros;

    /* conditionals */
    asm_cond conds[ASM_MAX_COND_DEPTH];
    int n_conds;

    /* names */
    asm_map names;
    asm_symbol *syms; size_t n_syms, cap_syms;
    asm_symattr *attrs; size_t n_attrs, cap_attrs;
    int64_t *local_counts; size_t n_local_counts, cap_local_counts;

    /* sections and statements */
    asm_section *sections; size_t n_sections, cap_sections;
    asm_map section_names;     /* (name, tile) -> index */
    asm_stmt *stmts; size_t n_stmts, cap_stmts;
    asm_entry *entries; size_t n_entries, cap_entries;
    asm_map entry_tiles;       /* (".entry", tile) -> index into entries */
    uint32_t cur_tile;         /* the first tile of cur_set */
    uint32_t cur_set;          /* the tiles what follows is for */
    uint32_t block;            /* `.tile` directives so far */
    int32_t cur_section;       /* -1: none yet on this tile */
    uint64_t total_bytes;
    int context_mode;          /* 0 any, 1 .worker, 2 .supervisor */

    /* an open bundle */
    bool in_bundle;
    asm_loc bundle_loc;
    asm_insn *bundle[2];
    int n_bundle;
    bool bundle_failed;        /* a half did not parse: no further complaint */

    /* evaluation */
    uint32_t eval_steps, eval_depth;
    char unknown_why[200];     /* why EV_UNKNOWN */

    /* tile lists */
    asm_tileset *sets; size_t n_sets, cap_sets;
    uint32_t *set_slots; size_t cap_set_slots;   /* hash -> set index + 1 */
    uint64_t set_tiles;        /* tiles over all sets */
    uint32_t subset_sub, subset_super;           /* the last subset question ... */
    bool subset_known, subset_answer;            /* ... and its answer */

    uint32_t nop_word;
} asm_ctx;

/* ---- errors (asm.c) ----------------------------------------------------- */

void asm_error(asm_ctx *a, asm_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline asm_loc asm_loc_col(asm_loc l, uint32_t col) { l.col = col; return l; }
/* The location of p inside a statement's text. */
static inline asm_loc asm_at(asm_loc base, const char *text, const char *p)
{
    return asm_loc_col(base, base.col + (uint32_t)(p - text));
}
/* "'foo'" or "end of line", for "found ..." in messages. */
void asm_found_text(const char *p, char *buf, size_t n);
/* Report anything but the end of the statement at p ("after" names what
 * came last); false if there is something. */
bool asm_expect_end(asm_ctx *a, const char *text, const char *p, asm_loc loc, const char *after);

/* "did you mean": the closest of n candidates within a small edit
 * distance, or NULL. */
const char *asm_suggest(const char *word, const char *const *cands, size_t n);

/* ---- text helpers (asm_expr.c) ----------------------------------------- */

static inline bool asm_is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}
static inline bool asm_is_ident_char(int c)
{
    return asm_is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}
static inline bool asm_is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static inline const char *asm_skip_space(const char *p) { while (asm_is_space((unsigned char)*p)) p++; return p; }

/* Parse an expression at *p (text starts at column base_col + (p - text)).
 * Returns NULL after reporting an error. */
asm_expr *asm_parse_expr(asm_ctx *a, const char *text, const char **p, asm_loc loc);
/* Evaluate; on EV_UNKNOWN a->unknown_why says why. */
enum asm_eval_status asm_eval(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc,
                              enum asm_eval_mode mode, asm_value *out);
/* Evaluate an expression that must be an absolute constant now (.space,
 * .org, .rept, .if, ...): reports "what needs a constant" when it is not. */
bool asm_eval_const(asm_ctx *a, const asm_expr *e, asm_loc loc, const char *what, int64_t *out);
/* Evaluate with every address known (pass 2); false after an error. */
bool asm_eval_final(asm_ctx *a, const asm_expr *e, uint32_t tile, asm_loc loc, int64_t *out);
/* Parse and evaluate in one go. */
bool asm_parse_const(asm_ctx *a, const char *text, const char **p, asm_loc loc, const char *what, int64_t *out);

/* Store v little-endian in `bytes` bytes. */
static inline void asm_put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A "..." string with C escapes at *p: returns the bytes (arena) and length. */
bool asm_parse_string(asm_ctx *a, const char *text, const char **p, asm_loc loc,
                      char **out, size_t *len);
/* A floating-point literal (for .float / .f16). */
bool asm_parse_float(asm_ctx *a, const char *text, const char **p, asm_loc loc, double *out);

/* Symbols. */
asm_symbol *asm_find_label(asm_ctx *a, const char *name, uint32_t tile);
asm_symbol *asm_find_const(asm_ctx *a, const char *name);
/* The internal name of a numeric local label: the k-th definition of
 * digits. */
const char *asm_local_name(asm_ctx *a, const char *digits, size_t n, int64_t k);
int64_t asm_local_count(asm_ctx *a, const char *digits, size_t n, bool bump);

/* ---- sources (asm_source.c) --------------------------------------------- */

uint32_t asm_add_file(asm_ctx *a, const char *shown);
bool asm_push_file(asm_ctx *a, const char *path, const char *shown, asm_loc from);
void asm_push_string(asm_ctx *a, const char *text, const char *name);
/* .include "name" from the file of loc. */
void asm_include(asm_ctx *a, const char *name, asm_loc loc);
/* The next statement; false at the end of all sources.  *depth is the
 * number of frames open when it was read. */
bool asm_next_stmt(asm_ctx *a, asm_stmt_text *out, int *depth);
void asm_push_macro(asm_ctx *a, asm_macro *m, const char *args, asm_loc loc);
void asm_push_rept(asm_ctx *a, asm_stmt_text *body, size_t n, uint64_t count, asm_loc loc);
void asm_exit_macro(asm_ctx *a, asm_loc loc);
void asm_free_sources(asm_ctx *a);
asm_macro *asm_find_macro(asm_ctx *a, const char *name);
/* Parse ".macro NAME params" (rest of the line after ".macro"). */
asm_macro *asm_define_macro(asm_ctx *a, const char *text, const char *p, asm_loc loc);

/* ---- symbols and statements (asm.c) ------------------------------------- */

/* .symbol: a symbol of the executable at the current position, on every
 * tile of the current set, that expressions do not name. */
void asm_define_symbol(asm_ctx *a, const char *name, uint8_t type, asm_expr *size, bool global, asm_loc loc);

enum { DEF_SET, DEF_EQUIV };
/* NAME = EXPR, .set, .equ or .equiv (how: DEF_SET or DEF_EQUIV). */
void asm_define_const(asm_ctx *a, const char *name, asm_expr *e, int how, asm_loc loc);

/* ---- instructions (asm_insn.c) ------------------------------------------ */

/* Parse "mnemonic operands" at p and select the row.  NULL after an error. */
asm_insn *asm_parse_insn(asm_ctx *a, const char *text, const char *p, asm_loc loc);
void asm_add_to_bundle(asm_ctx *a, asm_insn *in);
void asm_close_bundle(asm_ctx *a);
void asm_single_insn(asm_ctx *a, asm_insn *in);
/* Encode for tile (pass 2): immediates in range, branch targets in region 0. */
bool asm_encode_insn(asm_ctx *a, const asm_insn *in, uint32_t tile, uint32_t *word);

/* ---- sections and directives (asm_directive.c) --------------------------- */

/* The current section; content before any section directive goes to .text. */
asm_section *asm_cur_sec(asm_ctx *a, asm_loc loc);
/* asm_parse_expr, where `.` before any section is the current position in
 * .text (opened then, and only then: `.entry`). */
asm_expr *asm_parse_expr_here(asm_ctx *a, const char *text, const char **p, asm_loc loc);
/* Add a statement of `size` bytes at the current position; NULL when the
 * section would outgrow tile memory. */
asm_stmt *asm_emit(asm_ctx *a, int kind, uint64_t size, asm_loc loc);
/* false, after an error, when the current section is NOBITS. */
bool asm_no_bytes_here(asm_ctx *a, asm_loc loc, const char *what);
/* Run directive dir (".word"; its arguments at args, columns counted from
 * base), or report it unknown; true if it ran. */
bool asm_directive(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc loc, asm_loc base);

/* ---- tile lists (asm_tiles.c) --------------------------------------------- */

/* The set of tiles[0..n) (ascending, each once), interned; tiles is copied. */
uint32_t asm_tileset_intern(asm_ctx *a, const uint32_t *tiles, uint32_t n);
static inline const asm_tileset *asm_set(const asm_ctx *a, uint32_t set) { return &a->sets[set]; }
/* Every tile of sub is in super. */
bool asm_tileset_subset(asm_ctx *a, uint32_t sub, uint32_t super);
/* tile is in the set. */
bool asm_tileset_has(const asm_ctx *a, uint32_t set, uint32_t tile);
/* "0-3, 7" (cut short with "..." when longer than n allows). */
void asm_tileset_text(const asm_ctx *a, uint32_t set, char *buf, size_t n);
/* `.tile LIST` (its arguments at args): the set, or false after an error. */
bool asm_parse_tile_list(asm_ctx *a, const char *text, const char *args, asm_loc base, uint32_t *set);
/* Count n more statements or labels as put on tiles (once per tile of a
 * list): false, after an error, beyond ASM_MAX_TILE_COPIES. */
bool asm_count_copies(asm_ctx *a, uint64_t n, asm_loc loc);

/* ---- after the first pass (asm_output.c) --------------------------------- */

/* Place the sections, run pass 2 and its checks, build the executable;
 * NULL after errors. */
ipu_exe *asm_output(asm_ctx *a);

#endif
