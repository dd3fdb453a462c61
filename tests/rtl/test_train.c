/*
 * test_train.c - training steps on the Verilated NPU (sw/run/train_run.h): forward, dX = dY W^T and
 * dW = X^T dY of every layer, bit-exact against golden, transposes done by the DMA, with random
 * DRAM stalls, under the mapping policies. The issue's layer shapes (M, K, N) are the second
 * layer of a two-layer MLP (the first layer has no dX).
 *
 * bf16_fused_orders runs in every TEST_CONFIGS entry (the Makefile's bf16 filters pick the
 * train/bf16_* tests): the fused orders on small odd shapes, at a bf16 configuration each
 * gradient bit-exact against the golden summed in its program's order (ref/bwd_golden_bf16.h).
 */
#include <string.h>

#include "rtl_common.h"
#include "run/train_run.h"

static void train_check(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int policy,
                        npu_order_t order, uint64_t seed, unsigned stall)
{
    npu_mlp_t mlp;
    memset(&mlp, 0, sizeof mlp);
    mlp.batch = batch;
    mlp.layers = layers;
    for (int i = 0; i <= layers; i++)
        mlp.dims[i] = dims[i];
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    int rc = npu_train_step(cfg, s, &mlp, order, policy, seed, 50000000, r);
    char dl[128] = "";
    for (int i = 0, o = 0; i <= layers && o < (int)sizeof dl - 8; i++)
        o += snprintf(dl + o, sizeof dl - (size_t)o, i ? ",%d" : "%d", dims[i]);
    cr_assert_eq(rc, 0, "train step MLP %s batch %d policy %d order %s: %s\n  replay: build/%s/npu "
                 "train --layers %s --batch %d --seed %llu --stall-pct %u --policy %s --order %s",
                 dl, batch, policy, npu_order_name(order), r->msg, cfg->name, dl, batch,
                 (unsigned long long)seed, stall,
                 policy == NPU_EMIT_FLEXSA ? "flexsa" : policy == NPU_EMIT_1G4C ? "1g4c" : "1g1c",
                 npu_order_name(order));
    /* MAC counters: fwd M*N*K; backward exactly 2*M*N*K (M*N*K for the first layer: no dX),
     * whatever the order (a fused program counts both gradients in its dx pass) */
    for (int i = 0; i < layers; i++) {
        const npu_train_layer_result_t *L = &r->layer[i];
        uint64_t mnk = (uint64_t)L->shape.M * (uint64_t)L->shape.N * (uint64_t)L->shape.K;
        cr_assert_eq(L->macs[NPU_PASS_FWD], mnk);
        cr_assert_eq(L->macs[NPU_PASS_DX] + L->macs[NPU_PASS_DW], (i ? 2u : 1u) * mnk,
                     "layer %d order %s", i, npu_order_name(L->lower.order));
        cr_assert_eq(L->lower.form != NPU_LOWER_GEMMS, i > 0 && order != NPU_ORDER_SEQ); /* fused */
        if (L->lower.form == NPU_LOWER_GEMMS) /* sequential: dY read by dX and again by dW (more if a GEMM re-reads it) */
            cr_assert_geq(L->dy_rd_bytes, (i ? 2u : 1u) * L->dy_compulsory, "layer %d", i);
        else           /* fused: every dY tile loaded at least once */
            cr_assert_geq(L->dy_tile_loads, L->dy_tiles, "layer %d", i);
        cr_assert_gt(L->wr_bytes[NPU_TAG_DW], 0u);
        cr_assert_eq(L->wr_bytes[NPU_TAG_DX] > 0, i > 0);
    }
    free(r);
    npu_sim_close(s);
}

/* The issue's shapes (M, K, N) under every order, 1G1C and FlexSA alternating. */
static void issue_shapes(npu_order_t order)
{
    npu_cfg_t cfg = rtl_cfg();
    const int shapes[4][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {45, 90, 135}};
    for (int i = 0; i < 4; i++) {
        if (cfg.s <= 2 && shapes[i][1] * shapes[i][2] > 10000)
            continue; /* tiny: keep the CI tier fast (the shape runs at small) */
        int dims[3] = {7, shapes[i][1], shapes[i][2]};
        train_check(&cfg, dims, 2, shapes[i][0], i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, order,
                    rtl_seed(500 + (uint64_t)i), 10);
    }
}
Test(train, issue_shapes_seq, .timeout = 900) { issue_shapes(NPU_ORDER_SEQ); }
Test(train, issue_shapes_interleave, .timeout = 900) { issue_shapes(NPU_ORDER_INTERLEAVE); }
Test(train, issue_shapes_dxmajor, .timeout = 900) { issue_shapes(NPU_ORDER_DXMAJOR); }
Test(train, issue_shapes_dwmajor, .timeout = 900) { issue_shapes(NPU_ORDER_DWMAJOR); }
Test(train, issue_shapes_auto, .timeout = 900) { issue_shapes(NPU_ORDER_AUTO); }

