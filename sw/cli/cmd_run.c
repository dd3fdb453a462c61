/* cmd_run.c - `npu run FILE`: the programs saved by `--save-program FILE` (progfile.h) replayed
 * on the RTL of this build without the compiler. A saved GEMM: its DRAM image written, the
 * program run with the saved DRAM timing, C compared with the saved expected results, every
 * counter checked against the program, and the report of `npu gemm` (text, --json, --csv,
 * --out). Recorded programs (npu conv / train / gemm --topology): each in order, on a new
 * simulator where the recorded one was new, its DRAM window written, run, the window compared
 * with the recorded one and the start cycle, cycles and counters with the recording; a line
 * (or a JSON object) per program and the total. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "run/progfile.h"
#include "run/report.h"

/* One recorded program's verdict into why ("" when it passed). */
static void rec_why(int rc, size_t bad, uint64_t first, const char *msg, char *why, size_t n)
{
    why[0] = '\0';
    if (rc == NPU_GEMM_MISMATCH)
        snprintf(why, n, "%zu DRAM bytes differ from the recorded run, the first at 0x%llx", bad,
                 (unsigned long long)first);
    else if (rc != NPU_GEMM_PASS)
        snprintf(why, n, "%s", msg[0] ? msg : npu_gemm_rc_name(rc));
}

/* The program's line, or its object in arr (--json). */
static void rec_report(const npu_args_t *a, const npu_progset_t *s, size_t i, int rc,
                       const npu_run_result_t *r, const char *why, cJSON *arr)
{
    const npu_progfile_t *p = &s->p[i];
    uint64_t cyc = r->cnt[NPU_CNT_cycles];
    cJSON *o, *c;
    if (!a->json) {
        if (!a->quiet || rc != NPU_GEMM_PASS)
            printf("%s program %zu/%zu %s: %llu cycles from simulator cycle %llu%s, %zu "
                   "instructions%s%s\n", rc == NPU_GEMM_PASS ? "PASS" : "FAIL", i + 1, s->n,
                   p->rec.label, (unsigned long long)cyc, (unsigned long long)r->start_cycle,
                   p->fresh ? " (a new simulator)" : "", p->gemm.prog.n,
                   rc == NPU_GEMM_PASS ? "" : ": ", why);
        return;
    }
    if (!arr || !(o = cJSON_CreateObject()))
        return;
    cJSON_AddNumberToObject(o, "index", (double)(i + 1));
    cJSON_AddStringToObject(o, "label", p->rec.label);
    cJSON_AddNumberToObject(o, "instructions", (double)p->gemm.prog.n);
    cJSON_AddBoolToObject(o, "new_simulator", p->fresh);
    cJSON_AddNumberToObject(o, "start_cycle", (double)r->start_cycle);
    cJSON_AddNumberToObject(o, "cycles", (double)cyc);
    cJSON_AddNumberToObject(o, "sim_cycles", (double)(r->end_cycle - r->start_cycle));
    cJSON_AddStringToObject(o, "result", rc == NPU_GEMM_PASS ? "PASS" : "FAIL");
    cJSON_AddBoolToObject(o, "pass", rc == NPU_GEMM_PASS);
    cJSON_AddStringToObject(o, "error", why);
    c = cJSON_AddObjectToObject(o, "counters");
    for (unsigned k = 0; k < NPU_NUM_COUNTERS; k++)
        cJSON_AddNumberToObject(c, npu_counter_name(k), (double)r->cnt[k]);
    cJSON_AddItemToArray(arr, o);
}

/* The total: the text line or the JSON object around the programs' array. */
static void rec_total(const npu_cfg_t *cfg, const npu_args_t *a, const npu_progset_t *s,
                      size_t ran, int rc, const uint64_t *tot, const char *why, cJSON *arr)
{
    cJSON *root, *c;
    if (!a->json) {
        if (rc == NPU_GEMM_PASS)
            printf("PASS run %s: %zu program%s, %llu cycles, every DRAM window and counter as "
                   "recorded\n", a->prog_file, s->n, s->n == 1 ? "" : "s",
                   (unsigned long long)tot[NPU_CNT_cycles]);
        else
            printf("FAIL run %s: program %zu of %zu (%s): %s\n", a->prog_file, ran, s->n,
                   s->p[ran - 1].rec.label, why);
        return;
    }
    if (!(root = npu_cli_json_new(cfg, a))) {
        cJSON_Delete(arr);
        return;
    }
    cJSON_AddStringToObject(root, "file", a->prog_file);
    cJSON_AddNumberToObject(root, "programs_saved", (double)s->n);
    cJSON_AddNumberToObject(root, "programs_run", (double)ran);
    cJSON_AddNumberToObject(root, "cycles", (double)tot[NPU_CNT_cycles]);
    cJSON_AddStringToObject(root, "result", rc == NPU_GEMM_PASS ? "PASS" : "FAIL");
    cJSON_AddBoolToObject(root, "pass", rc == NPU_GEMM_PASS);
    cJSON_AddStringToObject(root, "error", why);
    c = cJSON_AddObjectToObject(root, "counters"); /* summed over the programs run */
    for (unsigned k = 0; k < NPU_NUM_COUNTERS; k++)
        cJSON_AddNumberToObject(c, npu_counter_name(k), (double)tot[k]);
    cJSON_AddItemToObject(root, "programs", arr);
    npu_cli_json_print(root);
}

