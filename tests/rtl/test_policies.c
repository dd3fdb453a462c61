/*
 * test_policies.c - the three mapping policies of the FlexSA brief on the Verilated NPU
 * (gemm_emit.h NPU_EMIT_*, flexsa_report.h):
 *   - 1G4C (four independent S x S cores: per-core LDWs with b_hi, ISW WAVEs with a_hi) is
 *     bit-exact with its counters on edge and random shapes with random DRAM stalls;
 *   - the lane selects alone (LDW b_hi, WAVE a_hi) on a hand-made program;
 *   - on a pruned ResNet-50 GEMM subset, all three policies pass on the RTL and the brief's
 *     relations hold: FlexSA's ideal utilization >= 1G1C's and within 1 point of 1G4C's, its
 *     SPM -> LBUF traffic <= 1.05 x 1G1C's (RTL counters and model) while 1G4C's is >= 1.3 x (RTL),
 *     and >= 89% of FlexSA's waves are inter-core (FW + HSW + VSW).
 */
#include <string.h>

#include "run/flexsa_report.h"
#include "model/pruned_layers.h"
#include "rtl_common.h"

static const char *policy_opt(int emit)
{
    return emit == NPU_EMIT_1G4C ? "1g4c" : emit == NPU_EMIT_FLEXSA ? "flexsa" : "1g1c";
}

/* One GEMM under a policy on a fresh model with DRAM stalls; asserts PASS, names the replay. */
static void policy_gemm(const npu_cfg_t *cfg, int M, int N, int K, int ta, int tb, int emit,
                        uint64_t seed, unsigned stall)
{
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * K);
    int16_t *B = malloc(sizeof(int16_t) * (size_t)K * N);
    cr_assert(A && B);
    npu_random_operands(M, N, K, seed, A, B);
    npu_sim_t *s = rtl_open(cfg, stall, 0, seed);
    npu_gemm_report_t r;
    int rc = npu_gemm_run_modes(cfg, s, M, N, K, A, B, ta, tb, emit, NULL,
                                4 * rtl_budget(cfg, M, N, K), &r);
    cr_assert_eq(rc, NPU_GEMM_PASS,
                 "GEMM %dx%dx%d policy %s: %s err=%s pc=%u first mismatch C[%d][%d]=%d expected %d;"
                 " %s %s\n  replay: build/%s/npu gemm -m %d -n %d -k %d --seed %llu --stall-pct %u"
                 " --policy %s%s%s",
                 M, N, K, policy_opt(emit), npu_gemm_rc_name(rc),
                 npu_error_name(r.run.err) ? npu_error_name(r.run.err) : "?", (unsigned)r.run.err_pc,
                 r.bad_row, r.bad_col, (int)r.bad_got, (int)r.bad_exp, r.counters_msg, r.host_msg,
                 cfg->name, M, N, K, (unsigned long long)seed, stall, policy_opt(emit),
                 ta ? " --trans-a" : "", tb ? " --trans-b" : "");
    npu_gemm_report_free(&r);
    npu_sim_close(s);
    free(A);
    free(B);
}

Test(policies, gemm_1g4c_edges_and_random, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, F = 2 * S;
    uint64_t x = rtl_seed(41) | 1;
    /* odd Mt < 2S with several n-blocks, single rows, k/n halves cut at S +- 1 */
    const int e[][3] = {{1, 1, 1}, {F - 1, 2 * F + 3, S + 1}, {3, S, S}, {S + 1, S - 1, F + 1},
                        {2 * F + 1, F + S + 1, 3 * S - 1}, {5 * F + 3, 2 * S + 1, 2 * F + 5}};
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        policy_gemm(&cfg, e[i][0], e[i][1], e[i][2], (int)(i & 1), (int)(i >> 1 & 1),
                    NPU_EMIT_1G4C, rtl_seed(100 + i), 10);
    for (int i = 0; i < 8; i++) {
        int M = 1 + (int)(rtl_rand(&x) % (uint64_t)(6 * F));
        int N = 1 + (int)(rtl_rand(&x) % (uint64_t)(4 * F));
        int K = 1 + (int)(rtl_rand(&x) % (uint64_t)(4 * F));
        policy_gemm(&cfg, M, N, K, 0, 0, NPU_EMIT_1G4C, rtl_seed(200 + (uint64_t)i), 10);
    }
}

/* b_hi / a_hi by hand: a 2S x 2S B and 2S-deep A in the SPM; four ISW waves use the sub-tile
 * (k-half kh, n-half nh) through the lane selects, each exact against golden on that sub-block. */
