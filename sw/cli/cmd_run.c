/* cmd_run.c - `npu run FILE`: a program saved by `npu gemm --save-program FILE` (progfile.h)
 * replayed on the RTL of this build without the compiler: its DRAM image written, the program
 * run with the saved DRAM timing, C compared with the saved expected results, every counter
 * checked against the program, and the report of `npu gemm` (text, --json, --csv, --out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "run/progfile.h"
#include "run/report.h"

/* A recorded program's verdict: the text line or the JSON object. */
static void rec_report(const npu_cfg_t *cfg, const npu_args_t *a, const npu_progfile_t *p, int rc,
                       const npu_run_result_t *r, size_t bad, uint64_t first, const char *msg)
{
    char why[400] = "";
    uint64_t cyc = r->end_cycle - r->start_cycle;
    cJSON *root, *c;
    if (rc == NPU_GEMM_MISMATCH)
        snprintf(why, sizeof why, "%zu DRAM bytes differ from the recorded run, the first at "
                 "0x%llx", bad, (unsigned long long)first);
    else if (rc != NPU_GEMM_PASS)
        snprintf(why, sizeof why, "%s", msg[0] ? msg : npu_gemm_rc_name(rc));
    if (!a->json) {
        printf("%s run %s: %llu cycles%s%s\n", rc == NPU_GEMM_PASS ? "PASS" : "FAIL", a->prog_file,
               (unsigned long long)cyc, rc == NPU_GEMM_PASS ? ", the DRAM window and every counter "
               "as recorded" : ": ", why);
        return;
    }
    if (!(root = npu_cli_json_new(cfg, a)))
        return;
    cJSON_AddStringToObject(root, "file", a->prog_file);
    cJSON_AddStringToObject(root, "label", p->rec.label);
    cJSON_AddNumberToObject(root, "instructions", (double)p->gemm.prog.n);
    cJSON_AddNumberToObject(root, "cycles", (double)cyc);
    cJSON_AddStringToObject(root, "result", rc == NPU_GEMM_PASS ? "PASS" : "FAIL");
    cJSON_AddBoolToObject(root, "pass", rc == NPU_GEMM_PASS);
    cJSON_AddStringToObject(root, "error", why);
    c = cJSON_AddObjectToObject(root, "counters");
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++)
        cJSON_AddNumberToObject(c, npu_counter_name(i), (double)r->cnt[i]);
    npu_cli_json_print(root);
}

/* npu run FILE of kind 2 (npu conv --save-program): replayed, the DRAM window and the counters
 * compared with the recording. */
static int run_recorded(const npu_cfg_t *cfg, const npu_args_t *a, npu_progfile_t *p)
{
    npu_args_t g = *a;
    npu_run_result_t r;
    npu_sim_t *sim;
    size_t bad = 0;
    uint64_t first = 0;
    char msg[300];
    int rc, csv_err = 0;
    g.seed = p->timing.seed;
    if (!(sim = npu_cli_open_sim(cfg, &g, &p->timing)))
        return NPU_EXIT_FAIL;
    if (!g.json && !g.quiet)
        printf("npu run %s: %s, %zu instructions, DRAM window %zu bytes at 0x%llx (config %s)\n",
               a->prog_file, p->rec.label, p->gemm.prog.n, p->rec.len,
               (unsigned long long)p->rec.lo, cfg->name);
    rc = npu_progfile_run_rec(cfg, sim, p, g.max_cycles, &r, &bad, &first, msg, sizeof msg);
    npu_sim_close(sim);
    rec_report(cfg, &g, p, rc, &r, bad, first, msg);
    if (g.csv)
        csv_err = npu_cli_counters_csv(cfg, &g, r.cnt) != 0;
    if (rc == NPU_GEMM_TIMEOUT)
        return NPU_EXIT_TIMEOUT;
    return rc == NPU_GEMM_PASS && !csv_err ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}

int npu_cmd_run(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_progfile_t p;
    npu_report_opts_t o;
    npu_args_t g = *a; /* the saved GEMM's sizes and seed, for the report */
    npu_sim_t *sim;
    int32_t *C = NULL;
    char err[600];
    int rc, out_err;

    if (npu_progfile_load(a->prog_file, &p, err, sizeof err) != 0) {
        fprintf(stderr, "npu: run %s\n", err); /* err names the file */
        return NPU_EXIT_USAGE;
    }
    if (npu_progfile_check_cfg(&p, cfg, err, sizeof err) != 0) {
        fprintf(stderr, "npu: run %s: %s\n", a->prog_file, err);
        npu_progfile_free(&p);
        return NPU_EXIT_USAGE;
    }
    if (p.kind == NPU_PROGFILE_REC) {
        if (a->out)
            fprintf(stderr, "npu: run %s: --out applies to saved GEMMs (a recorded program "
                            "is checked against its DRAM window)\n", a->prog_file);
        rc = a->out ? NPU_EXIT_USAGE : run_recorded(cfg, a, &p);
        npu_progfile_free(&p);
        return rc;
    }
    g.m = p.gemm.M, g.n = p.gemm.N, g.k = p.gemm.K;
    g.trans_a = p.gemm.transA, g.trans_b = p.gemm.transB;
    g.seed = p.timing.seed;
    o.seed = p.timing.seed;
    o.dram_bw = p.timing.bytes_per_cycle;
    o.dram_latency = p.timing.latency;
    o.stall_pct = p.timing.stall_pct;
    if ((g.out && !(C = malloc((size_t)g.m * (size_t)g.n * sizeof *C))) ||
        !(sim = npu_cli_open_sim(cfg, &g, &p.timing))) {
        free(C);
        npu_progfile_free(&p);
        return NPU_EXIT_FAIL;
    }
    if (!g.json && !g.quiet)
        printf("npu run %s: gemm M=%d N=%d K=%d%s%s, %zu instructions, %s expected results "
               "(config %s)\n", a->prog_file, g.m, g.n, g.k, g.trans_a ? " transA" : "",
               g.trans_b ? " transB" : "", p.gemm.prog.n, p.expect ? "with" : "without", cfg->name);
    rc = npu_progfile_run(cfg, sim, &p, C, g.max_cycles);
    out_err = npu_cli_gemm_outputs(cfg, &g, rc, &p.gemm, &o, NULL, NULL, C);
    npu_sim_close(sim);
    npu_progfile_free(&p);
    free(C);
    if (rc == NPU_GEMM_TIMEOUT)
        return NPU_EXIT_TIMEOUT;
    return rc == NPU_GEMM_PASS && !out_err ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}
