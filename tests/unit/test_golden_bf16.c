/*
 * test_golden_bf16.c - the order-matched bf16 golden model (ref/golden_bf16.h) and the K
 * partition it is given (compile/gemm's npu_gemm_kwaves), on the functional model:
 *   - the claim the golden rests on: lanes outside a wave's k range add ±0, which leaves a psum
 *     chain that starts at +0 unchanged -- except a psum that a flushed underflow made -0
 *     (shown, and kept out of the seeded operands' range);
 *   - the partition covers [0, K) once, in 2S blocks (1G4C: S), chunk by chunk, FlexSA's odd
 *     chunks backwards;
 *   - GEMMs of every policy at bf16 configs (S = 2, 8) bit-exact against the golden on the
 *     functional model, and the order matters: the plain k-order sum differs on some outputs;
 *   - the seeded operands are finite normals or zeros in the stated range.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "npu_funcsim.h"
#include "ref/bf16.h"
#include "ref/golden.h"
#include "ref/golden_bf16.h"
#include "run/runtime.h"
#include "test_cfgs.h"

/* A psum chain of n products with ±0 products (a = ±0) inserted after position `at`. */
Test(golden_bf16, zero_lanes_leave_the_chain)
{
    uint64_t st = 7;
    for (int trial = 0; trial < 2000; trial++) {
        int16_t a[40], b[40], a2[48], b2[48];
        int n = 1 + (int)(test_rand(&st) % 32), z = 1 + (int)(test_rand(&st) % 8);
        int at = (int)(test_rand(&st) % (uint64_t)(n + 1));
        npu_random_operands_bf16(1, 1, n, test_rand(&st), a, b);
        for (int t = 0, u = 0; t <= n; t++) {
            if (t == at) /* z zero lanes: a = +0 or -0 against any finite weight */
                for (int q = 0; q < z; q++, u++) {
                    a2[u] = (int16_t)(test_rand(&st) & 1 ? 0x8000 - 0x10000 : 0);
                    b2[u] = b[q % n];
                }
            if (t < n) {
                a2[u] = a[t];
                b2[u] = b[t];
                u++;
            }
        }
        cr_assert_eq(npu_bf16_chain(a2, 1, b2, 1, n + z), npu_bf16_chain(a, 1, b, 1, n),
                     "trial %d: n %d, %d zero lanes at %d", trial, n, z, at);
    }
}

/* The exception: -1.5 * 2^-126 + 2^-126 = -2^-127 flushes to -0; a +0 lane after it gives +0. */
Test(golden_bf16, flushed_minus_zero_is_the_exception)
{
    const int16_t a[3] = {(int16_t)(0xA040 - 0x10000), 0x2000, 0}; /* -1.5 * 2^-63, 2^-63, +0 */
    const int16_t b[3] = {0x2000, 0x2000, 0x3F80};                 /* 2^-63, 2^-63, 1 */
    cr_assert_eq(npu_bf16_chain(a, 1, b, 1, 2), 0x80000000u);
    cr_assert_eq(npu_bf16_chain(a, 1, b, 1, 3), 0x00000000u);
}

/* The seeded operands: zeros of either sign or normals with |x| in [2^-8, 2^8). */
Test(golden_bf16, seeded_operand_range)
{
    int16_t A[64 * 64], B[64 * 64];
    int zeros = 0, neg = 0;
    npu_random_operands_bf16(64, 64, 64, 3, A, B);
    for (int i = 0; i < 64 * 64; i++) {
        uint16_t v = (uint16_t)A[i];
        unsigned e = (v >> 7) & 0xFFu;
        zeros += (v & 0x7FFFu) == 0;
        neg += v >> 15;
        cr_assert((v & 0x7FFFu) == 0 || (e >= 127 - 8 && e <= 127 + 7), "A[%d] = 0x%04x", i, v);
    }
    cr_assert(zeros > 64 * 64 / 32 && zeros < 64 * 64 / 8, "%d zeros", zeros);
    cr_assert(neg > 64 * 64 / 3, "%d negative", neg);
}

