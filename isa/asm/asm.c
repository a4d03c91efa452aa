/*
 * asm.c — the assembler's first pass and its entry points: statements
 * (labels, conditionals, bundles, and the dispatch to directives, macros
 * and instructions), symbol definitions, error messages, and the two
 * passes put together.
 *
 * Pass 1 reads every statement once (after .include, macro and .rept
 * expansion), selects the instruction row for each mnemonic from the kinds
 * of the operands written, and gives every statement its size, so every
 * label gets its offset in its section.  Sections without an address are
 * then placed (asm.h says where).  Pass 2 evaluates every expression with
 * all addresses known, encodes with isa_encode(), and checks what needs
 * addresses: bundle and instruction alignment, immediate ranges, branch
 * targets, rpt bodies.  If pass 1 found errors pass 2 does not run, so a
 * mistake is reported once and not again as a cascade of shifted
 * addresses.
 */
#include "asm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_internal.h"

/* ---- errors ---------------------------------------------------------------- */

void asm_error(asm_ctx *a, asm_loc loc, const char *fmt, ...)
{
    if (a->n_errors >= ASM_MAX_ERRORS) {
        a->too_many_errors = true;
        a->stop = true;
        return;
    }
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *file = loc.file < a->n_files ? a->files[loc.file] : "<input>";
    size_t n = strlen(file) + strlen(msg) + (loc.note ? strlen(loc.note) : 0) + 48;
    char *full = asm_alloc(&a->arena, n);
    snprintf(full, n, "%s:%u:%u: error: %s%s", file, loc.line, loc.col, msg, loc.note ? loc.note : "");
    ASM_GROW(a->errors, a->n_errors, a->cap_errors);
    a->errors[a->n_errors++] = full;
}

/* "'foo'" or "end of line", for "found ..." in messages. */
void asm_found_text(const char *p, char *buf, size_t n)
{
    p = asm_skip_space(p);
    if (!*p) {
        snprintf(buf, n, "end of line");
        return;
    }
    size_t len = 0;
    while (p[len] && p[len] != ',' && !asm_is_space((unsigned char)p[len]) && len < 40)
        len++;
    if (!len)
        len = 1;
    snprintf(buf, n, "'%.*s'", (int)len, p);
}

/* Report anything but the end of the statement at p. */
bool asm_expect_end(asm_ctx *a, const char *text, const char *p, asm_loc loc, const char *after)
{
    p = asm_skip_space(p);
    if (!*p)
        return true;
    char found[64];
    asm_found_text(p, found, sizeof found);
    asm_error(a, asm_at(loc, text, p), "expected end of statement after %s, found %s", after, found);
    return false;
}

/* ---- symbols ------------------------------------------------------------------- */

static asm_symbol *new_symbol(asm_ctx *a, const char *name, uint32_t ns, asm_loc loc)
{
    ASM_GROW(a->syms, a->n_syms, a->cap_syms);
    asm_symbol *s = &a->syms[a->n_syms];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->loc = loc;
    asm_map_put(&a->names, name, ns, (uint32_t)a->n_syms);
    a->n_syms++;
    return s;
}

/* A label at the current position, on every tile of the current set. */
static void define_label(asm_ctx *a, const char *name, const char *shown, bool internal, asm_loc loc)
{
    asm_section *sec = asm_cur_sec(a, loc);
    const asm_tileset *set = asm_set(a, a->cur_set);
    for (uint32_t i = 0; i < set->n; i++) {
        asm_symbol *old = asm_find_label(a, name, set->tiles[i]);
        if (old) {
            asm_error(a, loc, "symbol '%s' is already defined at %s:%u:%u", shown, a->files[old->loc.file],
                      old->loc.line, old->loc.col);
            return;
        }
    }
    asm_symbol *old = asm_find_const(a, name);
    if (old) {
        asm_error(a, loc, "'%s' is already defined as a constant at %s:%u:%u", shown, a->files[old->loc.file],
                  old->loc.line, old->loc.col);
        return;
    }
    if (!asm_count_copies(a, set->n, loc))
        return;
    for (uint32_t i = 0; i < set->n; i++) {
        asm_symbol *s = new_symbol(a, name, set->tiles[i], loc);
        s->kind = SYM_LABEL;
        s->internal = internal;
        s->tile = set->tiles[i];
        s->section = a->cur_section;
        s->offset = sec->size;
        s->block = a->block;
    }
    if (!internal)
        sec->n_labels++;
}

