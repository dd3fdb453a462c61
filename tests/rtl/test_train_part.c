/*
 * test_train_part.c - the partitionings of the fused backward GEMM on the Verilated NPU
 * (train_run.h "Partitioning", issue 4 acceptance 1 and 2): for every order (seq, interleave,
 * dxmajor, dwmajor, auto, oracle) and every partitioning (m, n, k, knn), dX and dW of the layer
 * bit-exact against golden with random DRAM stalls, the MAC counter exactly 2*M*N*K, and the
 * accumulation adds of the on-chip combination exactly the plan's (nparts - 1) * (K*N) (M) or
 * (nparts - 1) * (M*K) (N), 0 for K. The layer (M, K, N) is the second layer of a two-layer MLP
 * (the first has no dX and is not partitioned).
 *
 * K per core ("kx4c", K a multiple of 4S: npu_bwd_emit_kcores): the same checks, plus four
 * parts, dY read from DRAM once (the per-tensor DRAM byte counter) and, with the parts in
 * sequence on the whole array instead (parts_in_sequence), the cycles of both logged.
 * M per core ("mx4c", M a multiple of 4S: npu_bwd_emit_mcores): the same, the accumulation adds
 * of the on-chip sum of the four dW partials exactly (P-1)*K*N; N per core ("nx4c", N a multiple
 * of 8S: npu_bwd_emit_ncores) the same with the four dX partials, (P-1)*M*K.
 *
 * bf16_partitions runs in every TEST_CONFIGS entry (the Makefile's bf16 filters pick the
 * train_part/bf16_* tests): every partitioning per core and in sequence and knn under the fused
 * orders, at a bf16 configuration bit-exact against the golden summed in the order of the form
 * that runs (ref/bwd_golden_bf16.h: the per-core partials' combine order, the parts' tiles).
 *
 * Random shapes: NPU_TRAIN_RANDOM of them (default 24 in make test; tests/regress.sh sets 100),
 * each under one (order, partitioning) pair, the pairs cycling through all 24.
 */
#include <string.h>

#include "rtl_common.h"
#include "compile/train/train_emit.h"
#include "run/train_run.h"

