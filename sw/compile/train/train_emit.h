/*
 * train_emit.h - the EMIT stage of the training backward pass: a tile-op schedule (train_order)
 * and its residency plan (train_residency) become one NPU program that computes dX and dW of a
 * layer together, so a dY tile loaded once can serve both gradients (brief 000).
 *
 * Tiles Tm x Tn x Tk (multiples of 2S). Per tile-op, in program order (loads one op ahead):
 *   LOAD   the operand tiles the plan says are missing, into their SPM slots:
 *            dY[m,n]  normal  (rows m, words over n)      A of dx, B of dw (same layout)
 *            X[m,k]   TRANSPOSED by the DMA -> X^T tile   (rows k, words over m), A of dw
 *            W[k,n]   TRANSPOSED by the DMA -> W^T tile   (rows n, words over k), B of dx
 *          and a spilled partial (int32, tag PARTIAL) before its next contribution;
 *   EXEC   per reduction block and output column block of 2S: LDW + WAVE (FW, or the mode of
 *          Algorithm 1 with the FlexSA policy) into an OBUF half (alternating per op), then one
 *          DRAIN per column block into the accumulator slot: plain for the output tile's first
 *          contribution, DRAIN acc (SPM += OBUF) for the later ones;
 *   STORE  a partial the plan spills (tag PARTIAL, to a spill area laid out like the tensor),
 *          or the final tile (tag DX / DW).
 * The actual location of every tile is tracked here (not trusted from the plan): an operand
 * or partial the plan calls resident must be found in the SPM, else the emission fails.
 *
 * Synchronisation is by completion counts on the four token channels: a LOAD into a slot
 * waits (e2l) for the EXEC op that last used the slot; a DRAIN into a slot waits (s2e) for the
 * STORE that last read it; a reload into a slot a STORE last read goes through the previous
 * EXEC op, which waits for that STORE; a STORE waits (e2s) for its op's DRAINs; an op's EXEC
 * waits (l2e) for its loads. Each producer pushes only the tokens a consumer pops; EXEC never
 * runs more than NPU_BWD_STORE_LAG stores ahead of the STOREs, nor LOAD more than
 * NPU_BWD_LOAD_LAG ops ahead of EXEC (token counters stay far below TOKEN_MAX).
 */
#ifndef NPU_TRAIN_EMIT_H
#define NPU_TRAIN_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "hw/isa.h"
#include "prog/prog.h"
#include "hw/npu_cfg.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"
#include "compile/train/train_residency.h"

#define NPU_BWD_STORE_LAG 6
#define NPU_BWD_LOAD_LAG 4

/* DRAM tensors of one layer: row-major, pitches in bytes (dense: the row's bytes). px / pw: spill areas for the dX / dW
 * partials, laid out like dX / dW (int32). */
typedef struct npu_bwd_io {
    uint32_t x, w, dy, dx, dw, px, pw;
    unsigned pitch_x, pitch_w, pitch_dy, pitch_dx, pitch_dw;
} npu_bwd_io_t;

typedef struct npu_bwd_args {
    int M, K, N;            /* layer: X (M x K), W (K x N), dY (M x N) */
    int Tm, Tn, Tk;         /* tile sizes, multiples of 2S (edge tiles are cut) */
    npu_order_t order;     /* SEQ, INTERLEAVE, DXMAJOR or DWMAJOR */
    int policy;             /* NPU_EMIT_FW (1G1C, mono LDWs) or NPU_EMIT_FLEXSA (modes per wave) */
    long budget;            /* pin window bytes; <= 0: the SPM left after the stream slots */
    unsigned acc_in;        /* bit NPU_PHASE_DX / NPU_PHASE_DW: that gradient's tensor in DRAM
                               (io.dx / io.dw) already holds the partial sum of an earlier
                               partition part (train_partition.h): each output tile's first
                               contribution loads it (tag PARTIAL) into its accumulator and
                               adds (DRAIN acc) instead of starting from zero */
    /* Partitioning in one schedule (train_run.h): nparts > 1 runs the order's nest part after
     * part over tile ranges [part_t0[p], part_t0[p+1]) of dim part_dim (npu_dim_t); the
     * first/last flags and the residency plan cover the whole sequence, so a partial of the
     * gradient the split sums stays on chip (or is spilled by the plan) across the parts. */
    int nparts;
    int part_dim;
    int part_t0[NPU_PART_MAX + 1];
    npu_bwd_io_t io;
} npu_bwd_args_t;

