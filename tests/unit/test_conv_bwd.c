/*
 * test_conv_bwd.c - the fused convolution backward (conv_bwd.h): the pure planning functions
 * (column phases, used rows, the SPM layout, the limits it refuses with) and whole runs on the C
 * functional model (bit-exact dX and dW, counters, dY read once) at S = 2 and 8. The RTL runs
 * are tests/rtl/test_conv_bwd.c.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "fake_sim.h"
#include "run/conv_bf16.h"
#include "run/conv_bwd_run.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "test_cfgs.h"

static npu_conv_t layer(int b, int C, int H, int W, int F, int K, int s, int p)
{
    npu_conv_t c = {b, C, H, W, F, K, K, s, p, 1, 0};
    return c;
}

Test(conv_bwd, phases)
{
    npu_conv_t c = layer(1, 4, 8, 8, 4, 3, 2, 1);
    int ph, e, nph;
    /* kw = 0: offset -1 -> phase 1, e = -1 (X column 1 + 2i is dY column i + 1... ow = idx - e) */
    npu_conv_bwd_phase(&c, 0, &ph, &e, &nph);
    cr_assert_eq(ph, 1);
    cr_assert_eq(e, -1);
    cr_assert_eq(nph, 4);
    npu_conv_bwd_phase(&c, 1, &ph, &e, &nph);
    cr_assert_eq(ph, 0);
    cr_assert_eq(e, 0);
    npu_conv_bwd_phase(&c, 2, &ph, &e, &nph);
    cr_assert_eq(ph, 1);
    cr_assert_eq(e, 0);
    /* every X column of phase ph, tap kw, dY column ow = idx - e, reads iw = ow*s + kw - p */
    for (int kw = 0; kw < 3; kw++) {
        npu_conv_bwd_phase(&c, kw, &ph, &e, &nph);
        for (int idx = 0; idx < nph; idx++)
            cr_assert_eq((idx - e) * 2 + kw - 1, ph + 2 * idx);
    }
    /* 1x1 stride 2: only phase 0 is read */
    c = layer(1, 4, 7, 7, 4, 1, 2, 0);
    cr_assert(npu_conv_bwd_phase_used(&c, 0));
    cr_assert(!npu_conv_bwd_phase_used(&c, 1));
    cr_assert(npu_conv_bwd_row_used(&c, 2));
    cr_assert(!npu_conv_bwd_row_used(&c, 3));
}

/* The groups of dW^T regions: every (f-block, tap) region exactly once, each group inside one OBUF
 * half and, resident, past the dX rows and disjoint from the others; the digits layers' regions
 * are resident at small, not at tiny (an image's 8 x 8 dX rows fill a 64-row half). */
static void check_groups(const npu_cfg_t *cfg, const npu_conv_t *c, const npu_conv_bwd_plan_t *bp)
{
    npu_conv_bwd_grp_t g[64];
    char seen[8][9] = {{0}}, used[512] = {0};
    int res, n = npu_conv_bwd_groups(bp, cfg->obuf_rows, g, 64, &res);
    cr_assert_eq(n, bp->ngrp);
    cr_assert_eq(res, bp->resident);
    cr_assert_eq(res, cfg->s == 8, "S=%d C%d", cfg->s, c->C);
    for (int q = 0; q < n; q++) {
        unsigned rows = (unsigned)(g[q].nkw * (g[q].kh1 - g[q].kh0) * c->C);
        cr_assert_leq(g[q].base % (unsigned)cfg->obuf_rows + rows, (unsigned)cfg->obuf_rows);
        for (unsigned r = g[q].base; res && r < g[q].base + rows; r++) {
            cr_assert_geq(r % (unsigned)cfg->obuf_rows, bp->dx.obuf_unit_rows);
            cr_assert_eq(used[r]++, 0, "OBUF row %u twice", r);
        }
        for (int k = 0; k < g[q].nkw; k++)
            for (int kh = g[q].kh0; kh < g[q].kh1; kh++)
                cr_assert_eq(seen[g[q].fb][kh * 3 + g[q].kw[k]]++, 0);
    }
    for (int fb = 0; fb < bp->dx.fw; fb++)
        for (int t = 0; t < 9; t++)
            cr_assert_eq(seen[fb][t], 1, "fb %d tap %d", fb, t);
}

/* The SPM regions are disjoint and inside the SPM, one band per image, the bytes are one read of
 * dY, the groups of dW^T regions as above; the digits CNN's two layers at both configs. */
