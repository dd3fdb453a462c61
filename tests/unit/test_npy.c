/*
 * test_npy.c - the .npy reader and writer (sw/io/npy.h):
 *
 * npy/numpy_bytes      a file byte for byte as NumPy 1.24 writes it (np.save of a 2x3 int16
 *                      array, header padded to 128 bytes) parses to its shape and values.
 * npy/round_trip       int16 / int32 / int64 at ranks 0..3 (extreme values) written and read back;
 *                      the header is 64-byte aligned and ends in a newline.
 * npy/versions         the same array under a 2.0 and a 3.0 header (4-byte length).
 * npy/errors           each refusal with its message: magic, version, dtype (float, big-endian,
 *                      uint), Fortran order, missing / repeated / unknown keys, truncated header,
 *                      truncated data, bytes past the data, too many dimensions; and the 2-D int16
 *                      loader naming the dtype or rank found, and a missing file.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"

/* "\x93NUMPY" v1.0 with the header dict h (padded to 64 bytes) and data bytes. */
static size_t make_v1(unsigned char *buf, const char *h, const void *data, size_t n)
{
    size_t hl = strlen(h), len = (10 + hl + 1 + 63) / 64 * 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)((len - 10) & 0xff);
    buf[9] = (unsigned char)((len - 10) >> 8);
    memset(buf + 10, ' ', len - 10);
    memcpy(buf + 10, h, hl);
    buf[len - 1] = '\n';
    memcpy(buf + len, data, n);
    return len + n;
}

static void refused(const unsigned char *buf, size_t n, const char *want)
{
    npu_npy_t a;
    char err[256] = "";
    cr_assert_eq(npu_npy_parse(buf, n, &a, err, sizeof err), -1, "accepted, want '%s'", want);
    cr_assert(strstr(err, want) != NULL, "message '%s', want '%s'", err, want);
    cr_assert_null(a.data);
}

Test(npy, numpy_bytes)
{
    unsigned char buf[256];
    const int16_t v[6] = {1, -2, 3, 4, 5, -32768};
    npu_npy_t a;
    char err[200];
    size_t hl = 118;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)hl;
    buf[9] = 0;
    memset(buf + 10, ' ', hl);
    memcpy(buf + 10, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }", 60);
    buf[10 + hl - 1] = '\n';
    for (int i = 0; i < 6; i++) { /* little-endian */
        buf[128 + 2 * i] = (unsigned char)((uint16_t)v[i] & 0xff);
        buf[129 + 2 * i] = (unsigned char)((uint16_t)v[i] >> 8);
    }
    cr_assert_eq(npu_npy_parse(buf, 140, &a, err, sizeof err), 0, "%s", err);
    cr_assert(a.elem == 2 && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.count == 6);
    cr_assert_arr_eq(a.data, v, sizeof v);
    npu_npy_free(&a);
}

static void round_trip(int elem, int ndim, const int64_t *shape)
{
    char path[] = "/tmp/npu_npy_XXXXXX", err[200];
    unsigned char head[16];
    size_t count = 1;
    npu_npy_t a;
    FILE *f;
    for (int i = 0; i < ndim; i++)
        count *= (size_t)shape[i];
    int64_t *src = malloc(count * 8 + 8);
    void *data = malloc(count * 8 + 8);
    for (size_t i = 0; i < count; i++) {
        int64_t x = (int64_t)(i * 2654435761u) - (int64_t)(i << 40);
        src[i] = elem == 2 ? (int16_t)x : elem == 4 ? (int32_t)x : x;
        if (i == 0)
            src[i] = elem == 2 ? INT16_MIN : elem == 4 ? INT32_MIN : INT64_MIN;
        if (elem == 2) ((int16_t *)data)[i] = (int16_t)src[i];
        else if (elem == 4) ((int32_t *)data)[i] = (int32_t)src[i];
        else ((int64_t *)data)[i] = src[i];
    }
    close(mkstemp(path));
    cr_assert_eq(npu_npy_save(path, elem, ndim, shape, data, err, sizeof err), 0, "%s", err);
    f = fopen(path, "rb");
    cr_assert_eq(fread(head, 1, 10, f), 10u);
    fclose(f);
    cr_assert_eq((10 + head[8] + 256 * head[9]) % 64, 0, "data aligned to 64 bytes");
    cr_assert_eq(npu_npy_load(path, &a, err, sizeof err), 0, "%s", err);
    remove(path);
    cr_assert(a.elem == elem && a.ndim == ndim && a.count == count);
    for (int i = 0; i < ndim; i++)
        cr_assert_eq(a.shape[i], shape[i]);
    cr_assert_arr_eq(a.data, data, count * (size_t)elem);
    npu_npy_free(&a);
    free(src);
    free(data);
}

