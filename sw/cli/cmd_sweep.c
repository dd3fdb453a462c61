/* cmd_sweep.c - `npu sweep`: the estimator over a design space (model/sweep.h), one row per point;
 * with --plan step the step engine's plan, and with --validate K some of its points run on this
 * build's RTL (run/step_probe.h) against their estimates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "model/sweep.h"
#include "ref/net_ref.h"
#include "run/step_probe.h"

/* The step-cycle bound of a validated point (issue 16 acceptance 2: whole iterations within 10%). */
#define VALIDATE_BOUND 0.10

static const char *const k_cols[] = {"s", "spm_kib", "dram_bw", "batch", "ok", "cycles", "stall",
                                     "dram_in_bytes", "dram_out_bytes", "utilization", "samples_per_mcycle",
                                     "validated", "rtl_cycles", "rtl_in_bytes", "rtl_out_bytes", "cycle_err",
                                     "bytes_exact"};
enum { NCOLS_SCHED = 11, NCOLS_STEP = 17 };

/* A point and, when it ran on the RTL, what the RTL measured. */
typedef struct row {
    npu_sweep_point_t p;
    int validated, bytes_exact;
    uint64_t rtl_cycles, rtl_in, rtl_out;
    double err;
    char why[200]; /* a refused point's reason */
} row_t;

static void print_head(int step)
{
    printf("%4s %8s %8s %6s %12s %10s %12s %12s %6s %10s", "S", "SPM KiB", "B/cycle", "batch", "cycles", "stall",
           "DRAM in", "DRAM out", "util", "samples/Mc");
    printf(step ? " %12s %8s\n" : "\n", "RTL cycles", "error");
}

static void print_row(const row_t *r)
{
    const npu_sweep_point_t *p = &r->p;
    printf("%4d %8.0f %8.1f %6d %12llu %10llu %12llu %12llu %5.1f%% %10.1f", p->s, (double)p->spm_bytes / 1024,
           p->bw, p->batch, (unsigned long long)p->cycles, (unsigned long long)p->stall,
           (unsigned long long)p->in_bytes, (unsigned long long)p->out_bytes, 100 * p->utilization,
           p->samples_per_mcycle);
    if (r->validated)
        printf(" %12llu %+7.1f%%%s", (unsigned long long)r->rtl_cycles, 100 * r->err,
               !r->bytes_exact ? "  BYTES DIFFER" : fabs(r->err) > VALIDATE_BOUND ? "  OUT OF BOUND" : "");
    if (!p->ok)
        printf("  (%s)", r->why[0] ? r->why : "a step does not fit the SPM");
    printf("\n");
}

static void table_row(npu_table_t *t, const row_t *r, int step)
{
    const npu_sweep_point_t *p = &r->p;
    npu_table_int(t, p->s);
    npu_table_num(t, (double)p->spm_bytes / 1024, "%.0f");
    npu_table_num(t, p->bw, "%.2f");
    npu_table_int(t, p->batch);
    npu_table_int(t, p->ok);
    npu_table_u64(t, p->cycles);
    npu_table_u64(t, p->stall);
    npu_table_u64(t, p->in_bytes);
    npu_table_u64(t, p->out_bytes);
    npu_table_num(t, p->utilization, "%.4f");
    npu_table_num(t, p->samples_per_mcycle, "%.2f");
    if (step) {
        npu_table_int(t, r->validated);
        npu_table_u64(t, r->rtl_cycles);
        npu_table_u64(t, r->rtl_in);
        npu_table_u64(t, r->rtl_out);
        npu_table_num(t, r->err, "%.5f");
        npu_table_int(t, r->bytes_exact);
    }
    npu_table_end_row(t);
}

