/*
 * bf16_vectors.c - test vectors for the bf16 arithmetic units' RTL (tests/fp/tb_bf16_units.v),
 * with the expected results from the C model (sw/ref/bf16.h).
 *
 *   bf16_vectors OUTDIR [SEED]   writes OUTDIR/{mul,add,cvt,mac,fpm,counts}.hex
 *
 * For $readmemh, one hex word per line: counts.hex the number of vectors in each of the five
 * files (in the order above); each file one vector per line, the fields from the top bits down:
 *   mul.hex  {a[15:0], b[15:0], p[31:0]}                 npu_bf16_mul
 *   add.hex  {a[31:0], b[31:0], s[31:0]}                 npu_fp32_add
 *   cvt.hex  {x[31:0], y[15:0]}                          npu_fp32_to_bf16
 *   mac.hex  {psum[31:0], a[15:0], w[15:0], out[31:0]}   npu_pe, BF16 = 1 (npu_bf16_mac)
 *   fpm.hex  {a[31:0], b[31:0], p[31:0]}                 npu_fp32_mul
 * Each holds every cross product of the special values (FP_SPECIALS, BF16_SPECIALS) and random
 * operands from tests/fp/fp_operands.h; cvt.hex also every bf16 value plus half an ulp (a tie).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ref/bf16.h"
#include "fp_operands.h"

#define NRAND 32768 /* random vectors per unit (half for cvt): 147,456 in all */

static FILE *counts; /* counts.hex */

static FILE *open_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

/* Opens one vector file and records its count in counts.hex. */
static FILE *open_out(const char *dir, const char *name, unsigned count)
{
    fprintf(counts, "%08x\n", count);
    return open_file(dir, name);
}

static void close_out(FILE *f)
{
    if (fclose(f) != 0) {
        perror("bf16_vectors");
        exit(1);
    }
}

static void mul_vec(FILE *f, uint16_t a, uint16_t b)
{
    fprintf(f, "%04x%04x%08x\n", a, b, npu_bf16_mul(a, b));
}
static void add_vec(FILE *f, uint32_t a, uint32_t b)
{
    fprintf(f, "%08x%08x%08x\n", a, b, npu_fp32_add(a, b));
}
static void cvt_vec(FILE *f, uint32_t x)
{
    fprintf(f, "%08x%04x\n", x, npu_fp32_to_bf16(x));
}
static void fpm_vec(FILE *f, uint32_t a, uint32_t b)
{
    fprintf(f, "%08x%08x%08x\n", a, b, npu_fp32_mul(a, b));
}
static void mac_vec(FILE *f, uint32_t c, uint16_t a, uint16_t w)
{
    fprintf(f, "%08x%04x%04x%08x\n", c, a, w, npu_bf16_mac(c, a, w));
}

/* One file of an fp32 x fp32 unit: the special values' cross product, then NRAND random pairs. */
static void fp32_pairs(const char *dir, const char *name, void (*vec)(FILE *, uint32_t, uint32_t),
                       uint64_t *s)
{
    const unsigned nf = FP_NSPECIALS;
    FILE *f = open_out(dir, name, nf * nf + NRAND);
    for (unsigned i = 0; i < nf * nf; i++)
        vec(f, FP_SPECIALS[i / nf], FP_SPECIALS[i % nf]);
    for (unsigned i = 0; i < NRAND; i++) {
        uint32_t b, a = fp_rand_pair(s, &b);
        vec(f, a, b);
    }
    close_out(f);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUTDIR [SEED]\n", argv[0]);
        return 2;
    }
    uint64_t s = argc == 3 ? strtoull(argv[2], NULL, 0) : 1;
    if (s == 0)
        s = 1;
    const unsigned nb = BF16_NSPECIALS, nf = FP_NSPECIALS;

    counts = open_file(argv[1], "counts.hex");
    FILE *f = open_out(argv[1], "mul.hex", nb * nb + NRAND);
    for (unsigned i = 0; i < nb * nb; i++)
        mul_vec(f, BF16_SPECIALS[i / nb], BF16_SPECIALS[i % nb]);
    for (unsigned i = 0; i < NRAND; i++) {
        uint16_t a = bf16_rand(&s);
        mul_vec(f, a, bf16_rand(&s));
    }
    close_out(f);

    fp32_pairs(argv[1], "add.hex", add_vec, &s);

    f = open_out(argv[1], "cvt.hex", nf + 65536 + NRAND / 2);
    for (unsigned i = 0; i < nf; i++)
        cvt_vec(f, FP_SPECIALS[i]);
    for (uint32_t h = 0; h < 65536; h++)
        cvt_vec(f, h << 16 | 0x8000);
    for (unsigned i = 0; i < NRAND / 2; i++)
        cvt_vec(f, (uint32_t)fp_rand(&s));
    close_out(f);

    f = open_out(argv[1], "mac.hex", nf * nb * nb + NRAND);
    for (unsigned i = 0; i < nf * nb * nb; i++)
        mac_vec(f, FP_SPECIALS[i / (nb * nb)], BF16_SPECIALS[i / nb % nb], BF16_SPECIALS[i % nb]);
    for (unsigned i = 0; i < NRAND; i++) {
        uint32_t c, unused = fp_rand_pair(&s, &c);
        uint16_t a = bf16_rand(&s);
        (void)unused;
        mac_vec(f, c, a, bf16_rand(&s));
    }
    close_out(f);

    /* fp32 products: the specials' cross product, then random pairs (the addition's modes put
     * exponents near each other, which for a product means near 2^0 .. 2^±127: overflow, FTZ
     * and the rounding carry into the next binade) */
    fp32_pairs(argv[1], "fpm.hex", fpm_vec, &s);
    close_out(counts);
    return 0;
}
