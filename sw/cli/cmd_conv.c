/*
 * cmd_conv.c - `npu conv` and `npu train --conv/--topology`: convolution layers on the RTL
 * (conv_run.h), every kernel bit-exact against the golden model, the MAC and zero-operand MAC
 * counters checked against the formulas, and the ecoflow / zeropad speedup per backward kernel.
 *
 * Layers come from --conv (C,H,W,F,KH,KW,stride,pad,dil[,dw], several separated by ';') or a
 * SCALE-Sim convolution topology CSV file (topology.h; npu conv refuses a GEMM topology, it runs
 * with `npu gemm --topology`; npu train hands it to npu_cmd_train_gemm_topology). A topology lists convolutions without the pooling and
 * activations between them, so the layers run independently, each on its own seeded tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "run/progress.h"
#include "ref/conv_golden.h"
#include "compile/conv/conv_layer.h"
#include "compile/conv/conv_slice.h"
#include "model/prog_time.h"
#include "run/conv_run.h"
#include "run/runtime.h"
#include "model/topology.h"

/* A GEMM topology has no convolutions: npu conv refuses it (-1 after the message); npu train
 * trains its rows as fully connected layers (1: npu_cmd_train_gemm_topology runs it). */
static int refuse_gemm_topology(const npu_args_t *a, const npu_topology_t *t)
{
    if (t->format != NPU_TOPO_GEMM)
        return 0;
    if (a->cmd == NPU_CMD_TRAIN)
        return 1;
    fprintf(stderr, "npu: --topology %s is a GEMM topology (Layer, M, N, K), not convolution "
                    "layers: run its GEMMs with 'npu gemm --topology %s' (or train them with "
                    "'npu train --topology %s')\n", a->topology, a->topology, a->topology);
    return -1;
}

/* Layers of --conv or --topology, scaled; 0, -1 after printing the reason, or 1 for a GEMM
 * topology given to npu train (refuse_gemm_topology). */
static int load_layers(const npu_args_t *a, npu_topology_t *t)
{
    char msg[200];
    int batch = a->batch ? (int)a->batch : 1, rc;
    if (a->topology) {
        if (npu_cli_load_topology(a, batch, t) != 0)
            return -1;
        if ((rc = refuse_gemm_topology(a, t)) != 0)
            return rc;
    } else {
        char *spec = malloc(strlen(a->conv) + 1), *tok, *next;
        if (!spec)
            return -1;
        strcpy(spec, a->conv);
        memset(t, 0, sizeof *t);
        for (tok = spec; tok; tok = next) { /* layers separated by ';' (empty ones skipped) */
            npu_topo_layer_t *L = &t->layer[t->n];
            next = strchr(tok, ';');
            if (next)
                *next++ = '\0';
            if (!*tok)
                continue;
            if (t->n == NPU_TOPO_MAX_LAYERS || npu_conv_parse(tok, &L->conv, msg, sizeof msg) != 0) {
                fprintf(stderr, "npu: --conv '%s': %s\n", tok,
                        t->n == NPU_TOPO_MAX_LAYERS ? "too many layers" : msg);
                free(spec);
                return -1;
            }
            L->conv.batch = batch;
            snprintf(L->name, sizeof L->name, "conv%d", t->n);
            t->n++;
        }
        free(spec);
        if (t->n == 0) {
            fprintf(stderr, "npu: --conv has no layer\n");
            return -1;
        }
    }
    for (int i = 0; i < t->n; i++) {
        npu_topo_scale(&t->layer[i].conv, (int)a->scale_c, (int)a->scale_s);
        if (npu_conv_check(&t->layer[i].conv, msg, sizeof msg) != 0) {
            fprintf(stderr, "npu: layer '%s': %s\n", t->layer[i].name, msg);
            return -1;
        }
    }
    return 0;
}

typedef struct run_row {
    int layer, kernel, dataflow;
    npu_conv_report_t rep;
} run_row_t;

static const char *result_name(int rc)
{
    return npu_gemm_rc_name(rc);
}

static void print_header(void)
{
    printf("%-16s %-4s %-8s %10s %12s %12s %12s %7s %10s %10s %10s %5s  %s\n", "layer", "kern",
           "dataflow", "cycles", "MACs", "zero MACs", "formula 0", "useful", "DRAM rd",
           "DRAM wr", "compulsory", "parts", "result");
}

