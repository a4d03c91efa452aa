/*
 * debug_cmd.c — `ipusim debug`: the debugger (sim/debugger/debugger.h) at a
 * terminal.  On a terminal it reads commands with GNU readline: prompt
 * "(ipusim) ", history kept in ~/.ipusim_history, completion of command
 * names, symbols, tensor names, registers and CSRs; an empty line repeats
 * a stepping command (stepi, continue, next-superstep) as gdb does.  When
 * stdin is not a terminal, or with --batch, it reads commands from stdin
 * line by line, echoing each after the prompt, so that scripts and tests
 * see what a person would.  Ctrl-C stops a running program at the next
 * check (engine.h: every 2^20 cycles of a tile, and between events).
 *
 * Exit status: 0; 1 when the executable or an input cannot be read or
 * loaded, and with --batch when a command failed; 2 for a bad option.
 */
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "sim/debugger/debugger.h"
#include "sim/base/diag.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"

#define HISTORY_LINES 1000

static volatile int interrupted;
static debugger *completing;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The line up to the cursor, for the debugger's completion. */
static char complete_line[4096];
static size_t complete_start;

static char *complete_word(const char *text, int state)
{
    (void)text;
    static size_t n;
    if (!state)
        n = 0;
    bool files;
    const char *c = debugger_complete(completing, complete_line, complete_start, n++, &files);
    return c ? strdup(c) : NULL;
}

/* Completion of the word at [start, end) from what comes before it; file
 * names (source FILE) are left to readline. */
static char **complete(const char *text, int start, int end)
{
    snprintf(complete_line, sizeof complete_line, "%.*s", end, rl_line_buffer);
    complete_start = (size_t)start < strlen(complete_line) ? (size_t)start : strlen(complete_line);
    bool files = false;
    debugger_complete(completing, complete_line, complete_start, 0, &files);
    if (files) {
        rl_attempted_completion_over = 0;
        return NULL;
    }
    rl_attempted_completion_over = 1;
    return rl_completion_matches(text, complete_word);
}

static char *history_path(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/.ipusim_history", home);
    return p;
}

/* One command from stdin without readline (NULL at the end). */
static char *read_plain_line(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n && line[n - 1] == '\n')
        line[n - 1] = 0;
    return line;
}

/* The commands an empty line repeats (those that move the program on or back). */
static bool repeatable(const char *line)
{
    static const char *const moves[] = { "stepi", "si", "continue", "c", "next-superstep", "ns", "next", "n", "step",
                                         "s", "reverse-stepi", "rsi", "reverse-next-superstep", "rns", "x" };
    char w[32] = "";
    sscanf(line, "%31[^ /]", w);
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++)
        if (!strcmp(w, moves[i]))
            return true;
    return false;
}

/* Run the commands of a -x script, each echoed after the prompt as if typed;
 * stops at the first that fails (false) or at quit (*quit). */