Test(conv_bwd, plan_layout)
{
    npu_conv_t ls[2] = {layer(32, 1, 8, 8, 16, 3, 1, 1), layer(32, 16, 8, 8, 32, 3, 2, 1)};
    for (int S = 2; S <= 8; S += 6)
        for (int i = 0; i < 4; i++) {
            npu_cfg_t cfg = test_cfg(S);
            npu_conv_bwd_plan_t bp;
            char msg[256];
            int padded = i / 2;
            cr_assert_eq(npu_conv_bwd_plan(&cfg, &ls[i % 2], padded, &bp, msg, sizeof msg), 0, "%s", msg);
            cr_assert_eq(bp.dx.nbands, 1);
            cr_assert_eq(bp.dx.units, 32 * bp.dx.ngroups);
            cr_assert_leq(bp.dx.spm_used, bp.xt_base[0]);
            cr_assert_eq(bp.xt_base[1], bp.xt_base[0] + bp.xt_words);
            cr_assert_eq(bp.dwt_base, bp.xt_base[1] + bp.xt_words);
            cr_assert_leq(bp.dwt_base + bp.dwt_words, (unsigned)npu_cfg_spm_words(&cfg));
            /* one read of dY and at most one of X (padded exactly; dense up to a beat where two
             * LOADs meet inside one: a dY LOAD per unit, an X^T LOAD per X row) */
            cr_assert_eq(bp.plan_rd[NPU_TAG_DY], bp.comp_rd[NPU_TAG_DY] + (padded ? 0u : 0u));
            cr_assert_leq(bp.plan_rd[NPU_TAG_X], bp.comp_rd[NPU_TAG_X] + (padded ? 0u : 32u * 8u * bp.dx.B));
            cr_assert_leq(bp.khg * bp.kwg * ls[i % 2].C, cfg.obuf_rows);
            check_groups(&cfg, &ls[i % 2], &bp);
        }
}

Test(conv_bwd, plan_limits)
{
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_bwd_plan_t bp;
    char msg[256];
    npu_conv_t c = layer(1, 8, 8, 8, 8, 3, 1, 1);
    c.depthwise = 1;
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "depthwise"), "%s", msg);
    c = layer(1, 80, 4, 4, 8, 3, 1, 1); /* 80 channel rows > 64 OBUF rows */
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "OBUF half"), "%s", msg);
    c = layer(1, 4, 8, 80, 4, 3, 1, 1); /* a dX row of 80 pixels exceeds an OBUF half */
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "ring"), "%s", msg);
}

/* Runs layer c on the C model at S (bf16: the order-matched golden; bw: SPM words per DRAM beat);
 * returns the plan's resident. */
static int run_fake(int S, int bf16, int bw, npu_conv_t c)
{
    npu_cfg_t cfg = test_cfg(S), c1 = test_cfg(S);
    cfg.beat_words = bw;
    npu_conv_bwd_report_t rep;
    npu_conv_bwd_plan_t bp;
    char msg[256];
    cfg.dtype = bf16 ? NPU_DTYPE_BF16 : cfg.dtype;
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg), 0, "%s", msg);
    npu_sim_t *sim = open_fake_exact(&cfg);
    npu_conv_bwd_run(&cfg, sim, &c, 7, 50000000, NULL, &rep);
    npu_sim_close(sim);
    npu_funcsim_config(&c1);
    cr_assert_eq(rep.rc, NPU_GEMM_PASS, "S=%d beat %d words C%d H%d F%d k%d s%d p%d: %s", S, c.C, c.H, c.F, c.KH, c.stride,
                 c.pad, rep.msg);
    for (int t = 1; t < NPU_NUM_TAGS; t++) { /* the plan's bytes are the program's, every tag */
        cr_assert_eq(rep.rd[t], rep.plan_rd[t], "S=%d beat %d words tag %d: read %llu, plan %llu", S, bw, t,
                     (unsigned long long)rep.rd[t], (unsigned long long)rep.plan_rd[t]);
        cr_assert_eq(rep.wr[t], rep.plan_wr[t], "S=%d beat %d words tag %d: written %llu, plan %llu", S, bw, t,
                     (unsigned long long)rep.wr[t], (unsigned long long)rep.plan_wr[t]);
    }
    /* less: rows of padding only; dense, a beat more where two of a unit's LOADs meet in one */
    cr_assert_leq(rep.rd[NPU_TAG_DY], rep.comp_rd[NPU_TAG_DY] + 2u * (uint64_t)bp.dx.units * bp.dx.DB);
    return bp.resident;
}

/* int16 and bf16 (dX and dW in the program's summation order), resident dW^T regions and
 * per-image ones drained with acc. */
Test(conv_bwd, fake_runs)
{
    npu_conv_t ls[] = {layer(2, 1, 8, 8, 16, 3, 1, 1), layer(2, 16, 8, 8, 32, 3, 2, 1), layer(1, 5, 7, 6, 3, 3, 2, 0),
                       layer(2, 3, 5, 5, 6, 1, 1, 0),  layer(1, 6, 7, 7, 5, 1, 2, 0),   layer(1, 4, 6, 7, 9, 2, 2, 1)};
    npu_conv_t d2 = layer(1, 3, 6, 6, 5, 3, 1, 2); /* dilation 2: a WAVE per kh */
    d2.dil = 2;
    int resident[2] = {0, 0};
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int S = 2; S <= 8; S += 6) {
            for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++)
                resident[run_fake(S, bf16, 1, ls[i])]++;
            resident[run_fake(S, bf16, 1, d2)]++;
            resident[run_fake(S, bf16, 1, layer(2, 20, 7, 7, 9, 3, 2, 0))]++; /* s2 p0: kw 0 and 1 share a tile */
        }
    cr_assert(resident[0] > 0 && resident[1] > 0, "per-image %d, resident %d", resident[0], resident[1]);
}


