/* test_bf16.c - the bf16 / fp32 arithmetic model (sw/ref/bf16.h): special values by hand, RNE
 * ties, and cross-checks against the host FPU (IEEE 754 binary32, round to nearest even, no
 * flush to zero: the x86-64 / AArch64 default) wherever the two semantics coincide. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ref/bf16.h"
#include "../fp/fp_operands.h"

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int is_denormal(uint32_t u) { return (u & 0x7F800000u) == 0 && (u & 0x7FFFFF); }
static int is_nan(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFF); }
/* Denormals read as zero of their sign (the model's input rule). */
static uint32_t ftz(uint32_t u) { return is_denormal(u) ? (u & 0x80000000u) : u; }

/* What the model must return given the host's IEEE result h for FTZ'd operands: h itself,
 * except a denormal result flushes to zero of its sign and a NaN is the canonical one. */
static uint32_t expect_from_host(uint32_t h)
{
    if (is_nan(h))
        return NPU_FP32_NAN;
    return ftz(h);
}

/* A hand-made case of a commutative binary operation: a op b = r. */
struct case2 { uint32_t a, b, r; };

static uint32_t add_op(uint32_t a, uint32_t b) { return npu_fp32_add(a, b); }
static uint32_t mul_op(uint32_t a, uint32_t b) { return npu_bf16_mul((uint16_t)a, (uint16_t)b); }

/* Every case both ways round. */
static void expect_cases(const char *name, uint32_t (*op)(uint32_t, uint32_t),
                         const struct case2 *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r = op(t[i].a, t[i].b), c = op(t[i].b, t[i].a);
        cr_expect_eq(r, t[i].r, "%s(%x, %x) = %08x, want %08x", name, t[i].a, t[i].b, r, t[i].r);
        cr_expect_eq(c, t[i].r, "%s(%x, %x) = %08x, want %08x (commuted)", name, t[i].b, t[i].a,
                     c, t[i].r);
    }
}

Test(bf16, add_special_values)
{
    static const struct case2 t[] = {
        {0x00000000, 0x00000000, 0x00000000}, /* +0 + +0 */
        {0x80000000, 0x00000000, 0x00000000}, /* -0 + +0 = +0 (RNE) */
        {0x80000000, 0x80000000, 0x80000000}, /* -0 + -0 = -0 */
        {0x3F800000, 0xBF800000, 0x00000000}, /* x - x = +0 */
        {0x3F800000, 0x80000000, 0x3F800000}, /* x + -0 = x */
        {0x00000001, 0x80000000, 0x00000000}, /* denormal reads as +0 */
        {0x807FFFFF, 0x80000001, 0x80000000}, /* two negative denormals: -0 */
        {0x00800000, 0x80000001, 0x00800000}, /* denormal addend ignored */
        {0x00C00000, 0x80800000, 0x00000000}, /* 1.5*2^-126 - 2^-126: denormal -> +0 */
        {0x80C00000, 0x00800000, 0x80000000}, /* ... and -0 for the negative side */
        {0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000}, /* overflow -> +Inf */
        {0xFF7FFFFF, 0xFF000000, 0xFF800000}, /* -> -Inf */
        {0x7F7FFFFF, 0x73000000, 0x7F800000}, /* max + half an ulp: a tie, max is odd: up, to Inf */
        {0x7F800000, 0x3F800000, 0x7F800000}, /* Inf + x */
        {0xBF800000, 0xFF800000, 0xFF800000}, /* x + -Inf */
        {0x7F800000, 0x7F800000, 0x7F800000},
        {0x7F800000, 0xFF800000, NPU_FP32_NAN}, /* Inf - Inf */
        {0x7F800001, 0x3F800000, NPU_FP32_NAN}, /* signalling NaN -> canonical */
        {0x3F800000, 0xFFFFFFFF, NPU_FP32_NAN}, /* negative NaN -> canonical */
        {0xFFC00000, 0x7F800000, NPU_FP32_NAN},
        {0x3F800000, 0x33800000, 0x3F800000}, /* 1 + 2^-24: tie, to even (down) */
        {0x3F800001, 0x33800000, 0x3F800002}, /* odd + tie: up */
        {0x3F800000, 0x33800001, 0x3F800001}, /* just above the tie: up (sticky) */
        {0x3F800000, 0xB3800000, 0x3F7FFFFF}, /* 1 - 2^-24: exact in the binade below */
        {0x3F800000, 0xB3000000, 0x3F800000}, /* 1 - 2^-25: tie in the binade below -> 1 */
        {0x3F800000, 0x00800000, 0x3F800000}, /* far below: sticky only */
        {0x4B7FFFFF, 0x3F000000, 0x4B800000}, /* 2^24 - 1 + 0.5: tie, odd -> up, carry */
    };
    expect_cases("add", add_op, t, sizeof t / sizeof t[0]);
}

