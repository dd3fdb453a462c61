/* cmd_train.c - `npu train`: one MLP training step on the RTL (train_run.h), per-layer table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "compile/gemm/gemm_emit.h"
#include "run/runtime.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"
#include "run/train_run.h"

static const char *policy_name(int p)
{
    return p == NPU_EMIT_FLEXSA ? "flexsa" : p == NPU_EMIT_1G4C ? "1g4c" : "1g1c";
}

/* The MLP, its order and partitioning from the options; 0, or 2 after printing the reason. */
static int train_request(const npu_args_t *a, int batch, npu_mlp_t *mlp, npu_order_t *order)
{
    if (npu_mlp_parse(a->layers, batch, mlp) != 0) {
        fprintf(stderr, "npu: --layers needs 2 to %d sizes in 1..65535 separated by commas, not '%s'\n",
                NPU_TRAIN_MAX_LAYERS + 1, a->layers);
        return 2;
    }
    mlp->tile = (int)a->tile;
    *order = NPU_ORDER_SEQ;
    if (a->order) {
        int o = npu_order_parse(a->order);
        if (o < 0)
            return 2; /* args.c already checked the name */
        *order = (npu_order_t)o;
    }
    if (a->partition) {
        /* kseq, mseq, nseq: the K (M, N) split with its parts in sequence on the whole array (no
         * part per core) */
        int kseq = !strcmp(a->partition, "kseq"), mseq = !strcmp(a->partition, "mseq"),
            nseq = !strcmp(a->partition, "nseq");
        int p = kseq ? NPU_PART_K : mseq ? NPU_PART_M : nseq ? NPU_PART_N : npu_part_parse(a->partition);
        mlp->parts_in_sequence = kseq || mseq || nseq;
        if (p < 0)
            return 2; /* args.c already checked the name */
        mlp->partition = (npu_part_t)p;
    }
    return 0;
}

static void print_header(const npu_cfg_t *cfg, const npu_args_t *a, int batch, npu_order_t order,
                         const npu_mlp_t *mlp, uint64_t seed)
{
    printf("npu train: MLP %s, batch %d, order %s, partition %s, policy %s, seed %llu "
           "(config %s)\n", a->layers, batch, npu_order_name(order),
           npu_part_name(mlp->partition), policy_name(a->policy), (unsigned long long)seed,
           cfg->name);
    printf("%-5s %6s %6s %6s %-10s %-7s %10s %10s %10s %6s %10s %10s %9s %9s %6s\n", "layer",
           "M", "K", "N", "order", "part", "fwd cyc", "dx cyc", "dw cyc", "util%", "dY rd B",
           "dY once B", "dY reads", "acc adds", "result");
}

/* The table's part column: scheme x parts, s when the parts ran as separate schedules, c when
 * one part per core; "none" for a layer with dX and no split, "-" for layer 0 (not split). */
static void part_label(const npu_train_layer_result_t *L, char *part, size_t n)
{
    snprintf(part, n, "-");
    const npu_lower_plan_t *lw = &L->lower;
    if (lw->part != NPU_PART_NONE)
        snprintf(part, n, "%sx%d%s", npu_part_name(lw->part), lw->nparts,
                 lw->form == NPU_LOWER_SUBGEMMS ? "s" : lw->form == NPU_LOWER_CORES ? "c" : "");
    else if (L->shape.has_dx)
        snprintf(part, n, "none");
}

static void print_layer(const npu_cfg_t *cfg, int i, const npu_train_layer_result_t *L)
{
    uint64_t cyc = 0, macs = 0;
    int pass = 1;
    char dx[24] = "-", dw[24], part[16]; /* layer 0 has no dX; a fused program counts in dx */
    for (int p = 0; p < NPU_NUM_PASSES; p++)
        if (L->ran[p]) {
            cyc += L->cycles[p];
            macs += L->macs[p];
            pass = pass && L->rc[p] == NPU_GEMM_PASS;
        }
    double util = cyc ? (double)macs / (4.0 * cfg->s * cfg->s * (double)cyc) : 0.0;
    if (L->ran[NPU_PASS_DX])
        snprintf(dx, sizeof dx, "%llu", (unsigned long long)L->cycles[NPU_PASS_DX]);
    snprintf(dw, sizeof dw, "%llu", (unsigned long long)L->cycles[NPU_PASS_DW]);
    if (L->lower.form != NPU_LOWER_GEMMS)
        snprintf(dw, sizeof dw, "(fused)");
    part_label(L, part, sizeof part);
    printf("%-5d %6ld %6ld %6ld %-10s %-7s %10llu %10s %10s %6.1f %10llu %10llu %9.2f %9ld %6s\n",
           i, L->shape.M, L->shape.K, L->shape.N, npu_order_name(L->lower.order), part,
           (unsigned long long)L->cycles[NPU_PASS_FWD], dx, dw,
           100 * util, (unsigned long long)L->dy_rd_bytes,
           (unsigned long long)L->dy_compulsory,
           L->dy_compulsory ? (double)L->dy_rd_bytes / (double)L->dy_compulsory : 0.0,
           L->accum_adds, pass ? "PASS" : "FAIL");
}

