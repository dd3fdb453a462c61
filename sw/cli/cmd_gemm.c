/* cmd_gemm.c - `npu gemm`: compile a GEMM, run it on the simulated NPU of this build's
 * configuration, check it bit-exact against the golden model and print the report. With
 * --topology, the GEMMs of a topology file (cmd_gemm_topo.c). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "hw/isa.h"
#include "run/progfile.h"
#include "run/report.h"
#include "run/runtime.h"

int npu_cli_counters_csv(const npu_cfg_t *cfg, const npu_args_t *a, const uint64_t *cnt)
{
    static const char *const cols[] = {"counter", "value"};
    npu_table_t t;
    int err;
    if (npu_cli_table_open(cfg, a, &t, cols, 2) != 0)
        return -1;
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++) {
        npu_table_str(&t, npu_counter_name(i));
        npu_table_u64(&t, cnt[i]);
        npu_table_end_row(&t);
    }
    cJSON_Delete(npu_table_close(&t, &err));
    if (err)
        fprintf(stderr, "npu: --csv %s: error writing the file\n", a->csv);
    return err ? -1 : 0;
}

/* The NPU error line: its name, text, the faulting instruction. */
static void print_npu_error(const npu_args_t *a, const npu_gemm_report_t *rep)
{
    char line[256];
    const char *nm = npu_error_name(rep->run.err);
    if (rep->run.err_pc < rep->prog.n)
        npu_disasm(&rep->prog.insn[rep->run.err_pc], line, sizeof line);
    else
        snprintf(line, sizeof line, "(outside the program)");
    printf("FAIL gemm M=%d N=%d K=%d seed %llu: NPU error %s (%s) at pc %u: %s; "
           "ERR_INFO 0x%08x\n",
           a->m, a->n, a->k, (unsigned long long)a->seed, nm ? nm : "?",
           npu_error_text(rep->run.err) ? npu_error_text(rep->run.err) : "unknown code",
           (unsigned)rep->run.err_pc, line, (unsigned)rep->run.err_info);
}

/* The verdict line, always printed (text output). */
static void print_verdict(const npu_cfg_t *cfg, const npu_args_t *a, int rc,
                          const npu_gemm_report_t *rep)
{
    char line[256];
    unsigned long long seed = (unsigned long long)a->seed;
    switch (rc) {
    case NPU_GEMM_PASS:
        printf("PASS gemm M=%d N=%d K=%d seed %llu: %llu cycles\n", a->m, a->n, a->k, seed,
               (unsigned long long)rep->run.cnt[NPU_CNT_cycles]);
        break;
    case NPU_GEMM_MISMATCH: /* bf16: the fp32 bit patterns */
        if (npu_cfg_bf16(cfg))
            printf("FAIL gemm M=%d N=%d K=%d seed %llu: %zu mismatches, first C[%d][%d] = fp32 "
                   "0x%08x, expected 0x%08x\n", a->m, a->n, a->k, seed, rep->mismatches,
                   rep->bad_row, rep->bad_col, (unsigned)rep->bad_got, (unsigned)rep->bad_exp);
        else
            printf("FAIL gemm M=%d N=%d K=%d seed %llu: %zu mismatches, first C[%d][%d] = %ld, "
                   "expected %ld\n", a->m, a->n, a->k, seed, rep->mismatches, rep->bad_row,
                   rep->bad_col, (long)rep->bad_got, (long)rep->bad_exp);
        break;
    case NPU_GEMM_COUNTERS:
        printf("FAIL gemm M=%d N=%d K=%d seed %llu: result bit-exact but %s\n", a->m, a->n,
               a->k, seed, rep->counters_msg);
        break;
    case NPU_GEMM_NPU_ERROR: print_npu_error(a, rep); break;
    case NPU_GEMM_TIMEOUT:
        npu_qstate_str(rep->run.qstate, line, sizeof line);
        printf("%s gemm M=%d N=%d K=%d seed %llu: %s %llu cycles (cycle "
               "%llu); QSTATE 0x%08x: %s; PC_L %u PC_E %u PC_S %u FETCH_PC %u\n",
               rep->run.interrupted ? "INTERRUPTED" : "TIMEOUT", a->m, a->n, a->k, seed,
               rep->run.interrupted ? "stopped by SIGINT after" : "no halt after",
               (unsigned long long)(rep->run.interrupted ? rep->run.end_cycle - rep->run.start_cycle
                                                         : a->max_cycles),
               (unsigned long long)rep->run.end_cycle, (unsigned)rep->run.qstate, line,
               (unsigned)rep->run.pc_l, (unsigned)rep->run.pc_e, (unsigned)rep->run.pc_s,
               (unsigned)rep->run.fetch_pc);
        break;
    case NPU_GEMM_NO_FIT: /* the tensors fit, with the program they do not */
        fprintf(stderr, "npu: gemm M=%d N=%d K=%d %s\n", a->m, a->n, a->k, rep->host_msg);
        break;
    default: printf("FAIL gemm M=%d N=%d K=%d: %s\n", a->m, a->n, a->k, rep->host_msg); break;
    }
}

