/* bf16.c - bit-exact bf16 / fp32 arithmetic of the bf16 datapath (bf16.h), integer only. */
#include "ref/bf16.h"

#define FP32_INF 0x7F800000u

/* Zero of the given sign, and Inf of the given sign (sign: 0 or 1). */
static uint32_t fp32_zero(uint32_t sign) { return sign << 31; }
static uint32_t fp32_inf(uint32_t sign) { return sign << 31 | FP32_INF; }

/* The special cases of a product, the same for bf16 and fp32 operands (both have 8-bit
 * exponents): from each operand's biased exponent and whether its fraction is nonzero, a NaN
 * (any NaN, 0 x Inf), Inf, or zero (a zero or denormal operand: FTZ) of the product's sign.
 * 1 with the result in *r, or 0 for two normal operands. */
static int mul_special(uint32_t sign, int ea, int fa, int eb, int fb, uint32_t *r)
{
    int nan_a = ea == 0xFF && fa, nan_b = eb == 0xFF && fb;
    int inf_a = ea == 0xFF && !fa, inf_b = eb == 0xFF && !fb;
    int zero_a = ea == 0, zero_b = eb == 0;
    if (nan_a || nan_b || (inf_a && zero_b) || (zero_a && inf_b))
        *r = NPU_FP32_NAN;
    else if (inf_a || inf_b)
        *r = fp32_inf(sign);
    else if (zero_a || zero_b)
        *r = fp32_zero(sign);
    else
        return 0;
    return 1;
}

uint32_t npu_bf16_mul(uint16_t a, uint16_t b)
{
    uint32_t sign = (uint32_t)((a ^ b) >> 15), r;
    int ea = (a >> 7) & 0xFF, eb = (b >> 7) & 0xFF;
    if (mul_special(sign, ea, (a & 0x7F) != 0, eb, (b & 0x7F) != 0, &r))
        return r;
    /* 8 x 8 significand bits -> 16-bit product in [2^14, 2^16): exact. */
    uint32_t p = (uint32_t)(0x80 | (a & 0x7F)) * (uint32_t)(0x80 | (b & 0x7F));
    int e = ea + eb - 127; /* biased exponent of a product in [1, 2) */
    if (p & 0x8000) {      /* product in [2, 4): one more exponent, one less fraction bit */
        e++;
        p <<= 8;
    } else {
        p <<= 9;
    }
    if (e >= 0xFF)
        return fp32_inf(sign);
    if (e <= 0)
        return fp32_zero(sign); /* below 2^-126: FTZ */
    return sign << 31 | (uint32_t)e << 23 | (p & 0x7FFFFF);
}

/* A rounded result: sign, biased exponent e and the 24-bit significand mant (hidden bit at bit 23;
 * 2^24 when rounding carried out of it: the next binade), packed with the range rules: Inf at
 * e >= 255, zero of its sign at e <= 0 (FTZ). */
static uint32_t fp32_pack(uint32_t sign, int e, uint32_t mant)
{
    if (mant >> 24) {
        mant >>= 1;
        e++;
    }
    if (e >= 0xFF)
        return fp32_inf(sign);
    if (e <= 0)
        return fp32_zero(sign);
    return sign << 31 | (uint32_t)e << 23 | (mant & 0x7FFFFF);
}

/* Index of the most significant set bit of x (x != 0). */
static int msb(uint32_t x)
{
    int n = 0;
    while (x >>= 1)
        n++;
    return n;
}

