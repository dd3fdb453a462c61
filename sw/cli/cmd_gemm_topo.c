/*
 * cmd_gemm_topo.c - `npu gemm --topology F.csv`: every GEMM of a SCALE-Sim topology on the RTL,
 * bit-exact against the golden model with the counters checked, as `npu gemm -m -n -k` runs one.
 *
 * A GEMM file's layer (name, M, N, K) is C[M][N] = A[M][K] x B[K][N] (topology.h), M times
 * --batch. A conv file's layer runs its forward pass lowered by im2col: M = batch x OH x OW,
 * N = filters, K = C x KH x KW (npu_topo_gemm_shape); a depthwise layer is no single GEMM and is
 * skipped with the reason. Each layer runs on a fresh simulator with its own seeded operands and
 * DRAM stalls (seed + layer index i: `npu gemm -m M -n N -k K --seed <seed + i>` with the same
 * options replays layer i exactly); a layer that fails (too big for the DRAM: NO FIT, checked before its
 * operands are built; a mismatch; a timeout) gets its reason in the table and the next layer
 * runs. Exit status: 0 every layer passed or was skipped, 3 a layer timed out, else 1 a layer
 * failed (NO FIT included: the file is valid, one layer of it did not run).
 * `npu train --topology` of a GEMM file runs each row as a fully connected layer's training:
 * three rows per layer, its forward, dX = dY B^T and dW = A^T dY (pass_shape), each a GEMM with
 * the transposed operand read by the DMA, the same seed per layer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "run/progress.h"
#include "run/scalesim.h"
#include "hw/isa.h"
#include "model/topology.h"
#include "ref/golden.h"
#include "run/report.h"
#include "run/runtime.h"

enum { ROW_SKIP = -100 }; /* beside the NPU_GEMM_* codes */

typedef struct topo_row {
    int M, N, K, rc;
    uint64_t cycles, macs, rd_bytes, wr_bytes;
    double util;
    char why[240]; /* reason of a failure or a skip */
    uint64_t cnt[NPU_NUM_COUNTERS]; /* the run's counters (--reports) */
    unsigned tag[3];                /* A's, B's and C's DMA tags */
    int ta, tb;                     /* A, B stored transposed */
    char name[80];                  /* the layer's name (npu train: with its pass) */
} topo_row_t;

/* The reason of a failed run, one line. */
static void fail_reason(const npu_gemm_report_t *rep, uint64_t max_cycles, char *why, size_t n)
{
    const char *nm;
    switch (rep->rc) {
    case NPU_GEMM_MISMATCH:
        snprintf(why, n, "%zu mismatches, first C[%d][%d] = %ld, expected %ld", rep->mismatches,
                 rep->bad_row, rep->bad_col, (long)rep->bad_got, (long)rep->bad_exp);
        break;
    case NPU_GEMM_COUNTERS: snprintf(why, n, "result bit-exact but %.150s", rep->counters_msg); break;
    case NPU_GEMM_NPU_ERROR:
        nm = npu_error_name(rep->run.err);
        snprintf(why, n, "NPU error %s at pc %u", nm ? nm : "?", (unsigned)rep->run.err_pc);
        break;
    case NPU_GEMM_TIMEOUT:
        if (rep->run.interrupted)
            snprintf(why, n, "stopped by SIGINT after %llu cycles",
                     (unsigned long long)(rep->run.end_cycle - rep->run.start_cycle));
        else
            snprintf(why, n, "no halt after %llu cycles", (unsigned long long)max_cycles);
        break;
    default: snprintf(why, n, "%s", rep->host_msg); break;
    }
}

