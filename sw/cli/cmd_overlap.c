/* cmd_overlap.c - `npu overlap`: compute-only, transfer-only and full cycles of one GEMM
 * (sw/run/overlap.h): does double buffering hide the DMA? */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "run/overlap.h"
#include "run/report.h"

static void print_json(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t,
                       int rc, const char *verdict, const npu_overlap_result_t *r)
{
    cJSON *root = npu_cli_json_new(cfg, a), *w, *j, *cal;
    if (!root)
        return;
    w = cJSON_AddObjectToObject(root, "workload");
    cJSON_AddStringToObject(w, "op", "overlap");
    cJSON_AddNumberToObject(w, "m", a->m);
    cJSON_AddNumberToObject(w, "n", a->n);
    cJSON_AddNumberToObject(w, "k", a->k);
    cJSON_AddNumberToObject(w, "seed", (double)a->seed);
    cJSON_AddNumberToObject(w, "dram_latency", t->latency);
    cJSON_AddNumberToObject(w, "stall_pct", t->stall_pct);
    cJSON_AddStringToObject(root, "result", rc == NPU_OVERLAP_OK ? "PASS" : npu_gemm_rc_name(r->full.rc));
    cJSON_AddBoolToObject(root, "pass", rc == NPU_OVERLAP_OK);
    cJSON_AddStringToObject(root, "overlap", verdict);
    cJSON_AddBoolToObject(root, "overlap_ok", r->overlap_ok);
    cJSON_AddStringToObject(root, "error", r->msg);
    cJSON_AddNumberToObject(root, "dram_bw", r->dram_bw);
    cJSON_AddBoolToObject(root, "dram_bw_calibrated", r->calibrated);
    cJSON_AddNumberToObject(root, "compute_cycles", (double)r->compute_cycles);
    cJSON_AddNumberToObject(root, "transfer_cycles", (double)r->transfer_cycles);
    cJSON_AddNumberToObject(root, "dma_only_cycles", (double)r->dma_cycles);
    cJSON_AddNumberToObject(root, "full_cycles", (double)r->full_cycles);
    cJSON_AddNumberToObject(root, "max_compute_transfer_cycles", (double)r->bound_cycles);
    cJSON_AddNumberToObject(root, "ratio", r->ratio);
    cJSON_AddNumberToObject(root, "max_ratio", NPU_OVERLAP_MAX_RATIO);
    j = cJSON_AddObjectToObject(root, "instructions");
    cJSON_AddNumberToObject(j, "compute", (double)r->n_compute);
    cJSON_AddNumberToObject(j, "transfer", (double)r->n_transfer);
    cJSON_AddNumberToObject(j, "full", (double)r->full.prog.n);
    cJSON_AddNumberToObject(root, "wall_s", r->wall_s);
    cJSON_AddNumberToObject(root, "full_cycles_per_s",
                            r->full.run.wall_s > 0 ? (double)r->full_cycles / r->full.run.wall_s : 0.0);
    cJSON_AddNumberToObject(root, "full_pe_util",
                            r->full_cycles ? npu_report_pe_util(cfg, r->full.run.cnt) : 0.0);
    cal = cJSON_AddArrayToObject(root, "calibration");
    for (int i = 0; i < r->n_steps; i++) {
        j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "dram_bw", r->steps[i].dram_bw);
        cJSON_AddNumberToObject(j, "compute_cycles", (double)r->steps[i].compute_cycles);
        cJSON_AddNumberToObject(j, "transfer_cycles", (double)r->steps[i].transfer_cycles);
        cJSON_AddNumberToObject(j, "dma_only_cycles", (double)r->steps[i].dma_cycles);
        cJSON_AddItemToArray(cal, j);
    }
    npu_cli_json_print(root);
}

