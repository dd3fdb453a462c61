/*
 * npu_main.c - the `npu` command line: compile a GEMM, run it on the simulated NPU of this
 * build's configuration, check it bit-exact against the golden model and print the report.
 * Built once per configuration (build/<config>/npu); npu_params.h is generated from
 * configs/<config>.cfg and gives NPU_CFG_INIT. See args.h for the usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_params.h" /* generated: NPU_CFG_INIT */

#include "cli/args.h"
#include "cli/commands.h"
#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "hw/isa.h"
#include "hw/npu_cfg.h"
#include "npu_sim.h"
#include "run/overlap.h"
#include "run/report.h"
#include "ref/golden.h"
#include "run/runtime.h"

enum { EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };

static const npu_cfg_t g_cfg = NPU_CFG_INIT;

/* Every performance counter as `name,value` lines (the Ibex simple-system convention), for
 * spreadsheets and regression dashboards. */
static int write_counters_csv(const char *path, const uint64_t *cnt)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "counter,value\n");
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++)
        fprintf(f, "%s,%llu\n", npu_counter_name(i), (unsigned long long)cnt[i]);
    return fclose(f);
}

/* DRAM timing of a run: the options, else this configuration's defaults. */
static npu_dram_timing_t dram_timing(const npu_args_t *a)
{
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = a->dram_bw_set ? a->dram_bw : (double)g_cfg.dram_bw;
    t.latency = a->dram_latency_set ? a->dram_latency : (unsigned)g_cfg.dram_latency;
    t.burst_cost = (unsigned)g_cfg.dram_burst_cost;
    t.stall_pct = a->stall_pct;
    t.seed = a->seed;
    return t;
}

/* Seeded random operands A (M x K) and B (K x N), the same for every command. 0 or -1. */
static int random_inputs(const npu_args_t *a, int16_t **A, int16_t **B)
{
    size_t na = (size_t)a->m * (size_t)a->k, nb = (size_t)a->k * (size_t)a->n;
    *A = malloc(na * sizeof **A);
    *B = malloc(nb * sizeof **B);
    if (!*A || !*B) {
        fprintf(stderr, "npu: out of memory for the inputs\n");
        free(*A);
        free(*B);
        return -1;
    }
    npu_random_operands(a->m, a->n, a->k, a->seed, *A, *B);
    return 0;
}

static int cmd_info(void)
{
    const npu_cfg_t *c = &g_cfg;
    printf("config          %s\n", c->name);
    printf("S               %d (fused array %dx%d, %d PEs)\n", c->s, 2 * c->s, 2 * c->s,
           4 * c->s * c->s);
    printf("word / beat     %d bytes (%d int16 lanes)\n", npu_cfg_beat(c), npu_cfg_f(c));
    printf("SPM             %d banks x %d words = %d KiB\n", c->spm_banks, c->spm_bank_words,
           c->spm_banks * c->spm_bank_words * npu_cfg_beat(c) / 1024);
    printf("OBUF            2 halves x %d rows of %d int32\n", c->obuf_rows, npu_cfg_f(c));
    printf("LBUF H / V      %d / %d words per core\n", c->lbuf_h_depth, c->lbuf_v_depth);
    printf("queues          %d instructions each, tokens up to %d\n", c->queue_depth, c->token_max);
    printf("DRAM            2^%d bytes, bursts up to %d beats, %d outstanding\n",
           c->dram_addr_bits, c->max_burst_beats, c->max_outstanding);
    printf("DRAM timing     %d B/cycle, latency %d, burst cost %d (defaults)\n", c->dram_bw,
           c->dram_latency, c->dram_burst_cost);
    printf("watchdog        %d cycles\n", c->watchdog_cycles);
    return EXIT_PASS;
}

