/*
 * commands.c — option parsing shared by the subcommands, and the small
 * ones: asm, disasm, machines.
 */
#include "commands.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/diag.h"
#include "exchange/exchange.h"
#include "isa/elf/executable.h"
#include "sim/base/fileio.h"
#include "isa/asm/asm.h"
#include "isa/asm/disasm.h"

const char *cli_value(const command *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        fatal("%s: option %s needs a value\nusage: %s", cmd->name, argv[*i], cmd->usage);
    return argv[++*i];
}

bool cli_parse_u64(const char *v, uint64_t max, uint64_t *out, const char **end_out)
{
    /* strtoull takes a sign and leading blanks, and wraps a minus sign
     * round: only digits are a count. */
    if (!isdigit((unsigned char)v[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    if (errno == ERANGE || n > max || (!end_out && *end))
        return false;
    if (end_out)
        *end_out = end;
    *out = n;
    return true;
}

int cli_threads_value(const command *cmd, int argc, char **argv, int *i)
{
    const char *v = cli_value(cmd, argc, argv, i);
    uint64_t t;
    if (!cli_parse_u64(v, 1024, &t, NULL) || t == 0)
        cli_usage_error(cmd, "--threads: '%s' is not a thread count (1..1024)", v);
    return (int)t;
}

uint64_t cli_cycles_value(const command *cmd, int argc, char **argv, int *i)
{
    const char *v = cli_value(cmd, argc, argv, i);
    uint64_t c;
    if (!cli_parse_u64(v, UINT64_MAX, &c, NULL) || c == 0)
        cli_usage_error(cmd, "--max-cycles: '%s' is not a positive number", v);
    return c;
}

bool cli_check_output(const char *path, char *err, size_t err_size)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        /* A device or a FIFO is written in place at the end. */
        if (access(path, W_OK) != 0) {
            snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
            return false;
        }
        return true;
    }
    /* The file as it will be written: a temporary beside it, created and
     * removed again. */
    atomic_file f;
    if (!afile_open(&f, path, err, err_size))
        return false;
    afile_abort(&f);
    return true;
}

/* The file path names: its real path when it exists, else the real path
 * of its folder and its name; false when neither resolves. */
static bool output_identity(const char *path, char *buf, size_t size)
{
    char real[PATH_MAX];
    if (realpath(path, real)) {
        snprintf(buf, size, "%s", real);
        return true;
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!realpath(dir, real))
        return false;
    snprintf(buf, size, "%s/%s", real, slash ? slash + 1 : path);
    return true;
}

bool cli_same_output(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return true;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    return output_identity(a, ra, sizeof ra) && output_identity(b, rb, sizeof rb) && !strcmp(ra, rb);
}

_Noreturn void cli_usage_error(const command *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "ipusim %s: ", cmd->name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s\n", cmd->usage);
    exit(2);
}

void cli_positional(const command *cmd, const char *arg, const char **slot)
{
    if (arg[0] == '-')
        cli_usage_error(cmd, "unknown option '%s'", arg);
    if (*slot)
        cli_usage_error(cmd, "unexpected argument '%s'", arg);
    *slot = arg;
}

void cli_require_positional(const command *cmd, const char *arg, const char *missing)
{
    if (!arg)
        cli_usage_error(cmd, "%s", missing);
}

bool cli_write_json(const char *path, cJSON *root, char *err, size_t err_size)
{
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, err_size, "%s: out of memory", path);
        return false;
    }
    size_t len = strlen(text);
    text[len] = '\n';           /* cJSON_Print's buffer has room: it ends in NUL */
    bool ok = afile_write_all(path, text, len + 1, err, err_size);
    free(text);
    return ok;
}

/* The --set and --config options of this command line, in order, so that
 * they can be applied again to the machine an executable names when the
 * command line names none (cli_read_program). */
static struct { const char *opt, *value; } machine_edits[256];
static size_t n_machine_edits;

static void note_machine_edit(const command *cmd, const char *opt, const char *value)
{
    if (n_machine_edits == sizeof machine_edits / sizeof machine_edits[0])
        cli_usage_error(cmd, "too many --set and --config options (at most 256)%s", "");
    machine_edits[n_machine_edits].opt = opt;
    machine_edits[n_machine_edits++].value = value;
}

static void apply_machine_edit(machine *m, const char *opt, const char *value)
{
    char err[512];
    bool ok = !strcmp(opt, "--set") ? machine_set(m, value, err, sizeof err)
                                    : machine_load_config(m, value, err, sizeof err);
    if (!ok)
        fatal("%s", err);
}

bool cli_machine_option(const command *cmd, machine *m, int argc, char **argv, int *i)
{
    char err[512];
    const char *opt = argv[*i];
    if (!strcmp(opt, "--machine") || !strcmp(opt, "-m")) {
        const char *name = cli_value(cmd, argc, argv, i);
        char by[192];
        snprintf(by, sizeof by, "%s %.100s", opt, name);
        if (!machine_choose(m, name, by, err, sizeof err))
            fatal("%s", err);
        return true;
    }
    if (!strcmp(opt, "--set") || !strcmp(opt, "--config")) {
        const char *value = cli_value(cmd, argc, argv, i);
        apply_machine_edit(m, opt, value);
        note_machine_edit(cmd, opt, value);
        return true;
    }
    return false;
}

