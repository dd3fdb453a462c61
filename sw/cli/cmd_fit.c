/* cmd_fit.c - `npu fit`: trains an MLP on the digits, one report line per epoch (run/fit.h). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fork */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "compile/step/step_res.h"
#include "hw/isa.h"
#include "io/file.h"
#include "run/fit.h"
#include "run/step_run.h"

static const char *const k_cols[] = {
    "epoch", "loss", "ref_loss", "loss_rel_diff", "train_acc", "test_acc", "ref_test_acc",
    "cycles", "cycles_per_sample", "eval_cycles", "kernels", "kernel_fail", "wall_s",
    "step_dram_rd_bytes", "step_dram_wr_bytes", "step_host_bytes", "steps", "train_wall_s"};
enum { NCOLS = (int)(sizeof k_cols / sizeof k_cols[0]) };

typedef struct fit_cli {
    const npu_args_t *a;
    npu_table_t t;
    int engine;
} fit_cli_t;

static uint64_t sum_tags(const uint64_t *v)
{
    uint64_t s = 0;
    for (unsigned g = 1; g < NPU_NUM_TAGS; g++) /* DMA only: PROG (tag 0) is the program fetch */
        s += v[g];
    return s;
}

/* Every tensor's DRAM bytes in the last step (its kernels' counters split by their tags); with
 * residency its transfers' too and the scheduler's loads, write-backs and drops of it. */
static void print_tensors(const npu_step_run_t *s)
{
    const npu_step_res_t *r = s->res;
    if (!r) {
        printf("  per tensor (DRAM bytes in / out; each kernel's tags name its own tensors):\n   ");
        for (int t = 0; t < s->plan.nt; t++)
            printf(" %s %llu/%llu%s", s->plan.t[t].name, (unsigned long long)s->t_in[t],
                   (unsigned long long)s->t_out[t], t + 1 < s->plan.nt ? (t % 6 == 5 ? ",\n   " : ",") : "\n");
        return;
    }
    printf("  resident in the SPM's last %u words: %d whole-tensor transfers, %d accesses left to DRAM; "
           "per tensor (DRAM bytes in / out, the scheduler's loads / write-backs / drops):\n   ",
           r->words - r->limit, r->nx, r->demoted);
    for (int t = 0; t < s->plan.nt; t++)
        printf(" %s %llu/%llu (%d/%d/%d)%s", s->plan.t[t].name, (unsigned long long)s->t_in[t],
               (unsigned long long)s->t_out[t], r->r.tensor[t].loads, r->r.tensor[t].stores,
               r->r.tensor[t].drops, t + 1 < s->plan.nt ? (t % 4 == 3 ? ",\n   " : ",") : "\n");
}

/* The step engine's DRAM traffic of one training step, per tag (printed after the first epoch):
 * what crosses between the NPU's kernels, and what the host writes and reads. */
static void print_traffic(const npu_fit_epoch_t *e)
{
    printf("  one step's DRAM traffic (bytes; PROG = the kernels' program fetch; each kernel's tags name "
           "its own tensors: see per tensor below):\n   ");
    for (unsigned g = 0; g < NPU_NUM_TAGS; g++)
        printf(" %s rd %llu wr %llu%s", npu_tag_name(g), (unsigned long long)e->step_rd[g],
               (unsigned long long)e->step_wr[g], g + 1 < NPU_NUM_TAGS ? "," : "\n");
    printf("    host: wrote %llu (the batch, the loss gradient), read %llu (the logits); no other "
           "tensor crosses\n", (unsigned long long)e->step_host_wr, (unsigned long long)e->step_host_rd);
    print_tensors(e->step);
    printf("  its kernels:                 cycles  vec_busy      MACs  DRAM rd  DRAM wr\n");
    for (int i = 0; i < e->step->plan.nk; i++) {
        const npu_step_tally_t *t = &e->step->last[i];
        printf("    %-25s %9llu %9llu %9llu %8llu %8llu\n", e->step->plan.k[i].name,
               (unsigned long long)t->cycles, (unsigned long long)t->vec_busy,
               (unsigned long long)t->macs, (unsigned long long)sum_tags(t->rd),
               (unsigned long long)sum_tags(t->wr));
    }
}

