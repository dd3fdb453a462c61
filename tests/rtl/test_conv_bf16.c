/*
 * test_conv_bf16.c - convolutions in bf16 on the Verilated NPU (issue 15; docs/conv.md "bf16",
 * docs/datapath.md section 6): every result compared as a 32-bit pattern with the order-matched
 * golden (ref/conv_golden_bf16.h), each output summed in the program's order
 * (compile/conv/conv_order.h), with random DRAM stalls; counters checked by the run and here.
 *   - 200 random layers per config (four parts of 50): fwd / dX / dW, zeropad and ecoflow, kernels
 *     1-3, strides 1-2, padding, dilation 2 now and then, channels not multiples of 2S, batch 1-3,
 *     depthwise now and then, random bands and block groups, stalls 0-25 %; part d adds layers
 *     that split (fwd channel and dX filter reductions through DRAIN acc, dW output ranges).
 *     Each part also asserts that the comparison sees the order: the golden summed in the
 *     reversed wave order differs from the program's order on some outputs (so it differs from
 *     the NPU's, which matched the program's order bit for bit);
 *   - special values through each kernel: the bf16_specials.h table, one output each, with
 *     hand-derived results; a 3x3 layer seeded with +-0, +-Inf, NaNs, denormals and 2^127 under
 *     every kernel and dataflow against the golden, with hand-stated NaN / Inf claims (NaN
 *     propagates through every window that reads it; padding and Z's zeros meet an Inf weight as
 *     0 x Inf = NaN in fwd and zeropad dX, never in ecoflow dX).
 * At an int16 configuration the suite has nothing to run (test_conv.c covers int16).
 * NPU_SEED changes the seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_split.h"
#include "run/conv_bf16.h"
#include "run/conv_run.h"
#include "../unit/conv_test_layer.h"
#include "bf16_specials.h"
#include "rtl_common.h"

#define BF16_INF 0x7F80
#define FP32_NAN 0x7FC00000u

static int16_t pat(uint16_t v) { return (int16_t)(v >= 0x8000u ? (int)v - 0x10000 : (int)v); }
static int is_nan(int32_t v) { return ((uint32_t)v & 0x7FFFFFFFu) > 0x7F800000u; }
static int is_inf(int32_t v) { return ((uint32_t)v & 0x7FFFFFFFu) == 0x7F800000u; }

/* A wrong order: the program's wave list reversed (one OBUF sum) - the comparison must see it. */
static size_t reversed_waves(void *ctx, const int o[4], npu_cwave_t *w, size_t max)
{
    size_t n = npu_conv_plan_waves(ctx, o, w, max);
    for (size_t i = 0; n <= max && i < n / 2; i++) {
        npu_cwave_t t = w[i];
        w[i] = w[n - 1 - i];
        w[n - 1 - i] = t;
    }
    for (size_t i = 0; n <= max && i < n; i++)
        w[i].start = i ? NPU_CW_ADD : NPU_CW_WRITE;
    return n;
}

/* Outputs where the golden in reversed order differs from the golden in the program's order. */
static size_t order_visible(const npu_conv_split_t *sp, uint64_t seed)
{
    const npu_conv_t *c = &sp->whole.c;
    size_t nx = (size_t)c->batch * (size_t)c->H * (size_t)c->W * (size_t)c->C;
    size_t nd = (size_t)c->batch * (size_t)sp->whole.OH * (size_t)sp->whole.OW * (size_t)c->F;
    size_t nw = (size_t)sp->whole.T * (size_t)(c->depthwise ? 1 : c->F) * (size_t)c->C, diff = 0;
    int rows, cols;
    npu_conv_out_shape(c, sp->whole.kernel, &rows, &cols);
    size_t no = (size_t)rows * (size_t)cols;
    int16_t *X = malloc(nx * 2), *Wt = malloc(nw * 2), *dY = malloc(nd * 2);
    int32_t *a = malloc(no * 4), *b = malloc(no * 4);
    npu_conv_order_t ox = {sp, NULL, 0, NULL, 0};
    cr_assert(X && Wt && dY && a && b);
    npu_conv_operands_bf16(c, seed, X, Wt, dY);
    cr_assert_eq(npu_conv_golden_plan_bf16(sp, X, Wt, dY, a), 0);
    cr_assert_eq(npu_conv_golden_bf16(c, sp->whole.kernel, sp->whole.dataflow == NPU_CONV_ZEROPAD, X, Wt, dY, b,
                                      reversed_waves, &ox), 0);
    for (size_t i = 0; i < no; i++)
        diff += a[i] != b[i];
    free(ox.buf);
    free(X);
    free(Wt);
    free(dY);
    free(a);
    free(b);
    return diff;
}

