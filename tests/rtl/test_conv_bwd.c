/*
 * test_conv_bwd.c - the fused convolution backward (`npu conv --kernel bwd`, conv_bwd.h) on the
 * Verilated NPU: dX and dW of a layer in one program, both bit-exact against the golden models,
 * every counter against the program, MACs = ecoflow dX + dW by formula, and the DY bytes read =
 * one read of dY (the separate dx and dw kernels read it twice). Shapes: the digits CNN's two
 * layers (batch 32) and 21 more (kernels 1-3, strides 1-2, padding 0-2, dilation 2, channels
 * off the 2S blocks), some with random DRAM stalls. At bf16 configurations the same, bit-exact
 * against the order-matched bf16 golden model (npu_conv_bwd_golden_bf16: each output summed in the
 * program's order, conv_order.h npu_conv_bwd_waves).
 */
#include <stdio.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "run/conv_bwd_run.h"
#include "run/conv_run.h"
#include "rtl_common.h"

typedef struct bshape { int b, C, H, W, F, KH, KW, s, p, d; } bshape_t;

static const bshape_t k_shapes[] = {
    {32, 1, 8, 8, 16, 3, 3, 1, 1, 1},  /* digits conv1 */
    {32, 16, 8, 8, 32, 3, 3, 2, 1, 1}, /* digits conv2 */
    {2, 3, 7, 7, 5, 3, 3, 1, 1, 1},    {1, 5, 7, 8, 7, 3, 3, 2, 0, 1},  {1, 6, 7, 7, 3, 1, 1, 2, 0, 1},
    {2, 4, 6, 6, 4, 1, 1, 1, 0, 1},    {1, 3, 8, 8, 6, 2, 2, 2, 0, 1},  {1, 4, 6, 7, 9, 2, 2, 2, 1, 1},
    {1, 2, 5, 5, 3, 3, 3, 1, 0, 1},    {1, 7, 6, 6, 5, 3, 3, 2, 2, 1},  {1, 9, 8, 8, 17, 3, 3, 1, 1, 1},
    {2, 4, 5, 6, 4, 3, 3, 1, 2, 1},    {1, 20, 4, 4, 20, 3, 3, 1, 1, 1}, {1, 3, 7, 7, 4, 3, 3, 2, 1, 1},
    {1, 8, 8, 8, 8, 1, 1, 1, 0, 1},    {1, 5, 8, 6, 3, 2, 2, 1, 0, 1},  {1, 3, 6, 6, 5, 3, 3, 1, 2, 2},
    {3, 4, 8, 8, 4, 3, 3, 2, 1, 1},    {1, 2, 4, 4, 2, 3, 3, 1, 1, 1},  {1, 6, 5, 7, 10, 3, 3, 2, 1, 1},
    {1, 1, 8, 8, 1, 3, 3, 1, 1, 1},    {2, 16, 4, 4, 32, 3, 3, 1, 1, 1}, {1, 4, 6, 6, 4, 3, 1, 1, 1, 1},
};

static npu_conv_t to_layer(const bshape_t *sh)
{
    npu_conv_t c = {sh->b, sh->C, sh->H, sh->W, sh->F, sh->KH, sh->KW, sh->s, sh->p, sh->d, 0};
    return c;
}

static void bwd_rtl(const npu_cfg_t *cfg, const npu_conv_t *c, uint64_t seed, unsigned stall,
                    npu_conv_bwd_report_t *r)
{
    char ls[96];
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    int rc = npu_conv_bwd_run(cfg, s, c, seed, 50000000, NULL, r);
    npu_sim_close(s);
    npu_conv_str(c, ls, sizeof ls);
    cr_assert_eq(rc, NPU_GEMM_PASS, "%s bwd seed %llu stall %u%%: %s (%s)\n  replay: NPU_SEED=%llu build/%s/test_rtl "
                 "--filter 'conv_bwd/*'", ls, (unsigned long long)seed, stall, npu_gemm_rc_name(rc), r->msg,
                 (unsigned long long)seed, cfg->name);
    /* dY once (dense pixel rows: plus a beat where two units' dY LOADs meet inside one, at most two
     * LOADs a unit with the ring's wrap; the run holds the bytes to its plan's exactly) */
    npu_conv_bwd_plan_t bp;
    char msg[256];
    cr_assert_eq(npu_conv_bwd_plan(cfg, c, 0, &bp, msg, sizeof msg), 0, "%s", msg);
    uint64_t slack = 2u * (uint64_t)bp.dx.units * bp.dx.B;
    cr_assert(r->rd[NPU_TAG_DY] >= r->comp_rd[NPU_TAG_DY] && r->rd[NPU_TAG_DY] <= r->comp_rd[NPU_TAG_DY] + slack,
              "%s: dY read %llu bytes, once is %llu (+ %llu)", ls, (unsigned long long)r->rd[NPU_TAG_DY],
              (unsigned long long)r->comp_rd[NPU_TAG_DY], (unsigned long long)slack);
    cr_assert_eq(r->macs, r->expect_dx.total + r->expect_dw.total);
    cr_assert_eq(r->macs_zero, 0u);
}

