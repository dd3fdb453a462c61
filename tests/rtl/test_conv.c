/*
 * test_conv.c - convolution layers on the Verilated NPU (sw/run/conv_run.h, docs/conv.md): fwd, dX
 * and dW under the zeropad and ecoflow dataflows, bit-exact against the golden model with random
 * DRAM stalls; every counter against the program, the MACs against npu_conv_macs (macs_zero =
 * the structural zeros for zeropad, 0 for ecoflow); DRAM bytes against the plan (and the
 * compulsory bytes in one band); the EcoFlow speedups of the issue. NPU_SEED changes the seeds;
 * NPU_CONV_RANDOM=n runs n more random layers per test (make regress sets it).
 */
#include <stdio.h>
#include <string.h>

#include "run/conv_run.h"
#include "../unit/conv_test_layer.h"
#include "rtl_common.h"


/* Runs one kernel x dataflow on a fresh model and asserts PASS and the plan's DRAM bytes. */
static void conv_rtl(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df,
                     const npu_conv_plan_opts_t *o, uint64_t seed, unsigned stall,
                     npu_conv_report_t *out)
{
    npu_conv_report_t r;
    char ls[96];
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    int rc = npu_conv_run_opts(cfg, s, c, k, df, o, seed, 20000000, &r);
    npu_sim_close(s);
    npu_conv_str(c, ls, sizeof ls);
    cr_assert_eq(rc, NPU_GEMM_PASS,
                 "%s %s %s seed %llu stall %u%% (max band rows %d, blocks %d): %s (%s)\n"
                 "  replay: NPU_SEED=%llu build/%s/test_rtl --filter 'conv/*'",
                 ls, npu_conv_kernel_name(k), npu_conv_dataflow_name(df), (unsigned long long)seed,
                 stall, o ? o->max_band_rows : 0, o ? o->max_blocks : 0, npu_gemm_rc_name(rc), r.msg,
                 (unsigned long long)seed, cfg->name);
    cr_assert_eq(r.macs, c->depthwise ? r.macs : r.expect.total);
    cr_assert_eq(r.macs_zero, df == NPU_CONV_ECOFLOW ? 0u : r.expect.zero, "%s", ls);
    cr_assert_eq(r.dram_rd_bytes, r.plan_rd_bytes, "%s %s %s: DRAM read %llu, plan %llu", ls,
                 npu_conv_kernel_name(k), npu_conv_dataflow_name(df),
                 (unsigned long long)r.dram_rd_bytes, (unsigned long long)r.plan_rd_bytes);
    cr_assert_eq(r.dram_wr_bytes, r.plan_wr_bytes, "%s: DRAM written %llu, plan %llu", ls,
                 (unsigned long long)r.dram_wr_bytes, (unsigned long long)r.plan_wr_bytes);
    if (out)
        *out = r;
}

static void both(const npu_cfg_t *cfg, const npu_conv_t *c, int k, const npu_conv_plan_opts_t *o,
                 uint64_t seed)
{
    for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++)
        if (k != NPU_CONV_FWD || df == NPU_CONV_ZEROPAD)
            conv_rtl(cfg, c, k, df, o, seed + (uint64_t)df, 10, NULL);
}

/* A representative sweep (kernel 1..7, stride 1..4, padding 0..3, dilation 1..2, odd sizes,
 * channels not multiples of 2S, batch 2, several bands and block groups); the channel counts
 * scale with S. */
typedef struct shape { int b, C, H, W, F, KH, KW, s, p, d, bands, blocks; } shape_t;

static const shape_t k_sweep[] = {
    {2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 2, 0},   /* 3x3 s1 p1, batch 2, two-row bands */
    {1, 5, 11, 10, 7, 3, 3, 2, 0, 1, 0, 0}, /* ResNet-like 3x3 s2 p0 */
    {1, 6, 9, 9, 3, 1, 1, 2, 0, 1, 0, 0},   /* 1x1 s2: dX pixels no tap reaches */
    {1, 3, 13, 11, 4, 7, 7, 2, 3, 1, 3, 0}, /* 7x7 s2 p3 (a stem) */
    {1, 4, 12, 13, 6, 5, 3, 3, 2, 1, 0, 1}, /* rectangular 5x3 s3 p2 */
    {1, 2, 15, 14, 5, 4, 4, 4, 1, 1, 0, 0}, /* 4x4 s4 p1 */
    {1, 7, 11, 12, 9, 3, 3, 1, 2, 2, 2, 0}, /* dilated 3x3 d2 p2 */
    {2, 5, 8, 8, 3, 2, 2, 2, 0, 2, 0, 0},   /* 2x2 s2 d2 */
    {1, 3, 12, 12, 2, 6, 6, 3, 3, 1, 0, 0}, /* 6x6 s3 p3 */
};