typedef struct npu_bwd_stats {
    long ops;                       /* tile-ops (2 Mt Nt Kt) */
    long loads[NPU_TENSOR_COUNT];       /* tile loads per tensor (operands) */
    long reloads[NPU_TENSOR_COUNT], spills[NPU_TENSOR_COUNT], stores[NPU_TENSOR_COUNT];
    long dy_compulsory;             /* Mt * Nt */
    long budget;                    /* pin window used for the plan (bytes) */
    long plan_misses;               /* operands the plan called resident that were not (loaded
                                       into a scratch slot instead) */
    uint64_t macs;                  /* 2 M N K */
    long accum_loads;               /* acc_in: tiles of an earlier part's sum loaded */
    long accum_adds;                /* element additions combining the parts (acc_in: the loaded
                                       sums; nparts > 1: the DRAIN acc of each part's first
                                       contribution to a tile an earlier part started), real
                                       extents: (P-1)*M*K for dX, (P-1)*K*N for dW */
} npu_bwd_stats_t;

/* Default tiles for a configuration: 2 x 2S each (clipped to the dims rounded up to 2S). */
void npu_bwd_default_tiles(const npu_cfg_t *cfg, int M, int K, int N, int *Tm, int *Tn, int *Tk);

/* Appends the backward program of one layer to *out. Returns 0, or -1 with a reason in msg
 * (tiles do not fit the SPM/OBUF, a field does not fit, the plan and the tracked residency
 * disagree, out of memory). */
int npu_bwd_emit(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                 npu_bwd_stats_t *st, char *msg, size_t msgn);

/* The K split one part per core (docs/training.md §4 "One part per core"): part q = K columns
 * [q*K/4, (q+1)*K/4) on core q. dX: per S-wide K-block b and S-deep N-chunk, four masked LDWs
 * (core q: W^T of its part's block b) and one bcast ISW WAVE of dY rows (each row read once,
 * every core multiplies it by its own tile); dW: per S-wide N-block and S-deep M-chunk, one
 * unmasked ISW LDW of the dY tile (multicast to the four cores) and one ISW WAVE of all K rows
 * of X^T, whose four row sets are the four parts. dY and X^T stay resident in the SPM (dY read
 * from DRAM once), W^T once per m-chunk of the dX steps (one when all M rows fit a step);
 * every gradient element is accumulated in the OBUF and stored once (no partials, no
 * accumulation adds). Applies when K is a multiple of 4S,
 * K/2 <= OBUF rows and the layout fits the SPM (npu_bwd_kcores_fits). Uses a->M, K, N, io. */
int npu_bwd_kcores_fits(const npu_cfg_t *cfg, int M, int K, int N);
int npu_bwd_emit_kcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn);

/* The M split one part per core (docs/training.md §4 "One part per core"): part p = M rows
 * [p*M/4, (p+1)*M/4) on one core each, W shared. dX: per S-wide K-block and S-deep N-chunk, one
 * unmasked ISW LDW of the W^T tile (multicast) and one ISW WAVE of all M dY rows, whose four row
 * sets are the four parts; dW: per S-wide N-block and S-deep M-chunk, four masked LDWs (each
 * core its part's dY tile) and one ISW WAVE of 4K rows of X^T (row range p = part p's M rows),
 * the four partials summed on chip by DRAIN acc ((P-1)*K*N accumulation adds). dY, W^T and X^T
 * resident in the SPM (each read from DRAM once). Applies when M is a multiple of 4S, M/2 and
 * 2K <= OBUF rows and the layout fits the SPM (npu_bwd_mcores_fits). Uses a->M, K, N, io. */
int npu_bwd_mcores_fits(const npu_cfg_t *cfg, int M, int K, int N);
int npu_bwd_emit_mcores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn);

/* The N split one part per core (docs/training.md §4 "One part per core"): part p = N columns
 * [p*N/4, (p+1)*N/4), X shared. dW: per S-wide block of every part and S-deep M-chunk, four
 * masked LDWs (each core its part's dY tile) and one bcast ISW WAVE of the K rows of X^T; dX: per
 * S-wide K-block and S-deep chunk of the parts' columns, four masked LDWs (each core its part's
 * W^T tile) and one ISW WAVE of 4M rows (row range p = dY[:, part p]), the four partials summed
 * on chip by DRAIN acc ((P-1)*M*K accumulation adds). dY, W^T and X^T resident in the SPM.
 * Applies when N is a multiple of 8S (each part's columns start on a beat), 2M and 2K <= OBUF
 * rows and the layout fits the SPM (npu_bwd_ncores_fits). Uses a->M, K, N, io. */
int npu_bwd_ncores_fits(const npu_cfg_t *cfg, int M, int K, int N);

/* The order in which the M and N splits' sum4 (train_cores_mn.c) combines the four partials
 * P_p of the summed gradient into its accumulator: P2 written, then P3, P0, P1 each added by
 * DRAIN acc, ((P2 + P3) + P0) + P1. The order the bf16 golden sums in (ref/bwd_golden_bf16.h). */
extern const int npu_bwd_cores_sum_order[4];
int npu_bwd_emit_ncores(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                        npu_bwd_stats_t *st, char *msg, size_t msgn);

#endif