/* The trainer's call: the caller's X, Wt, dY in (with zeros), dX and dW out in the golden
 * layouts ([b][H][W][C], [KH][KW][F][C]), equal to the golden models. */
Test(conv_bwd, caller_tensors)
{
    npu_conv_t c = layer(2, 5, 6, 6, 7, 3, 2, 1);
    npu_cfg_t cfg = test_cfg(8);
    size_t nx = npu_conv_x_elems(&c), nw = npu_conv_w_elems(&c), ny = npu_conv_y_elems(&c);
    int16_t X[360], Wt[315], dY[126];
    int32_t dX[360], dW[315], gx[360], gw[315];
    npu_conv_bwd_report_t rep;
    uint64_t r = 3;
    cr_assert(nx <= 360 && nw <= 315 && ny <= 126);
    for (size_t i = 0; i < nx; i++)
        X[i] = (int16_t)(test_rand(&r) % 7 == 0 ? 0 : (int)(test_rand(&r) % 2001) - 1000);
    for (size_t i = 0; i < nw; i++)
        Wt[i] = (int16_t)((int)(test_rand(&r) % 2001) - 1000);
    for (size_t i = 0; i < ny; i++)
        dY[i] = (int16_t)((int)(test_rand(&r) % 2001) - 1000);
    npu_sim_t *sim = open_fake_exact(&cfg);
    npu_conv_bwd_io_t io = {X, Wt, dY, dX, dW, 0};
    npu_conv_bwd_run(&cfg, sim, &c, 1, 10000000, &io, &rep);
    npu_sim_close(sim);
    cr_assert_eq(rep.rc, NPU_GEMM_PASS, "%s", rep.msg);
    cr_assert(io.filled);
    npu_conv_dx_golden(&c, dY, Wt, gx);
    npu_conv_dw_golden(&c, X, dY, gw);
    cr_assert_arr_eq(dX, gx, sizeof *dX * nx);
    cr_assert_arr_eq(dW, gw, sizeof *dW * nw);
}

/* Random layers (kernel 1-3 x 1-3, stride 1-2, padding 0-2, dilation 1-2, 1-20 channels and
 * filters, 3-9 pixels a side, batch 1-3) on the C model at S = 2 and 8: every one the planner takes
 * (half of them in bf16) is bit-exact with every counter and dY read once; the ones it refuses
 * name the limit. */
Test(conv_bwd, random_layers)
{
    uint64_t r = 0x5EED;
    int ran = 0;
    for (int i = 0; i < 200; i++) {
        int S = i % 2 ? 8 : 2;
        npu_cfg_t cfg = test_cfg(S);
        npu_conv_bwd_plan_t bp;
        char msg[256];
        npu_conv_t c = {1 + (int)(test_rand(&r) % 3), 1 + (int)(test_rand(&r) % 20), 3 + (int)(test_rand(&r) % 7),
                        3 + (int)(test_rand(&r) % 7), 1 + (int)(test_rand(&r) % 20), 1 + (int)(test_rand(&r) % 3),
                        1 + (int)(test_rand(&r) % 3), 1 + (int)(test_rand(&r) % 2), (int)(test_rand(&r) % 3),
                        1 + (int)(test_rand(&r) % 2), 0};
        if (npu_conv_check(&c, msg, sizeof msg) != 0)
            continue;
        if (npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg) != 0) {
            cr_assert(strstr(msg, "bwd: "), "%s", msg);
            continue;
        }
        run_fake(S, i % 4 >= 2, S == 8 && i % 3 == 0 ? 2 : 1, c); /* half in bf16, a third of S = 8 at 64-byte beats */
        ran++;
    }
    cr_log_info("conv_bwd/random_layers: %d of 200 layers fused and ran", ran);
    cr_assert_geq(ran, 100);
}

/* One program of bp on the C model with the DRAM as `img` (the operands in place, dX and dW^T
 * poisoned, the program at prog): the DRAM image after it into img, its counters into rr. */
static void run_img_at(const npu_cfg_t *cfg, const npu_cfg_t *lo, const npu_insn_t *pre, int npre, const npu_insn_t *post,
                       const npu_conv_bwd_plan_t *bp, const npu_conv_bwd_addrs_t *a, uint64_t prog, uint8_t *img,
                       size_t bytes, npu_run_result_t *rr)
{
    npu_prog_t pg;
    npu_prog_expect_t ex;
    size_t dram_bytes;
    char msg[256];
    npu_prog_init(&pg);
    for (int i = 0; i < npre; i++)
        cr_assert_eq(npu_prog_push(&pg, &pre[i]), 0);
    cr_assert_eq(npu_conv_bwd_emit(lo, bp, a, &pg, msg, sizeof msg), 0, "%s", msg);
    npu_sim_t *sim = open_fake_exact(cfg);
    uint8_t *dram = npu_sim_dram(sim, &dram_bytes);
    cr_assert_geq(dram_bytes, bytes);
    memcpy(dram, img, bytes);
    cr_assert_eq(npu_run_program(cfg, sim, prog, pg.insn, pg.n, 50000000, rr), NPU_RUN_DONE);
    npu_prog_expect(cfg, pg.insn, pg.n, &ex);
    cr_assert_eq(npu_check_counters(rr->cnt, &ex, msg, sizeof msg), 0, "%s", msg);
    if (post) { /* a program of its own after it (the SPM stays): e.g. resident rows to DRAM */
        npu_run_result_t r2;
        cr_assert_eq(npu_run_program(cfg, sim, prog, post, 1, 50000000, &r2), NPU_RUN_DONE);
    }
    memcpy(img, dram, bytes);
    npu_sim_close(sim);
    npu_prog_free(&pg);
}

