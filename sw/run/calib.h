/*
 * calib.h - `npu calibrate`: microbenchmarks on the simulated NPU (the Verilated RTL) whose
 * cycles fit the slicing stage's cost constants (compile/slice/slice_cost.h) by least squares
 * (docs/compiler.md "Slicing", "Calibration").
 *
 * DMA (TSO's sawtooth, brief 004 §3 Fig. 1 and acceptance 3): programs of LOADs of dense
 * tensors. Each LOAD reads `rows` rows of slice width w bytes (w = 16.. in steps of 16 B, 32 B
 * with quick, up to max(512, 2 bursts) so at least two burst periods show), either slices of a
 * wider tensor (pitch = the widest w: one run per row) or full rows of a w-wide tensor (one run),
 * 1 or 4 LOADs per program, at a beat-aligned and an unaligned base; with LOAD_PIPELINE = 1 also
 * 4 LOADs each after a SYNC_L (waits = 3: the engine idle, as after a token wait). Bursts, beats and transfers
 * are counted by the slicing stage's counter (slice_burst.h) and cross-checked against
 * npu_dma_bursts (prog_expect.h) and the RTL's dram_rd_bursts / dram_rd_x counters. Fit:
 *   cycles = launch + xfer_idle * waits + max(xfer_fixed * transfers + burst * bursts +
 *                         byte * beats * B, lat_fixed * transfers + window * bursts)
 * piecewise (each program classed bus- or latency-bound, refitted until the classes settle;
 * R^2 must reach NPU_CALIB_R2_MIN).
 * WAVE: trains of n (1..4) LDW + WAVE pairs (mode FW, k = n = 2S: an S x S tile per core, the two
 * weight banks alternating as the emitters do) of m = S..32S rows. Fit: each pair takes
 * max(m, (m + wave) / 2), wave the bank turnaround (classed and refitted likewise).
 * DRAIN: n (1, 2, 4) DRAINs of r rows. Fit: cycles = launch + drain_fixed * n + drain_row * n r.
 * launch (program start, fetch, halt) is fitted and reported, not used by the slicer.
 * Every program runs alone on an idle NPU at the config's DRAM timing without stalls: cycles are
 * deterministic, so the same RTL gives the same constants.
 */
#ifndef NPU_CALIB_H
#define NPU_CALIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/npu_cfg.h"
#include "npu_sim.h"
#include "run/calib_fit.h"

#define NPU_CALIB_R2_MIN 0.98 /* acceptance 3: the DMA fit's R^2 */

typedef struct npu_calib_dma_pt {
    unsigned w, rows, xfers, off, dense; /* dense: pitch = w (one run), else the widest w */
    unsigned waits;                      /* LOADs after a SYNC_L (the first has none): 0 or xfers - 1 */
    uint64_t bursts, beats, cycles;
} npu_calib_dma_pt_t;

typedef struct npu_calib_exec_pt {
    unsigned size, count; /* WAVE: m rows, n pairs; DRAIN: r rows, n drains */
    uint64_t rows, cycles; /* rows: n * m (WAVE) or n * r (DRAIN) */
} npu_calib_exec_pt_t;

typedef struct npu_calib_model {
    double coef[NPU_LSQ_MAX]; /* launch first, then the constants in the order above */
    double r2;                /* of the predicted against the measured cycles */
    size_t n;
} npu_calib_model_t;

#define NPU_CALIB_EXEC_MAX 32
typedef struct npu_calib {
    int quick;
    npu_calib_dma_pt_t *dma; /* owned (npu_calib_free) */
    unsigned char *dma_lat;  /* per DMA point: latency-bound in the fit (owned) */
    size_t ndma;
    unsigned char wave_turn[NPU_CALIB_EXEC_MAX]; /* per WAVE point: turnaround-bound in the fit */
    npu_calib_exec_pt_t wave[NPU_CALIB_EXEC_MAX], drain[NPU_CALIB_EXEC_MAX];
    size_t nwave, ndrain;
    npu_calib_model_t fdma, fwave, fdrain; /* fdma: launch, xfer_fixed, burst, byte, lat_fixed,
                                              window, xfer_idle; fwave: launch, wave; fdrain: launch,
                                              drain_fixed, drain_row */
    npu_cfg_calib_t k;                     /* the constants in Q16 cycles (valid = 1) */
    double wall_s;
} npu_calib_t;

/* Runs the microbenchmarks on sim (a model of cfg, opened at cfg's DRAM timing without stalls)
 * and fits. 0, or -1 with the reason in msg: a program that fails, a burst count the RTL
 * disagrees with, a degenerate or negative fit, R^2 below NPU_CALIB_R2_MIN. Free c with
 * npu_calib_free whatever the result. */
int npu_calibrate(const npu_cfg_t *cfg, npu_sim_t *sim, int quick, npu_calib_t *c, char *msg,
                  size_t n);
void npu_calib_free(npu_calib_t *c);

/* The calibration file (configs/<cfg>.calib, read by sw/tools/gencfg): the measurement's
 * conditions, the sweep, the Q16 constants with their cycles and the fits' R^2 as comments; the
 * header names the command that wrote it. 0, or -1 on a write error. */
int npu_calib_write(FILE *f, const npu_cfg_t *cfg, const npu_calib_t *c, const char *command);

#endif
