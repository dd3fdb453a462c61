/* cmd_flexsa_report.c - `npu flexsa-report`: 1G1C, 1G4C and FlexSA on the RTL (flexsa_report.h).
 *
 * Part 1, the mode shapes of the brief (issue 3 item 5; N, K scaled by S/8, M = 64 * 2S):
 * ideal (model) and measured (RTL, compute run) utilization per policy.
 * Part 2, a pruned ResNet-50 GEMM set (pruned_layers.h, forward / data-gradient / weight-
 * gradient GEMMs): per policy the GEMMs that pass bit-exact, ideal and measured utilization,
 * cycles of the full programs, SPM -> LBUF traffic (RTL and model, and each / 1G1C's) and the
 * share of inter-core waves (FW + HSW + VSW). --csv writes one line per GEMM and policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "run/flexsa_report.h"
#include "compile/gemm/gemm_emit.h"
#include "model/pruned_layers.h"
#include "run/runtime.h"

static const int k_emit[3] = {NPU_EMIT_FW, NPU_EMIT_1G4C, NPU_EMIT_FLEXSA};
static const char *const k_name[3] = {"1G1C", "1G4C", "FlexSA"};
static const char *const k_phase[3] = {"fwd", "dx", "dw"};

typedef struct agg {
    int n, pass;
    uint64_t macs, compute_cycles, cycles, lbuf_rtl, waves[NPU_NUM_MODES];
    uint64_t dram_bytes, compulsory_bytes;
    uint64_t busy[3]; /* the full runs' LOAD queue, STORE queue, array busy cycles */
    double bound_cycles;
    npu_flexsa_stats_t model;
} agg_t;

static void agg_add(agg_t *g, const npu_policy_meas_t *m)
{
    g->n++;
    g->pass += m->rc == NPU_GEMM_PASS;
    g->macs += m->macs;
    g->compute_cycles += m->compute_cycles;
    g->cycles += m->cycles;
    g->lbuf_rtl += m->lbuf_elems;
    g->dram_bytes += m->dram_bytes;
    g->compulsory_bytes += m->compulsory_bytes;
    g->busy[0] += m->busy_load;
    g->busy[1] += m->busy_store;
    g->busy[2] += m->busy_array;
    g->bound_cycles += m->bound_cycles;
    for (int i = 0; i < NPU_NUM_MODES; i++)
        g->waves[i] += m->waves[i];
    npu_flexsa_stats_add(&g->model, &m->model);
}

static const char *const k_cols[] = {
    "set", "gemm", "M", "N", "K", "policy", "result", "cycles", "compute_cycles", "macs",
    "ideal_util", "measured_util", "lbuf_elems_rtl", "lbuf_elems_model", "waves_fw", "waves_hsw",
    "waves_vsw", "waves_isw", "dram_bytes", "compulsory_bytes", "bound_cycles"};

static void table_line(npu_table_t *t, const char *set, const char *name, int M, int N, int K,
                     int pol, const npu_policy_meas_t *m)
{
    static const int modes[4] = {NPU_MODE_FW, NPU_MODE_HSW, NPU_MODE_VSW, NPU_MODE_ISW};
    npu_table_str(t, set);
    npu_table_str(t, name);
    npu_table_int(t, M);
    npu_table_int(t, N);
    npu_table_int(t, K);
    npu_table_str(t, k_name[pol]);
    npu_table_str(t, npu_gemm_rc_name(m->rc));
    npu_table_u64(t, m->cycles);
    npu_table_u64(t, m->compute_cycles);
    npu_table_u64(t, m->macs);
    npu_table_num(t, m->ideal_util, "%.6f");
    npu_table_num(t, m->measured_util, "%.6f");
    npu_table_u64(t, m->lbuf_elems);
    npu_table_u64(t, npu_flexsa_traffic(&m->model));
    for (int i = 0; i < 4; i++)
        npu_table_u64(t, m->waves[modes[i]]);
    npu_table_u64(t, m->dram_bytes);
    npu_table_u64(t, m->compulsory_bytes);
    npu_table_num(t, m->bound_cycles, "%.1f");
    npu_table_end_row(t);
}

static int scaled(int x, int S)
{
    int v = (x * S + 4) / 8;
    return v < 1 ? 1 : v;
}

