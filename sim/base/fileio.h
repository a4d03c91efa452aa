/*
 * fileio.h — output files that are either complete or absent.
 *
 * Every file ipusim writes (executables, reports, traces) is written to a
 * temporary name in the same directory and renamed over the target when
 * complete, so an interrupted run leaves the old file or none.  A target
 * that exists and is not a regular file (/dev/null, a FIFO, a terminal) is
 * written through an anonymous temporary file copied into it at commit: a
 * rename would replace the device with a file.
 */
#ifndef IPUSIM_FILEIO_H
#define IPUSIM_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct atomic_file {
    FILE *fp;               /* write here */
    char *path;             /* final name */
    char *tmp_path;         /* temporary name; NULL when written in place */
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

/* Read a whole file into a malloc'd buffer (NUL-terminated for text use). */
bool read_whole_file(const char *path, char **data, size_t *size, char *err, size_t err_size);

#endif