/* Every plan's partition: consecutive blocks of `step` inside 2S-blocks, each k once. */
static void check_partition(const npu_cfg_t *c, int M, int N, int K, int modes)
{
    npu_gemm_report_t rep;
    int k0[4096], k1[4096], seen[4096];
    cr_assert_eq(npu_gemm_compile_modes(c, 1u << 24, M, N, K, 0, 0, modes, &rep), NPU_GEMM_PASS);
    const npu_gemm_plan_t *p = &rep.plan;
    for (int mi = 0; mi < p->m_tiles; mi++)
        for (int ni = 0; ni < p->n_tiles; ni++) {
            size_t n = npu_gemm_kwaves(p, modes, c->s, mi, ni, k0, k1, 4096);
            int step = modes == NPU_EMIT_1G4C ? c->s : 2 * c->s;
            long t = p->order ? (long)ni * p->m_tiles + mi : (long)mi * p->n_tiles + ni;
            memset(seen, 0, sizeof seen);
            cr_assert(n <= 4096);
            for (size_t w = 0; w < n; w++) {
                int chunk = k0[w] / p->Kc;
                cr_assert(k0[w] < k1[w] && k1[w] - k0[w] <= step && k0[w] % step == 0);
                cr_assert_eq((k1[w] - 1) / p->Kc, chunk, "a wave inside one chunk");
                for (int k = k0[w]; k < k1[w]; k++)
                    seen[k]++;
                if (w == 0 || (k0[w - 1] / p->Kc) != chunk)
                    continue;
                /* inside a chunk: ascending, except FlexSA's odd chunks (descending 2S blocks) */
                if (modes == NPU_EMIT_FLEXSA && (t * p->k_chunks + chunk) % 2)
                    cr_assert(k0[w] < k0[w - 1], "chunk %d of tile %ld backwards", chunk, t);
                else
                    cr_assert_eq(k0[w], k1[w - 1]);
            }
            for (int k = 0; k < K; k++)
                cr_assert_eq(seen[k], 1, "k %d covered %d times (M %d N %d K %d modes %d)", k,
                             seen[k], M, N, K, modes);
        }
    npu_gemm_report_free(&rep);
}

Test(golden_bf16, kwaves_partition)
{
    const int shapes[][3] = {{5, 7, 3}, {33, 21, 47}, {20, 11, 300}, {64, 64, 1000}, {9, 40, 129}};
    for (int s = 2; s <= 8; s += 6) {
        npu_cfg_t c = bf16_cfg(s);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int modes = 0; modes < 3; modes++)
                check_partition(&c, shapes[i][0], shapes[i][1], shapes[i][2], modes);
    }
}

/* A partition that ignores the plan: one wave per 2S block, ascending. */
static size_t plain_waves(void *ctx, int i, int j, int *k0, int *k1, size_t max)
{
    const int *KF = ctx; /* {K, F} */
    size_t n = 0;
    (void)i;
    (void)j;
    for (int k = 0; k < KF[0]; k += KF[1], n++)
        if (n < max) {
            k0[n] = k;
            k1[n] = k + KF[1] < KF[0] ? k + KF[1] : KF[0];
        }
    return n;
}

/* One GEMM of policy modes on the functional model at config c: PASS (bit-exact against the
 * order-matched golden); returns how many outputs the plain k-order sum gets wrong. */
static size_t fake_gemm(const npu_cfg_t *c, int M, int N, int K, int modes, uint64_t seed)
{
    npu_dram_timing_t t = {(double)c->dram_bw, (unsigned)c->dram_latency,
                           (unsigned)c->dram_burst_cost, 20, seed};
    int16_t *A = malloc(sizeof *A * (size_t)M * K), *B = malloc(sizeof *B * (size_t)K * N);
    int32_t *C = malloc(sizeof *C * (size_t)M * N), *P = malloc(sizeof *P * (size_t)M * N);
    int KF[2] = {K, 2 * c->s};
    npu_gemm_report_t rep;
    cr_assert(A && B && C && P);
    npu_random_operands_bf16(M, N, K, seed, A, B);
    npu_funcsim_config(c);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    int rc = npu_gemm_run_modes(c, s, M, N, K, A, B, 0, 0, modes, C, 100000000, &rep);
    cr_assert_eq(rc, NPU_GEMM_PASS, "S %d %dx%dx%d modes %d: %s, C[%d][%d] = 0x%08x, expected 0x%08x",
                 c->s, M, N, K, modes, npu_gemm_rc_name(rc), rep.bad_row, rep.bad_col,
                 (unsigned)rep.bad_got, (unsigned)rep.bad_exp);
    cr_assert_eq(npu_golden_gemm_bf16(M, N, K, A, (size_t)K, 0, B, (size_t)N, 0, P, (size_t)N,
                                      plain_waves, KF), 0);
    size_t bad = npu_compare_i32(M, N, C, (size_t)N, P, (size_t)N, NULL, NULL, NULL, NULL);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
    free(A);
    free(B);
    free(C);
    free(P);
    return bad;
}

Test(golden_bf16, fake_gemms_bit_exact_and_order_matters)
{
    const int shapes[][3] = {{5, 7, 3}, {13, 9, 21}, {33, 21, 47}, {20, 11, 300}, {40, 37, 70}};
    size_t differs[3] = {0, 0, 0};
    for (int s = 2; s <= 8; s += 6) {
        npu_cfg_t c = bf16_cfg(s);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int modes = 0; modes < 3; modes++)
                differs[modes] += fake_gemm(&c, shapes[i][0], shapes[i][1], shapes[i][2], modes, 11 + i);
    }
    /* 1G4C sums S-deep waves, FlexSA reverses odd chunks: the plain order is not theirs */
    cr_assert_gt(differs[NPU_EMIT_1G4C], 0);
    cr_assert_gt(differs[NPU_EMIT_FLEXSA], 0);
}