void asm_define_symbol(asm_ctx *a, const char *name, uint8_t type, asm_expr *size, bool global, asm_loc loc)
{
    asm_section *sec = asm_cur_sec(a, loc);
    const asm_tileset *set = asm_set(a, a->cur_set);
    if (!asm_count_copies(a, set->n, loc))
        return;
    for (uint32_t i = 0; i < set->n; i++) {
        ASM_GROW(a->syms, a->n_syms, a->cap_syms);
        asm_symbol *s = &a->syms[a->n_syms++];
        memset(s, 0, sizeof *s);
        s->name = name;
        s->loc = loc;
        s->kind = SYM_LABEL;
        s->unnamed = true;
        s->type = type;
        s->global = global;
        s->expr = size;
        s->tile = set->tiles[i];
        s->section = a->cur_section;
        s->offset = sec->size;
        s->block = a->block;
    }
    sec->n_labels++;
}

/* NAME = EXPR, .set, .equ or .equiv (how: DEF_SET or DEF_EQUIV). */
void asm_define_const(asm_ctx *a, const char *name, asm_expr *e, int how, asm_loc loc)
{
    const asm_tileset *set = asm_set(a, a->cur_set);
    for (uint32_t i = 0; i < set->n; i++) {
        asm_symbol *lab = asm_find_label(a, name, set->tiles[i]);
        if (lab) {
            asm_error(a, loc, "'%s' is already defined as a label at %s:%u:%u", name, a->files[lab->loc.file],
                      lab->loc.line, lab->loc.col);
            return;
        }
    }
    asm_symbol *s = asm_find_const(a, name);
    if (s && how == DEF_EQUIV) {
        asm_error(a, loc, "'.equiv' symbol '%s' is already defined at %s:%u:%u", name, a->files[s->loc.file],
                  s->loc.line, s->loc.col);
        return;
    }
    asm_value v;
    enum asm_eval_status st = asm_eval(a, e, a->cur_tile, loc, EVAL_NOW, &v);
    if (st == EV_ERROR)
        return;
    if (!s) {
        s = new_symbol(a, name, ASM_NS_CONST, loc);
        s->kind = SYM_CONST;
    }
    s->loc = loc;
    if (st == EV_OK && v.section < 0) {
        s->known = true;
        s->value = v.v;
        s->expr = NULL;
    } else {
        s->known = false;
        s->expr = e;
        s->expr_tile = a->cur_tile;
    }
}

/* ---- conditionals ----------------------------------------------------------------- */

static bool cond_active(const asm_ctx *a)
{
    return a->n_conds == 0 || a->conds[a->n_conds - 1].active;
}

/* Split ".ifc a, b" arguments: compare the two trimmed strings. */
static bool ifc_equal(const char *args)
{
    const char *p = asm_skip_space(args);
    const char *comma = strchr(p, ',');
    if (!comma)
        return !*p;
    const char *e1 = comma;
    while (e1 > p && asm_is_space((unsigned char)e1[-1]))
        e1--;
    const char *q = asm_skip_space(comma + 1);
    const char *e2 = q + strlen(q);
    while (e2 > q && asm_is_space((unsigned char)e2[-1]))
        e2--;
    return e1 - p == e2 - q && !strncmp(p, q, (size_t)(e1 - p));
}

