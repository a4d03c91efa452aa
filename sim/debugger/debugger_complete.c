/*
 * debugger_complete.c — completion of a command line: what may come at the
 * cursor, from the command table's kinds of argument (debugger_commands.c)
 * and info's topics: command names, keywords, contexts, registers and CSRs,
 * tensor names and symbols.
 *
 * A compiled program has about 100,000 symbols but few distinct names (every
 * tile carries the same kernel library), so the distinct names are sorted
 * once, on the first completion, and each candidate is then found by binary
 * search on the prefix: a completion costs a few string compares, not a
 * pass over the symbols.
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

/* A sorted list of names to complete from. */
typedef struct name_list {
    const char *const *names;
    size_t n;
} name_list;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort and drop repeats; returns the new count. */
static size_t sort_distinct(const char **v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_names);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i], v[k - 1]))
            v[k++] = v[i];
    return k;
}

/* The distinct symbol and tensor names and the register names, sorted
 * (made on the first completion). */
static bool build_lists(debugger *d)
{
    if (d->complete_ready)
        return true;
    size_t ns = d->e->n_symbols, nt = d->tmap ? d->tmap->n_tensors : 0;
    d->complete_symbols = malloc((ns ? ns : 1) * sizeof *d->complete_symbols);
    d->complete_tensors = malloc((nt ? nt : 1) * sizeof *d->complete_tensors);
    size_t cap = ISA_CSR_SPACE + 64 + ISA_AACC_WORDS + ISA_CWEI_WORDS;
    d->complete_registers = malloc(cap * sizeof *d->complete_registers);
    d->register_names = malloc(cap * 40);
    if (!d->complete_symbols || !d->complete_tensors || !d->complete_registers || !d->register_names)
        return false;
    for (size_t i = 0; i < ns; i++)
        d->complete_symbols[i] = d->e->symbols[i].name;
    d->n_complete_symbols = sort_distinct(d->complete_symbols, ns);
    for (size_t i = 0; i < nt; i++)
        d->complete_tensors[i] = d->tmap->tensors[i].name;
    d->n_complete_tensors = sort_distinct(d->complete_tensors, nt);
    size_t nr = 0;
#define ADD_REGISTER(...)                                                                            \
    do {                                                                                             \
        char *slot_ = d->register_names + 40 * nr;                                                   \
        snprintf(slot_, 40, __VA_ARGS__);                                                            \
        d->complete_registers[nr++] = slot_;                                                         \
    } while (0)
    for (int r = 0; r < 16; r++) {
        ADD_REGISTER("$m%d", r);
        ADD_REGISTER("$a%d", r);
    }
    static const char *const named[] = { "$pc", "$lr", "$mzero", "$azero", "$cycle", "$superstep", "$tile", "$context" };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        ADD_REGISTER("%s", named[i]);
    for (unsigned c = 0; c < ISA_CSR_SPACE; c++)
        if (isa_csr_name(c))
            ADD_REGISTER("$%s", isa_csr_name(c));
    for (unsigned r = 0; r < ISA_AACC_WORDS; r++)
        ADD_REGISTER("$aacc%u", r);
    for (unsigned r = 0; r < ISA_CWEI_WORDS; r++)
        ADD_REGISTER("$cwei%u", r);
#undef ADD_REGISTER
    d->n_complete_registers = sort_distinct(d->complete_registers, nr);
    d->complete_ready = true;
    return true;
}