/* Writes the rows (only the validated ones when `only_validated`: a shard's), text, CSV, JSON. */
static int output(const npu_cfg_t *cfg, const npu_args_t *a, const row_t *rows, int n, int step, int only_validated)
{
    npu_table_t t;
    int csv_err = 0;
    if (npu_cli_table_open(cfg, a, &t, k_cols, step ? NCOLS_STEP : NCOLS_SCHED) != 0)
        return NPU_EXIT_USAGE;
    if (!a->json && !a->quiet)
        print_head(step);
    for (int i = 0; i < n; i++) {
        if (only_validated && !rows[i].validated)
            continue;
        if (!a->json && !a->quiet)
            print_row(&rows[i]);
        table_row(&t, &rows[i], step);
    }
    cJSON *js = npu_table_close(&t, &csv_err);
    cJSON *root = a->json ? npu_cli_json_new(cfg, a) : NULL;
    if (root) {
        cJSON_AddStringToObject(root, "model", npu_cli_net_name(a));
        cJSON_AddStringToObject(root, "plan", step ? "step" : "sched");
        cJSON_AddNumberToObject(root, "points", n);
        cJSON_AddItemToObject(root, "rows", js);
        npu_cli_json_print(root);
    } else {
        cJSON_Delete(js);
    }
    return csv_err ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}

/* Runs point r (of the rows from r0) on the RTL (its estimate made with o) and compares. 0, or -1 after the message. */
static int validate_point(const npu_cfg_t *cfg, const npu_sweep_step_t *o, const npu_sweep_space_t *sp,
                          const row_t *r0, row_t *r)
{
    npu_step_probe_opts_t po = {o->dims, o->layers, r->p.batch, o->modes, r->p.bw, o->res_banks,
                                sp->given[1] ? r->p.spm_bytes : 0, o->overlap, o->conv, o->n_conv, o->fc, o->n_fc, o->res};
    npu_cfg_t c = npu_sweep_point_cfg(cfg, sp, (int)(r - r0)); /* planned as the estimate was */
    npu_step_probe_t m;
    char why[512];
    if (npu_step_probe(&c, &po, &m, why, sizeof why)) {
        fprintf(stderr, "npu: sweep --validate: the point S=%d spm %.0f KiB bw %.1f batch %d failed on the RTL: %s\n",
                r->p.s, (double)r->p.spm_bytes / 1024, r->p.bw, r->p.batch, why);
        return -1;
    }
    r->validated = 1;
    r->rtl_cycles = m.cycles;
    r->rtl_in = m.rd_bytes;
    r->rtl_out = m.wr_bytes;
    r->bytes_exact = m.rd_bytes == r->p.in_bytes && m.wr_bytes == r->p.out_bytes;
    r->err = ((double)r->p.cycles - (double)m.cycles) / (double)m.cycles;
    return 0;
}

/* What --validate found. */
typedef struct vsum {
    int run, runnable, bad;
    unsigned shard, shards;
    double worst;
} vsum_t;

/* --validate: the sample of the points this build runs (its S), this shard's share (SHARD=i/N in
 * the environment, as make regress), each run and
 * compared, into *v. 0, or -1 out of memory. */
static int validate(const npu_cfg_t *cfg, const npu_args_t *a, const npu_sweep_step_t *o,
                    const npu_sweep_space_t *sp, row_t *rows, int n, vsum_t *v)
{
    int *cand = malloc((size_t)n * sizeof *cand), *pick = malloc((size_t)n * sizeof *pick), nc = 0;
    memset(v, 0, sizeof *v);
    v->shards = 1;
    if (!cand || !pick) {
        free(cand);
        free(pick);
        return -1;
    }
    const char *shard = getenv("SHARD");
    if (shard && *shard)
        sscanf(shard, "%u/%u", &v->shard, &v->shards); /* checked by the parser */
    for (int i = 0; i < n; i++)
        if (rows[i].p.ok && rows[i].p.s == cfg->s)
            cand[nc++] = i;
    v->runnable = nc;
    v->run = npu_sweep_sample(cand, nc, (int)a->validate, (int)v->shard, (int)v->shards, pick);
    if (v->run < 0) {
        free(cand);
        free(pick);
        return -1;
    }
    for (int j = 0; j < v->run; j++) {
        row_t *r = &rows[pick[j]];
        v->bad += validate_point(cfg, o, sp, rows, r) != 0;
        v->bad += r->validated && (!r->bytes_exact || fabs(r->err) > VALIDATE_BOUND);
        v->worst = r->validated && fabs(r->err) > v->worst ? fabs(r->err) : v->worst;
    }
    free(cand);
    free(pick);
    return 0;
}

