/*
 * fileio.h — output files that are either complete or absent.
 *
 * Every file ipusim writes (executables, reports, traces) is written to a
 * temporary name in the same directory and renamed over the target when
 * complete, so an interrupted run leaves the old file or none.  A target
 * that exists and is not a regular file (/dev/null, a FIFO, a terminal) is
 * written through an anonymous temporary file copied into it at commit: a
 * rename would replace the device with a file.
 *
 * The temporaries open are recorded, and SIGINT, SIGTERM and SIGHUP (where
 * the program has not set its own handler or ignores them) remove them
 * before ending the process by the signal, so a run stopped while
 * writing leaves no temporary either.
 *
 * Files read whole are read within a limit (read_file_limited).
 */
#ifndef IPUSIM_FILEIO_H
#define IPUSIM_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct atomic_file {
    FILE *fp;               /* write here */
    char *path;             /* final name */
    char *tmp_path;         /* temporary name; NULL when written in place */
    int slot;               /* where the signal handler finds tmp_path (-1: not recorded) */
} atomic_file;

/* Open a temporary file beside path.  On failure returns false with the
 * reason in err. */
bool afile_open(atomic_file *f, const char *path, char *err, size_t err_size);
/* Flush, fsync and rename into place; false (and the temporary removed)
 * on any error. */
bool afile_commit(atomic_file *f, char *err, size_t err_size);
/* Remove the temporary file; the target is untouched. */
void afile_abort(atomic_file *f);

/* Write a whole buffer atomically. */
bool afile_write_all(const char *path, const void *data, size_t size, char *err, size_t err_size);

/* Reading whole files.  Every file a user names is read within a limit
 * that follows from what it is, so that a huge file or an endless device
 * (/dev/zero) is refused without reading it all. */
#define READ_LIMIT_CONFIG      (1ull << 20)     /* a --config machine description */
#define READ_LIMIT_RECORD      (16ull << 20)    /* a bench record */
#define READ_LIMIT_SOURCE      (64ull << 20)    /* a debugger script */
#define READ_LIMIT_ONNX        0x7fffffffull    /* an ONNX model or tensor: protobuf's 2 GiB message limit */
#define READ_LIMIT_HOST_STREAM (1ull << 30)     /* the data of a host stream given by number */
#define READ_LIMIT_EXECUTABLE  (16ull << 30)    /* an executable */

/* What read_file_limited accepts besides a regular file: a pipe (`<(...)`,
 * /dev/stdin from a pipe) and a character device (a terminal, /dev/zero),
 * read up to the limit. */
enum {
    READ_FIFO = 1,
    READ_CHAR_DEVICE = 2,
    READ_STREAMS = READ_FIFO | READ_CHAR_DEVICE,
};

/* Read a whole file of at most max_bytes into a malloc'd buffer
 * (NUL-terminated for text use).  A regular file's size is compared with
 * the limit before anything is read; a stream is read to at most
 * max_bytes + 1 bytes.  limit_what says what the limit is, after "the N
 * bytes" (e.g. "tensor 'a' takes"; NULL: "the limit of N bytes").  The
 * errors name the file:
 *   F: cannot open: REASON          F: is a directory
 *   F: not a regular file (a character device)
 *   F: 3221225472 bytes, more than the 8192 bytes tensor 'a' takes
 *   F: more than the 8192 bytes tensor 'a' takes    (a stream) */
bool read_file_limited(const char *path, uint64_t max_bytes, const char *limit_what, unsigned accept,
                       char **data, size_t *size, char *err, size_t err_size);

/* A whole file in memory: a regular file mapped (nothing is read until
 * used, so a huge file costs nothing until its contents are looked at), a
 * stream read as read_file_limited does.  The bytes may be written (a
 * mapped file's changes stay private).  Same limits and errors as
 * read_file_limited. */
typedef struct file_image {
    unsigned char *data;
    size_t size;
    bool mapped;
} file_image;
bool file_image_open(file_image *f, const char *path, uint64_t max_bytes, const char *limit_what, unsigned accept,
                     char *err, size_t err_size);
void file_image_close(file_image *f);

/* Read a whole file of any size or kind (files the program wrote itself). */
bool read_whole_file(const char *path, char **data, size_t *size, char *err, size_t err_size);

#endif
