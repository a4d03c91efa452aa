/*
 * fuzz_cli.h — the `cli` fuzz target: the command line itself.  The input
 * is split into arguments at NUL bytes and newlines (at most FUZZ_CLI_ARGS
 * of them) and dispatched as `ipusim ARGS...` is by frontends/cli/main.c,
 * through the subcommands' option parsers and on into the work they ask
 * for, in a scratch folder holding a few small files to name (prog.elf,
 * cfg.json, in.bin, cmds.dbg, small.S).  The command must return or exit
 * with status 0, 1, 2 or 3; a crash, a sanitizer report or another status
 * is a finding.
 *
 * The command handlers end bad input with exit() (fatal(), usage errors).
 * The fuzzer (fuzz_cli.c, linked with -Wl,--wrap=exit) defines
 * FUZZ_CLI_IN_PROCESS and turns exit() during a command into a longjmp
 * back here, so that coverage is kept; it gives up finding leaks (a
 * command left by longjmp frees nothing) and closes the files such a
 * command left open.  Elsewhere (the ctest replay) each input runs in a
 * child process.
 *
 * Skipped, to keep one input to milliseconds and the files in the scratch
 * folder: arguments with a '/', `bench` and `validate` (seconds of work by
 * design), built-in models other than small matmuls, machines of several
 * chips, and more than 4 host threads.
 */
#ifndef IPUSIM_FUZZ_CLI_H
#define IPUSIM_FUZZ_CLI_H

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontends/cli/commands.h"
#include "isa/elf/executable.h"

#define FUZZ_CLI_ARGS 16
#define FUZZ_CLI_MAX_BYTES 1024

static const command fuzz_cli_commands[] = {
#define COMMAND(name, fn, summary, usage) { name, fn, summary, usage },
#include "frontends/cli/commands.def"
#undef COMMAND
};

static char fuzz_cli_dir[64];

static void fuzz_cli_clean(void);

static void fuzz_cli_remove(void)
{
    fuzz_cli_clean();
    static const char *const seeds[] = { "prog.elf", "cfg.json", "in.bin", "cmds.dbg", "small.S" };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", fuzz_cli_dir, seeds[i]);
        unlink(path);
    }
    rmdir(fuzz_cli_dir);
}

/* The scratch folder and the files the arguments may name (removed at
 * exit). */
static bool fuzz_cli_setup(void)
{
    if (fuzz_cli_dir[0])
        return true;
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_cli_dir, sizeof fuzz_cli_dir, "%.40s/ipusim-cli-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_cli_dir)) {
        fuzz_cli_dir[0] = 0;
        return false;
    }
    atexit(fuzz_cli_remove);
    char path[128], err[1024];
    snprintf(path, sizeof path, "%s/prog.elf", fuzz_cli_dir);
    if (!exe_write(fuzz_chip_program(), path, err, sizeof err))
        fuzz_fail("cli", "cannot write prog.elf", err);
    static const struct { const char *name, *text; } files[] = {
        { "cfg.json", "{\"preset\": \"gc200\", \"params\": {\"tile_clock_hz\": 1.5e9}}\n" },
        { "in.bin", "0123456789abcdef0123456789abcdef" },
        { "cmds.dbg", "break worker\nrun\ninfo registers\nx/4x sbuf\ncontinue\nstats\n" },
        { "small.S", " .text\n__supervisor:\n setzi $m0, 1\n exitz $mzero\n" },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", fuzz_cli_dir, files[i].name);
        FILE *f = fopen(path, "w");
        if (!f || fputs(files[i].text, f) < 0 || fclose(f))
            fuzz_fail("cli", "cannot write a scratch file", path);
    }
    return true;
}

/* Remove what a command wrote into the scratch folder. */
static void fuzz_cli_clean(void)
{
    DIR *d = opendir(fuzz_cli_dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "prog.elf") || !strcmp(n, "cfg.json") ||
            !strcmp(n, "in.bin") || !strcmp(n, "cmds.dbg") || !strcmp(n, "small.S"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", fuzz_cli_dir, n);
        unlink(path);
    }
    closedir(d);
}

