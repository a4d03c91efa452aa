/*
 * executable_write.c — the executable written as an ELF64 file (layout in
 * executable.h and executable.c).  The file's layout is ipusim's own
 * (libelf's ELF_F_LAYOUT): every section at the next offset its alignment
 * allows, except that a tile section whose bytes an earlier one has points
 * at that one's place (exe_store.h).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exe_internal.h"
#include "exe_store.h"
#include "sim/base/fileio.h"

/* ---------------------------------------------------------------- writing */

typedef struct strbuf {
    char *buf;
    size_t len, cap;
    bool oom;
} strbuf;

/* Append s with its NUL; the offset of s, or 0 after running out of memory
 * (sb->oom says so). */
static size_t sb_add(strbuf *sb, const char *s)
{
    size_t n = strlen(s) + 1;
    if (sb->oom)
        return 0;
    if (sb->len + n > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap < sb->len + n)
            cap *= 2;
        char *p = realloc(sb->buf, cap);
        if (!p) {
            sb->oom = true;
            return 0;
        }
        sb->buf = p;
        sb->cap = cap;
    }
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    return sb->len - n;
}

/* s's offset in sb, appended only when sb does not hold it yet (a symbol
 * name repeats on every tile): the names are stored once in the executable
 * (exe_add_symbol), so names maps a name's address to its offset + 1. */
static size_t sb_add_once(strbuf *sb, exe_u64map *names, const char *s)
{
    uint64_t at = exe_u64map_get(names, (uint64_t)(uintptr_t)s);
    if (at)
        return at - 1;
    size_t off = sb_add(sb, s);
    if (!sb->oom && !exe_u64map_put(names, (uint64_t)(uintptr_t)s, off + 1))
        sb->oom = true;
    return off;
}

typedef struct writer {
    Elf *elf;
    strbuf shstr;
    const char *path;
    char *err;
    size_t err_size;
    exe_u64map first;             /* bytes pointer -> ELF index of the first section with them */
    exe_u64map same;              /* ELF index -> ELF index of the section whose place it shares */
} writer;

static bool elf_fail(writer *w, const char *what)
{
    snprintf(w->err, w->err_size, "%s: %s: %s", w->path, what, elf_errmsg(-1));
    return false;
}

/* A new section holding size bytes at buf (not copied: libelf reads it at
 * elf_update); its index in *index. */
static bool add_scn(writer *w, const char *name, Elf64_Word type, Elf64_Xword flags,
                    Elf64_Addr addr, const void *buf, size_t size, Elf_Type dtype,
                    size_t align, Elf64_Xword entsize, size_t *index)
{
    Elf_Scn *scn = elf_newscn(w->elf);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh))
        return elf_fail(w, "cannot add a section");
    sh.sh_name = (Elf64_Word)sb_add(&w->shstr, name);
    sh.sh_type = type;
    sh.sh_flags = flags;
    sh.sh_addr = addr;
    sh.sh_addralign = align;
    sh.sh_entsize = entsize;
    if (!gelf_update_shdr(scn, &sh))
        return elf_fail(w, "cannot add a section");
    if (size || type == SHT_NOBITS) {
        Elf_Data *d = elf_newdata(scn);
        if (!d)
            return elf_fail(w, "cannot add section data");
        d->d_buf = (void *)buf;
        d->d_size = size;
        d->d_type = dtype;
        d->d_align = align;
        d->d_off = 0;
        d->d_version = EV_CURRENT;
    }
    if (index)
        *index = elf_ndxscn(scn);
    return true;
}

static bool set_link(writer *w, size_t scn_index, Elf64_Word link, Elf64_Word info)
{
    Elf_Scn *scn = elf_getscn(w->elf, scn_index);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh))
        return elf_fail(w, "cannot link a section");
    sh.sh_link = link;
    sh.sh_info = info;
    if (!gelf_update_shdr(scn, &sh))
        return elf_fail(w, "cannot link a section");
    return true;
}

