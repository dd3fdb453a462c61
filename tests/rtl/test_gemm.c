/*
 * test_gemm.c - GEMMs on the Verilated NPU of this build, bit-exact against the golden model,
 * with seeded random DRAM stalls; the runtime also checks that the counters add up (DRAM bytes
 * per tag, MACs per core, waves, instructions, drained rows) against the program. Every GEMM runs
 * on a fresh model with its own seed, so a failure prints the `npu gemm` command that replays it.
 */
#include "compile/slice/slice.h"
#include "rtl_common.h"

static const unsigned STALL = 10; /* % of cycles the DRAM withholds a handshake */

/* The mapping policies take turns over the shapes of the random and edge-size regressions:
 * 1G1C (FW only) and FlexSA (Algorithm 1 per wave). 1G4C has its own random set
 * (policies/gemm_1g4c_edges_and_random): here it would cost 5x the simulated cycles at tiny. */
static const int k_policy[2] = { NPU_EMIT_FW, NPU_EMIT_FLEXSA };

Test(gemm, one_by_one)
{
    npu_cfg_t cfg = rtl_cfg();
    rtl_gemm_check(&cfg, 1, 1, 1, 0, 0, rtl_seed(1), STALL, 0, NULL);
}

/* Sizes around the array side: 2S-1, 2S, 2S+1, primes, and small values. */
Test(gemm, edge_sizes)
{
    npu_cfg_t cfg = rtl_cfg();
    int F = 2 * cfg.s;
    int sz[] = { 1, 2, F - 1, F, F + 1, 2 * F - 1, 2 * F + 1, 7, 13, 31, 67 };
    int n = (int)(sizeof sz / sizeof sz[0]);
    uint64_t seed = rtl_seed(2);
    int runs = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j += 3)
            for (int k = (i + j) % 2; k < n; k += 4) {
                if (sz[i] < 1 || sz[j] < 1 || sz[k] < 1) continue;
                rtl_gemm_check_policy(&cfg, sz[i], sz[j], sz[k], 0, 0, seed + (uint64_t)runs, STALL,
                                      0, k_policy[runs % 2], NULL);
                runs++;
            }
    cr_assert_gt(runs, 30);
}

/* Random shapes, M, N, K in 1..300; four tests so Criterion runs them in parallel. */
static void random_shapes(int part, int count)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(1000 + (uint64_t)part);
    uint64_t x = seed * 2654435761u + 1;
    for (int i = 0; i < count; i++) {
        int M = 1 + (int)(rtl_rand(&x) % 300), N = 1 + (int)(rtl_rand(&x) % 300);
        int K = 1 + (int)(rtl_rand(&x) % 300);
        if (cfg.s <= 2) { M = 1 + M / 3; } /* keep the tiny array's cycle count in budget */
        rtl_gemm_check_policy(&cfg, M, N, K, 0, 0, seed + (uint64_t)i, STALL, 0,
                              k_policy[(i + part) % 2], NULL);
    }
}
Test(gemm, random_a) { random_shapes(0, 25); }
Test(gemm, random_b) { random_shapes(1, 25); }
Test(gemm, random_c) { random_shapes(2, 25); }
Test(gemm, random_d) { random_shapes(3, 25); }

/* Operands stored transposed in DRAM: the DMA transposes, the host never re-lays them out. */
Test(gemm, transposed_operands)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(3);
    int shapes[][3] = { { 1, 1, 1 }, { 37, 45, 29 }, { 2 * cfg.s + 1, 3, 70 }, { 64, 100, 33 } };
    for (int i = 0; i < 4; i++)
        for (int t = 1; t < 4; t++)
            rtl_gemm_check(&cfg, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1,
                           seed + (uint64_t)(4 * i + t), STALL, 0, NULL);
}

/* The swapped form C^T = B^T A^T forced (NPU_GEMM_SWAP_ON): A^T / B^T by transposed LOADs (or
 * plain ones when stored transposed), C written by transposed STOREs (int32). Tiny M (the dW
 * shapes the swap is for), shapes around the array side, every operand layout, the three
 * policies; bit-exact with every counter, DRAM stalls. */