Test(policies, lane_selects)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned S = (unsigned)cfg.s, F = 2 * S, Bt = 4 * S;
    int M = 4 * (int)S + 3;
    uint64_t x = rtl_seed(42) | 1;
    for (unsigned kh = 0; kh < 2; kh++)
        for (unsigned nh = 0; nh < 2; nh++) {
            npu_sim_t *s = rtl_open(&cfg, 5, 0, rtl_seed(42) + kh * 2 + nh);
            size_t dbytes;
            uint8_t *d = npu_sim_dram(s, &dbytes);
            int16_t *A = malloc(sizeof(int16_t) * (size_t)M * F), *W = malloc(sizeof(int16_t) * F * F);
            int16_t *As = malloc(sizeof(int16_t) * (size_t)M * S), *Ws = malloc(sizeof(int16_t) * S * S);
            int32_t *C = malloc(sizeof(int32_t) * (size_t)M * S), *G = malloc(sizeof(int32_t) * (size_t)M * S);
            rtl_fill(A, (size_t)M * F, &x);
            rtl_fill(W, (size_t)F * F, &x);
            for (int r = 0; r < M; r++)
                memcpy(As + (size_t)r * S, A + (size_t)r * F + kh * S, sizeof(int16_t) * S);
            for (unsigned r = 0; r < S; r++)
                memcpy(Ws + (size_t)r * S, W + (size_t)(kh * S + r) * F + nh * S, sizeof(int16_t) * S);
            uint64_t da = 0x10000, dw = 0x20000, dc = 0x30000;
            npu_write_i16(d, da, Bt, M, (int)F, A, F);
            npu_write_i16(d, dw, Bt, (int)F, (int)F, W, F);
            npu_prog_t p;
            npu_prog_init(&p);
            npu_insn_t in;
            unsigned ha = ((unsigned)M + 1) / 2;
            cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, (unsigned)M, (uint32_t)da, 0, 1, 2 * F, 1 * Bt), 0);
            npu_prog_push(&p, &in);
            cr_assert_eq(npu_enc_load(&in, NPU_TAG_W, 0, F, (uint32_t)dw, 0x300, 1, 2 * F, 1 * Bt), 0);
            npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
            npu_prog_push(&p, &in);
            for (unsigned c = 0; c < 4; c++) {
                cr_assert_eq(npu_enc_ldw_cores(&in, 1, NPU_MODE_ISW, 0x300 + kh * S, 1, S, S, 1u << c), 0);
                if (nh) cr_assert_eq(npu_insn_lane_hi(&in), 0);
                if (c == 0) npu_insn_tok(&in, NPU_TOK_POP_PREV);
                npu_prog_push(&p, &in);
            }
            cr_assert_eq(npu_enc_wave(&in, 1, NPU_MODE_ISW, 0, (unsigned)M, 0, 1, S, S, 3), 0);
            if (kh) cr_assert_eq(npu_insn_lane_hi(&in), 0);
            npu_prog_push(&p, &in);
            cr_assert_eq(npu_enc_drain_split(&in, ha, 3, 0x600, 2, ha, (unsigned)M - ha), 0);
            npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
            npu_prog_push(&p, &in);
            cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, (unsigned)M, (uint32_t)dc, 0x600, 2, 4 * S, 2 * Bt), 0);
            npu_insn_tok(&in, NPU_TOK_POP_PREV);
            npu_prog_push(&p, &in);
            npu_run_result_t r;
            cr_assert_eq(npu_run_program(&cfg, s, 0, p.insn, p.n, 1000000, &r), NPU_RUN_DONE,
                         "kh=%u nh=%u: err %s pc %u", kh, nh,
                         npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_pc);
            npu_read_i32(d, dc, 2 * Bt, M, (int)S, C, S);
            npu_golden_gemm(M, (int)S, (int)S, As, S, 0, Ws, S, 0, G, S);
            int br = 0, bc = 0;
            int32_t got = 0, exp = 0;
            size_t bad = npu_compare_i32(M, (int)S, C, S, G, S, &br, &bc, &got, &exp);
            cr_assert_eq(bad, 0u, "kh=%u nh=%u: %zu mismatches, first C[%d][%d]=%d expected %d", kh,
                         nh, bad, br, bc, (int)got, (int)exp);
            /* four LDWs of S rows each, each to one core: no multicast */
            cr_assert_eq(r.cnt[NPU_CNT_lbuf_v_words], 4u * S);
            npu_prog_free(&p);
            free(A); free(W); free(As); free(Ws); free(C); free(G);
            npu_sim_close(s);
        }
}

/* The brief's policy relations (section 7.2/7.3, issue 3 item 7) measured on the RTL over the
 * first GEMMs of the pruned ResNet-50 set (forward, data- and weight-gradient), each policy a
 * mapping of the GEMM as given (never the compiler's swapped form, gemm_swap.h). */
