/*
 * conv_slice.h - burst-aware slicing of a convolution kernel over the plans its emitter runs
 * (docs/conv.md "Slicing", docs/compiler.md "Slicing"; issue 14 acceptance 6 on conv layers).
 *
 * Candidates: the tile sizes along every dimension the emitter can cut, as options of
 * npu_conv_split (conv_plan.h npu_conv_plan_opts_t; batch 1 needs no batch tile):
 *   - filters and channels per DRAM range (split_f, split_c: the balanced 2S-block sizes of F and
 *     C, npu_slice_tile_opts; depthwise: channels only) and, for fwd and dX, columns per range
 *     (split_w, 1 .. NW_MAX ranges): the split's parts (conv_split.h; at most PARTS_MAX);
 *   - per part, fwd / dX the output-channel blocks per unit G (max_blocks, 1 .. part 0's blocks)
 *     and the band height R (max_band_rows, the balanced heights of the banded rows, conv_plan.h);
 *     dW the band height (its passes are fixed by the OBUF layout, npu_conv_dw_layout: no option
 *     moves them).
 * Two stages. A: every split, its parts at conv_plan's own bands and groups. B: every (G, R) on
 * every split of A when their options number at most PLANS_FULL (512) in all, else on the
 * SPLITS_TOP (3) cheapest splits of A under each cost. Plans that come out the same (split,
 * part 0's R, bands, G, groups, units) are one candidate. Enumeration order: conv_plan's own
 * (npu_conv_split without options: the heuristic) first, then A (columns ranges, filter ranges,
 * channel ranges, each from the fewest up), then B (G, then R from the largest down).
 * A layer of one part is costed as its plan (below); a split's parts are walked one after the
 * other at their own addresses (a barrier between parts), or its whole program (conv_split_emit)
 * timed.
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
 * Measured (make bench, conv_slice_check): the bytes-only cost picks channel ranges where a
 * depthwise dW would read a pixel's channels in pieces, a burst per pixel and range; the
 * burst-aware cost sees those bursts.
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
    int R, nbands, G, ngroups, units, passes; /* part 0's bands, groups, dW passes; units: all parts' */
    int nf, nc, nw, parts;          /* the split (conv_split.h): filter, channel, column ranges */
    int rows, gmax;                 /* part 0's rows cut into bands and output-channel blocks */
    uint64_t cycles[2];             /* Q16, [NPU_SLICE_BURST], [NPU_SLICE_NOBURST] */
    uint64_t compute;               /* Q16, the sum of the units' compute (no overlap) */
    uint64_t rd_bytes, wr_bytes;    /* DRAM bytes of the LOADs / STOREs: their beats x B, as the
                                       counters and conv_plan's plan_rd / plan_wr count them (the
                                       bytes-only cost takes the payload, as the slicing stage) */
    uint64_t rd_bursts, wr_bursts, xfers;
    uint64_t rd_tag[NPU_NUM_TAGS], wr_tag[NPU_NUM_TAGS]; /* the same per tag */
} npu_conv_cand_t;

typedef struct npu_conv_slicing {
    int n, cap;
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
 * in msg (layer invalid, nothing plans, split or not: npu_conv_split's reason; out of memory).
 * Free with npu_conv_slicing_free. */
int npu_conv_slice(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow, npu_conv_time_fn time,
                   npu_conv_slicing_t *r, char *msg, size_t n);
void npu_conv_slicing_free(npu_conv_slicing_t *r);

/* Does a cost by cycles (Q16) then bytes prefer a to b? (The pick's order; ties: neither.) */
int npu_conv_cand_better(const npu_conv_cand_t *a, const npu_conv_cand_t *b, int mode);

#endif
