/*
 * test_bf16.c - the element type on the Verilated NPU of this build (issue 15; docs/datapath.md
 * section 6). At a bf16 configuration the array multiplies bf16 and sums fp32, the OBUF adds fp32
 * across K waves; every result is compared as a 32-bit pattern with the order-matched golden
 * (ref/golden_bf16.h, the plan's K partition). At an int16 configuration the same tests check the
 * int16 datapath (int16 operands, int32 wrap-around), so they run in every TEST_CONFIGS entry.
 *   - random shapes under the three mapping policies with random DRAM stalls (four parts of 50:
 *     200 GEMMs per config);
 *   - special values, one output each, with hand-derived results: signs, ±0, Inf, NaN of both
 *     signs, 0 x Inf, Inf - Inf, denormal inputs flushed, overflow of a product and of a sum,
 *     RNE ties whose result depends on the summation order (int16: wrap-around extremes).
 */
#include <string.h>

#include "rtl_common.h"

static const unsigned STALL = 10; /* % of cycles the DRAM withholds a handshake */
static const int k_policy[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};

/* Random shapes: at S = 2 up to 40 x 40 x 48 (several K chunks and tiles), at S >= 8 up to
 * 72 x 72 x 96; the policy rotates. */
static void random_shapes(int part, int count)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(5000 + (uint64_t)part);
    uint64_t x = seed * 2654435761u + 1;
    int mn = cfg.s <= 2 ? 40 : 72, kmax = cfg.s <= 2 ? 48 : 96;
    for (int i = 0; i < count; i++) {
        int M = 1 + (int)(rtl_rand(&x) % (uint64_t)mn), N = 1 + (int)(rtl_rand(&x) % (uint64_t)mn);
        int K = 1 + (int)(rtl_rand(&x) % (uint64_t)kmax);
        int ta = (int)(rtl_rand(&x) % 4 == 0), tb = (int)(rtl_rand(&x) % 4 == 0);
        rtl_gemm_check_policy(&cfg, M, N, K, ta, tb, seed + (uint64_t)i, STALL, 0,
                              k_policy[(i + part) % 3], NULL);
    }
}
Test(bf16, random_a, .timeout = 900) { random_shapes(0, 50); }
Test(bf16, random_b, .timeout = 900) { random_shapes(1, 50); }
Test(bf16, random_c, .timeout = 900) { random_shapes(2, 50); }
Test(bf16, random_d, .timeout = 900) { random_shapes(3, 50); }

/* One output each: C[i][i] = sum_k a[k] * b[k] over K = 4 lanes (one wave), expected bits. */
typedef struct special {
    const char *what;
    uint16_t a[4], b[4];
    uint32_t c;
} special_t;

/* bf16 patterns: 1 0x3F80, 2 0x4000, 3 0x4040, -1 0xBF80, Inf 0x7F80, 2^-12 0x3980, 2^120
 * 0x7B80, 2^127 0x7F00, 2^-70 0x1C80, smallest denormal 0x0001. */