Test(policies, pruned_subset_relations, .timeout = 900)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, limit = S <= 2 ? 40 : 24, ng = 0;
    npu_prune_cfg_t pc = {S, 1, 0.48, 0, 4};
    npu_conv_layer_t L[NPU_RESNET50_LAYERS];
    int nl = npu_pruned_resnet50(&pc, L, NPU_RESNET50_LAYERS, NULL);
    static const int emit[3] = {NPU_EMIT_FW, NPU_EMIT_1G4C, NPU_EMIT_FLEXSA};
    npu_flexsa_stats_t model[3];
    uint64_t lbuf[3] = {0, 0, 0}, waves[3][NPU_NUM_MODES];
    memset(model, 0, sizeof model);
    memset(waves, 0, sizeof waves);
    cr_assert_gt(nl, 0);
    for (int l = 0; l < nl && ng < limit; l++) {
        npu_gemm_shape_t gs[3];
        int n3 = npu_conv_gemms(&L[l], l, pc.batch, gs);
        for (int j = 0; j < n3 && ng < limit; j++, ng++) {
            /* large-K weight gradients with tiny M take long on the RTL: cap the work */
            if ((uint64_t)gs[j].M * gs[j].N * gs[j].K > 4000000ull)
                continue;
            for (int p = 0; p < 3; p++) {
                npu_policy_meas_t m;
                uint64_t seed = rtl_seed(300 + (uint64_t)ng);
                npu_policy_opts_t o = {0, NULL, 4 * rtl_budget(&cfg, gs[j].M, gs[j].N, gs[j].K), 1, 1};
                int rc = npu_policy_measure(&cfg, gs[j].M, gs[j].N, gs[j].K, emit[p], seed, &o, &m);
                cr_assert_eq(rc, NPU_GEMM_PASS,
                             "%s GEMM %d (M=%d N=%d K=%d) policy %s: %s\n  replay: build/%s/npu "
                             "gemm -m %d -n %d -k %d --seed %llu --policy %s",
                             L[l].name, j, gs[j].M, gs[j].N, gs[j].K, policy_opt(emit[p]), m.msg,
                             cfg.name, gs[j].M, gs[j].N, gs[j].K, (unsigned long long)seed,
                             policy_opt(emit[p]));
                npu_flexsa_stats_add(&model[p], &m.model);
                lbuf[p] += m.lbuf_elems;
                for (int i = 0; i < NPU_NUM_MODES; i++)
                    waves[p][i] += m.waves[i];
                /* the RTL ran the waves the model planned */
                cr_assert_eq(m.macs, (uint64_t)gs[j].M * gs[j].N * gs[j].K);
                /* the roofline holds (less the DRAM model's initial credit: 4 beats) */
                cr_assert_geq(m.dram_bytes, m.compulsory_bytes);
                cr_assert_geq((double)m.cycles + 4.0 * npu_cfg_beat(&cfg) / cfg.dram_bw, m.bound_cycles,
                              "%s GEMM %d policy %s: %llu cycles below the roofline %.1f", L[l].name, j,
                              policy_opt(emit[p]), (unsigned long long)m.cycles, m.bound_cycles);
            }
        }
    }
    double u1 = npu_flexsa_util(&model[0]), u4 = npu_flexsa_util(&model[1]),
           uf = npu_flexsa_util(&model[2]);
    cr_log_info("pruned subset (%d GEMMs, %s): ideal util 1G1C %.2f%% 1G4C %.2f%% FlexSA %.2f%%; "
                "RTL SPM->LBUF 1G4C %.3fx FlexSA %.3fx of 1G1C", ng, cfg.name, 100 * u1, 100 * u4,
                100 * uf, (double)lbuf[1] / (double)lbuf[0], (double)lbuf[2] / (double)lbuf[0]);
    cr_assert_geq(uf, u1, "FlexSA ideal utilization %.4f below 1G1C's %.4f", uf, u1);
    cr_assert_geq(uf, u4 - 0.01, "FlexSA ideal utilization %.4f more than 1 point below 1G4C's %.4f",
                  uf, u4);
    cr_assert_leq((double)lbuf[2], 1.05 * (double)lbuf[0], "FlexSA RTL traffic %llu > 1.05 x 1G1C %llu",
                  (unsigned long long)lbuf[2], (unsigned long long)lbuf[0]);
    cr_assert_leq((double)npu_flexsa_traffic(&model[2]), 1.05 * (double)npu_flexsa_traffic(&model[0]));
    cr_assert_geq((double)lbuf[1], 1.3 * (double)lbuf[0],
                  "1G4C RTL traffic %llu should be well above 1G1C's %llu (no sharing)",
                  (unsigned long long)lbuf[1], (unsigned long long)lbuf[0]);
    uint64_t w = 0;
    for (int i = 0; i < NPU_NUM_MODES; i++)
        w += waves[2][i];
    cr_assert_gt(w, 0u);
    double inter = (double)(waves[2][NPU_MODE_FW] + waves[2][NPU_MODE_HSW] + waves[2][NPU_MODE_VSW]) /
                   (double)w;
    cr_assert_geq(inter, 0.89, "inter-core FlexSA waves %.3f < 0.89", inter);
    cr_assert_eq(waves[1][NPU_MODE_FW] + waves[1][NPU_MODE_HSW] + waves[1][NPU_MODE_VSW], 0u,
                 "1G4C runs independent cores only (ISW)");
}