static int cmd_disasm(const npu_args_t *a)
{
    npu_gemm_report_t rep;
    char line[256];
    int rc = npu_gemm_compile_modes(&g_cfg, 1ull << g_cfg.dram_addr_bits, a->m, a->n, a->k,
                                    a->trans_a, a->trans_b, a->policy, &rep);
    if (rc != NPU_GEMM_PASS) {
        fprintf(stderr, "npu: cannot compile gemm M=%d N=%d K=%d: %s\n", a->m, a->n, a->k,
                rep.host_msg);
        npu_gemm_report_free(&rep);
        return EXIT_FAIL;
    }
    printf("# gemm M=%d N=%d K=%d%s%s, config %s: Mt=%d Nt=%d Kc=%d, %dx%d tiles x %d chunks\n",
           a->m, a->n, a->k, a->trans_a ? " transA" : "", a->trans_b ? " transB" : "", g_cfg.name,
           rep.plan.Mt, rep.plan.Nt, rep.plan.Kc, rep.plan.m_tiles, rep.plan.n_tiles,
           rep.plan.k_chunks);
    printf("# DRAM: program 0x%06llx, A 0x%06x (pitch %u beats), B 0x%06x (pitch %u), C 0x%06x "
           "(pitch %u); SPM A %u/%u B %u/%u C %u/%u\n",
           (unsigned long long)rep.prog_base, (unsigned)rep.args.a, rep.args.pitch_a,
           (unsigned)rep.args.b, rep.args.pitch_b, (unsigned)rep.args.c, rep.args.pitch_c,
           rep.plan.spm_a[0], rep.plan.spm_a[1], rep.plan.spm_b[0], rep.plan.spm_b[1],
           rep.plan.spm_c[0], rep.plan.spm_c[1]);
    for (size_t i = 0; i < rep.prog.n; i++) {
        npu_disasm(&rep.prog.insn[i], line, sizeof line);
        printf("%6zu  %s\n", i, line);
    }
    npu_gemm_report_free(&rep);
    return EXIT_PASS;
}

