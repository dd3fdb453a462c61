/* test_train_model.c - the tile-level training model (train_model.h), the KNN selector (knn.h)
 * and the paper-scaled layer sets / bench (layer_sets.h). The bench tests log the numbers
 * reported in docs/training.md (run: ./build/test_unit --filter 'train_bench' --verbose).  */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "model/knn.h"
#include "test_cfgs.h"
#include "model/layer_sets.h"
#include "model/train_model.h"

static npu_tmodel_hw_t edge_hw(void)
{
    npu_lset_cfg_t c;
    cr_assert_eq(npu_lset_config("edge", &c), 0);
    c.acc_bytes = 4; /* the RTL's int32 partials and gradients */
    npu_tmodel_hw_t hw;
    npu_lset_hw(&c, &hw);
    cr_assert_eq(hw.acc_bytes, 4);
    return hw;
}

static npu_tmodel_result_t eval(const npu_tmodel_hw_t *hw, long M, long K, long N, npu_order_t o,
                            npu_part_t p, int P)
{
    npu_train_shape_t L = {M, K, N, 1};
    npu_tmodel_opts_t op;
    memset(&op, 0, sizeof op);
    op.order = o;
    op.part = p;
    op.P = P;
    npu_tmodel_result_t r;
    cr_assert_eq(npu_tmodel_layer_eval(hw, &L, &op, &r), 0, "(%ld,%ld,%ld) %s", M, K, N,
                 npu_order_name(o));
    return r;
}

/* Everything fits (T7 in bytes): every order moves the compulsory bytes. */
Test(train_model, everything_fits_compulsory)
{
    npu_tmodel_hw_t hw = edge_hw();
    const long M = 96, K = 64, N = 80;
    uint64_t comp = (uint64_t)(M * K + K * N + M * N) * 2 + (uint64_t)(M * K + K * N) * 4;
    for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_ORACLE; o++) {
        npu_tmodel_result_t r = eval(&hw, M, K, N, (npu_order_t)o, NPU_PART_NONE, 1);
        cr_assert_eq(r.dram_bytes, comp, "%s: %lu", npu_order_name((npu_order_t)o),
                     (unsigned long)r.dram_bytes);
        cr_assert_eq(r.dy_loads, r.dy_compulsory);
        cr_assert_eq(r.macs, 2u * M * N * K);
        cr_assert_geq(r.bwd_cycles, r.compute_cycles);
        cr_assert(r.util > 0 && r.util <= 1.0);
    }
}

/* M-dominant layer: dxmajor reads dY once (compulsory) and beats the baseline's dY traffic. */
Test(train_model, dxmajor_m_dominant)
{
    npu_tmodel_hw_t hw = edge_hw();
    npu_tmodel_result_t x = eval(&hw, 8192, 320, 64, NPU_ORDER_DXMAJOR, NPU_PART_NONE, 1);
    npu_tmodel_result_t b = eval(&hw, 8192, 320, 64, NPU_ORDER_SEQ, NPU_PART_NONE, 1);
    cr_assert_eq(x.rd[NPU_TENSOR_DY], 8192u * 64 * 2);
    cr_assert_gt(b.rd[NPU_TENSOR_DY], x.rd[NPU_TENSOR_DY]);
    cr_assert_lt(x.cycles, b.cycles);
    cr_assert_eq(npu_tmodel_layer_eval(&hw, &(npu_train_shape_t){8192, 320, 64, 1},
                                   &(npu_tmodel_opts_t){.order = NPU_ORDER_AUTO, .P = 1}, &x), 0);
    cr_assert_eq(x.order, NPU_ORDER_DXMAJOR);
    cr_log_info("dxmajor (8192,320,64): %.0f cycles, dY %lu B; seq %.0f cycles, dY %lu B",
                x.cycles, (unsigned long)x.rd[NPU_TENSOR_DY], b.cycles,
                (unsigned long)b.rd[NPU_TENSOR_DY]);
}

