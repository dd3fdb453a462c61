/* test_cband.c - the C band (gemm_tiling.h "C band"): its placement and check, its candidates in
 * the slicing stage (one STORE of whole rows per m-tile, costed exactly as the emitter writes it),
 * and its programs on the functional model with random stalls: bit-exact under the three
 * policies, one STORE per m-tile, the write bursts those whole rows make, no deadlock at the
 * configured queue depth, no token counter above 2; the same tiles without the band write the
 * same C in more bursts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "compile/slice/slice.h"
#include "fake_gemm.h"
#include "prog/prog_expect.h"
#include "prog/prog_locate.h"

/* The plan of slicing candidate `tile` with the C band (option NPU_SLICE_BAND_OUT, m-major). */
static npu_gemm_plan_t cband_plan(const npu_cfg_t *c, int M, int N, int K, const int64_t *tile, int even,
                                  npu_slice_plan_t *sp)
{
    npu_slice_cost_t k = npu_slice_cost_default(c, NPU_SLICE_BURST);
    npu_gemm_plan_t g;
    cr_assert_eq(npu_slice_eval_band(c, &k, NPU_SLICE_GEMM, NULL, M, N, K, tile, 0, 0, NPU_SLICE_BAND_OUT, sp), 0,
                 "%dx%dx%d: the C band does not fit", M, N, K);
    cr_assert(sp->cband && sp->band == NPU_SLICE_IN0 + 1);
    cr_assert_eq(npu_gemm_plan_from_slice(c, sp, M, N, K, even, &g), 0);
    cr_assert(g.cband && g.res == NPU_GEMM_RES_A && g.order == 0);
    return g;
}

/* Two bands of Mt rows x all of N from bank 2; A's band chunks past bank 0 start above them. */
Test(cband, placement_and_check)
{
    npu_cfg_t c = test_cfg(8);
    npu_slice_plan_t sp;
    int64_t t1[3] = {32, 128, 16}, t2[3] = {64, 32, 128}, big[3] = {64, 128, 16};
    npu_gemm_plan_t p = cband_plan(&c, 1024, 256, 16, t1, 0, &sp), bad;
    static const unsigned res_at[4] = {0, 512, 3072, 3584}; /* bank 0, then bank 3 above the band */
    cr_assert_eq(npu_gemm_c_words(&p), 32u * 32u); /* 32 rows x 2 words per 16 of 256 columns */
    cr_assert(p.spm_c[0] == 2048u && p.spm_c[1] == 3072u, "the two bands fill banks 2 and 3");
    cr_assert_eq(npu_gemm_plan_check(&c, &p), 0);
    bad = p;
    bad.order = 1;
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1, "n-major");
    bad = p;
    bad.res = NPU_GEMM_RES_B;
    cr_assert_eq(npu_gemm_plan_check(&c, &bad), -1, "with B's band");
    cr_assert_eq(npu_gemm_cband_fits(&c, 1024, 256, 16, big), 0, "64 rows: 4096 words, past the SPM");
    p = cband_plan(&c, 256, 64, 512, t2, 0, &sp); /* bands of 512 words: bank 2; 4 chunks of 512 */
    cr_assert_eq(p.k_chunks, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(p.spm_res[i], res_at[i], "chunk %d", i);
    cr_assert_eq(npu_gemm_plan_check(&c, &p), 0);
    cr_assert_eq(npu_gemm_plan_no_cband(&c, &p), 0);
    cr_assert(!p.cband && p.spm_c[1] == 2048u + 64u * 2 * 2, "the plain staging buffers again");
    cr_assert_eq(p.spm_res[2], 3072u);
}

/* The slicing stage's candidate: OUT's transfers are the m-tiles' whole rows (one each, the
 * bursts of one contiguous run), and n outermost or a single n-tile or m-tile has no C band.
 * Bursts of 64 beats (2 KiB), as small-w2's: at 16 a half row of 1 KiB is one burst either way. */
Test(cband, candidate_stores_whole_rows)
{
    npu_cfg_t c = test_cfg(8);
    c.max_burst_beats = 64;
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    npu_slice_plan_t sp, plain;
    int64_t t1[3] = {32, 128, 16}, wide[3] = {32, 256, 16}, tall[3] = {1024, 16, 16};
    uint64_t bursts = 0;
    cband_plan(&c, 1024, 256, 16, t1, 0, &sp);
    cr_assert_eq(sp.t[NPU_SLICE_OUT].loads, 32u);
    for (int m = 0; m < 32; m++) /* 32 rows x 1 KiB from a 4 KiB-aligned C: 16 bursts of 2 KiB */
        bursts += npu_dma_bursts(32, 64, (uint64_t)m * 32 * 1024, 32, 1024, 1024).bursts;
    cr_assert_eq(bursts, 32u * 16);
    cr_assert_eq(sp.t[NPU_SLICE_OUT].b.bursts, bursts);
    cr_assert_eq(npu_slice_eval_band(&c, &k, NPU_SLICE_GEMM, NULL, 1024, 256, 16, t1, 0, 0, NPU_SLICE_BAND_NONE,
                                     &plain), 0);
    cr_assert_eq(plain.t[NPU_SLICE_OUT].loads, 64u);
    cr_assert_gt(plain.t[NPU_SLICE_OUT].b.bursts, bursts, "half rows: a burst each");
    cr_assert_eq(plain.t[NPU_SLICE_OUT].b.bytes, sp.t[NPU_SLICE_OUT].b.bytes);
    cr_assert_eq(npu_slice_eval_band(&c, &k, NPU_SLICE_GEMM, NULL, 1024, 256, 16, t1, 0, 1, NPU_SLICE_BAND_OUT, &sp), 1);
    cr_assert_eq(npu_slice_eval_band(&c, &k, NPU_SLICE_GEMM, NULL, 1024, 256, 16, wide, 0, 0, NPU_SLICE_BAND_OUT, &sp),
                 1);
    cr_assert_eq(npu_slice_eval_band(&c, &k, NPU_SLICE_GEMM, NULL, 1024, 256, 16, tall, 0, 0, NPU_SLICE_BAND_OUT, &sp),
                 1);
}