static const char *const k_cols[] = {
    "layer", "M", "K", "N", "order", "policy", "pass", "cycles", "macs", "result", "rd_X", "rd_W",
    "rd_DY", "rd_PARTIAL", "wr_Y", "wr_DX", "wr_DW", "wr_PARTIAL", "dy_rd_bytes", "dy_compulsory",
    "partition", "parts", "accum_adds", "noc_h_flits", "noc_v_flits", "noc_deliveries",
    "noc_mcast_saved"};

/* One table row (CSV line, JSON row) per pass the layer ran. */
static void table_layer(npu_table_t *t, int i, const npu_train_layer_result_t *L, int policy)
{
    static const int rd[] = {NPU_TAG_X, NPU_TAG_W, NPU_TAG_DY, NPU_TAG_PARTIAL};
    static const int wr[] = {NPU_TAG_Y, NPU_TAG_DX, NPU_TAG_DW, NPU_TAG_PARTIAL};
    for (int p = 0; p < NPU_NUM_PASSES; p++) {
        if (!L->ran[p])
            continue;
        npu_table_int(t, i);
        npu_table_int(t, L->shape.M);
        npu_table_int(t, L->shape.K);
        npu_table_int(t, L->shape.N);
        npu_table_str(t, npu_order_name(L->lower.order));
        npu_table_str(t, policy_name(policy));
        npu_table_str(t, p == 0 ? "fwd" : p == 1 ? "dx" : "dw");
        npu_table_u64(t, L->cycles[p]);
        npu_table_u64(t, L->macs[p]);
        npu_table_str(t, npu_gemm_rc_name(L->rc[p]));
        for (int j = 0; j < 4; j++)
            npu_table_u64(t, L->rd_bytes[rd[j]]);
        for (int j = 0; j < 4; j++)
            npu_table_u64(t, L->wr_bytes[wr[j]]);
        npu_table_u64(t, L->dy_rd_bytes);
        npu_table_u64(t, L->dy_compulsory);
        npu_table_str(t, npu_part_name(L->lower.part));
        npu_table_int(t, L->lower.nparts ? L->lower.nparts : 1);
        npu_table_int(t, L->accum_adds);
        npu_table_u64(t, L->noc_h_flits[p]);
        npu_table_u64(t, L->noc_v_flits[p]);
        npu_table_u64(t, L->noc_deliveries[p]);
        npu_table_u64(t, L->noc_mcast_saved[p]);
        npu_table_end_row(t);
    }
}

/* --order oracle: what each order cost per layer, and Algorithm 1's pick. */
static void print_oracle(const npu_mlp_t *mlp, const npu_train_result_t *r)
{
    for (int i = mlp->layers - 1; i >= 1; i--) {
        const npu_train_layer_result_t *L = &r->layer[i];
        npu_order_t alg = (npu_order_t)npu_order_resolve(NPU_ORDER_AUTO, L->shape.M, L->shape.K,
                                                              L->shape.N);
        uint64_t best = L->cycles[NPU_PASS_DX] + L->cycles[NPU_PASS_DW];
        printf("layer %d backward cycles: seq %llu, interleave %llu, dxmajor %llu, dwmajor %llu; "
               "oracle %s; Algorithm 1 picks %s (%+.1f%%)\n", i,
               (unsigned long long)L->order_cycles[NPU_ORDER_SEQ],
               (unsigned long long)L->order_cycles[NPU_ORDER_INTERLEAVE],
               (unsigned long long)L->order_cycles[NPU_ORDER_DXMAJOR],
               (unsigned long long)L->order_cycles[NPU_ORDER_DWMAJOR], npu_order_name(L->lower.order),
               npu_order_name(alg),
               best ? 100.0 * ((double)L->order_cycles[alg] - (double)best) / (double)best : 0.0);
    }
}

