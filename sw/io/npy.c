/* npy.c - NumPy .npy reader and writer; see npy.h. */
#include "io/npy.h"

#include "io/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};


static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n'))
        p++;
    return p;
}

/* A quoted Python string ('...' or "...") into out; the position after it, or NULL. */
static const char *quoted(const char *p, const char *e, char *out, size_t n)
{
    char q;
    size_t i = 0;
    if (p >= e || (*p != '\'' && *p != '"'))
        return NULL;
    q = *p++;
    while (p < e && *p != q) {
        if (i + 1 >= n)
            return NULL;
        out[i++] = *p++;
    }
    out[i] = '\0';
    return p < e ? p + 1 : NULL;
}

/* A shape tuple "(3, 4)", "(5,)" or "()"; the position after it, or NULL. */
static const char *shape_tuple(const char *p, const char *e, npu_npy_t *a)
{
    if (p >= e || *p++ != '(')
        return NULL;
    a->ndim = 0;
    for (;;) {
        p = skip_ws(p, e);
        if (p < e && *p == ')')
            return p + 1;
        if (p >= e || *p < '0' || *p > '9' || a->ndim == NPU_NPY_MAX_DIMS)
            return NULL;
        int64_t v = 0;
        while (p < e && *p >= '0' && *p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return NULL;
            v = v * 10 + (*p++ - '0');
        }
        a->shape[a->ndim++] = v;
        p = skip_ws(p, e);
        if (p < e && *p == ',')
            p++;
        else if (p >= e || *p != ')')
            return NULL;
    }
}

/* The descr: little-endian signed integers of 2, 4 or 8 bytes. 0 or -1. */
static int parse_descr(const char *d, npu_npy_t *a, char *err, size_t errn)
{
    if (d[0] == '<' && d[1] == 'i' &&
        (!strcmp(d + 2, "2") || !strcmp(d + 2, "4") || !strcmp(d + 2, "8"))) {
        a->elem = d[2] - '0';
        return 0;
    }
    return npu_io_fail(err, errn, "dtype '%s' is not supported: int16, int32 or int64 little-endian "
                           "('<i2', '<i4', '<i8') only", d);
}

/* The header dict: descr, fortran_order, shape (each once, nothing else). 0 or -1. */
static int parse_header(const char *p, const char *e, npu_npy_t *a, char *err, size_t errn)
{
    char key[32], descr[32];
    int seen = 0, fortran = 0;
    p = skip_ws(p, e);
    if (p >= e || *p++ != '{')
        return npu_io_fail(err, errn, "malformed header: no '{'");
    for (;;) {
        p = skip_ws(p, e);
        if (p < e && *p == '}')
            break;
        if (!(p = quoted(p, e, key, sizeof key)))
            return npu_io_fail(err, errn, "malformed header: expected a quoted key");
        p = skip_ws(p, e);
        if (p >= e || *p++ != ':')
            return npu_io_fail(err, errn, "malformed header: no ':' after '%s'", key);
        p = skip_ws(p, e);
        if (!strcmp(key, "descr") && !(seen & 1) && (p = quoted(p, e, descr, sizeof descr))) {
            seen |= 1;
        } else if (!strcmp(key, "fortran_order") && !(seen & 2) &&
                   ((e - p >= 4 && !strncmp(p, "True", 4)) || (e - p >= 5 && !strncmp(p, "False", 5)))) {
            fortran = *p == 'T';
            p += fortran ? 4 : 5;
            seen |= 2;
        } else if (!strcmp(key, "shape") && !(seen & 4) && (p = shape_tuple(p, e, a))) {
            seen |= 4;
        } else {
            return npu_io_fail(err, errn, "malformed header: bad or repeated key or value for '%s'", key);
        }
        p = skip_ws(p, e);
        if (p < e && *p == ',')
            p++;
        else if (p >= e || *p != '}')
            return npu_io_fail(err, errn, "malformed header: expected ',' or '}' after '%s'", key);
    }
    if (seen != 7)
        return npu_io_fail(err, errn, "malformed header: needs descr, fortran_order and shape");
    if (fortran)
        return npu_io_fail(err, errn, "Fortran order is not supported: save a C-order array "
                               "(np.ascontiguousarray)");
    return parse_descr(descr, a, err, errn);
}

/* The element count of the shape, checked against size_t overflow. 0 or -1. */
static int count_of(npu_npy_t *a, char *err, size_t errn)
{
    a->count = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] && (uint64_t)a->count > SIZE_MAX / 8 / (uint64_t)a->shape[i])
            return npu_io_fail(err, errn, "shape too large");
        a->count *= (size_t)a->shape[i];
    }
    return 0;
}