static shape_t scaled(const npu_cfg_t *cfg, shape_t sh)
{
    if (cfg->s > 2) { /* channels across a few 2S-blocks at S = 8 too */
        sh.C = sh.C * cfg->s / 2 + 1;
        sh.F = sh.F * cfg->s / 2 - 1;
    }
    return sh;
}

static void sweep(int k)
{
    npu_cfg_t cfg = rtl_cfg();
    for (size_t i = 0; i < sizeof k_sweep / sizeof k_sweep[0]; i++) {
        shape_t sh = scaled(&cfg, k_sweep[i]);
        npu_conv_t c = conv_layer_of(sh.b, sh.C, sh.H, sh.W, sh.F, sh.KH, sh.KW, sh.s, sh.p, sh.d);
        npu_conv_plan_opts_t o = {.max_band_rows = sh.bands, .max_blocks = sh.blocks};
        both(&cfg, &c, k, &o, rtl_seed(100 + 10 * (uint64_t)i + (uint64_t)k));
    }
}

Test(conv, fwd_sweep, .timeout = 900) { sweep(NPU_CONV_FWD); }
Test(conv, dx_sweep, .timeout = 900) { sweep(NPU_CONV_DX); }
Test(conv, dw_sweep, .timeout = 900) { sweep(NPU_CONV_DW); }

/* Depthwise (F = C): fwd / dX on the host's diagonal weight blocks, dW dense with the diagonal
 * taken; MACs against the program, macs_zero against the scaled formula (conv_run.c). */
Test(conv, depthwise, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    static const shape_t dws[] = {
        {1, 5, 15, 15, 5, 3, 3, 2, 0, 1, 0, 0},  /* MobileNet CONV5-like 3x3 s2 */
        {2, 3, 9, 10, 3, 3, 3, 1, 1, 1, 3, 0},   /* 3x3 s1 p1, bands */
        {1, 6, 11, 11, 6, 5, 5, 2, 2, 2, 0, 1},  /* 5x5 s2 p2 d2 */
    };
    for (size_t i = 0; i < sizeof dws / sizeof dws[0]; i++) {
        shape_t sh = scaled(&cfg, dws[i]);
        npu_conv_t c = conv_layer_of(sh.b, sh.C, sh.H, sh.W, sh.C, sh.KH, sh.KW, sh.s, sh.p, sh.d);
        npu_conv_plan_opts_t o = {.max_band_rows = sh.bands, .max_blocks = sh.blocks};
        c.depthwise = 1;
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            both(&cfg, &c, k, &o, rtl_seed(400 + 10 * (uint64_t)i + (uint64_t)k));
    }
}

/* Random layers (NPU_CONV_RANDOM of them; 6 by default, make regress 40) under every kernel and
 * dataflow. */
Test(conv, random_layers, .timeout = 1800)
{
    npu_cfg_t cfg = rtl_cfg();
    const char *e = getenv("NPU_CONV_RANDOM");
    int n = e ? atoi(e) : 6;
    uint64_t x = rtl_seed(900) | 1;
    for (int i = 0; i < n; i++) {
        int KH = 1 + (int)(rtl_rand(&x) % 7), KW = 1 + (int)(rtl_rand(&x) % 7);
        int s = 1 + (int)(rtl_rand(&x) % 4), d = 1 + (int)(rtl_rand(&x) % 2);
        int p = (int)(rtl_rand(&x) % 4);
        if (p >= (KH > KW ? KH : KW) * d)
            p = 0;
        int H = (KH - 1) * d + 1 + (int)(rtl_rand(&x) % 8), W = (KW - 1) * d + 1 + (int)(rtl_rand(&x) % 8);
        int C = 1 + (int)(rtl_rand(&x) % (uint64_t)(3 * cfg.s)), F = 1 + (int)(rtl_rand(&x) % (uint64_t)(3 * cfg.s));
        npu_conv_t c = conv_layer_of(1 + (int)(rtl_rand(&x) % 2), C, H, W, F, KH, KW, s, p, d);
        npu_conv_plan_opts_t o = {.max_band_rows = (int)(rtl_rand(&x) % 4),
            .max_blocks = (int)(rtl_rand(&x) % 3),
            .padded = (int)(rtl_rand(&x) % 2)};
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++) {
            npu_conv_plan_t pl;
            char msg[160];
            if (npu_conv_plan(&cfg, &c, k, NPU_CONV_ECOFLOW, &o, &pl, msg, sizeof msg) != 0)
                continue; /* too big for this SPM */
            both(&cfg, &c, k, &o, rtl_seed(1000 + 10 * (uint64_t)i + (uint64_t)k));
        }
    }
}