/* Part 1: the mode shapes at M = 64 x 2S, ideal and measured utilization per policy. Returns
 * the failures. */
static int run_shapes(const npu_cfg_t *cfg, const npu_policy_opts_t *o, uint64_t seed, npu_table_t *tab)
{
    npu_policy_opts_t oc = *o;
    static const int shapes[4][2] = {{5, 5}, {5, 32}, {32, 5}, {24, 24}};
    int S = cfg->s, M1 = 64 * 2 * S, failures = 0;
    npu_policy_meas_t m;
    oc.full = 0; /* compute runs only */
    printf("Mode shapes, M = %d:\n%-12s %-7s %8s %9s %9s %10s  %s\n", M1, "N x K", "policy",
           "ideal%", "measured%", "meas/ideal", "compute", "waves FW/HSW/VSW/ISW");
    for (int i = 0; i < 4; i++) {
        int N = scaled(shapes[i][0], S), K = scaled(shapes[i][1], S);
        char nm[32];
        snprintf(nm, sizeof nm, "%dx%d", N, K);
        for (int p = 0; p < 3; p++) {
            npu_policy_measure(cfg, M1, N, K, k_emit[p], seed, &oc, &m);
            if (m.rc != NPU_GEMM_PASS) {
                failures++;
                printf("%-12s %-7s FAILED: %s\n", nm, k_name[p], m.msg);
            } else {
                printf("%-12s %-7s %8.2f %9.2f %10.3f %10llu  %llu/%llu/%llu/%llu\n", nm, k_name[p],
                       100 * m.ideal_util, 100 * m.measured_util,
                       m.ideal_util > 0 ? m.measured_util / m.ideal_util : 0.0,
                       (unsigned long long)m.compute_cycles,
                       (unsigned long long)m.waves[NPU_MODE_FW],
                       (unsigned long long)m.waves[NPU_MODE_HSW],
                       (unsigned long long)m.waves[NPU_MODE_VSW],
                       (unsigned long long)m.waves[NPU_MODE_ISW]);
            }
            table_line(tab, "shapes", nm, M1, N, K, p, &m);
        }
    }
    return failures;
}

/* Part 2 state: the per-policy aggregates, and the model's SPM -> LBUF traffic at the paper's
 * blocking (blk_M = 2 x 2S rows per stationary tile; 1G4C 2S per core), beside the RTL's tiles
 * (Mt up to the OBUF rows, so the stationary share, and with it 1G4C's relative cost, is
 * smaller there). */
typedef struct pruned {
    agg_t g[3];
    double paper_tr[3];
    int failures, ng;
} pruned_t;

/* One GEMM of the pruned set under the three policies. */
static void run_pruned_gemm(const npu_cfg_t *cfg, const npu_args_t *a, const npu_policy_opts_t *o,
                            uint64_t seed, const char *nm, const npu_gemm_shape_t *gs, npu_table_t *tab,
                            pruned_t *ps)
{
    npu_policy_meas_t m;
    if (!a->quiet)
        printf("  %-22s M=%-5d N=%-4d K=%-5d", nm, gs->M, gs->N, gs->K);
    for (int p = 0; p < 3; p++) {
        npu_flexsa_stats_t st;
        npu_flexsa_plan(cfg->s, 0, npu_emit_policy_model(k_emit[p]), gs->M, gs->N, gs->K, NULL,
                        NULL, &st);
        ps->paper_tr[p] += (double)npu_flexsa_traffic(&st);
        npu_policy_measure(cfg, gs->M, gs->N, gs->K, k_emit[p], seed + (uint64_t)ps->ng, o, &m);
        agg_add(&ps->g[p], &m);
        table_line(tab, "pruned", nm, gs->M, gs->N, gs->K, p, &m);
        if (m.rc != NPU_GEMM_PASS) {
            ps->failures++;
            printf("\n  %s %s FAILED: %s (replay: npu gemm -m %d -n %d -k %d --seed %llu "
                   "--policy %s)\n",
                   nm, k_name[p], m.msg, gs->M, gs->N, gs->K,
                   (unsigned long long)(seed + (uint64_t)ps->ng),
                   p == 0 ? "1g1c" : p == 1 ? "1g4c" : "flexsa");
        } else if (!a->quiet) {
            printf("  %s %5.1f/%5.1f%%%s", k_name[p], 100 * m.ideal_util, 100 * m.measured_util,
                   m.swapped ? " (swapped)" : "");
        }
    }
    if (!a->quiet)
        printf("\n");
    fflush(stdout);
}