static void part_check_ex(const npu_cfg_t *cfg, int M, int K, int N, npu_order_t order,
                          npu_part_t part, int policy, uint64_t seed, unsigned stall,
                          uint64_t *bwd_cycles, int in_seq, int cores, uint64_t *w_bytes)
{
    npu_mlp_t mlp;
    npu_mlp_two_layers(&mlp, M, 7, K, N);
    mlp.partition = part;
    mlp.parts_in_sequence = in_seq;
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    npu_train_result_t *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    int rc = npu_train_step(cfg, s, &mlp, order, policy, seed, 50000000, r);
    npu_sim_close(s);
    cr_assert_eq(rc, 0, "(M,K,N) = (%d,%d,%d) order %s partition %s policy %d: %s\n  replay: "
                 "build/%s/npu train --layers 7,%d,%d --batch %d --seed %llu --stall-pct %u "
                 "--policy %s --order %s --partition %s", M, K, N, npu_order_name(order),
                 npu_part_name(part), policy, r->msg, cfg->name, K, N, M,
                 (unsigned long long)seed, stall, policy == NPU_EMIT_FLEXSA ? "flexsa" : "1g1c",
                 npu_order_name(order), npu_part_name(part));
    const npu_train_layer_result_t *L = &r->layer[1];
    uint64_t mnk = (uint64_t)M * (uint64_t)N * (uint64_t)K;
    cr_assert_eq(L->macs[NPU_PASS_DX] + L->macs[NPU_PASS_DW], 2 * mnk,
                 "(%d,%d,%d) %s %s: backward MACs %llu, expected 2MNK = %llu", M, K, N,
                 npu_order_name(order), npu_part_name(part),
                 (unsigned long long)(L->macs[NPU_PASS_DX] + L->macs[NPU_PASS_DW]),
                 (unsigned long long)(2 * mnk));
    cr_assert_eq(r->layer[0].macs[NPU_PASS_DW], (uint64_t)M * 7u * (uint64_t)K);
    cr_assert(L->lower.form != NPU_LOWER_GEMMS); /* fused */
    cr_assert(part == NPU_PART_KNN ? L->lower.part >= NPU_PART_M && L->lower.part <= NPU_PART_K
                                : L->lower.part == part);
    long expect = L->lower.part == NPU_PART_M ? (long)(L->lower.nparts - 1) * K * N
                  : L->lower.part == NPU_PART_N ? (long)(L->lower.nparts - 1) * M * K : 0;
    cr_assert_eq(L->lower.accum_expect, expect);
    cr_assert_eq(L->accum_adds, expect, "(%d,%d,%d) %s %s x%d: accumulation adds %ld, expected %ld",
                 M, K, N, npu_order_name(order), npu_part_name(L->lower.part), L->lower.nparts,
                 L->accum_adds, expect);
    cr_assert_geq(L->dy_tile_loads, L->dy_tiles);
    if (cores >= 0) {
        cr_assert_eq(L->lower.form == NPU_LOWER_CORES, cores, "(%d,%d,%d): form %s", M, K, N,
                     npu_lower_form_name(L->lower.form));
        if (cores) { /* four parts on four cores; dY fetched once (brief T9) */
            cr_assert_eq(L->lower.nparts, 4);
            /* once: a beat shared by two parts of the dense dY is read by both (<= 3 cuts); at
             * BEAT_WORDS > 1 a part's slice row narrower than a beat reads the whole beat (N per
             * core: a 2S-column row is one word, half a 64-byte beat, so dY is read twice over;
             * docs/memory.md Limitations) */
            uint64_t DB = (uint64_t)npu_cfg_beat(cfg), wpb = DB / (uint64_t)npu_cfg_word(cfg);
            cr_assert(L->dy_rd_bytes >= L->dy_compulsory && L->dy_rd_bytes <= wpb * L->dy_compulsory + 3 * DB,
                      "(%d,%d,%d): dY read %llu bytes, once = %llu (x %llu words per beat, + at most 3 shared beats)",
                      M, K, N, (unsigned long long)L->dy_rd_bytes, (unsigned long long)L->dy_compulsory,
                      (unsigned long long)wpb);
        }
    }
    if (bwd_cycles)
        *bwd_cycles = L->cycles[NPU_PASS_DX] + L->cycles[NPU_PASS_DW];
    if (w_bytes) { /* backward W bytes read, one read */
        w_bytes[0] = L->w_rd_bytes;
        w_bytes[1] = L->w_compulsory;
    }
    free(r);
}

static void part_check(const npu_cfg_t *cfg, int M, int K, int N, npu_order_t order,
                       npu_part_t part, int policy, uint64_t seed, unsigned stall,
                       uint64_t *bwd_cycles)
{
    part_check_ex(cfg, M, K, N, order, part, policy, seed, stall, bwd_cycles, 0, -1, NULL);
}

/* K per core on the issue's shapes where it applies (tiny: the small ones) and edge shapes, and
 * the same with the parts in sequence, 10 % stalls; cycles of both logged */
Test(train_part, k_per_core, .timeout = 1200)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    const int sh[][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {13, 4 * S, 2 * S + 5}, {3 * S + 1, 8 * S, S - 1}};
    for (int i = 0; i < 5; i++) {
        uint64_t cyc[2] = {0, 0};
        if (cfg.s <= 2 && sh[i][1] * sh[i][2] > 10000)
            continue; /* tiny: keep the CI tier fast */
        for (int seq = 0; seq < 2; seq++)
            part_check_ex(&cfg, sh[i][0], sh[i][1], sh[i][2], NPU_ORDER_INTERLEAVE, NPU_PART_K,
                          i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, rtl_seed(700 + (uint64_t)i), 10,
                          &cyc[seq], seq, !seq, NULL);
        cr_log_info("%s (%d,%d,%d) K: per core %llu cycles, parts in sequence %llu", cfg.name,
                    sh[i][0], sh[i][1], sh[i][2], (unsigned long long)cyc[0], (unsigned long long)cyc[1]);
    }
}

/* M or N per core, shapes sh[0..n): the checks of part_check_ex with four parts on four cores, W
 * read once, and the same split with the parts in sequence; cycles of both logged */
