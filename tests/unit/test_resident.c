/* test_resident.c - resident bands (gemm_tiling.h): the choice, the chunk placement and its
 * check (a band of one chunk in the double buffer), and programs on the functional model (random stalls and latencies): bit-exact under the three policies, the resident
 * operand read once per band instead of once per tile, no deadlock at the configured queue depth, no token counter above 2. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "compile/slice/slice_cost.h"
#include "fake_gemm.h"
#include "ref/golden.h"
#include "run/runtime.h"
#include "test_cfgs.h"

Test(resident, band_of_512_cube)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p, q, bad;
    static const unsigned chunk_at[4] = {1024, 1536, 3072, 3584}; /* bank 1, then the free bank 3 */
    cr_assert_eq(npu_gemm_tile(&c, 512, 512, 512, &q), 0);
    cr_assert_eq(npu_gemm_tile_res(&c, 512, 512, 512, 0, &p), 0);
    cr_assert_eq(p.Mt, q.Mt);
    cr_assert_eq(p.nb, q.nb);
    cr_assert_eq(p.Kc, q.Kc);
    cr_assert_eq(q.res, NPU_GEMM_RES_NONE);
    cr_assert_eq(p.res, NPU_GEMM_RES_B, "B's rows (2 Nt = 128 bytes) are the shorter");
    cr_assert_eq(p.order, 1);
    cr_assert_eq(p.k_chunks, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(p.spm_res[i], chunk_at[i], "chunk %d", i);
    cr_assert_eq(p.est_dram_bytes, 2ull * 512 * (512 * 8 + 512));
    cr_assert_eq(npu_gemm_plan_check(&c, &p), 0);
    bad = p;
    bad.spm_res[2] = 2048; /* on the C buffers */
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1);
    bad = p;
    bad.order = 0;
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1, "RES_B needs n-major tiles");
    bad = p;
    bad.res = 3;
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1);
    /* chunk g's buffers and loads: every n-tile loads its band in its first m-tile only */
    for (long g = 0; g < (long)p.m_tiles * p.n_tiles * p.k_chunks; g++) {
        long t = g / p.k_chunks;
        cr_assert_eq(npu_gemm_spm_b(&p, g), chunk_at[g % 4]);
        cr_assert_eq(npu_gemm_spm_a(&p, g), p.spm_a[g % 2]);
        cr_assert_eq(npu_gemm_loads_b(&p, g), t % p.m_tiles == 0);
        cr_assert(npu_gemm_loads_a(&p, g));
    }
}

/* One K chunk: band j in the double buffer j % 2, loaded by the first tile of its band. */
Test(resident, one_chunk_band_in_the_double_buffer)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p;
    cr_assert_eq(npu_gemm_tile_res(&c, 512, 256, 64, 0, &p), 0);
    cr_assert_eq(p.k_chunks, 1);
    cr_assert_eq(p.res, NPU_GEMM_RES_B);
    cr_assert_eq(npu_gemm_plan_check(&c, &p), 0);
    for (long g = 0; g < (long)p.m_tiles * p.n_tiles; g++) {
        cr_assert_eq(npu_gemm_spm_b(&p, g), p.spm_b[(g / p.m_tiles) % 2], "chunk %ld", g);
        cr_assert_eq(npu_gemm_loads_b(&p, g), g % p.m_tiles == 0);
        cr_assert_eq(npu_gemm_spm_a(&p, g), p.spm_a[g % 2]);
    }
}

Test(resident, none_where_it_cannot_cut_traffic)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t p;
    cr_assert_eq(npu_gemm_tile_res(&c, 64, 64, 512, 0, &p), 0);
    cr_assert_eq(p.m_tiles * p.n_tiles, 1);
    cr_assert_eq(p.res, NPU_GEMM_RES_NONE, "one tile: nothing re-read");
    c.spm_banks = 3; /* no free bank: a band of four 512-word chunks does not fit bank 1 */
    cr_assert_eq(npu_gemm_tile_res(&c, 512, 512, 512, 0, &p), 0);
    cr_assert_eq(p.res, NPU_GEMM_RES_NONE);
}

/* One GEMM with its resident band and with the same tiles without it: both bit-exact, the band's
 * operand read reuse times fewer bytes, the other operand the same. */
static void compare_band(const npu_cfg_t *c, int M, int N, int K, int modes, int want_res)
{
    fake_gemm_t g;
    npu_gemm_report_t r1, r0;
    npu_gemm_plan_t plain;
    fake_gemm_init(&g, M, N, K, 7 + (uint64_t)(M * 31 + N * 7 + K));
    npu_sim_t *s = open_fake(c, 3, g.seed);
    cr_assert_eq(npu_gemm_run_modes(c, s, M, N, K, g.A, g.B, 0, 0, modes, g.C, 50000000, &r1), NPU_GEMM_PASS,
                 "S=%d %dx%dx%d modes %d: %s %s", c->s, M, N, K, modes, r1.counters_msg, r1.host_msg);
    npu_sim_close(s);
    cr_assert(fake_gemm_exact(&g));
    cr_assert_eq(r1.plan.res, want_res, "S=%d %dx%dx%d modes %d: res %d Mt %d Nt %d Kc %d", c->s, M, N, K, modes,
                 r1.plan.res, r1.plan.Mt, r1.plan.Nt, r1.plan.Kc);
    fake_gemm_tokens(c, &r1);
    plain = r1.plan;
    plain.res = NPU_GEMM_RES_NONE;
    fake_gemm_run_plan(c, &g, &plain, modes, &r0);
    /* without the band the operand is read once per tile of the inner dim (nt of them), but
     * the double buffers keep a chunk the chunk two back used: K in one chunk, twice per band;
     * in two, once */
    uint64_t kc = (uint64_t)plain.k_chunks, nt = (uint64_t)(want_res == NPU_GEMM_RES_B ? plain.m_tiles : plain.n_tiles);
    uint64_t reads = kc > 2 ? nt : kc == 2 ? 1u : nt < 2 ? nt : 2u;
    if (want_res == NPU_GEMM_RES_B) {
        cr_assert_eq(r1.run.cnt[NPU_CNT_dram_rd_w] * reads, r0.run.cnt[NPU_CNT_dram_rd_w]);
        cr_assert_eq(r1.run.cnt[NPU_CNT_dram_rd_x], r0.run.cnt[NPU_CNT_dram_rd_x]);
    } else {
        cr_assert_eq(r1.run.cnt[NPU_CNT_dram_rd_x] * reads, r0.run.cnt[NPU_CNT_dram_rd_x]);
        cr_assert_eq(r1.run.cnt[NPU_CNT_dram_rd_w], r0.run.cnt[NPU_CNT_dram_rd_w]);
    }
    cr_assert_lt(r1.prog.n, r0.prog.n, "fewer LOADs");
    npu_gemm_report_free(&r1);
    npu_gemm_report_free(&r0);
    fake_gemm_free(&g);
}

