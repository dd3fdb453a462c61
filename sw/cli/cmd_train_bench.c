/* cmd_train_bench.c - `npu train-bench`: the brief-000 reproduction (Fig. 12 / Fig. 14) on the
 * paper-scaled configurations, from the analytical training model (sw/model/layer_sets.c): per
 * layer and on average over the models, the reduction of forward+backward cycles against the
 * sequential baseline for Interleaving, +Rearrangement (Algorithm 1 and oracle order) and
 * +Partitioning (scheme by the model, and by the KNN selector), beside the paper's numbers.
 * It is a model run (seconds), not an RTL run: `make bench` prints it next to the RTL figures.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "model/layer_sets.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"

static const char *const step_name[NPU_LSET_NSTEPS] = {
    "seq", "interleave", "alg1", "oracle", "part", "part_knn"
};

static double red(double base, double cyc) { return base > 0 ? 100.0 * (1.0 - cyc / base) : 0; }

/* "x.x [p.p]" or "x.x" when the paper gives no number for the step */
static void pct_paper(char *buf, size_t n, double v, double paper)
{
    if (paper >= 0)
        snprintf(buf, n, "%5.1f [%4.1f]", v, paper);
    else
        snprintf(buf, n, "%5.1f       ", v);
}

static void print_row(int first, const npu_lset_row_t *r)
{
    double base = r->cyc[NPU_LSET_BASE];
    int dx = r->L.shape.has_dx;
    if (first)
        printf("  %-8s %-22s %7s %6s %6s %3s | %10s %6s %6s %6s %6s %6s | %-10s %-10s %-4s %-4s\n",
               "model", "layer", "M", "K", "N", "x", "seq cyc", "intl%", "alg1%", "orac%",
               "part%", "knn%", "alg1", "oracle", "part", "knn");
    printf("  %-8s %-22s %7ld %6ld %6ld %3d | %10.0f %6.1f %6.1f %6.1f %6.1f %6.1f | %-10s "
           "%-10s %-4s %-4s\n",
           r->L.model, r->L.name, r->L.shape.M, r->L.shape.K, r->L.shape.N, r->L.count, base,
           red(base, r->cyc[NPU_LSET_INTERLEAVE]), red(base, r->cyc[NPU_LSET_ALG1]),
           red(base, r->cyc[NPU_LSET_ORACLE]), red(base, r->cyc[NPU_LSET_PART]),
           red(base, r->cyc[NPU_LSET_PART_KNN]),
           dx ? npu_order_name((npu_order_t)r->alg1_order) : "-",
           dx ? npu_order_name((npu_order_t)r->oracle_order) : "-",
           dx ? npu_part_name((npu_part_t)r->label) : "-",
           dx ? npu_part_name((npu_part_t)r->knn_pred) : "-");
}

static void table_row(npu_table_t *t, const char *name, int acc_bytes, const npu_lset_row_t *r)
{
    int dx = r->L.shape.has_dx;
    npu_table_str(t, name);
    npu_table_int(t, acc_bytes);
    npu_table_str(t, r->L.model);
    npu_table_str(t, r->L.name);
    npu_table_int(t, r->L.shape.M);
    npu_table_int(t, r->L.shape.K);
    npu_table_int(t, r->L.shape.N);
    npu_table_int(t, r->L.count);
    npu_table_int(t, dx);
    for (int s = 0; s < NPU_LSET_NSTEPS; s++)
        npu_table_num(t, r->cyc[s], "%.0f");
    npu_table_str(t, dx ? npu_order_name((npu_order_t)r->alg1_order) : "");
    npu_table_str(t, dx ? npu_order_name((npu_order_t)r->oracle_order) : "");
    npu_table_str(t, dx ? npu_part_name((npu_part_t)r->label) : "");
    npu_table_str(t, dx ? npu_part_name((npu_part_t)r->knn_pred) : "");
    npu_table_end_row(t);
}

/* Per model and on average, KNN accuracy, Algorithm 1 against the oracle (mean gap in points
 * over the ndx layers with dX), and the one machine-readable line bench.sh greps. */