static void mn_per_core(npu_part_t part, const int (*sh)[3], int n, uint64_t seed0)
{
    npu_cfg_t cfg = rtl_cfg();
    for (int i = 0; i < n; i++) {
        uint64_t cyc[2] = {0, 0};
        if (!(part == NPU_PART_M ? npu_bwd_mcores_fits : npu_bwd_ncores_fits)(&cfg, sh[i][0], sh[i][1], sh[i][2]) ||
            (cfg.s <= 2 && (long)sh[i][0] * sh[i][1] * sh[i][2] > 100000))
            continue; /* does not apply, or tiny: keep the CI tier fast */
        for (int seq = 0; seq < 2; seq++) {
            uint64_t w[2];
            part_check_ex(&cfg, sh[i][0], sh[i][1], sh[i][2], NPU_ORDER_INTERLEAVE, part,
                          i & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW, rtl_seed(seed0 + (uint64_t)i), 10,
                          &cyc[seq], seq, !seq, w);
            if (!seq) /* W read once, multicast to the four cores */
                cr_assert_eq(w[0], w[1], "(%d,%d,%d): W read %llu bytes, once = %llu", sh[i][0], sh[i][1],
                             sh[i][2], (unsigned long long)w[0], (unsigned long long)w[1]);
        }
        cr_log_info("%s (%d,%d,%d) %s: per core %llu cycles, parts in sequence %llu", cfg.name, sh[i][0],
                    sh[i][1], sh[i][2], npu_part_name(part), (unsigned long long)cyc[0],
                    (unsigned long long)cyc[1]);
    }
}

/* M per core on the issue's shapes where it applies (M a multiple of 4S, 2K <= OBUF rows; tiny:
 * none), 10 % stalls: bit-exact dX and dW (the four partials of dW summed on chip by DRAIN acc),
 * 2*M*N*K MACs, (P-1)*K*N accumulation adds, dY and W read once */
Test(train_part, m_per_core, .timeout = 1200)
{
    const int sh[][3] = {{64, 64, 64}, {256, 64, 32}, {128, 128, 64}, {512, 32, 16}};
    mn_per_core(NPU_PART_M, sh, 4, 750);
}

/* M per core on edge shapes: K and N not multiples of S, K = 1, M/2 > OBUF rows (dX in chunks of
 * 72 (small) or 24 (tiny) rows per part) */
Test(train_part, m_per_core_edges, .timeout = 1200)
{
    int S = rtl_cfg().s;
    const int sh[][3] = {{4 * S, 2 * S + 3, S - 1}, {8 * S, 1, 3 * S + 5}, {16 * S, 16 * S, 8 * S + 1},
                         {64 * S, 4 * S + 1, 2 * S}, {576, 3, 2}};
    mn_per_core(NPU_PART_M, sh, 5, 760);
}

/* N per core (N a multiple of 8S, 2M and 2K <= OBUF rows): the issue's shapes where it applies
 * (small) and edge shapes (M, K not multiples of S, M = 1, K = 1), the four partials of dX summed
 * on chip ((P-1)*M*K accumulation adds) */
Test(train_part, n_per_core, .timeout = 1200)
{
    int S = rtl_cfg().s;
    const int sh[][3] = {{64, 64, 64}, {128, 128, 64}, {2 * S + 3, 3 * S + 1, 8 * S}, {1, 5, 16 * S},
                         {10, 1, 8 * S}, {16 * S, 16 * S, 16 * S}};
    mn_per_core(NPU_PART_N, sh, 6, 770);
}