Test(bf16, mul_special_values)
{
    static const struct case2 t[] = { /* bf16 a, b; fp32 product */
        {0x3F80, 0x3F80, 0x3F800000}, /* 1 * 1 */
        {0x3FFF, 0x3FFF, 0x407E0100}, /* (2 - 2^-7)^2 = 4 - 2^-5 + 2^-14: exact */
        {0xBFC0, 0x4040, 0xC0900000}, /* -1.5 * 3 = -4.5 */
        {0x0000, 0xBF80, 0x80000000}, /* +0 * -1 = -0 */
        {0x8000, 0x8000, 0x00000000}, /* -0 * -0 = +0 */
        {0x0001, 0x3F80, 0x00000000}, /* denormal reads as zero */
        {0x807F, 0x3F80, 0x80000000},
        {0x0080, 0x3F80, 0x00800000}, /* min normal * 1 */
        {0x0080, 0x3F00, 0x00000000}, /* min normal / 2: denormal -> +0 */
        {0x8080, 0x3F00, 0x80000000}, /* ... -0 */
        {0x1F80, 0x2000, 0x00000000}, /* 2^-64 * 2^-63 = 2^-127 -> 0 */
        {0x1F80, 0x2080, 0x00800000}, /* 2^-64 * 2^-62 = 2^-126: the smallest normal */
        {0x5F80, 0x6000, 0x7F800000}, /* 2^64 * 2^65 = 2^129: overflow */
        {0x5F80, 0x5F80, 0x7F800000}, /* 2^64 * 2^64 = 2^128: one past the range */
        {0x7F7F, 0x3F80, 0x7F7F0000}, /* bf16 max * 1 */
        {0x7F7F, 0xBFC0, 0xFF800000}, /* bf16 max * -1.5: -Inf */
        {0x7F80, 0x3F80, 0x7F800000}, /* Inf * 1 */
        {0x7F80, 0xFF80, 0xFF800000}, /* Inf * -Inf */
        {0x7F80, 0x0000, NPU_FP32_NAN}, /* Inf * 0 */
        {0x8000, 0xFF80, NPU_FP32_NAN},
        {0x0001, 0x7F80, NPU_FP32_NAN}, /* denormal is zero: NaN */
        {0x7FC0, 0x3F80, NPU_FP32_NAN},
        {0xFF81, 0x0000, NPU_FP32_NAN}, /* any NaN, even times zero */
    };
    expect_cases("mul", mul_op, t, sizeof t / sizeof t[0]);
}