/* Layers too large for one plan, cut into parts over filter and channel ranges (conv_split.h):
 * 3x3 with 32S channels (fwd reduces over channel ranges, dX over filter ranges, with partial
 * sums), strided, and a depthwise one; every kernel x dataflow, each run in several parts. */
Test(conv, parts, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    npu_conv_t layers[3] = {conv_layer_of(1, 32 * S, 5, 5, 32 * S, 3, 3, 1, 1, 1),
                            conv_layer_of(1, 24 * S, 7, 7, 40 * S, 3, 3, 2, 1, 1),
                            conv_layer_of(1, 256 * S, 7, 7, 256 * S, 3, 3, 1, 1, 1)};
    layers[2].depthwise = 1;
    for (int i = 0; i < 3; i++)
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                npu_conv_report_t r;
                if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                    continue;
                conv_rtl(&cfg, &layers[i], k, df, NULL, rtl_seed(1500 + 10 * (uint64_t)i + 3 * (uint64_t)k + (uint64_t)df),
                         10, &r);
                cr_assert_gt(r.parts, 1, "layer %d kernel %d planned whole: the test lost its purpose", i, k);
            }
    { /* fwd without padding, output rows longer than an OBUF half: column ranges */
        npu_conv_t c = conv_layer_of(1, 3, 4, cfg.obuf_rows + 40, 2 * S + 3, 3, 3, 1, 0, 1);
        npu_conv_report_t r;
        conv_rtl(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, rtl_seed(1550), 10, &r);
        cr_assert_gt(r.parts, 1);
    }
}

/* Rows longer than an OBUF half with padding: column ranges whose edge ranges pad on their own
 * side only. fwd p1 (the plane's columns), dX of YOLO-tiny's first layer's shape (3x3 p0: the
 * ranges read each other's dY halo columns) under both dataflows, and a strided padded dX (s2 p1:
 * each range's column phases from its own padding). */
Test(conv, column_ranges, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, W = cfg.obuf_rows + 24;
    npu_conv_t fwd = conv_layer_of(1, 3, 3, W, 2 * S + 1, 3, 3, 1, 1, 1);
    npu_conv_t yolo = conv_layer_of(1, 3, 4, W, 4, 3, 3, 1, 0, 1);
    npu_conv_t s2 = conv_layer_of(1, 5, 4, 2 * W + 1, 3, 3, 3, 2, 1, 1);
    const npu_conv_t *c[4] = {&fwd, &yolo, &yolo, &s2};
    int k[4] = {NPU_CONV_FWD, NPU_CONV_DX, NPU_CONV_DX, NPU_CONV_DX}, df[4] = {0, 1, 0, 1};
    for (int i = 0; i < 4; i++) {
        npu_conv_report_t r;
        conv_rtl(&cfg, c[i], k[i], df[i], NULL, rtl_seed(1560 + (uint64_t)i), 10, &r);
        cr_assert_gt(r.parts, 1, "case %d planned whole: the test lost its purpose", i);
    }
    /* zeropad dW over ranges of dY columns (given), each after the first adding its partial dW
     * to the stored one through DRAIN acc: strided and padded, and depthwise */
    npu_conv_t dws = conv_layer_of(1, 5, 6, 13, 2 * S + 3, 3, 3, 2, 1, 1);
    npu_conv_t dwd = conv_layer_of(1, 2 * S + 2, 5, 11, 2 * S + 2, 3, 3, 1, 1, 1);
    npu_conv_plan_opts_t o3 = {.split_w = 3};
    dwd.depthwise = 1;
    for (int i = 0; i < 2; i++) {
        npu_conv_report_t r;
        conv_rtl(&cfg, i ? &dwd : &dws, NPU_CONV_DW, NPU_CONV_ZEROPAD, &o3, rtl_seed(1570 + (uint64_t)i), 10, &r);
        cr_assert_gt(r.parts, 2, "dW case %d: %d parts", i, r.parts);
    }
}