/* Everything exe_write allocates besides the libelf handle. */
typedef struct write_bufs {
    uint8_t *tiles, *files, *lines, *replicas;
    size_t replicas_size;
    Elf64_Sym *syms;
    Elf64_Word *xndx;
    strbuf strtab, filestr;
    exe_u64map names;             /* symbol names already in strtab */
    size_t *sec_index;            /* ELF index of each e->sections[i] */
} write_bufs;

/* "PATH: out of memory"; false. */
static bool write_oom(writer *w)
{
    snprintf(w->err, w->err_size, "%s: out of memory", w->path);
    return false;
}

/* The ELF header of an ipusim executable. */
static bool write_header(const ipu_exe *e, writer *w)
{
    GElf_Ehdr eh;
    if (!gelf_newehdr(w->elf, ELFCLASS64) || !gelf_getehdr(w->elf, &eh))
        return elf_fail(w, "cannot create the ELF header");
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
    eh.e_type = e->relocatable ? ET_REL : ET_EXEC;
    eh.e_machine = EXE_EM_IPUSIM;
    eh.e_version = EV_CURRENT;
    eh.e_flags = EXE_FORMAT_VERSION;
    eh.e_shstrndx = 1;
    if (!gelf_update_ehdr(w->elf, &eh))
        return elf_fail(w, "cannot create the ELF header");
    return true;
}

/* One ELF section per section of every tile, named NAME@TILE; their ELF
 * indices in b->sec_index.  *need_xndx: some index needs SHN_XINDEX. */
/* Whether the file holds tile's sections, records and symbols: a
 * replicated program holds replica 0's (the others are made when read). */
static bool stored_tile(const ipu_exe *e, uint32_t tile)
{
    return e->replicas.count < 2 || tile < e->replicas.tile_stride || tile == EXE_EVERY_TILE;
}

static bool add_tile_sections(const ipu_exe *e, writer *w, write_bufs *b, bool *need_xndx)
{
    *need_xndx = false;
    for (size_t i = 0; i < e->n_sections; i++) {
        const exe_section *s = &e->sections[i];
        if (!stored_tile(e, s->tile))
            continue;
        size_t n = strlen(s->name) + 16;
        char *full = malloc(n);
        if (!full)
            return write_oom(w);
        snprintf(full, n, "%s@%u", s->name, s->tile);
        Elf64_Xword flags = SHF_ALLOC;
        if (s->flags & EXE_SEC_EXEC)
            flags |= SHF_EXECINSTR;
        if (s->flags & EXE_SEC_WRITE)
            flags |= SHF_WRITE;
        bool nobits = (s->flags & EXE_SEC_NOBITS) != 0;
        /* Bytes an earlier section has: no data of its own, that one's place. */
        uint64_t first = !nobits && s->bytes ? exe_u64map_get(&w->first, (uint64_t)(uintptr_t)s->bytes) : 0;
        bool ok = add_scn(w, full, nobits ? SHT_NOBITS : SHT_PROGBITS, flags, s->addr,
                          nobits ? NULL : s->bytes, first ? 0 : s->size, ELF_T_BYTE, SEC_ALIGN_BYTES, 0,
                          &b->sec_index[i]);
        free(full);
        if (!ok)
            return false;
        if (!nobits && s->bytes &&
            !(first ? exe_u64map_put(&w->same, b->sec_index[i], first)
                    : exe_u64map_put(&w->first, (uint64_t)(uintptr_t)s->bytes, b->sec_index[i])))
            return write_oom(w);
        if (b->sec_index[i] >= SHN_LORESERVE)
            *need_xndx = true;
    }
    return true;
}

/* The record sections: tile entries, source files, line records, the BSP
 * program and the tensor map. */