/* One kernel on a fresh model: PASS (bit-exact, counters), MACs and DRAM bytes as planned. */
static void conv_check(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, const npu_conv_plan_opts_t *o,
                       uint64_t seed, unsigned stall, npu_conv_io_t *io, uint64_t replay)
{
    npu_conv_report_t r;
    char ls[96];
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    int rc = io ? npu_conv_run_io(cfg, s, c, k, df, seed, 20000000, io, &r)
                : npu_conv_run_opts(cfg, s, c, k, df, o, seed, 20000000, &r);
    npu_sim_close(s);
    npu_conv_str(c, ls, sizeof ls);
    cr_assert_eq(rc, NPU_GEMM_PASS,
                 "%s %s %s seed %llu stall %u%% (max band rows %d, blocks %d): %s (%s)\n"
                 "  replay: NPU_SEED=%llu build/%s/test_rtl --filter 'conv_bf16/*'",
                 ls, npu_conv_kernel_name(k), npu_conv_dataflow_name(df), (unsigned long long)seed, stall,
                 o ? o->max_band_rows : 0, o ? o->max_blocks : 0, npu_gemm_rc_name(rc), r.msg, (unsigned long long)replay, cfg->name);
    cr_assert_eq(r.macs, c->depthwise ? r.macs : r.expect.total, "%s", ls);
    if (!io)
        cr_assert_eq(r.macs_zero, r.expect.zero, "%s: macs_zero %llu, formula %llu", ls,
                     (unsigned long long)r.macs_zero, (unsigned long long)r.expect.zero);
    cr_assert_eq(r.dram_rd_bytes, r.plan_rd_bytes, "%s: DRAM read %llu, plan %llu", ls,
                 (unsigned long long)r.dram_rd_bytes, (unsigned long long)r.plan_rd_bytes);
    cr_assert_eq(r.dram_wr_bytes, r.plan_wr_bytes, "%s: DRAM written %llu, plan %llu", ls,
                 (unsigned long long)r.dram_wr_bytes, (unsigned long long)r.plan_wr_bytes);
}

static int draw(uint64_t *x, int n) { return (int)(rtl_rand(x) % (uint64_t)n); }

/* A random small layer: channels up to 2.5 blocks of 2S lanes (S = 2) or 1.5 (S >= 8: the bf16
 * model simulates slowly), kernel 1-3 (rectangular now and then), stride 1-2, padding below the
 * kernel, dilation 2 in one of six, batch 1-3, depthwise in one of eight. */
static npu_conv_t random_layer(const npu_cfg_t *cfg, uint64_t *x)
{
    int L = 2 * cfg->s, cmax = cfg->s <= 2 ? 5 * L / 2 : 3 * L / 2;
    int KH = 1 + draw(x, 3), KW = draw(x, 4) ? KH : 1 + draw(x, 3), d = draw(x, 6) ? 1 : 2;
    int s = 1 + draw(x, 2), p = draw(x, KH < KW ? KH : KW);
    int H = (KH - 1) * d + 1 + draw(x, 7), W = (KW - 1) * d + 1 + draw(x, 8);
    npu_conv_t c = conv_layer_of(1 + draw(x, 3), 1 + draw(x, cmax), H, W, 1 + draw(x, cmax), KH, KW, s, p, d);
    if (!draw(x, 8)) {
        c.depthwise = 1;
        c.F = c.C;
    }
    return c;
}