/* Evaluate the condition of an .if-family directive. */
static bool cond_value(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc base, bool *ok)
{
    *ok = true;
    if (!strcmp(dir, ".if") || !strcmp(dir, ".elseif")) {
        int64_t v;
        const char *p = args;
        char what[16];
        snprintf(what, sizeof what, "'%s'", dir);
        if (!asm_parse_const(a, text, &p, base, what, &v) || !asm_expect_end(a, text, p, base, "the condition")) {
            *ok = false;
            return false;
        }
        return v != 0;
    }
    if (!strcmp(dir, ".ifdef") || !strcmp(dir, ".ifndef")) {
        const char *p = asm_skip_space(args);
        const char *s = p;
        while (asm_is_ident_char((unsigned char)*p))
            p++;
        if (p == s) {
            asm_error(a, asm_at(base, text, s), "expected a symbol name after '%s'", dir);
            *ok = false;
            return false;
        }
        char *name = asm_strndup(&a->arena, s, (size_t)(p - s));
        if (!asm_expect_end(a, text, p, base, "the symbol name")) {
            *ok = false;
            return false;
        }
        bool def = asm_find_label(a, name, a->cur_tile) || asm_find_const(a, name);
        return dir[3] == 'd' ? def : !def;
    }
    if (!strcmp(dir, ".ifb") || !strcmp(dir, ".ifnb")) {
        bool blank = !*asm_skip_space(args);
        return dir[3] == 'b' ? blank : !blank;
    }
    /* .ifc / .ifnc */
    bool eq = ifc_equal(args);
    return dir[3] == 'c' ? eq : !eq;
}

static bool is_if(const char *d)
{
    return !strcmp(d, ".if") || !strcmp(d, ".ifdef") || !strcmp(d, ".ifndef") || !strcmp(d, ".ifb") ||
           !strcmp(d, ".ifnb") || !strcmp(d, ".ifc") || !strcmp(d, ".ifnc");
}

/* Handle .if/.elseif/.else/.endif; true if the directive was one. */
static bool conditional(asm_ctx *a, const char *dir, const char *text, const char *args, asm_loc base,
                        asm_loc loc, int depth)
{
    if (is_if(dir)) {
        if (a->n_conds == ASM_MAX_COND_DEPTH) {
            asm_error(a, loc, "conditionals nested more than %d deep", ASM_MAX_COND_DEPTH);
            a->stop = true;
            return true;
        }
        bool parent = cond_active(a);
        bool ok = true, v = parent ? cond_value(a, dir, text, args, base, &ok) : false;
        a->conds[a->n_conds++] = (asm_cond){ parent, parent && ok && v, !parent || !ok || v, false, depth, loc };
        return true;
    }
    bool is_else = !strcmp(dir, ".else"), is_elseif = !strcmp(dir, ".elseif"), is_endif = !strcmp(dir, ".endif");
    if (!is_else && !is_elseif && !is_endif)
        return false;
    if (!a->n_conds) {
        asm_error(a, loc, "'%s' without '.if'", dir);
        return true;
    }
    asm_cond *c = &a->conds[a->n_conds - 1];
    if (is_endif) {
        asm_expect_end(a, text, args, base, "'.endif'");
        a->n_conds--;
        return true;
    }
    if (c->seen_else) {
        asm_error(a, loc, "'%s' after '.else' (the '.if' is at line %u)", dir, c->loc.line);
        return true;
    }
    if (is_else) {
        c->seen_else = true;
        c->active = c->parent_active && !c->taken;
        c->taken = true;
        asm_expect_end(a, text, args, base, "'.else'");
        return true;
    }
    if (c->parent_active && !c->taken) {
        bool ok;
        bool v = cond_value(a, ".elseif", text, args, base, &ok);
        c->active = ok && v;
        c->taken = !ok || v;
    } else
        c->active = false;
    return true;
}

/* ---- statements -------------------------------------------------------------------- */

/* A label definition at p: "name:", "123:" or "\"name\":".  Returns the
 * position after ':' or NULL. */
static const char *label_at(const char *p, const char **name, size_t *len, int *type)
{
    const char *q = p;
    if (*p == '"') {
        q = p + 1;
        while (*q && *q != '"')
            q++;
        if (*q != '"' || q == p + 1 || q[1] != ':')
            return NULL;
        *name = p + 1;
        *len = (size_t)(q - p - 1);
        *type = 2;
        return q + 2;
    }
    if (*p >= '0' && *p <= '9') {
        while (*q >= '0' && *q <= '9')
            q++;
        if (*q != ':' || q - p > 40)
            return NULL;
        *type = 1;
    } else if (asm_is_ident_start((unsigned char)*p)) {
        while (asm_is_ident_char((unsigned char)*q))
            q++;
        if (*q != ':' || (q - p == 1 && *p == '.'))
            return NULL;
        *type = 0;
    } else
        return NULL;
    *name = p;
    *len = (size_t)(q - p);
    return q + 1;
}