ipu_exe *cli_read_program(const char *path, machine *const *machines, size_t n_machines, bool may_default)
{
    char err[1024];
    exe_summary s;
    ipu_exe *e = NULL;
    /* A pipe can be read once: taken whole now (within the executable's
     * size limit) and summarised from memory; a file is summarised from its
     * headers and records before its tile images are read. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
        if (!(e = exe_read(path, err, sizeof err)))
            fatal("%s", err);
        if (!exe_summary_of(e, &s))
            fatal("out of memory");
    } else if (!exe_read_summary(path, &s, err, sizeof err)) {
        fatal("%s", err);
    }
    machine built;
    bool known = s.machine.size > 0;
    if (known && !machine_decode(s.machine.bytes, s.machine.size, &built, err, sizeof err))
        fatal("%s: section .ipusim.machine: %s", path, err);
    for (size_t k = 0; k < n_machines; k++) {
        machine *m = machines[k];
        /* No machine named (a config file may name one): the recorded
         * machine, with this command line's --set and --config applied to
         * it in order. */
        if (known && may_default && !m->chosen_by[0]) {
            *m = built;
            for (size_t j = 0; j < n_machine_edits; j++)
                apply_machine_edit(m, machine_edits[j].opt, machine_edits[j].value);
        }
        /* Without a recorded machine the engine checks the tile numbers as it loads. */
        if (known && s.any_tile && !machine_holds_program(m, &built, s.last_tile, err, sizeof err))
            fatal("%s: %s", path, err);
    }
    exe_summary_free(&s);
    if (!e && !(e = exe_read(path, err, sizeof err)))
        fatal("%s", err);
    return e;
}

static char *default_output(const char *input, const char *ext)
{
    size_t n = strlen(input);
    const char *dot = strrchr(input, '.');
    const char *slash = strrchr(input, '/');
    if (dot && (!slash || dot > slash))
        n = (size_t)(dot - input);
    char *out = malloc(n + strlen(ext) + 1);
    if (!out)
        fatal("out of memory");
    memcpy(out, input, n);
    strcpy(out + n, ext);
    return out;
}

int cmd_asm(int argc, char **argv, const command *self)
{
    const char *input = NULL, *output = NULL;
    const char *include_dirs[64];
    size_t n_include = 0;
    machine m;
    char merr[256];
    if (!machine_preset("gc200", &m, merr, sizeof merr))
        fatal("%s", merr);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o"))
            output = cli_value(self, argc, argv, &i);
        else if (cli_machine_option(self, &m, argc, argv, &i))
            continue;
        else if (!strcmp(argv[i], "-I")) {
            if (n_include == 64)
                fatal("asm: too many -I directories (at most 64)");
            include_dirs[n_include++] = cli_value(self, argc, argv, &i);
        } else
            cli_positional(self, argv[i], &input);
    }
    cli_require_positional(self, input, "no source file given");
    char *owned = NULL;
    if (!output)
        output = owned = default_output(input, ".elf");
    asm_options opt = { .include_dirs = include_dirs, .n_include_dirs = n_include,
                        .memory_base = machine_memory_base(&m) };
    char err[4096];
    ipu_exe *e = asm_assemble_file(input, &opt, err, sizeof err);
    if (!e) {
        fprintf(stderr, "%s\n", err);
        free(owned);
        return 1;
    }
    bool ok = exe_write(e, output, err, sizeof err);
    exe_free(e);
    free(owned);
    if (!ok)
        fatal("%s", err);
    return 0;
}

int cmd_disasm(int argc, char **argv, const command *self)
{
    const char *input = NULL, *output = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o"))
            output = cli_value(self, argc, argv, &i);
        else
            cli_positional(self, argv[i], &input);
    }
    cli_require_positional(self, input, "no executable given");
    char err[1024];
    ipu_exe *e = exe_read(input, err, sizeof err);
    if (!e)
        fatal("%s", err);
    bool ok;
    if (output) {
        atomic_file f;
        if (!afile_open(&f, output, err, sizeof err))
            fatal("%s", err);
        ok = disasm_exe(e, f.fp, err, sizeof err);
        if (ok)
            ok = afile_commit(&f, err, sizeof err);
        else
            afile_abort(&f);
    } else {
        ok = disasm_exe(e, stdout, err, sizeof err);
    }
    exe_free(e);
    if (!ok)
        fatal("%s", err);
    return 0;
}

static void print_value(FILE *out, double v)
{
    if (v >= 1e6 && v == (double)(long long)v && ((long long)v % 1000000) == 0 && v >= 1e8)
        fprintf(out, "%13.4g", v);
    else
        fprintf(out, "%13.10g", v);
}