static void print_row(const npu_topology_t *t, const run_row_t *r)
{
    const npu_conv_report_t *p = &r->rep;
    double useful = p->macs ? 100.0 * (double)(p->macs - p->macs_zero) / (double)p->macs : 0.0;
    printf("%-16s %-4s %-8s %10llu %12llu %12llu %12llu %6.1f%% %10llu %10llu %10llu %5d  %s%s%s\n",
           t->layer[r->layer].name, npu_conv_kernel_name(r->kernel),
           r->kernel == NPU_CONV_FWD ? "-" : npu_conv_dataflow_name(r->dataflow),
           (unsigned long long)p->cycles, (unsigned long long)p->macs,
           (unsigned long long)p->macs_zero, (unsigned long long)p->expect.zero, useful,
           (unsigned long long)p->dram_rd_bytes, (unsigned long long)p->dram_wr_bytes,
           (unsigned long long)(p->compulsory_rd_bytes + p->compulsory_wr_bytes), p->parts,
           result_name(p->rc), p->msg[0] ? ": " : "", p->msg);
}

static const char *const k_cols[] = {
    "layer", "batch", "C", "H", "W", "F", "KH", "KW", "stride", "pad", "dil", "depthwise", "kernel",
    "dataflow", "cycles", "exec_busy", "macs", "macs_zero", "formula_macs", "formula_zero",
    "dram_rd_bytes", "dram_wr_bytes", "plan_rd_bytes", "plan_wr_bytes", "compulsory_rd_bytes",
    "compulsory_wr_bytes", "parts", "result"};

static void table_row(npu_table_t *tab, const npu_topology_t *t, const run_row_t *r)
{
    const npu_conv_report_t *p = &r->rep;
    const npu_conv_t *c = &t->layer[r->layer].conv;
    const int geo[] = {c->batch, c->C, c->H, c->W, c->F, c->KH, c->KW, c->stride, c->pad, c->dil,
                       c->depthwise};
    const uint64_t cnt[] = {p->cycles, p->exec_busy, p->macs, p->macs_zero, p->expect.total,
                            p->expect.zero, p->dram_rd_bytes, p->dram_wr_bytes, p->plan_rd_bytes,
                            p->plan_wr_bytes, p->compulsory_rd_bytes, p->compulsory_wr_bytes};
    npu_table_str(tab, t->layer[r->layer].name);
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++)
        npu_table_int(tab, geo[i]);
    npu_table_str(tab, npu_conv_kernel_name(r->kernel));
    npu_table_str(tab, r->kernel == NPU_CONV_FWD ? "-" : npu_conv_dataflow_name(r->dataflow));
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++)
        npu_table_u64(tab, cnt[i]);
    npu_table_int(tab, p->parts);
    npu_table_str(tab, result_name(p->rc));
    npu_table_end_row(tab);
}

/* --json: the rows and the verdict. */
static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, int fails, int timeout,
                       cJSON *rows)
{
    cJSON *root = npu_cli_json_new(cfg, a);
    if (!root) {
        cJSON_Delete(rows);
        return;
    }
    cJSON_AddStringToObject(root, "layers", a->conv ? a->conv : a->topology);
    cJSON_AddStringToObject(root, "result", timeout ? "TIMEOUT" : fails ? "FAIL" : "PASS");
    cJSON_AddBoolToObject(root, "pass", !fails);
    cJSON_AddNumberToObject(root, "failures", fails);
    cJSON_AddItemToObject(root, "rows", rows);
    npu_cli_json_print(root);
}

/* The pick's line: its split (ranges of filters, channels, columns), part 0's bands and groups. */
static void print_pick(const npu_conv_slicing_t *r, int mode)
{
    const npu_conv_cand_t *p = &r->cand[r->pick[mode]], *h = &r->cand[r->heuristic];
    printf("slicing %s: %d candidates; pick %d part%s (%d filter x %d channel x %d column ranges), R %d (%d bands) "
           "x G %d (%d groups), predicted %.0f cycles; conv_plan's %d part%s, R %d x G %d, predicted %.0f\n",
           npu_slice_mode_name(mode), r->n, p->parts, p->parts > 1 ? "s" : "", p->nf, p->nc, p->nw, p->R, p->nbands,
           p->G, p->ngroups, p->cycles[mode] / 65536.0, h->parts, h->parts > 1 ? "s" : "", h->R, h->G,
           h->cycles[mode] / 65536.0);
}

/* --slicing (conv_slice.h): the plan options of kernel k x dataflow df of layer c in *o, *use set
 * when they replace conv_plan's own. heuristic (and no --slicing): conv_plan's (and conv_split's
 * split); auto, burst: the burst-aware pick, noburst the bytes-only pick, split or not; a layer
 * that does not plan at all keeps conv_plan's under auto (its error then) and is refused under
 * burst or noburst (-1, the reason in rep). */
