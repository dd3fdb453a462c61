/*
 * npu_sim.h - C API of the Verilator harness (tb/npu_sim.cpp) around the `npu_top` RTL and the
 * C DRAM model (tb/dram_model.c). Usable from C99 and C++. The harness is compiled per
 * configuration: the build's S and DRAM size come from build/<config>/npu_params.h.
 *
 * One simulated clock cycle:
 *   dram_drive -> NPU inputs set, clk = 0, eval -> NPU outputs read -> dram_sample
 *   -> clk = 1, eval (posedge) -> trace dump (if in the window) -> cycle++
 */
#ifndef NPU_SIM_H
#define NPU_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "dram_model.h" /* npu_dram_timing_t */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npu_sim npu_sim_t;

/* Builds the model and the DRAM (zeroed), holds rst_n = 0 for 4 cycles, then releases it.
 * t = NULL: the configuration's defaults (DRAM_BW, DRAM_LATENCY, DRAM_BURST_COST, no stalls).
 * Returns NULL on failure. */
npu_sim_t *npu_sim_open(const npu_dram_timing_t *t);
/* Finishes the trace (if any), runs final blocks, frees everything. NULL is allowed. */
void npu_sim_close(npu_sim_t *s);

/* The DRAM model's memory (2^DRAM_ADDR_BITS bytes); the host loads / reads tensors directly. */
uint8_t *npu_sim_dram(npu_sim_t *s, size_t *bytes);

/* Drives csr_addr/csr_wdata with csr_we = 1 for one full clock cycle. */
void npu_sim_csr_write(npu_sim_t *s, uint32_t addr, uint32_t v);
/* Combinational read of csr_rdata at csr_addr = addr (no clock edge). */
uint32_t npu_sim_csr_read(npu_sim_t *s, uint32_t addr);

/* Clocks until the `halted` output is 1 (returns 1; returns 1 at once if it already is) or
 * max_cycles more cycles elapsed (returns 0). Returns -1 if the RTL executed $finish (an RTL
 * assertion, rtl/npu_assert.vh; see npu_sim_assert_msg), also when called again after that. */
int npu_sim_run(npu_sim_t *s, uint64_t max_cycles);
/* Clocks exactly n cycles whatever `halted` is (stops early once the RTL executed $finish). */
void npu_sim_step(npu_sim_t *s, uint64_t n);
/* 1 once the RTL executed $finish (the model no longer advances), else 0. */
int npu_sim_finished(npu_sim_t *s);
/* The line "NPU_ASSERT <instance path>: <message>" of the first RTL assertion that fired since
 * npu_sim_open (models built with +define+NPU_ASSERTS), and the cycle it fired in (*cycle, may be
 * NULL); NULL if none fired. */
const char *npu_sim_assert_msg(npu_sim_t *s, uint64_t *cycle);
/* Cycles since npu_sim_open (the 4 reset cycles included). */
uint64_t npu_sim_cycle(npu_sim_t *s);

/* Dumps an FST of the cycles in [start_cycle, end_cycle) (end_cycle 0 = until close); the file
 * is opened now and closed at end_cycle or npu_sim_close. A second call replaces the first.
 * Two time points per cycle: 10*c (clk low, inputs of cycle c applied) and 10*c+5 (after the
 * posedge). Returns 0, or -1 if this build has no tracing (NPU_TRACE undefined) or on error. */
int npu_sim_trace(npu_sim_t *s, const char *fst_path, uint64_t start_cycle, uint64_t end_cycle);

/* Any pointer may be NULL. */
void npu_sim_dram_stats(npu_sim_t *s, uint64_t *rd_beats, uint64_t *wr_beats, uint64_t *rd_bursts,
                        uint64_t *wr_bursts, uint64_t *stall_cycles);

/* 4*S of this build (bytes per DRAM beat = per SPM word). */
unsigned npu_sim_beat_bytes(void);

/* Calls fn for every DRAM burst as it completes (dram_set_burst_hook; cycles as npu_sim_cycle);
 * fn = NULL stops. Returns 0, or -1 where no DRAM timing model exists (the functional model). */
int npu_sim_burst_hook(npu_sim_t *s, dram_burst_fn fn, void *ctx);

/* The DRAM model itself (dram_model.h): full statistics, dram_set_timing() between runs. */
dram_t *npu_sim_dram_model(npu_sim_t *s);

#ifdef __cplusplus
}
#endif

#endif /* NPU_SIM_H */
