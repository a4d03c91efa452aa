#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporaries open now, for the signal handler.  A path is written into
 * a free slot before the slot is marked in use, and the slot is freed only
 * after the rename (or the unlink), so a signal at any moment finds every
 * temporary that exists (and perhaps one just renamed, whose unlink then
 * fails harmlessly).  More temporaries open at once than there are slots,
 * or longer paths, are not recorded. */
#define MAX_RECORDED_TEMPORARIES 16
#define MAX_RECORDED_PATH 4096
enum { SLOT_FREE, SLOT_CLAIMED, SLOT_IN_USE };
static char temp_paths[MAX_RECORDED_TEMPORARIES][MAX_RECORDED_PATH];
static atomic_int temp_state[MAX_RECORDED_TEMPORARIES];

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction previous_action[N_CLEANUP_SIGNALS];
static atomic_flag handlers_installed = ATOMIC_FLAG_INIT;

/* A cleanup signal that came while a temporary was being created in some
 * thread (its slot claimed, the file perhaps made but its name not yet
 * recorded).  The thread that creates it has the signals blocked, so another
 * thread took the signal; it leaves the signal here and the creating thread,
 * once the name is recorded, cleans up and ends by it. */
static atomic_int deferred_signal;

/* Async-signal-safe: unlink, sigaction and raise only.  Every recorded
 * temporary is removed and the program ends by sig, as without a handler:
 * the default action, delivered when the handler returns and the signal is
 * unblocked. */
static void remove_temporaries_and_end(int sig)
{
    for (size_t i = 0; i < MAX_RECORDED_TEMPORARIES; i++)
        if (atomic_load(&temp_state[i]) == SLOT_IN_USE)
            unlink(temp_paths[i]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void on_cleanup_signal(int sig, siginfo_t *info, void *context)
{
    size_t k = 0;
    while (k < N_CLEANUP_SIGNALS && cleanup_signals[k] != sig)
        k++;
    if (k == N_CLEANUP_SIGNALS)
        return;
    const struct sigaction *prev = &previous_action[k];
    /* A handler the program set before this one (the debugger's SIGINT
     * interrupts a run): the program goes on, and so does the write. */
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, info, context);
        return;
    }
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    int saved_errno = errno;
    for (size_t i = 0; i < MAX_RECORDED_TEMPORARIES; i++)
        if (atomic_load(&temp_state[i]) == SLOT_CLAIMED) {
            int none = 0;
            atomic_compare_exchange_strong(&deferred_signal, &none, sig);
            errno = saved_errno;
            return;
        }
    remove_temporaries_and_end(sig);
    errno = saved_errno;
}

/* Once, at the first temporary: signals the program ignores stay ignored. */
static void install_cleanup_handlers(void)
{
    if (atomic_flag_test_and_set(&handlers_installed))
        return;
    for (size_t k = 0; k < N_CLEANUP_SIGNALS; k++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (sigaction(cleanup_signals[k], NULL, &previous_action[k]) != 0 ||
            (!(previous_action[k].sa_flags & SA_SIGINFO) && previous_action[k].sa_handler == SIG_IGN))
            continue;
        sa.sa_sigaction = on_cleanup_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask);
        sigaction(cleanup_signals[k], &sa, NULL);
    }
}

/* A free slot, claimed before the temporary is created: a signal taken by
 * another thread meanwhile waits for the name (deferred_signal). */
static int claim_slot(void)
{
    for (int i = 0; i < MAX_RECORDED_TEMPORARIES; i++) {
        int expected = SLOT_FREE;
        if (atomic_compare_exchange_strong(&temp_state[i], &expected, SLOT_CLAIMED))
            return i;
    }
    return -1;
}

/* The name of the temporary just created into the claimed slot (or, when
 * it was not created, the slot freed); then a signal deferred meanwhile
 * ends the program, this temporary removed with the others. */
static int record_temporary(int slot, const char *path, bool created)
{
    if (slot >= 0) {
        size_t n = strlen(path) + 1;
        if (created && n <= MAX_RECORDED_PATH) {
            memcpy(temp_paths[slot], path, n);
            atomic_store(&temp_state[slot], SLOT_IN_USE);
        } else {
            atomic_store(&temp_state[slot], SLOT_FREE);
            slot = -1;
        }
    }
    int sig = atomic_exchange(&deferred_signal, 0);
    if (sig)
        remove_temporaries_and_end(sig);
    return slot;
}