static int slicing_opts(const npu_cfg_t *cfg, const npu_args_t *a, const npu_conv_t *c, int k, int df,
                        npu_conv_plan_opts_t *o, int *use, npu_conv_report_t *rep)
{
    npu_conv_slicing_t r;
    int mode = a->slicing == NPU_GEMM_SLICING_NOBURST ? NPU_SLICE_NOBURST : NPU_SLICE_BURST;
    char msg[200];
    *use = 0;
    if (!a->slicing_set || a->slicing == NPU_GEMM_SLICING_HEURISTIC)
        return 0;
    if (npu_conv_slice(cfg, c, k, df, npu_prog_time, &r, msg, sizeof msg) != 0) {
        if (a->slicing == 0)
            return 0;
        rep->rc = NPU_GEMM_HOST_ERROR;
        snprintf(rep->msg, sizeof rep->msg, "--slicing %s: %.200s", npu_args_slicing_name(a->slicing), msg);
        return -1;
    }
    *o = r.cand[r.pick[mode]].opts;
    *use = 1;
    if (!a->quiet && !a->json)
        print_pick(&r, mode);
    npu_conv_slicing_free(&r);
    return 0;
}

/* Runs the kernels x dataflows of every layer; prints the table, the speedups and the CSV.
 * first_dx: also run dX of layer 0 (npu conv) or not (npu train: the input needs no gradient). */
static int run_all(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                   const npu_topology_t *t, const int *kernels, int nk, const int *dfs, int ndf,
                   int first_dx, npu_conv_io_t *io)
{
    run_row_t *rows = calloc((size_t)t->n * 3 * 2, sizeof *rows);
    int nrows = 0, fails = 0, timeout = 0;
    uint64_t seed = a->seed ? a->seed : 1;
    npu_table_t tab;
    cJSON *rows_json;
    int err;
    if (!rows)
        return 1;
    if (npu_cli_table_open(cfg, a, &tab, k_cols, (int)(sizeof k_cols / sizeof k_cols[0])) != 0) {
        free(rows);
        return NPU_EXIT_USAGE;
    }
    if (!a->quiet)
        print_header();
    for (int l = 0; l < t->n; l++)
        for (int ki = 0; ki < nk; ki++) {
            int k = kernels[ki];
            if (k == NPU_CONV_DX && l == 0 && !first_dx)
                continue;
            /* after SIGINT the runs left are not started (npu exits 130 with the rows so far) */
            for (int di = 0; di < (k == NPU_CONV_FWD ? 1 : ndf) && !npu_progress_interrupted(); di++) {
                run_row_t *r = &rows[nrows++];
                npu_sim_t *sim = npu_cli_open_sim(cfg, a, tm); /* --trace: one run (args.c) */
                npu_run_set_label("%s %s%s%s", t->layer[l].name, npu_conv_kernel_name(k),
                                  k == NPU_CONV_FWD ? "" : " ",
                                  k == NPU_CONV_FWD ? "" : npu_conv_dataflow_name(dfs[di]));
                r->layer = l;
                r->kernel = k;
                r->dataflow = dfs[di];
                if (!sim) {
                    fails++;
                    nrows--;
                    continue;
                }
                npu_conv_plan_opts_t o;
                int use;
                uint64_t mc = npu_args_max_cycles(a, npu_conv_macs(&t->layer[l].conv, k, r->dataflow).total,
                                                  npu_cfg_pes(cfg));
                if (slicing_opts(cfg, a, &t->layer[l].conv, k, r->dataflow, &o, &use, &r->rep) == 0)
                    npu_conv_run_opts_io(cfg, sim, &t->layer[l].conv, k, r->dataflow, use ? &o : NULL,
                                         seed + (uint64_t)l, mc, io, &r->rep);
                npu_sim_close(sim);
                fails += r->rep.rc != NPU_GEMM_PASS;
                timeout |= r->rep.rc == NPU_GEMM_TIMEOUT;
                if (!a->quiet)
                    print_row(t, r);
                else if (r->rep.rc != NPU_GEMM_PASS) /* --quiet keeps the failures */
                    fprintf(stderr, "npu: conv %s %s%s%s: %s%s%s\n", t->layer[l].name,
                            npu_conv_kernel_name(k), k == NPU_CONV_FWD ? "" : " ",
                            k == NPU_CONV_FWD ? "" : npu_conv_dataflow_name(r->dataflow),
                            result_name(r->rep.rc),
                            r->rep.msg[0] ? ": " : "", r->rep.msg);
                table_row(&tab, t, r);
            }
        }
    /* ecoflow over zeropad per layer and backward kernel, next to the MAC ratio (the ideal) */
    for (int i = 0; i < nrows && !a->quiet; i++)
        for (int j = 0; j < nrows; j++) {
            const run_row_t *z = &rows[i], *e = &rows[j];
            if (z->layer != e->layer || z->kernel != e->kernel || z->kernel == NPU_CONV_FWD ||
                z->dataflow != NPU_CONV_ZEROPAD || e->dataflow != NPU_CONV_ECOFLOW ||
                !e->rep.cycles || !e->rep.expect.total)
                continue;
            printf("speedup %-16s %-2s ecoflow/zeropad %6.2fx cycles (MAC ratio %5.2fx)\n",
                   t->layer[z->layer].name, npu_conv_kernel_name(z->kernel),
                   (double)z->rep.cycles / (double)e->rep.cycles,
                   (double)z->rep.expect.total / (double)e->rep.expect.total);
        }
    free(rows);
    if (fails && !a->quiet)
        printf("%d run(s) failed\n", fails);
    rows_json = npu_table_close(&tab, &err);
    if (err)
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
    fails += err;
    if (a->json)
        print_json(cfg, a, fails, timeout, rows_json);
    else
        cJSON_Delete(rows_json);
    return timeout ? 3 : fails ? 1 : 0;
}