/* The oracle is never slower than each of its three orders; AUTO matches one of them. */
Test(train_model, oracle_is_min)
{
    npu_tmodel_hw_t hw = edge_hw();
    static const long sh[][3] = {{1024, 256, 128}, {16, 2048, 256}, {256, 256, 256}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        double best = -1;
        for (int o = NPU_ORDER_INTERLEAVE; o <= NPU_ORDER_DWMAJOR; o++) {
            double c = eval(&hw, sh[i][0], sh[i][1], sh[i][2], (npu_order_t)o, NPU_PART_NONE, 1)
                           .cycles;
            if (best < 0 || c < best)
                best = c;
        }
        npu_tmodel_result_t r = eval(&hw, sh[i][0], sh[i][1], sh[i][2], NPU_ORDER_ORACLE,
                                 NPU_PART_NONE, 1);
        cr_assert_float_eq(r.cycles - r.fwd_cycles, best - r.fwd_cycles, 1e-6);
    }
}

/* Partitions: K on 4 cores reads dY once (multicast); M on one core pays the dW accumulation
 * through DRAM; best_partition is never slower than the schemes it compares. */
Test(train_model, partitions)
{
    npu_tmodel_hw_t hw = edge_hw();
    hw.cores = 4;
    npu_tmodel_result_t k = eval(&hw, 512, 512, 256, NPU_ORDER_AUTO, NPU_PART_K, 4);
    cr_log_info("K split on 4 cores: dY %lu B (tensor %u B), dY loads %ld / compulsory %ld",
                (unsigned long)k.rd[NPU_TENSOR_DY], 512u * 256 * 2, k.dy_loads, k.dy_compulsory);
    /* the shared dY is fetched once for the four cores (multicast): bytes = loads / 4 */
    cr_assert_geq(k.dy_loads, k.dy_compulsory);
    cr_assert_leq(k.rd[NPU_TENSOR_DY], (uint64_t)k.dy_loads / 4 * 16 * 64 * 2);
    cr_assert_eq(k.accum_bytes, 0);
    hw.cores = 1;
    npu_tmodel_result_t m = eval(&hw, 512, 512, 256, NPU_ORDER_AUTO, NPU_PART_M, 2);
    cr_assert_eq(m.accum_bytes, 2u * 512 * 256 * 4);
    int P = 0;
    npu_tmodel_result_t br;
    int sc = npu_tmodel_best_partition(&hw, &(npu_train_shape_t){512, 512, 256, 1}, NPU_ORDER_AUTO, &P, &br);
    cr_assert(sc >= NPU_PART_NONE && sc <= NPU_PART_K);
    npu_tmodel_result_t none = eval(&hw, 512, 512, 256, NPU_ORDER_AUTO, NPU_PART_NONE, 1);
    cr_assert_leq(br.cycles, none.cycles);
    cr_assert_leq(br.cycles, m.cycles);
}

/* ------------------------------------------------------------------ KNN */

Test(knn, log2_and_predict)
{
    cr_assert_float_eq(npu_log2(1024.0), 10.0, 1e-12);
    cr_assert_float_eq(npu_log2(3.0), 1.584962500721156, 1e-12);
    cr_assert_float_eq(npu_log2(0.375), -1.415037499278844, 1e-12);
    /* two clusters: M-dominant -> label 1, K-dominant -> label 3 */
    npu_knn_sample_t s[40];
    uint64_t seed = 42;
    for (int i = 0; i < 40; i++) {
        long a = 256 + (long)(test_rand(&seed) % 4096), b = 16 + (long)(test_rand(&seed) % 64);
        if (i % 2 == 0) {
            npu_knn_features(a * 8, b, b, s[i].f);
            s[i].label = 1;
        } else {
            npu_knn_features(b, a * 8, b, s[i].f);
            s[i].label = 3;
        }
    }
    double f[NPU_KNN_FEATURES];
    npu_knn_features(20000, 32, 32, f);
    for (int k = 1; k <= 5; k += 2)
        cr_assert_eq(npu_knn_predict(s, 40, f, k), 1);
    npu_knn_features(32, 20000, 32, f);
    cr_assert_eq(npu_knn_predict(s, 40, f, 3), 3);
    double a1 = npu_knn_accuracy(s, 40, 3, 1000, 0.8, 7);
    cr_assert_float_eq(a1, 1.0, 1e-12);
    cr_assert_float_eq(npu_knn_accuracy(s, 40, 1, 200, 0.8, 9), npu_knn_accuracy(s, 40, 1, 200, 0.8, 9), 0);
    int pred[40];
    cr_assert_eq(npu_knn_loo(s, 40, 1, pred), 0);
    for (int i = 0; i < 40; i++)
        cr_assert_eq(pred[i], s[i].label);
    cr_assert_eq(npu_knn_predict(s, 0, f, 3), -1);
}