/* Every shape but the digits layers (Test digits), alternately with 10 % DRAM stalls. */
Test(conv_bwd, shapes)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(31);
    for (size_t i = 2; i < sizeof k_shapes / sizeof k_shapes[0]; i++) {
        npu_conv_t c = to_layer(&k_shapes[i]);
        npu_conv_bwd_report_t r;
        bwd_rtl(&cfg, &c, seed + i, i % 2 ? 10u : 0u, &r);
    }
}

/* The digits CNN's layers at batch 32: fused, then dx and dw separately; the fused program reads
 * dY once where the two read it at least twice. --verbose prints the cycles and the ratio. */
Test(conv_bwd, digits)
{
    npu_cfg_t cfg = rtl_cfg();
    for (int i = 0; i < 2; i++) {
        npu_conv_t c = to_layer(&k_shapes[i]);
        npu_conv_bwd_report_t r;
        npu_conv_report_t sep[2];
        char ls[96];
        bwd_rtl(&cfg, &c, 5 + (uint64_t)i, 0, &r);
        for (int k = 0; k < 2; k++) {
            npu_sim_t *s = rtl_open(&cfg, 0, 0, 5);
            int rc = npu_conv_run(&cfg, s, &c, k ? NPU_CONV_DW : NPU_CONV_DX, NPU_CONV_ECOFLOW, 5, 50000000, &sep[k]);
            npu_sim_close(s);
            cr_assert_eq(rc, NPU_GEMM_PASS, "%s", sep[k].msg);
        }
        uint64_t dy_sep = sep[0].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY] + sep[1].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY];
        cr_assert_geq(dy_sep, 2 * r.rd[NPU_TAG_DY]); /* dw's dY^T halo rows: more than twice */
        npu_conv_str(&c, ls, sizeof ls);
        cr_log_info("%s %s: bwd %llu cycles, dY %llu B; dx + dw %llu + %llu = %llu cycles, dY %llu B; ratio %.2f",
                    cfg.name, ls, (unsigned long long)r.cycles, (unsigned long long)r.rd[NPU_TAG_DY],
                    (unsigned long long)sep[0].cycles, (unsigned long long)sep[1].cycles,
                    (unsigned long long)(sep[0].cycles + sep[1].cycles), (unsigned long long)dy_sep,
                    (double)r.cycles / (double)(sep[0].cycles + sep[1].cycles));
    }
}

/* A layer the fused kernel does not take fails cleanly, naming the limit. */
Test(conv_bwd, refuses)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_conv_t c = {1, 4, 4, 300, 4, 3, 3, 1, 1, 1, 0}; /* a dX row of 300 pixels exceeds an OBUF half */
    npu_conv_bwd_report_t r;
    char msg[256];
    npu_sim_t *s;
    s = rtl_open(&cfg, 0, 0, 1);
    cr_assert_eq(npu_conv_bwd_supported(&cfg, &c, msg, sizeof msg), 0);
    cr_assert_eq(npu_conv_bwd_run(&cfg, s, &c, 1, 1000000, NULL, &r), NPU_GEMM_HOST_ERROR);
    npu_sim_close(s);
    cr_assert(strstr(r.msg, "ring"), "%s", r.msg);
}

/* Several bands of dX rows per image over the ring of dY rows (each dY row loaded once, by the band
 * that first needs it), at both configurations: stride 1 and 2, resident and per-band dW^T
 * regions, one run with 10 % DRAM stalls; bit-exact, counters, dY read once (bwd_rtl). Kept short:
 * batch 1-2, 4-6 channels. */
