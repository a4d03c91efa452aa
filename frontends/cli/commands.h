/*
 * commands.h — what the subcommand handlers share: the command table row
 * and parsing of the options common to several commands.
 */
#ifndef IPUSIM_COMMANDS_H
#define IPUSIM_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontends/autodiff.h"
#include "frontends/lower.h"
#include "isa/elf/executable.h"
#include "sim/program/machine.h"

#define IPUSIM_VERSION "0.1.0"

typedef struct command command;
typedef int (*command_fn)(int argc, char **argv, const command *self);
struct command {
    const char *name;
    command_fn fn;
    const char *summary;
    const char *usage;
};

#define COMMAND(name, fn, summary, usage) int fn(int argc, char **argv, const command *self);
#include "commands.def"
#undef COMMAND

/* Value of an option that takes one (argv[*i] is the option): advances *i;
 * a missing value is a fatal usage error naming the command and option. */
const char *cli_value(const command *cmd, int argc, char **argv, int *i);

/* --machine NAME, --set P=V, --config FILE: applied to m in command-line
 * order, a later value of a parameter replacing an earlier one.  At most one
 * preset is named (by --machine or a config's "preset"; naming the same one
 * again keeps what was set on it), and only before any parameter is set:
 * anything else would silently undo an option, so it is refused, naming both.
 * Returns true if argv[*i] was one of them; bad values are fatal. */
bool cli_machine_option(const command *cmd, machine *m, int argc, char **argv, int *i);

/* The executable at path, read after the machines that will run it are
 * settled and checked: its headers and records are read first (a pipe, which
 * can be read once, is taken whole first), and for each of machines: with
 * may_default and no machine named (--machine, or a config file's "preset"),
 * the machine it was compiled for with the command line's --set and --config
 * applied to it in order (the default, gc200, for one that names none).  A
 * machine that cannot hold it, or an executable that cannot be read, is
 * fatal, saying what it was compiled for and what the machine has. */
ipu_exe *cli_read_program(const char *path, machine *const *machines, size_t n_machines, bool may_default);

/* A count in digits (decimal, or 0x-hexadecimal), at most max, into *out:
 * false for a sign, a blank, no digits, overflow or more than max.  With
 * end_out the number may be followed by more (its end into *end_out);
 * without, it must be all of v. */
bool cli_parse_u64(const char *v, uint64_t max, uint64_t *out, const char **end_out);

/* Whether path can be written as an output at the end of the work: its
 * folder exists and takes a new file, it is not a folder (or it is a
 * device or FIFO that can be opened for writing).  Leaves nothing behind;
 * false with the message the write would give ("F: cannot create: ...",
 * "F: is a directory"). */
bool cli_check_output(const char *path, char *err, size_t err_size);

/* Whether two output paths name one file: the same inode when both exist,
 * else the same real folder and name. */
bool cli_same_output(const char *a, const char *b);

/* The values of --threads (1..1024) and --max-cycles (positive): advance
 * *i past the value; a bad one is a fatal usage error naming it. */
int cli_threads_value(const command *cmd, int argc, char **argv, int *i);
uint64_t cli_cycles_value(const command *cmd, int argc, char **argv, int *i);

/* Whether a command's input names a model (built-in, or an ONNX file) rather
 * than an executable: a file is an executable when it starts as ELF does. */
bool cli_is_model(const char *input);

/* The compile options of `compile`, `validate --model` and `compare MODEL`
 * (--tiles N, --replicas N, --f16-matmul, --no-fuse, --verbose, ...): true
 * when argv[*i] was one (and consumed), fatal usage errors on bad values. */
bool cli_compile_option(const command *cmd, lower_options *o, bool *fuse, int argc, char **argv, int *i);

/* The compile options against the machine, before the model is loaded:
 * --tiles at most the tiles of a chip, --replicas and --pipeline at most
 * its chips; fatal naming the model otherwise. */
void cli_check_compile_options(const char *model, const lower_options *o);

/* argv[i] of a command that takes one positional argument (PROG.elf,
 * MODEL, SOURCE.S) and did not take argv[i] as an option: into *slot; an
 * unknown option or a second positional argument is a usage error. */
void cli_positional(const command *cmd, const char *arg, const char **slot);

/* The positional argument once all are parsed: a usage error saying
 * missing ("no executable given") when there was none. */
void cli_require_positional(const command *cmd, const char *arg, const char *missing);

/* The value of option opt: a finite number, at least 0, and above 0 when
 * positive; a bad one is a fatal usage error naming it (*i advanced). */
double cli_number_value(const command *cmd, const char *opt, int argc, char **argv, int *i, bool positive);

/* The training options of `compile` and `validate --model` (--train,
 * --loss SPEC, --optimizer NAME, --lr X, --momentum X, --weight-decay X,
 * --loss-scale X): true when argv[*i] was one (and consumed), fatal
 * usage errors on bad values. */
typedef struct cli_train {
    bool train;
    bool given;                   /* some training option was given */
    train_options o;
} cli_train;
void cli_train_init(cli_train *t);
bool cli_train_option(const command *cmd, cli_train *t, int argc, char **argv, int *i);

/* The graph of MODEL, a built-in model (workloads/models/models.h) or an
 * ONNX file, its shapes inferred, fused for inference (with fuse) and
 * decomposed into the ops the compiler lowers: `compile` and `validate
 * --model`.  With t->train, the training step instead (autodiff.h:
 * train_prepare) for the replicas a program for lo has (their gradients
 * all-reduced), its figures in *info.  Any error is fatal. */
graph *cli_load_model(const char *model, bool fuse, const cli_train *t, lower_options *lo, train_info *info);

/* "training step: loss L; W weights (E elements) ..." for the compile report. */
void cli_print_training(const graph *g, const cli_train *t, const train_info *info);

/* Write root (a cJSON object, consumed) to path as cJSON_Print's text and
 * a final newline, atomically (sim/base/fileio.h); false with err on
 * failure. */
struct cJSON;
bool cli_write_json(const char *path, struct cJSON *root, char *err, size_t err_size);

/* An unknown option or extra argument: fatal, with the usage line. */
_Noreturn void cli_usage_error(const command *cmd, const char *fmt, const char *arg);

#endif