static void forget_temporary(int slot)
{
    if (slot < 0)
        return;
    atomic_store(&temp_state[slot], SLOT_FREE);
}

/* The cleanup signals blocked in this thread while a temporary is created
 * and recorded: none can find it existing but not recorded. */
static void block_cleanup_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t k = 0; k < N_CLEANUP_SIGNALS; k++)
        sigaddset(&set, cleanup_signals[k]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

bool afile_open(atomic_file *f, const char *path, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    f->slot = -1;
    /* A target that exists and is not a regular file (/dev/null, a pipe, a
     * terminal) is written in place: renaming over it would replace the
     * device with a file. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, err_size, "%s: is a directory", path);
            return false;
        }
        /* Written to an anonymous temporary file first (libelf needs to
         * seek), then copied into the target at commit. */
        f->path = dup_str(path);
        f->fp = f->path ? tmpfile() : NULL;
        if (!f->fp) {
            snprintf(err, err_size, "%s: cannot open: %s", path, f->path ? strerror(errno) : "out of memory");
            free(f->path);
            f->path = NULL;
            return false;
        }
        return true;
    }
    size_t n = strlen(path) + 16;
    f->path = dup_str(path);
    f->tmp_path = malloc(n);
    if (!f->path || !f->tmp_path) {
        snprintf(err, err_size, "%s: out of memory", path);
        goto fail;
    }
    snprintf(f->tmp_path, n, "%s.tmpXXXXXX", path);
    install_cleanup_handlers();
    sigset_t old_mask;
    block_cleanup_signals(&old_mask);
    int slot = claim_slot();
    int fd = mkstemp(f->tmp_path);
    f->slot = record_temporary(slot, f->tmp_path, fd >= 0);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (fd < 0) {
        snprintf(err, err_size, "%s: cannot create: %s", path, strerror(errno));
        goto fail;
    }
    /* mkstemp creates the file 0600; give it the mode a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        unlink(f->tmp_path);
        forget_temporary(f->slot);
        goto fail;
    }
    return true;
fail:
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    f->slot = -1;
    return false;
}

/* After the rename or the unlink: the temporary is gone. */
static void afile_release(atomic_file *f)
{
    forget_temporary(f->slot);
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    f->slot = -1;
}

/* Copy the finished temporary into a target that is not a regular file. */
static bool copy_into_place(atomic_file *f, char *err, size_t err_size)
{
    if (fflush(f->fp) != 0 || fseek(f->fp, 0, SEEK_SET) != 0) {
        snprintf(err, err_size, "%s: write failed: %s", f->path, strerror(errno));
        return false;
    }
    FILE *out = fopen(f->path, "wb");
    if (!out) {
        snprintf(err, err_size, "%s: cannot open: %s", f->path, strerror(errno));
        return false;
    }
    char buf[65536];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(buf, 1, sizeof buf, f->fp)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (ferror(f->fp))
        ok = false;
    if (fclose(out) != 0)
        ok = false;
    if (!ok)
        snprintf(err, err_size, "%s: write failed: %s", f->path, strerror(errno));
    return ok;
}

bool afile_commit(atomic_file *f, char *err, size_t err_size)
{
    bool ok = true;
    if (!f->tmp_path) {
        ok = copy_into_place(f, err, err_size);
        fclose(f->fp);
        afile_release(f);
        return ok;
    }
    if (fflush(f->fp) != 0 || ferror(f->fp)) {
        snprintf(err, err_size, "%s: write failed: %s", f->path, strerror(errno));
        ok = false;
    } else if (f->tmp_path && fsync(fileno(f->fp)) != 0 && errno != EINVAL) {
        snprintf(err, err_size, "%s: write failed: %s", f->path, strerror(errno));
        ok = false;
    }
    if (fclose(f->fp) != 0 && ok) {
        snprintf(err, err_size, "%s: write failed: %s", f->path, strerror(errno));
        ok = false;
    }
    f->fp = NULL;
    if (f->tmp_path && ok && rename(f->tmp_path, f->path) != 0) {
        snprintf(err, err_size, "%s: cannot rename into place: %s", f->path, strerror(errno));
        ok = false;
    }
    if (!ok && f->tmp_path)
        unlink(f->tmp_path);
    afile_release(f);
    return ok;
}

void afile_abort(atomic_file *f)
{
    if (f->fp)
        fclose(f->fp);
    if (f->tmp_path)
        unlink(f->tmp_path);
    afile_release(f);
}

bool afile_write_all(const char *path, const void *data, size_t size, char *err, size_t err_size)
{
    atomic_file f;
    if (!afile_open(&f, path, err, err_size))
        return false;
    if (size && fwrite(data, 1, size, f.fp) != size) {
        snprintf(err, err_size, "%s: write failed: %s", path, strerror(errno));
        afile_abort(&f);
        return false;
    }
    return afile_commit(&f, err, err_size);
}

static const char *file_kind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a pipe";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a file";
}