Test(resident, programs_bit_exact_band_read_once)
{
    npu_cfg_t c8 = test_cfg(8), c2 = test_cfg(2);
    for (int modes = NPU_EMIT_FW; modes <= NPU_EMIT_1G4C; modes++) {
        /* 512^3: A's band: B's costs the same cycles and bytes (compute-bound, square), and the
         * slicing stage's tie-break takes the first visited, m-major. 1G4C, costed under its own
         * waves (its four LDWs a sub-tile: tall Mt), takes B's there; the other shapes are the
         * slicing stage's picks under the WAVE trains' turnaround (slice_cost.h), so every policy
         * runs both bands. */
        int g4 = modes == NPU_EMIT_1G4C;
        compare_band(&c8, 512, 512, 512, modes, g4 ? NPU_GEMM_RES_B : NPU_GEMM_RES_A);
        compare_band(&c8, 145, 237, 327, modes, g4 ? NPU_GEMM_RES_A : NPU_GEMM_RES_B); /* edge tiles in every dim */
        compare_band(&c8, 512, 256, 64, modes, NPU_GEMM_RES_A); /* one chunk */
        compare_band(&c2, 200, 24, 500, modes, NPU_GEMM_RES_B); /* edge chunk, Mt not a power of 2 */
    }
}

/* The runtime's tiles (runtime.h): auto = burst = the slicing stage's burst-aware pick with the
 * band it costed; transposed operands and --slicing heuristic = gemm_tiling's tiles plus a band;
 * NO_BAND = gemm_tiling's tiles alone. */
static int plan_eq(const npu_gemm_plan_t *a, const npu_gemm_plan_t *b)
{
    if (a->Mt != b->Mt || a->nb != b->nb || a->Kc != b->Kc || a->order != b->order || a->res != b->res)
        return 0;
    for (int i = 0; i < NPU_GEMM_RES_MAX; i++)
        if (a->spm_res[i] != b->spm_res[i])
            return 0;
    return 1;
}

static npu_gemm_plan_t compiled_plan(const npu_cfg_t *c, int M, int N, int K, int ta, int modes)
{
    npu_gemm_report_t r;
    npu_gemm_plan_t p;
    cr_assert_eq(npu_gemm_compile_modes(c, 1ull << c->dram_addr_bits, M, N, K, ta, 0, modes, &r), NPU_GEMM_PASS,
                 "%s", r.host_msg);
    p = r.plan;
    npu_gemm_report_free(&r);
    return p;
}

Test(resident, runtime_tile_choices)
{
    npu_cfg_t c = test_cfg(8);
    npu_gemm_plan_t want, got;
    int M = 2048, N = 6, K = 54;
    cr_assert_eq(npu_gemm_tile_sliced(&c, M, N, K, NPU_SLICE_BURST, NPU_POLICY_1G1C, &want), 0);
    cr_assert_neq(want.res, NPU_GEMM_RES_NONE, "the pick keeps a band: the test lost its purpose");
    got = compiled_plan(&c, M, N, K, 0, NPU_GEMM_SLICING_BURST);
    cr_assert(plan_eq(&got, &want), "burst: the pick with the band it costed");
    got = compiled_plan(&c, M, N, K, 0, 0);
    if (npu_gemm_split_a(&c, &want)) { /* auto times a split pick against the pick without it */
        npu_gemm_plan_t ns;
        cr_assert_eq(npu_gemm_tile_sliced_ex(&c, M, N, K, NPU_SLICE_BURST, NPU_POLICY_1G1C, 1, &ns), 0);
        cr_assert(plan_eq(&got, &want) || plan_eq(&got, &ns), "auto: the pick or the pick without split A");
    } else {
        cr_assert(plan_eq(&got, &want), "auto: the same pick, no band added afterwards");
    }
    cr_assert_eq(npu_gemm_tile_res(&c, M, N, K, 0, &want), 0);
    got = compiled_plan(&c, M, N, K, 0, NPU_GEMM_SLICING_HEURISTIC);
    cr_assert(plan_eq(&got, &want), "heuristic");
    got = compiled_plan(&c, M, N, K, 1, 0);
    cr_assert(plan_eq(&got, &want), "auto, A transposed: the heuristic's tiles");
    cr_assert_eq(npu_gemm_tile_ex(&c, M, N, K, 0, &want), 0);
    got = compiled_plan(&c, M, N, K, 0, NPU_GEMM_NO_BAND);
    cr_assert(plan_eq(&got, &want), "no band");
}
