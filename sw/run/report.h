/*
 * report.h - end-of-run report of a GEMM run, as text and as one JSON object.
 *
 * Derived figures: simulated cycles/s = cycles / wall time; PE utilisation = useful MACs /
 * (4*S*S * cycles) with useful MACs = sum of macs_core0..3 and cycles = the `cycles` counter.
 * Counter names come from NPU_COUNTERS.
 */
#ifndef NPU_REPORT_H
#define NPU_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "hw/npu_cfg.h"
#include "run/runtime.h"

#include <cjson/cJSON.h>

typedef struct npu_report_opts {
    uint64_t seed;           /* input seed, printed for replay */
    double dram_bw;          /* DRAM timing used for the run */
    unsigned dram_latency, stall_pct;
} npu_report_opts_t;

const char *npu_counter_name(unsigned i); /* NULL if i >= NPU_NUM_COUNTERS */
const char *npu_counter_text(unsigned i);

/* Useful MACs and PE utilisation from counters (0 if cycles == 0). */
uint64_t npu_report_useful_macs(const uint64_t *cnt);
double npu_report_pe_util(const npu_cfg_t *cfg, const uint64_t *cnt);
/* Useful MACs / (4S^2 x array-busy cycles): array busy = sum of busy_<mode> (injection slots);
 * 0 if the array never ran. The array's own efficiency, independent of how fast it is fed. */
double npu_report_busy_util(const npu_cfg_t *cfg, const uint64_t *cnt);
/* The array's busy cycles: the injection slots of every mode (the sum of busy_<mode>). */
uint64_t npu_report_array_busy(const uint64_t *cnt);

void npu_report_text(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o);
/* The report's keys (config when root has none, workload, result, pass, plan, failure, cycles,
 * pe_util, DRAM bytes, counters) added to root (run/out.h). */
/* The "workload" object of a GEMM report (its sizes, transposes and, with o, seed and DRAM
 * timing) added to root. */
void npu_report_json_workload(cJSON *root, const npu_gemm_report_t *r, const npu_report_opts_t *o);
void npu_report_json_add(cJSON *root, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                         const npu_report_opts_t *o);
/* The report as one JSON object on one line. */
void npu_report_json(FILE *f, const npu_cfg_t *cfg, const npu_gemm_report_t *r,
                     const npu_report_opts_t *o);

#endif