Test(gemm, swapped)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(9);
    int F = 2 * cfg.s;
    int shapes[][3] = { { 5, 147, 70 }, { 3, 2 * F + 3, 2 * F + 1 }, { F - 1, F + 1, 33 }, { 1, 9, 5 },
                        { 37, 45, 29 } };
    static const int pol[3] = { NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C };
    if (npu_cfg_bf16(&cfg)) { /* never at bf16 (the golden sums in the plain plan's order) */
        npu_gemm_report_t r;
        rtl_gemm_check_policy(&cfg, 5, 147, 70, 0, 0, seed, STALL, 0, NPU_EMIT_FLEXSA | NPU_GEMM_SWAP_ON, &r);
        cr_assert_eq(r.args.swap, 0, "swapped at bf16");
        npu_gemm_report_free(&r);
        return;
    }
    for (int i = 0; i < 5; i++)
        for (int t = 0; t < 4; t++) {
            npu_gemm_report_t r;
            rtl_gemm_check_policy(&cfg, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1,
                                  seed + (uint64_t)(4 * i + t), STALL, 0, pol[(i + t) % 3] | NPU_GEMM_SWAP_ON, &r);
            cr_assert_eq(r.args.swap, 1, "shape %d layout %d: not swapped", i, t);
            cr_assert_eq(r.plan.M, shapes[i][1], "the swapped plan is N x M x K");
            npu_gemm_report_free(&r);
        }
}

/* Rows longer than 65,535 bytes (GNMT's 36,548-wide layers): B and C pitches held with a stride
 * shift (66,000 and 132,000 bytes), A's (66,002) too, and A transposed; 65,537 elements (no shift
 * holds 131,074) take a LOAD / STORE per row. Bit-exact with every counter, DRAM stalls. */
Test(gemm, long_rows_stride_shift)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(5);
    rtl_gemm_check_policy(&cfg, 3, 33000, 5, 0, 0, seed, STALL, 0, NPU_EMIT_FW, NULL);
    rtl_gemm_check_policy(&cfg, 5, 3, 33001, 0, 0, seed + 1, STALL, 0, NPU_EMIT_FLEXSA, NULL);
    rtl_gemm_check_policy(&cfg, 5, 3, 33001, 1, 0, seed + 2, STALL, 0, NPU_EMIT_FW, NULL);
    rtl_gemm_check_policy(&cfg, 2, 65537, 3, 0, 0, seed + 3, STALL, 0, NPU_EMIT_FW, NULL);
}

/* Tiles from the slicing stage (npu gemm --slicing burst|noburst): m-major and n-major tile orders
 * on the RTL, bit-exact with every counter; at least one shape runs n-major at each config. */
Test(gemm, sliced_tiles)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(6);
    int shapes[][3] = {{400, 200, 16}, {96, 200, 40}, {200, 96, 24}, {37, 45, 29}}, nmajor = 0;
    for (int i = 0; i < 4; i++)
        for (int m = 0; m < 2; m++) {
            npu_gemm_report_t r;
            int slicing = m ? NPU_GEMM_SLICING_NOBURST : NPU_GEMM_SLICING_BURST;
            rtl_gemm_check_policy(&cfg, shapes[i][0], shapes[i][1], shapes[i][2], i == 3, 0,
                                  seed + (uint64_t)(2 * i + m), STALL, 0, NPU_EMIT_FLEXSA | slicing, &r);
            nmajor += r.plan.order;
            npu_gemm_report_free(&r);
        }
    cr_assert_gt(nmajor, 0, "no shape ran n-major: the test lost its purpose");
}

/* Resident bands (gemm_tiling.h) under the three policies with DRAM stalls: a band chunk is
 * overwritten by the next band k_chunks chunks after its last use, and read by every tile of its
 * band; a missing wait or a wrong address shows as a mismatch. Each shape must keep a band. */
Test(gemm, resident_bands)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(8);
    /* A's band over K chunks with edge tiles in every dim (under all three policies), B's, B's of
     * one chunk */
    int shapes[3][3] = {{145, 237, 327}, {600, 128, 384}, {512, 256, 64}};
    static const int policy[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};
    if (cfg.s <= 2) { /* the tiny array: bands of the same kinds at a tenth of the cycles */
        shapes[0][0] = 100, shapes[0][1] = 60, shapes[0][2] = 300;
        shapes[1][0] = 200, shapes[1][1] = 24, shapes[1][2] = 300;
        shapes[2][0] = 160, shapes[2][1] = 48, shapes[2][2] = 64;
    }
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 3 - i; p++) { /* 1G4C (5x the cycles) on the first shape only */
            npu_gemm_report_t r;
            rtl_gemm_check_policy(&cfg, shapes[i][0], shapes[i][1], shapes[i][2], 0, 0,
                                  seed + (uint64_t)(3 * i + p), STALL, 0, policy[p], &r);
            cr_assert_neq(r.plan.res, NPU_GEMM_RES_NONE, "%dx%dx%d keeps no band: the test lost its purpose",
                          shapes[i][0], shapes[i][1], shapes[i][2]);
            npu_gemm_report_free(&r);
        }
}

