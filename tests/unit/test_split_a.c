/* test_split_a.c - A's double buffer split over banks 0 and 3 (gemm_tiling.h "Split A"): when two A
 * buffers do not fit bank 0 but one does, A1 sits at the start of bank 3. Its placement and check,
 * what it excludes (the C band, band chunks of their own, a three-bank SPM), the slicing stage's
 * fit rule, and its programs on the functional model with random stalls: bit-exact under the three
 * policies, no deadlock at the configured queue depth. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "compile/slice/slice.h"
#include "fake_gemm.h"

/* The plan of slicing candidate `tile` in loop order `order` (0: m-major, 1: n-major) with band
 * option `band`; 0, or the slicing stage's 1 (does not fit) / the conversion's -1. */
static int split_plan(const npu_cfg_t *c, int M, int N, int K, const int64_t *tile, int order, int band,
                      npu_gemm_plan_t *g)
{
    npu_slice_cost_t k = npu_slice_cost_default(c, NPU_SLICE_BURST);
    npu_slice_plan_t sp;
    int rc = npu_slice_eval_band(c, &k, NPU_SLICE_GEMM, NULL, M, N, K, tile, 0, order, band, &sp);
    return rc ? rc : npu_gemm_plan_from_slice(c, &sp, M, N, K, 0, g);
}

/* 96 rows x 10 k-blocks = 960 words: bank 0 (1,024 words at S = 8) holds one such buffer, not two. */
Test(split_a, placement_and_check)
{
    npu_cfg_t c = test_cfg(8);
    int64_t t[3] = {96, 5, 147};
    npu_gemm_plan_t g, bad;
    cr_assert_eq(split_plan(&c, 800, 5, 147, t, 0, NPU_SLICE_BAND_NONE, &g), 0);
    cr_assert(g.Mt == 96 && g.Kc == 160 && g.k_chunks == 1);
    cr_assert(g.spm_a[0] == 0u && g.spm_a[1] == 3u * 1024u, "A1 at bank 3: %u", g.spm_a[1]);
    cr_assert_eq(npu_gemm_plan_check(&c, &g), 0);
    bad = g;
    bad.spm_a[1] = 96u * 10u; /* right after A0: across banks 0 and 1 */
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1, "A1 across banks 0 and 1");
    npu_cfg_t three = c;
    three.spm_banks = 3;
    cr_assert_eq(npu_gemm_plan_check(&three, &g), -1, "no bank 3");
    cr_assert_eq(split_plan(&three, 800, 5, 147, t, 0, NPU_SLICE_BAND_NONE, &g), 1, "the stage's fit rule");
    /* one K chunk: B's band (n-major) stays in its double buffer, so it fits beside the split */
    cr_assert_eq(split_plan(&c, 800, 5, 147, t, 1, NPU_SLICE_BAND_ON, &g), 0);
    cr_assert(g.res == NPU_GEMM_RES_B && g.spm_a[1] == 3072u);
    /* a plain plan keeps A1 right after A0 */
    int64_t small[3] = {48, 5, 147};
    cr_assert_eq(split_plan(&c, 800, 5, 147, small, 0, NPU_SLICE_BAND_NONE, &g), 0);
    cr_assert_eq(g.spm_a[1], 48u * 10u);
}

/* Bank 3 holds A1: a band with chunk buffers of its own (two K chunks) and the C band, which
 * both need the banks above the C buffers, do not fit; the same tiles without them do. */
Test(split_a, excludes_bands_that_need_bank_3)
{
    npu_cfg_t c = test_cfg(8);
    int64_t t[3] = {112, 32, 80}; /* 112 x 5 = 560 words, two chunks of K = 160 */
    npu_gemm_plan_t g;
    cr_assert_eq(split_plan(&c, 800, 64, 160, t, 0, NPU_SLICE_BAND_NONE, &g), 0);
    cr_assert(g.k_chunks == 2 && g.spm_a[1] == 3072u);
    cr_assert_eq(npu_gemm_band_fits(&c, 800, 64, 160, t, NPU_GEMM_RES_A), 0, "A's band chunks");
    cr_assert_eq(npu_gemm_band_fits(&c, 800, 64, 160, t, NPU_GEMM_RES_B), 0, "B's band chunks");
    cr_assert_eq(npu_gemm_cband_fits(&c, 800, 64, 160, t), 0, "the C band");
    cr_assert_neq(split_plan(&c, 800, 64, 160, t, 0, NPU_SLICE_BAND_ON, &g), 0);
    cr_assert_neq(split_plan(&c, 800, 64, 160, t, 0, NPU_SLICE_BAND_OUT, &g), 0);
}