/* Part 2: the pruned ResNet-50 GEMMs (up to --limit). -1 if the set cannot be built. */
static int run_pruned(const npu_cfg_t *cfg, const npu_args_t *a, const npu_policy_opts_t *o,
                      uint64_t seed, npu_table_t *tab, pruned_t *ps)
{
    npu_prune_cfg_t pc = {cfg->s, seed, 0.48, 0, (int)(a->batch ? a->batch : 4)};
    npu_conv_layer_t L[NPU_RESNET50_LAYERS];
    double fr = 0;
    int nl = npu_pruned_resnet50(&pc, L, NPU_RESNET50_LAYERS, &fr);
    if (nl < 0) {
        fprintf(stderr, "npu: cannot build the pruned layer set\n");
        return -1;
    }
    printf("\nPruned ResNet-50 (seed %llu, %.0f%% of the forward MACs, batch %d)%s:\n",
           (unsigned long long)seed, 100 * fr, pc.batch, a->quiet ? "" : ", per GEMM");
    for (int l = 0; l < nl && (!a->limit || ps->ng < (int)a->limit); l++) {
        npu_gemm_shape_t gs[3];
        int n3 = npu_conv_gemms(&L[l], l, pc.batch, gs);
        for (int j = 0; j < n3 && (!a->limit || ps->ng < (int)a->limit); j++, ps->ng++) {
            char nm[96];
            snprintf(nm, sizeof nm, "%.40s.%s", L[l].name, k_phase[gs[j].phase]);
            run_pruned_gemm(cfg, a, o, seed, nm, &gs[j], tab, ps);
        }
    }
    return 0;
}

/* Part 2's roofline (npu_policy_roofline summed over the GEMMs): no policy runs the set in fewer
 * cycles, so bound(1G1C) / bound(FlexSA) is the most FlexSA can gain at this bandwidth. */
static void print_roofline(const agg_t *g)
{
    printf("roofline per GEMM, max(MACs / (PEs x ideal utilization), compulsory DRAM bytes / bandwidth\n"
           " or / one beat per port), summed; DRAM bytes of the full runs / compulsory:\n");
    for (int p = 0; p < 3; p++)
        printf("  %-7s bound %12.0f cycles, measured %.3f x the bound, DRAM bytes %.3f x compulsory\n",
               k_name[p], g[p].bound_cycles,
               g[p].bound_cycles > 0 ? (double)g[p].cycles / g[p].bound_cycles : 0.0,
               g[p].compulsory_bytes ? (double)g[p].dram_bytes / (double)g[p].compulsory_bytes : 0.0);
    printf("where the full runs' cycles go (busy cycles summed over the GEMMs, shares of their cycles):\n");
    for (int p = 0; p < 3; p++) {
        double c = g[p].cycles ? (double)g[p].cycles : 1.0;
        printf("  %-7s LOAD queue %5.1f %%, STORE queue %5.1f %%, array %5.1f %%\n", k_name[p],
               100.0 * (double)g[p].busy[0] / c, 100.0 * (double)g[p].busy[1] / c, 100.0 * (double)g[p].busy[2] / c);
    }
    printf("FlexSA / 1G1C speedup: measured %.3f, at most %.3f at this bandwidth (the bounds' ratio)\n",
           g[2].cycles ? (double)g[0].cycles / (double)g[2].cycles : 0.0,
           g[2].bound_cycles > 0 ? g[0].bound_cycles / g[2].bound_cycles : 0.0);
}