static void print_summary(const char *name, const npu_lset_cfg_t *c, const npu_lset_bench_t *b,
                          double gap, int ndx)
{
    char s1[32], s2[32], s3[32], s4[32];
    printf("  reduction of fwd+bwd cycles vs the sequential baseline, %% per model [paper]:\n");
    printf("    %-10s %12s %12s %12s %12s %12s\n", "model", "interleave", "+rearr alg1",
           "+rearr orac", "+part", "+part knn");
    for (int m = 0; m < b->nmodels; m++)
        printf("    %-10s %12.1f %12.1f %12.1f %12.1f %12.1f\n", b->model[m],
               b->red_model[m][NPU_LSET_INTERLEAVE], b->red_model[m][NPU_LSET_ALG1],
               b->red_model[m][NPU_LSET_ORACLE], b->red_model[m][NPU_LSET_PART],
               b->red_model[m][NPU_LSET_PART_KNN]);
    pct_paper(s1, sizeof s1, b->red[NPU_LSET_INTERLEAVE], c->paper[0]);
    pct_paper(s2, sizeof s2, b->red[NPU_LSET_ALG1], c->paper[1]);
    pct_paper(s3, sizeof s3, b->red[NPU_LSET_ORACLE], c->paper[3]);
    pct_paper(s4, sizeof s4, b->red[NPU_LSET_PART], c->paper[2]);
    printf("    %-10s %12s %12s %12s %12s %12.1f\n", "MEAN", s1, s2, s3, s4, b->red[NPU_LSET_PART_KNN]);
    printf("  KNN selector accuracy (1000 random 80/20 splits): k=1 %.1f%%, k=3 %.1f%%, k=5 %.1f%%\n",
           100 * b->knn_acc[0], 100 * b->knn_acc[1], 100 * b->knn_acc[2]);
    printf("  Algorithm 1 = oracle order on %d of %d layers with dX; mean gap %.2f points\n",
           b->alg1_vs_oracle, ndx, ndx ? gap / ndx : 0.0);
    printf("train-bench %s acc_bytes=%d", name, c->acc_bytes);
    for (int s = 1; s < NPU_LSET_NSTEPS; s++)
        printf(" %s=%.2f", step_name[s], b->red[s]);
    printf(" paper_interleave=%.1f paper_alg1=%.1f paper_part=%.1f knn_k1=%.3f\n", c->paper[0],
           c->paper[1], c->paper[2], b->knn_acc[0]);
}

static int bench_one(const char *name, const npu_args_t *a, npu_table_t *tab)
{
    static npu_lset_row_t rows[NPU_LSET_MAX];
    npu_lset_cfg_t c;
    npu_lset_bench_t b;
    double gap = 0;
    int ndx = 0;
    if (npu_lset_config(name, &c) != 0) {
        fprintf(stderr, "npu: train-bench: unknown configuration '%s'\n", name);
        return 2;
    }
    if (a->acc_bytes)
        c.acc_bytes = (int)a->acc_bytes;
    if (npu_lset_bench(&c, rows, NPU_LSET_MAX, &b) != 0) {
        fprintf(stderr, "npu: train-bench: the model failed on configuration '%s'\n", name);
        return 1;
    }
    printf("== %s: array %dx%d (%s), SPM %ld KiB, DRAM %d B/cycle, batch %d, partials %d B, "
           "%d layer shapes of %d models\n",
           name, 2 * c.S, 2 * c.S, c.cores > 1 ? "four SxS cores" : "one FlexSA array",
           c.spm_bytes / 1024, c.dram_bw, c.batch, c.acc_bytes, b.nrows, b.nmodels);
    for (int i = 0; i < b.nrows; i++) {
        const npu_lset_row_t *r = &rows[i];
        if (r->L.shape.has_dx) {
            gap += red(r->cyc[NPU_LSET_BASE], r->cyc[NPU_LSET_ORACLE]) -
                   red(r->cyc[NPU_LSET_BASE], r->cyc[NPU_LSET_ALG1]);
            ndx++;
        }
        if (!a->quiet)
            print_row(i == 0, r);
        table_row(tab, name, c.acc_bytes, r);
    }
    print_summary(name, &c, &b, gap, ndx);
    return 0;
}

/* The table's columns: the steps' cycles in the middle. */
static int columns(const char **cols)
{
    static const char *const head[] = {"config", "acc_bytes", "model", "layer", "M", "K", "N",
                                       "count", "has_dx"};
    static const char *const tail[] = {"alg1_order", "oracle_order", "part_label", "knn_pred"};
    static char steps[NPU_LSET_NSTEPS][32];
    int n = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cols[n++] = head[i];
    for (int s = 0; s < NPU_LSET_NSTEPS; s++) {
        snprintf(steps[s], sizeof steps[s], "cycles_%s", step_name[s]);
        cols[n++] = steps[s];
    }
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        cols[n++] = tail[i];
    return n;
}

int npu_cmd_train_bench(const npu_cfg_t *cfg, const npu_args_t *a)
{
    /* a model run on the paper-scaled configurations, not this build's (cfg: the metadata) */
    static const char *const all[] = { "edge", "server", "server4" };
    const char *one = a->bench_set && strcmp(a->bench_set, "all") ? a->bench_set : NULL;
    const char *cols[9 + NPU_LSET_NSTEPS + 4];
    npu_table_t tab;
    cJSON *rows, *root;
    int rc = 0, err;
    if (npu_cli_table_open(cfg, a, &tab, cols, columns(cols)) != 0)
        return NPU_EXIT_USAGE;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && !rc; i++)
        if (!one || !strcmp(one, all[i]))
            rc = bench_one(all[i], a, &tab);
    rows = npu_table_close(&tab, &err);
    if (err) {
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
        rc = rc ? rc : 1;
    }
    if (a->json && (root = npu_cli_json_new(cfg, a)) != NULL) {
        cJSON_AddStringToObject(root, "set", a->bench_set ? a->bench_set : "all");
        cJSON_AddBoolToObject(root, "pass", rc == 0);
        cJSON_AddItemToObject(root, "rows", rows);
        npu_cli_json_print(root);
    } else {
        cJSON_Delete(rows);
    }
    return rc;
}