int npu_npy_parse(const unsigned char *buf, size_t n, npu_npy_t *a, char *err, size_t errn)
{
    size_t hlen, start;
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(buf, k_magic, 6) != 0)
        return npu_io_fail(err, errn, "not a .npy file (no \\x93NUMPY magic)");
    if (buf[6] < 1 || buf[6] > 3)
        return npu_io_fail(err, errn, "format version %u.%u is not supported (1.0, 2.0, 3.0)", buf[6], buf[7]);
    hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                       : n < 12 ? 0 : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    start = (buf[6] == 1 ? 10 : 12) + hlen;
    if (hlen == 0 || start > n)
        return npu_io_fail(err, errn, "truncated header (%zu bytes in the file)", n);
    if (parse_header((const char *)buf + (start - hlen), (const char *)buf + start, a, err, errn) ||
        count_of(a, err, errn))
        return -1;
    if (n - start < a->count * (size_t)a->elem)
        return npu_io_fail(err, errn, "truncated data: the shape needs %zu bytes, the file has %zu",
                    a->count * (size_t)a->elem, n - start);
    if (n - start > a->count * (size_t)a->elem)
        return npu_io_fail(err, errn, "%zu bytes past the data the shape describes",
                    n - start - a->count * (size_t)a->elem);
    a->data = malloc(a->count * (size_t)a->elem + 1);
    if (!a->data)
        return npu_io_fail(err, errn, "out of memory");
    /* little-endian bytes to host integers, whatever the host's order */
    for (size_t i = 0; i < a->count; i++) {
        const unsigned char *q = buf + start + i * (size_t)a->elem;
        uint64_t v = 0;
        for (int b = a->elem - 1; b >= 0; b--)
            v = v << 8 | q[b];
        if (a->elem == 2)
            ((int16_t *)a->data)[i] = (int16_t)(uint16_t)v;
        else if (a->elem == 4)
            ((int32_t *)a->data)[i] = (int32_t)(uint32_t)v;
        else
            ((int64_t *)a->data)[i] = (int64_t)v;
    }
    return 0;
}

static int parse_any(const unsigned char *buf, size_t n, void *a, char *err, size_t errn)
{
    return npu_npy_parse(buf, n, a, err, errn);
}

int npu_npy_load(const char *path, npu_npy_t *a, char *err, size_t errn)
{
    memset(a, 0, sizeof *a);
    return npu_load_file(path, parse_any, a, err, errn);
}

int npu_npy_load_i16_2d(const char *path, int *rows, int *cols, int16_t **data, char *err,
                        size_t errn)
{
    npu_npy_t a;
    if (npu_npy_load(path, &a, err, errn) != 0)
        return -1;
    if (a.elem != 2 || a.ndim != 2 || a.shape[0] < 1 || a.shape[1] < 1 ||
        a.shape[0] > INT32_MAX || a.shape[1] > INT32_MAX) {
        npu_io_fail(err, errn, "%s: %s, needs a 2-D int16 matrix ('<i2'; convert with "
                        ".astype(np.int16))", path,
             a.elem != 2 ? (a.elem == 4 ? "dtype int32" : "dtype int64")
             : a.ndim != 2 ? "not 2-D" : "an empty or too large dimension");
        npu_npy_free(&a);
        return -1;
    }
    *rows = (int)a.shape[0];
    *cols = (int)a.shape[1];
    *data = a.data;
    return 0;
}

int npu_npy_save(const char *path, int elem, int ndim, const int64_t *shape, const void *data,
                 char *err, size_t errn)
{
    char hdr[512];
    size_t count = 1, len;
    int o, ok;
    FILE *f;
    if ((elem != 2 && elem != 4 && elem != 8) || ndim < 0 || ndim > NPU_NPY_MAX_DIMS)
        return npu_io_fail(err, errn, "%s: element size %d or rank %d not supported", path, elem, ndim);
    o = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '<i%d', 'fortran_order': False, 'shape': (",
                 elem);
    for (int i = 0; i < ndim; i++) {
        o += snprintf(hdr + 10 + o, sizeof hdr - 10 - (size_t)o, "%lld,%s", (long long)shape[i],
                      i + 1 < ndim ? " " : "");
        count *= (size_t)shape[i];
    }
    o += snprintf(hdr + 10 + o, sizeof hdr - 10 - (size_t)o, "), }");
    len = (10 + (size_t)o + 1 + 63) / 64 * 64; /* data aligned to 64 bytes, header ends in \n */
    memset(hdr + 10 + o, ' ', len - 10 - (size_t)o);
    hdr[len - 1] = '\n';
    memcpy(hdr, k_magic, 6);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (char)((len - 10) & 0xff);
    hdr[9] = (char)((len - 10) >> 8);
    if (!(f = fopen(path, "wb")))
        return npu_io_fail(err, errn, "%s: %s", path, strerror(errno));
    ok = fwrite(hdr, 1, len, f) == len;
    for (size_t i = 0; i < count && ok; i++) { /* host integers to little-endian bytes */
        unsigned char b[8];
        uint64_t v = elem == 2 ? (uint64_t)(uint16_t)((const int16_t *)data)[i]
                   : elem == 4 ? (uint64_t)(uint32_t)((const int32_t *)data)[i]
                               : (uint64_t)((const int64_t *)data)[i];
        for (int k = 0; k < elem; k++)
            b[k] = (unsigned char)(v >> (8 * k));
        ok = fwrite(b, 1, (size_t)elem, f) == (size_t)elem;
    }
    ok &= fclose(f) == 0;
    return ok ? 0 : npu_io_fail(err, errn, "%s: error writing the file", path);
}

void npu_npy_free(npu_npy_t *a)
{
    free(a->data);
    a->data = NULL;
}
