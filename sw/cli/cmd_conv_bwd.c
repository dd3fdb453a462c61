/*
 * cmd_conv_bwd.c - `npu conv --kernel bwd`: the fused convolution backward (run/conv_bwd_run.h)
 * of every layer, beside the dx and dw kernels run separately (ecoflow): the cycles of each and
 * their ratio, the DMA bytes per tag of the fused program, the dY bytes it reads (once) against
 * the two kernels' (twice or more). A layer the fused kernel does not take is a failed row naming
 * the limit. int16 configurations only (the bf16 conv golden model is not there yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "model/topology.h"
#include "run/conv_bwd_run.h"
#include "run/conv_run.h"
#include "run/progress.h"
#include "run/report.h"
#include "run/runtime.h"

typedef struct bwd_row {
    npu_conv_bwd_report_t bwd;
    npu_conv_report_t sep[2]; /* dx, dw (ecoflow) */
    int fails;
} bwd_row_t;

static const char *const k_cols[] = {
    "layer", "batch", "C", "H", "W", "F", "KH", "KW", "stride", "pad", "dil", "cycles_bwd", "cycles_dx",
    "cycles_dw", "ratio_bwd_to_separate", "macs", "rd_x", "rd_w", "rd_dy", "wr_dx", "wr_dw", "rd_dy_separate",
    "dy_compulsory", "result", "msg"};

/* The row's verdict: the fused run's, else the first failing separate run's. */
static const char *row_result(const bwd_row_t *r, const char **msg)
{
    *msg = r->bwd.msg;
    for (int k = 0; k < 2 && r->bwd.rc == NPU_GEMM_PASS; k++)
        if (r->sep[k].rc != NPU_GEMM_PASS) {
            *msg = r->sep[k].msg;
            return npu_gemm_rc_name(r->sep[k].rc);
        }
    return npu_gemm_rc_name(r->bwd.rc);
}

static uint64_t sep_dy(const bwd_row_t *r)
{
    return r->sep[0].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY] + r->sep[1].cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DY];
}

static double ratio(const bwd_row_t *r)
{
    uint64_t s = r->sep[0].cycles + r->sep[1].cycles;
    return s ? (double)r->bwd.cycles / (double)s : 0.0;
}

static void print_row(const char *name, const bwd_row_t *r)
{
    const npu_conv_bwd_report_t *b = &r->bwd;
    const char *msg, *res = row_result(r, &msg);
    printf("%-12s %10llu %10llu %10llu %6.2f %9llu %9llu %9llu %9llu %9llu %9llu %10llu  %s%s%s\n", name,
           (unsigned long long)b->cycles, (unsigned long long)r->sep[0].cycles, (unsigned long long)r->sep[1].cycles,
           ratio(r), (unsigned long long)b->rd[NPU_TAG_X], (unsigned long long)b->rd[NPU_TAG_W],
           (unsigned long long)b->rd[NPU_TAG_DY], (unsigned long long)b->wr[NPU_TAG_DX],
           (unsigned long long)b->wr[NPU_TAG_DW], (unsigned long long)b->comp_rd[NPU_TAG_DY],
           (unsigned long long)sep_dy(r), res, msg[0] ? ": " : "", msg);
}

static void table_row(npu_table_t *tab, const char *name, const npu_conv_t *c, const bwd_row_t *r)
{
    const npu_conv_bwd_report_t *b = &r->bwd;
    const int geo[] = {c->batch, c->C, c->H, c->W, c->F, c->KH, c->KW, c->stride, c->pad, c->dil};
    const char *msg, *res = row_result(r, &msg);
    npu_table_str(tab, name);
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++)
        npu_table_int(tab, geo[i]);
    npu_table_u64(tab, b->cycles);
    npu_table_u64(tab, r->sep[0].cycles);
    npu_table_u64(tab, r->sep[1].cycles);
    npu_table_num(tab, ratio(r), "%.4f");
    npu_table_u64(tab, b->macs);
    npu_table_u64(tab, b->rd[NPU_TAG_X]);
    npu_table_u64(tab, b->rd[NPU_TAG_W]);
    npu_table_u64(tab, b->rd[NPU_TAG_DY]);
    npu_table_u64(tab, b->wr[NPU_TAG_DX]);
    npu_table_u64(tab, b->wr[NPU_TAG_DW]);
    npu_table_u64(tab, sep_dy(r));
    npu_table_u64(tab, b->comp_rd[NPU_TAG_DY]);
    npu_table_str(tab, res);
    npu_table_str(tab, msg);
    npu_table_end_row(tab);
}