/* Layer i on a fresh simulator; the row filled. */
static void run_layer(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                      int i, topo_row_t *r)
{
    npu_gemm_report_t rep;
    unsigned beat = (unsigned)npu_cfg_beat(cfg);
    size_t na = (size_t)r->M * (size_t)r->K, nb = (size_t)r->K * (size_t)r->N;
    int16_t *A, *B;
    npu_sim_t *sim;
    npu_args_t g = *a; /* the row's transposes */
    g.trans_a = r->ta;
    g.trans_b = r->tb;
    a = &g;
    r->rc = npu_cli_gemm_dram_check(cfg, a, r->M, r->N, r->K, r->why, sizeof r->why);
    if (r->rc != NPU_GEMM_PASS)
        return; /* before any operand is built */
    A = malloc(na * sizeof *A);
    B = malloc(nb * sizeof *B);
    sim = (A && B) ? npu_cli_open_sim(cfg, a, tm) : NULL;
    if (!sim) {
        r->rc = NPU_GEMM_HOST_ERROR;
        snprintf(r->why, sizeof r->why, A && B ? "cannot open the simulator" : "out of memory");
        free(A);
        free(B);
        return;
    }
    npu_random_operands_dt(npu_cfg_bf16(cfg), r->M, r->N, r->K, a->seed + (uint64_t)i, A, B);
    uint64_t mc = npu_args_max_cycles(a, (uint64_t)r->M * (uint64_t)r->N * (uint64_t)r->K, npu_cfg_pes(cfg));
    r->rc = npu_gemm_run_modes(cfg, sim, r->M, r->N, r->K, A, B, a->trans_a, a->trans_b,
                               npu_args_gemm_modes(a), NULL, mc, &rep);
    r->cycles = rep.run.cnt[NPU_CNT_cycles];
    r->macs = npu_report_useful_macs(rep.run.cnt);
    r->util = npu_report_pe_util(cfg, rep.run.cnt);
    r->rd_bytes = rep.rd_beats * beat;
    r->wr_bytes = rep.wr_beats * beat;
    memcpy(r->cnt, rep.run.cnt, sizeof r->cnt);
    r->tag[0] = rep.args.tag_a ? rep.args.tag_a : NPU_TAG_X; /* the emitter's defaults */
    r->tag[1] = rep.args.tag_b ? rep.args.tag_b : NPU_TAG_W;
    r->tag[2] = rep.args.tag_c ? rep.args.tag_c : NPU_TAG_Y;
    if (r->rc != NPU_GEMM_PASS)
        fail_reason(&rep, mc, r->why, sizeof r->why);
    npu_gemm_report_free(&rep);
    npu_sim_close(sim);
    free(A);
    free(B);
}

static const char *row_result(const topo_row_t *r)
{
    return r->rc == ROW_SKIP ? "SKIP" : npu_gemm_rc_name(r->rc);
}

static void print_row(const char *name, const topo_row_t *r)
{
    printf("%-24s %8d %8d %8d %12llu %6.1f%% %12llu  %s%s%s\n", name, r->M, r->N, r->K,
           (unsigned long long)r->cycles, 100.0 * r->util,
           (unsigned long long)(r->rd_bytes + r->wr_bytes), row_result(r), r->why[0] ? ": " : "",
           r->why);
    fflush(stdout); /* long runs: each row as soon as it is known */
}

static const char *const k_cols[] = {"layer", "M", "N", "K", "cycles", "macs", "pe_util",
                                     "dram_rd_bytes", "dram_wr_bytes", "result", "reason"};

static void table_row(npu_table_t *t, const char *name, const topo_row_t *r)
{
    npu_table_str(t, name);
    npu_table_int(t, r->M);
    npu_table_int(t, r->N);
    npu_table_int(t, r->K);
    npu_table_u64(t, r->cycles);
    npu_table_u64(t, r->macs);
    npu_table_num(t, r->util, "%.6f");
    npu_table_u64(t, r->rd_bytes);
    npu_table_u64(t, r->wr_bytes);
    npu_table_str(t, row_result(r));
    npu_table_str(t, r->why); /* may hold commas: the table quotes it */
    npu_table_end_row(t);
}

/* The totals line over the rows that ran (unit: "layers", or "GEMMs" for npu train's three per
 * layer); returns the exit status. */
static int totals(const npu_cfg_t *cfg, const npu_args_t *a, const topo_row_t *rows, int n,
                  const char *unit)
{
    int pass = 0, fail = 0, skip = 0, timeout = 0;
    uint64_t cyc = 0, macs = 0, bytes = 0;
    for (int i = 0; i < n; i++) {
        pass += rows[i].rc == NPU_GEMM_PASS;
        skip += rows[i].rc == ROW_SKIP;
        fail += rows[i].rc != NPU_GEMM_PASS && rows[i].rc != ROW_SKIP;
        timeout |= rows[i].rc == NPU_GEMM_TIMEOUT;
        if (rows[i].rc == NPU_GEMM_PASS) {
            cyc += rows[i].cycles;
            macs += rows[i].macs;
            bytes += rows[i].rd_bytes + rows[i].wr_bytes;
        }
    }
    if (!a->quiet)
        printf("total: %d %s, %d passed, %d failed, %d skipped; passed %s %llu cycles, "
               "%.1f%% utilization, %llu DRAM bytes\n", n, unit, pass, fail, skip, unit,
               (unsigned long long)cyc,
               cyc ? 100.0 * (double)macs / (4.0 * cfg->s * cfg->s * (double)cyc) : 0.0,
               (unsigned long long)bytes);
    return timeout ? NPU_EXIT_TIMEOUT : fail ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}