static int cmd_gemm(const npu_args_t *a)
{
    npu_dram_timing_t t;
    npu_sim_t *sim;
    npu_gemm_report_t rep;
    npu_report_opts_t o;
    int16_t *A, *B;
    char msg[256], line[256];
    int rc, ex;

    t = dram_timing(a);
    o.seed = a->seed;
    o.dram_bw = t.bytes_per_cycle;
    o.dram_latency = t.latency;
    o.stall_pct = t.stall_pct;

    if (random_inputs(a, &A, &B) != 0)
        return EXIT_FAIL;
    if (!a->json && !a->quiet)
        printf("npu gemm M=%d N=%d K=%d%s%s seed %llu (config %s)\n", a->m, a->n, a->k,
               a->trans_a ? " --trans-a" : "", a->trans_b ? " --trans-b" : "",
               (unsigned long long)a->seed, g_cfg.name);

    sim = npu_sim_open(&t);
    if (!sim) {
        fprintf(stderr, "npu: cannot open the simulator\n");
        free(A);
        free(B);
        return EXIT_FAIL;
    }
    if (npu_sim_beat_bytes() != (unsigned)npu_cfg_beat(&g_cfg) ||
        npu_check_hw(&g_cfg, sim, msg, sizeof msg) != 0) {
        if (npu_sim_beat_bytes() != (unsigned)npu_cfg_beat(&g_cfg))
            snprintf(msg, sizeof msg, "the simulator's beat is %u bytes, config '%s' needs %d",
                     npu_sim_beat_bytes(), g_cfg.name, npu_cfg_beat(&g_cfg));
        fprintf(stderr, "npu: %s; use build/<config>/npu, built for that configuration\n", msg);
        npu_sim_close(sim);
        free(A);
        free(B);
        return EXIT_FAIL;
    }
    if (a->trace && npu_sim_trace(sim, a->trace, a->trace_start, a->trace_end) != 0) {
        fprintf(stderr, "npu: cannot trace to %s (is this build compiled with tracing?)\n",
                a->trace);
        npu_sim_close(sim);
        free(A);
        free(B);
        return EXIT_FAIL;
    }

    rc = npu_gemm_run_modes(&g_cfg, sim, a->m, a->n, a->k, A, B, a->trans_a, a->trans_b, a->policy, NULL,
                      a->max_cycles, &rep);

    switch (rc) {
    case NPU_GEMM_PASS: ex = EXIT_PASS; break;
    case NPU_GEMM_TIMEOUT: ex = EXIT_TIMEOUT; break;
    default: ex = EXIT_FAIL; break;
    }
    if (a->csv && write_counters_csv(a->csv, rep.run.cnt) != 0)
        fprintf(stderr, "npu: cannot write %s\n", a->csv);
    if (a->json) {
        npu_report_json(stdout, &g_cfg, &rep, &o);
    } else {
        /* the verdict line, always printed */
        switch (rc) {
        case NPU_GEMM_PASS:
            printf("PASS gemm M=%d N=%d K=%d seed %llu: %llu cycles\n", a->m, a->n, a->k,
                   (unsigned long long)a->seed, (unsigned long long)rep.run.cnt[NPU_CNT_cycles]);
            break;
        case NPU_GEMM_MISMATCH:
            printf("FAIL gemm M=%d N=%d K=%d seed %llu: %zu mismatches, first C[%d][%d] = %ld, "
                   "expected %ld\n",
                   a->m, a->n, a->k, (unsigned long long)a->seed, rep.mismatches, rep.bad_row,
                   rep.bad_col, (long)rep.bad_got, (long)rep.bad_exp);
            break;
        case NPU_GEMM_COUNTERS:
            printf("FAIL gemm M=%d N=%d K=%d seed %llu: result bit-exact but %s\n", a->m, a->n,
                   a->k, (unsigned long long)a->seed, rep.counters_msg);
            break;
        case NPU_GEMM_NPU_ERROR: {
            const char *nm = npu_error_name(rep.run.err);
            if (rep.run.err_pc < rep.prog.n)
                npu_disasm(&rep.prog.insn[rep.run.err_pc], line, sizeof line);
            else
                snprintf(line, sizeof line, "(outside the program)");
            printf("FAIL gemm M=%d N=%d K=%d seed %llu: NPU error %s (%s) at pc %u: %s; "
                   "ERR_INFO 0x%08x\n",
                   a->m, a->n, a->k, (unsigned long long)a->seed, nm ? nm : "?",
                   npu_error_text(rep.run.err) ? npu_error_text(rep.run.err) : "unknown code",
                   (unsigned)rep.run.err_pc, line, (unsigned)rep.run.err_info);
            break;
        }
        case NPU_GEMM_TIMEOUT:
            npu_qstate_str(rep.run.qstate, line, sizeof line);
            printf("TIMEOUT gemm M=%d N=%d K=%d seed %llu: no halt after %llu cycles (cycle "
                   "%llu); QSTATE 0x%08x: %s; PC_L %u PC_E %u PC_S %u FETCH_PC %u\n",
                   a->m, a->n, a->k, (unsigned long long)a->seed,
                   (unsigned long long)a->max_cycles, (unsigned long long)rep.run.end_cycle,
                   (unsigned)rep.run.qstate, line, (unsigned)rep.run.pc_l,
                   (unsigned)rep.run.pc_e, (unsigned)rep.run.pc_s, (unsigned)rep.run.fetch_pc);
            break;
        default:
            printf("FAIL gemm M=%d N=%d K=%d: %s\n", a->m, a->n, a->k, rep.host_msg);
            break;
        }
        if (!a->quiet)
            npu_report_text(stdout, &g_cfg, &rep, &o);
    }
    npu_gemm_report_free(&rep);
    npu_sim_close(sim);
    free(A);
    free(B);
    return ex;
}