/* count random layers (those that plan), the kernel rotating, a dataflow each; returns how many
 * showed the order (order_visible > 0). */
static int random_part(int part, int count)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(7000 + (uint64_t)part), x = seed * 2654435761u + 1;
    int visible = 0;
    for (int i = 0; i < count;) {
        npu_conv_t c = random_layer(&cfg, &x);
        int k = (i + part) % 3, df = draw(&x, 2);
        npu_conv_plan_opts_t o = {.max_band_rows = draw(&x, 3),
            .max_blocks = draw(&x, 3) ? 0 : 1,
            .padded = draw(&x, 2)};
        npu_conv_split_t sp;
        char msg[256];
        unsigned stall = (unsigned)draw(&x, 26);
        uint64_t sd = seed + 100 * (uint64_t)i;
        if (npu_conv_split(&cfg, &c, k, df, &o, &sp, msg, sizeof msg) != 0)
            continue; /* does not plan here (an output row longer than an OBUF half) */
        conv_check(&cfg, &c, k, df, &o, sd, stall, NULL, seed);
        visible += order_visible(&sp, sd) > 0;
        npu_conv_split_free(&sp);
        i++;
    }
    return visible;
}

static void random_suite(int part, int count)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    int v = random_part(part, count);
    cr_log_info("conv_bf16 part %d: %d of %d layers have outputs whose reversed order differs", part, v, count);
    cr_assert_gt(v, count / 4, "only %d of %d layers show the summation order", v, count);
}

Test(conv_bf16, random_a, .timeout = 900) { random_suite(0, 50); }
Test(conv_bf16, random_b, .timeout = 900) { random_suite(1, 50); }
Test(conv_bf16, random_c, .timeout = 900) { random_suite(2, 50); }

/* Part d: 47 random layers and three that split (C = F = 32S, 3x3 over 3 x 8: the weights exceed
 * the SPM): fwd (channel ranges added by DRAIN acc), dX ecoflow and zeropad (filter ranges). */
Test(conv_bf16, random_d_split, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    int v = random_part(3, 47), k[3] = {NPU_CONV_FWD, NPU_CONV_DX, NPU_CONV_DX}, df[3] = {0, 1, 0};
    npu_conv_t c = conv_layer_of(1, 32 * cfg.s, 3, 8, 32 * cfg.s, 3, 3, 1, 0, 1);
    for (int i = 0; i < 3; i++) {
        npu_conv_split_t sp;
        char msg[256];
        uint64_t sd = rtl_seed(7900 + (uint64_t)i);
        cr_assert_eq(npu_conv_split(&cfg, &c, k[i], df[i], NULL, &sp, msg, sizeof msg), 0, "%s", msg);
        cr_assert_gt(sp.parts, 1, "the split layer planned whole");
        conv_check(&cfg, &c, k[i], df[i], NULL, sd, 10 + 5 * (unsigned)i, NULL, sd);
        v += order_visible(&sp, sd) > 0;
        npu_conv_split_free(&sp);
    }
    cr_log_info("conv_bf16 part 3: %d of 50 layers have outputs whose reversed order differs", v);
    cr_assert_gt(v, 50 / 4);
}

/* Rows longer than an OBUF half with padding, in column ranges (conv_split.h): fwd p1, dX
 * ecoflow s2 p1 and zeropad p0 (the edge ranges pad on their own side only), against the golden
 * summed in the order of the parts (npu_conv_waves over the column ranges). */