static bool add_record_sections(const ipu_exe *e, writer *w, write_bufs *b)
{
    if (e->n_tiles) {
        b->tiles = malloc(e->n_tiles * TILES_RECORD_BYTES);
        if (!b->tiles)
            return write_oom(w);
        size_t n = 0;
        for (size_t i = 0; i < e->n_tiles; i++)
            if (stored_tile(e, e->tiles[i].tile)) {
                exe_put32(b->tiles + n * TILES_RECORD_BYTES, e->tiles[i].tile);
                exe_put32(b->tiles + n++ * TILES_RECORD_BYTES + 4, e->tiles[i].supervisor_entry);
            }
        if (!add_scn(w, SEC_TILES, SHT_PROGBITS, 0, 0, b->tiles, n * TILES_RECORD_BYTES,
                     ELF_T_BYTE, 4, TILES_RECORD_BYTES, NULL))
            return false;
    }
    if (e->n_files) {
        b->files = malloc(e->n_files * FILES_RECORD_BYTES);
        if (!b->files)
            return write_oom(w);
        sb_add(&b->filestr, "");
        for (size_t i = 0; i < e->n_files; i++)
            exe_put32(b->files + i * FILES_RECORD_BYTES, (uint32_t)sb_add(&b->filestr, e->files[i]));
        if (b->filestr.oom)
            return write_oom(w);
        if (!add_scn(w, SEC_FILES, SHT_PROGBITS, 0, 0, b->files, e->n_files * FILES_RECORD_BYTES,
                     ELF_T_BYTE, 4, FILES_RECORD_BYTES, NULL) ||
            !add_scn(w, SEC_FILESTR, SHT_STRTAB, 0, 0, b->filestr.buf, b->filestr.len,
                     ELF_T_BYTE, 1, 0, NULL))
            return false;
    }
    if (e->n_lines) {
        b->lines = malloc(e->n_lines * LINES_RECORD_BYTES);
        if (!b->lines)
            return write_oom(w);
        size_t n = 0;
        for (size_t i = 0; i < e->n_lines; i++) {
            if (!stored_tile(e, e->lines[i].tile))
                continue;
            uint8_t *r = b->lines + n++ * LINES_RECORD_BYTES;
            exe_put32(r, e->lines[i].tile);
            exe_put32(r + 4, e->lines[i].addr);
            exe_put32(r + 8, e->lines[i].line);
            exe_put32(r + 12, e->lines[i].file);
        }
        if (!add_scn(w, SEC_LINES, SHT_PROGBITS, 0, 0, b->lines, n * LINES_RECORD_BYTES,
                     ELF_T_BYTE, 4, LINES_RECORD_BYTES, NULL))
            return false;
    }
    if (e->bsp.size && !add_scn(w, SEC_BSP, SHT_PROGBITS, 0, 0, e->bsp.bytes, e->bsp.size,
                                ELF_T_BYTE, SEC_ALIGN_BYTES, 0, NULL))
        return false;
    if (e->tensors.size && !add_scn(w, SEC_TENSORS, SHT_PROGBITS, 0, 0, e->tensors.bytes,
                                    e->tensors.size, ELF_T_BYTE, SEC_ALIGN_BYTES, 0, NULL))
        return false;
    if (e->machine.size && !add_scn(w, SEC_MACHINE, SHT_PROGBITS, 0, 0, e->machine.bytes,
                                    e->machine.size, ELF_T_BYTE, 1, 0, NULL))
        return false;
    if (e->model.size && !add_scn(w, SEC_MODEL, SHT_PROGBITS, 0, 0, e->model.bytes,
                                  e->model.size, ELF_T_BYTE, 1, 0, NULL))
        return false;
    if (e->replicas.count > 1) {
        char why[256];
        if (!exe_replicas_encode(e, &b->replicas, &b->replicas_size, why, sizeof why)) {
            snprintf(w->err, w->err_size, "%s: %s", w->path, why);
            return false;
        }
        if (!add_scn(w, SEC_REPLICAS, SHT_PROGBITS, 0, 0, b->replicas, b->replicas_size, ELF_T_BYTE, 4, 0, NULL))
            return false;
    }
    if (e->ops.size && !add_scn(w, SEC_OPS, SHT_PROGBITS, 0, 0, e->ops.bytes, e->ops.size, ELF_T_BYTE, 1, 0, NULL))
        return false;
    return true;
}

/* The symbol table (locals first, then globals), its strings and, when a
 * section index needs it, the extended index table. */