/* `npu overlap`: compute-only, transfer-only and full cycles of one GEMM (sw/run/overlap.h). */
static int cmd_overlap(const npu_args_t *a)
{
    npu_dram_timing_t t;
    npu_overlap_result_t r;
    int16_t *A, *B;
    const char *verdict;
    int rc, ex;

    t = dram_timing(a);

    if (random_inputs(a, &A, &B) != 0) /* the same inputs as `npu gemm` with this seed */
        return EXIT_FAIL;
    if (!a->json && !a->quiet)
        printf("npu overlap M=%d N=%d K=%d seed %llu (config %s): compute-only, transfer-only "
               "and full runs%s\n",
               a->m, a->n, a->k, (unsigned long long)a->seed, g_cfg.name,
               a->dram_bw_set ? "" : ", DRAM bandwidth calibrated so transfer ~ compute");

    rc = npu_overlap_measure(&g_cfg, a->m, a->n, a->k, A, B, 0, 0, &t, !a->dram_bw_set,
                             a->max_cycles, &r);
    ex = rc == NPU_OVERLAP_OK && r.overlap_ok ? EXIT_PASS
         : rc == NPU_OVERLAP_TIMEOUT         ? EXIT_TIMEOUT
                                             : EXIT_FAIL;
    verdict = rc != NPU_OVERLAP_OK ? "ERROR" : r.overlap_ok ? "OK" : "POOR";

    if (a->json) {
        fputs("{\"config\":{\"name\":", stdout);
        npu_json_string(stdout, g_cfg.name);
        printf(",\"s\":%d},\"workload\":{\"op\":\"overlap\",\"m\":%d,\"n\":%d,\"k\":%d,"
               "\"seed\":%llu,\"dram_latency\":%u,\"stall_pct\":%u},",
               g_cfg.s, a->m, a->n, a->k, (unsigned long long)a->seed, t.latency, t.stall_pct);
        fputs("\"result\":", stdout);
        npu_json_string(stdout, rc == NPU_OVERLAP_OK ? "PASS" : npu_gemm_rc_name(r.full.rc));
        printf(",\"pass\":%s,\"overlap\":", rc == NPU_OVERLAP_OK ? "true" : "false");
        npu_json_string(stdout, verdict);
        printf(",\"overlap_ok\":%s,\"error\":", r.overlap_ok ? "true" : "false");
        npu_json_string(stdout, r.msg);
        printf(",\"dram_bw\":%.6g,\"dram_bw_calibrated\":%s,\"compute_cycles\":%llu,"
               "\"transfer_cycles\":%llu,\"dma_only_cycles\":%llu,\"full_cycles\":%llu,"
               "\"max_compute_transfer_cycles\":%llu,"
               "\"ratio\":%.6f,\"max_ratio\":%.2f,\"instructions\":{\"compute\":%zu,"
               "\"transfer\":%zu,\"full\":%zu},\"wall_s\":%.6f,\"full_cycles_per_s\":%.1f,"
               "\"full_pe_util\":%.6f,\"calibration\":[",
               r.dram_bw, r.calibrated ? "true" : "false",
               (unsigned long long)r.compute_cycles, (unsigned long long)r.transfer_cycles,
               (unsigned long long)r.dma_cycles, (unsigned long long)r.full_cycles,
               (unsigned long long)r.bound_cycles, r.ratio,
               NPU_OVERLAP_MAX_RATIO, r.n_compute, r.n_transfer, r.full.prog.n, r.wall_s,
               r.full.run.wall_s > 0 ? (double)r.full_cycles / r.full.run.wall_s : 0.0,
               r.full_cycles ? npu_report_pe_util(&g_cfg, r.full.run.cnt) : 0.0);
        for (int i = 0; i < r.n_steps; i++)
            printf("%s{\"dram_bw\":%.6g,\"compute_cycles\":%llu,\"transfer_cycles\":%llu,"
                   "\"dma_only_cycles\":%llu}",
                   i ? "," : "", r.steps[i].dram_bw,
                   (unsigned long long)r.steps[i].compute_cycles,
                   (unsigned long long)r.steps[i].transfer_cycles,
                   (unsigned long long)r.steps[i].dma_cycles);
        puts("]}");
    } else {
        if (!a->quiet) {
            for (int i = 0; i < r.n_steps && r.calibrated; i++)
                printf("  calibration %d: DRAM %.4g B/cycle -> compute-only %llu, transfer-only "
                       "%llu (DMA-only %llu) cycles\n",
                       i + 1, r.steps[i].dram_bw, (unsigned long long)r.steps[i].compute_cycles,
                       (unsigned long long)r.steps[i].transfer_cycles,
                       (unsigned long long)r.steps[i].dma_cycles);
            if (rc == NPU_OVERLAP_OK) {
                printf("  %-26s %12llu cycles  (%zu EXEC instructions, no tokens)\n",
                       "compute-only", (unsigned long long)r.compute_cycles, r.n_compute);
                printf("  %-26s %12llu cycles  (%zu LOAD/STORE, no tokens, EXEC -> SYNC_E: "
                       "same program fetch)\n",
                       "transfer-only", (unsigned long long)r.transfer_cycles, r.n_transfer);
                printf("  %-26s %12llu cycles  (LOAD/STORE alone, reference only)\n",
                       "  DMA-only (no EXEC fetch)", (unsigned long long)r.dma_cycles);
                printf("  %-26s %12llu cycles  (%zu instructions, bit-exact)\n", "full",
                       (unsigned long long)r.full_cycles, r.full.prog.n);
                printf("  %-26s %12llu cycles\n", "max(compute, transfer)",
                       (unsigned long long)r.bound_cycles);
                printf("  %-26s %12.3f  (OK if <= %.2f)\n", "ratio full / max", r.ratio,
                       NPU_OVERLAP_MAX_RATIO);
                printf("  %-26s %12.4g B/cycle (%s)\n", "DRAM bandwidth", r.dram_bw,
                       r.calibrated ? "calibrated" : "--dram-bw");
            }
        }
        if (rc == NPU_OVERLAP_OK)
            printf("overlap %s: full %llu cycles / max(compute %llu, transfer %llu) = %.3f at "
                   "%.4g B/cycle; gemm M=%d N=%d K=%d PASS\n",
                   verdict, (unsigned long long)r.full_cycles,
                   (unsigned long long)r.compute_cycles, (unsigned long long)r.transfer_cycles,
                   r.ratio, r.dram_bw, a->m, a->n, a->k);
        else
            printf("FAIL overlap M=%d N=%d K=%d seed %llu: %s\n", a->m, a->n, a->k,
                   (unsigned long long)a->seed, r.msg);
    }
    npu_overlap_result_free(&r);
    free(A);
    free(B);
    return ex;
}