static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, int batch, npu_order_t order,
                       const npu_mlp_t *mlp, const npu_train_result_t *r, cJSON *rows)
{
    cJSON *root = npu_cli_json_new(cfg, a);
    if (!root) {
        cJSON_Delete(rows);
        return;
    }
    cJSON_AddStringToObject(root, "layers", a->layers);
    cJSON_AddNumberToObject(root, "batch", batch);
    cJSON_AddStringToObject(root, "order", npu_order_name(order));
    cJSON_AddStringToObject(root, "partition", npu_part_name(mlp->partition));
    cJSON_AddStringToObject(root, "policy", policy_name(a->policy));
    cJSON_AddStringToObject(root, "result", r->rc == 0 ? "PASS" : "FAIL");
    cJSON_AddBoolToObject(root, "pass", r->rc == 0);
    cJSON_AddStringToObject(root, "error", r->rc ? r->msg : "");
    cJSON_AddNumberToObject(root, "cycles", (double)r->cycles);
    cJSON_AddItemToObject(root, "rows", rows);
    npu_cli_json_print(root);
}

/* The table, the CSV, the oracle's lines and the failures of a finished step; with --json the
 * JSON object (rows, result, cycles) instead of the text. 0, or -1 when the CSV failed. */
static int report(const npu_cfg_t *cfg, const npu_args_t *a, int batch, npu_order_t order,
                  const npu_mlp_t *mlp, uint64_t seed, const npu_train_result_t *r)
{
    npu_table_t t;
    int text = !a->json, err;
    cJSON *rows;
    if (npu_cli_table_open(cfg, a, &t, k_cols, (int)(sizeof k_cols / sizeof k_cols[0])) != 0)
        return -1;
    if (text && !a->quiet)
        print_header(cfg, a, batch, order, mlp, seed);
    for (int i = mlp->layers - 1; i >= 0; i--) {
        if (text && !a->quiet)
            print_layer(cfg, i, &r->layer[i]);
        table_layer(&t, i, &r->layer[i], a->policy);
    }
    if (order == NPU_ORDER_ORACLE && text && !a->quiet)
        print_oracle(mlp, r);
    for (int i = mlp->layers - 1; i >= 0; i--)
        if (r->layer[i].msg[0])
            fprintf(text ? stdout : stderr, "layer %d: %s\n", i, r->layer[i].msg);
    if (text)
        printf("%s train step: %llu cycles%s%s\n", r->rc == 0 ? "PASS" : "FAIL",
               (unsigned long long)r->cycles, r->rc ? ": " : "", r->rc ? r->msg : "");
    rows = npu_table_close(&t, &err);
    if (a->json)
        print_json(cfg, a, batch, order, mlp, r, rows);
    if (err)
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
    return err ? -1 : 0;
}

int npu_cmd_train(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t t = npu_cli_dram_timing(cfg, a);
    npu_mlp_t mlp;
    npu_order_t order;
    npu_train_result_t *r;
    npu_train_io_t io;
    npu_sim_t *sim = NULL;
    int batch = a->batch ? (int)a->batch : 16, rc;
    uint64_t seed = a->seed ? a->seed : 1;

    if (!a->layers)
        return npu_cmd_train_conv(cfg, a);
    if ((rc = train_request(a, batch, &mlp, &order)) != 0)
        return rc;
    if ((rc = npu_cli_train_inputs(a, &mlp, &io)) != 0) {
        npu_cli_train_io_free(&io);
        return rc;
    }
    r = calloc(1, sizeof *r);
    if (!r || !(sim = npu_cli_open_sim(cfg, a, &t))) {
        npu_cli_train_io_free(&io);
        free(r);
        return 1;
    }
    rc = npu_train_step_io(cfg, sim, &mlp, order, a->policy, seed, a->max_cycles, &io, r);
    npu_sim_close(sim);
    if (rc < 0) {
        fprintf(stderr, "npu: train: %s\n", r->msg);
        rc = 1;
    } else {
        rc = report(cfg, a, batch, order, &mlp, seed, r) == 0 && r->rc == 0 ? 0 : 1;
        if (npu_cli_train_outputs(a, &mlp, &io) != 0)
            rc = 1;
    }
    npu_cli_train_io_free(&io);
    free(r);
    return rc;
}
