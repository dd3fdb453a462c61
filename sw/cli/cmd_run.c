/* cmd_run.c - `npu run FILE`: a program saved by `npu gemm --save-program FILE` (progfile.h)
 * replayed on the RTL of this build without the compiler: its DRAM image written, the program
 * run with the saved DRAM timing, C compared with the saved expected results, every counter
 * checked against the program, and the report of `npu gemm` (text, --json, --csv, --out). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "run/progfile.h"
#include "run/report.h"

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