/* A forced plan g (whatever the search would pick) run under policy with DRAM stalls on random
 * operands of seed: asserts it passes bit-exact with every counter; *r stays for more checks (the
 * caller frees it). */
static void run_forced(const npu_cfg_t *cfg, const npu_gemm_plan_t *g, int policy, uint64_t seed,
                       const char *what, npu_gemm_report_t *r)
{
    int M = g->M, N = g->N, K = g->K;
    int16_t *A = malloc(sizeof *A * (size_t)M * K), *B = malloc(sizeof *B * (size_t)K * N);
    cr_assert(A && B);
    npu_random_operands_dt(npu_cfg_bf16(cfg), M, N, K, seed, A, B);
    npu_sim_t *s = rtl_open(cfg, STALL, 0, seed);
    int rc = npu_gemm_run_plan(cfg, s, g, A, B, policy, NULL, rtl_budget(cfg, M, N, K), r);
    cr_assert_eq(rc, NPU_GEMM_PASS, "%s %dx%dx%d policy %d seed %llu: %s %s %s", what, M, N, K, policy,
                 (unsigned long long)seed, npu_gemm_rc_name(rc), r->counters_msg, r->host_msg);
    npu_sim_close(s);
    free(A);
    free(B);
}

/* The C band (gemm_tiling.h): m-tiles' output rows over all of N in two SPM bands, stored once per
 * m-tile, whole rows, under the three policies with DRAM stalls: a DRAIN into the band before the
 * STORE of the m-tile two back has read it, or a STORE before the m-tile's last DRAIN, shows as a
 * mismatch. The plans are the slicing stage's candidates with the C band (A's band over one, and
 * over four K chunks, two of them above the bands), forced whatever the search would pick. */
Test(gemm, c_band)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    static const int policy[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};
    int tiny = cfg.s <= 2;
    const int shape[2][3] = {{tiny ? 70 : 300, tiny ? 21 : 180, tiny ? 30 : 40}, {tiny ? 50 : 256, tiny ? 30 : 64, tiny ? 9 : 512}};
    const int64_t tiles[2][3] = {{tiny ? 20 : 32, tiny ? 12 : 96, tiny ? 12 : 40}, {tiny ? 12 : 64, tiny ? 8 : 32, tiny ? 9 : 128}};
    uint64_t seed = rtl_seed(10);
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 3 - i; p++) { /* 1G4C on the first shape */
            int M = shape[i][0], N = shape[i][1], K = shape[i][2];
            npu_slice_plan_t sp;
            npu_gemm_plan_t g;
            npu_gemm_report_t r;
            cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, M, N, K, tiles[i], 0, 0,
                                             NPU_SLICE_BAND_OUT, &sp), 0);
            cr_assert_eq(npu_gemm_plan_from_slice(&cfg, &sp, M, N, K, policy[p] == NPU_EMIT_1G4C, &g), 0);
            cr_assert(g.cband && g.m_tiles >= 3, "the bands must cycle");
            run_forced(&cfg, &g, policy[p], seed, "C band", &r);
            cr_assert_eq(r.run.cnt[NPU_CNT_insn_store], (uint64_t)g.m_tiles, "one STORE per m-tile");
            npu_gemm_report_free(&r);
            seed++;
        }
}

/* A's double buffer split over banks 0 and 3 (gemm_tiling.h "Split A": one A buffer fits bank 0,
 * two do not): A1's chunks are loaded into bank 3 while the waves read A0, under FW and FlexSA with
 * DRAM stalls; bit-exact with every counter. The plans are the slicing stage's candidates, forced
 * whatever the search would pick: one K chunk with B's band (n-major), two K chunks without. */