int npu_cli_gemm_outputs(const npu_cfg_t *cfg, const npu_args_t *g, int rc,
                         const npu_gemm_report_t *rep, const npu_report_opts_t *o,
                         const int16_t *A, const int16_t *B, const int32_t *C)
{
    int err = g->csv && npu_cli_counters_csv(cfg, g, rep->run.cnt) != 0;
    cJSON *root = g->json || g->save ? npu_cli_json_new(cfg, g) : NULL;
    int done = rc == NPU_GEMM_PASS || rc == NPU_GEMM_MISMATCH || rc == NPU_GEMM_COUNTERS;
    if (root)
        npu_report_json_add(root, cfg, rep, o);
    if ((g->out || g->save) && npu_cli_gemm_save(cfg, g, rep, A, B, done ? C : NULL, root) != 0)
        err = 1;
    if (g->out && !done)
        fprintf(stderr, "npu: --out %s not written: the run did not complete\n", g->out);
    if (g->json) {
        npu_cli_json_print(root);
        return err ? -1 : 0;
    }
    cJSON_Delete(root);
    print_verdict(cfg, g, rc, rep);
    if (!g->quiet)
        npu_report_text(stdout, cfg, rep, o);
    return err ? -1 : 0;
}

int npu_cmd_gemm(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t t = npu_cli_dram_timing(cfg, a);
    npu_report_opts_t o;
    npu_gemm_report_t rep;
    npu_sim_t *sim = NULL;
    npu_args_t g; /* a with M, N, K from the .npy files */
    int16_t *A, *B;
    int32_t *C = NULL;
    int rc, out_err;

    if (a->topology)
        return npu_cmd_gemm_topology(cfg, a);
    o.seed = a->seed;
    o.dram_bw = t.bytes_per_cycle;
    o.dram_latency = t.latency;
    o.stall_pct = t.stall_pct;
    if ((rc = npu_cli_gemm_inputs(cfg, a, &g, &A, &B)) != 0)
        return rc;
    if (g.save && npu_cli_out_dir("--save", g.save) != 0)
        rc = NPU_EXIT_USAGE;
    else if ((g.out || g.save) && !(C = malloc((size_t)g.m * (size_t)g.n * sizeof *C)))
        rc = NPU_EXIT_FAIL;
    else if (!(sim = npu_cli_open_sim(cfg, &g, &t)))
        rc = NPU_EXIT_FAIL;
    if (rc) {
        free(A);
        free(B);
        return rc;
    }
    if (!g.json && !g.quiet && g.a_file)
        printf("npu gemm M=%d N=%d K=%d%s%s --a %s --b %s (config %s)\n", g.m, g.n, g.k,
               g.trans_a ? " --trans-a" : "", g.trans_b ? " --trans-b" : "", g.a_file, g.b_file,
               cfg->name);
    else if (!g.json && !g.quiet)
        printf("npu gemm M=%d N=%d K=%d%s%s seed %llu (config %s)\n", g.m, g.n, g.k,
               g.trans_a ? " --trans-a" : "", g.trans_b ? " --trans-b" : "",
               (unsigned long long)g.seed, cfg->name);
    g.max_cycles = npu_args_max_cycles(&g, (uint64_t)g.m * (uint64_t)g.n * (uint64_t)g.k, npu_cfg_pes(cfg));
    rc = npu_gemm_run_modes(cfg, sim, g.m, g.n, g.k, A, B, g.trans_a, g.trans_b,
                            npu_args_gemm_modes(&g), C, g.max_cycles, &rep);
    out_err = npu_cli_gemm_outputs(cfg, &g, rc, &rep, &o, A, B, C);
    if (g.save_program && npu_cli_gemm_save_program(cfg, &g, &t, &rep, A, B) != 0)
        out_err = 1;
    npu_gemm_report_free(&rep);
    npu_sim_close(sim);
    free(A);
    free(B);
    free(C);
    if (rc == NPU_GEMM_NO_FIT)
        return NPU_EXIT_USAGE; /* a limit exceeded, as npu_cli_gemm_fits says before the run */
    if (rc == NPU_GEMM_TIMEOUT)
        return NPU_EXIT_TIMEOUT;
    return rc == NPU_GEMM_PASS && !out_err ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}