/* ------------------------------------------------------------------ layer sets and bench */

Test(layer_sets, configs_and_shapes)
{
    npu_lset_cfg_t e, s, q;
    cr_assert_eq(npu_lset_config("edge", &e), 0);
    cr_assert_eq(npu_lset_config("server", &s), 0);
    cr_assert_eq(npu_lset_config("server4", &q), 0);
    cr_assert_eq(npu_lset_config("nope", &q) , -1);
    cr_assert_eq(npu_lset_config("server4", &q), 0);
    int pe = 4 * e.S * e.S;
    cr_assert_eq(e.spm_bytes / pe, 512);          /* SPM bytes per PE */
    cr_assert(pe / e.dram_bw >= 88 && pe / e.dram_bw <= 96);  /* ridge ~92 MAC/B */
    cr_assert(pe / s.dram_bw >= 110 && pe / s.dram_bw <= 120); /* ridge ~115 MAC/B */
    cr_assert_eq(q.cores, 4);
    cr_assert_eq(q.batch, 4 * s.batch);
    npu_lset_layer_t L[NPU_LSET_MAX];
    int n = npu_lset_layers(&e, L, NPU_LSET_MAX);
    cr_assert_gt(n, 40);
    int total = 0, first = 0;
    for (int i = 0; i < n; i++) {
        total += L[i].count;
        first += !L[i].shape.has_dx;
        cr_assert(L[i].shape.M >= 1 && L[i].shape.K >= 1 && L[i].shape.N >= 1);
    }
    cr_assert_eq(first, 4); /* res, mob, dlrm, yolo first layers */
    /* ResNet-50 3x3 conv 64->64 at 56x56, B = 4: (12544, 576, 64) scaled by 32/45 */
    int found = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(L[i].name, "res_s2_b0_3x3") == 0) {
            cr_assert_eq(L[i].shape.M, (long)(12544 * 32.0 / 45 + 0.5));
            cr_assert_eq(L[i].shape.K, (long)(576 * 32.0 / 45 + 0.5));
            cr_assert_eq(L[i].shape.N, (long)(64 * 32.0 / 45 + 0.5));
            cr_assert_eq(L[i].count, 3);
            found = 1;
        }
    cr_assert(found);
    cr_log_info("edge layer set: %d shapes, %d layers", n, total);
}