Test(gemm, split_a)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_slice_cost_t k = npu_slice_cost_default(&cfg, NPU_SLICE_BURST);
    static const int policy[2] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA};
    int tiny = cfg.s <= 2;
    const int shape[2][3] = {{tiny ? 150 : 400, tiny ? 6 : 5, tiny ? 230 : 147}, {tiny ? 100 : 300, tiny ? 8 : 40, tiny ? 240 : 160}};
    const int64_t tiles[2][3] = {{tiny ? 32 : 96, tiny ? 4 : 5, tiny ? 230 : 147}, {tiny ? 36 : 112, tiny ? 4 : 32, tiny ? 120 : 80}};
    uint64_t seed = rtl_seed(12);
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 2; p++) {
            int M = shape[i][0], N = shape[i][1], K = shape[i][2];
            npu_slice_plan_t sp;
            npu_gemm_plan_t g;
            npu_gemm_report_t r;
            cr_assert_eq(npu_slice_eval_band(&cfg, &k, NPU_SLICE_GEMM, NULL, M, N, K, tiles[i], 0, i == 0,
                                             i == 0 ? NPU_SLICE_BAND_ON : NPU_SLICE_BAND_NONE, &sp), 0);
            cr_assert_eq(npu_gemm_plan_from_slice(&cfg, &sp, M, N, K, 0, &g), 0);
            cr_assert(g.spm_a[1] == 3u * (unsigned)cfg.spm_bank_words && g.m_tiles >= 3, "A1 in bank 3, used");
            cr_assert_eq(g.k_chunks, i + 1);
            run_forced(&cfg, &g, policy[p], seed, "split A", &r);
            npu_gemm_report_free(&r);
            seed++;
        }
}

/* The last m-tile split in two (gemm_tiling.h "Split last"), under FW, FlexSA and 1G4C with DRAM
 * stalls, bit-exact with every counter: a skinny tile that drains packed (M a multiple of 4 * 2S
 * rows) and one that does not (its halves of 2S and the rest), and a K of two chunks. */
Test(gemm, split_last)
{
    npu_cfg_t cfg = rtl_cfg();
    static const int policy[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};
    int F = 2 * cfg.s;
    const int shape[3][3] = {{16 * F, 5 % F ? 5 % F : 1, 5}, {9 * F + 3, 3, 2 * F}, {6 * F, 2, 5 * F}};
    uint64_t seed = rtl_seed(14);
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 3; p++) {
            int M = shape[i][0], N = shape[i][1], K = shape[i][2];
            npu_gemm_plan_t g;
            npu_gemm_report_t r;
            cr_assert_eq(npu_gemm_tile_ex(&cfg, M, N, K, policy[p] == NPU_EMIT_1G4C, &g), 0);
            cr_assert(npu_gemm_split_last_ok(&g), "%dx%dx%d: Mt %d, the last tile splits", M, N, K, g.Mt);
            g.split_last = 1;
            g.m_tiles++;
            cr_assert_eq(npu_gemm_plan_check(&cfg, &g), 0);
            cr_assert_eq(npu_gemm_m0(&g, g.m_tiles - 1) + npu_gemm_mrows(&g, g.m_tiles - 1), M);
            run_forced(&cfg, &g, policy[p], seed, "split last", &r);
            npu_gemm_report_free(&r);
            seed++;
        }
}

/* A problem whose operands do not fit the SPM: tiles, K chunks and double buffers all cycle. */
Test(gemm, larger_than_spm)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t spm_bytes = (uint64_t)cfg.spm_banks * cfg.spm_bank_words * 4u * cfg.s;
    int M = 300, N = 200, K = 500;
    if (cfg.s <= 2) { M = 150; N = 100; K = 300; }
    while ((uint64_t)2 * M * K + 2ull * K * N <= spm_bytes) /* larger SPMs (medium: 512 KiB) */
        M += M / 2;
    cr_assert_gt((uint64_t)2 * M * K + 2ull * K * N, spm_bytes, "shape must exceed the SPM");
    rtl_gemm_check(&cfg, M, N, K, 0, 0, rtl_seed(4), STALL, 0, NULL);
}

/* Compute-bound GEMM (64S x 64S x 64S, DRAM fast enough): PE utilization >= 90% from S = 8 on
 * (the acceptance, at config small). At S = 2 a wave is only 4F = 16 rows long, about the
 * time the next stationary tile needs to load once the previous wave has left the array
 * (2F + S + a few cycles), and every 4x4 tile costs two instructions to fetch; 80% there. */
Test(gemm, compute_bound_utilization, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    int n = 64 * cfg.s;
    double want = cfg.s >= 8 ? 0.90 : 0.80;
    npu_gemm_report_t r;
    rtl_gemm_check(&cfg, n, n, n, 0, 0, rtl_seed(5), 0, 8.0 * cfg.s, &r);
    double util = npu_report_pe_util(&cfg, r.run.cnt);
    cr_log_info("compute-bound %dx%dx%d: %llu cycles, utilization %.2f%%", n, n, n,
                (unsigned long long)r.run.cnt[NPU_CNT_cycles], 100 * util);
    cr_expect_geq(util, want, "PE utilization %.2f%% < %.0f%%", 100 * util, 100 * want);
    npu_gemm_report_free(&r);
}
