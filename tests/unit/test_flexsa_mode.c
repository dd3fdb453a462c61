/* test_flexsa_mode.c - FlexSA mode selection (Algorithm 1), sub-wave row split, wave plans of the
 * three policies (ideal utilization, SPM->LBUF traffic, mode mix) against the brief's and the
 * issue's numbers, and the synthetic pruned ResNet-50 set (issue 3, acceptance 4-7). */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "model/pruned_layers.h"
#include "run/flexsa_report.h"
#include "test_cfgs.h"

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* ------------------------------------------------------------------ mode selection */

typedef struct mode_case {
    int n, k;
    npu_mode_t mode;
} mode_case_t;

/* Issue 3 acceptance 4 (S = 8). */
Test(flexsa, truth_table_s8)
{
    static const mode_case_t c[] = {
        {16, 16, NPU_MODE_FW}, {16, 8, NPU_MODE_HSW}, {8, 16, NPU_MODE_VSW}, {8, 8, NPU_MODE_ISW},
        {9, 9, NPU_MODE_FW},   {9, 8, NPU_MODE_HSW},  {8, 9, NPU_MODE_VSW},  {1, 1, NPU_MODE_ISW},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        cr_assert_eq(npu_flexsa_mode(8, c[i].n, c[i].k), c[i].mode, "(n,k)=(%d,%d): %s, want %s",
                     c[i].n, c[i].k, npu_flexsa_mode_name(npu_flexsa_mode(8, c[i].n, c[i].k)),
                     npu_flexsa_mode_name(c[i].mode));
}

/* Brief 7.3 item 9 (S = 64). */
Test(flexsa, truth_table_s64)
{
    static const mode_case_t c[] = {
        {128, 128, NPU_MODE_FW}, {128, 64, NPU_MODE_HSW}, {64, 128, NPU_MODE_VSW},
        {64, 64, NPU_MODE_ISW},  {65, 65, NPU_MODE_FW},   {65, 64, NPU_MODE_HSW},
        {64, 65, NPU_MODE_VSW},  {1, 1, NPU_MODE_ISW},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        cr_assert_eq(npu_flexsa_mode(64, c[i].n, c[i].k), c[i].mode, "(n,k)=(%d,%d)", c[i].n,
                     c[i].k);
}

/* Every (n, k) of a 2S x 2S tile: the mode's sub-arrays are exactly big enough (n <= the
 * sub-array width, k <= its height) and no mode with more sharing would fit. */
Test(flexsa, mode_fits_tile)
{
    static const int Ss[] = {1, 2, 8, 16, 64};
    for (size_t si = 0; si < sizeof Ss / sizeof Ss[0]; si++) {
        int S = Ss[si];
        for (int n = 1; n <= 2 * S; n++)
            for (int k = 1; k <= 2 * S; k++) {
                npu_mode_t m = npu_flexsa_mode(S, n, k);
                int w = (m == NPU_MODE_FW || m == NPU_MODE_HSW) ? 2 * S : S; /* sub-array width */
                int h = (m == NPU_MODE_FW || m == NPU_MODE_VSW) ? 2 * S : S; /* height */
                cr_assert(n <= w && k <= h, "S=%d (%d,%d) does not fit %s", S, n, k,
                          npu_flexsa_mode_name(m));
                cr_assert(!(n <= S && w == 2 * S) && !(k <= S && h == 2 * S),
                          "S=%d (%d,%d): %s wastes a half", S, n, k, npu_flexsa_mode_name(m));
            }
    }
    cr_assert_eq(npu_flexsa_parts(NPU_MODE_FW), 1);
    cr_assert_eq(npu_flexsa_parts(NPU_MODE_HSW), 2);
    cr_assert_eq(npu_flexsa_parts(NPU_MODE_VSW), 2);
    cr_assert_eq(npu_flexsa_parts(NPU_MODE_ISW), 4);
    cr_assert_eq(npu_flexsa_parts((npu_mode_t)7), 0);
    cr_assert_str_eq(npu_flexsa_mode_name(NPU_MODE_VSW), "VSW");
    cr_assert_str_eq(npu_flexsa_policy_name(NPU_POLICY_FLEXSA), "FlexSA");
}

/* ------------------------------------------------------------------ row split */

Test(flexsa, split_sums_to_m)
{
    static const npu_mode_t modes[] = {NPU_MODE_FW, NPU_MODE_VSW, NPU_MODE_HSW, NPU_MODE_ISW};
    for (int m = 1; m <= 600; m++)
        for (int mi = 0; mi < 4; mi++) {
            npu_flexsa_split_t s;
            int P = npu_flexsa_parts(modes[mi]), sum = 0, mx = 0;
            unsigned cores = 0;
            int cyc = npu_flexsa_split(modes[mi], m, &s);
            cr_assert_eq(s.count, P);
            for (int i = 0; i < s.count; i++) {
                cr_assert_eq(s.row0[i], sum, "m=%d %s: sub-waves contiguous", m,
                             npu_flexsa_mode_name(modes[mi]));
                cr_assert(s.rows[i] == m / P || s.rows[i] == cdiv(m, P), "m=%d sub %d rows %d", m,
                          i, s.rows[i]);
                cr_assert(s.cores[i] && !(cores & s.cores[i]), "disjoint core sets");
                cores |= s.cores[i];
                sum += s.rows[i];
                if (s.rows[i] > mx)
                    mx = s.rows[i];
            }
            cr_assert_eq(sum, m, "m=%d %s: rows sum %d", m, npu_flexsa_mode_name(modes[mi]), sum);
            cr_assert_eq(cores, NPU_CORES_ALL);
            cr_assert_eq(cyc, cdiv(m, P));
            cr_assert_eq(s.cycles, mx);
        }
}

/* The ceil goes to the first sub-waves, and ISW keeps the VSW left/right row boundary. */
Test(flexsa, split_examples)
{
    npu_flexsa_split_t s, v;
    static const int isw[][5] = {/* m, rows c0, c2, c1, c3 */
                                 {1, 1, 0, 0, 0}, {2, 1, 0, 1, 0}, {3, 1, 1, 1, 0},
                                 {5, 2, 1, 1, 1}, {6, 2, 1, 2, 1}, {7, 2, 2, 2, 1},
                                 {32, 8, 8, 8, 8}};
    cr_assert_eq(npu_flexsa_split(NPU_MODE_HSW, 7, &s), 4);
    cr_assert(s.rows[0] == 4 && s.rows[1] == 3 && s.row0[1] == 4);
    cr_assert(s.cores[0] == 0x3u && s.cores[1] == 0xCu, "HSW: top {0,1}, bottom {2,3}");
    cr_assert_eq(npu_flexsa_split(NPU_MODE_VSW, 7, &s), 4);
    cr_assert(s.cores[0] == 0x5u && s.cores[1] == 0xAu, "VSW: left {0,2}, right {1,3}");
    for (size_t i = 0; i < sizeof isw / sizeof isw[0]; i++) {
        int m = isw[i][0];
        cr_assert_eq(npu_flexsa_split(NPU_MODE_ISW, m, &s), cdiv(m, 4));
        for (int j = 0; j < 4; j++)
            cr_assert_eq(s.rows[j], isw[i][j + 1], "ISW m=%d sub %d", m, j);
        cr_assert(s.cores[0] == 1u && s.cores[1] == 4u && s.cores[2] == 2u && s.cores[3] == 8u,
                  "ISW order c0, c2, c1, c3");
    }
    for (int m = 1; m <= 200; m++) {
        npu_flexsa_split(NPU_MODE_ISW, m, &s);
        npu_flexsa_split(NPU_MODE_VSW, m, &v);
        cr_assert_eq(s.row0[2], v.row0[1], "m=%d: ISW right half starts where VSW's does", m);
    }
    cr_assert_eq(npu_flexsa_split(NPU_MODE_FW, 0, &s), -1);
    cr_assert_eq(npu_flexsa_split((npu_mode_t)9, 4, &s), -1);
    cr_assert_eq(npu_flexsa_split(NPU_MODE_FW, 9, NULL), 9);
}

/* ------------------------------------------------------------------ ideal utilization */

static double util_of(int S, npu_flexsa_policy_t p, int M, int N, int K, npu_flexsa_stats_t *st)
{
    npu_flexsa_stats_t s;
    cr_assert(npu_flexsa_plan(S, 0, p, M, N, K, NULL, NULL, &s) > 0);
    if (st)
        *st = s;
    return npu_flexsa_util(&s);
}

typedef struct util_case {
    int N, K;
    double u1g1c, uflexsa; /* 1G4C equals FlexSA for M a multiple of 4S */
} util_case_t;

static void check_util_cases(int S, const util_case_t *c, size_t n)
{
    int M = 4096; /* large, a multiple of every blk_M */
    for (size_t i = 0; i < n; i++) {
        double a = util_of(S, NPU_POLICY_1G1C, M, c[i].N, c[i].K, NULL);
        double f = util_of(S, NPU_POLICY_FLEXSA, M, c[i].N, c[i].K, NULL);
        double q = util_of(S, NPU_POLICY_1G4C, M, c[i].N, c[i].K, NULL);
        cr_assert_float_eq(a, c[i].u1g1c, 1e-9, "S=%d N=%d K=%d 1G1C %.6f want %.6f", S, c[i].N,
                           c[i].K, a, c[i].u1g1c);
        cr_assert_float_eq(f, c[i].uflexsa, 1e-9, "S=%d N=%d K=%d FlexSA %.6f want %.6f", S,
                           c[i].N, c[i].K, f, c[i].uflexsa);
        cr_assert_float_eq(q, c[i].uflexsa, 1e-9, "S=%d N=%d K=%d 1G4C %.6f", S, c[i].N, c[i].K, q);
    }
}

/* Issue 3 acceptance 5 (S = 8), and the S = 8 analogue of the brief's N = K = 71 at S = 64:
 * 71 = S + 7 -> N = K = 9 = S + 1 stays in FW, so all policies give 81/256 = 31.64%. */
Test(flexsa, util_cases_s8)
{
    static const util_case_t c[] = {
        {5, 5, 0.09765625, 0.390625},   /* ISW, 4.0x */
        {5, 32, 0.3125, 0.625},         /* VSW */
        {32, 5, 0.3125, 0.625},         /* HSW */
        {24, 24, 0.5625, 1.0},          /* FW + HSW + VSW + ISW */
        {9, 9, 81.0 / 256, 81.0 / 256}, /* no gain */
    };
    check_util_cases(8, c, sizeof c / sizeof c[0]);
}

/* Brief 7.3 item 11 at the paper's S = 64. */
Test(flexsa, util_cases_s64)
{
    static const util_case_t c[] = {
        {40, 40, 0.09765625, 0.390625},
        {40, 256, 0.3125, 0.625},
        {256, 40, 0.3125, 0.625},
        {192, 192, 0.5625, 1.0},
        {71, 71, 71.0 * 71 / 16384, 71.0 * 71 / 16384}, /* 30.8% */
    };
    check_util_cases(64, c, sizeof c / sizeof c[0]);
    cr_assert(71.0 * 71 / 16384 > 0.3076 && 71.0 * 71 / 16384 < 0.3077);
}

/* N = K = 24 at S = 8: per m-block one wave each of FW, HSW, VSW, ISW, 2.25m vs 4m cycles; and
 * N = K = 9: FlexSA gains nothing (every wave FW). */
Test(flexsa, modes_per_mblock)
{
    npu_flexsa_stats_t f, a;
    int M = 4096, mb = M / 32;
    util_of(8, NPU_POLICY_FLEXSA, M, 24, 24, &f);
    util_of(8, NPU_POLICY_1G1C, M, 24, 24, &a);
    for (int m = 0; m < NPU_NUM_MODES; m++)
        cr_assert_eq(f.waves_mode[m], (uint64_t)mb, "%s waves", npu_flexsa_mode_name((npu_mode_t)m));
    cr_assert_eq(f.array_cycles * 4, (uint64_t)M * 9, "2.25 M cycles");
    cr_assert_eq(a.array_cycles, (uint64_t)M * 4, "4 M cycles");
    cr_assert_eq(a.waves_mode[NPU_MODE_FW], (uint64_t)4 * mb);
    util_of(8, NPU_POLICY_FLEXSA, M, 9, 9, &f);
    cr_assert_eq(f.waves_mode[NPU_MODE_FW], f.waves);
    cr_assert_float_eq(npu_flexsa_intercore_waves(&f), 1.0, 1e-12);
}

/* ------------------------------------------------------------------ wave plans */

typedef struct rec {
    npu_flexsa_wave_t w[64];
    int n;
} rec_t;

static void record(const npu_flexsa_wave_t *w, void *ctx)
{
    rec_t *r = ctx;
    if (r->n < 64)
        r->w[r->n] = *w;
    r->n++;
}

/* The Fig. 9 sequences of issue 3 acceptance 3: N = 6, K = 16+5 gives VSW then ISW (same
 * output tile, accumulate); N = 25, K = 16+5 gives FW then HSW on each of the two n-blocks. */
Test(flexsa, fig9_sequences)
{
    rec_t r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(npu_flexsa_plan(8, 0, NPU_POLICY_FLEXSA, 20, 6, 21, record, &r, NULL), 2);
    cr_assert(r.w[0].mode == NPU_MODE_VSW && r.w[0].k == 16 && r.w[0].first_k && !r.w[0].last_k);
    cr_assert(r.w[1].mode == NPU_MODE_ISW && r.w[1].k == 5 && r.w[1].k0 == 16 && r.w[1].last_k);
    cr_assert(r.w[0].m == 20 && r.w[0].cycles == 10 && r.w[1].cycles == 5);
    memset(&r, 0, sizeof r);
    cr_assert_eq(npu_flexsa_plan(8, 0, NPU_POLICY_FLEXSA, 20, 25, 21, record, &r, NULL), 4);
    static const npu_mode_t want[] = {NPU_MODE_FW, NPU_MODE_HSW, NPU_MODE_FW, NPU_MODE_HSW};
    static const int n0[] = {0, 0, 16, 16}, nn[] = {16, 16, 9, 9};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(r.w[i].mode, want[i], "wave %d: %s", i, npu_flexsa_mode_name(r.w[i].mode));
        cr_assert(r.w[i].n0 == n0[i] && r.w[i].n == nn[i], "edge tile n = min(16, N - n0)");
        cr_assert_eq(r.w[i].index, i);
        cr_assert_eq(r.w[i].core, -1);
    }
}

/* Issue 3 acceptance 6 / brief 7.3 item 13: one FW wave m = 2*2S, n = k = 2S. */
Test(flexsa, traffic_fw_wave)
{
    npu_flexsa_stats_t f, q, g, q2;
    cr_assert_eq(npu_flexsa_plan(8, 32, NPU_POLICY_FLEXSA, 32, 16, 16, NULL, NULL, &f), 1);
    cr_assert_eq(npu_flexsa_plan(8, 32, NPU_POLICY_1G1C, 32, 16, 16, NULL, NULL, &g), 1);
    cr_assert_eq(npu_flexsa_plan(8, 32, NPU_POLICY_1G4C, 32, 16, 16, NULL, NULL, &q), 4);
    cr_assert_eq(f.waves_mode[NPU_MODE_FW], 1u);
    cr_assert(f.lbuf_v == 256 && f.lbuf_h == 512 && npu_flexsa_traffic(&f) == 768);
    cr_assert_eq(npu_flexsa_traffic(&g), 768u);
    cr_assert(q.lbuf_v == 256 && q.lbuf_h == 1024 && npu_flexsa_traffic(&q) == 1280,
              "naive four-core %llu", (unsigned long long)npu_flexsa_traffic(&q));
    cr_assert_eq(q.lbuf_h, 2 * f.lbuf_h, "horizontal traffic exactly 2x");
    /* with its own LBUF_H (default blk_M = 2S) the naive cores reload the stationary tile */
    cr_assert_eq(npu_flexsa_plan(8, 0, NPU_POLICY_1G4C, 32, 16, 16, NULL, NULL, &q2), 8);
    cr_assert(q2.lbuf_v == 512 && q2.lbuf_h == 1024);
    /* the brief's S = 64 numbers: 49,152 vs 81,920 */
    npu_flexsa_plan(64, 256, NPU_POLICY_FLEXSA, 256, 128, 128, NULL, NULL, &f);
    npu_flexsa_plan(64, 256, NPU_POLICY_1G4C, 256, 128, 128, NULL, NULL, &q);
    cr_assert(f.lbuf_v == 16384 && f.lbuf_h == 32768);
    cr_assert(q.lbuf_v == 16384 && q.lbuf_h == 65536);
}

/* A stationary tile multicast to 2 (HSW, VSW) or 4 (ISW) cores is read once: V = k*n per wave,
 * and every A element of the wave is read once whatever the row split: H = m*k. */
Test(flexsa, traffic_multicast)
{
    static const int nk[][2] = {{16, 5}, {5, 16}, {5, 5}, {3, 7}, {12, 2}};
    static const npu_mode_t mode[] = {NPU_MODE_HSW, NPU_MODE_VSW, NPU_MODE_ISW, NPU_MODE_ISW,
                                      NPU_MODE_HSW};
    for (int i = 0; i < 5; i++) {
        rec_t r;
        memset(&r, 0, sizeof r);
        cr_assert_eq(npu_flexsa_plan(8, 0, NPU_POLICY_FLEXSA, 29, nk[i][0], nk[i][1], record, &r,
                                     NULL), 1);
        cr_assert_eq(r.w[0].mode, mode[i]);
        cr_assert_eq(r.w[0].lbuf_v, (uint64_t)nk[i][0] * nk[i][1]);
        cr_assert_eq(r.w[0].lbuf_h, (uint64_t)29 * nk[i][1]);
        cr_assert_eq(r.w[0].cycles, cdiv(29, npu_flexsa_parts(mode[i])));
        cr_assert_eq(r.w[0].pes, 256);
    }
}

/* Random GEMMs: coverage, MACs, the FlexSA/1G1C/1G4C relations the model must satisfy. */
static uint64_t cov_mn;
static int cov_bad;
static int cov_S;
static void coverage(const npu_flexsa_wave_t *w, void *ctx)
{
    (void)ctx;
    if (w->first_k)
        cov_mn += (uint64_t)w->m * (uint64_t)w->n;
    if (w->mode != NPU_MODE_FW && w->n == 2 * cov_S && w->k == 2 * cov_S)
        cov_bad++; /* a full tile left FW */
    if (w->mode != npu_flexsa_mode(cov_S, w->n, w->k))
        cov_bad++;
}

Test(flexsa, plan_invariants)
{
    uint64_t seed = 0x5eedf1e5a;
    static const int Ss[] = {2, 8, 16};
    for (int it = 0; it < 300; it++) {
        int S = Ss[it % 3];
        int M = 1 + (int)(test_rand(&seed) % 700), N = 1 + (int)(test_rand(&seed) % 90),
            K = 1 + (int)(test_rand(&seed) % 90);
        npu_flexsa_stats_t a, q, f;
        uint64_t macs = (uint64_t)M * N * K;
        long wf;
        cov_mn = 0;
        cov_bad = 0;
        cov_S = S;
        wf = npu_flexsa_plan(S, 0, NPU_POLICY_FLEXSA, M, N, K, coverage, NULL, &f);
        cr_assert_eq(cov_mn, (uint64_t)M * N, "tiles cover C exactly");
        cr_assert_eq(cov_bad, 0);
        cr_assert_eq(npu_flexsa_plan(S, 0, NPU_POLICY_1G1C, M, N, K, NULL, NULL, &a), wf);
        cr_assert_eq(wf, (long)cdiv(N, 2 * S) * cdiv(M, 4 * S) * cdiv(K, 2 * S));
        cr_assert_eq(npu_flexsa_plan(S, 0, NPU_POLICY_1G4C, M, N, K, NULL, NULL, &q),
                     (long)cdiv(N, S) * cdiv(M, 2 * S) * cdiv(K, S));
        cr_assert(a.macs == macs && q.macs == macs && f.macs == macs);
        cr_assert_eq(npu_flexsa_traffic(&f), npu_flexsa_traffic(&a), "FlexSA = 1G1C traffic");
        cr_assert_eq(f.lbuf_v, (uint64_t)cdiv(M, 4 * S) * K * N);
        cr_assert_eq(f.lbuf_h, (uint64_t)cdiv(N, 2 * S) * M * K);
        cr_assert_eq(q.lbuf_v, (uint64_t)cdiv(M, 2 * S) * K * N);
        cr_assert_eq(q.lbuf_h, (uint64_t)cdiv(N, S) * M * K);
        cr_assert(npu_flexsa_util(&f) >= npu_flexsa_util(&a) - 1e-12, "FlexSA >= 1G1C");
        cr_assert(npu_flexsa_util(&q) >= npu_flexsa_util(&f) - 1e-12, "1G4C (balanced) >= FlexSA");
        cr_assert(npu_flexsa_util(&q) <= 1.0 + 1e-12 && npu_flexsa_util_rr(&q) <= npu_flexsa_util(&q) + 1e-12);
        cr_assert_eq(a.array_cycles, a.pe_cycles / (uint64_t)(4 * S * S));
        cr_assert_eq(f.array_cycles, f.pe_cycles / (uint64_t)(4 * S * S));
        cr_assert_eq(q.core_cycles[0] + q.core_cycles[1] + q.core_cycles[2] + q.core_cycles[3],
                     q.pe_cycles / (uint64_t)(S * S));
        cr_assert(4 * q.array_cycles >= q.pe_cycles / (uint64_t)(S * S));
        if (N % (2 * S) == 0 && K % (2 * S) == 0)
            cr_assert_eq(f.waves_mode[NPU_MODE_FW], f.waves, "no edge tiles: all FW");
    }
    cr_assert_eq(npu_flexsa_plan(8, 0, NPU_POLICY_FLEXSA, 0, 4, 4, NULL, NULL, NULL), -1);
    cr_assert_eq(npu_flexsa_plan(0, 0, NPU_POLICY_FLEXSA, 4, 4, 4, NULL, NULL, NULL), -1);
    cr_assert_eq(npu_flexsa_plan(8, 0, NPU_NUM_POLICIES, 4, 4, 4, NULL, NULL, NULL), -1);
}

/* ------------------------------------------------------------------ pruned layer set */

static int pruned_gemms(int S, uint64_t seed, double target, npu_gemm_shape_t *g, double *fr,
                        npu_conv_layer_t *L)
{
    npu_prune_cfg_t c = {S, seed, target, 32, 32};
    int n = npu_pruned_resnet50(&c, L, NPU_RESNET50_LAYERS, fr), ng = 0;
    cr_assert_eq(n, NPU_RESNET50_LAYERS);
    for (int i = 0; i < n; i++)
        ng += npu_conv_gemms(&L[i], i, 32, g + ng);
    return ng;
}

Test(flexsa_pruned, layer_set)
{
    npu_conv_layer_t L[NPU_RESNET50_LAYERS], L2[NPU_RESNET50_LAYERS], U[NPU_RESNET50_LAYERS];
    npu_gemm_shape_t g[3 * NPU_RESNET50_LAYERS];
    double fr, fr2;
    int ng = pruned_gemms(8, 1, 0.48, g, &fr, L);
    cr_assert_eq(ng, 3 * NPU_RESNET50_LAYERS - 1, "no data gradient for conv1");
    cr_assert(fr > 0.47 && fr < 0.49, "forward MACs %.4f of the unpruned net", fr);
    pruned_gemms(8, 1, 0.48, g, &fr2, L2);
    cr_assert(memcmp(L, L2, sizeof L) == 0 && fr == fr2, "deterministic");
    pruned_gemms(8, 2, 0.48, g, &fr2, L2);
    cr_assert(memcmp(L, L2, sizeof L) != 0, "another seed, other channels");
    pruned_gemms(8, 1, 0.25, g, &fr, L2);
    cr_assert(fr > 0.24 && fr < 0.26, "high strength %.4f", fr);
    pruned_gemms(8, 1, 1.0, g, &fr, U);
    cr_assert_float_eq(fr, 1.0, 1e-12);
    /* unpruned at S = 8: ResNet-50 / 8, 32x32 image */
    cr_assert(U[0].cin == 3 && U[0].cout == 8 && U[0].kh == 7 && U[0].ho == 16);
    cr_assert(U[1].cin == 8 && U[1].cout == 8 && U[1].hi == 8);
    cr_assert_str_eq(U[NPU_RESNET50_LAYERS - 1].name, "fc");
    cr_assert(U[NPU_RESNET50_LAYERS - 1].cin == 256 && U[NPU_RESNET50_LAYERS - 1].cout == 125);
    for (int i = 0; i < NPU_RESNET50_LAYERS; i++) {
        cr_assert(L[i].cin >= 1 && L[i].cin <= U[i].cin && L[i].cout >= 1 &&
                  L[i].cout <= U[i].cout, "%s pruned within the base", L[i].name);
        cr_assert(L[i].ho >= 1 && L[i].kh == U[i].kh && L[i].ho == U[i].ho);
    }
    /* conv -> GEMM shapes of one layer (brief section 3) */
    {
        npu_conv_layer_t c = U[12]; /* s3.b0.b: 3x3 stride 2, 16 -> 16, 8x8 -> 4x4 */
        npu_gemm_shape_t s[3];
        cr_assert_str_eq(c.name, "s3.b0.b");
        cr_assert_eq(npu_conv_gemms(&c, 12, 32, s), 3);
        cr_assert(s[0].M == 32 * 16 && s[0].N == 16 && s[0].K == 16 * 9 && s[0].phase == NPU_PHASE_FWD);
        cr_assert(s[1].M == 32 * 64 && s[1].N == 16 && s[1].K == 16 * 9 && s[1].phase == NPU_PHASE_DX);
        cr_assert(s[2].M == 16 && s[2].N == 16 * 9 && s[2].K == 32 * 16 && s[2].phase == NPU_PHASE_DW);
    }
}

/* Issue 3 acceptance 7 on the set, both pruning strengths, four seeds each:
 *  - FlexSA ideal utilization >= 1G1C and within 1 point of 1G4C;
 *  - FlexSA SPM->LBUF traffic <= 1.05 x 1G1C (this model has no cross-wave reuse, so 1.00);
 *  - 1G4C traffic in [1.35, 1.65] x 1G1C: the paper's 1.5 (Fig. 11) with the brief's +-0.15;
 *    the model gives 1.52-1.60 at 48% FLOPs and 1.37-1.42 at 25% (narrower layers leave more
 *    waves with n <= S, where a naive core needs no second copy of A);
 *  - inter-core modes (FW + HSW + VSW) >= 89% of FlexSA waves. */
Test(flexsa_pruned, acceptance7)
{
    static const double target[] = {0.48, 0.25};
    npu_conv_layer_t L[NPU_RESNET50_LAYERS];
    npu_gemm_shape_t g[3 * NPU_RESNET50_LAYERS];
    for (int t = 0; t < 2; t++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            npu_flexsa_eval_t e;
            double fr;
            int ng = pruned_gemms(8, seed, target[t], g, &fr, L);
            cr_assert_eq(npu_flexsa_eval(8, 0, g, ng, &e), 0);
            double u1 = e.util[NPU_POLICY_1G1C], u4 = e.util[NPU_POLICY_1G4C],
                   uf = e.util[NPU_POLICY_FLEXSA];
            cr_assert(uf >= u1, "target %.2f seed %d: FlexSA %.4f < 1G1C %.4f", target[t],
                      (int)seed, uf, u1);
            cr_assert(uf <= u4 + 1e-12 && u4 - uf <= 0.01, "FlexSA %.4f vs 1G4C %.4f", uf, u4);
            cr_assert(uf - u1 > 0.15, "FlexSA gains on pruned shapes (%.4f vs %.4f)", uf, u1);
            cr_assert(e.util_rr[NPU_POLICY_1G4C] <= u4 + 1e-12 &&
                      u4 - e.util_rr[NPU_POLICY_1G4C] < 0.005, "round-robin close to balanced");
            cr_assert_float_eq(e.traffic_norm[NPU_POLICY_1G1C], 1.0, 1e-12);
            cr_assert(e.traffic_norm[NPU_POLICY_FLEXSA] <= 1.05, "FlexSA traffic %.3f",
                      e.traffic_norm[NPU_POLICY_FLEXSA]);
            cr_assert(e.traffic_norm[NPU_POLICY_1G4C] >= 1.35 &&
                          e.traffic_norm[NPU_POLICY_1G4C] <= 1.65,
                      "target %.2f seed %d: 1G4C traffic %.3f", target[t], (int)seed,
                      e.traffic_norm[NPU_POLICY_1G4C]);
            cr_assert(e.intercore_waves[NPU_POLICY_FLEXSA] >= 0.89, "inter-core %.3f",
                      e.intercore_waves[NPU_POLICY_FLEXSA]);
            cr_assert_float_eq(e.intercore_waves[NPU_POLICY_1G1C], 1.0, 1e-12);
            cr_assert_float_eq(e.intercore_waves[NPU_POLICY_1G4C], 0.0, 1e-12);
            cr_assert_eq(e.st[NPU_POLICY_FLEXSA].macs, e.st[NPU_POLICY_1G1C].macs);
            cr_assert_eq(e.st[NPU_POLICY_FLEXSA].macs, e.st[NPU_POLICY_1G4C].macs);
        }
    cr_assert_eq(npu_flexsa_eval(8, 0, g, 0, NULL), -1);
}

/* ------------------------------------------------------------------ the policies' roofline */

/* npu_policy_roofline (run/flexsa_report.h) takes the largest of its four terms, each from its
 * formula: S = 8 (256 PEs, 32-byte beats), compulsory bytes 2 (MK + KN) read, 4 MN written. */
Test(flexsa, policy_roofline_terms)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t comp = 0;
    /* 4096 x 5 x 5 at utilization 0.25: compute 102,400 / 64 = 1,600; bytes 41,010 + 81,920 =
     * 122,930: / 64 B = 1,920.8, read port 1,281.6, write port 2,560: at 64 B/cycle the write
     * port is the bound, at 32 B/cycle the bandwidth (3,841.6) */
    cr_assert_float_eq(npu_policy_roofline(&c, 64.0, 4096, 5, 5, 0.25, &comp), 2560.0, 1e-9);
    cr_assert_eq(comp, 122930u);
    cr_assert_float_eq(npu_policy_roofline(&c, 32.0, 4096, 5, 5, 0.25, NULL), 122930.0 / 32, 1e-9);
    /* 512^3 at 0.9: compute 134,217,728 / 230.4 = 582,542.2 dwarfs 3 x 2^19 + ... bytes */
    cr_assert_float_eq(npu_policy_roofline(&c, 32.0, 512, 512, 512, 0.9, &comp), 134217728.0 / 230.4, 1e-6);
    cr_assert_eq(comp, 2u * 2 * 512 * 512 + 4u * 512 * 512);
    /* no bandwidth given (<= 0): the ports and the array only */
    cr_assert_float_eq(npu_policy_roofline(&c, 0.0, 4096, 5, 5, 1.0, NULL), 2560.0, 1e-9);
}

/* The mode-change gap (units of S) is the injector's table (rtl/npu_exec_inject.v mode_gap):
 * from FW 2 to ISW, 1 to HSW / VSW; from HSW / VSW 1 to another non-FW mode; none into FW, from
 * ISW or to the same mode. */
Test(flexsa, mode_gap_is_the_injectors)
{
    enum { F = NPU_MODE_FW, H = NPU_MODE_HSW, V = NPU_MODE_VSW, I = NPU_MODE_ISW };
    static const int want[4][4] = {[F] = {[F] = 0, [H] = 1, [V] = 1, [I] = 2},
                                   [H] = {[F] = 0, [H] = 0, [V] = 1, [I] = 1},
                                   [V] = {[F] = 0, [H] = 1, [V] = 0, [I] = 1},
                                   [I] = {[F] = 0, [H] = 0, [V] = 0, [I] = 0}};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            cr_assert_eq(npu_flexsa_mode_gap((npu_mode_t)a, (npu_mode_t)b), want[a][b], "%s -> %s",
                         npu_flexsa_mode_name((npu_mode_t)a), npu_flexsa_mode_name((npu_mode_t)b));
}
