/*
 * disasm.c — instructions, bundles and whole executables back to assembly
 * text (disasm.h says what the text promises).
 */
#include "disasm.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
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

/* ---- whole executables ------------------------------------------------------ */

/* A name the assembler reads back as the same symbol without quotes. */
static bool plain_name(const char *s)
{
    if (!s[0] || (s[0] == '.' && !s[1]))
        return false;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_' || s[0] == '.'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.' || *p == '$'))
            return false;
    return true;
}

/* A name that can be written at all: plain, or in double quotes. */
static bool quotable_name(const char *s)
{
    if (!s[0])
        return false;
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\r')
            return false;
    return true;
}

static void print_name(FILE *out, const char *s)
{
    if (plain_name(s))
        fputs(s, out);
    else
        fprintf(out, "\"%s\"", s);
}

typedef struct tile_syms {
    const ipu_exe *e;
    uint32_t tile;
    const exe_symbol **by_addr;   /* symbols of the tile, sorted by address, then order */
    size_t n;
    bool *dup;                    /* by_addr[i] repeats the name of an earlier symbol */
    const exe_section **owner;    /* the section by_addr[i] is printed in, or NULL */
} tile_syms;

static int cmp_sym(const void *x, const void *y)
{
    const exe_symbol *a = *(const exe_symbol *const *)x, *b = *(const exe_symbol *const *)y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a < b ? -1 : a > b;   /* stable: table order */
}