/* "the N bytes WHAT" or "the limit of N bytes". */
static void limit_text(char *buf, size_t size, uint64_t max_bytes, const char *limit_what)
{
    if (limit_what)
        snprintf(buf, size, "the %llu bytes %s", (unsigned long long)max_bytes, limit_what);
    else
        snprintf(buf, size, "the limit of %llu bytes", (unsigned long long)max_bytes);
}

bool read_file_limited(const char *path, uint64_t max_bytes, const char *limit_what, unsigned accept,
                       char **data, size_t *size, char *err, size_t err_size)
{
    char limit[256];
    if (max_bytes >= SIZE_MAX - 1)
        max_bytes = SIZE_MAX - 2;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return false;
    }
    bool stream = (S_ISFIFO(st.st_mode) && (accept & READ_FIFO)) || (S_ISCHR(st.st_mode) && (accept & READ_CHAR_DEVICE));
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, err_size, "%s: is a directory", path);
        close(fd);
        return false;
    }
    if (!S_ISREG(st.st_mode) && !stream) {
        snprintf(err, err_size, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
        close(fd);
        return false;
    }
    if (!stream && st.st_size >= 0 && (uint64_t)st.st_size > max_bytes) {
        limit_text(limit, sizeof limit, max_bytes, limit_what);
        snprintf(err, err_size, "%s: %llu bytes, more than %s", path, (unsigned long long)st.st_size, limit);
        close(fd);
        return false;
    }
    /* Read up to one byte past the limit: a stream, or a file still
     * growing, that gives it is refused. */
    size_t stop = (size_t)max_bytes + 1;
    size_t cap = stream ? 65536 : (size_t)st.st_size + 1, n = 0;
    if (cap > stop)
        cap = stop;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            snprintf(err, err_size, "%s: out of memory reading file", path);
            close(fd);
            return false;
        }
        if (n == cap) {
            if (n >= stop)
                break;
            size_t grown = cap > stop / 2 ? stop : cap * 2;
            char *nb = realloc(buf, grown + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = nb;
            cap = grown;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, err_size, "%s: read failed: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return false;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max_bytes) {
        limit_text(limit, sizeof limit, max_bytes, limit_what);
        snprintf(err, err_size, "%s: more than %s", path, limit);
        free(buf);
        return false;
    }
    buf[n] = 0;
    *data = buf;
    *size = n;
    return true;
}

bool file_image_open(file_image *f, const char *path, uint64_t max_bytes, const char *limit_what, unsigned accept,
                     char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= max_bytes && (uint64_t)st.st_size <= SIZE_MAX) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            f->data = p;
            f->size = (size_t)st.st_size;
            f->mapped = true;
            return true;
        }
    }
    if (fd >= 0)
        close(fd);
    /* Streams, empty files, and the errors. */
    char *data;
    if (!read_file_limited(path, max_bytes, limit_what, accept, &data, &f->size, err, err_size))
        return false;
    f->data = (unsigned char *)data;
    return true;
}

void file_image_close(file_image *f)
{
    if (f->mapped)
        munmap(f->data, f->size);
    else
        free(f->data);
    memset(f, 0, sizeof *f);
}

bool read_whole_file(const char *path, char **data, size_t *size, char *err, size_t err_size)
{
    return read_file_limited(path, UINT64_MAX, NULL, READ_STREAMS, data, size, err, err_size);
}
