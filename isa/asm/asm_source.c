/*
 * asm_source.c — where the assembler's statements come from: source files
 * and strings split into statements (a line, or the parts of a line between
 * ';'), with comments blanked so columns stay true; .include; macro
 * expansion; .rept bodies.
 *
 * Sources form a stack of frames.  A file frame reads physical lines; a
 * list frame replays statements (a macro expansion, made once when the
 * macro is invoked, or a .rept body, replayed count times).  Every limit in
 * asm_internal.h that bounds the work done for a given input is enforced
 * here, so no input can make the assembler run away.
 */
#include "asm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { FR_FILE, FR_LIST };

struct asm_frame {
    int kind;
    bool is_macro;             /* a macro expansion (.exitm, depth) */
    bool is_include;           /* counted in the include depth */
    /* FR_FILE */
    char *buf;                 /* writable copy, NUL-terminated */
    size_t len, pos;
    uint32_t file, line;
    bool in_comment;           /* inside a block comment at the start of the next line */
    char *real;                /* canonical path, for include cycles; NULL for strings */
    asm_stmt_text *pend; size_t n_pend, i_pend, cap_pend;   /* the current line's statements */
    /* FR_LIST */
    asm_stmt_text *list; size_t n, i;
    uint64_t reps_left;
};

uint32_t asm_add_file(asm_ctx *a, const char *shown)
{
    ASM_GROW(a->files, a->n_files, a->cap_files);
    size_t n = strlen(shown);
    a->files[a->n_files] = asm_strndup(&a->arena, shown, n);
    return (uint32_t)a->n_files++;
}

static asm_frame *push_frame(asm_ctx *a, int kind, asm_loc loc)
{
    if (a->n_frames >= ASM_MAX_FRAMES) {
        asm_error(a, loc, "sources nested more than %d deep (.include, macros and .rept together)", ASM_MAX_FRAMES);
        return NULL;
    }
    asm_frame *f = asm_xrealloc(NULL, sizeof *f);
    memset(f, 0, sizeof *f);
    f->kind = kind;
    a->frames[a->n_frames++] = f;
    return f;
}

static void pop_frame(asm_ctx *a)
{
    asm_frame *f = a->frames[--a->n_frames];
    if (f->is_include)
        a->include_depth--;
    if (f->is_macro)
        a->macro_depth--;
    free(f->pend);
    free(f->real);
    free(f);
}

void asm_free_sources(asm_ctx *a)
{
    while (a->n_frames)
        pop_frame(a);
    for (size_t i = 0; i < a->n_buffers; i++)
        free(a->buffers[i]);
    free(a->buffers);
    a->buffers = NULL;
    a->n_buffers = a->cap_buffers = 0;
}

static void keep_buffer(asm_ctx *a, char *buf)
{
    ASM_GROW(a->buffers, a->n_buffers, a->cap_buffers);
    a->buffers[a->n_buffers++] = buf;
}

static void push_text(asm_ctx *a, char *buf, size_t len, uint32_t file, char *real, bool include, asm_loc from)
{
    asm_frame *f = push_frame(a, FR_FILE, from);
    if (!f) {
        free(buf);
        free(real);
        return;
    }
    keep_buffer(a, buf);
    f->buf = buf;
    f->len = len;
    f->file = file;
    f->real = real;
    f->is_include = include;
    if (include)
        a->include_depth++;
}

void asm_push_string(asm_ctx *a, const char *text, const char *name)
{
    size_t len = strlen(text);
    a->source_bytes += len;
    char *buf = asm_xrealloc(NULL, len + 1);
    memcpy(buf, text, len + 1);
    uint32_t file = asm_add_file(a, name);
    push_text(a, buf, len, file, NULL, false, (asm_loc){ file, 0, 0, NULL });
}