/* Random layers under the fused orders (the issue asks for 100 at small: make regress runs
 * this with more seeds). */
Test(train, random_layers_fused_orders, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t x = rtl_seed(91) | 1;
    for (int t = 0; t < 12; t++) {
        int dims[3] = {1 + (int)(rtl_rand(&x) % 9), 1 + (int)(rtl_rand(&x) % (uint64_t)(10 * cfg.s)),
                       1 + (int)(rtl_rand(&x) % (uint64_t)(10 * cfg.s))};
        int batch = 1 + (int)(rtl_rand(&x) % (uint64_t)(12 * cfg.s));
        train_check(&cfg, dims, 2, batch, t & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                    (npu_order_t)(NPU_ORDER_INTERLEAVE + t % 3), rtl_seed(700 + (uint64_t)t), 10);
    }
}

/* The fused orders (interleave, dxmajor, dwmajor, auto; oracle: train_part) on a two- and a three-layer MLP
 * of odd sizes (edge tiles, several tiles per dim), 1G1C and FlexSA, 10 % stalls. */
Test(train, bf16_fused_orders, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    const int dims[2][4] = {{7, 5 * S + 3, 9 * S - 1, 0}, {5, 3 * S + 1, 4 * S, 2 * S + 3}};
    for (int o = NPU_ORDER_INTERLEAVE; o <= NPU_ORDER_AUTO; o++)
        for (int d = 0; d < 2; d++)
            train_check(&cfg, dims[d], d ? 3 : 2, d ? 6 * S + 1 : 4 * S + 3,
                        (o + d) & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, (npu_order_t)o,
                        rtl_seed(1500 + (uint64_t)(2 * o + d)), 10);
}

Test(train, random_mlps_all_policies, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t x = rtl_seed(77) | 1;
    for (int t = 0; t < 6; t++) {
        int layers = 2 + (int)(rtl_rand(&x) % 2), dims[4];
        for (int i = 0; i <= layers; i++)
            dims[i] = 1 + (int)(rtl_rand(&x) % (uint64_t)(6 * cfg.s));
        int batch = 1 + (int)(rtl_rand(&x) % (uint64_t)(8 * cfg.s));
        train_check(&cfg, dims, layers, batch, t % 3 == 0 ? NPU_EMIT_FW : t % 3 == 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_1G4C,
                    NPU_ORDER_SEQ, rtl_seed(600 + (uint64_t)t), 10);
    }
}

Test(train, host_errors)
{
    npu_mlp_t mlp;
    cr_assert_eq(npu_mlp_parse("64,32", 8, &mlp), 0);
    cr_assert_eq(mlp.layers, 1);
    cr_assert_eq(mlp.dims[1], 32);
    cr_assert_eq(npu_mlp_parse("64", 8, &mlp), -1, "one size is not a layer");
    cr_assert_eq(npu_mlp_parse("64,,32", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,32,", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,0", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,70000", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,x", 8, &mlp), -1);
    cr_assert_eq(npu_mlp_parse("64,32", 0, &mlp), -1);
    cr_assert_eq(npu_order_parse("dxmajor"), NPU_ORDER_DXMAJOR);
    cr_assert_eq(npu_order_parse("dx"), -1);
}

/* dY reuse on the RTL (issue 4 item 3), tiles of 2S: (Mt, Nt, Kt) = (32, 4, 2) with dXmajor and
 * (2, 4, 32) with dWmajor load every dY tile exactly once (dY loads = Mt * Nt, dY bytes read =
 * one read of dY), while the sequential baseline reads dY at least twice. */