/* First symbol at addr in ts (index), or ts->n. */
static size_t first_at(const tile_syms *ts, uint32_t addr)
{
    size_t lo = 0, hi = ts->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ts->by_addr[mid]->addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const char *symbolize(void *ctx, uint32_t addr)
{
    const tile_syms *ts = ctx;
    for (size_t i = first_at(ts, addr); i < ts->n && ts->by_addr[i]->addr == addr; i++)
        if (plain_name(ts->by_addr[i]->name))
            return ts->by_addr[i]->name;
    return NULL;
}

static int cmp_sec(const void *x, const void *y)
{
    const exe_section *a = *(const exe_section *const *)x, *b = *(const exe_section *const *)y;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return 0;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

typedef struct named { const exe_symbol *s; size_t i; } named;

static int cmp_name(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int c = strcmp(a->s->name, b->s->name);
    if (c)
        return c;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* Mark the symbols whose name an earlier symbol of the tile has: the
 * assembler rejects a second definition, so they are left as comments. */
static void mark_duplicates(tile_syms *ts)
{
    named *v = malloc((ts->n ? ts->n : 1) * sizeof *v);
    for (size_t i = 0; i < ts->n; i++)
        ts->dup[i] = false;
    if (!v)
        return;
    for (size_t i = 0; i < ts->n; i++)
        v[i] = (named){ ts->by_addr[i], i };
    qsort(v, ts->n, sizeof *v, cmp_name);
    for (size_t i = 1; i < ts->n; i++)
        if (!strcmp(v[i].s->name, v[i - 1].s->name))
            ts->dup[v[i].i] = true;
    free(v);
}

/* Which section each symbol is printed in.  Symbols carry a tile and an
 * address, not a section, so any section whose range holds the address
 * gives the same symbol back; but an empty section exactly at the address
 * takes it first, since labels are all an empty section can hold, then a
 * section holding the address, then one ending there. */
static void assign_owners(tile_syms *ts, const exe_section *const *secs, size_t n_secs)
{
    for (size_t i = 0; i < ts->n; i++) {
        uint32_t addr = ts->by_addr[i]->addr;
        const exe_section *own = NULL;
        for (int pass = 0; pass < 3 && !own; pass++)
            for (size_t k = 0; k < n_secs && !own; k++) {
                const exe_section *s = secs[k];
                uint64_t end = (uint64_t)s->addr + s->size;
                if ((pass == 0 && !s->size && s->addr == addr) ||
                    (pass == 1 && addr >= s->addr && addr < end) ||
                    (pass == 2 && addr == end))
                    own = s;
            }
        ts->owner[i] = own;
    }
}

/* Labels for the symbols at addr that belong to section sec. */
static void print_labels(FILE *out, const tile_syms *ts, const exe_section *sec, uint32_t addr, bool *printed)
{
    enum exe_symbol_kind def = (sec->flags & EXE_SEC_EXEC) ? EXE_SYM_CODE : EXE_SYM_DATA;
    for (size_t i = first_at(ts, addr); i < ts->n && ts->by_addr[i]->addr == addr; i++) {
        const exe_symbol *s = ts->by_addr[i];
        if (printed[i] || ts->owner[i] != sec)
            continue;
        printed[i] = true;
        if (!quotable_name(s->name) || ts->dup[i]) {
            fprintf(out, "// symbol at 0x%x not shown: its name cannot be written again\n", addr);
            continue;
        }
        if (s->global) {
            fputs(".globl ", out);
            print_name(out, s->name);
            fputc('\n', out);
        }
        if (s->kind != def) {
            fputs(".type ", out);
            print_name(out, s->name);
            fprintf(out, ", %s\n", s->kind == EXE_SYM_CODE ? "@function" : s->kind == EXE_SYM_DATA ? "@object"
                                                                                                   : "@notype");
        }
        if (s->size) {
            fputs(".size ", out);
            print_name(out, s->name);
            fprintf(out, ", %u\n", s->size);
        }
        print_name(out, s->name);
        fputs(":\n", out);
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The next symbol address after addr (within the tile), or limit. */
static uint32_t next_label(const tile_syms *ts, uint32_t addr, uint32_t limit)
{
    if (addr == UINT32_MAX)
        return limit;
    size_t i = first_at(ts, addr + 1);
    if (i < ts->n && ts->by_addr[i]->addr < limit)
        return ts->by_addr[i]->addr;
    return limit;
}

static void print_bytes(FILE *out, const uint8_t *p, uint32_t n)
{
    while (n) {
        uint32_t k = n < 16 ? n : 16;
        fputs("    .byte ", out);
        for (uint32_t i = 0; i < k; i++)
            fprintf(out, "%s0x%02x", i ? ", " : "", p[i]);
        fputc('\n', out);
        p += k;
        n -= k;
    }
}

/* Data from addr to end (no label in between): words where aligned,
 * .space for runs of 16 or more zero bytes. */
static void print_data(FILE *out, const exe_section *sec, uint32_t addr, uint32_t end)
{
    const uint8_t *b = sec->bytes + (addr - sec->addr);
    while (addr < end) {
        uint32_t zeros = 0;
        while (addr + zeros < end && b[zeros] == 0)
            zeros++;
        if (zeros >= 16) {
            fprintf(out, "    .space %u\n", zeros);
            addr += zeros;
            b += zeros;
            continue;
        }
        if ((addr & 3) || end - addr < 4) {
            uint32_t k = (addr & 3) ? 4 - (addr & 3) : end - addr;
            if (k > end - addr)
                k = end - addr;
            print_bytes(out, b, k);
            addr += k;
            b += k;
            continue;
        }
        uint32_t words = 0;
        fputs("    .word ", out);
        while (words < 8 && end - addr >= 4) {
            /* stop before a zero run worth a .space */
            uint32_t z = 0;
            while (addr + z < end && b[z] == 0 && z < 16)
                z++;
            if (z >= 16 && words)
                break;
            fprintf(out, "%s0x%08x", words ? ", " : "", le32(b));
            addr += 4;
            b += 4;
            words++;
        }
        fputc('\n', out);
    }
}

static void print_code(FILE *out, const exe_section *sec, const tile_syms *ts, uint32_t addr, uint32_t end)
{
    const uint8_t *base = sec->bytes;
    while (addr < end) {
        const uint8_t *b = base + (addr - sec->addr);
        if ((addr & 3) || end - addr < 4) {
            uint32_t k = (addr & 3) ? 4 - (addr & 3) : end - addr;
            if (k > end - addr)
                k = end - addr;
            print_bytes(out, b, k);
            addr += k;
            continue;
        }
        char text[400];
        bool have_w1 = end - addr >= 8;
        size_t used = disasm_bundle_sym(le32(b), have_w1 ? le32(b + 4) : 0, have_w1, addr, symbolize,
                                        (void *)ts, text, sizeof text);
        int w = fprintf(out, "    %s", text);
        fprintf(out, "%*s// 0x%x\n", w < 52 ? 52 - w : 1, "", addr);
        addr += (uint32_t)used;
    }
}

static void print_section(FILE *out, const exe_section *sec, const tile_syms *ts, bool *printed)
{
    char flags[8];
    char *f = flags;
    *f++ = 'a';
    if (sec->flags & EXE_SEC_WRITE) *f++ = 'w';
    if (sec->flags & EXE_SEC_EXEC) *f++ = 'x';
    *f = 0;
    if (!quotable_name(sec->name)) {
        /* The assembler could not read the name back: say so, and go on
         * with the other sections. */
        fprintf(out, "\n// section of %u bytes at 0x%x not shown: its name cannot be written\n", sec->size, sec->addr);
        return;
    }
    fputs("\n.section ", out);
    bool plain = true;
    for (const char *p = sec->name; *p && plain; p++)
        if (strchr(",\" \t\r\v\f;#/{}", *p))
            plain = false;
    if (plain && sec->name[0])
        fputs(sec->name, out);
    else
        fprintf(out, "\"%s\"", sec->name);
    fprintf(out, ", \"%s\"%s, 0x%x\n", flags, (sec->flags & EXE_SEC_NOBITS) ? ", @nobits" : "", sec->addr);

    uint32_t addr = sec->addr;
    uint32_t end = sec->size <= UINT32_MAX - sec->addr ? sec->addr + sec->size : UINT32_MAX;
    for (;;) {
        print_labels(out, ts, sec, addr, printed);
        if (addr >= end)
            break;
        uint32_t stop = next_label(ts, addr, end);
        if (stop <= addr)
            break;
        if (sec->flags & EXE_SEC_NOBITS || !sec->bytes)
            fprintf(out, "    .space %u\n", stop - addr);
        else if (sec->flags & EXE_SEC_EXEC)
            print_code(out, sec, ts, addr, stop);
        else
            print_data(out, sec, addr, stop);
        addr = stop;
    }
}

bool disasm_exe(const ipu_exe *e, FILE *out, char *err, size_t n)
{
    isa_init();
    size_t nt = e->n_sections + e->n_tiles;
    uint32_t *tiles = malloc((nt ? nt : 1) * sizeof *tiles);
    const exe_section **secs = malloc((e->n_sections ? e->n_sections : 1) * sizeof *secs);
    const exe_symbol **syms = malloc((e->n_symbols ? e->n_symbols : 1) * sizeof *syms);
    bool *printed = calloc(e->n_symbols ? e->n_symbols : 1, sizeof *printed);
    bool *dup = calloc(e->n_symbols ? e->n_symbols : 1, sizeof *dup);
    const exe_section **owner = calloc(e->n_symbols ? e->n_symbols : 1, sizeof *owner);
    if (!tiles || !secs || !syms || !printed || !dup || !owner) {
        free(tiles); free(secs); free(syms); free(printed); free(dup); free(owner);
        if (err && n) snprintf(err, n, "out of memory");
        return false;
    }
    for (size_t i = 0; i < e->n_sections; i++) {
        tiles[i] = e->sections[i].tile;
        secs[i] = &e->sections[i];
    }
    for (size_t i = 0; i < e->n_tiles; i++)
        tiles[e->n_sections + i] = e->tiles[i].tile;
    qsort(tiles, nt, sizeof *tiles, cmp_u32);
    qsort(secs, e->n_sections, sizeof *secs, cmp_sec);

    fprintf(out, "// ipusim disassembly: %zu section%s, %zu symbol%s\n", e->n_sections,
            e->n_sections == 1 ? "" : "s", e->n_symbols, e->n_symbols == 1 ? "" : "s");
    if (e->bsp.size)
        fprintf(out, "// .ipusim.bsp: %zu bytes of BSP control program, not shown\n", e->bsp.size);
    if (e->tensors.size)
        fprintf(out, "// .ipusim.tensors: %zu bytes of tensor map, not shown\n", e->tensors.size);
    /* The machine it was compiled for: lines of text (preset=NAME, param=value). */
    for (size_t at = 0; at < e->machine.size;) {
        const uint8_t *line = e->machine.bytes + at;
        const uint8_t *nl = memchr(line, '\n', e->machine.size - at);
        size_t len = nl ? (size_t)(nl - line) : e->machine.size - at;
        fprintf(out, "// .ipusim.machine: ");
        for (size_t k = 0; k < len; k++)
            fputc(isprint(line[k]) ? line[k] : '?', out);
        fputc('\n', out);
        at += len + 1;
    }

    size_t si = 0;
    for (size_t t = 0; t < nt; t++) {
        if (t && tiles[t] == tiles[t - 1])
            continue;
        uint32_t tile = tiles[t];
        tile_syms ts = { e, tile, syms, 0, dup, owner };
        for (size_t i = 0; i < e->n_symbols; i++)
            if (e->symbols[i].tile == tile)
                syms[ts.n++] = &e->symbols[i];
        qsort(syms, ts.n, sizeof *syms, cmp_sym);
        mark_duplicates(&ts);
        memset(printed, 0, (e->n_symbols ? e->n_symbols : 1) * sizeof *printed);

        fprintf(out, "\n.tile %u\n", tile);
        size_t first = si;
        while (si < e->n_sections && secs[si]->tile == tile)
            si++;
        assign_owners(&ts, secs + first, si - first);
        for (size_t k = first; k < si; k++)
            print_section(out, secs[k], &ts, printed);
        for (size_t i = 0; i < ts.n; i++)
            if (!printed[i])
                fprintf(out, "// symbol %s at 0x%x lies outside every section of tile %u\n",
                        quotable_name(syms[i]->name) ? syms[i]->name : "?", syms[i]->addr, tile);
        const exe_tile_record *rec = NULL;
        for (size_t i = 0; i < e->n_tiles; i++)
            if (e->tiles[i].tile == tile)
                rec = &e->tiles[i];
        if (rec) {
            const char *name = symbolize(&ts, rec->supervisor_entry);
            if (name)
                fprintf(out, "\n.entry %s\n", name);
            else
                fprintf(out, "\n.entry 0x%x\n", rec->supervisor_entry);
        }
    }
    free(tiles);
    free(secs);
    free(syms);
    free(printed);
    free(dup);
    free(owner);
    if (fflush(out) != 0 || ferror(out)) {
        if (err && n) snprintf(err, n, "error writing the disassembly");
        return false;
    }
    return true;
}