/* --json: every counter of the layer's fused run (the tokens' waits, the array's busy cycles). */
static void add_counters(cJSON *arr, const char *name, const npu_conv_bwd_report_t *b)
{
    cJSON *o = cJSON_CreateObject(), *c;
    if (!arr || !o) {
        cJSON_Delete(o);
        return;
    }
    cJSON_AddStringToObject(o, "layer", name);
    c = cJSON_AddObjectToObject(o, "counters");
    for (unsigned i = 0; c && i < NPU_NUM_COUNTERS; i++)
        cJSON_AddNumberToObject(c, npu_counter_name(i), (double)b->cnt[i]);
    cJSON_AddItemToArray(arr, o);
}

/* One layer: the fused program, then dx and dw (ecoflow) for the comparison, each on a fresh
 * model with the same seed. */
static void run_layer(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                      const npu_topo_layer_t *L, uint64_t seed, bwd_row_t *r)
{
    const npu_conv_t *c = &L->conv;
    npu_sim_t *sim = npu_cli_open_sim(cfg, a, tm);
    memset(r, 0, sizeof *r);
    npu_run_set_label("%s bwd fused", L->name);
    if (!sim) {
        r->bwd.rc = NPU_GEMM_HOST_ERROR;
        snprintf(r->bwd.msg, sizeof r->bwd.msg, "no simulator");
        r->fails = 1;
        return;
    }
    npu_conv_bwd_run(cfg, sim, c, seed, a->max_cycles, NULL, &r->bwd);
    npu_sim_close(sim);
    for (int k = 0; k < 2 && r->bwd.rc == NPU_GEMM_PASS && !npu_progress_interrupted(); k++) {
        sim = npu_cli_open_sim(cfg, a, tm);
        npu_run_set_label("%s %s ecoflow", L->name, k ? "dw" : "dx");
        if (!sim) {
            r->sep[k].rc = NPU_GEMM_HOST_ERROR;
            break;
        }
        npu_conv_run(cfg, sim, c, k ? NPU_CONV_DW : NPU_CONV_DX, NPU_CONV_ECOFLOW, seed, a->max_cycles, &r->sep[k]);
        npu_sim_close(sim);
    }
    r->fails = r->bwd.rc != NPU_GEMM_PASS || r->sep[0].rc != NPU_GEMM_PASS || r->sep[1].rc != NPU_GEMM_PASS;
}

int npu_cmd_conv_bwd(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                     const npu_topology_t *t)
{
    uint64_t seed = a->seed ? a->seed : 1;
    int fails = 0, timeout = 0, err;
    npu_table_t tab;
    cJSON *rows, *cnts = cJSON_CreateArray();
    if (npu_cli_table_open(cfg, a, &tab, k_cols, (int)(sizeof k_cols / sizeof k_cols[0])) != 0)
        return NPU_EXIT_USAGE;
    if (!a->quiet)
        printf("%-12s %10s %10s %10s %6s %9s %9s %9s %9s %9s %9s %10s  %s\n", "layer", "bwd cyc", "dx cyc",
               "dw cyc", "ratio", "rd X", "rd W", "rd dY", "wr dX", "wr dW", "dY once", "dY dx+dw", "result");
    for (int l = 0; l < t->n && !npu_progress_interrupted(); l++) {
        bwd_row_t r;
        run_layer(cfg, a, tm, &t->layer[l], seed + (uint64_t)l, &r);
        fails += r.fails;
        timeout |= r.bwd.rc == NPU_GEMM_TIMEOUT || r.sep[0].rc == NPU_GEMM_TIMEOUT || r.sep[1].rc == NPU_GEMM_TIMEOUT;
        if (!a->quiet)
            print_row(t->layer[l].name, &r);
        else if (r.fails) {
            const char *msg, *res = row_result(&r, &msg);
            fprintf(stderr, "npu: conv %s bwd: %s%s%s\n", t->layer[l].name, res, msg[0] ? ": " : "", msg);
        }
        table_row(&tab, t->layer[l].name, &t->layer[l].conv, &r);
        add_counters(cnts, t->layer[l].name, &r.bwd);
    }
    rows = npu_table_close(&tab, &err);
    if (err)
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
    fails += err;
    if (a->json) {
        cJSON *root = npu_cli_json_new(cfg, a);
        if (root) {
            cJSON_AddStringToObject(root, "layers", a->conv ? a->conv : a->topology);
            cJSON_AddStringToObject(root, "kernel", "bwd");
            cJSON_AddStringToObject(root, "result", timeout ? "TIMEOUT" : fails ? "FAIL" : "PASS");
            cJSON_AddBoolToObject(root, "pass", !fails);
            cJSON_AddNumberToObject(root, "failures", fails);
            cJSON_AddItemToObject(root, "rows", rows);
            cJSON_AddItemToObject(root, "counters", cnts);
            npu_cli_json_print(root);
            return timeout ? 3 : fails ? 1 : 0;
        }
    }
    cJSON_Delete(rows);
    cJSON_Delete(cnts);
    return timeout ? 3 : fails ? 1 : 0;
}