static bool run_script(debugger *d, const char *path, char *text, size_t size, bool *quit)
{
    char *p = text;
    unsigned line_no = 0;
    while (p < text + size) {
        char *nl = memchr(p, '\n', (size_t)(text + size - p));
        if (nl)
            *nl = 0;
        else
            text[size] = 0;
        line_no++;
        printf("(ipusim) %s\n", p);
        enum debugger_result r = debugger_execute(d, p, stdout);
        fflush(stdout);
        if (r == DEBUGGER_QUIT) {
            *quit = true;
            return true;
        }
        if (r == DEBUGGER_ERROR) {
            fprintf(stderr, "ipusim: %s:%u: the command failed; the rest of the script is not run\n", path, line_no);
            return false;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    return true;
}

int cmd_debug(int argc, char **argv, const command *self)
{
    machine m;
    char err[4096];
    if (!machine_preset("gc200", &m, err, sizeof err))
        fatal("%s", err);
    const char *input = NULL, *script = NULL;
    bool batch = false;
    const char *in_specs[64];
    unsigned n_in = 0;
    debugger_options opt = { 0 };
    for (int i = 1; i < argc; i++) {
        if (cli_machine_option(self, &m, argc, argv, &i))
            continue;
        if (!strcmp(argv[i], "--input")) {
            if (n_in == 64)
                fatal("debug: at most 64 --input options");
            const char *spec = cli_value(self, argc, argv, &i), *eq = strrchr(spec, '=');
            if (!eq || eq == spec || !eq[1])
                cli_usage_error(self, "--input: expected STREAM=FILE or TENSOR=FILE, got '%s'", spec);
            in_specs[n_in++] = spec;
        } else if (!strcmp(argv[i], "-x")) {
            script = cli_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--batch")) {
            batch = true;
        } else if (!strcmp(argv[i], "--max-cycles")) {
            opt.max_cycles = cli_cycles_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--threads")) {
            opt.threads = cli_threads_value(self, argc, argv, &i);
        } else if (!strcmp(argv[i], "--checkpoint-every")) {
            const char *v = cli_value(self, argc, argv, &i);
            uint64_t n;
            if (!cli_parse_u64(v, UINT32_MAX, &n, NULL))
                cli_usage_error(self, "--checkpoint-every: '%s' is not a number of supersteps (0: none)", v);
            opt.checkpoint_every = (uint32_t)n;
            opt.no_checkpoints = n == 0;
        } else if (!strcmp(argv[i], "--checkpoint-budget")) {
            const char *v = cli_value(self, argc, argv, &i);
            uint64_t mib;
            if (!cli_parse_u64(v, 1u << 20, &mib, NULL) || mib == 0)
                cli_usage_error(self, "--checkpoint-budget: '%s' is not a number of MiB (1 to 1048576)", v);
            opt.checkpoint_budget_bytes = mib << 20;
        } else {
            cli_positional(self, argv[i], &input);
        }
    }
    cli_require_positional(self, input, "no executable given");
    /* The script is read before the program is loaded: a missing one is
     * an error before any work. */
    char *script_text = NULL;
    size_t script_size = 0;
    if (script && !read_file_limited(script, READ_LIMIT_SOURCE, "a debugger script may have", READ_STREAMS,
                                     &script_text, &script_size, err, sizeof err))
        fatal("-x: %s", err);
    machine *ms[] = { &m };
    ipu_exe *e = cli_read_program(input, ms, 1, true);
    debugger *d = debugger_new(&m, e, input, &opt, err, sizeof err);
    if (!d)
        fatal("%s: %s", input, err);
    for (unsigned k = 0; k < n_in; k++) {
        const char *eq = strrchr(in_specs[k], '=');
        char *what = strndup(in_specs[k], (size_t)(eq - in_specs[k]));
        if (!what)
            fatal("out of memory");
        if (!debugger_add_input_file(d, what, eq + 1, err, sizeof err))
            fatal("--input %s: %s", what, err);
        free(what);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    debugger_set_interrupt(d, &interrupted);

    int rc = 0;
    bool quit = false;
    bool tty = !batch && isatty(STDIN_FILENO);
    char *hist = NULL;
    if (tty) {
        completing = d;
        rl_readline_name = "ipusim";
        rl_attempted_completion_function = complete;
        rl_basic_word_break_characters = " \t:(";
        hist = history_path();
        using_history();
        stifle_history(HISTORY_LINES);
        if (hist)
            read_history(hist);
    }
    printf("ipusim debugger: %s on %s ('help' lists the commands)\n", input, m.name);
    if (script_text) {
        if (!run_script(d, script, script_text, script_size, &quit))
            rc = 1;
        free(script_text);
    }
    char *last = NULL;
    while (!quit) {
        char *line;
        if (tty) {
            interrupted = 0;
            line = readline("(ipusim) ");
        } else {
            line = read_plain_line();
            if (line)
                printf("(ipusim) %s\n", line);
        }
        if (!line) {
            if (tty)
                printf("\n");
            break;
        }
        /* Completion leaves a blank after the word: not worth keeping. */
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = 0;
        const char *cmd = line;
        if (tty && !line[strspn(line, " \t")] && last && repeatable(last))
            cmd = last;
        else if (tty && line[strspn(line, " \t")]) {
            HIST_ENTRY *prev = history_length ? history_get(history_base + history_length - 1) : NULL;
            if (!prev || strcmp(prev->line, line))
                add_history(line);
        }
        interrupted = 0;
        enum debugger_result r = debugger_execute(d, cmd, stdout);
        fflush(stdout);
        if (cmd == line && line[strspn(line, " \t")]) {
            free(last);
            last = strdup(line);
        }
        free(line);
        if (r == DEBUGGER_QUIT)
            quit = true;
        else if (r == DEBUGGER_ERROR && batch)
            rc = 1;
    }
    if (tty && hist)
        write_history(hist);
    free(hist);
    free(last);
    debugger_free(d);
    exe_free(e);
    return rc;
}
