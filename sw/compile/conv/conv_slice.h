/*
 * conv_slice.h - burst-aware slicing of a convolution kernel over the plans its emitter runs
 * (docs/conv.md "Slicing", docs/compiler.md "Slicing"; issue 14 acceptance 6 on conv layers).
 *
 * Candidates. Every distinct plan conv_plan makes under its options (npu_conv_plan_opts_t):
 * fwd / dX every block group size G (max_blocks, 1 .. the output-channel blocks) with every
 * band height R (max_band_rows, the balanced heights of the banded rows, conv_plan.h); dW every
 * band height (its passes are fixed by the OBUF layout, npu_conv_dw_layout: no option moves
 * them). Plans that come out the same (R, bands, G, groups) are one candidate. Enumeration order:
 * G from the largest down, then R from the tallest down.
 *
 * Cost. Each candidate is emitted (npu_cx_emit, at the DRAM addresses a run lays its tensors
 * at: npu_conv_dram_layout) and timed whole by the caller's program-level timing model
 * (npu_conv_time_fn; the CLI and conv_slice_check pass model/prog_time.h's npu_prog_time: the
 * queues, tokens, fetch, shared DRAM bus and a stationary tile's WAVEs with their SPM sub-bank
 * collisions, 2.7% median and 9.8% max from the RTL over conv_small's 84 candidates at small,
 * 1.4% and 9.8% over the 391 of make bench's conv layers, conv_slice_check --all, dense
 * layouts), burst-aware under the slicing stage's
 * NPU_SLICE_BURST constants, bytes-only under its NPU_SLICE_NOBURST constants (each transfer its
 * payload bytes over the bandwidth), the same model otherwise. The compiler takes the function
 * as a parameter so that it does not depend on the models that judge it (sw/model/).
 *
 * Without a timing model (time NULL) its units are walked as the slicing stage walks tile steps
 * (slice_cost.h, npu_slice_pipe_*): per unit its loads (the LOAD instructions of its L / L2 /
 * FO groups: the bursts and beats of each by the DMA rule, npu_dma_bursts / npu_dma_bursts_tr,
 * one transfer each, costed by npu_slice_xfer_cost), its compute (each WAVE's injection slots
 * s, npu_wave_sets_f, as max(s, (s + wave) / 2); each DRAIN drain_fixed + rows x drain_row) and
 * its stores (STOREs). So the cost sees what the emitter really issues: the halo rows each band
 * re-loads, the row-per-LOAD padded planes, the resident weights of the first unit, the dense
 * output tiles. Burst-aware: the slicing stage's constants (npu_slice_cost_default, calibrated
 * when the config has a calibration) in NPU_SLICE_BURST mode; bytes-only: NPU_SLICE_NOBURST
 * (each transfer its payload bytes over the bandwidth), the same walk. LDWs, tokens and the
 * fetcher are not costed; the walk is 6.2% median and 46% max from the RTL on those candidates
 * and misorders close ones. Either way the walk fills the candidate's bytes, bursts and compute.
 *
 * Pick: least predicted cycles, then fewest DRAM bytes, then the first enumerated.
 * Layers whose plan does not fit whole (conv_split.h parts) are refused.
 */
#ifndef NPU_CONV_SLICE_H
#define NPU_CONV_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_emit.h"
#include "compile/conv/conv_plan.h"
#include "compile/slice/slice_cost.h"
#include "hw/npu_cfg.h"

/* One candidate: the options that give it, the plan's shape, what its program moves and its
 * predicted cycles under both costs. */
typedef struct npu_conv_cand {
    npu_conv_plan_opts_t opts;
    int R, nbands, G, ngroups, units, passes;
    uint64_t cycles[2];             /* Q16, [NPU_SLICE_BURST], [NPU_SLICE_NOBURST] */
    uint64_t compute;               /* Q16, the sum of the units' compute (no overlap) */
    uint64_t rd_bytes, wr_bytes;    /* DRAM bytes of the LOADs / STOREs: their beats x B, as the
                                       counters and conv_plan's plan_rd / plan_wr count them (the
                                       bytes-only cost takes the payload, as the slicing stage) */
    uint64_t rd_bursts, wr_bursts, xfers;
    uint64_t rd_tag[NPU_NUM_TAGS], wr_tag[NPU_NUM_TAGS]; /* the same per tag */
} npu_conv_cand_t;

typedef struct npu_conv_slicing {
    int n;
    npu_conv_cand_t *cand;          /* n candidates, in enumeration order */
    int pick[2];                    /* the pick under each cost (index into cand) */
    int heuristic;                  /* conv_plan's own choice (no options) */
} npu_conv_slicing_t;

/* A program-level timing model, passed in by the caller (the compiler does not depend on the
 * models that judge it, sw/model/): predicted cycles of prog (n instructions) on cfg under cost
 * constants k; 0, or -1 with the reason. model/prog_time.h's npu_prog_time has this type. */
typedef int (*npu_conv_time_fn)(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_insn_t *prog, size_t n,
                                uint64_t *cycles, char *why, size_t wn);

/* The DRAM addresses a run (conv_run.c) lays kernel p->kernel's tensors at: its two inputs then
 * its output (fwd X, W, Y; dX W, dY, dX; dW X, dY, dW), each rounded up to `align` bytes from 0.
 * The end of the last in *end (may be NULL). */
void npu_conv_dram_layout(const npu_conv_plan_t *p, unsigned align, npu_conv_addrs_t *a, uint64_t *end);

/* Costs plan p's program at addresses a (fills every field of *c but opts): by time (the whole
 * program under both constants) when given, else by the unit walk. 0, or -1 with the reason (the
 * emitter's or the timing model's) in msg. */
int npu_conv_slice_cost(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a,
                        npu_conv_time_fn time, npu_conv_cand_t *c, char *msg, size_t n);

/* Every candidate of kernel x dataflow of layer c, costed, and the picks. 0, or -1 with the reason
 * in msg (layer invalid, a split layer, nothing plans, out of memory). Free with
 * npu_conv_slicing_free. */
int npu_conv_slice(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow, npu_conv_time_fn time,
                   npu_conv_slicing_t *r, char *msg, size_t n);
void npu_conv_slicing_free(npu_conv_slicing_t *r);

/* Does a cost by cycles (Q16) then bytes prefer a to b? (The pick's order; ties: neither.) */
int npu_conv_cand_better(const npu_conv_cand_t *a, const npu_conv_cand_t *b, int mode);

#endif