static void run_img(const npu_cfg_t *cfg, const npu_conv_bwd_plan_t *bp, const npu_conv_bwd_addrs_t *a,
                    uint64_t prog, uint8_t *img, size_t bytes, npu_run_result_t *rr)
{
    run_img_at(cfg, cfg, NULL, 0, NULL, bp, a, prog, img, bytes, rr);
}

/* Layer c at S, int16 or bf16: the program without dX writes the full program's dW^T bit for bit,
 * no dX (its tensor keeps the poison; DX bytes 0), reads no W, dY once (the full program's DY
 * bytes), makes only dW's MACs, every tag's bytes are its plan's, and it takes fewer cycles. */
static int no_dx_same_dw(int S, int bf16, npu_conv_t c)
{
    npu_cfg_t cfg = test_cfg(S);
    npu_conv_bwd_plan_t full, nodx;
    char msg[256];
    cfg.dtype = bf16 ? NPU_DTYPE_BF16 : cfg.dtype;
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &c, 0, &full, msg, sizeof msg), 0, "%s", msg);
    nodx = full;
    npu_conv_bwd_drop_dx(&nodx);
    const npu_conv_plan_t *p = &full.dx;
    unsigned B = (unsigned)npu_cfg_word(&cfg);
    uint64_t at[6], sz[5] = {npu_conv_tensor_bytes(p, NPU_TAG_X), npu_conv_tensor_bytes(p, NPU_TAG_W),
                             npu_conv_tensor_bytes(p, NPU_TAG_DY), npu_conv_tensor_bytes(p, NPU_TAG_DX),
                             (uint64_t)full.dwt_words * B};
    npu_alloc_t al;
    npu_alloc_init(&al, 1u << 24, B > 16 ? B : 16);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(npu_alloc(&al, sz[i], &at[i]), 0);
    at[5] = al.next; /* the programs */
    npu_conv_bwd_addrs_t a = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[2], (uint32_t)at[3], (uint32_t)at[4]};
    size_t nx = npu_conv_x_elems(&c), nw = npu_conv_w_elems(&c), ny = npu_conv_y_elems(&c), bytes = (size_t)at[5];
    int16_t *X = malloc(nx * 2), *W = malloc(nw * 2), *dY = malloc(ny * 2);
    uint8_t *img[2] = {malloc(bytes), malloc(bytes)};
    npu_run_result_t rr[2];
    cr_assert(X && W && dY && img[0] && img[1]);
    (bf16 ? npu_conv_operands_bf16 : npu_conv_operands)(&c, 11, X, W, dY);
    memset(img[0], 0xA5, bytes);
    npu_write_i16(img[0], at[0], p->pitch_x, c.batch * c.H * c.W, c.C, X, (size_t)c.C);
    npu_write_i16(img[0], at[1], p->pitch_w, p->T * c.F, c.C, W, (size_t)c.C);
    npu_write_i16(img[0], at[2], p->pitch_dy, c.batch * p->OH * p->OW, c.F, dY, (size_t)c.F);
    memcpy(img[1], img[0], bytes);
    run_img(&cfg, &full, &a, at[5], img[0], bytes, &rr[0]);
    run_img(&cfg, &nodx, &a, at[5], img[1], bytes, &rr[1]);
    cr_assert_arr_eq(img[1] + at[4], img[0] + at[4], (size_t)sz[4], "dW^T bit for bit: S=%d bf16=%d C%d F%d s%d",
                     S, bf16, c.C, c.F, c.stride);
    for (uint64_t i = 0; i < sz[3]; i++)
        cr_assert_eq(img[1][at[3] + i], 0xA5, "dX byte %llu written", (unsigned long long)i);
    cr_assert_eq(rr[1].cnt[NPU_CNT_dram_wr_prog + NPU_TAG_DX], 0);
    cr_assert_eq(rr[1].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_W], 0);
    cr_assert_eq(rr[1].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY], rr[0].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY]);
    cr_assert_eq(npu_conv_run_sums(rr[1].cnt).macs, npu_conv_macs(&c, NPU_CONV_DW, NPU_CONV_ECOFLOW).total);
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        cr_assert_eq(rr[1].cnt[NPU_CNT_dram_rd_prog + t], nodx.plan_rd[t], "tag %d", t);
        cr_assert_eq(rr[1].cnt[NPU_CNT_dram_wr_prog + t], nodx.plan_wr[t], "tag %d", t);
    }
    cr_assert_lt(rr[1].cnt[NPU_CNT_cycles], rr[0].cnt[NPU_CNT_cycles]);
    free(X);
    free(W);
    free(dY);
    free(img[0]);
    free(img[1]);
    return (full.dx.ngroups > 1) * 2 + full.resident;
}