/* Replays program i of s on *sim (a new one first where the recording opened one). */
static int rec_one(const npu_cfg_t *cfg, const npu_args_t *a, const npu_progset_t *s, size_t i,
                   npu_sim_t **sim, npu_run_result_t *r, char *why, size_t whyn)
{
    const npu_progfile_t *p = &s->p[i];
    npu_args_t g = *a;
    size_t bad = 0;
    uint64_t first = 0;
    char msg[300];
    int rc;
    if (p->fresh) {
        npu_sim_close(*sim);
        g.seed = p->timing.seed;
        if (!(*sim = npu_cli_open_sim(cfg, &g, &p->timing))) {
            memset(r, 0, sizeof *r);
            snprintf(why, whyn, "cannot open the simulator");
            return NPU_GEMM_HOST_ERROR;
        }
    }
    npu_run_set_label("%s", p->rec.label); /* the timeline's name for it */
    rc = npu_progfile_run_rec(cfg, *sim, p, g.max_cycles, r, &bad, &first, msg, sizeof msg);
    rec_why(rc, bad, first, msg, why, whyn);
    return rc;
}

/* npu run FILE of recorded programs: replayed in order until one fails. The exit status. */
static int run_recorded(const npu_cfg_t *cfg, const npu_args_t *a, const npu_progset_t *s)
{
    npu_run_result_t r;
    npu_sim_t *sim = NULL;
    uint64_t tot[NPU_NUM_COUNTERS] = {0};
    cJSON *arr = a->json ? cJSON_CreateArray() : NULL;
    char why[400] = "";
    size_t i = 0;
    int rc = NPU_GEMM_PASS, csv_err = 0;
    if (!a->json && !a->quiet)
        printf("npu run %s: %zu recorded program%s (config %s)\n", a->prog_file, s->n,
               s->n == 1 ? "" : "s", cfg->name);
    while (rc == NPU_GEMM_PASS && i < s->n) {
        rc = rec_one(cfg, a, s, i, &sim, &r, why, sizeof why);
        for (unsigned k = 0; k < NPU_NUM_COUNTERS; k++)
            tot[k] += r.cnt[k];
        rec_report(a, s, i++, rc, &r, why, arr);
    }
    npu_sim_close(sim);
    rec_total(cfg, a, s, i, rc, tot, why, arr);
    if (a->csv)
        csv_err = npu_cli_counters_csv(cfg, a, tot) != 0;
    if (rc == NPU_GEMM_TIMEOUT)
        return NPU_EXIT_TIMEOUT;
    return rc == NPU_GEMM_PASS && !csv_err ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}

/* npu run FILE of one saved GEMM: the report of npu gemm. The exit status. */
static int run_gemm(const npu_cfg_t *cfg, const npu_args_t *a, npu_progfile_t *p)
{
    npu_report_opts_t o;
    npu_args_t g = *a; /* the saved GEMM's sizes and seed, for the report */
    npu_sim_t *sim;
    int32_t *C = NULL;
    int rc, out_err;
    g.m = p->gemm.M, g.n = p->gemm.N, g.k = p->gemm.K;
    g.trans_a = p->gemm.transA, g.trans_b = p->gemm.transB;
    g.seed = p->timing.seed;
    o.seed = p->timing.seed;
    o.dram_bw = p->timing.bytes_per_cycle;
    o.dram_latency = p->timing.latency;
    o.stall_pct = p->timing.stall_pct;
    if ((g.out && !(C = malloc((size_t)g.m * (size_t)g.n * sizeof *C))) ||
        !(sim = npu_cli_open_sim(cfg, &g, &p->timing))) {
        free(C);
        return NPU_EXIT_FAIL;
    }
    if (!g.json && !g.quiet)
        printf("npu run %s: gemm M=%d N=%d K=%d%s%s, %zu instructions, %s expected results "
               "(config %s)\n", a->prog_file, g.m, g.n, g.k, g.trans_a ? " transA" : "",
               g.trans_b ? " transB" : "", p->gemm.prog.n, p->expect ? "with" : "without",
               cfg->name);
    rc = npu_progfile_run(cfg, sim, p, C, g.max_cycles);
    out_err = npu_cli_gemm_outputs(cfg, &g, rc, &p->gemm, &o, NULL, NULL, C);
    npu_sim_close(sim);
    free(C);
    if (rc == NPU_GEMM_TIMEOUT)
        return NPU_EXIT_TIMEOUT;
    return rc == NPU_GEMM_PASS && !out_err ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}

/* The simulators the recorded command opened (--trace writes one). */
static size_t simulators(const npu_progset_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->p[i].fresh != 0;
    return n;
}

int npu_cmd_run(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_progset_t s;
    char err[600];
    int rc;
    if (npu_progset_load(a->prog_file, &s, err, sizeof err) != 0) {
        fprintf(stderr, "npu: run %s\n", err); /* err names the file */
        return NPU_EXIT_USAGE;
    }
    if (npu_progfile_check_cfg(&s.p[0], cfg, err, sizeof err) != 0) {
        fprintf(stderr, "npu: run %s: %s\n", a->prog_file, err);
        npu_progset_free(&s);
        return NPU_EXIT_USAGE;
    }
    if (s.p[0].kind == NPU_PROGFILE_REC && a->out) {
        fprintf(stderr, "npu: run %s: --out applies to saved GEMMs (a recorded program is checked "
                        "against its DRAM window)\n", a->prog_file);
        rc = NPU_EXIT_USAGE;
    } else if (a->trace && simulators(&s) > 1) {
        fprintf(stderr, "npu: run %s: --trace traces one simulation, the file's programs ran on "
                        "%zu simulators\n", a->prog_file, simulators(&s));
        rc = NPU_EXIT_USAGE;
    } else {
        rc = s.p[0].kind == NPU_PROGFILE_REC ? run_recorded(cfg, a, &s) : run_gemm(cfg, a, &s.p[0]);
    }
    npu_progset_free(&s);
    return rc;
}
