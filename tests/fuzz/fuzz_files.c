/* fuzz_files.c - libFuzzer harness: the loaders of the files a designer hands to `npu`, on
 * arbitrary bytes: the .npy reader (sw/io/npy.h) and the saved-program reader
 * (sw/run/progfile.h: saved GEMMs and recorded programs, files of one program and of several,
 * format versions 1 and 2, seeds of each), the latter
 * twice: as given (the envelope: magic, version, length, checksum) and with its length and
 * checksum made right, so the fuzzer reaches the fields behind
 * them. Checks: no crash, no leak, a refusal always has a message, an accepted .npy holds
 * prod(shape) elements. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "run/progfile.h"

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void progfile(const uint8_t *data, size_t size)
{
    npu_progset_t s;
    char err[256] = "";
    if (npu_progset_parse(data, size, &s, err, sizeof err) == 0) {
        if (s.n == 0 || !s.p)
            abort();
        npu_progset_free(&s);
    } else if (!err[0]) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npu_npy_t a;
    char err[256] = "";
    if (npu_npy_parse(data, size, &a, err, sizeof err) == 0) {
        size_t count = 1;
        for (int i = 0; i < a.ndim; i++)
            count *= (size_t)a.shape[i];
        if (count != a.count || !a.data)
            abort();
        npu_npy_free(&a);
    } else if (!err[0]) {
        abort();
    }
    progfile(data, size);
    if (size >= 32) {
        uint8_t *q = malloc(size);
        uint64_t h;
        if (!q)
            return 0;
        memcpy(q, data, size);
        for (int i = 0; i < 8; i++)
            q[16 + i] = (uint8_t)((uint64_t)size >> (8 * i));
        h = fnv1a(q, size - 8);
        for (int i = 0; i < 8; i++)
            q[size - 8 + i] = (uint8_t)(h >> (8 * i));
        progfile(q, size);
        free(q);
    }
    return 0;
}