Test(bf16, to_bf16_special_values)
{
    static const struct { uint32_t x; uint16_t y; } t[] = {
        {0x3F800000, 0x3F80}, {0xBF800000, 0xBF80},
        {0x3F808000, 0x3F80}, /* tie, even: down */
        {0x3F818000, 0x3F82}, /* tie, odd: up */
        {0x3F808001, 0x3F81}, /* above the tie */
        {0x3F807FFF, 0x3F80}, /* below */
        {0x3FFF8000, 0x4000}, /* carry into the exponent */
        {0x7F7F7FFF, 0x7F7F}, {0x7F7F8000, 0x7F80}, /* overflow to Inf (tie, odd) */
        {0xFF7FFFFF, 0xFF80},
        {0x7F800000, 0x7F80}, {0xFF800000, 0xFF80},
        {0x7F800001, NPU_BF16_NAN}, /* would truncate to Inf: NaN stays NaN */
        {0xFFFFFFFF, NPU_BF16_NAN},
        {0x00000000, 0x0000}, {0x80000000, 0x8000},
        {0x007FFFFF, 0x0000}, {0x807FFFFF, 0x8000}, /* denormals: zero of their sign */
        {0x00800000, 0x0080}, {0x00FFFFFF, 0x0100},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        cr_expect_eq(npu_fp32_to_bf16(t[i].x), t[i].y, "%08x -> %04x, want %04x", t[i].x,
                     npu_fp32_to_bf16(t[i].x), t[i].y);
}

static float host_add(float a, float b) { return a + b; }
static float host_mul(float a, float b) { return a * b; }

/* A binary fp32 operation of the model against the host's over 2^21 pairs of every generator
 * mode: the host's result of the FTZ'd operands, flushed and with NaN made canonical, must equal
 * the model bit for bit. skip_tiny: results below 2^-125 in magnitude are left out (a product
 * the host rounds on the denormal grid). Returns the normal results compared. */
static size_t host_pairs(uint64_t s, const char *name, uint32_t (*model)(uint32_t, uint32_t),
                         float (*host)(float, float), int skip_tiny)
{
    size_t n = (size_t)1 << 21, compared_normal = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b, a = fp_rand_pair(&s, &b);
        volatile float fa = f_of(ftz(a)), fb = f_of(ftz(b));
        uint32_t h = u_of(host(fa, fb)), got = model(a, b), exp = expect_from_host(h);
        if (skip_tiny && (h & 0x7FFFFFFFu) < 0x01000000u && (h & 0x7FFFFFFFu) != 0)
            continue;
        compared_normal += (h & 0x7F800000u) && (h & 0x7F800000u) != 0x7F800000u;
        if (got != exp)
            cr_assert_fail("pair %zu: %s(%08x, %08x) = %08x, host %08x -> want %08x", i, name, a, b,
                           got, h, exp);
    }
    return compared_normal;
}

Test(bf16, add_matches_host_fpu)
{
    size_t n = host_pairs(0x9E3779B97F4A7C15ull, "add", add_op, host_add, 0);
    cr_assert_gt(n, (size_t)1 << 20, "normal results compared: %zu", n);
}

/* bf16 products against the host's float product (exact for bf16 operands unless it overflows
 * or goes denormal), and the MAC (one rounding: the add). */
Test(bf16, mul_and_mac_match_host_fpu)
{
    uint64_t s = 12345;
    for (size_t i = 0; i < ((size_t)1 << 20); i++) {
        uint16_t a = bf16_rand(&s), w = bf16_rand(&s);
        uint32_t c, unused = fp_rand_pair(&s, &c);
        (void)unused;
        volatile float fa = f_of(ftz((uint32_t)a << 16)), fw = f_of(ftz((uint32_t)w << 16));
        volatile float prod = fa * fw;
        uint32_t p = npu_bf16_mul(a, w), pexp = expect_from_host(u_of(prod));
        if (p != pexp)
            cr_assert_fail("%04x * %04x = %08x, host %08x -> want %08x", a, w, p, u_of(prod), pexp);
        /* The MAC's reference adds the flushed product (as the PE does) with the host's add. */
        volatile float fc = f_of(ftz(c)), fp = f_of(pexp);
        uint32_t m = npu_bf16_mac(c, a, w), mexp = expect_from_host(u_of(fc + fp));
        if (m != mexp)
            cr_assert_fail("%08x + %04x * %04x = %08x, want %08x", c, a, w, m, mexp);
    }
}

/* fp32 -> bf16 against the nearest of the two neighbouring bf16 values, chosen with exact double
 * distances (ties to the even one), over random patterns and every high half with edge lows. */
static uint16_t nearest_bf16(uint32_t x)
{
    if (is_nan(x))
        return NPU_BF16_NAN;
    if ((x & 0x7F800000u) == 0)
        return (uint16_t)(x >> 16 & 0x8000);
    uint16_t lo = (uint16_t)(x >> 16), hi = (uint16_t)(lo + 1); /* toward and away from zero */
    if ((x & 0xFFFF) == 0)
        return lo;
    double v = fabs((double)f_of(x)), dlo = v - fabs((double)f_of((uint32_t)lo << 16));
    double dhi = fabs((double)f_of((uint32_t)hi << 16)) - v; /* hi may be Inf: dhi = Inf */
    if ((hi & 0x7F80) == 0x7F80) /* past the largest finite: IEEE rounds to Inf from the tie */
        dhi = (double)f_of(0x7F7F8000u) <= v ? 0 : INFINITY;
    if (dlo < dhi || (dlo == dhi && !(lo & 1)))
        return lo;
    return hi;
}