static void bench(const char *name, int acc_bytes)
{
    static npu_lset_row_t rows[NPU_LSET_MAX];
    npu_lset_cfg_t c;
    cr_assert_eq(npu_lset_config(name, &c), 0);
    c.acc_bytes = acc_bytes;
    npu_lset_bench_t b;
    cr_assert_eq(npu_lset_bench(&c, rows, NPU_LSET_MAX, &b), 0);
    for (int i = 0; i < b.nrows; i++) {
        const npu_lset_row_t *r = &rows[i];
        /* +Partitioning includes "no partition" on one core: never slower than Algorithm 1 */
        if (c.cores == 1)
            cr_assert_leq(r->cyc[NPU_LSET_PART], r->cyc[NPU_LSET_ALG1] * (1 + 1e-12), "%s", r->L.name);
        cr_assert_leq(r->cyc[NPU_LSET_ORACLE], r->cyc[NPU_LSET_INTERLEAVE] * (1 + 1e-12));
        cr_assert_leq(r->cyc[NPU_LSET_ORACLE], r->cyc[NPU_LSET_ALG1] * (1 + 1e-12));
        if (!r->L.shape.has_dx)
            cr_assert_float_eq(r->cyc[NPU_LSET_PART], r->cyc[NPU_LSET_BASE], 1e-9);
    }
    for (int k = 0; k < 3; k++)
        cr_assert(b.knn_acc[k] >= 0 && b.knn_acc[k] <= 1);
    cr_log_info("%s (partials/gradients %d B): fwd+bwd reduction vs seq (mean over %d models): interleave %.1f%%, "
                "+rearr Alg.1 %.1f%%, +rearr oracle %.1f%%, +partition %.1f%%, +partition KNN "
                "%.1f%% (paper %.1f / %.1f / %.1f%% (oracle) / %.1f%%); KNN accuracy k=1,3,5: "
                "%.1f%% %.1f%% %.1f%%; Alg.1 = oracle on %d layers, rule (b) differs on %d",
                name, acc_bytes, b.nmodels, b.red[NPU_LSET_INTERLEAVE], b.red[NPU_LSET_ALG1],
                b.red[NPU_LSET_ORACLE], b.red[NPU_LSET_PART], b.red[NPU_LSET_PART_KNN], c.paper[0],
                c.paper[1], c.paper[3], c.paper[2], 100 * b.knn_acc[0], 100 * b.knn_acc[1],
                100 * b.knn_acc[2], b.alg1_vs_oracle, b.alg1_vs_rule_b);
    cr_log_info("%s vs the fixed-order baseline: interleave %.1f%%, Alg.1 %.1f%%, oracle %.1f%%, "
                "+partition %.1f%% (best-permutation baseline itself %.1f%%)",
                name, b.red_canon[NPU_LSET_INTERLEAVE], b.red_canon[NPU_LSET_ALG1],
                b.red_canon[NPU_LSET_ORACLE], b.red_canon[NPU_LSET_PART], b.red_canon[NPU_LSET_BASE]);
}

/* The server set runs in the default suite (< 1 s); edge and server4 take 4-10 s each, so they
 * run when TRAIN_BENCH is set:
 *   TRAIN_BENCH=1 ./build/test_unit --filter 'train_bench*' --verbose                         */
Test(train_bench, server, .timeout = 60) { bench("server", 2); }
Test(train_bench, edge, .timeout = 120)
{
    if (!getenv("TRAIN_BENCH"))
        cr_skip_test("set TRAIN_BENCH=1 to run the edge bench");
    bench("edge", 2);
    bench("edge", 4);
}
Test(train_bench, server4, .timeout = 120)
{
    if (!getenv("TRAIN_BENCH"))
        cr_skip_test("set TRAIN_BENCH=1 to run the quad-core server bench");
    bench("server", 4);
    bench("server4", 2);
    bench("server4", 4);
}

/* The values docs/training.md gives for configs/edge.cfg and configs/server.cfg, read through
 * npu_tmodel_hw_from_cfg, are the model's edge / server hardware. */
Test(layer_sets, cfg_values_match_model)
{
    static const struct { const char *name; int bw; } c[] = {{"edge", 11}, {"server", 9}};
    for (size_t i = 0; i < 2; i++) {
        npu_cfg_t cfg = test_cfg(16);
        cfg.spm_banks = 4;
        cfg.spm_bank_words = 2048;
        cfg.dram_bw = c[i].bw;
        npu_tmodel_hw_t a, b;
        npu_tmodel_hw_from_cfg(&cfg, &a);
        npu_lset_cfg_t pc;
        cr_assert_eq(npu_lset_config(c[i].name, &pc), 0);
        npu_lset_hw(&pc, &b);
        cr_assert_eq(a.S, b.S);
        cr_assert_eq(a.spm_bytes, b.spm_bytes);
        cr_assert_float_eq(a.dram_bw, b.dram_bw, 0);
    }
}