static const special_t k_bf16[] = {
    {"1*1 + 2*1 + 3*1 = 6", {0x3F80, 0x4000, 0x4040, 0}, {0x3F80, 0x3F80, 0x3F80, 0}, 0x40C00000u},
    {"-1 * 3 = -3", {0xBF80, 0, 0, 0}, {0x4040, 0, 0, 0}, 0xC0400000u},
    {"-0 * 1 + -0 * 1: the chain starts at +0", {0x8000, 0x8000, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x00000000u},
    {"Inf * 1 + 1 = Inf", {0x7F80, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7F800000u},
    {"-Inf * 1 + 1 = -Inf", {0xFF80, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0xFF800000u},
    {"Inf + -Inf = NaN", {0x7F80, 0xFF80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"0 * Inf = NaN", {0, 0x3F80, 0, 0}, {0x7F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"negative NaN input -> the canonical NaN", {0xFFC1, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"signalling NaN weight -> the canonical NaN", {0x3F80, 0, 0, 0}, {0x7F81, 0, 0, 0}, 0x7FC00000u},
    {"denormal * 2^120 flushed: 0 + 1 = 1", {0x0001, 0x3F80, 0, 0}, {0x7B80, 0x3F80, 0, 0}, 0x3F800000u},
    {"denormal * Inf = 0 * Inf = NaN", {0x8001, 0, 0, 0}, {0x7F80, 0, 0, 0}, 0x7FC00000u},
    {"2^127 * 2 overflows to Inf", {0x7F00, 0, 0, 0}, {0x4000, 0, 0, 0}, 0x7F800000u},
    {"-2^127 * 2 overflows to -Inf", {0xFF00, 0, 0, 0}, {0x4000, 0, 0, 0}, 0xFF800000u},
    {"2^127 + 2^127 overflows to Inf", {0x7F00, 0x7F00, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7F800000u},
    {"2^-70 * 2^-70 flushes to +0", {0x1C80, 0, 0, 0}, {0x1C80, 0, 0, 0}, 0x00000000u},
    {"(1 + 2^-24) + 2^-24: two ties to even = 1", {0x3F80, 0x3980, 0x3980, 0}, {0x3F80, 0x3980, 0x3980, 0}, 0x3F800000u},
    {"(2^-24 + 2^-24) + 1 = 1 + 2^-23, exact", {0x3980, 0x3980, 0x3F80, 0}, {0x3980, 0x3980, 0x3F80, 0}, 0x3F800001u},
};

/* int16: products and wrap-around at the extremes. */
static const special_t k_int16[] = {
    {"1*1 + 2*1 + 3*1 = 6", {1, 2, 3, 0}, {1, 1, 1, 0}, 6u},
    {"-32768 * -32768 = 2^30", {0x8000, 0, 0, 0}, {0x8000, 0, 0, 0}, 0x40000000u},
    {"2 * 2^30 wraps to -2^31", {0x8000, 0x8000, 0, 0}, {0x8000, 0x8000, 0, 0}, 0x80000000u},
    {"4 * 2^30 wraps to 0", {0x8000, 0x8000, 0x8000, 0x8000}, {0x8000, 0x8000, 0x8000, 0x8000}, 0u},
    {"-32768 * 32767", {0x8000, 0, 0, 0}, {0x7FFF, 0, 0, 0}, 0xC0008000u},
    {"-1 * 1 = -1", {0xFFFF, 0, 0, 0}, {1, 0, 0, 0}, 0xFFFFFFFFu},
};

/* The cases as an M x 4 A and a 4 x M B (case i in row i of A and column i of B); C[i][i] must
 * be case i's result, every other output the golden's (npu_gemm_run's compare). */
static void run_specials(const special_t *sp, int n, int emit)
{
    npu_cfg_t cfg = rtl_cfg();
    int16_t A[32 * 4], B[4 * 32];
    int32_t C[32 * 32];
    npu_gemm_report_t r;
    cr_assert(n <= 32);
    memset(B, 0, sizeof B);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            A[i * 4 + k] = (int16_t)(sp[i].a[k] >= 0x8000u ? (int)sp[i].a[k] - 0x10000 : (int)sp[i].a[k]);
            B[k * n + i] = (int16_t)(sp[i].b[k] >= 0x8000u ? (int)sp[i].b[k] - 0x10000 : (int)sp[i].b[k]);
        }
    npu_sim_t *s = rtl_open(&cfg, STALL, 0, 9);
    int rc = npu_gemm_run_modes(&cfg, s, n, n, 4, A, B, 0, 0, emit, C, rtl_budget(&cfg, n, n, 4), &r);
    cr_assert_eq(rc, NPU_GEMM_PASS, "policy %d: %s, C[%d][%d] = 0x%08x, expected 0x%08x %s", emit,
                 npu_gemm_rc_name(rc), r.bad_row, r.bad_col, (unsigned)r.bad_got, (unsigned)r.bad_exp,
                 r.counters_msg);
    for (int i = 0; i < n; i++)
        cr_expect_eq((uint32_t)C[i * n + i], sp[i].c, "policy %d, %s: 0x%08x, expected 0x%08x", emit,
                     sp[i].what, (unsigned)(uint32_t)C[i * n + i], (unsigned)sp[i].c);
    npu_gemm_report_free(&r);
    npu_sim_close(s);
}

Test(bf16, special_values)
{
    npu_cfg_t cfg = rtl_cfg();
    for (int p = 0; p < 3; p++) {
        if (npu_cfg_bf16(&cfg))
            run_specials(k_bf16, (int)(sizeof k_bf16 / sizeof k_bf16[0]), k_policy[p]);
        else
            run_specials(k_int16, (int)(sizeof k_int16 / sizeof k_int16[0]), k_policy[p]);
    }
}