int main(int argc, char **argv)
{
    npu_args_t a;
    char err[256];
    if (npu_args_parse(argc, argv, g_cfg.name, &a, err, sizeof err) != 0) {
        fprintf(stderr, "npu: %s\n", err);
        npu_args_usage(stderr, g_cfg.name);
        return EXIT_USAGE;
    }
    switch (a.cmd) {
    case NPU_CMD_HELP: npu_args_usage(stdout, g_cfg.name); return EXIT_PASS;
    case NPU_CMD_INFO: return cmd_info();
    case NPU_CMD_DISASM: return cmd_disasm(&a);
    case NPU_CMD_OVERLAP: return cmd_overlap(&a);
    case NPU_CMD_FLEXSA_REPORT: return npu_cmd_flexsa_report(&g_cfg, &a);
    case NPU_CMD_TRAIN_BENCH: return npu_cmd_train_bench(&a);
    case NPU_CMD_TRAIN: {
        npu_dram_timing_t t = dram_timing(&a);
        return a.layers ? npu_cmd_train(&g_cfg, &a, &t) : npu_cmd_train_conv(&g_cfg, &a, &t);
    }
    case NPU_CMD_CONV: {
        npu_dram_timing_t t = dram_timing(&a);
        return npu_cmd_conv(&g_cfg, &a, &t);
    }
    default: return cmd_gemm(&a);
    }
}