static bool add_symbols(const ipu_exe *e, writer *w, write_bufs *b, bool need_xndx)
{
    size_t n = e->n_symbols + 1;
    b->syms = calloc(n, sizeof *b->syms);
    b->xndx = need_xndx ? calloc(n, sizeof *b->xndx) : NULL;
    if (!b->syms || (need_xndx && !b->xndx))
        return write_oom(w);
    sb_add(&b->strtab, "");
    size_t k = 1, first_global = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            first_global = k;
        for (size_t i = 0; i < e->n_symbols; i++) {
            const exe_symbol *s = &e->symbols[i];
            if (s->global != (pass == 1) || !stored_tile(e, s->tile))
                continue;
            /* a symbol of every tile with code: the same address on each, absolute */
            bool every = s->tile == EXE_EVERY_TILE;
            size_t ndx = SHN_ABS;
            if (!every) {
                long sec = exe_find_section(e, s->tile, s->addr, true);
                if (sec < 0) {
                    snprintf(w->err, w->err_size,
                             "%s: symbol %s (tile %u, address 0x%x) is in no section",
                             w->path, s->name, s->tile, s->addr);
                    return false;
                }
                const exe_section *in = &e->sections[sec];
                if ((uint64_t)s->addr + s->size > (uint64_t)in->addr + in->size) {
                    snprintf(w->err, w->err_size,
                             "%s: symbol %s [0x%x, 0x%llx) extends past the end of section "
                             "%s@%u", w->path, s->name, s->addr,
                             (unsigned long long)s->addr + s->size, in->name, in->tile);
                    return false;
                }
                ndx = b->sec_index[sec];
            }
            Elf64_Sym *y = &b->syms[k];
            y->st_name = (Elf64_Word)sb_add_once(&b->strtab, &b->names, s->name);
            unsigned type = s->kind == EXE_SYM_CODE ? STT_FUNC
                          : s->kind == EXE_SYM_DATA ? STT_OBJECT : STT_NOTYPE;
            y->st_info = (unsigned char)ELF64_ST_INFO(s->global ? STB_GLOBAL : STB_LOCAL, type);
            y->st_other = STV_DEFAULT;
            if (!every && ndx >= SHN_LORESERVE) {
                y->st_shndx = SHN_XINDEX;
                b->xndx[k] = (Elf64_Word)ndx;
            } else {
                y->st_shndx = (Elf64_Section)ndx;
                if (b->xndx)
                    b->xndx[k] = 0;
            }
            y->st_value = s->addr;
            y->st_size = s->size;
            k++;
        }
    }
    n = k;                        /* those of the tiles stored */
    if (b->strtab.oom)
        return write_oom(w);
    size_t symtab_index, strtab_index, xndx_index;
    if (!add_scn(w, ".symtab", SHT_SYMTAB, 0, 0, b->syms, n * sizeof *b->syms, ELF_T_SYM, 8,
                 sizeof(Elf64_Sym), &symtab_index) ||
        !add_scn(w, ".strtab", SHT_STRTAB, 0, 0, b->strtab.buf, b->strtab.len, ELF_T_BYTE, 1,
                 0, &strtab_index) ||
        !set_link(w, symtab_index, (Elf64_Word)strtab_index, (Elf64_Word)first_global))
        return false;
    if (need_xndx &&
        (!add_scn(w, ".symtab_shndx", SHT_SYMTAB_SHNDX, 0, 0, b->xndx, n * sizeof *b->xndx,
                  ELF_T_WORD, 4, sizeof(Elf64_Word), &xndx_index) ||
         !set_link(w, xndx_index, (Elf64_Word)symtab_index, 0)))
        return false;
    return true;
}

/* Every section's place in the file: the next offset its alignment allows
 * after the one before it, or, for a section that shares another's bytes,
 * that one's place; the section header table last. */
