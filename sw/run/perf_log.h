/*
 * perf_log.h - the per-program performance log behind the cycle-count baseline (tests/perf/).
 *
 * When the environment names a file in NPU_PERF_LOG, npu_run_program appends one CSV line per
 * program it ran: a hash of the program image, its length, the final state and the exact figures
 * the baseline guards (cycles, MACs, DRAM bytes read and written per tensor tag). Simulation is
 * deterministic, so every figure is exact: tests/perf/perf_check.sh compares them with the
 * committed tests/perf/baseline.csv and prints old -> new for every figure that moved.
 */
#ifndef NPU_PERF_LOG_H
#define NPU_PERF_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "hw/isa.h"

/* FNV-1a 64 over the program image exactly as written to DRAM (16 bytes per instruction,
 * little-endian words w0..w3). */
uint64_t npu_prog_hash(const npu_insn_t *prog, size_t n);

/* The CSV header line of the log (no trailing newline). */
const char *npu_perf_log_header(void);

/* Appends the line of one run to the file path (creates it with the header if it is empty).
 * cnt: the run's NPU_NUM_COUNTERS counters. Returns 0, or -1 if the file cannot be written. */
int npu_perf_log_append(const char *path, const npu_insn_t *prog, size_t n, unsigned state,
                        const uint64_t *cnt);

#endif