static const npu_train_layer_result_t *reuse_run(const npu_cfg_t *cfg, int M, int K, int N,
                                          npu_order_t order, npu_train_result_t *r)
{
    npu_mlp_t mlp;
    npu_mlp_two_layers(&mlp, M, 3, K, N);
    mlp.tile = 2 * cfg->s;
    npu_sim_t *s = rtl_open(cfg, 5, 0, rtl_seed(31));
    int rc = npu_train_step(cfg, s, &mlp, order, NPU_EMIT_FW, rtl_seed(31), 50000000, r);
    npu_sim_close(s);
    cr_assert_eq(rc, 0, "M=%d K=%d N=%d order %s: %s", M, K, N, npu_order_name(order), r->msg);
    return &r->layer[1];
}

Test(train, dy_reuse_tiles, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int T = 2 * cfg.s;
    npu_train_result_t *r = malloc(sizeof *r);
    /* A dY tile row is T = 2S elements, one SPM word; the DMA reads the whole DRAM beat it sits
     * in, so each tile loaded once reads its bytes times the words per beat (at BEAT_WORDS = 2
     * twice: a real cost of 2S-column tiles on 64-byte beats, docs/memory.md Limitations). */
    long beat_x = (long)(npu_cfg_beat(&cfg) / npu_cfg_word(&cfg));
    cr_assert_not_null(r);
    const npu_train_layer_result_t *L = reuse_run(&cfg, 32 * T, 2 * T, 4 * T, NPU_ORDER_DXMAJOR, r);
    cr_assert_eq(L->dy_tiles, 128);
    cr_assert_eq(L->dy_tile_loads, 128, "dXmajor (32,4,2): dY tile loads %ld", L->dy_tile_loads);
    cr_assert_eq(L->dy_rd_bytes, L->dy_compulsory * beat_x, "dXmajor: dY read %ld, compulsory %ld",
                 (long)L->dy_rd_bytes, (long)L->dy_compulsory);
    L = reuse_run(&cfg, 2 * T, 32 * T, 4 * T, NPU_ORDER_DWMAJOR, r);
    cr_assert_eq(L->dy_tiles, 8);
    cr_assert_eq(L->dy_tile_loads, 8, "dWmajor (2,4,32): dY tile loads %ld", L->dy_tile_loads);
    cr_assert_eq(L->dy_rd_bytes, L->dy_compulsory * beat_x, "dWmajor: dY read %ld, compulsory %ld",
                 (long)L->dy_rd_bytes, (long)L->dy_compulsory);
    L = reuse_run(&cfg, 32 * T, 2 * T, 4 * T, NPU_ORDER_SEQ, r);
    cr_assert_geq(L->dy_rd_bytes, 2 * L->dy_compulsory); /* twice: once per pass */
    cr_log_info("dY reuse (%s): seq reads dY %.2fx", cfg.name,
                (double)L->dy_rd_bytes / (double)L->dy_compulsory);
    free(r);
}

/* The oracle runs the four concrete orders of every layer on the RTL and keeps the fastest: its
 * choice is the minimum of the cycles it measured, and every order was exact. */
Test(train, oracle_keeps_the_fastest, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int dims[4] = {5, 3 * cfg.s, 5 * cfg.s, 2 * cfg.s + 1};
    npu_mlp_t mlp;
    memset(&mlp, 0, sizeof mlp);
    mlp.batch = 6 * cfg.s;
    mlp.layers = 3;
    memcpy(mlp.dims, dims, sizeof dims);
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    npu_sim_t *s = rtl_open(&cfg, 5, 0, rtl_seed(44));
    cr_assert_eq(npu_train_step(&cfg, s, &mlp, NPU_ORDER_ORACLE, NPU_EMIT_FW, rtl_seed(44), 50000000, r),
                 0, "%s", r->msg);
    npu_sim_close(s);
    for (int i = 1; i < 3; i++) {
        const npu_train_layer_result_t *L = &r->layer[i];
        uint64_t kept = L->cycles[NPU_PASS_DX] + L->cycles[NPU_PASS_DW];
        cr_assert_eq(kept, L->order_cycles[L->lower.order], "layer %d", i);
        for (int q = NPU_ORDER_SEQ; q <= NPU_ORDER_DWMAJOR; q++) {
            cr_assert_gt(L->order_cycles[q], 0u, "layer %d order %d not run", i, q);
            cr_assert_leq(kept, L->order_cycles[q], "layer %d: kept %s but %s is faster", i,
                          npu_order_name(L->lower.order), npu_order_name((npu_order_t)q));
        }
    }
    free(r);
}
