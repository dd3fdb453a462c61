/*
 * test_conv_golden_bf16.c - the order-matched bf16 conv golden (ref/conv_golden_bf16.h) and the
 * order it is given (compile/conv/conv_order.h), on hand-checkable cases where fp32 rounding
 * makes the order visible: p = 1, q = 2^-24 (the products 1 x 1 and 2^-12 x 2^-12):
 *   (p + q) + q = 1 (two ties to even), p + (q + q) = q + q + p = 1 + 2^-23 (exact);
 *   - a wave's chain runs in lane order, waves add in list order, and an ACC wave begins a sum
 *     that is added to the value so far (a later part's DRAIN acc);
 *   - the plan's order: fwd taps ascending; a split layer's later channel range begins with ACC;
 *     an ecoflow dX pixel no tap reaches has no wave (+0), zeropad's sums Z's zeros;
 *   - convolutions of every kernel and dataflow on the functional model at bf16 (S = 2, 8) are
 *     bit-exact against the golden in the plan's order.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_order.h"
#include "npu_funcsim.h"
#include "ref/conv_golden_bf16.h"
#include "run/conv_bf16.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "conv_test_layer.h"
#include "test_cfgs.h"

#define ONE 0x3F80   /* bf16 1 */
#define Q12 0x3980   /* bf16 2^-12: its square is 2^-24, half an ulp of 1 */
#define F_ONE 0x3F800000
#define F_ONE_ULP 0x3F800001 /* 1 + 2^-23 */

/* A hand-made wave list (ctx: n waves). */
typedef struct list { int n; npu_cwave_t w[4]; } list_t;

static size_t list_waves(void *ctx, const int o[4], npu_cwave_t *w, size_t max)
{
    const list_t *l = ctx;
    (void)o;
    for (int i = 0; i < l->n && (size_t)i < max; i++)
        w[i] = l->w[i];
    return (size_t)l->n;
}

/* fwd, one output of a 1x3 kernel over a 1x3 input, one channel: products p, q, q by tap. */
static int32_t three_taps(const list_t *l)
{
    npu_conv_t c = conv_layer_of(1, 1, 1, 3, 1, 1, 3, 1, 0, 1);
    int16_t X[3] = {ONE, Q12, Q12}, Wt[3] = {ONE, Q12, Q12};
    int32_t Y = 0;
    cr_assert_eq(npu_conv_golden_bf16(&c, NPU_CONV_FWD, 0, X, Wt, NULL, &Y, list_waves, (void *)l), 0);
    return Y;
}

Test(conv_golden_bf16, waves_add_in_list_order)
{
    list_t prog = {3, {{0, 0, 0, 1, 0, 0, NPU_CW_WRITE}, {0, 1, 0, 1, 0, 0, NPU_CW_ADD}, {0, 2, 0, 1, 0, 0, NPU_CW_ADD}}};
    list_t late = {3, {{0, 1, 0, 1, 0, 0, NPU_CW_WRITE}, {0, 2, 0, 1, 0, 0, NPU_CW_ADD}, {0, 0, 0, 1, 0, 0, NPU_CW_ADD}}};
    list_t acc = {3, {{0, 0, 0, 1, 0, 0, NPU_CW_WRITE}, {0, 1, 0, 1, 0, 0, NPU_CW_ACC}, {0, 2, 0, 1, 0, 0, NPU_CW_ADD}}};
    list_t bad = {1, {{0, 0, 0, 1, 0, 0, NPU_CW_ADD}}};
    npu_conv_t c = conv_layer_of(1, 1, 1, 3, 1, 1, 3, 1, 0, 1);
    int16_t X[3] = {ONE, Q12, Q12};
    int32_t Y;
    cr_assert_eq(three_taps(&prog), F_ONE);     /* (p + q) + q */
    cr_assert_eq(three_taps(&late), F_ONE_ULP); /* (q + q) + p */
    cr_assert_eq(three_taps(&acc), F_ONE_ULP);  /* p, then DRAIN acc of the sum q + q */
    cr_assert_eq(npu_conv_golden_bf16(&c, NPU_CONV_FWD, 0, X, X, NULL, &Y, list_waves, &bad), -1);
}

/* One wave over three channels sums them top lane first; two waves split the same lanes. */
Test(conv_golden_bf16, chain_in_lane_order)
{
    npu_conv_t c = conv_layer_of(1, 3, 1, 1, 1, 1, 1, 1, 0, 1);
    int16_t X[3] = {ONE, Q12, Q12}, Wt[3] = {ONE, Q12, Q12};
    list_t one = {1, {{0, 0, 0, 3, 0, 0, NPU_CW_WRITE}}};
    list_t two = {2, {{0, 0, 1, 3, 0, 0, NPU_CW_WRITE}, {0, 0, 0, 1, 0, 0, NPU_CW_ADD}}};
    int32_t Y;
    cr_assert_eq(npu_conv_golden_bf16(&c, NPU_CONV_FWD, 0, X, Wt, NULL, &Y, list_waves, &one), 0);
    cr_assert_eq(Y, F_ONE);
    cr_assert_eq(npu_conv_golden_bf16(&c, NPU_CONV_FWD, 0, X, Wt, NULL, &Y, list_waves, &two), 0);
    cr_assert_eq(Y, F_ONE_ULP);
}