/* The digits CNN's first layer, resident and per-image dW^T regions, several c-block groups
 * (C = 20 at S = 2: units without waves of their own), stride 2 with flat and per-phase X^T, and
 * layers of several bands per image (the ring of dY rows: the units load their new rows; the last
 * at S = 2 with the X^T ring too). */
Test(conv_bwd, no_dx_same_dw)
{
    npu_conv_t ls[] = {layer(4, 1, 8, 8, 4, 3, 1, 1), layer(2, 16, 8, 8, 32, 3, 2, 1), layer(1, 5, 7, 6, 3, 3, 2, 0),
                       layer(2, 20, 7, 7, 9, 3, 2, 0), layer(1, 4, 6, 7, 9, 2, 2, 1), layer(2, 4, 16, 16, 8, 3, 1, 1),
                       layer(2, 6, 17, 15, 5, 3, 2, 1), layer(1, 16, 32, 32, 8, 3, 1, 1)};
    int seen[4] = {0};
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int S = 2; S <= 8; S += 6)
            for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++)
                seen[no_dx_same_dw(S, bf16, ls[i])]++;
    cr_assert(seen[0] && seen[1] && seen[2], "per-image %d, resident %d, groups > 1 %d", seen[0], seen[1],
              seen[2] + seen[3]);
}

/* Layer c at S, int16 or bf16, planned on the SPM less two banks: with dY read in place from
 * resident rows in those banks (npu_conv_bwd_res_dy), pixel r at word spm + r * (fw + 1) (a pitch
 * other than the band buffer's, so a wave or LDW at fw reads the wrong pixels), which a LOAD ahead
 * of the program fills (the LOAD queue runs in order: before the program's first group pushes its
 * l2e), dX and dW^T come out bit for bit as the plain program's; the program reads no dY byte but
 * the LOAD's (the plan's DY bytes 0), every other tag's bytes are the plan's and the plain
 * program's. With x, X^T made from X's resident rows (npu_conv_bwd_res_x: LOAD_SPMs), pixel r at
 * word + r * (cw + 1) (per-phase X^T loads; flat ones need the DRAM pitch, where it is whole
 * words, and are refused at cw + 1), LOADed ahead too: no X byte read but the LOAD's. Returns 1
 * when the plan has several bands (the dY ring). */