Test(npy, round_trip)
{
    const int64_t s3[3] = {2, 3, 5}, s2[2] = {7, 1}, s1[1] = {9};
    for (int e = 2; e <= 8; e *= 2) {
        round_trip(e, 0, NULL);
        round_trip(e, 1, s1);
        round_trip(e, 2, s2);
        round_trip(e, 3, s3);
    }
}

Test(npy, versions)
{
    unsigned char v1[256], v2[256];
    const int32_t d[2] = {-7, 70000};
    npu_npy_t a;
    char err[200];
    size_t n = make_v1(v1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", d, 8);
    for (int major = 2; major <= 3; major++) {
        size_t hl = n - 8 - 10; /* the v1 dict with its padding, behind a 4-byte length */
        memcpy(v2, "\x93NUMPY", 6);
        v2[6] = (unsigned char)major;
        v2[7] = 0;
        v2[8] = (unsigned char)hl;
        v2[9] = v2[10] = v2[11] = 0;
        memcpy(v2 + 12, v1 + 10, hl);
        memcpy(v2 + 12 + hl, d, 8);
        cr_assert_eq(npu_npy_parse(v2, 12 + hl + 8, &a, err, sizeof err), 0, "v%d: %s", major, err);
        cr_assert(a.elem == 4 && a.ndim == 1 && a.shape[0] == 2);
        cr_assert_arr_eq(a.data, d, 8);
        npu_npy_free(&a);
    }
}

Test(npy, errors)
{
    unsigned char b[512];
    const int16_t d[4] = {1, 2, 3, 4};
    const char *ok = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }";
    size_t n = make_v1(b, ok, d, 8);
    char err[256], path[] = "/tmp/npu_npy_XXXXXX";
    int r, c;
    int16_t *m;
    npu_npy_t a;

    refused((const unsigned char *)"hello world", 11, "not a .npy file");
    b[6] = 4;
    refused(b, n, "format version 4.0 is not supported");
    b[6] = 1;
    refused(b, n - 1, "truncated data: the shape needs 8 bytes, the file has 7");
    refused(b, 40, "truncated header");
    b[n] = 0;
    refused(b, n + 1, "1 bytes past the data");
    n = make_v1(b, "{'descr': '>i2', 'fortran_order': False, 'shape': (2, 2), }", d, 8);
    refused(b, n, "dtype '>i2' is not supported");
    n = make_v1(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", d, 8);
    refused(b, n, "dtype '<f4' is not supported: int16, int32 or int64");
    n = make_v1(b, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }", d, 8);
    refused(b, n, "dtype '<u2'");
    n = make_v1(b, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2), }", d, 8);
    refused(b, n, "Fortran order is not supported");
    n = make_v1(b, "{'descr': '<i2', 'shape': (2, 2), }", d, 8);
    refused(b, n, "needs descr, fortran_order and shape");
    n = make_v1(b, "{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (4,), }", d, 8);
    refused(b, n, "repeated key or value for 'descr'");
    n = make_v1(b, "{'descr': '<i2', 'fortran_order': False, 'shape': (4,), 'x': 1}", d, 8);
    refused(b, n, "for 'x'");
    n = make_v1(b, "{'descr': '<i2', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }", d, 8);
    refused(b, n, "for 'shape'");
    n = make_v1(b, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), ", d, 8);
    refused(b, n, "expected a quoted key");
    n = make_v1(b, "{\"shape\": (2,2), \"descr\": \"<i2\", \"fortran_order\": False}", d, 8);
    cr_assert_eq(npu_npy_parse(b, n, &a, err, sizeof err), 0, "any key order, no trailing comma: %s", err);
    npu_npy_free(&a);

    /* the 2-D int16 loader names what it found */
    close(mkstemp(path));
    cr_assert_eq(npu_npy_save(path, 4, 2, (const int64_t[]){2, 1}, (const int32_t[]){1, 2}, err,
                              sizeof err), 0);
    cr_assert_eq(npu_npy_load_i16_2d(path, &r, &c, &m, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "dtype int32") && strstr(err, "astype(np.int16)"), "%s", err);
    cr_assert_eq(npu_npy_save(path, 2, 1, (const int64_t[]){4}, d, err, sizeof err), 0);
    cr_assert_eq(npu_npy_load_i16_2d(path, &r, &c, &m, err, sizeof err), -1);
    cr_assert(strstr(err, "not 2-D"), "%s", err);
    cr_assert_eq(npu_npy_save(path, 2, 2, (const int64_t[]){1, 4}, d, err, sizeof err), 0);
    cr_assert_eq(npu_npy_load_i16_2d(path, &r, &c, &m, err, sizeof err), 0, "%s", err);
    cr_assert(r == 1 && c == 4 && m[3] == 4);
    free(m);
    remove(path);
    cr_assert_eq(npu_npy_load("/nonexistent-dir/a.npy", &(npu_npy_t){0}, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent-dir/a.npy: No such file"), "%s", err);
}