/* The int16 step's static scales: each tensor's fractional bits, a line per layer. */
static void print_scales(const npu_step_plan_t *p)
{
    printf("  int16 scales (fractional bits q, v = element / 2^q; lr, mu, wd within %.2f%%):\n    %s %d\n",
           100 * p->scalar_err, p->t[p->x16].name, p->t[p->x16].q);
    for (int t = 1, l = 0; t < p->nt; t++) {
        int layer = atoi(strchr(p->t[t].name, '[') + 1);
        printf("%s%s %d", layer != l ? (l ? "\n    " : "    ") : ", ", p->t[t].name, p->t[t].q);
        l = layer;
    }
    printf("\n");
}

static double rel_diff(double x, double ref) { return ref != 0 ? (x - ref) / ref : 0; }

static void on_epoch(void *ctx, const npu_fit_epoch_t *e)
{
    fit_cli_t *c = ctx;
    npu_table_t *t = &c->t;
    if (!c->a->json && !c->a->quiet) {
        printf("epoch %3d  loss %.5f", e->epoch, e->loss);
        if (c->engine != NPU_FIT_REF)
            printf(" (fp32 ref %.5f, %+.2f%%)", e->ref_loss, 100 * rel_diff(e->loss, e->ref_loss));
        printf("  train %.2f%%  test %.2f%%", 100 * e->train_acc, 100 * e->test_acc);
        if (c->engine != NPU_FIT_REF)
            printf(" (ref %.2f%%)  %llu cycles, %.0f/sample  %ld kernels%s", 100 * e->ref_test_acc,
                   (unsigned long long)e->cycles, e->cycles_per_sample, e->kernels,
                   e->kernel_fail ? "  FAIL" : " bit-exact");
        printf("  %.1f s\n", e->wall_s);
        if (c->engine == NPU_FIT_STEP && e->epoch == 1)
            print_traffic(e);
        if (c->engine == NPU_FIT_STEP && e->epoch == 1 && e->step->plan.int16)
            print_scales(&e->step->plan);
        fflush(stdout);
    }
    npu_table_int(t, e->epoch);
    npu_table_num(t, e->loss, "%.6f");
    npu_table_num(t, e->ref_loss, "%.6f");
    npu_table_num(t, rel_diff(e->loss, e->ref_loss), "%.6f");
    npu_table_num(t, e->train_acc, "%.6f");
    npu_table_num(t, e->test_acc, "%.6f");
    npu_table_num(t, e->ref_test_acc, "%.6f");
    npu_table_u64(t, e->cycles);
    npu_table_num(t, e->cycles_per_sample, "%.1f");
    npu_table_u64(t, e->eval_cycles);
    npu_table_int(t, e->kernels);
    npu_table_int(t, e->kernel_fail);
    npu_table_num(t, e->wall_s, "%.3f");
    npu_table_u64(t, sum_tags(e->step_rd));
    npu_table_u64(t, sum_tags(e->step_wr));
    npu_table_u64(t, e->step_host_wr + e->step_host_rd);
    npu_table_int(t, e->steps);
    npu_table_num(t, e->train_wall_s, "%.3f");
    npu_table_end_row(t);
}

static const char *engine_name(int e)
{
    return e == NPU_FIT_STEP ? "step" : e == NPU_FIT_KERNELS ? "kernels" : "ref";
}

/* --engine against the model (parsed into o->shape): npu (the default) takes whole steps where
 * the step engine can, else kernels. 0, or NPU_EXIT_USAGE after the message. */