/* The directive word at p (".word"), into buf; empty if p is not one. */
static const char *directive_word(const char *p, char *buf, size_t n)
{
    p = asm_skip_space(p);
    buf[0] = 0;
    if (*p != '.' || !asm_is_ident_char((unsigned char)p[1]))
        return p;
    const char *q = p + 1;
    while (asm_is_ident_char((unsigned char)*q))
        q++;
    size_t len = (size_t)(q - p);
    if (len < n) {
        memcpy(buf, p, len);
        buf[len] = 0;
    }
    return q;
}

static void finish_collecting(asm_ctx *a)
{
    asm_stmt_text *body = NULL;
    if (a->n_collect) {
        body = asm_alloc(&a->arena, a->n_collect * sizeof *body);
        memcpy(body, a->collect_body, a->n_collect * sizeof *body);
    }
    if (a->collecting == 1) {
        if (a->collect_macro) {
            a->collect_macro->body = body;
            a->collect_macro->n_body = a->n_collect;
        }
    } else
        asm_push_rept(a, body, a->n_collect, a->collect_count, a->collect_loc);
    a->collecting = 0;
    a->collect_macro = NULL;
    a->n_collect = 0;
}

/* A statement while a .macro or .rept body is being collected: kept for the
 * body, or the .endm/.endr that ends it.  False when the source the body
 * began in has ended without one; the statement is then assembled. */
static bool collect_stmt(asm_ctx *a, asm_stmt_text *st, int depth)
{
    char dir[40];
    if (depth < a->collect_depth) {
        asm_error(a, a->collect_loc, a->collecting == 1 ? "'.macro' without '.endm'" : "'.rept' without '.endr'");
        a->collecting = 0;
        a->n_collect = 0;
        return false;
    }
    directive_word(st->text, dir, sizeof dir);
    if (!strcmp(dir, ".macro") || !strcmp(dir, ".rept") || !strcmp(dir, ".irp"))
        a->collect_nest++;
    else if (!strcmp(dir, ".endm") || !strcmp(dir, ".endr")) {
        bool closes = a->collecting == 1 ? !strcmp(dir, ".endm") : !strcmp(dir, ".endr");
        if (a->collect_nest == 0 && closes) {
            finish_collecting(a);
            return true;
        }
        if (a->collect_nest > 0)
            a->collect_nest--;
    }
    ASM_GROW(a->collect_body, a->n_collect, a->cap_collect);
    a->collect_body[a->n_collect++] = *st;
    return true;
}

/* Define the labels that begin the statement at p; returns what follows
 * them. */
static const char *define_labels(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    const char *name;
    size_t len;
    int type;
    const char *after;
    while ((after = label_at(p, &name, &len, &type))) {
        asm_loc l = asm_at(loc, text, p);
        if (a->in_bundle) {
            asm_error(a, l, "label '%.*s' inside a bundle (the bundle opened at line %u)", (int)len, name,
                      a->bundle_loc.line);
            a->bundle_failed = true;
        } else if (type == 1) {
            int64_t k = asm_local_count(a, name, len, true);
            define_label(a, asm_local_name(a, name, len, k), asm_strndup(&a->arena, name, len), true, l);
        } else {
            char *nm = asm_strndup(&a->arena, name, len);
            define_label(a, nm, nm, false, l);
        }
        p = asm_skip_space(after);
    }
    return p;
}

/* The '{' at p opens a bundle; returns what follows it. */
static const char *open_bundle(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    asm_loc ploc = asm_at(loc, text, p);
    const char *name;
    size_t len;
    int type;
    if (a->in_bundle) {
        asm_error(a, ploc, "'{' inside a bundle (the bundle opened at line %u)", a->bundle_loc.line);
        a->bundle_failed = true;
    } else {
        a->in_bundle = true;
        a->bundle_loc = ploc;
        a->n_bundle = 0;
        a->bundle_failed = false;
    }
    p = asm_skip_space(p + 1);
    if (label_at(p, &name, &len, &type)) {
        asm_error(a, asm_at(loc, text, p), "label '%.*s' inside a bundle (the bundle opened at line %u)", (int)len,
                  name, a->bundle_loc.line);
        a->bundle_failed = true;
        p = asm_skip_space(label_at(p, &name, &len, &type));
    }
    return p;
}