/* The calibration steps and the table of the measurements (not with --quiet). */
static void print_table(int rc, const npu_overlap_result_t *r)
{
    for (int i = 0; i < r->n_steps && r->calibrated; i++)
        printf("  calibration %d: DRAM %.4g B/cycle -> compute-only %llu, transfer-only "
               "%llu (DMA-only %llu) cycles\n",
               i + 1, r->steps[i].dram_bw, (unsigned long long)r->steps[i].compute_cycles,
               (unsigned long long)r->steps[i].transfer_cycles,
               (unsigned long long)r->steps[i].dma_cycles);
    if (rc != NPU_OVERLAP_OK)
        return;
    printf("  %-26s %12llu cycles  (%zu EXEC instructions, no tokens)\n",
           "compute-only", (unsigned long long)r->compute_cycles, r->n_compute);
    printf("  %-26s %12llu cycles  (%zu LOAD/STORE, no tokens, EXEC -> SYNC_E: "
           "same program fetch)\n",
           "transfer-only", (unsigned long long)r->transfer_cycles, r->n_transfer);
    printf("  %-26s %12llu cycles  (LOAD/STORE alone, reference only)\n",
           "  DMA-only (no EXEC fetch)", (unsigned long long)r->dma_cycles);
    printf("  %-26s %12llu cycles  (%zu instructions, bit-exact)\n", "full",
           (unsigned long long)r->full_cycles, r->full.prog.n);
    printf("  %-26s %12llu cycles\n", "max(compute, transfer)",
           (unsigned long long)r->bound_cycles);
    printf("  %-26s %12.3f  (OK if <= %.2f)\n", "ratio full / max", r->ratio,
           NPU_OVERLAP_MAX_RATIO);
    printf("  %-26s %12.4g B/cycle (%s)\n", "DRAM bandwidth", r->dram_bw,
           r->calibrated ? "calibrated" : "--dram-bw");
}

static void print_text(const npu_args_t *a, int rc, const char *verdict,
                       const npu_overlap_result_t *r)
{
    if (!a->quiet)
        print_table(rc, r);
    if (rc == NPU_OVERLAP_OK)
        printf("overlap %s: full %llu cycles / max(compute %llu, transfer %llu) = %.3f at "
               "%.4g B/cycle; gemm M=%d N=%d K=%d PASS\n",
               verdict, (unsigned long long)r->full_cycles,
               (unsigned long long)r->compute_cycles, (unsigned long long)r->transfer_cycles,
               r->ratio, r->dram_bw, a->m, a->n, a->k);
    else
        printf("FAIL overlap M=%d N=%d K=%d seed %llu: %s\n", a->m, a->n, a->k,
               (unsigned long long)a->seed, r->msg);
}

int npu_cmd_overlap(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t t = npu_cli_dram_timing(cfg, a);
    npu_overlap_result_t r;
    int16_t *A, *B;
    const char *verdict;
    int rc, ex;

    if (npu_cli_gemm_fits(cfg, a) != 0)
        return NPU_EXIT_USAGE;
    if (npu_cli_random_inputs(cfg, a, &A, &B) != 0) /* the same inputs as `npu gemm` with this seed */
        return NPU_EXIT_FAIL;
    if (!a->json && !a->quiet)
        printf("npu overlap M=%d N=%d K=%d seed %llu (config %s): compute-only, transfer-only "
               "and full runs%s\n",
               a->m, a->n, a->k, (unsigned long long)a->seed, cfg->name,
               a->dram_bw_set ? "" : ", DRAM bandwidth calibrated so transfer ~ compute");
    rc = npu_overlap_measure(cfg, a->m, a->n, a->k, A, B, 0, 0, &t, !a->dram_bw_set,
                             a->max_cycles, &r);
    ex = rc == NPU_OVERLAP_OK && r.overlap_ok ? NPU_EXIT_PASS
         : rc == NPU_OVERLAP_TIMEOUT         ? NPU_EXIT_TIMEOUT
                                             : NPU_EXIT_FAIL;
    verdict = rc != NPU_OVERLAP_OK ? "ERROR" : r.overlap_ok ? "OK" : "POOR";
    if (a->json)
        print_json(cfg, a, &t, rc, verdict, &r);
    else
        print_text(a, rc, verdict, &r);
    npu_overlap_result_free(&r);
    free(A);
    free(B);
    return ex;
}