/* The plan's order for the 1x3 layer: taps ascending, one wave each: (p + q) + q = 1. */
Test(conv_golden_bf16, plan_order_fwd_taps_ascending)
{
    npu_cfg_t cfg = bf16_cfg(2);
    npu_conv_t c = conv_layer_of(1, 1, 1, 3, 1, 1, 3, 1, 0, 1);
    npu_conv_split_t sp;
    npu_conv_wave_t w[8];
    char msg[256];
    int o[4] = {0, 0, 0, 0};
    int16_t X[3] = {ONE, Q12, Q12}, Wt[3] = {ONE, Q12, Q12};
    int32_t Y;
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, &sp, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(npu_conv_waves(&sp, o, w, 8), 3);
    for (int t = 0; t < 3; t++) {
        cr_assert_eq(w[t].kw, t);
        cr_assert_eq(w[t].r0, 0);
        cr_assert_eq(w[t].r1, 1);
        cr_assert_eq(w[t].start, t ? NPU_CONV_WAVE_ADD : NPU_CONV_WAVE_WRITE);
    }
    cr_assert_eq(npu_conv_golden_plan_bf16(&sp, X, Wt, NULL, &Y), 0);
    cr_assert_eq(Y, F_ONE);
    npu_conv_split_free(&sp);
}

/* A split fwd layer (tiny: the weights of 64 x 64 x 3x3 exceed the SPM): channel ranges, each a
 * new OBUF sum, the later one added by DRAIN acc; the waves cover the 16 c-blocks per tap. */
Test(conv_golden_bf16, split_reduction_begins_with_acc)
{
    npu_cfg_t cfg = bf16_cfg(2);
    npu_conv_t c = conv_layer_of(1, 64, 3, 8, 64, 3, 3, 1, 0, 1);
    npu_conv_split_t sp;
    npu_conv_wave_t w[400];
    char msg[256];
    int o[4] = {0, 0, 5, 63}, writes = 0, accs = 0;
    cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_FWD, NPU_CONV_ZEROPAD, NULL, &sp, msg, sizeof msg), 0, "%s", msg);
    cr_assert_gt(sp.nc, 1, "no channel ranges");
    size_t n = npu_conv_waves(&sp, o, w, 400);
    cr_assert_eq(n, 9u * 16u);
    cr_assert_eq(w[0].start, NPU_CONV_WAVE_WRITE);
    for (size_t i = 0; i < n; i++) {
        writes += w[i].start == NPU_CONV_WAVE_WRITE;
        accs += w[i].start == NPU_CONV_WAVE_ACC;
    }
    cr_assert_eq(writes, 1);
    cr_assert_eq(accs, sp.nc - 1);
    npu_conv_split_free(&sp);
}

/* 1x1 stride 2 dX: pixel (1, 1) meets no dY element. ecoflow has no wave there (+0, the tile's
 * FILL); zeropad sums a wave of Z's zeros (+0 too); pixel (0, 0) gets one real wave in both. */
Test(conv_golden_bf16, dx_pixel_no_tap_reaches)
{
    npu_cfg_t cfg = bf16_cfg(2);
    npu_conv_t c = conv_layer_of(1, 1, 3, 3, 1, 1, 1, 2, 0, 1);
    int o1[4] = {0, 1, 1, 0}, o0[4] = {0, 0, 0, 0};
    npu_conv_wave_t w[4];
    char msg[256];
    for (int df = NPU_CONV_ZEROPAD; df <= NPU_CONV_ECOFLOW; df++) {
        npu_conv_split_t sp;
        cr_assert_eq(npu_conv_split(&cfg, &c, NPU_CONV_DX, df, NULL, &sp, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(npu_conv_waves(&sp, o1, w, 4), df == NPU_CONV_ZEROPAD ? 1u : 0u);
        cr_assert_eq(npu_conv_waves(&sp, o0, w, 4), 1u);
        npu_conv_split_free(&sp);
    }
}

/* Every kernel and dataflow on the functional model, bf16, S = 2 and 8: PASS against the golden
 * in the plan's order (conv_run). */
Test(conv_golden_bf16, fake_convs_bit_exact, .timeout = 300)
{
    static const int L[][10] = {
        /* b, C, H, W, F, KH, KW, s, p, d */
        {2, 5, 7, 6, 3, 3, 3, 1, 1, 1}, {1, 9, 9, 8, 7, 3, 3, 2, 1, 1}, {3, 3, 6, 7, 11, 2, 3, 2, 0, 1},
        {1, 6, 8, 8, 5, 3, 3, 1, 2, 2},
    };
    for (int s = 2; s <= 8; s += 6) {
        npu_cfg_t cfg = bf16_cfg(s);
        for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
            const int *v = L[i];
            npu_conv_t c = conv_layer_of(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
            for (int k = NPU_CONV_FWD; k <= NPU_CONV_DW; k++)
                for (int df = NPU_CONV_ZEROPAD; df <= (k == NPU_CONV_FWD ? 0 : 1); df++) {
                    npu_dram_timing_t t = {(double)cfg.dram_bw, (unsigned)cfg.dram_latency,
                                           (unsigned)cfg.dram_burst_cost, 20, 3 + i};
                    npu_conv_report_t r;
                    npu_funcsim_config(&cfg);
                    npu_sim_t *sim = npu_sim_open(&t);
                    cr_assert_not_null(sim);
                    int rc = npu_conv_run(&cfg, sim, &c, k, df, 5 + i, 100000000, &r);
                    npu_sim_close(sim);
                    cr_assert_eq(rc, NPU_GEMM_PASS, "S %d layer %zu %s %s: %s", s, i, npu_conv_kernel_name(k),
                                 npu_conv_dataflow_name(df), r.msg);
                }
        }
    }
}
