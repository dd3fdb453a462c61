/* digits.c - the digits data set: gzip'ed CSV loader, seeded split and epoch order. */
#define _POSIX_C_SOURCE 200809L /* readlink, access */
#include "data/digits.h"
#include "io/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

uint64_t npu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One CSV line: `features` values in 0..255 then the label in 0..classes-1. */
static int parse_line(char *s, uint8_t *x, int features, int classes, uint8_t *label)
{
    for (int i = 0; i <= features; i++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > (i < features ? 255 : classes - 1))
            return -1;
        if (i < features) {
            if (*end != ',')
                return -1;
            x[i] = (uint8_t)v;
        } else {
            if (*end != '\n' && *end != '\r' && *end != 0)
                return -1;
            *label = (uint8_t)v;
        }
        s = end + 1;
    }
    return 0;
}

int npu_digits_load(const char *path, npu_dataset_t *d, char *why, size_t n)
{
    char line[1024];
    int row = 0;
    gzFile f = gzopen(path, "rb");
    memset(d, 0, sizeof *d);
    if (!f) {
        snprintf(why, n, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    d->features = NPU_DIGITS_FEATURES;
    d->h = d->w = 8;
    d->c = 1;
    d->classes = NPU_DIGITS_CLASSES;
    d->x = malloc((size_t)NPU_DIGITS_N * NPU_DIGITS_FEATURES);
    d->label = malloc(NPU_DIGITS_N);
    if (!d->x || !d->label) {
        snprintf(why, n, "out of memory");
        goto fail;
    }
    while (gzgets(f, line, sizeof line)) {
        if (row == NPU_DIGITS_N) {
            snprintf(why, n, "%s: more than %d images", path, NPU_DIGITS_N);
            goto fail;
        }
        if (parse_line(line, d->x + (size_t)row * NPU_DIGITS_FEATURES, NPU_DIGITS_FEATURES,
                       NPU_DIGITS_CLASSES, d->label + row)) {
            snprintf(why, n, "%s:%d: expected %d values in 0..16 and a label in 0..9", path,
                     row + 1, NPU_DIGITS_FEATURES);
            goto fail;
        }
        row++;
    }
    if (row != NPU_DIGITS_N) {
        snprintf(why, n, "%s: %d images, expected %d (truncated or not the digits file)", path,
                 row, NPU_DIGITS_N);
        goto fail;
    }
    gzclose(f);
    d->n = row;
    return 0;
fail:
    gzclose(f);
    npu_dataset_free(d);
    return -1;
}

int npu_digits_find(const char *path, char *out, size_t n)
{
    if (path) {
        snprintf(out, n, "%s", path);
        return access(out, R_OK) ? -1 : 0;
    }
    return npu_repo_file("sw/data/digits.csv.gz", out, n);
}

void npu_dataset_free(npu_dataset_t *d)
{
    free(d->x);
    free(d->label);
    memset(d, 0, sizeof *d);
}

static void shuffle(int *v, int n, uint64_t *st)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(npu_splitmix64(st) % (uint64_t)(i + 1)), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

int npu_split_make(int n, double test_frac, uint64_t seed, npu_split_t *s)
{
    int *perm = malloc((size_t)n * sizeof *perm);
    uint64_t st = seed ^ 0x5EEDu;
    memset(s, 0, sizeof *s);
    if (!perm || test_frac <= 0 || test_frac >= 1) {
        free(perm);
        return -1;
    }
    for (int i = 0; i < n; i++)
        perm[i] = i;
    shuffle(perm, n, &st);
    s->n_test = (int)(n * test_frac + 0.5);
    s->n_train = n - s->n_test;
    s->test = perm;
    s->train = perm + s->n_test;
    return 0;
}

void npu_split_free(npu_split_t *s)
{
    free(s->test); /* one allocation: test, then train */
    memset(s, 0, sizeof *s);
}

void npu_epoch_order(const npu_split_t *s, uint64_t seed, int epoch, int *order)
{
    uint64_t st = seed * 0x100000001B3ull + (uint64_t)epoch + 1;
    memcpy(order, s->train, (size_t)s->n_train * sizeof *order);
    shuffle(order, s->n_train, &st);
}