/* The per-policy summary of part 2. */
static void print_summary(int S, const pruned_t *ps)
{
    const agg_t *g = ps->g;
    printf("\n%-7s %6s %8s %9s %12s %12s %7s %12s %7s %9s\n", "policy", "pass", "ideal%",
           "measured%", "cycles", "lbuf RTL", "/1G1C", "lbuf model", "/1G1C", "intercore");
    for (int p = 0; p < 3; p++) {
        uint64_t w = 0;
        for (int i = 0; i < NPU_NUM_MODES; i++)
            w += g[p].waves[i];
        double meas = g[p].compute_cycles
                          ? (double)g[p].macs / (4.0 * S * S * (double)g[p].compute_cycles)
                          : 0.0;
        double tr0 = (double)npu_flexsa_traffic(&g[0].model);
        printf("%-7s %3d/%-3d %7.2f %9.2f %12llu %12llu %7.3f %12llu %7.3f %8.1f%%\n", k_name[p],
               g[p].pass, g[p].n, 100 * npu_flexsa_util(&g[p].model), 100 * meas,
               (unsigned long long)g[p].cycles, (unsigned long long)g[p].lbuf_rtl,
               g[0].lbuf_rtl ? (double)g[p].lbuf_rtl / (double)g[0].lbuf_rtl : 0.0,
               (unsigned long long)npu_flexsa_traffic(&g[p].model),
               tr0 > 0 ? (double)npu_flexsa_traffic(&g[p].model) / tr0 : 0.0,
               w ? 100.0 * (double)(g[p].waves[NPU_MODE_FW] + g[p].waves[NPU_MODE_HSW] +
                                    g[p].waves[NPU_MODE_VSW]) / (double)w
                 : 0.0);
    }
    printf("(lbuf RTL: S-element words delivered to the cores x S, padding included; lbuf model:\n"
           " valid elements only; intercore: FW+HSW+VSW share of the RTL's waves; 1G4C runs each\n"
           " four-core group of S x S waves as one ISW WAVE with per-core LDWs)\n");
    printf("model traffic at the paper's blocking (blk_M = 2 x 2S rows per stationary tile, 1G4C "
           "2S per core), / 1G1C: 1G4C %.3f, FlexSA %.3f (paper: about 1.5 and 0.98)\n",
           ps->paper_tr[0] > 0 ? ps->paper_tr[1] / ps->paper_tr[0] : 0.0,
           ps->paper_tr[0] > 0 ? ps->paper_tr[2] / ps->paper_tr[0] : 0.0);
    print_roofline(g);
}

int npu_cmd_flexsa_report(const npu_cfg_t *cfg, const npu_args_t *a)
{
    uint64_t seed = a->seed ? a->seed : 1;
    npu_table_t tab;
    pruned_t ps;
    int failures, err;
    cJSON *rows, *root;
    npu_dram_timing_t tm = npu_cli_dram_timing(cfg, a);
    npu_policy_opts_t o = {a->slicing, &tm, a->max_cycles, 1, 0};

    if (npu_cli_table_open(cfg, a, &tab, k_cols, (int)(sizeof k_cols / sizeof k_cols[0])) != 0)
        return NPU_EXIT_USAGE;
    printf("npu flexsa-report (config %s, S=%d, 2S x 2S = %d PEs; tiles: %s; DRAM %.0f B/cycle); "
           "measured = MACs / (PEs x cycles of the EXEC queue alone)\n\n",
           cfg->name, cfg->s, 4 * cfg->s * cfg->s, npu_args_slicing_name(a->slicing), tm.bytes_per_cycle);
    failures = run_shapes(cfg, &o, seed, &tab);
    memset(&ps, 0, sizeof ps);
    if (run_pruned(cfg, a, &o, seed, &tab, &ps) != 0) {
        cJSON_Delete(npu_table_close(&tab, &err));
        return 1;
    }
    failures += ps.failures;
    print_summary(cfg->s, &ps);
    rows = npu_table_close(&tab, &err);
    if (err)
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
    failures += err;
    printf("%s\n", failures ? "FAIL" : "PASS");
    if (a->json && (root = npu_cli_json_new(cfg, a)) != NULL) {
        cJSON_AddStringToObject(root, "result", failures ? "FAIL" : "PASS");
        cJSON_AddBoolToObject(root, "pass", !failures);
        cJSON_AddNumberToObject(root, "failures", failures);
        cJSON_AddItemToObject(root, "rows", rows);
        npu_cli_json_print(root);
    } else {
        cJSON_Delete(rows);
    }
    return failures ? 1 : 0;
}