/* The first name of a sorted list at or after prefix. */
static size_t lower_bound(const name_list *l, const char *prefix)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(l->names[mid], prefix) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The names of a sorted list that start with prefix: [*first, return). */
static size_t prefix_range(const name_list *l, const char *prefix, size_t *first)
{
    size_t len = strlen(prefix), lo = lower_bound(l, prefix), hi = l->n, a = lo;
    while (a < hi) {
        size_t mid = a + (hi - a) / 2;
        if (!strncmp(l->names[mid], prefix, len))
            a = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    return a;
}

/* The n-th name that starts with word over the lists in turn (*n counts
 * down past each list's matches), or NULL. */
static const char *nth_in_lists(const name_list *lists, size_t n_lists, const char *word, size_t *n)
{
    for (size_t i = 0; i < n_lists; i++) {
        size_t first, end = prefix_range(&lists[i], word, &first);
        if (*n < end - first)
            return lists[i].names[first + *n];
        *n -= end - first;
    }
    return NULL;
}

/* The n-th unsorted keyword that starts with word. */
static const char *nth_keyword(const char *const *kw, size_t count, const char *word, size_t *n)
{
    size_t len = strlen(word);
    for (size_t i = 0; i < count; i++)
        if (!strncmp(kw[i], word, len) && (*n)-- == 0)
            return kw[i];
    return NULL;
}

#define NTH_KEYWORD(kw, word, n) nth_keyword((kw), sizeof(kw) / sizeof((kw)[0]), (word), (n))

/* The n-th candidate of an argument of this kind. */
static const char *complete_kind(debugger *d, enum dbg_arg_kind kind, const char *word, size_t n, bool *files)
{
    static const char *const contexts[] = { "sup", "w1", "w2", "w3", "w4", "w5", "w6" };
    static const char *const location_words[] = { "cycle", "superstep" };
    static const char *const goto_words[] = { "superstep" };
    static const char *const all_word[] = { "all" };
    const char *c;
    name_list symbols = { d->complete_symbols, d->n_complete_symbols };
    name_list tensors = { d->complete_tensors, d->n_complete_tensors };
    name_list registers = { d->complete_registers, d->n_complete_registers };
    switch (kind) {
    case DA_LOCATION:
        if ((c = NTH_KEYWORD(location_words, word, &n)))
            return c;
        return nth_in_lists(&symbols, 1, word, &n);
    case DA_EXPR:
        if (word[0] == '$')
            return nth_in_lists(&registers, 1, word, &n);
        {
            name_list both[2] = { tensors, symbols };
            return nth_in_lists(both, 2, word, &n);
        }
    case DA_WATCH: return nth_in_lists(&symbols, 1, word, &n);
    case DA_CONTEXT: return NTH_KEYWORD(contexts, word, &n);
    case DA_GOTO: return NTH_KEYWORD(goto_words, word, &n);
    case DA_BREAKPOINT:
    case DA_DISPLAY: return NTH_KEYWORD(all_word, word, &n);
    case DA_FILE: *files = true; return NULL;
    case DA_COMMAND:
        for (size_t i = 0; i < dbg_n_commands; i++)
            if (!strncmp(dbg_commands[i].name, word, strlen(word)) && n-- == 0)
                return dbg_commands[i].name;
        return NULL;
    case DA_INFO:
        for (size_t i = 0; i < dbg_n_info_topics; i++)
            if (!strncmp(dbg_info_topics[i].name, word, strlen(word)) && n-- == 0)
                return dbg_info_topics[i].name;
        return NULL;
    default: return NULL;
    }
}

/* The info topic a word names (a prefix), or NULL. */
static const dbg_info_topic *find_topic(const char *w)
{
    for (size_t i = 0; i < dbg_n_info_topics; i++)
        if (!strncmp(dbg_info_topics[i].name, w, strlen(w)))
            return &dbg_info_topics[i];
    return NULL;
}

/* What kind of argument the word after `words` (the command's, after its
 * name) is; DA_NONE when nothing is offered.  *if_word: offer "if". */
static enum dbg_arg_kind kind_at(const dbg_command *c, char words[][128], size_t count, bool *if_word)
{
    for (size_t i = 0; i < count; i++)
        if (!strcmp(words[i], "if"))
            return DA_EXPR;
    if (c->fn == dbg_cmd_info || (c->fn == dbg_cmd_help && count >= 1 && dbg_find_command(words[0], NULL, false) &&
                                  dbg_find_command(words[0], NULL, false)->fn == dbg_cmd_info)) {
        size_t at = c->fn == dbg_cmd_info ? count : count - 1;
        if (at == 0)
            return DA_INFO;
        const dbg_info_topic *t = find_topic(words[count - at]);
        return at == 1 && t ? t->arg : DA_NONE;
    }
    const size_t max_args = sizeof c->args / sizeof c->args[0];
    enum dbg_arg_kind k = c->args[count < max_args ? count : max_args - 1];
    if (count >= 1 && c->args[0] == DA_LOCATION) {
        /* break LOCATION [if EXPR]: after the location, "if"; nothing after
         * the keywords' numbers. */
        bool keyword = !strcmp(words[0], "superstep") || !strcmp(words[0], "cycle");
        *if_word = (c->fn == dbg_cmd_break || c->fn == dbg_cmd_tbreak) && count == (keyword ? 2u : 1u);
        return DA_NONE;
    }
    if (count >= 1 && c->args[0] == DA_GOTO)
        return DA_NONE;
    return k;
}

const char *debugger_complete(debugger *d, const char *line, size_t start, size_t n, bool *files)
{
    *files = false;
    if (!build_lists(d))
        return NULL;
    const char *word = line + start;
    /* The words before the one being completed: the command (cut at a
     * /FMT) and its arguments so far. */
    char words[16][128];
    size_t count = 0;
    const char *p = line;
    while (p < line + start && count < 16) {
        p += strspn(p, " \t");
        if (p >= line + start)
            break;
        size_t len = strcspn(p, " \t");
        /* A word that runs into the one being completed ("7:" before a
         * symbol) is part of that argument, not one before it. */
        if (p + len >= line + start)
            break;
        if (count == 0 && memchr(p, '/', len))
            len = (size_t)((const char *)memchr(p, '/', len) - p);
        snprintf(words[count++], sizeof words[0], "%.*s", (int)len, p);
        p += strcspn(p, " \t");
    }
    if (count == 0)
        return complete_kind(d, DA_COMMAND, word, n, files);
    const dbg_command *c = dbg_find_command(words[0], NULL, false);
    if (!c)
        return NULL;
    bool if_word = false;
    enum dbg_arg_kind kind = kind_at(c, words + 1, count - 1, &if_word);
    if (if_word) {
        static const char *const if_kw[] = { "if" };
        return NTH_KEYWORD(if_kw, word, &n);
    }
    return complete_kind(d, kind, word, n, files);
}

/* Free what the first completion made. */
void dbg_complete_free(debugger *d)
{
    free(d->complete_symbols);
    free(d->complete_tensors);
    free(d->complete_registers);
    free(d->register_names);
}