Test(bf16, to_bf16_matches_nearest)
{
    uint64_t s = 777;
    static const uint16_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
    for (uint32_t h = 0; h < 0x10000; h++)
        for (size_t j = 0; j < sizeof lows / sizeof lows[0]; j++) {
            uint32_t x = h << 16 | lows[j];
            if (npu_fp32_to_bf16(x) != nearest_bf16(x))
                cr_assert_fail("%08x -> %04x, want %04x", x, npu_fp32_to_bf16(x), nearest_bf16(x));
        }
    for (size_t i = 0; i < ((size_t)1 << 20); i++) {
        uint32_t x = (uint32_t)fp_rand(&s);
        if (npu_fp32_to_bf16(x) != nearest_bf16(x))
            cr_assert_fail("%08x -> %04x, want %04x", x, npu_fp32_to_bf16(x), nearest_bf16(x));
    }
}

/* fp32 products by hand: specials, the signs of zeros and Infs, RNE ties and the carry into the
 * next binade, overflow, and the FTZ of a result whose rounded value is below 2^-126. */
static uint32_t fmul_op(uint32_t a, uint32_t b) { return npu_fp32_mul(a, b); }
Test(bf16, fp32_mul_special_values)
{
    static const struct case2 t[] = {
        {0x3F800000, 0x3F800000, 0x3F800000}, /* 1 * 1 */
        {0x80000000, 0x3F800000, 0x80000000}, /* -0 * 1 = -0 */
        {0x80000000, 0x80000000, 0x00000000}, /* -0 * -0 = +0 */
        {0x00000001, 0x7F000000, 0x00000000}, /* denormal reads as 0 */
        {0x807FFFFF, 0x3F800000, 0x80000000}, /* -denormal: -0 */
        {0x7F800000, 0xBF800000, 0xFF800000}, /* Inf * -1 */
        {0x7F800000, 0x00000000, NPU_FP32_NAN}, /* Inf * 0 */
        {0xFF800000, 0x00400000, NPU_FP32_NAN}, /* Inf * denormal (0) */
        {0x7F800001, 0x3F800000, NPU_FP32_NAN}, /* signalling NaN */
        {0xFFC00000, 0x00000000, NPU_FP32_NAN}, /* negative quiet NaN */
        {0x7F7FFFFF, 0x40000000, 0x7F800000}, /* overflow: Inf */
        {0xFF7FFFFF, 0x3F800001, 0xFF800000}, /* rounds up past the largest finite */
        {0x3F800001, 0x3F800001, 0x3F800002}, /* (1+u)^2 = 1+2u+u^2: rounds down */
        {0x3FFFFFFF, 0x3FFFFFFF, 0x407FFFFE}, /* (2-u)^2 = 4-4u+u^2 */
        {0x3F7FFFFF, 0x3F800001, 0x3F800000}, /* (1-u/2)(1+u) = 1+u/2-u^2/2: RNE to 1 */
        {0x00800000, 0x3F000000, 0x00000000}, /* 2^-126 / 2: below 2^-126, flushed */
        {0x80800000, 0x3F800000, 0x80800000}, /* -2^-126 * 1: stays normal */
        {0x00FFFFFF, 0x3F000000, 0x00000000}, /* 2^-126 * (1-2^-24), exact, below 2^-126: flushed */
        {0x00800001, 0x3F7FFFFF, 0x00800000}, /* 2^-126 (1+u)(1-u/2) rounds to 2^-126 */
        {0x40400000, 0x3EAAAAAB, 0x3F800000}, /* 3 * (1/3 rounded up) = 1 */
    };
    expect_cases("fp32_mul", fmul_op, t, sizeof t / sizeof t[0]);
}

/* fp32 products against the host's (host_pairs): results below 2^-125 are left out, the host
 * rounds them on the denormal grid where the model rounds to 24 bits and then flushes. */
Test(bf16, fp32_mul_matches_host_fpu)
{
    size_t n = host_pairs(0xD1B54A32D192ED03ull, "fp32_mul", fmul_op, host_mul, 1);
    /* 788,362 normal ones; the rest overflow, flush or are special (compared too) */
    cr_assert_gt(n, (size_t)1 << 19, "normal products compared: %zu", n);
}