/* (c) DRAM bytes of a 3x3 conv: the plan's always (checked by every run above); each tensor
 * once when the layer fits one band, and the halo re-loads when it is cut into bands. Padded
 * pixel rows: exactly once. Dense ones: a LOAD per X row of the padded plane and per dY row of
 * dW's dY^T, and two of them that meet inside a beat both read it: at most one beat more per row
 * (and per band tile written). */
Test(conv, dram_bytes_3x3, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_conv_t c = conv_layer_of(1, 2 * cfg.s + 3, 7, 7, 2 * cfg.s - 1, 3, 3, 1, 1, 1);
    for (int padded = 0; padded < 2; padded++)
        for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
            for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
                npu_conv_plan_opts_t o1 = {.padded = padded}, o3 = {.max_band_rows = 3, .padded = padded};
                npu_conv_report_t r;
                npu_conv_plan_t p;
                char msg[160];
                if (k == NPU_CONV_FWD && df == NPU_CONV_ECOFLOW)
                    continue;
                cr_assert_eq(npu_conv_plan(&cfg, &c, k, df, &o1, &p, msg, sizeof msg), 0, "%s", msg);
                cr_assert_eq(p.nbands, 1, "%s %s: the 7x7 layer should fit one band",
                             npu_conv_kernel_name(k), npu_conv_dataflow_name(df));
                conv_rtl(&cfg, &c, k, df, &o1, rtl_seed(77), 10, &r);
                /* + 1: dW's first unit loads its X rows in two parts (conv_dw.c) */
                /* a beat more per row where two LOADs meet in one (padded rows too at BEAT_WORDS > 1:
                 * whole words, not whole beats) */
                uint64_t slack = padded && p.DB == p.B ? 0 : (uint64_t)(c.H + p.vOH + 1) * p.DB;
                cr_assert(r.dram_rd_bytes >= r.compulsory_rd_bytes && r.dram_rd_bytes <= r.compulsory_rd_bytes + slack,
                          "%s %s %s: read %llu, compulsory %llu", padded ? "padded" : "dense",
                          npu_conv_kernel_name(k), npu_conv_dataflow_name(df),
                          (unsigned long long)r.dram_rd_bytes, (unsigned long long)r.compulsory_rd_bytes);
                /* dW stores its taps in groups as passes finish them (conv_dw.c dw_stores): at
                 * BEAT_WORDS > 1 a tap of F rows (15 x 3 words here) ends inside a beat and both
                 * groups write it, a beat per cut (the plan counts each: conv_bytes.c) */
                uint64_t wslack = k == NPU_CONV_DW && p.DB > p.B ? (uint64_t)(p.T - 1) * p.DB : 0;
                cr_assert(r.dram_wr_bytes >= r.compulsory_wr_bytes && r.dram_wr_bytes <= r.compulsory_wr_bytes + wslack,
                          "%s %s %s: written %llu, compulsory %llu", padded ? "padded" : "dense",
                          npu_conv_kernel_name(k), npu_conv_dataflow_name(df), (unsigned long long)r.dram_wr_bytes,
                          (unsigned long long)r.compulsory_wr_bytes);
                /* three-row bands: X halo rows (fwd) / dY halo rows (dX) read again, writes unchanged */
                uint64_t rd_one = r.dram_rd_bytes;
                conv_rtl(&cfg, &c, k, df, &o3, rtl_seed(78), 10, &r);
                /* dense (and padded at BEAT_WORDS > 1: a 7-pixel row of 3-word pixels is 21 words):
                 * the band tiles' STOREs meet inside a beat, at most one beat more per band */
                cr_assert(r.dram_wr_bytes >= r.compulsory_wr_bytes &&
                              r.dram_wr_bytes <= r.compulsory_wr_bytes + wslack + (padded && p.DB == p.B ? 0 : (uint64_t)c.H * p.DB),
                          "%s %s %s: bands written %llu, compulsory %llu", padded ? "padded" : "dense",
                          npu_conv_kernel_name(k), npu_conv_dataflow_name(df), (unsigned long long)r.dram_wr_bytes,
                          (unsigned long long)r.compulsory_wr_bytes);
                if (k != NPU_CONV_DW)
                    /* more than any one-band read may (word = beat), more than the one band read
                     * (wider beats: the one band's slack already covers the halo rows' bytes) */
                    cr_assert_gt(r.dram_rd_bytes, p.DB == p.B ? r.compulsory_rd_bytes + slack : rd_one,
                                 "%s %s: bands re-load halo rows (read %llu, one band %llu)", npu_conv_kernel_name(k),
                                 npu_conv_dataflow_name(df), (unsigned long long)r.dram_rd_bytes,
                                 (unsigned long long)rd_one);
            }
}