/* The first-divergence locator on a C band program: an element's STORE is its m-tile's (its
 * rows' DRAM bytes), its DRAIN one that wrote the element's OBUF row. */
static void locate_some(const npu_cfg_t *c, const npu_gemm_report_t *r)
{
    const int pts[3][2] = {{0, 0}, {r->M - 1, r->N - 1}, {r->M / 2, r->N / 2}};
    for (int q = 0; q < 3; q++) {
        npu_gemm_loc_t loc;
        npu_fields_t d, st;
        char buf[200];
        int row = pts[q][0], col = pts[q][1];
        uint64_t at = r->args.c + 4ull * ((uint64_t)row * (uint64_t)r->N + (uint64_t)col);
        cr_assert_eq(npu_prog_locate_gemm(c, &r->plan, &r->args, r->prog.insn, r->prog.n, row, col, &loc, buf,
                                          sizeof buf), 0, "C[%d][%d]", row, col);
        cr_assert_eq(npu_decode(&r->prog.insn[loc.store_pc], &st), 0);
        cr_assert(st.op == NPU_OP_STORE && at >= st.dram_addr && at < st.dram_addr + (uint64_t)st.rows * st.row_bytes,
                  "C[%d][%d]: %s", row, col, buf);
        cr_assert_eq(npu_decode(&r->prog.insn[loc.drain_pc], &d), 0);
        cr_assert(d.op == NPU_OP_DRAIN && loc.obuf_row >= d.obuf_addr && loc.obuf_row < d.obuf_addr + d.rows, "%s",
                  buf);
    }
}

/* Runs plan (with the C band) and the same tiles without it on the functional model: both
 * bit-exact; with the band one STORE per m-tile, its write bursts those of the whole rows. */
static void run_cband(const npu_cfg_t *c, const npu_gemm_plan_t *plan, int modes)
{
    int M = plan->M, N = plan->N, K = plan->K;
    uint64_t bursts = 0;
    fake_gemm_t g;
    npu_gemm_report_t r1, r0;
    npu_gemm_plan_t plain = *plan;
    fake_gemm_init(&g, M, N, K, 11 + (uint64_t)(M * 31 + N * 7 + K + modes));
    fake_gemm_run_plan(c, &g, plan, modes, &r1);
    cr_assert_eq(r1.expect.insn_store, (uint64_t)plan->m_tiles, "one STORE per m-tile");
    for (int m0 = 0; m0 < M; m0 += plan->Mt) {
        uint64_t rows = (uint64_t)(M - m0 < plan->Mt ? M - m0 : plan->Mt);
        bursts += npu_dma_bursts((uint64_t)npu_cfg_beat(c), (uint64_t)c->max_burst_beats,
                                 r1.args.c + 4ull * (uint64_t)m0 * (uint64_t)N, rows, 4ull * (uint64_t)N,
                                 4ull * (uint64_t)N).bursts;
    }
    cr_assert_eq(r1.expect.wr_bursts, bursts);
    locate_some(c, &r1);
    fake_gemm_tokens(c, &r1);
    cr_assert_eq(npu_gemm_plan_no_cband(c, &plain), 0);
    fake_gemm_run_plan(c, &g, &plain, modes, &r0);
    cr_assert_eq(r0.expect.insn_store, (uint64_t)(plain.m_tiles * plain.n_tiles));
    cr_assert_lt(r1.expect.wr_bursts, r0.expect.wr_bursts, "whole rows: fewer write bursts");
    npu_gemm_report_free(&r1);
    npu_gemm_report_free(&r0);
    fake_gemm_free(&g);
}

/* Edge tiles in every dim, one and several K chunks (A's band in its bank and above the C band),
 * bands over two banks, tiny's S = 2; every policy. */
Test(cband, programs_bit_exact)
{
    npu_cfg_t c8 = test_cfg(8), c2 = test_cfg(2);
    c8.max_burst_beats = 64; /* 2 KiB bursts (small-w2's length): whole rows make fewer */
    static const struct { int S, M, N, K; int64_t t[3]; } cs[] = {
        {8, 300, 180, 40, {32, 96, 40}},    /* one chunk, edge m- and n-tiles */
        {8, 1024, 256, 16, {32, 128, 16}},  /* bands filling banks 2 and 3 */
        {8, 200, 70, 300, {48, 48, 112}},   /* three chunks: A's band in bank 0 */
        {8, 256, 64, 512, {64, 32, 128}},   /* four chunks: two above the C band */
        {2, 70, 21, 30, {20, 12, 12}},      /* S = 2: three chunks, edge tiles */
        {2, 50, 30, 9, {12, 8, 9}},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int modes = NPU_EMIT_FW; modes <= NPU_EMIT_1G4C; modes++) {
            npu_slice_plan_t sp;
            const npu_cfg_t *c = cs[i].S == 2 ? &c2 : &c8;
            npu_gemm_plan_t p = cband_plan(c, cs[i].M, cs[i].N, cs[i].K, cs[i].t, modes == NPU_EMIT_1G4C, &sp);
            run_cband(c, &p, modes);
        }
}
