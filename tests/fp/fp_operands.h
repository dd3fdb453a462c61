/*
 * fp_operands.h - operand generators for the bf16 / fp32 arithmetic tests, shared by the unit
 * tests (tests/unit/test_bf16.c) and the RTL vector generator (tests/fp/bf16_vectors.c).
 * Uniformly random bit patterns rarely align, cancel, tie or overflow, so the pairs are drawn
 * from modes that do: exponents a few places apart, near-equal magnitudes of opposite signs,
 * the exponent extremes, and the special values (FP_SPECIALS).
 */
#ifndef FP_OPERANDS_H
#define FP_OPERANDS_H

#include <stdint.h>

static inline uint64_t fp_rand(uint64_t *s) /* xorshift64 (s != 0) */
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* fp32 special values: zeros, denormals, the normal extremes, one, Infs, NaNs (quiet, signalling,
 * negative). The bf16 specials are their high halves plus bf16's own denormal and NaN forms. */
static const uint32_t FP_SPECIALS[] = {
    0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00400000, 0x00800000, 0x80800000,
    0x00800001, 0x3F800000, 0xBF800000, 0x3F7FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000,
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0xFFFFFFFF,
};
#define FP_NSPECIALS (sizeof FP_SPECIALS / sizeof FP_SPECIALS[0])
static const uint16_t BF16_SPECIALS[] = {
    0x0000, 0x8000, 0x0001, 0x807F, 0x0040, 0x0080, 0x8080, 0x0081, 0x3F80, 0xBF80,
    0x3F7F, 0x7F7F, 0xFF7F, 0x7F00, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FBF,
    0xFFFF, 0x1F80, 0x2000, 0x5F80, 0x6000, 0x4000,
};
#define BF16_NSPECIALS (sizeof BF16_SPECIALS / sizeof BF16_SPECIALS[0])

/* Sets the biased exponent field (0..255) of an fp32 pattern. */
static inline uint32_t fp_with_exp(uint32_t x, int e)
{
    return (x & 0x807FFFFFu) | (uint32_t)(e & 0xFF) << 23;
}

/* One fp32 operand pair for an addition: returns a, writes b. */
static inline uint32_t fp_rand_pair(uint64_t *s, uint32_t *b)
{
    uint64_t r = fp_rand(s);
    uint32_t a = (uint32_t)r, y = (uint32_t)(r >> 32);
    int ea = 1 + (int)(fp_rand(s) % 254), d = (int)(fp_rand(s) % 61) - 30;
    switch (fp_rand(s) % 8) {
    case 0: /* any bit patterns */
        break;
    case 1: case 2: /* exponents up to 30 apart: alignment and sticky bits */
        a = fp_with_exp(a, ea);
        y = fp_with_exp(y, ea + d < 1 ? 1 : ea + d > 254 ? 254 : ea + d);
        break;
    case 3: case 4: /* -a plus a few ulps, or one exponent off: cancellation */
        a = fp_with_exp(a, ea);
        y = (a ^ 0x80000000u) + (uint32_t)(fp_rand(s) % 9) - 4;
        if (fp_rand(s) & 1)
            y = fp_with_exp(y, ea > 1 ? ea - 1 : 2);
        break;
    case 5: /* near overflow */
        a = fp_with_exp(a, 252 + (int)(fp_rand(s) % 3));
        y = fp_with_exp(y, 250 + (int)(fp_rand(s) % 5));
        break;
    case 6: /* near the denormal boundary */
        a = fp_with_exp(a, 1 + (int)(fp_rand(s) % 4));
        y = fp_with_exp(y, (int)(fp_rand(s) % 4));
        break;
    default: /* a special value against anything */
        a = FP_SPECIALS[fp_rand(s) % FP_NSPECIALS];
        break;
    }
    if (fp_rand(s) & 1) {
        uint32_t t = a; a = y; y = t;
    }
    *b = y;
    return a;
}

/* One bf16 operand: mostly moderate exponents (products that neither overflow nor flush, so
 * accumulations stay interesting), some of any exponent, some specials. */
static inline uint16_t bf16_rand(uint64_t *s)
{
    uint64_t r = fp_rand(s);
    uint16_t x = (uint16_t)r;
    switch ((r >> 32) % 8) {
    case 0:
        return x;
    case 1:
        return BF16_SPECIALS[(r >> 40) % BF16_NSPECIALS];
    default: /* exponent 127 +- 20 */
        return (uint16_t)((x & 0x807F) | (uint16_t)(107 + (r >> 40) % 41) << 7);
    }
}

#endif