/* A split plan's program: bit-exact under the three policies with random stalls (a LOAD into A1
 * before the WAVEs reading it are done, or a wave reading the wrong bank, shows as a mismatch),
 * tokens balanced; the tiny array (S = 2, 2,048-word banks) too. */
Test(split_a, programs_bit_exact)
{
    static const int pol[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};
    static const struct { int s, M, N, K; int64_t t[3]; } cases[] = {
        {8, 300, 5, 147, {96, 5, 147}}, {8, 250, 40, 150, {96, 32, 150}}, {2, 150, 6, 230, {32, 4, 230}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int p = 0; p < 3; p++) {
            npu_cfg_t c = test_cfg(cases[i].s);
            npu_gemm_plan_t g;
            npu_gemm_report_t r;
            fake_gemm_t fg;
            cr_assert_eq(split_plan(&c, cases[i].M, cases[i].N, cases[i].K, cases[i].t, 0, NPU_SLICE_BAND_NONE, &g), 0,
                         "case %zu", i);
            cr_assert_eq(g.spm_a[1], 3u * (unsigned)c.spm_bank_words, "case %zu: not split", i);
            cr_assert(g.m_tiles >= 2, "case %zu: A1 never used", i);
            fake_gemm_init(&fg, cases[i].M, cases[i].N, cases[i].K, 77 + 3 * i + (uint64_t)p);
            fake_gemm_run_plan(&c, &fg, &g, pol[p], &r);
            fake_gemm_tokens(&c, &r);
            npu_gemm_report_free(&r);
            fake_gemm_free(&fg);
        }
}

/* The runtime keeps a split-A pick of the slicing stage only when the program-time model times it
 * faster than the stage's best pick without the split (run/runtime.c gemm_split_pick): auto tiles
 * are the split pick or exactly the no-split one, the no-split search never splits, and over
 * these shapes both outcomes occur. S = 8 with two-word beats at 128 B/cycle (small-w2's port). */
Test(split_a, runtime_times_a_split_pick)
{
    npu_cfg_t c = test_cfg(8);
    static const int shapes[][3] = {{8192, 6, 54}, {2048, 6, 54}, {8192, 5, 147}, {1200, 5, 147}, {2048, 3, 54}};
    int kept = 0, dropped = 0;
    c.beat_words = 2;
    c.dram_bw = 128;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        npu_gemm_plan_t s, ns;
        npu_gemm_report_t r;
        cr_assert_eq(npu_gemm_tile_sliced(&c, M, N, K, NPU_SLICE_BURST, NPU_POLICY_FLEXSA, &s), 0);
        cr_assert_eq(npu_gemm_tile_sliced_ex(&c, M, N, K, NPU_SLICE_BURST, NPU_POLICY_FLEXSA, 1, &ns), 0);
        cr_assert(!npu_gemm_split_a(&c, &ns), "%dx%dx%d: the no-split search split A", M, N, K);
        cr_assert(npu_gemm_split_a(&c, &s), "%dx%dx%d: the search does not split A here: the case lost its purpose",
                  M, N, K);
        cr_assert_eq(npu_gemm_compile_modes(&c, 1ull << c.dram_addr_bits, M, N, K, 0, 0, NPU_EMIT_FLEXSA, &r),
                     NPU_GEMM_PASS, "%s", r.host_msg);
        if (npu_gemm_split_a(&c, &r.plan)) {
            cr_assert(r.plan.Mt == s.Mt && r.plan.Kc == s.Kc && r.plan.order == s.order, "%dx%dx%d", M, N, K);
            kept++;
        } else {
            cr_assert(r.plan.Mt == ns.Mt && r.plan.Kc == ns.Kc && r.plan.nb == ns.nb && r.plan.order == ns.order &&
                          r.plan.res == ns.res, "%dx%dx%d: neither pick", M, N, K);
            dropped++;
        }
        npu_gemm_report_free(&r);
    }
    cr_assert(kept > 0 && dropped > 0, "kept %d, dropped %d: one outcome never occurs", kept, dropped);
}
