/*
 * test_fileio.c — whole files read within a limit (sim/base/fileio.c): a
 * regular file's size is compared with the limit before it is read, a
 * stream is read to one byte past the limit, folders and devices not
 * allowed are refused, and every message names the file.  Output
 * temporaries are removed when SIGINT, SIGTERM or SIGHUP ends the process.
 */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/base/fileio.h"
#include "test_util.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/ipusim_fileio_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* DIR/NAME holding size bytes of 'x' (sparse: a hole when huge). */
static void make_file(char *path, size_t path_size, const char *name, uint64_t size, bool sparse)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    if (sparse) {
        CU_ASSERT_EQUAL(ftruncate(fd, (off_t)size), 0);
    } else {
        char *buf = malloc(size ? size : 1);
        memset(buf, 'x', size);
        CU_ASSERT_EQUAL((size_t)write(fd, buf, size), size);
        free(buf);
    }
    close(fd);
}

static void test_regular(void)
{
    make_dir();
    char p[128], err[512], *data;
    size_t size;
    make_file(p, sizeof p, "a.bin", 8192, false);
    /* Exactly the limit: read, NUL-terminated. */
    CU_ASSERT_TRUE_FATAL(read_file_limited(p, 8192, "tensor 'a' takes", 0, &data, &size, err, sizeof err));
    CU_ASSERT_EQUAL(size, 8192);
    CU_ASSERT_EQUAL(data[0], 'x');
    CU_ASSERT_EQUAL(data[8191], 'x');
    CU_ASSERT_EQUAL(data[8192], 0);
    free(data);
    /* One byte over: refused from its size. */
    char want[512];
    CU_ASSERT_FALSE(read_file_limited(p, 8191, "tensor 'a' takes", 0, &data, &size, err, sizeof err));
    snprintf(want, sizeof want, "%s: 8192 bytes, more than the 8191 bytes tensor 'a' takes", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_FALSE(read_file_limited(p, 100, NULL, 0, &data, &size, err, sizeof err));
    snprintf(want, sizeof want, "%s: 8192 bytes, more than the limit of 100 bytes", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    /* Empty. */
    make_file(p, sizeof p, "empty.bin", 0, false);
    CU_ASSERT_TRUE_FATAL(read_file_limited(p, 10, NULL, 0, &data, &size, err, sizeof err));
    CU_ASSERT_EQUAL(size, 0);
    CU_ASSERT_EQUAL(data[0], 0);
    free(data);
    remove_dir();
}

/* A 3 GiB file (a hole) for an 8 KiB limit is refused from its size. */
static void test_huge_not_read(void)
{
    make_dir();
    char p[128], err[512], want[512], *data;
    size_t size;
    make_file(p, sizeof p, "huge.bin", 3ull << 30, true);
    CU_ASSERT_FALSE(read_file_limited(p, 8192, "tensor 'a' takes", READ_STREAMS, &data, &size, err, sizeof err));
    snprintf(want, sizeof want, "%s: 3221225472 bytes, more than the 8192 bytes tensor 'a' takes", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    file_image f;
    CU_ASSERT_FALSE(file_image_open(&f, p, 1ull << 30, "an executable may have", READ_FIFO, err, sizeof err));
    snprintf(want, sizeof want, "%s: 3221225472 bytes, more than the 1073741824 bytes an executable may have", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    /* Within the limit, mapped: nothing is read until it is looked at. */
    CU_ASSERT_TRUE_FATAL(file_image_open(&f, p, 4ull << 30, NULL, 0, err, sizeof err));
    CU_ASSERT_TRUE(f.mapped);
    CU_ASSERT_EQUAL(f.size, 3ull << 30);
    CU_ASSERT_EQUAL(f.data[0], 0);
    CU_ASSERT_EQUAL(f.data[(3ull << 30) - 1], 0);
    f.data[0] = 1;   /* private to this process */
    file_image_close(&f);
    remove_dir();
}

static void test_not_files(void)
{
    make_dir();
    char err[512], want[512], *data;
    size_t size;
    CU_ASSERT_FALSE(read_file_limited(dir, 1 << 20, NULL, READ_STREAMS, &data, &size, err, sizeof err));
    snprintf(want, sizeof want, "%s: is a directory", dir);
    CU_ASSERT_STRING_EQUAL(err, want);
    file_image f;
    CU_ASSERT_FALSE(file_image_open(&f, dir, 1 << 20, NULL, READ_STREAMS, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, want);
    char p[128];
    snprintf(p, sizeof p, "%s/nosuch", dir);
    CU_ASSERT_FALSE(read_file_limited(p, 1 << 20, NULL, READ_STREAMS, &data, &size, err, sizeof err));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    CU_ASSERT_STRING_EQUAL(err, want);
    /* A device that is not allowed, and one that is: read to the limit. */
    CU_ASSERT_FALSE(read_file_limited("/dev/zero", 8192, NULL, READ_FIFO, &data, &size, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "/dev/zero: not a regular file (a character device)");
    CU_ASSERT_FALSE(read_file_limited("/dev/zero", 8192, "tensor 'a' takes", READ_STREAMS, &data, &size, err,
                                      sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "/dev/zero: more than the 8192 bytes tensor 'a' takes");
    CU_ASSERT_TRUE_FATAL(read_file_limited("/dev/null", 10, NULL, READ_STREAMS, &data, &size, err, sizeof err));
    CU_ASSERT_EQUAL(size, 0);
    free(data);
    remove_dir();
}

/* A pipe: read to its end within the limit, refused one byte past it. */
static void test_pipe(void)
{
    for (int over = 0; over <= 1; over++) {
        int fds[2];
        CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
        char buf[100];
        memset(buf, 'p', sizeof buf);
        CU_ASSERT_EQUAL(write(fds[1], buf, sizeof buf), (ssize_t)sizeof buf);
        close(fds[1]);
        char p[64], err[512], want[512], *data;
        size_t size;
        snprintf(p, sizeof p, "/dev/fd/%d", fds[0]);
        CU_ASSERT_FALSE(read_file_limited(p, 100, NULL, 0, &data, &size, err, sizeof err));
        snprintf(want, sizeof want, "%s: not a regular file (a pipe)", p);
        CU_ASSERT_STRING_EQUAL(err, want);
        bool ok = read_file_limited(p, 100 - (uint64_t)over, "a script may have", READ_FIFO, &data, &size, err,
                                    sizeof err);
        if (over) {
            CU_ASSERT_FALSE(ok);
            snprintf(want, sizeof want, "%s: more than the 99 bytes a script may have", p);
            CU_ASSERT_STRING_EQUAL(err, want);
        } else {
            CU_ASSERT_TRUE_FATAL(ok);
            CU_ASSERT_EQUAL(size, 100);
            CU_ASSERT_EQUAL(data[99], 'p');
            free(data);
        }
        close(fds[0]);
    }
}

/* Entries in dir (0 when empty). */
static int dir_entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
    return system(cmd) == 0 ? 0 : 1;
}

/* A child process opens a temporary for DIR/out.bin, writes to it and is
 * sent sig: it ends by the signal, and neither the temporary nor the
 * target is left. */
static void signalled_while_writing(int sig)
{
    make_dir();
    char p[128];
    snprintf(p, sizeof p, "%s/out.bin", dir);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        signal(sig, SIG_DFL);
        atomic_file f, g;
        char err[256], q[160];
        snprintf(q, sizeof q, "%s/other.bin", dir);
        if (!afile_open(&f, p, err, sizeof err) || !afile_open(&g, q, err, sizeof err))
            _exit(10);
        fputs("partial", f.fp);
        fflush(f.fp);
        if (!afile_commit(&g, err, sizeof err))   /* done: stays */
            _exit(11);
        unlink(q);
        kill(getpid(), sig);
        _exit(12);
    }
    int status;
    CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status));
    CU_ASSERT_EQUAL(WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status), sig);
    CU_ASSERT_EQUAL(dir_entries(), 0);
    remove_dir();
}

static void test_signal_term(void) { signalled_while_writing(SIGTERM); }
static void test_signal_int(void) { signalled_while_writing(SIGINT); }
static void test_signal_hup(void) { signalled_while_writing(SIGHUP); }

static volatile sig_atomic_t program_saw;
static void program_handler(int sig) { program_saw = sig; }

/* A handler the program set is called instead, and the write goes on. */
static void test_signal_program_handler(void)
{
    make_dir();
    char p[128];
    snprintf(p, sizeof p, "%s/out.bin", dir);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        signal(SIGINT, program_handler);
        atomic_file f;
        char err[256];
        if (!afile_open(&f, p, err, sizeof err))
            _exit(10);
        fputs("whole", f.fp);
        kill(getpid(), SIGINT);
        if (program_saw != SIGINT)
            _exit(11);
        _exit(afile_commit(&f, err, sizeof err) ? 0 : 12);
    }
    int status;
    CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *data;
    size_t size;
    char err[256];
    CU_ASSERT_TRUE_FATAL(read_file_limited(p, 100, NULL, 0, &data, &size, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(data, "whole");
    free(data);
    remove_dir();
}

void test_register(void)
{
    ADD_SUITE("read_file_limited",
              { "regular files: the size against the limit", test_regular },
              { "a huge file is refused without being read", test_huge_not_read },
              { "folders, missing files, devices", test_not_files },
              { "pipes: read to one byte past the limit", test_pipe });
    ADD_SUITE("output temporaries and signals",
              { "SIGTERM while writing: no temporary, ended by the signal", test_signal_term },
              { "SIGINT while writing", test_signal_int },
              { "SIGHUP while writing", test_signal_hup },
              { "a handler the program set: called, the write goes on", test_signal_program_handler });
}