/* Read a whole regular file (not a device or a fifo that never ends). */
static char *load_file(const char *path, size_t *len, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file");
        close(fd);
        return NULL;
    }
    /* The size first: a huge file is refused without reading it. */
    if ((uint64_t)st.st_size > ASM_MAX_FILE_BYTES) {
        snprintf(why, why_size, "%llu bytes, more than the %u bytes an assembly source may have",
                 (unsigned long long)st.st_size, ASM_MAX_FILE_BYTES);
        close(fd);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = asm_xrealloc(NULL, cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > ASM_MAX_FILE_BYTES) {
                snprintf(why, why_size, "more than the %u bytes an assembly source may have", ASM_MAX_FILE_BYTES);
                free(buf);
                close(fd);
                return NULL;
            }
            /* One byte past the limit shows a file that grew past it. */
            cap = cap * 2 > ASM_MAX_FILE_BYTES ? ASM_MAX_FILE_BYTES + 1u : cap * 2;
            buf = asm_xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            snprintf(why, why_size, "%s", strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *len = n;
    return buf;
}

static bool push_file(asm_ctx *a, const char *path, const char *shown, asm_loc from, bool include)
{
    char why[128];
    size_t len;
    char *buf = load_file(path, &len, why, sizeof why);
    if (!buf) {
        if (include)
            asm_error(a, from, "cannot read include file '%s': %s", shown, why);
        else {
            /* No source position yet: the message names the file alone. */
            ASM_GROW(a->errors, a->n_errors, a->cap_errors);
            size_t n = strlen(shown) + strlen(why) + 32;
            char *msg = asm_alloc(&a->arena, n);
            snprintf(msg, n, "%s: error: cannot read: %s", shown, why);
            a->errors[a->n_errors++] = msg;
        }
        return false;
    }
    a->source_bytes += len;
    if (a->source_bytes > ASM_MAX_FILE_BYTES) {
        asm_error(a, from, "including '%s' makes more than %u bytes of source text in all", shown,
                  ASM_MAX_FILE_BYTES);
        a->stop = true;
        free(buf);
        return false;
    }
    uint32_t file = asm_add_file(a, shown);
    const char *nul = memchr(buf, 0, len);
    if (nul) {
        /* Locate it for the message. */
        uint32_t line = 1, col = 1;
        for (const char *p = buf; p < nul; p++) {
            if (*p == '\n') { line++; col = 1; } else col++;
        }
        asm_error(a, (asm_loc){ file, line, col, NULL }, "NUL byte in source text");
        free(buf);
        return false;
    }
    push_text(a, buf, len, file, realpath(path, NULL), include, from);
    return true;
}

bool asm_push_file(asm_ctx *a, const char *path, const char *shown, asm_loc from)
{
    return push_file(a, path, shown, from, false);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join_path(const char *dir, size_t dir_len, const char *name)
{
    size_t n = dir_len + 1 + strlen(name) + 1;
    char *s = asm_xrealloc(NULL, n);
    snprintf(s, n, "%.*s/%s", (int)dir_len, dir, name);
    return s;
}

void asm_include(asm_ctx *a, const char *name, asm_loc loc)
{
    if (a->opt.no_include) {
        asm_error(a, loc, "'.include' is disabled here");
        return;
    }
    if (a->include_depth >= ASM_MAX_INCLUDE_DEPTH) {
        asm_error(a, loc, "'.include' nested more than %d deep", ASM_MAX_INCLUDE_DEPTH);
        return;
    }
    if (!*name) {
        asm_error(a, loc, "'.include' needs a file name");
        return;
    }
    char *path = NULL;
    if (name[0] == '/') {
        if (is_file(name))
            path = asm_xrealloc(NULL, strlen(name) + 1), strcpy(path, name);
    } else {
        const char *from = loc.file < a->n_files ? a->files[loc.file] : "";
        const char *slash = strrchr(from, '/');
        if (slash)
            path = join_path(from, (size_t)(slash - from), name);
        else
            path = asm_xrealloc(NULL, strlen(name) + 1), strcpy(path, name);
        if (!is_file(path)) {
            free(path);
            path = NULL;
            for (size_t i = 0; i < a->opt.n_include_dirs && !path; i++) {
                const char *dir = a->opt.include_dirs[i];
                if (!dir)
                    continue;
                path = join_path(dir, strlen(dir), name);
                if (!is_file(path)) {
                    free(path);
                    path = NULL;
                }
            }
        }
    }
    if (!path) {
        asm_error(a, loc, "cannot find include file '%s'", name);
        return;
    }
    char *real = realpath(path, NULL);
    if (real) {
        for (int i = 0; i < a->n_frames; i++) {
            asm_frame *f = a->frames[i];
            if (f->kind != FR_FILE || !f->real || strcmp(f->real, real))
                continue;
            /* The chain from that file to here, for the message. */
            char chain[600];
            size_t used = 0;
            chain[0] = 0;
            for (int j = i; j < a->n_frames && used < sizeof chain; j++)
                if (a->frames[j]->kind == FR_FILE)
                    used += (size_t)snprintf(chain + used, sizeof chain - used, "'%s' -> ",
                                             a->files[a->frames[j]->file]);
            if (used < sizeof chain)
                snprintf(chain + used, sizeof chain - used, "'%s'", path);
            asm_error(a, loc, "include cycle: %s", chain);
            free(real);
            free(path);
            return;
        }
        free(real);
    }
    push_file(a, path, path, loc, true);
    free(path);
}

/* ---- statements ----------------------------------------------------------- */

/* Skip a string or character constant starting at p; returns the first
 * character after it.  Unterminated strings run to the end of the line. */
static char *skip_quoted(char *p)
{
    if (*p == '"') {
        p++;
        while (*p && *p != '"') {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        return *p ? p + 1 : p;
    }
    /* 'c' or '\c' */
    if (p[1] == '\\' && p[2] && p[3] == '\'')
        return p + 4;
    if (p[1] && p[1] != '\\' && p[2] == '\'')
        return p + 3;
    return p + 1;
}

/* Blank comments in one line (in place, keeping columns).  *in_comment
 * carries a block comment from line to line. */
static void blank_comments(char *line, bool *in_comment)
{
    char *p = line;
    while (*p) {
        if (*in_comment) {
            if (p[0] == '*' && p[1] == '/') {
                p[0] = p[1] = ' ';
                p += 2;
                *in_comment = false;
            } else
                *p++ = ' ';
            continue;
        }
        if (*p == '"' || *p == '\'') {
            p = skip_quoted(p);
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            p[0] = p[1] = ' ';
            p += 2;
            *in_comment = true;
            continue;
        }
        if ((p[0] == '/' && p[1] == '/') || p[0] == '#') {
            *p = 0;
            return;
        }
        p++;
    }
}

/* Split the next physical line of a file frame into statements. */
static bool read_line(asm_frame *f)
{
    if (f->pos >= f->len)
        return false;
    char *line = f->buf + f->pos;
    char *nl = memchr(line, '\n', f->len - f->pos);
    char *end = nl ? nl : f->buf + f->len;
    *end = 0;
    f->pos = (size_t)(end - f->buf) + 1;
    f->line++;
    blank_comments(line, &f->in_comment);
    f->n_pend = f->i_pend = 0;
    char *start = line, *p = line;
    for (;;) {
        if (*p == '"' || *p == '\'') {
            p = skip_quoted(p);
            continue;
        }
        if (*p == ';' || *p == 0) {
            bool last = *p == 0;
            *p = 0;
            if (*asm_skip_space(start)) {
                ASM_GROW(f->pend, f->n_pend, f->cap_pend);
                f->pend[f->n_pend++] = (asm_stmt_text){
                    start, { f->file, f->line, (uint32_t)(start - line) + 1, NULL } };
            }
            if (last)
                break;
            start = ++p;
            continue;
        }
        p++;
    }
    return true;
}

bool asm_next_stmt(asm_ctx *a, asm_stmt_text *out, int *depth)
{
    while (a->n_frames && !a->stop) {
        asm_frame *f = a->frames[a->n_frames - 1];
        if (f->kind == FR_FILE) {
            if (f->i_pend < f->n_pend) {
                *out = f->pend[f->i_pend++];
                goto got;
            }
            if (read_line(f))
                continue;
        } else {
            if (f->i < f->n) {
                *out = f->list[f->i++];
                goto got;
            }
            if (f->reps_left > 1 && f->n) {
                f->reps_left--;
                f->i = 0;
                continue;
            }
        }
        pop_frame(a);
    }
    return false;
got:
    *depth = a->n_frames;
    uint32_t limit = a->opt.max_statements ? a->opt.max_statements : ASM_MAX_STATEMENTS;
    if (++a->n_statements > limit) {
        asm_error(a, out->loc, "more than %u statements after expansion (a runaway .rept or macro?)", limit);
        a->stop = true;
        return false;
    }
    return true;
}

void asm_push_rept(asm_ctx *a, asm_stmt_text *body, size_t n, uint64_t count, asm_loc loc)
{
    if (!n || !count)
        return;
    asm_frame *f = push_frame(a, FR_LIST, loc);
    if (!f)
        return;
    f->list = body;
    f->n = n;
    f->reps_left = count;
}

/* ---- macros ------------------------------------------------------------------ */

asm_macro *asm_find_macro(asm_ctx *a, const char *name)
{
    uint32_t i;
    return asm_map_get(&a->names, name, ASM_NS_MACRO, &i) ? a->macros[i] : NULL;
}

asm_macro *asm_define_macro(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    p = asm_skip_space(p);
    const char *name = p;
    if (!asm_is_ident_start((unsigned char)*p)) {
        asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(p - text)), "expected a macro name after '.macro'");
        return NULL;
    }
    while (asm_is_ident_char((unsigned char)*p))
        p++;
    char *mname = asm_strndup(&a->arena, name, (size_t)(p - name));
    asm_macro *old = asm_find_macro(a, mname);
    if (old) {
        asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(name - text)),
                  "macro '%s' is already defined at %s:%u", mname, a->files[old->loc.file], old->loc.line);
        return NULL;
    }
    asm_macro *m = asm_alloc(&a->arena, sizeof *m);
    m->name = mname;
    m->loc = asm_loc_col(loc, loc.col + (uint32_t)(name - text));
    size_t cap = 0;
    for (;;) {
        while (asm_is_space((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        const char *pn = p;
        if (m->vararg) {
            asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(p - text)), "no parameter may follow a :vararg parameter");
            return NULL;
        }
        if (!asm_is_ident_start((unsigned char)*p)) {
            asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(p - text)),
                      "expected a parameter name in '.macro %s', found '%c'", mname, *p);
            return NULL;
        }
        while (asm_is_ident_char((unsigned char)*p))
            p++;
        char *pname = asm_strndup(&a->arena, pn, (size_t)(p - pn));
        for (size_t i = 0; i < m->n_params; i++)
            if (!strcmp(m->params[i], pname)) {
                asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(pn - text)),
                          "parameter '%s' appears twice in '.macro %s'", pname, mname);
                return NULL;
            }
        char *def = NULL;
        bool req = false;
        if (*p == ':') {
            if (!strncmp(p, ":req", 4) && !asm_is_ident_char((unsigned char)p[4])) { req = true; p += 4; }
            else if (!strncmp(p, ":vararg", 7) && !asm_is_ident_char((unsigned char)p[7])) { m->vararg = true; p += 7; }
            else {
                asm_error(a, asm_loc_col(loc, loc.col + (uint32_t)(p - text)),
                          "expected ':req' or ':vararg' after parameter '%s'", pname);
                return NULL;
            }
        }
        p = asm_skip_space(p);
        if (*p == '=') {
            p = asm_skip_space(p + 1);
            const char *d = p;
            if (*p == '"') {
                p = skip_quoted((char *)p);
                def = asm_strndup(&a->arena, d + 1, (size_t)(p - d) >= 2 ? (size_t)(p - d) - 2 : 0);
            } else {
                while (*p && *p != ',' && !asm_is_space((unsigned char)*p))
                    p++;
                def = asm_strndup(&a->arena, d, (size_t)(p - d));
            }
        }
        if (m->n_params == cap) {
            cap = cap ? cap * 2 : 4;
            char **np = asm_alloc(&a->arena, cap * sizeof *np);
            char **nd = asm_alloc(&a->arena, cap * sizeof *nd);
            bool *nr = asm_alloc(&a->arena, cap * sizeof *nr);
            if (m->n_params) {
                memcpy(np, m->params, m->n_params * sizeof *np);
                memcpy(nd, m->defaults, m->n_params * sizeof *nd);
                memcpy(nr, m->required, m->n_params * sizeof *nr);
            }
            m->params = np; m->defaults = nd; m->required = nr;
        }
        m->params[m->n_params] = pname;
        m->defaults[m->n_params] = def;
        m->required[m->n_params] = req;
        m->n_params++;
    }
    ASM_GROW(a->macros, a->n_macros, a->cap_macros);
    a->macros[a->n_macros] = m;
    asm_map_put(&a->names, m->name, ASM_NS_MACRO, (uint32_t)a->n_macros);
    a->n_macros++;
    return m;
}