Test(conv_bf16, column_ranges, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    int W = cfg.obuf_rows + 24, k[3] = {NPU_CONV_FWD, NPU_CONV_DX, NPU_CONV_DX}, df[3] = {0, 1, 0};
    npu_conv_t c[3] = {conv_layer_of(1, 2 * cfg.s + 3, 3, W, 5, 3, 3, 1, 1, 1),
                       conv_layer_of(1, 3, 4, 2 * W + 1, 2 * cfg.s + 3, 3, 3, 2, 1, 1),
                       conv_layer_of(1, 3, 4, W, 2 * cfg.s + 3, 3, 3, 1, 0, 1)};
    for (int i = 0; i < 3; i++) {
        npu_conv_split_t sp;
        char msg[256];
        uint64_t sd = rtl_seed(7950 + (uint64_t)i);
        cr_assert_eq(npu_conv_split(&cfg, &c[i], k[i], df[i], NULL, &sp, msg, sizeof msg), 0, "%s", msg);
        cr_assert_gt(sp.nw, 1, "case %d: no column ranges", i);
        conv_check(&cfg, &c[i], k[i], df[i], NULL, sd, 10, NULL, sd);
        npu_conv_split_free(&sp);
    }
}

/* ---- special values --------------------------------------------------------------------------- */

/* The bf16_specials.h cases, case i in output (i, i) of one 1x1 layer per kernel, a single wave of
 * 4 lanes (X / dY / dW's pixels), every other output against the golden:
 *   fwd  X pixel i = a_i (C = 4), filter i = b_i:         Y[0][0][i][i]
 *   dX   dY pixel i = a_i (F = 4), Wt[f][i] = b_i[f]:     dX[0][0][i][i]
 *   dW   dY[0][0][ow][i] = a_i[ow], X[0][0][ow][i] = b_i[ow] (4 pixels): dW[0][0][i][i] */
static void table_kernel(const npu_cfg_t *cfg, int k, int df)
{
    enum { N = (int)(sizeof k_bf16 / sizeof k_bf16[0]) };
    npu_conv_t c = k == NPU_CONV_FWD ? conv_layer_of(1, 4, 1, N, N, 1, 1, 1, 0, 1)
                   : k == NPU_CONV_DX ? conv_layer_of(1, N, 1, N, 4, 1, 1, 1, 0, 1)
                                      : conv_layer_of(1, N, 1, 4, N, 1, 1, 1, 0, 1);
    int16_t X[N * N], Wt[N * N], dY[N * N]; /* each tensor's largest size over the three layers */
    int32_t out[N * N], gold[N * N];
    npu_conv_io_t io = {X, Wt, dY, out, gold, 0};
    memset(X, 0, sizeof X);
    memset(Wt, 0, sizeof Wt);
    memset(dY, 0, sizeof dY);
    for (int i = 0; i < N; i++)
        for (int t = 0; t < 4; t++) {
            const special_t *sp = &k_bf16[i];
            if (k == NPU_CONV_FWD) {
                X[i * 4 + t] = pat(sp->a[t]);
                Wt[i * 4 + t] = pat(sp->b[t]);
            } else if (k == NPU_CONV_DX) {
                dY[i * 4 + t] = pat(sp->a[t]);
                Wt[t * N + i] = pat(sp->b[t]);
            } else {
                dY[t * N + i] = pat(sp->a[t]);
                X[t * N + i] = pat(sp->b[t]);
            }
        }
    conv_check(cfg, &c, k, df, NULL, 11, 15, &io, 11);
    for (int i = 0; i < N; i++)
        cr_expect_eq((uint32_t)out[i * N + i], k_bf16[i].c, "%s %s, %s: 0x%08x, expected 0x%08x",
                     npu_conv_kernel_name(k), npu_conv_dataflow_name(df), k_bf16[i].what,
                     (unsigned)out[i * N + i], (unsigned)k_bf16[i].c);
}

Test(conv_bf16, special_table)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    table_kernel(&cfg, NPU_CONV_FWD, NPU_CONV_ZEROPAD);
    for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
        table_kernel(&cfg, NPU_CONV_DX, df);
        table_kernel(&cfg, NPU_CONV_DW, df);
    }
}