/* npu train --topology: pass p of a layer C[M][N] = A[M][K] B[K][N] as a GEMM of the row:
 * fwd the layer; dX[M][K] = dY[M][N] B^T (B read transposed); dW[K][N] = A^T dY (A read
 * transposed). */
static void pass_shape(topo_row_t *r, int p)
{
    int M = r->M, N = r->N, K = r->K;
    if (p == 1) {
        r->N = K, r->K = N, r->tb = 1;
    } else if (p == 2) {
        r->M = K, r->K = M, r->ta = 1;
    }
}

/* Every layer (npu train: its fwd, dX and dW): its row printed (and written to the CSV) as soon
 * as it ran. After SIGINT the runs left are not started (no row each: the command stops, npu
 * exits 130). Returns the rows run. */
static int run_rows(const npu_cfg_t *cfg, const npu_args_t *a, const npu_topology_t *t,
                    topo_row_t *rows, npu_table_t *tab, int passes)
{
    static const char *const pass_name[3] = {"/fwd", "/dx", "/dw"};
    int k = 0;
    for (int i = 0; i < t->n; i++)
        for (int p = 0; p < passes; p++, k++) {
            topo_row_t *r = &rows[k];
            npu_dram_timing_t tm = npu_cli_dram_timing(cfg, a);
            if (npu_progress_interrupted())
                return k;
            tm.seed = a->seed + (uint64_t)i; /* operands and stalls: npu gemm --seed <that> replays */
            snprintf(r->name, sizeof r->name, "%s%s", t->layer[i].name, passes > 1 ? pass_name[p] : "");
            r->ta = passes > 1 ? 0 : a->trans_a;
            r->tb = passes > 1 ? 0 : a->trans_b;
            if (npu_topo_gemm_shape(t, i, &r->M, &r->N, &r->K, r->why, sizeof r->why) != 0) {
                r->rc = ROW_SKIP;
            } else {
                pass_shape(r, passes > 1 ? p : 0);
                npu_run_set_label("%s", r->name);
                run_layer(cfg, a, &tm, i, r);
            }
            if (!a->quiet)
                print_row(r->name, r);
            table_row(tab, r->name, r);
        }
    return k;
}

/* --reports DIR: the passed layers' rows of SCALE-Sim's COMPUTE_REPORT.csv and
 * BANDWIDTH_REPORT.csv (run/scalesim.h: what each column means here), LayerID the topology's
 * row index, then the layer's name; each file starts with the metadata line. 0 or -1. */
static int write_reports(const npu_cfg_t *cfg, const npu_args_t *a, const topo_row_t *rows,
                         int n)
{
    static const char *const cc[] = {"LayerID", "Total Cycles", "Stall Cycles", "Overall Util %",
                                     "Mapping Efficiency %", "Compute Util %", "Layer"};
    static const char *const bc[] = {"LayerID", "Avg IFMAP SRAM BW", "Avg FILTER SRAM BW",
                                     "Avg OFMAP SRAM BW", "Avg IFMAP DRAM BW",
                                     "Avg FILTER DRAM BW", "Avg OFMAP DRAM BW", "Layer"};
    npu_out_meta_t m = npu_cli_meta(cfg, a);
    npu_table_t tc, tb;
    char pc[4096], pb[4096];
    int ec = 0, eb = 0;
    snprintf(pc, sizeof pc, "%s/COMPUTE_REPORT.csv", a->reports);
    snprintf(pb, sizeof pb, "%s/BANDWIDTH_REPORT.csv", a->reports);
    if (npu_cli_out_dir("--reports", a->reports) != 0 || npu_table_open(&tc, pc, 0, &m, cc, 7) != 0)
        return -1;
    if (npu_table_open(&tb, pb, 0, &m, bc, 8) != 0) {
        npu_table_close(&tc, &ec);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        npu_scalesim_t s;
        if (rows[i].rc != NPU_GEMM_PASS)
            continue;
        npu_scalesim_of(cfg, rows[i].cnt, rows[i].tag[0], rows[i].tag[1], rows[i].tag[2], &s);
        npu_table_int(&tc, i);
        npu_table_u64(&tc, s.total_cycles);
        npu_table_u64(&tc, s.stall_cycles);
        npu_table_num(&tc, s.overall_util, "%.4f");
        npu_table_num(&tc, s.mapping_eff, "%.4f");
        npu_table_num(&tc, s.compute_util, "%.4f");
        npu_table_str(&tc, rows[i].name);
        npu_table_end_row(&tc);
        npu_table_int(&tb, i);
        for (int k = 0; k < 6; k++)
            npu_table_num(&tb, k < 3 ? s.sram_bw[k] : s.dram_bw[k - 3], "%.4f");
        npu_table_str(&tb, rows[i].name);
        npu_table_end_row(&tb);
    }
    npu_table_close(&tc, &ec);
    npu_table_close(&tb, &eb);
    return ec || eb ? -1 : 0;
}