uint32_t npu_fp32_add(uint32_t a, uint32_t b)
{
    uint32_t sa = a >> 31, sb = b >> 31;
    int ea = (a >> 23) & 0xFF, eb = (b >> 23) & 0xFF;
    uint32_t fa = a & 0x7FFFFF, fb = b & 0x7FFFFF;
    if ((ea == 0xFF && fa) || (eb == 0xFF && fb))
        return NPU_FP32_NAN;
    if (ea == 0xFF && eb == 0xFF)
        return sa == sb ? a : NPU_FP32_NAN; /* Inf + -Inf */
    if (ea == 0xFF)
        return a;
    if (eb == 0xFF)
        return b;
    if (ea == 0 && eb == 0)
        return fp32_zero(sa & sb); /* RNE: -0 only for -0 + -0 */
    if (ea == 0)
        return b; /* b is normal: x + 0 = x */
    if (eb == 0)
        return a;

    /* Order by magnitude: |x| >= |y| (exponent, then fraction: the unsigned bit order). */
    uint32_t x = a & 0x7FFFFFFF, y = b & 0x7FFFFFFF, sx = sa, sy = sb;
    if (y > x) {
        uint32_t t = x; x = y; y = t;
        t = sx; sx = sy; sy = t;
    }
    int ex = (int)(x >> 23), ey = (int)(y >> 23);
    /* Significands with the hidden bit and three bits below the LSB (guard, round, sticky). */
    uint32_t mx = (0x800000 | (x & 0x7FFFFF)) << 3;
    uint32_t my = (0x800000 | (y & 0x7FFFFF)) << 3;
    int d = ex - ey;
    if (d >= 27) {
        my = 1; /* entirely below the round bit: only the sticky bit remains */
    } else if (d > 0) {
        uint32_t lost = my & ((1u << d) - 1);
        my = my >> d | (lost != 0);
    }
    uint32_t m; /* 28 bits: the sum of two 27-bit values, or a difference below 2^27 */
    int e = ex;
    if (sx == sy) {
        m = mx + my;
        if (m >> 27) { /* carry: one place right, keeping the sticky bit */
            m = m >> 1 | (m & 1);
            e++;
        }
    } else {
        m = mx - my;
        if (m == 0)
            return 0; /* x - x = +0 under RNE */
        int shift = 26 - msb(m); /* bring the leading one back to bit 26 */
        m <<= shift;
        e -= shift;
    }
    if (e <= 0)
        return fp32_zero(sx); /* below 2^-126: FTZ (such a sum is exact, no rounding involved) */
    /* Round to nearest, ties to even, on the guard bit (bit 2) and the bits below it. */
    uint32_t mant = m >> 3, rest = m & 7;
    if (rest > 4 || (rest == 4 && (mant & 1)))
        mant++;
    return fp32_pack(sx, e, mant);
}

uint32_t npu_fp32_mul(uint32_t a, uint32_t b)
{
    uint32_t sign = (a ^ b) >> 31, r;
    int ea = (a >> 23) & 0xFF, eb = (b >> 23) & 0xFF;
    uint32_t fa = a & 0x7FFFFF, fb = b & 0x7FFFFF;
    if (mul_special(sign, ea, fa != 0, eb, fb != 0, &r))
        return r;
    /* 24 x 24 significand bits: a 48-bit product in [2^46, 2^48) */
    uint64_t p = (uint64_t)(0x800000 | fa) * (uint64_t)(0x800000 | fb);
    int e = ea + eb - 127;
    if (p >> 47)
        e++; /* product in [2, 4) */
    else
        p <<= 1;
    /* leading one at bit 47: 24 significand bits above bit 24, 24 bits below to round on */
    uint32_t mant = (uint32_t)(p >> 24), rest = (uint32_t)(p & 0xFFFFFF);
    if (rest > 0x800000 || (rest == 0x800000 && (mant & 1)))
        mant++;
    return fp32_pack(sign, e, mant); /* the rounded result below 2^-126: FTZ */
}

uint16_t npu_fp32_to_bf16(uint32_t x)
{
    uint32_t e = (x >> 23) & 0xFF;
    if (e == 0xFF && (x & 0x7FFFFF))
        return NPU_BF16_NAN;
    if (e == 0)
        return (uint16_t)(x >> 16 & 0x8000); /* zero or denormal: zero of its sign */
    /* RNE on the low 16 bits; a carry runs into the exponent, and from the largest finite
     * values into Inf (0x7F80), which is the overflow rule. Inf itself has zero low bits. */
    uint32_t r = x + 0x7FFF + ((x >> 16) & 1);
    return (uint16_t)(r >> 16);
}

uint32_t npu_bf16_mac(uint32_t psum, uint16_t a, uint16_t w)
{
    return npu_fp32_add(psum, npu_bf16_mul(a, w));
}