/* Acceptance 6: at stride 1 ecoflow is never slower than zeropad (no DRAM stalls, cycles of the
 * whole programs). At s = 1 the two differ only in the padding: ecoflow skips the outer zero
 * rows and columns. The sweep's stride-1 layers and more: 1x1, p0 (dW: the same program),
 * kernels 2..7, dilation 2, depthwise, channels across several 2S-blocks. */
Test(conv, stride1_never_slower, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    static const shape_t s1[] = {
        {1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 0, 0},   {1, 7, 11, 12, 9, 3, 3, 1, 2, 2, 0, 0},
        {1, 8, 13, 13, 8, 1, 1, 1, 0, 1, 0, 0}, {1, 8, 13, 13, 8, 3, 3, 1, 0, 1, 0, 0},
        {1, 5, 15, 14, 6, 5, 5, 1, 2, 1, 0, 0}, {1, 3, 13, 11, 4, 7, 7, 1, 3, 1, 0, 0},
        {1, 16, 20, 20, 16, 3, 3, 1, 1, 1, 0, 0}, {1, 17, 9, 9, 15, 2, 2, 1, 1, 1, 0, 0},
        {1, 6, 12, 12, 6, 3, 3, 1, 1, 1, 0, 0}, /* depthwise below */
    };
    int n = (int)(sizeof s1 / sizeof s1[0]);
    for (int i = 0; i < n; i++) {
        shape_t sh = s1[i];
        npu_conv_t c = conv_layer_of(sh.b, sh.C, sh.H, sh.W, sh.F, sh.KH, sh.KW, sh.s, sh.p, sh.d);
        c.depthwise = i == n - 1;
        for (int k = NPU_CONV_DX; k <= NPU_CONV_DW; k++) {
            npu_conv_report_t z, e;
            char ls[96];
            conv_rtl(&cfg, &c, k, NPU_CONV_ZEROPAD, NULL, rtl_seed(600 + (uint64_t)i), 0, &z);
            conv_rtl(&cfg, &c, k, NPU_CONV_ECOFLOW, NULL, rtl_seed(600 + (uint64_t)i), 0, &e);
            npu_conv_str(&c, ls, sizeof ls);
            cr_expect_leq(e.cycles, z.cycles, "%s %s: ecoflow %llu cycles, zeropad %llu", ls,
                          npu_conv_kernel_name(k), (unsigned long long)e.cycles,
                          (unsigned long long)z.cycles);
        }
    }
}

/* (d) EcoFlow speedups (cycles zeropad / cycles ecoflow, whole programs: DMA, FILL, waves,
 * drains), measured without DRAM stalls (docs/conv.md §4).
 * - ResNet-50 CONV3 geometry (57x57 -> 28x28, 3x3, s2, p0), C = F = max(4S, 16): ideal 4.14 (dX)
 *   / 3.86 (dW). At least 16 channels: tiny's 4-lane words with 8 channels are bound by the
 *   program fetch on its 8 B/cycle DRAM (3.01), not by the dataflow.
 * - AlexNet CONV1-like 11x11 s4 p0, C = 3, F = max(2S, 8), 63x63 -> 14x14: the output row of 14
 *   pixels fills 14/16 of the reduction lanes like the real layer's 55 (55/64); ideal 14.3.
 * - The 47x47 -> 10x10 variant (10/16 of the lanes, cap 9.25 at small) is measured and reported
 *   only, with a regression floor: it shows the lane granularity limit.
 * - A 3x3 s1 p1 layer: ecoflow never slower.
 * Thresholds (the issue's): dX >= 3.5, dW >= 3.3, s4 dW >= 10, s1 >= 1. */