/* Seeded operands of layer c with one in `every` elements replaced by a special value. */
static const uint16_t k_special[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC1, 0xFF81, 0x0001, 0x8003,
                                     0x7F00, 0xFF00, 0x1C80};

typedef struct tensors {
    int16_t *X, *Wt, *dY;
    int32_t *out, *gold;
    size_t nx, nw, nd;
} tensors_t;

static void tensors_new(const npu_conv_t *c, uint64_t seed, int every, tensors_t *t)
{
    uint64_t x = seed | 1;
    size_t no = 0;
    for (int k = 0; k < 3; k++) { /* room for any kernel's output */
        int r, q;
        npu_conv_out_shape(c, k, &r, &q);
        no = (size_t)r * (size_t)q > no ? (size_t)r * (size_t)q : no;
    }
    t->nx = (size_t)c->batch * (size_t)c->H * (size_t)c->W * (size_t)c->C;
    t->nw = (size_t)c->KH * (size_t)c->KW * (size_t)(c->depthwise ? 1 : c->F) * (size_t)c->C;
    t->nd = (size_t)c->batch * (size_t)npu_conv_oh(c) * (size_t)npu_conv_ow(c) * (size_t)c->F;
    t->X = malloc(t->nx * 2);
    t->Wt = malloc(t->nw * 2);
    t->dY = malloc(t->nd * 2);
    t->out = malloc(no * 4);
    t->gold = malloc(no * 4);
    cr_assert(t->X && t->Wt && t->dY && t->out && t->gold);
    npu_conv_operands_bf16(c, seed, t->X, t->Wt, t->dY);
    int16_t *v[3] = {t->X, t->Wt, t->dY};
    size_t n[3] = {t->nx, t->nw, t->nd};
    for (int k = 0; every && k < 3; k++)
        for (size_t i = 0; i < n[k]; i++)
            if (draw(&x, every) == 0)
                v[k][i] = pat(k_special[draw(&x, (int)(sizeof k_special / sizeof k_special[0]))]);
}

static void tensors_free(tensors_t *t)
{
    free(t->X);
    free(t->Wt);
    free(t->dY);
    free(t->out);
    free(t->gold);
}

/* Kernel k of layer c on the tensors t (the result into t->out), checked as conv_check does. */
static void run_tensors(const npu_cfg_t *cfg, const npu_conv_t *c, int k, int df, uint64_t seed, tensors_t *t)
{
    npu_conv_io_t io = {t->X, t->Wt, t->dY, t->out, t->gold, 0};
    conv_check(cfg, c, k, df, NULL, seed, 20, &io, seed);
}

/* Every kernel and dataflow of a 3x3 s2 p1 layer whose operands hold +-0, +-Inf, quiet and
 * signalling NaNs of both signs, denormals, +-2^127 and 2^-70 (one in 40 elements): bit-exact
 * against the golden; the results hold NaNs, all canonical, and finite values. */
Test(conv_bf16, special_mixed, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    npu_conv_t c = conv_layer_of(2, 2 * cfg.s + 1, 7, 7, 2 * cfg.s - 1, 3, 3, 2, 1, 1);
    tensors_t t;
    tensors_new(&c, rtl_seed(8100), 40, &t);
    for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
        for (int df = NPU_CONV_ZEROPAD; df <= (k == NPU_CONV_FWD ? 0 : 1); df++) {
            int rows, cols, nan = 0, inf = 0, fin = 0;
            run_tensors(&cfg, &c, k, df, 8100 + (uint64_t)k, &t);
            npu_conv_out_shape(&c, k, &rows, &cols);
            for (int i = 0; i < rows * cols; i++) {
                nan += is_nan(t.out[i]);
                inf += is_inf(t.out[i]);
                fin += !is_nan(t.out[i]) && !is_inf(t.out[i]);
                cr_assert(!is_nan(t.out[i]) || (uint32_t)t.out[i] == FP32_NAN, "a NaN that is not canonical");
            }
            cr_expect(nan && fin, "%s %s: %d NaN, %d Inf, %d finite", npu_conv_kernel_name(k),
                      npu_conv_dataflow_name(df), nan, inf, fin);
        }
    tensors_free(&t);
}