static int fit_engine(const npu_cfg_t *cfg, const npu_args_t *a, npu_fit_opts_t *o)
{
    const char *e = a->engine ? a->engine : "npu";
    char why[256];
    int step_ok = npu_fit_step_ok(cfg, &o->shape, why, sizeof why) == 0;
    if (!strcmp(e, "ref"))
        o->engine = NPU_FIT_REF;
    else if (!strcmp(e, "kernels") || (!strcmp(e, "npu") && !step_ok))
        o->engine = NPU_FIT_KERNELS;
    else if (step_ok)
        o->engine = NPU_FIT_STEP;
    else {
        fprintf(stderr, "npu: --engine step: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    if (a->resident_banks && o->engine != NPU_FIT_STEP) {
        fprintf(stderr, "npu: --resident-banks applies to whole steps on the NPU (--engine step or npu, "
                "MLPs), not to engine %s\n", o->engine == NPU_FIT_REF ? "ref" : "kernels");
        return NPU_EXIT_USAGE;
    }
    if ((a->no_prefetch || a->no_lookahead || a->no_conv_reuse || a->bypass || a->objective) && !a->resident_banks) {
        fprintf(stderr, "npu: --no-prefetch, --no-lookahead, --no-conv-reuse, --bypass and --objective apply with --resident-banks\n");
        return NPU_EXIT_USAGE;
    }
    return 0;
}

/* The options as the trainer's; 0, or 2 after the one-line usage message. */
static int fit_opts(const npu_cfg_t *cfg, const npu_args_t *a, npu_fit_opts_t *o)
{
    memset(o, 0, sizeof *o);
    if (a->dtype && strcmp(a->dtype, npu_dtype_name((unsigned)cfg->dtype))) {
        fprintf(stderr, "npu: --dtype %s: this binary simulates config '%s' (%s); use "
                        "build/<a %s config>/npu, e.g. build/small-%s/npu\n", a->dtype, cfg->name,
                npu_dtype_name((unsigned)cfg->dtype), a->dtype, a->dtype);
        return NPU_EXIT_USAGE;
    }
    o->epochs = a->epochs ? (int)a->epochs : 10;
    o->batch = a->batch ? (int)a->batch : 32;
    o->sgd.lr = (float)(a->fit_set & 1 ? a->lr : 0.05);
    o->sgd.momentum = (float)(a->fit_set & 2 ? a->momentum : 0.9);
    o->sgd.wd = (float)(a->fit_set & 4 ? a->wd : 1e-4);
    o->seed = a->seed;
    o->test_frac = 0.2;
    o->modes = npu_args_gemm_modes(a);
    o->max_cycles = a->max_cycles;
    o->res_banks = (int)a->resident_banks;
    o->res_overlap = npu_cli_res_overlap(a);
    return 0;
}

/* --plot: plots/plots.py --fit CSV PNG under Debian's python3 (matplotlib). 0, or -1 after the
 * message. */
static int plot(const char *csv, const char *png)
{
    char script[4096];
    const char *py = access("/usr/bin/python3", X_OK) ? "python3" : "/usr/bin/python3";
    int st;
    pid_t pid;
    if (npu_repo_file("plots/plots.py", script, sizeof script)) {
        fprintf(stderr, "npu: --plot: cannot find %s\n", script);
        return -1;
    }
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        execlp(py, py, script, "--fit", csv, png, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "npu: --plot: %s %s --fit failed (python3-matplotlib: make deps)\n", py, script);
        return -1;
    }
    return 0;
}

/* The table's CSV: --csv, or with --plot alone a temporary file (tmp, removed after). */
static const char *csv_path(const npu_args_t *a, char *tmp, size_t n)
{
    int fd;
    if (a->csv || !a->plot)
        return a->csv;
    snprintf(tmp, n, "/tmp/npu_fit_XXXXXX");
    fd = mkstemp(tmp);
    if (fd < 0)
        return NULL;
    close(fd);
    return tmp;
}

/* The data set (path into path) and the model against it. 0, or NPU_EXIT_USAGE after the
 * message (nothing to free). */