typedef struct speedup_row {
    const char *name;
    npu_conv_t c;
    int k;
    double need;  /* the threshold; 0: reported only, the floor guards it */
    double floor; /* > 0: the threshold is not met yet (issue 5 note, docs/conv.md §4):
                     the row is measured and printed as OPEN, and only this regression floor
                     (just under today's measurement at that config) is asserted */
} speedup_row_t;

static double speedup(const npu_cfg_t *cfg, const speedup_row_t *row, char *line, size_t n)
{
    npu_conv_report_t z, e;
    conv_rtl(cfg, &row->c, row->k, NPU_CONV_ZEROPAD, NULL, rtl_seed(5), 0, &z);
    conv_rtl(cfg, &row->c, row->k, NPU_CONV_ECOFLOW, NULL, rtl_seed(6), 0, &e);
    double r = (double)z.cycles / (double)e.cycles;
    double ideal = (double)z.expect.total / (double)e.expect.total;
    snprintf(line, n,
             "%-26s %s  zeropad %8llu cycles (busy %7llu, %5d units)  ecoflow %8llu cycles (busy %7llu)  "
             "speedup %5.2f  (MACs %.2f, %s %.2f)",
             row->name, npu_conv_kernel_name(row->k), (unsigned long long)z.cycles,
             (unsigned long long)z.exec_busy, z.bands, (unsigned long long)e.cycles,
             (unsigned long long)e.exec_busy, r, ideal, row->need > 0 ? "need" : "reported, floor",
             row->need > 0 ? row->need : row->floor);
    return r;
}

Test(conv, speedup_table, .timeout = 1800)
{
    npu_cfg_t cfg = rtl_cfg();
    int ch = 4 * cfg.s > 16 ? 4 * cfg.s : 16;
    int f4 = 2 * cfg.s > 8 ? 2 * cfg.s : 8;
    speedup_row_t rows[] = {
        {"ResNet-50 CONV3 57->28 s2", conv_layer_of(1, ch, 57, 57, ch, 3, 3, 2, 0, 1), NPU_CONV_DX, 3.5, 0},
        {"ResNet-50 CONV3 57->28 s2", conv_layer_of(1, ch, 57, 57, ch, 3, 3, 2, 0, 1), NPU_CONV_DW, 3.3, 0},
        {"AlexNet CONV1-like 63->14 s4", conv_layer_of(1, 3, 63, 63, f4, 11, 11, 4, 0, 1), NPU_CONV_DW, 10.0, 0},
        /* reported: 8.44 tiny, 8.71 small, 8.37 medium (docs/conv.md §4) */
        {"AlexNet 47->10 s4 (lanes)", conv_layer_of(1, 3, 47, 47, 2 * cfg.s, 11, 11, 4, 0, 1), NPU_CONV_DW, 0,
         cfg.s <= 2 ? 8.3 : cfg.s >= 16 ? 8.2 : 8.6},
        {"3x3 s1 p1 29x29", conv_layer_of(1, ch, 29, 29, ch, 3, 3, 1, 1, 1), NPU_CONV_DX, 1.0, 0},
        {"3x3 s1 p1 29x29", conv_layer_of(1, ch, 29, 29, ch, 3, 3, 1, 1, 1), NPU_CONV_DW, 1.0, 0},
    };
    enum { NROWS = sizeof rows / sizeof rows[0] };
    char lines[NROWS][320];
    double got[NROWS];
    int bad = 0;
    for (int i = 0; i < NROWS; i++) {
        got[i] = speedup(&cfg, &rows[i], lines[i], sizeof lines[i]);
        bad = got[i] < rows[i].need;
        cr_log_info("speedup (%s): %s%s", cfg.name, lines[i],
                    bad && rows[i].floor > 0 ? "  OPEN: below the issue's threshold" : "");
    }
    for (int i = 0; i < NROWS; i++) {
        if (rows[i].floor > 0)
            cr_expect_geq(got[i], rows[i].floor, "speedup regressed below today's floor %.2f: %s",
                          rows[i].floor, lines[i]);
        else
            cr_expect_geq(got[i], rows[i].need, "speedup below the issue's threshold: %s", lines[i]);
    }
}