/* One layer, one kernel and dataflow on the caller's .npy tensors (args.c checked the options):
 * the usual row, then --out / --save. */
static int run_tensors(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *tm,
                       const npu_topology_t *t, int kernel, int df)
{
    npu_conv_io_t io;
    uint64_t seed = a->seed ? a->seed : 1; /* run_all's seed of layer 0 */
    int rc = npu_cli_conv_inputs(a, &t->layer[0].conv, kernel, &io);
    if (rc == 0) {
        rc = run_all(cfg, a, tm, t, &kernel, 1, &df, 1, 1, &io);
        if (npu_cli_conv_outputs(a, &t->layer[0].conv, kernel, seed, npu_cfg_bf16(cfg), io.filled, &io))
            rc = rc ? rc : NPU_EXIT_FAIL;
    }
    npu_cli_conv_io_free(&io);
    return rc;
}

static int parse_dataflows(const char *s, int dflt_both, int *dfs)
{
    if (!s)
        s = dflt_both ? "both" : "ecoflow";
    if (!strcmp(s, "both")) {
        dfs[0] = NPU_CONV_ZEROPAD;
        dfs[1] = NPU_CONV_ECOFLOW;
        return 2;
    }
    dfs[0] = npu_conv_dataflow_parse(s);
    return dfs[0] < 0 ? 0 : 1;
}

int npu_cmd_conv(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t tm = npu_cli_dram_timing(cfg, a);
    npu_topology_t *t = malloc(sizeof *t);
    int kernels[3], nk = 0, dfs[2], ndf, rc;
    if (!t)
        return 1;
    if (load_layers(a, t) != 0) {
        free(t);
        return 2;
    }
    if (a->kernel && !strcmp(a->kernel, "bwd")) { /* the fused dX + dW (cmd_conv_bwd.c) */
        rc = npu_cmd_conv_bwd(cfg, a, &tm, t);
        free(t);
        return rc;
    }
    if (!a->kernel || !strcmp(a->kernel, "all")) {
        kernels[nk++] = NPU_CONV_FWD;
        kernels[nk++] = NPU_CONV_DX;
        kernels[nk++] = NPU_CONV_DW;
    } else {
        kernels[nk++] = npu_conv_kernel_parse(a->kernel);
    }
    ndf = parse_dataflows(a->dataflow, 1, dfs);
    if (ndf == 0 || kernels[0] < 0) {
        free(t);
        return 2; /* args.c checked the names */
    }
    rc = a->x_file || a->w_file || a->dy_file || a->out || a->save
             ? run_tensors(cfg, a, &tm, t, kernels[0], dfs[0])
             : run_all(cfg, a, &tm, t, kernels, nk, dfs, ndf, 1, NULL);
    free(t);
    return rc;
}

int npu_cmd_train_conv(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t tm = npu_cli_dram_timing(cfg, a);
    npu_topology_t *t = malloc(sizeof *t);
    int kernels[3] = {NPU_CONV_FWD, NPU_CONV_DX, NPU_CONV_DW}, dfs[2], ndf, rc;
    if (!t)
        return 1;
    if ((rc = load_layers(a, t)) != 0) {
        free(t);
        return rc > 0 ? npu_cmd_train_gemm_topology(cfg, a) : 2;
    }
    ndf = parse_dataflows(a->dataflow, 0, dfs);
    if (ndf == 0) {
        free(t);
        return 2;
    }
    rc = run_all(cfg, a, &tm, t, kernels, 3, dfs, ndf, 0, NULL);
    free(t);
    return rc;
}