/* The issue's shapes under one order, every partitioning (and none, for the cycle log). */
static void issue_shapes(npu_order_t order)
{
    npu_cfg_t cfg = rtl_cfg();
    const int sh[4][3] = {{64, 64, 64}, {256, 64, 32}, {8, 512, 64}, {45, 90, 135}};
    for (int i = 0; i < 4; i++) {
        uint64_t cyc[NPU_PART_COUNT] = {0};
        if (cfg.s <= 2 && sh[i][1] * sh[i][2] > 10000)
            continue; /* tiny: keep the CI tier fast (the shape runs at small) */
        for (int p = NPU_PART_M; p <= NPU_PART_KNN; p++)
            part_check(&cfg, sh[i][0], sh[i][1], sh[i][2], order, (npu_part_t)p,
                       (i + p) & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                       rtl_seed(800 + (uint64_t)i), 10, &cyc[p]);
        cr_log_info("%s (%d,%d,%d) %s: backward cycles m %llu n %llu k %llu knn %llu", cfg.name,
                    sh[i][0], sh[i][1], sh[i][2], npu_order_name(order),
                    (unsigned long long)cyc[NPU_PART_M], (unsigned long long)cyc[NPU_PART_N],
                    (unsigned long long)cyc[NPU_PART_K], (unsigned long long)cyc[NPU_PART_KNN]);
    }
}
Test(train_part, issue_shapes_seq, .timeout = 1200) { issue_shapes(NPU_ORDER_SEQ); }
Test(train_part, issue_shapes_interleave, .timeout = 1200) { issue_shapes(NPU_ORDER_INTERLEAVE); }
Test(train_part, issue_shapes_dxmajor, .timeout = 1200) { issue_shapes(NPU_ORDER_DXMAJOR); }
Test(train_part, issue_shapes_dwmajor, .timeout = 1200) { issue_shapes(NPU_ORDER_DWMAJOR); }
Test(train_part, issue_shapes_auto, .timeout = 1200) { issue_shapes(NPU_ORDER_AUTO); }
Test(train_part, issue_shapes_oracle, .timeout = 1200) { issue_shapes(NPU_ORDER_ORACLE); }

/* Every partitioning on a shape where the three per-core forms apply (M 8S, K 8S, N 8S: two
 * tiles of 4S per dim, so the parts in sequence are two) and on an odd one (no per-core form:
 * the parts in one schedule, or as sub-GEMMs: dwmajor with N in sequence, at tiny-bf16 and
 * small-bf16), each per core and in sequence, orders rotating (knn under oracle: every concrete
 * order run, each checked), 10 % stalls. */
Test(train_part, bf16_partitions, .timeout = 1200)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    const int sh[2][3] = {{8 * S, 8 * S, 8 * S}, {5 * S + 3, 9 * S + 1, 7 * S - 1}};
    for (int i = 0; i < 2; i++)
        for (int p = NPU_PART_M; p <= NPU_PART_KNN; p++)
            for (int seq = 0; seq < (p == NPU_PART_KNN ? 1 : 2); seq++) {
                npu_order_t o = p == NPU_PART_KNN ? NPU_ORDER_ORACLE
                                : (npu_order_t)(NPU_ORDER_INTERLEAVE + (p + 2 * seq + i) % 3);
                part_check_ex(&cfg, sh[i][0], sh[i][1], sh[i][2], o, (npu_part_t)p,
                              (p + i) & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                              rtl_seed(1600 + (uint64_t)(10 * i + 2 * p + seq)), 10, NULL, seq,
                              i == 0 && p != NPU_PART_KNN ? !seq : -1, NULL);
            }
}

Test(train_part, random_shapes, .timeout = 3600)
{
    npu_cfg_t cfg = rtl_cfg();
    const char *e = getenv("NPU_TRAIN_RANDOM");
    int n = e ? atoi(e) : 24;
    uint64_t x = rtl_seed(93) | 1;
    for (int t = 0; t < n; t++) {
        int M = 1 + (int)(rtl_rand(&x) % (uint64_t)(24 * cfg.s));
        int K = 1 + (int)(rtl_rand(&x) % (uint64_t)(12 * cfg.s));
        int N = 1 + (int)(rtl_rand(&x) % (uint64_t)(12 * cfg.s));
        npu_order_t o = (npu_order_t)(t % (NPU_ORDER_ORACLE + 1));
        npu_part_t p = (npu_part_t)(NPU_PART_M + (t + t / (NPU_ORDER_ORACLE + 1)) % 4); /* 24 pairs */
        part_check(&cfg, M, K, N, o, p, t & 1 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW,
                   rtl_seed(900 + (uint64_t)t), 10, NULL);
    }
}