/* --json: the verdict and the rows. */
static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, int rc, cJSON *rows)
{
    cJSON *root = npu_cli_json_new(cfg, a);
    if (!root) {
        cJSON_Delete(rows);
        return;
    }
    cJSON_AddStringToObject(root, "topology", a->topology);
    cJSON_AddNumberToObject(root, "batch", a->batch ? a->batch : 1);
    cJSON_AddStringToObject(root, "result", rc == NPU_EXIT_PASS ? "PASS" : rc == NPU_EXIT_TIMEOUT ? "TIMEOUT" : "FAIL");
    cJSON_AddBoolToObject(root, "pass", rc == NPU_EXIT_PASS);
    cJSON_AddItemToObject(root, "rows", rows);
    npu_cli_json_print(root);
}

/* The layers of a topology, each as one GEMM (passes 1) or as its fwd, dX and dW (3). */
static int topology(const npu_cfg_t *cfg, const npu_args_t *a, int passes)
{
    npu_topology_t *t = malloc(sizeof *t);
    topo_row_t *rows = NULL;
    npu_table_t tab;
    cJSON *json;
    int rc = NPU_EXIT_USAGE, err, n_run;
    if (!t)
        return NPU_EXIT_FAIL;
    if (npu_cli_load_topology(a, a->batch ? (int)a->batch : 1, t) != 0)
        goto out;
    rc = NPU_EXIT_FAIL;
    if (!(rows = calloc((size_t)t->n * (size_t)passes, sizeof *rows)))
        goto out;
    if (npu_cli_table_open(cfg, a, &tab, k_cols, (int)(sizeof k_cols / sizeof k_cols[0])) != 0) {
        rc = NPU_EXIT_USAGE;
        goto out;
    }
    if (!a->quiet) {
        printf("npu %s --topology %s: %d %s layers%s, batch %u, seed %llu (config %s)\n",
               passes > 1 ? "train" : "gemm", a->topology, t->n,
               t->format == NPU_TOPO_GEMM ? "GEMM" : "conv (forward, im2col)",
               passes > 1 ? " (fwd, dX = dY B^T, dW = A^T dY each)" : "",
               a->batch ? a->batch : 1, (unsigned long long)a->seed, cfg->name);
        printf("%-24s %8s %8s %8s %12s %7s %12s  %s\n", "layer", "M", "N", "K", "cycles", "util",
               "DRAM bytes", "result");
    }
    n_run = run_rows(cfg, a, t, rows, &tab, passes);
    rc = totals(cfg, a, rows, n_run, passes > 1 ? "GEMMs" : "layers");
    if (a->reports && write_reports(cfg, a, rows, n_run) != 0) {
        fprintf(stderr, "npu: --reports %s: cannot write the reports\n", a->reports);
        rc = rc ? rc : NPU_EXIT_FAIL;
    }
    json = npu_table_close(&tab, &err);
    if (err) {
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
        rc = rc ? rc : NPU_EXIT_FAIL;
    }
    if (a->json)
        print_json(cfg, a, rc, json);
    else
        cJSON_Delete(json);
out:
    free(rows);
    free(t);
    return rc;
}

int npu_cmd_gemm_topology(const npu_cfg_t *cfg, const npu_args_t *a)
{
    return topology(cfg, a, 1);
}

int npu_cmd_train_gemm_topology(const npu_cfg_t *cfg, const npu_args_t *a)
{
    return topology(cfg, a, 3);
}
