/* file.c - a whole file into memory; see file.h. */
#define _POSIX_C_SOURCE 200809L /* readlink, access */
#include "io/file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int npu_io_fail(char *err, size_t errn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errn)
        vsnprintf(err, errn, fmt, ap);
    va_end(ap);
    return -1;
}

int npu_read_file(const char *path, unsigned char **buf, size_t *n, char *err, size_t errn)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 0, got;
    int e = 0;
    *buf = NULL;
    *n = 0;
    if (!f) {
        snprintf(err, errn, "%s: %s", path, strerror(errno));
        return -1;
    }
    do {
        if (*n == cap) {
            unsigned char *nb = realloc(*buf, cap = cap ? 2 * cap : 1 << 16);
            if (!nb) {
                e = ENOMEM;
                break;
            }
            *buf = nb;
        }
        got = fread(*buf + *n, 1, cap - *n, f);
        *n += got;
    } while (got > 0);
    if (!e && ferror(f))
        e = errno ? errno : EIO;
    fclose(f);
    if (e)
        snprintf(err, errn, "%s: %s", path, strerror(e));
    return e ? -1 : 0;
}

int npu_load_file(const char *path, npu_parse_fn parse, void *obj, char *err, size_t errn)
{
    unsigned char *buf;
    size_t n;
    char why[300];
    int rc = npu_read_file(path, &buf, &n, err, errn);
    if (rc == 0 && (rc = parse(buf, n, obj, why, sizeof why)) != 0)
        snprintf(err, errn, "%s: %s", path, why);
    free(buf);
    return rc ? -1 : 0;
}

int npu_repo_file(const char *rel, char *out, size_t n)
{
    char exe[4096];
    ssize_t k;
    snprintf(out, n, "%s", rel);
    if (!access(out, R_OK))
        return 0;
    k = readlink("/proc/self/exe", exe, sizeof exe - 1); /* build/<cfg>/npu -> ../../rel */
    if (k > 0) {
        char *slash;
        exe[k] = 0;
        for (int up = 0; up < 3 && (slash = strrchr(exe, '/')); up++)
            *slash = 0;
        snprintf(out, n, "%s/%s", exe, rel);
        if (!access(out, R_OK))
            return 0;
    }
    snprintf(out, n, "%s", rel);
    return -1;
}