/* Hand-stated claims on seeded finite operands with planted specials (3x3, p = 1):
 *   fwd, s = 1, X[0][2][3][1] = NaN, Wt[0][0][0][0] = +Inf: Y(oh, ow, f) is NaN when the window
 *   reads pixel (2, 3) (NaN x anything); otherwise Y(., ., 0) is NaN on the top row and the left
 *   column (tap (0, 0) reads the zero padding: +0 x Inf) and +-Inf elsewhere (a finite nonzero
 *   X x Inf, the other products finite); the other filters are finite.
 *   dX, s = 2, Wt[0][0][0][0] = +Inf: dX(ih, iw, 0) is +-Inf where tap (0, 0) meets a real dY
 *   element (ih + 1, iw + 1 even, inside dY); elsewhere zeropad multiplies Z's zero by Inf (NaN),
 *   ecoflow never does (finite); the other channels are finite. */
static void claim_fwd(const npu_cfg_t *cfg)
{
    npu_conv_t c = conv_layer_of(1, 3, 6, 7, 3, 3, 3, 1, 1, 1);
    tensors_t t;
    tensors_new(&c, 8200, 0, &t);
    t.X[(2 * 7 + 3) * 3 + 1] = pat(0xFFC1);
    t.Wt[0] = pat(BF16_INF);
    run_tensors(cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, 8200, &t);
    for (int oh = 0; oh < 6; oh++)
        for (int ow = 0; ow < 7; ow++)
            for (int f = 0; f < 3; f++) {
                int32_t v = t.out[(oh * 7 + ow) * 3 + f];
                int win = oh - 1 <= 2 && 2 <= oh + 1 && ow - 1 <= 3 && 3 <= ow + 1;
                int want = win ? 2 : f ? 0 : oh == 0 || ow == 0 ? 2 : 1; /* 0 finite, 1 Inf, 2 NaN */
                cr_expect_eq(is_nan(v) ? 2 : is_inf(v), want, "fwd Y(%d, %d, %d) = 0x%08x", oh, ow, f, (unsigned)v);
            }
    tensors_free(&t);
}

static void claim_dx(const npu_cfg_t *cfg, int df)
{
    npu_conv_t c = conv_layer_of(1, 3, 7, 7, 3, 3, 3, 2, 1, 1);
    int OH = npu_conv_oh(&c), OW = npu_conv_ow(&c);
    tensors_t t;
    tensors_new(&c, 8300, 0, &t);
    t.Wt[0] = pat(BF16_INF);
    run_tensors(cfg, &c, NPU_CONV_DX, df, 8300, &t);
    for (int ih = 0; ih < 7; ih++)
        for (int iw = 0; iw < 7; iw++)
            for (int ch = 0; ch < 3; ch++) {
                int32_t v = t.out[(ih * 7 + iw) * 3 + ch];
                int real = (ih + 1) % 2 == 0 && (iw + 1) % 2 == 0 && (ih + 1) / 2 < OH && (iw + 1) / 2 < OW;
                int want = ch ? 0 : real ? 1 : df == NPU_CONV_ZEROPAD ? 2 : 0;
                cr_expect_eq(is_nan(v) ? 2 : is_inf(v), want, "dX %s (%d, %d, %d) = 0x%08x",
                             npu_conv_dataflow_name(df), ih, iw, ch, (unsigned)v);
            }
    tensors_free(&t);
}

Test(conv_bf16, special_claims, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    if (!npu_cfg_bf16(&cfg))
        return;
    claim_fwd(&cfg);
    claim_dx(&cfg, NPU_CONV_ZEROPAD);
    claim_dx(&cfg, NPU_CONV_ECOFLOW);
}