/* The directive dir (its arguments at args) of the statement at p. */
static void directive_stmt(asm_ctx *a, const char *dir, const char *text, const char *p, const char *args,
                           asm_loc loc, int depth)
{
    if (a->in_bundle) {
        asm_error(a, asm_at(loc, text, p), "directive '%s' inside a bundle (the bundle opened at line %u)", dir,
                  a->bundle_loc.line);
        a->bundle_failed = true;
    } else if (asm_directive(a, dir, text, args, asm_at(loc, text, p), loc) && a->collecting)
        a->collect_depth = depth;
}

/* The instruction at p, alone or as half of the open bundle. */
static void insn_stmt(asm_ctx *a, const char *text, const char *p, asm_loc loc)
{
    asm_cur_sec(a, asm_at(loc, text, p));   /* `.` in operands needs a section */
    asm_insn *in = asm_parse_insn(a, text, p, loc);
    if (!in) {
        if (a->in_bundle)
            a->bundle_failed = true;
    } else if (a->in_bundle)
        asm_add_to_bundle(a, in);
    else
        asm_single_insn(a, in);
}

/* The statement at p, after its labels and bundle braces: a directive,
 * NAME = EXPR, a macro call or an instruction.  brace is the '}' that
 * closes the bundle on this statement, or NULL.  Returns whether the bundle
 * closes now; after a macro call it closes after the macro's statements. */
static bool assemble_stmt(asm_ctx *a, const char *text, const char *p, asm_loc loc, int depth, const char *brace)
{
    char dir[40];
    const char *args = directive_word(p, dir, sizeof dir);
    if (dir[0]) {
        directive_stmt(a, dir, text, p, args, loc, depth);
        return brace != NULL;
    }
    const char *w = p;
    while (asm_is_ident_char((unsigned char)*w))
        w++;
    const char *after_word = asm_skip_space(w);
    if (w > p && after_word[0] == '=' && after_word[1] != '=' && !a->in_bundle) {
        /* NAME = EXPR */
        char *cname = asm_strndup(&a->arena, p, (size_t)(w - p));
        const char *q = after_word + 1;
        asm_cur_sec(a, loc);
        asm_expr *e = asm_parse_expr(a, text, &q, loc);
        if (e && asm_expect_end(a, text, q, loc, "the value"))
            asm_define_const(a, cname, e, DEF_SET, asm_at(loc, text, p));
        return brace != NULL;
    }
    asm_macro *m = w > p ? asm_find_macro(a, asm_strndup(&a->arena, p, (size_t)(w - p))) : NULL;
    if (m) {
        if (brace) {
            /* The bundle closes after the macro's statements. */
            static char closing_brace[] = "}";
            asm_stmt_text *closing = asm_alloc(&a->arena, sizeof *closing);
            closing->text = closing_brace;
            closing->loc = asm_at(loc, text, brace);
            closing->loc.note = loc.note;
            asm_push_rept(a, closing, 1, 1, loc);
        }
        asm_push_macro(a, m, w, asm_at(loc, text, p));
        return false;
    }
    insn_stmt(a, text, p, loc);
    return brace != NULL;
}