/* Split macro arguments at top-level commas (or, when there are none and
 * the macro has several parameters, at blanks).  Returns the count. */
static size_t split_args(const char *args, size_t max, const char **start, size_t *len, bool blanks)
{
    size_t n = 0;
    const char *p = asm_skip_space(args);
    if (!*p)
        return 0;
    for (;;) {
        p = asm_skip_space(p);
        const char *s = p;
        int paren = 0;
        while (*p) {
            if (*p == '"' || *p == '\'') { p = skip_quoted((char *)p); continue; }
            if (*p == '(') paren++;
            else if (*p == ')' && paren > 0) paren--;
            else if (paren == 0 && (*p == ',' || (blanks && asm_is_space((unsigned char)*p))))
                break;
            p++;
        }
        const char *e = p;
        while (e > s && asm_is_space((unsigned char)e[-1]))
            e--;
        if (n < max) {
            start[n] = s;
            len[n] = (size_t)(e - s);
        }
        n++;
        if (!*p)
            break;
        p++;
        if (blanks) {
            p = asm_skip_space(p);
            if (*p == ',')
                p++;
            if (!*asm_skip_space(p))
                break;
        }
    }
    return n;
}

void asm_push_macro(asm_ctx *a, asm_macro *m, const char *args, asm_loc loc)
{
    if (a->macro_depth >= ASM_MAX_MACRO_DEPTH) {
        asm_error(a, loc, "macro '%s' expanded more than %d levels deep (does it invoke itself?)",
                  m->name, ASM_MAX_MACRO_DEPTH);
        return;
    }
    size_t np = m->n_params;
    size_t maxa = np + 1;
    const char **as = asm_xrealloc(NULL, maxa * sizeof *as);
    size_t *al = asm_xrealloc(NULL, maxa * sizeof *al);
    bool has_comma = false;
    for (const char *p = args; *p; ) {
        if (*p == '"' || *p == '\'') { p = skip_quoted((char *)p); continue; }
        if (*p == ',') { has_comma = true; break; }
        p++;
    }
    size_t na = split_args(args, maxa, as, al, !has_comma && np > 1 && !m->vararg);
    if (m->vararg && na > np) {
        /* The last parameter takes everything from its argument on. */
        size_t last = np - 1;
        al[last] = strlen(as[last]);
        while (al[last] && asm_is_space((unsigned char)as[last][al[last] - 1]))
            al[last]--;
        na = np;
    }
    if (na > np) {
        asm_error(a, loc, "macro '%s' takes %zu argument%s, given %zu", m->name, np, np == 1 ? "" : "s", na);
        free(as);
        free(al);
        return;
    }
    char **val = asm_xrealloc(NULL, (np ? np : 1) * sizeof *val);
    for (size_t i = 0; i < np; i++) {
        if (i < na && al[i])
            val[i] = asm_strndup(&a->arena, as[i], al[i]);
        else if (m->required[i]) {
            asm_error(a, loc, "macro '%s' needs a value for its argument '%s'", m->name, m->params[i]);
            free(as); free(al); free(val);
            return;
        } else
            val[i] = m->defaults[i] ? m->defaults[i] : "";
    }
    free(as);
    free(al);

    uint64_t counter = a->macro_counter++;
    char note[300];
    snprintf(note, sizeof note, " (in macro '%s' expanded at %s:%u:%u)", m->name,
             a->files[loc.file], loc.line, loc.col);
    const char *note_s = asm_strndup(&a->arena, note, strlen(note));

    asm_stmt_text *list = m->n_body ? asm_alloc(&a->arena, m->n_body * sizeof *list) : NULL;
    char *buf = NULL;
    size_t cap = 0;
    bool ok = true;
    for (size_t k = 0; k < m->n_body && ok; k++) {
        const char *s = m->body[k].text;
        size_t n = 0;
        while (*s) {
            const char *piece = s;
            size_t piece_len = 1;
            char num[24];
            if (*s == '\\' && s[1] == '@') {
                piece_len = (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)counter);
                piece = num;
                s += 2;
            } else if (*s == '\\' && s[1] == '(' && s[2] == ')') {
                piece_len = 0;
                s += 3;
            } else if (*s == '\\' && asm_is_ident_start((unsigned char)s[1])) {
                const char *q = s + 1;
                while (asm_is_ident_char((unsigned char)*q))
                    q++;
                size_t i;
                for (i = 0; i < np; i++)
                    if (strlen(m->params[i]) == (size_t)(q - s - 1) && !strncmp(m->params[i], s + 1, (size_t)(q - s - 1)))
                        break;
                if (i < np) {
                    piece = val[i];
                    piece_len = strlen(val[i]);
                    s = q;
                } else
                    s++;
            } else
                s++;
            if (n + piece_len + 1 > cap) {
                if (n + piece_len + 1 > ASM_MAX_LINE_BYTES) {
                    asm_error(a, m->body[k].loc, "macro '%s' expands to a statement longer than %u bytes%s",
                              m->name, ASM_MAX_LINE_BYTES, note_s);
                    ok = false;
                    break;
                }
                cap = (n + piece_len + 1) * 2;
                buf = asm_xrealloc(buf, cap);
            }
            memcpy(buf + n, piece, piece_len);
            n += piece_len;
        }
        if (!ok)
            break;
        a->expansion_bytes += n + 1;
        if (a->expansion_bytes > ASM_MAX_EXPANSION_BYTES) {
            asm_error(a, loc, "macro expansions exceed %u MiB of text (a runaway macro?)", ASM_MAX_EXPANSION_BYTES >> 20);
            a->stop = true;
            ok = false;
            break;
        }
        list[k].text = asm_strndup(&a->arena, buf ? buf : "", n);
        list[k].loc = m->body[k].loc;
        list[k].loc.note = note_s;
    }
    free(buf);
    free(val);
    if (!ok || !m->n_body)
        return;
    asm_frame *f = push_frame(a, FR_LIST, loc);
    if (!f)
        return;
    f->list = list;
    f->n = m->n_body;
    f->reps_left = 1;
    f->is_macro = true;
    a->macro_depth++;
}

void asm_exit_macro(asm_ctx *a, asm_loc loc)
{
    int i = a->n_frames - 1;
    while (i >= 0 && !a->frames[i]->is_macro)
        i--;
    if (i < 0) {
        asm_error(a, loc, "'.exitm' outside a macro");
        return;
    }
    /* Conditionals opened inside the macro end with it. */
    while (a->n_conds && a->conds[a->n_conds - 1].depth > i)
        a->n_conds--;
    while (a->n_frames > i)
        pop_frame(a);
}
