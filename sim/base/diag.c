#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

noreturn void fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ipusim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

noreturn void panic_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ipusim: panic at %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputs("\n(this is a bug in ipusim, not in your program)\n", stderr);
    va_end(ap);
    abort();
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ipusim: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