static void process_stmt(asm_ctx *a, asm_stmt_text *st, int depth)
{
    if (a->collecting && collect_stmt(a, st, depth))
        return;
    const char *text = st->text;
    asm_loc loc = st->loc;
    char dir[40];

    /* Find the statement's keyword behind any labels. */
    const char *p = asm_skip_space(text);
    const char *name;
    size_t len;
    int type;
    const char *after;
    const char *body = p;
    while ((after = label_at(body, &name, &len, &type)))
        body = asm_skip_space(after);
    const char *args = directive_word(body, dir, sizeof dir);

    if (dir[0] && conditional(a, dir, text, args, loc, asm_at(loc, text, body), depth))
        return;
    if (!cond_active(a))
        return;

    p = define_labels(a, text, p, loc);
    if (!*p)
        return;

    /* Bundles. */
    if (*p == '{')
        p = open_bundle(a, text, p, loc);
    const char *brace = NULL;
    size_t n = strlen(p);
    while (n && asm_is_space((unsigned char)p[n - 1]))
        n--;
    if (n && p[n - 1] == '}') {
        if (!a->in_bundle) {
            asm_error(a, asm_at(loc, text, p + n - 1), "'}' without '{'");
            return;
        }
        /* A copy without the '}', so columns stay those of the source. */
        size_t off = (size_t)(p - text);
        char *copy = asm_strndup(&a->arena, text, strlen(text));
        copy[off + n - 1] = ' ';
        text = copy;
        p = copy + off;
        brace = p + n - 1;
    }
    p = asm_skip_space(p);
    bool close = brace != NULL;
    if (*p)
        close = assemble_stmt(a, text, p, loc, depth, brace);
    if (close)
        asm_close_bundle(a);
}

static void report(asm_ctx *a, char *err, size_t err_size)
{
    if (!err || !err_size)
        return;
    size_t used = 0;
    err[0] = 0;
    for (size_t i = 0; i < a->n_errors && used + 1 < err_size; i++) {
        int k = snprintf(err + used, err_size - used, "%s%s", i ? "\n" : "", a->errors[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    if (a->too_many_errors && used + 1 < err_size)
        snprintf(err + used, err_size - used, "\ntoo many errors; stopping");
}

static void ctx_init(asm_ctx *a, const asm_options *opt)
{
    memset(a, 0, sizeof *a);
    isa_init();
    if (opt)
        a->opt = *opt;
    a->cur_tile = a->opt.default_tile;
    a->cur_set = asm_tileset_intern(a, &a->cur_tile, 1);
    a->cur_section = -1;
    int32_t none[ISA_MAX_OPERANDS] = {0};
    if (!isa_encode(ISA_OP_NOP, none, &a->nop_word, NULL, 0))
        a->nop_word = 0;
}

static void ctx_free(asm_ctx *a)
{
    asm_free_sources(a);
    for (size_t i = 0; i < a->n_sections; i++) {
        free(a->sections[i].bytes);
        free(a->sections[i].stmts);
    }
    free(a->sections);
    free(a->stmts);
    free(a->syms);
    free(a->attrs);
    free(a->entries);
    free(a->local_counts);
    free(a->macros);
    free(a->collect_body);
    free(a->files);
    free(a->errors);
    asm_map_free(&a->names);
    asm_map_free(&a->section_names);
    asm_map_free(&a->entry_tiles);
    free(a->sets);
    free(a->set_slots);
    asm_arena_free(&a->arena);
}

static ipu_exe *assemble(asm_ctx *a, char *err, size_t err_size)
{
    asm_stmt_text st;
    int depth;
    while (!a->stop && asm_next_stmt(a, &st, &depth))
        process_stmt(a, &st, depth);
    if (!a->stop) {
        if (a->collecting)
            asm_error(a, a->collect_loc, a->collecting == 1 ? "'.macro' without '.endm'" : "'.rept' without '.endr'");
        for (int i = 0; i < a->n_conds; i++)
            asm_error(a, a->conds[i].loc, "'.if' without '.endif'");
        if (a->in_bundle)
            asm_error(a, a->bundle_loc, "bundle '{' is not closed with '}'");
    }
    ipu_exe *e = asm_output(a);
    if (!e)
        report(a, err, err_size);
    else if (err && err_size)
        err[0] = 0;
    ctx_free(a);
    return e;
}

ipu_exe *asm_assemble_file(const char *path, const asm_options *opt, char *err, size_t err_size)
{
    asm_ctx a;
    ctx_init(&a, opt);
    if (!asm_push_file(&a, path, path, (asm_loc){ 0, 0, 0, NULL })) {
        report(&a, err, err_size);
        ctx_free(&a);
        return NULL;
    }
    return assemble(&a, err, err_size);
}

ipu_exe *asm_assemble_string(const char *text, const char *name, const asm_options *opt, char *err,
                             size_t err_size)
{
    asm_ctx a;
    ctx_init(&a, opt);
    asm_push_string(&a, text ? text : "", name ? name : "<string>");
    return assemble(&a, err, err_size);
}