/* How the chips of a system are joined: boards, the pod's torus of boards
 * and the IPU-Link hops from chip 0 to the first chip of every board. */
static void print_topology(const machine *m)
{
    uint32_t chips = machine_u32(m, MP_chips), per = machine_u32(m, MP_chips_per_board);
    if (chips < 2)
        return;
    per = per ? per : 1;
    uint32_t boards = (chips + per - 1) / per, ring = machine_u32(m, MP_board_ring);
    ring = ring ? (ring < boards ? ring : boards) : 1;
    xch_params p = { .chips = chips, .chips_per_board = per, .board_hops = machine_u32(m, MP_board_hops),
                     .board_ring = machine_u32(m, MP_board_ring) };
    printf("topology: %u chip%s on %u board%s of %u (IPU-Links between every pair on a board)", chips,
           chips == 1 ? "" : "s", boards, boards == 1 ? "" : "s", per);
    if (boards > 1) {
        printf("; the boards in a torus of %u row%s of %u, rows and columns wrapping; IPU-Link hops from chip 0 "
               "to the first chip of each board:", (boards + ring - 1) / ring, (boards + ring - 1) / ring == 1 ? "" : "s",
               ring);
        for (uint32_t b = 0; b < boards; b++)
            printf(" %u", xch_chip_hops(&p, 0, b * per));
    }
    uint32_t domains = machine_u32(m, MP_ipu_link_domains);
    if (domains > 1)
        printf("; %u such IPU-Link domains joined by the gateways' GW-Links (%.3g GB/s a board each way), %u chips "
               "in all: the simulation runs one domain, compare estimates the system (the gradients' all-reduce "
               "across the domains modelled)", domains, machine_get(m, MP_gw_link_bandwidth_bytes_per_s) / 1e9,
               chips * domains);
    printf("\n\n");
}

int cmd_machines(int argc, char **argv, const command *self)
{
    machine m;
    char err[512];
    bool show = false;
    const char *json = NULL;
    if (!machine_preset("gc200", &m, err, sizeof err))
        panic("%s", err);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--show")) {
            const char *name = cli_value(self, argc, argv, &i);
            char by[192];
            snprintf(by, sizeof by, "--show %.100s", name);
            if (!machine_choose(&m, name, by, err, sizeof err))
                fatal("%s", err);
            show = true;
        } else if (cli_machine_option(self, &m, argc, argv, &i))
            show = true;
        else if (!strcmp(argv[i], "--json"))
            json = cli_value(self, argc, argv, &i);
        else
            cli_usage_error(self, "unknown argument '%s'", argv[i]);
    }
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON *params = cJSON_AddArrayToObject(root, "parameters");
        for (int p = 0; p < MP_COUNT; p++) {
            const machine_param_info *info = &machine_params[p];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", info->name);
            cJSON_AddStringToObject(o, "unit", info->unit);
            cJSON_AddStringToObject(o, "source", info->source);
            cJSON_AddStringToObject(o, "description", info->description);
            if (show)
                cJSON_AddNumberToObject(o, m.name, m.value[p]);
            else
                for (int k = 0; k < PRESET_COUNT; k++)
                    cJSON_AddNumberToObject(o, machine_preset_names[k],
                                            machine_preset_value((enum machine_preset)k, (enum machine_param)p));
            cJSON_AddItemToArray(params, o);
        }
        if (!cli_write_json(json, root, err, sizeof err))
            fatal("%s", err);
    }
    if (show) {
        printf("machine %s\n\n", m.name);
        print_topology(&m);
        printf("%-36s %13s  %-14s %s\n", "parameter", "value", "unit", "source");
        for (int p = 0; p < MP_COUNT; p++) {
            const machine_param_info *info = &machine_params[p];
            printf("%-36s ", info->name);
            print_value(stdout, m.value[p]);
            printf("  %-14s %s%s\n", info->unit, info->source,
                   m.value[p] != machine_preset_value(m.preset, (enum machine_param)p) ? "  (overridden)" : "");
        }
        return 0;
    }
    printf("presets:\n");
    for (int k = 0; k < PRESET_COUNT; k++)
        printf("  %-10s %s\n", machine_preset_names[k], machine_preset_descriptions[k]);
    printf("\n%-36s", "parameter");
    for (int k = 0; k < PRESET_COUNT; k++)
        printf(" %13s", machine_preset_names[k]);
    printf("  %-14s %s\n", "unit", "source");
    for (int p = 0; p < MP_COUNT; p++) {
        const machine_param_info *info = &machine_params[p];
        printf("%-36s", info->name);
        for (int k = 0; k < PRESET_COUNT; k++) {
            putchar(' ');
            print_value(stdout, machine_preset_value((enum machine_preset)k, (enum machine_param)p));
        }
        printf("  %-14s %s\n", info->unit, info->source);
    }
    printf("\nOverride any parameter with --set NAME=VALUE or --config FILE.json; "
           "`ipusim machines --show NAME` shows one machine.\n");
    return 0;
}