/* Whether the arguments ask for work this target leaves out. */
static bool fuzz_cli_skipped(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "bench") || !strcmp(argv[1], "validate")))
        return true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strchr(a, '/') || !strncmp(a, "resnet", 6) || !strncmp(a, "bert", 4) || strstr(a, "000") ||
            !strcmp(a, "m2000") || !strcmp(a, "bow2000") || !strcmp(a, "ipu-pod16") || !strcmp(a, "bow-pod16") || !strcmp(a, "ipu-pod64") || !strcmp(a, "bow-pod64") || strstr(a, "chips"))
            return true;
        if (!strncmp(a, "matmul:", 7) && strlen(a) > 14)
            return true;
        if (!strcmp(a, "--threads") && i + 1 < argc && atoi(argv[i + 1]) > 4)
            return true;
    }
    return false;
}

/* main()'s dispatch (frontends/cli/main.c), less the overview text. */
static int fuzz_cli_dispatch(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help") || !strcmp(name, "--version"))
        return 0;
    for (size_t i = 0; i < sizeof fuzz_cli_commands / sizeof fuzz_cli_commands[0]; i++) {
        if (strcmp(fuzz_cli_commands[i].name, name))
            continue;
        for (int a = 2; a < argc; a++)
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))
                return 0;
        return fuzz_cli_commands[i].fn(argc - 1, argv + 1, &fuzz_cli_commands[i]);
    }
    return 2;
}

#ifdef FUZZ_CLI_IN_PROCESS
/* Set by fuzz_cli.c's __wrap_exit while a command runs. */
static jmp_buf fuzz_cli_jump;
static volatile int fuzz_cli_running, fuzz_cli_exit_status;

static int fuzz_cli_run(int argc, char **argv)
{
    static FILE *null_out;
    if (!null_out) {
        null_out = fopen("/dev/null", "w");
        int fd = open("/dev/null", O_RDONLY);
        if (!null_out || fd < 0 || dup2(fd, STDIN_FILENO) < 0)
            fuzz_fail("cli", "cannot open /dev/null", NULL);
        close(fd);
    }
    /* File descriptors open before the command: the rest are closed after. */
    char open_before[1024] = { 0 };
    for (int fd = 0; fd < 1024; fd++)
        open_before[fd] = fcntl(fd, F_GETFD) != -1;
    FILE *out = stdout, *errs = stderr;
    stdout = null_out;
    stderr = null_out;
    int status;
    if (setjmp(fuzz_cli_jump) == 0) {
        fuzz_cli_running = 1;
        status = fuzz_cli_dispatch(argc, argv);
    } else {
        status = fuzz_cli_exit_status;
    }
    fuzz_cli_running = 0;
    fflush(null_out);
    stdout = out;
    stderr = errs;
    for (int fd = 3; fd < 1024; fd++)
        if (!open_before[fd] && fcntl(fd, F_GETFD) != -1)
            close(fd);
    return status;
}
#else
static int fuzz_cli_run(int argc, char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        fflush(NULL);
        _exit(fuzz_cli_dispatch(argc, argv));
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid)
        return 0;
    if (WIFSIGNALED(ws)) {
        fprintf(stderr, "fuzz cli: the command died of signal %d:", WTERMSIG(ws));
        for (int i = 0; i < argc; i++)
            fprintf(stderr, " '%s'", argv[i]);
        fprintf(stderr, "\n");
        return -1;
    }
    return WEXITSTATUS(ws);
}
#endif

static int fuzz_cli_one(const uint8_t *data, size_t size)
{
    if (size > FUZZ_CLI_MAX_BYTES || !fuzz_cli_setup())
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[FUZZ_CLI_ARGS + 2] = { "ipusim" };
    int argc = 1;
    char *p = text;
    while (p < text + size && argc <= FUZZ_CLI_ARGS) {
        size_t n = strcspn(p, "\n");
        p[n] = 0;
        argv[argc++] = p;
        p += n + 1;
    }
    argv[argc] = NULL;
    if (!fuzz_cli_skipped(argc, argv)) {
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd) && chdir(fuzz_cli_dir) == 0) {
            int status = fuzz_cli_run(argc, argv);
            if (chdir(cwd))
                fuzz_fail("cli", "cannot go back to the working folder", cwd);
            if (status < 0 || status > 3) {
                char msg[64];
                snprintf(msg, sizeof msg, "exit status %d", status);
                fuzz_fail("cli", "a command ended other than with status 0, 1, 2 or 3", msg);
            }
            fuzz_cli_clean();
        }
    }
    free(text);
    return 0;
}

#endif