static int resident_same_out(int S, int bf16, npu_conv_t c, int dy, int dx, int x)
{
    npu_cfg_t cfg = test_cfg(S), lo;
    npu_conv_bwd_plan_t plain, res;
    npu_insn_t pre[3], post;
    int npre = 0;
    npu_prog_expect_t pex;
    char msg[256];
    cfg.dtype = bf16 ? NPU_DTYPE_BF16 : cfg.dtype;
    lo = cfg;
    lo.spm_banks = cfg.spm_banks - 2;
    cr_assert_eq(npu_conv_bwd_plan(&lo, &c, 0, &plain, msg, sizeof msg), 0, "%s", msg);
    const npu_conv_plan_t *p = &plain.dx;
    unsigned B = (unsigned)npu_cfg_word(&cfg), spm = (unsigned)npu_cfg_spm_words(&lo), stride = (unsigned)p->fw + 1;
    unsigned rows = (unsigned)(c.batch * p->OH * p->OW), xrows = (unsigned)(c.batch * c.H * c.W);
    unsigned xstride = p->pout + 1, xspm = spm + (dy ? rows * stride : 0);
    unsigned rx = plain.xt_flat ? p->pitch_x / B : (unsigned)p->cw + 1, rxspm = xspm + (dx ? xrows * xstride : 0);
    if (x && plain.xt_flat && p->pitch_x % B) { /* no whole-word pitch: flat loads cannot read rows */
        for (unsigned w = (unsigned)p->cw; w <= (unsigned)p->cw + 2; w++)
            cr_assert_eq(npu_conv_bwd_res_x_ok(&plain, w), 0, "flat X^T from rows %u words apart", w);
        x = 0;
    }
    cr_assert_leq(rxspm + (x ? xrows * rx : 0), (unsigned)npu_cfg_spm_words(&cfg), "the rows fit the two banks");
    res = plain;
    if (dy) {
        cr_assert_neq(npu_conv_bwd_res_dy(&lo, &res, spm - 1, stride, msg, sizeof msg), 0, "rows in the plan's SPM");
        cr_assert_neq(npu_conv_bwd_res_dy(&lo, &res, spm, (unsigned)p->fw - 1, msg, sizeof msg), 0, "rows too narrow");
        cr_assert_eq(npu_conv_bwd_res_dy(&lo, &res, spm, stride, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(res.plan_rd[NPU_TAG_DY], 0);
    }
    if (dx) {
        cr_assert_neq(npu_conv_bwd_res_dx(&lo, &res, xspm, p->pout - 1, msg, sizeof msg), 0, "rows too narrow");
        cr_assert_eq(npu_conv_bwd_res_dx(&lo, &res, xspm, xstride, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(res.plan_wr[NPU_TAG_DX], 0);
    }
    if (x) {
        cr_assert_neq(npu_conv_bwd_res_x(&lo, &res, rxspm, (unsigned)p->cw - 1, msg, sizeof msg), 0, "rows too narrow");
        cr_assert_eq(npu_conv_bwd_res_x_ok(&plain, plain.xt_flat ? rx + 1 : rx), !plain.xt_flat,
                     "flat X^T loads: rows a DRAM pitch apart only");
        cr_assert_eq(npu_conv_bwd_res_x(&lo, &res, rxspm, rx, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(res.plan_rd[NPU_TAG_X], 0);
    }
    uint64_t at[6], sz[5] = {npu_conv_tensor_bytes(p, NPU_TAG_X), npu_conv_tensor_bytes(p, NPU_TAG_W),
                             npu_conv_tensor_bytes(p, NPU_TAG_DY), npu_conv_tensor_bytes(p, NPU_TAG_DX),
                             (uint64_t)plain.dwt_words * B};
    npu_alloc_t al;
    npu_alloc_init(&al, 1u << 24, B > 16 ? B : 16);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(npu_alloc(&al, sz[i], &at[i]), 0);
    at[5] = al.next;
    npu_conv_bwd_addrs_t a = {(uint32_t)at[0], (uint32_t)at[1], (uint32_t)at[2], (uint32_t)at[3], (uint32_t)at[4]};
    size_t nx = npu_conv_x_elems(&c), nw = npu_conv_w_elems(&c), ny = npu_conv_y_elems(&c), bytes = (size_t)at[5];
    int16_t *X = malloc(nx * 2), *W = malloc(nw * 2), *dY = malloc(ny * 2);
    uint8_t *img[2] = {malloc(bytes), malloc(bytes)};
    npu_run_result_t rr[2];
    cr_assert(X && W && dY && img[0] && img[1]);
    (bf16 ? npu_conv_operands_bf16 : npu_conv_operands)(&c, 13, X, W, dY);
    memset(img[0], 0xA5, bytes);
    npu_write_i16(img[0], at[0], p->pitch_x, c.batch * c.H * c.W, c.C, X, (size_t)c.C);
    npu_write_i16(img[0], at[1], p->pitch_w, p->T * c.F, c.C, W, (size_t)c.C);
    npu_write_i16(img[0], at[2], p->pitch_dy, (int)rows, c.F, dY, (size_t)c.F);
    memcpy(img[1], img[0], bytes);
    if (dy) /* dY into its resident rows */
        cr_assert_eq(npu_enc_load(&pre[npre++], NPU_TAG_DY, 0, rows, (uint32_t)at[2], spm, stride, 2u * (unsigned)c.F,
                                  p->pitch_dy), 0);
    if (x) /* X into its resident rows */
        cr_assert_eq(npu_enc_load(&pre[npre++], NPU_TAG_X, 0, xrows, (uint32_t)at[0], rxspm, rx, 2u * (unsigned)c.C,
                                  p->pitch_x), 0);
    if (dx) /* dX's rows poisoned (the DRAM dX's 0xA5): pixels no tap reaches must be FILLed there */
        cr_assert_eq(npu_enc_load(&pre[npre++], NPU_TAG_X, 0, xrows, (uint32_t)at[3], xspm, xstride, 4u * (unsigned)c.C,
                                  p->pitch_out), 0);
    npu_prog_expect(&cfg, pre, npre, &pex);
    /* dX from its resident rows to its DRAM place, in a program after the kernel's */
    cr_assert_eq(npu_enc_store(&post, NPU_TAG_DX, xrows, (uint32_t)at[3], xspm, xstride, 4u * (unsigned)c.C,
                               p->pitch_out), 0);
    run_img_at(&cfg, &lo, NULL, 0, NULL, &plain, &a, at[5], img[0], bytes, &rr[0]);
    run_img_at(&cfg, &lo, pre, npre, dx ? &post : NULL, &res, &a, at[5], img[1], bytes, &rr[1]);
    cr_assert_arr_eq(img[1] + at[3], img[0] + at[3], (size_t)sz[3], "dX bit for bit: S=%d bf16=%d C%d F%d s%d", S, bf16,
                     c.C, c.F, c.stride);
    cr_assert_arr_eq(img[1] + at[4], img[0] + at[4], (size_t)sz[4], "dW^T bit for bit: S=%d bf16=%d C%d F%d s%d", S,
                     bf16, c.C, c.F, c.stride);
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        uint64_t rd = rr[1].cnt[NPU_CNT_dram_rd_prog + t] - pex.rd_bytes[t];
        cr_assert_eq(rd, res.plan_rd[t], "tag %d: read %llu, plan %llu", t, (unsigned long long)rd,
                     (unsigned long long)res.plan_rd[t]);
        cr_assert_eq(rr[1].cnt[NPU_CNT_dram_wr_prog + t], res.plan_wr[t], "tag %d", t);
        cr_assert_eq(rd + ((t == NPU_TAG_DY && dy) || (t == NPU_TAG_X && x) ? plain.plan_rd[t] : 0),
                     rr[0].cnt[NPU_CNT_dram_rd_prog + t], "tag %d", t);
        cr_assert_eq(rr[1].cnt[NPU_CNT_dram_wr_prog + t] + (t == NPU_TAG_DX && dx ? plain.plan_wr[t] : 0),
                     rr[0].cnt[NPU_CNT_dram_wr_prog + t], "tag %d", t);
    }
    free(X);
    free(W);
    free(dY);
    free(img[0]);
    free(img[1]);
    return p->nbands > 1;
}

/* dY in place: one band per image, dY pixels of several words (F = 32 at S = 2: fw = 8), stride 2,
 * several bands over the dY ring, int16 and bf16 (bf16 dY with any sign and exponent: no copy) */
Test(conv_bwd, resident_dy_same_out)
{
    npu_conv_t ls[] = {layer(2, 4, 8, 8, 4, 3, 1, 1), layer(2, 16, 8, 8, 32, 3, 2, 1), layer(1, 5, 7, 6, 3, 3, 2, 0),
                       layer(2, 4, 16, 16, 8, 3, 1, 1), layer(2, 6, 17, 15, 5, 3, 2, 1)};
    int bands = 0;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++)
            bands += resident_same_out(2, bf16, ls[i], 1, 0, 0);
    cr_assert_gt(bands, 0, "no layer of several bands: the ring is not tested");
}

/* dX drained into resident rows at pout + 1 words a pixel (npu_conv_bwd_res_dx), alone and with dY
 * in place: dX (stored from its rows by a program after the kernel's) and dW^T bit for bit as the
 * plain program's, no dX byte written, every other tag the plan's; layers whose W is a multiple of
 * the stride (one band, several c-block groups at C = 16, stride 2, the ring, pixels no tap reaches
 * at stride 2 without padding); one with W odd at stride 2 is refused. */
Test(conv_bwd, resident_dx_same_out)
{
    npu_conv_t ls[] = {layer(2, 4, 8, 8, 4, 3, 1, 1), layer(2, 16, 8, 8, 32, 3, 2, 1), layer(2, 4, 16, 16, 8, 3, 1, 1),
                       layer(1, 5, 8, 6, 3, 1, 2, 0)};
    npu_conv_t odd = layer(1, 5, 7, 7, 3, 3, 2, 0);
    npu_cfg_t cfg = test_cfg(2);
    npu_conv_bwd_plan_t bp;
    char msg[256];
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
            resident_same_out(2, bf16, ls[i], 0, 1, 0);
            resident_same_out(2, bf16, ls[i], 1, 1, 0);
        }
    cr_assert_eq(npu_conv_bwd_plan(&cfg, &odd, 0, &bp, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(npu_conv_bwd_res_dx_ok(&bp, 64), 0, "W = 7 at stride 2: tile rows of 8 pixels");
    npu_conv_bwd_drop_dx(&bp);
    cr_assert_eq(npu_conv_bwd_res_dx_ok(&bp, 64), 0, "no dX");
}

/* X^T made from X's resident rows by LOAD_SPMs (npu_conv_bwd_res_x), alone and with dY in place and
 * dX drained into rows: dX and dW^T bit for bit as the plain program's, no X byte read but the
 * LOAD that fills the rows; flat X^T loads (stride 1, W a multiple of the stride) with rows the
 * DRAM pitch apart, per-phase ones (W odd at stride 2) at cw + 1, the ring of X^T rows (several
 * bands: 40 x 40), several c-block groups (C = 16), S = 2 and 8, int16 and bf16; a view of a wider
 * X is refused. */
Test(conv_bwd, resident_x_same_out)
{
    npu_conv_t ls[] = {layer(2, 4, 8, 8, 4, 3, 1, 1), layer(2, 16, 8, 8, 32, 3, 2, 1), layer(1, 5, 7, 6, 3, 3, 2, 0),
                       layer(2, 4, 16, 16, 8, 3, 1, 1), layer(2, 6, 17, 15, 5, 3, 2, 1), layer(1, 2, 40, 40, 6, 3, 1, 1)};
    int kinds[2] = {0, 0};
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int S = 2; S <= 8; S += 6)
            for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
                npu_cfg_t cfg = test_cfg(S);
                npu_conv_bwd_plan_t bp;
                char msg[256];
                cfg.spm_banks -= 2;
                cr_assert_eq(npu_conv_bwd_plan(&cfg, &ls[i], 0, &bp, msg, sizeof msg), 0, "%s", msg);
                kinds[bp.xt_flat]++;
                resident_same_out(S, bf16, ls[i], 0, 0, 1);
                if (S == 2 && ls[i].batch * ls[i].H * ls[i].W <= 512) /* dY's and dX's rows fit too */
                    resident_same_out(S, bf16, ls[i], 1, ls[i].W % ls[i].stride == 0, 1);
                bp.dx.dwx = ls[i].W + 1; /* a part of a wider layer */
                cr_assert_eq(npu_conv_bwd_res_x_ok(&bp, 64), 0, "a view of a wider X");
            }
    cr_assert(kinds[0] && kinds[1], "flat %d, per phase %d", kinds[1], kinds[0]);
}

/* Several bands of dX rows per image over a ring of dY rows: int16 and bf16, S = 2 and 8, stride 1
 * and 2, padding 0-2, dilation 2, several c-block groups, resident and per-band dW^T regions; each
 * run bit-exact with its counters and dY read once (run_fake). */
Test(conv_bwd, bands)
{
    npu_conv_t ls[] = {layer(2, 4, 16, 16, 8, 3, 1, 1), layer(2, 6, 17, 15, 5, 3, 2, 1), layer(1, 3, 19, 18, 4, 3, 2, 0),
                       layer(2, 20, 12, 12, 9, 3, 1, 2), layer(1, 5, 14, 14, 3, 1, 2, 0), layer(3, 2, 40, 40, 6, 3, 1, 1)};
    npu_conv_t d2 = layer(1, 3, 16, 16, 5, 3, 1, 2);
    int seen[2] = {0, 0};
    d2.dil = 2;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int S = 2; S <= 8; S += 6)
            for (size_t i = 0; i <= sizeof ls / sizeof ls[0]; i++) {
                npu_conv_t c = i < sizeof ls / sizeof ls[0] ? ls[i] : d2;
                npu_cfg_t cfg = test_cfg(S);
                npu_conv_bwd_plan_t bp;
                char msg[256];
                if (npu_conv_bwd_plan(&cfg, &c, 0, &bp, msg, sizeof msg) != 0 || bp.dx.nbands < 2)
                    continue; /* one band at S = 8 (or a refusal, asserted below) */
                cr_assert_gt(bp.dx.ring, 0);
                seen[run_fake(S, bf16, 1, c)]++;
            }
    cr_assert(seen[0] > 0 && seen[1] > 0, "per-band %d, resident %d", seen[0], seen[1]);
}

/* Layers of several bands with X^T in a ring too (each band loads the X rows its dW^T waves read
 * that no earlier band loaded), most of them past two whole images' X^T, int16 and bf16, S = 2 and
 * 8, per-phase and flat X^T (at s = 1 with padding channels that a row's LOAD writes into the next
 * slots: C10 at S = 2 and C9 at S = 8 one slot, C4 at S = 8 three; at s = 2 with one-beat pixels:
 * C12 at S = 8), dilation 2; X read once (the plan's X
 * bytes, checked per tag by the run, are one read of the used X rows: at most the tensor). */
Test(conv_bwd, xt_ring)
{
    static const int S[] = {2, 2, 2, 8, 8, 8, 8, 2, 8};
    npu_conv_t ls[] = {layer(2, 16, 32, 32, 8, 3, 1, 1), layer(1, 16, 30, 31, 8, 3, 2, 0), layer(1, 10, 40, 40, 6, 3, 1, 1),
                       layer(1, 32, 24, 24, 16, 3, 2, 1), layer(1, 32, 28, 28, 16, 3, 1, 1), layer(1, 9, 64, 64, 8, 3, 1, 1),
                       layer(1, 12, 64, 64, 8, 3, 2, 1), layer(1, 16, 32, 32, 8, 3, 1, 2), layer(2, 4, 24, 24, 8, 3, 1, 1)};
    ls[7].dil = 2; /* a WAVE per kh (dilated X rows are not C rows apart) */
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
            npu_cfg_t cfg = test_cfg(S[i]);
            npu_conv_bwd_plan_t bp;
            char msg[256];
            cr_assert_eq(npu_conv_bwd_plan(&cfg, &ls[i], 0, &bp, msg, sizeof msg), 0, "%s", msg);
            cr_assert_gt(bp.xt_ring, 0, "layer %zu: X^T of whole images", i);
            cr_assert_eq(bp.xt_flat, i != 1, "layer %zu", i); /* dense: flat wherever W % s = 0 (not 31 at s = 2) */
            npu_conv_bwd_plan_t pp; /* padded (the step engine's): per phase at s = 2 with pixels of 2+ beats */
            cr_assert_eq(npu_conv_bwd_plan(&cfg, &ls[i], 1, &pp, msg, sizeof msg), 0, "%s", msg);
            cr_assert_eq(pp.xt_flat, i != 1 && i != 3, "layer %zu padded", i);
            cr_assert_leq(pp.plan_rd[NPU_TAG_X], pp.comp_rd[NPU_TAG_X]);
            cr_assert_eq(bp.xt_base[0], bp.xt_base[1]);
            cr_assert_leq(bp.dx.spm_used, bp.xt_base[0]);
            cr_assert_leq(bp.dwt_base + bp.dwt_words, (unsigned)npu_cfg_spm_words(&cfg));
            /* dense: a transposed LOAD reads each group of two words of a pixel as its own run when
             * the pixel is wider than two words (its sub-rows are not contiguous), and a run of
             * unaligned bytes covers one beat more than its words: at most cw + ceil(cw / 2) beats a
             * pixel (docs/memory.md "Transposed LOAD") */
            uint64_t cw = (uint64_t)bp.dx.cw, px_max = (cw + (cw + 1) / 2) * bp.dx.B;
            cr_assert_leq(bp.plan_rd[NPU_TAG_X], (uint64_t)ls[i].batch * ls[i].H * ls[i].W * px_max,
                          "layer %zu: X read %llu, tensor %llu", i, (unsigned long long)bp.plan_rd[NPU_TAG_X],
                          (unsigned long long)bp.comp_rd[NPU_TAG_X]);
            run_fake(S[i], bf16, 1, ls[i]);
        }
}