Test(conv_bwd, bands)
{
    static const bshape_t sh[] = {{2, 4, 24, 24, 8, 3, 3, 1, 1, 1}, {2, 6, 17, 15, 5, 3, 3, 2, 1, 1},
                                  {1, 4, 18, 19, 6, 3, 3, 2, 0, 1}};
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(41);
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        npu_conv_t c = to_layer(&sh[i]);
        npu_conv_bwd_plan_t bp;
        npu_conv_bwd_report_t r;
        char msg[256];
        cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), 0, "%s", msg);
        cr_assert_geq(bp.dx.nbands, 2, "shape %zu: %d band(s)", i, bp.dx.nbands);
        bwd_rtl(&cfg, &c, seed + i, i == 1 ? 10u : 0u, &r);
        cr_log_info("%s bands %zu: %d bands, dY ring %d rows, X^T ring %d rows, %s dW^T regions, %llu cycles", cfg.name,
                    i, bp.dx.nbands, bp.dx.ring, bp.xt_ring, bp.resident ? "resident" : "per-band",
                    (unsigned long long)r.cycles);
    }
}

/* Random layers (kernel 1-3 x 1-3, stride 1-2, padding 0-2, dilation 1-2, 1-20 channels and
 * filters, 3-9 pixels a side, batch 1-2), the first 16 the planner takes, with 10 % DRAM stalls.
 * NPU_SEED changes them. */
Test(conv_bwd, random_layers)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t x = rtl_seed(77), seed = x;
    int ran = 0;
    for (int i = 0; i < 200 && ran < 16; i++) {
        int v[10];
        const int lo[10] = {1, 1, 3, 3, 1, 1, 1, 1, 0, 1}, span[10] = {2, 20, 7, 7, 20, 3, 3, 2, 3, 2};
        npu_conv_bwd_report_t r;
        char msg[256];
        for (int k = 0; k < 10; k++)
            v[k] = lo[k] + (int)(rtl_rand(&x) % (uint64_t)span[k]);
        npu_conv_t c = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], 0};
        if (npu_conv_check(&c, msg, sizeof msg) != 0 || !npu_conv_bwd_supported(&cfg, &c, msg, sizeof msg))
            continue;
        npu_sim_t *s = rtl_open(&cfg, 10, 0, seed + (uint64_t)i);
        int rc = npu_conv_bwd_run(&cfg, s, &c, seed + (uint64_t)i, 50000000, NULL, &r);
        npu_sim_close(s);
        npu_conv_str(&c, msg, sizeof msg);
        cr_assert_eq(rc, NPU_GEMM_PASS, "%s: %s (%s)\n  replay: NPU_SEED=%llu build/%s/test_rtl --filter "
                     "'conv_bwd/random_layers'", msg, npu_gemm_rc_name(rc), r.msg, (unsigned long long)seed, cfg.name);
        ran++;
    }
    cr_assert_eq(ran, 16);
}

/* Layers whose two whole images' X^T leave no dX plan: X^T in a ring beside the dY ring (each
 * band loads the X rows its dW^T waves read that no earlier band loaded), flat and per-phase, the
 * second with 10 % DRAM stalls; bit-exact, counters, dY read once, X bytes as planned (bwd_rtl). */
Test(conv_bwd, xt_ring)
{
    static const bshape_t tiny[] = {{1, 10, 40, 40, 6, 3, 3, 1, 1, 1}, {1, 16, 30, 31, 8, 3, 3, 2, 0, 1}};
    static const bshape_t small[] = {{1, 12, 64, 64, 8, 3, 3, 2, 1, 1}, {1, 32, 24, 24, 16, 3, 3, 2, 1, 1}};
    npu_cfg_t cfg = rtl_cfg();
    const bshape_t *sh = cfg.s == 2 ? tiny : small;
    uint64_t seed = rtl_seed(43);
    for (int i = 0; i < 2; i++) {
        npu_conv_t c = to_layer(&sh[i]);
        npu_conv_bwd_plan_t bp;
        npu_conv_bwd_report_t r;
        char msg[256];
        cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), 0, "%s", msg);
        cr_assert_gt(bp.xt_ring, 0, "shape %d: X^T of whole images", i);
        bwd_rtl(&cfg, &c, seed + (uint64_t)i, i ? 10u : 0u, &r);
        cr_log_info("%s xt_ring %d: %d bands, dY ring %d rows, X^T ring %d rows, %llu cycles", cfg.name, i,
                    bp.dx.nbands, bp.dx.ring, bp.xt_ring, (unsigned long long)r.cycles);
    }
}