static int load(const npu_args_t *a, npu_fit_opts_t *o, npu_dataset_t *d, char *path, size_t n)
{
    char why[512];
    if (npu_digits_find(a->data && strcmp(a->data, "digits") ? a->data : NULL, path, n)) {
        fprintf(stderr, "npu: --data: cannot read %s\n", path);
        return NPU_EXIT_USAGE;
    }
    if (npu_digits_load(path, d, why, sizeof why)) {
        fprintf(stderr, "npu: --data: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    if (npu_net_parse(a->model, d->h, d->w, d->c, &o->shape, why, sizeof why)) {
        fprintf(stderr, "npu: --model: %s\n", why);
        npu_dataset_free(d);
        return NPU_EXIT_USAGE;
    }
    if (npu_fit_check(d, o, why, sizeof why)) {
        fprintf(stderr, "npu: fit: %s\n", why);
        npu_dataset_free(d);
        return NPU_EXIT_USAGE;
    }
    return 0;
}

static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, int rc, cJSON *rows)
{
    cJSON *root = npu_cli_json_new(cfg, a);
    if (!root) {
        cJSON_Delete(rows);
        return;
    }
    cJSON_AddStringToObject(root, "model", a->model);
    cJSON_AddStringToObject(root, "result", rc ? "FAIL" : "PASS");
    cJSON_AddItemToObject(root, "epochs", rows);
    npu_cli_json_print(root);
}

int npu_cmd_fit(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_fit_opts_t o;
    npu_dataset_t d;
    char path[4096], why[512], tmp[64] = "";
    fit_cli_t c = {a, {0}, 0};
    npu_sim_t *sim = NULL;
    npu_args_t ta = *a; /* with --plot alone, the CSV goes to a temporary file */
    int rc = fit_opts(cfg, a, &o), csv_err = 0;
    cJSON *rows;
    if (rc || (rc = load(a, &o, &d, path, sizeof path)))
        return rc;
    if ((rc = fit_engine(cfg, a, &o))) {
        npu_dataset_free(&d);
        return rc;
    }
    c.engine = o.engine;
    if (o.engine != NPU_FIT_REF) {
        npu_dram_timing_t t = npu_cli_dram_timing(cfg, a);
        if (!(sim = npu_cli_open_sim(cfg, a, &t))) {
            npu_dataset_free(&d);
            return NPU_EXIT_FAIL;
        }
    }
    ta.csv = csv_path(a, tmp, sizeof tmp);
    if ((a->plot && !ta.csv) || npu_cli_table_open(cfg, &ta, &c.t, k_cols, NCOLS) != 0) {
        npu_dataset_free(&d);
        npu_sim_close(sim);
        if (tmp[0])
            remove(tmp);
        return NPU_EXIT_USAGE;
    }
    if (!a->json && !a->quiet)
        printf("fit %s on %s (%d images, %d%% held out), batch %d, lr %g, momentum %g, wd %g, "
               "engine %s, config %s (%s)\n", a->model, path, d.n, (int)(o.test_frac * 100),
               o.batch, o.sgd.lr, o.sgd.momentum, o.sgd.wd, engine_name(o.engine), cfg->name,
               npu_dtype_name((unsigned)cfg->dtype));
    rc = npu_fit_run(cfg, sim, &d, &o, on_epoch, &c, why, sizeof why);
    rows = npu_table_close(&c.t, &csv_err);
    if (rc)
        fprintf(stderr, "npu: fit: %s\n", why);
    if (a->json)
        print_json(cfg, a, rc, rows);
    else
        cJSON_Delete(rows);
    npu_sim_close(sim);
    npu_dataset_free(&d);
    if (a->plot && !csv_err && plot(ta.csv, a->plot))
        csv_err = 1;
    if (tmp[0])
        remove(tmp);
    return rc < 0 ? NPU_EXIT_USAGE : rc || csv_err ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}