static void print_vsum(const npu_args_t *a, const vsum_t *v)
{
    if (a->json)
        return;
    fprintf(a->quiet ? stderr : stdout, "validated %d of %d points this build can run (S = its own; shard %u/%u) "
            "on the RTL: %s; step cycles max |error| %.1f%% (bound %.0f%%)\n", v->run, v->runnable, v->shard,
            v->shards, v->bad ? "NOT all bytes exact and within bound" : "bytes exact, all within bound",
            100 * v->worst, 100 * VALIDATE_BOUND);
}

/* Every point: the scheduler's plan (default) or, with --plan step, the step engine's. */
static int estimate_points(const npu_cfg_t *cfg, const npu_net_shape_t *net, const npu_sweep_space_t *sp,
                           const npu_sweep_step_t *o, row_t *rows, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = o ? npu_sweep_step_point(cfg, o, sp, i, &rows[i].p, rows[i].why, sizeof rows[i].why)
                   : npu_sweep_point(cfg, net, sp, i, &rows[i].p);
        if (rc)
            return -1;
    }
    return 0;
}

/* --plan step's options checked and its plan's description into *o (pointing into *sn). 0, or
 * NPU_EXIT_USAGE after the message. */
static int step_setup(const npu_cfg_t *cfg, const npu_args_t *a, const npu_net_shape_t *net, npu_cli_step_net_t *sn,
                      npu_sweep_step_t *o)
{
    if (npu_cli_step_net(net, 1, "sweep", sn)) /* a CNN's batch: each point's */
        return NPU_EXIT_USAGE;
    if (a->resident_banks + 3 > (unsigned)cfg->spm_banks) {
        fprintf(stderr, "npu: sweep --plan step: --resident-banks %u leaves fewer than the kernels' 3 of %d banks\n",
                a->resident_banks, cfg->spm_banks);
        return NPU_EXIT_USAGE;
    }
    *o = (npu_sweep_step_t){sn->dims, net->layers, a->policy, (int)a->resident_banks,
                            npu_cli_res_overlap(a),
                            sn->conv, sn->n_conv, sn->fc, sn->n_fc, sn->res};
    return 0;
}

int npu_cmd_sweep(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_net_shape_t net;
    npu_sweep_space_t sp;
    char why[256];
    static npu_cli_step_net_t sn;
    npu_sweep_step_t o;
    int step = a->plan && !strcmp(a->plan, "step");
    if (npu_cli_parse_net(a, &net))
        return NPU_EXIT_USAGE;
    if (npu_sweep_parse(a->space, cfg, a->batch ? (int)a->batch : 32, &sp, why, sizeof why)) {
        fprintf(stderr, "npu: --space: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    if (step && step_setup(cfg, a, &net, &sn, &o))
        return NPU_EXIT_USAGE;
    int n = npu_sweep_count(&sp), rc;
    row_t *rows = calloc((size_t)n, sizeof *rows);
    if (!rows || estimate_points(cfg, &net, &sp, step ? &o : NULL, rows, n)) {
        free(rows);
        fprintf(stderr, "npu: sweep: out of memory\n");
        return NPU_EXIT_FAIL;
    }
    vsum_t v = {0, 0, 0, 0, 1, 0};
    if (a->validate && validate(cfg, a, &o, &sp, rows, n, &v)) {
        free(rows);
        fprintf(stderr, "npu: sweep: out of memory\n");
        return NPU_EXIT_FAIL;
    }
    rc = output(cfg, a, rows, n, step, a->validate && v.shards > 1);
    if (a->validate)
        print_vsum(a, &v);
    free(rows);
    return rc != NPU_EXIT_PASS ? rc : v.bad ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}