static bool lay_out(writer *w)
{
    uint64_t off = sizeof(Elf64_Ehdr);
    for (Elf_Scn *scn = elf_nextscn(w->elf, NULL); scn; scn = elf_nextscn(w->elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return elf_fail(w, "cannot lay out a section");
        size_t ndx = elf_ndxscn(scn);
        uint64_t same = exe_u64map_get(&w->same, ndx);
        if (same) {
            GElf_Shdr first;
            Elf_Scn *fs = elf_getscn(w->elf, same);
            if (!fs || !gelf_getshdr(fs, &first))
                return elf_fail(w, "cannot lay out a section");
            sh.sh_offset = first.sh_offset;
            sh.sh_size = first.sh_size;
        } else {
            Elf_Data *d = elf_getdata(scn, NULL);
            uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;
            off = (off + align - 1) / align * align;
            sh.sh_offset = off;
            sh.sh_size = d ? d->d_size : 0;
            if (sh.sh_type != SHT_NOBITS)
                off += sh.sh_size;
        }
        if (!gelf_update_shdr(scn, &sh))
            return elf_fail(w, "cannot lay out a section");
    }
    GElf_Ehdr eh;
    if (!gelf_getehdr(w->elf, &eh))
        return elf_fail(w, "cannot lay out the file");
    eh.e_shoff = (off + 7) / 8 * 8;
    if (!gelf_update_ehdr(w->elf, &eh) || elf_flagelf(w->elf, ELF_C_SET, ELF_F_LAYOUT) == 0)
        return elf_fail(w, "cannot lay out the file");
    return true;
}

/* The executable as an ELF file: header, section names, tile sections,
 * records, symbols; written by elf_update. */
static bool write_elf(const ipu_exe *e, writer *w, write_bufs *b)
{
    if (!write_header(e, w))
        return false;

    /* Section 1: the section name table, filled in last. */
    size_t shstr_index;
    if (!add_scn(w, ".shstrtab", SHT_STRTAB, 0, 0, NULL, 0, ELF_T_BYTE, 1, 0, &shstr_index))
        return false;

    bool need_xndx;
    if (!add_tile_sections(e, w, b, &need_xndx) || !add_record_sections(e, w, b))
        return false;
    if (e->n_symbols && !add_symbols(e, w, b, need_xndx))
        return false;

    /* The names are all known now. */
    if (w->shstr.oom)
        return write_oom(w);
    Elf_Scn *shstr = elf_getscn(w->elf, shstr_index);
    Elf_Data *d = shstr ? elf_newdata(shstr) : NULL;
    if (!d)
        return elf_fail(w, "cannot add section data");
    d->d_buf = w->shstr.buf;
    d->d_size = w->shstr.len;
    d->d_type = ELF_T_BYTE;
    d->d_align = 1;
    d->d_version = EV_CURRENT;
    if (!lay_out(w))
        return false;
    if (elf_update(w->elf, ELF_C_WRITE) < 0)
        return elf_fail(w, "cannot write ELF");
    return true;
}

bool exe_write(const ipu_exe *e, const char *path, char *err, size_t err_size)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, err_size, "%s: libelf is out of date", path);
        return false;
    }
    for (size_t i = 0; i < e->n_lines; i++)
        if (e->lines[i].file >= e->n_files) {
            snprintf(err, err_size, "%s: line record %zu names file %u but there are %zu files",
                     path, i, e->lines[i].file, e->n_files);
            return false;
        }
    atomic_file f;
    if (!afile_open(&f, path, err, err_size))
        return false;
    writer w = {.path = path, .err = err, .err_size = err_size};
    write_bufs b = {0};
    b.sec_index = calloc(e->n_sections + 1, sizeof *b.sec_index);
    bool ok = b.sec_index != NULL;
    if (!ok)
        snprintf(err, err_size, "%s: out of memory", path);
    if (ok) {
        sb_add(&w.shstr, "");
        w.elf = elf_begin(fileno(f.fp), ELF_C_WRITE, NULL);
        ok = w.elf ? write_elf(e, &w, &b) : elf_fail(&w, "cannot start ELF output");
        if (w.elf)
            elf_end(w.elf);
    }
    free(b.tiles);
    free(b.files);
    free(b.lines);
    free(b.replicas);
    free(b.syms);
    free(b.xndx);
    free(b.strtab.buf);
    exe_u64map_free(&b.names);
    free(b.filestr.buf);
    free(b.sec_index);
    free(w.shstr.buf);
    exe_u64map_free(&w.first);
    exe_u64map_free(&w.same);
    if (!ok) {
        afile_abort(&f);
        return false;
    }
    return afile_commit(&f, err, err_size);
}
