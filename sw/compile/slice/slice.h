/*
 * slice.h - the burst-aware slicing stage (TSO, brief 004 §7; docs/compiler.md "Slicing"):
 * enumerate candidate slicings of a GEMM or a convolution (fwd, dX, dW), keep those that fit the
 * SPM and the OBUF, cost each with exact DRAM bursts on dense tensors, pick the cheapest.
 *
 * Loop nest. A problem has up to five tile dims (GEMM: m, n, k; convolutions: b (images),
 * r (rows), c (columns), f (filters), ch (input channels)); some are REDUCTION dims (GEMM k;
 * fwd ch; dX f; dW b, r, c), always innermost, so an output tile accumulates in the OBUF over its
 * reduction steps and is drained and stored after its last one. A candidate is
 *   split  how the four S x S cores share a step: NPU_SLICE_SPLIT_N (the stationary columns,
 *          "by filters": the streamed operand multicast), _M (the streamed rows, "by output
 *          rows": the stationary operand multicast) or _2X2 (both halves);
 *   order  one of two loop orders of the output dims (npu_slice_order_dims);
 *   band   (GEMM only) NPU_SLICE_BAND_NONE or _ON: whether the input whose tiles follow the
 *          outermost dim keeps its band over the whole K resident in the SPM, as the GEMM
 *          emitter does (gemm_tiling.h "Resident band"); it fits when gemm_tiling places the
 *          band's chunks (npu_gemm_band_fits: at most NPU_GEMM_RES_MAX chunks, in the operand's
 *          bank and the banks the plain plan leaves free);
 *   tiles  per dim, a tile size from the balanced sizes (npu_slice_tile_opts).
 * The SPM is shared, so each tile is loaded from DRAM once whatever the split; the split decides
 * a convolution's per-core compute (a GEMM's is its emitter's waves under the cost constants'
 * policy, npu_slice_gemm_compute: its splits cost alike). A convolution's input tile is loaded
 * at a step when its tile index differs from the previous step's (consecutive reuse: the loop order decides which operand
 * stays resident); a GEMM loads an input at a step unless the step two back had the same tile
 * (its emitter's alternating buffers still hold it), except the banded input, whose tile loads
 * once, at the first step of its band (the other output dim at its first tile): each of its tiles
 * is read from DRAM once.
 *
 * Cost (Q16 cycles, slice_cost.h): per step i the load cost L_i of the input tiles it loads (of
 * which Lb_i on the DRAM bus), the compute E_i (a GEMM: the policy's waves; a convolution: max
 * over cores of its waves, plus the drain after an output tile's last reduction step; each
 * wave max(rows, (rows + bank turnaround) / 2)), a GEMM's drain D_i after an output tile's last
 * reduction step (on the drain engine, beside the next step's waves) and the store cost S_i of
 * the output tile it completes; DMA and EXEC overlap as the RTL double-buffers, the loads in
 * turn, the stores sharing only the bus with them:
 *   T = L_0 + sum_i max(E_i, D_{i-1}, L_{i+1}, Lb_{i+1} + S_{i-1}) + D_{n-1} + S_{n-1}
 *                                                          (L_n = S_{-1} = D_{-1} = D_conv = 0)
 * With OUT's band the m-tile's store (its whole rows) is spread evenly over its last step and the
 * next m-tile's other steps, as S of each (all that is left at the last step): the STORE runs
 * beside them while they fill the other band buffer.
 * Tie-break: least cost, then least DRAM bytes, then the first visited (enumeration order:
 * split, order, band (none first), then each dim's tile from the largest down, dims in index
 * order).
 */
#ifndef NPU_SLICE_H
#define NPU_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "compile/slice/slice_burst.h"
#include "compile/slice/slice_cost.h"
#include "hw/npu_cfg.h"

#define NPU_SLICE_DIMS 5

enum { NPU_SLICE_GEMM = 0, NPU_SLICE_FWD, NPU_SLICE_DX, NPU_SLICE_DW };
enum { NPU_SLICE_SPLIT_N = 0, NPU_SLICE_SPLIT_M, NPU_SLICE_SPLIT_2X2, NPU_SLICE_SPLITS };
#define NPU_SLICE_ORDERS 2
/* A GEMM candidate's resident band (compile/gemm/gemm_tiling.h "Resident band"): none, or the
 * band of the input whose tiles follow the outermost loop dim (m outermost: IN0's m-tile band,
 * n outermost: IN1's n-tile band) kept over the whole K; or (_OUT, m outermost and more than one
 * m-tile and n-tile) IN0's band and OUT's: the m-tile's output rows of all of N kept in the SPM (two band
 * buffers) and stored once, whole rows, after its last n-tile (gemm_tiling.h "C band"). The
 * convolutions have none. */
enum { NPU_SLICE_BAND_NONE = 0, NPU_SLICE_BAND_ON, NPU_SLICE_BAND_OUT, NPU_SLICE_BANDS };
#define NPU_SLICE_MAX_CANDS (1 << 24) /* a larger search space is refused */
/* The tensors of a problem: IN0 the streamed operand (A, X; dW: dY), IN1 the stationary one
 * (B, W; dW: X), OUT the result (C, Y, dX, dW). */
enum { NPU_SLICE_IN0 = 0, NPU_SLICE_IN1, NPU_SLICE_OUT, NPU_SLICE_TENSORS };

/* What one tensor's transfers cost over the whole loop nest. */
typedef struct npu_slice_tstat {
    uint64_t loads;         /* tile transfers (loads of IN0/IN1, stores of OUT) */
    npu_bursts_t b;         /* their bursts, beats, bytes, runs, DMA descriptors */
    uint64_t cost;          /* Q16 cycles of those transfers, alone */
    uint64_t bus;           /* of which on the DRAM bus (npu_slice_xfer_bus) */
} npu_slice_tstat_t;

typedef struct npu_slice_plan {
    int kind, split, order;
    int band;                       /* NPU_SLICE_BAND_NONE, or the banded input + 1 (GEMM: 1 = IN0
                                       (A, m outermost), 2 = IN1 (B, n outermost)) */
    int cband;                      /* OUT's band too (option NPU_SLICE_BAND_OUT) */
    int nd;
    const char *dim_name[NPU_SLICE_DIMS];
    int64_t ext[NPU_SLICE_DIMS];    /* extent of each dim (elements) */
    int64_t tile[NPU_SLICE_DIMS];   /* tile size (elements); edge tiles are clipped */
    int64_t ntiles[NPU_SLICE_DIMS];
    int loop[NPU_SLICE_DIMS];       /* the loop order, outermost first (dim indices) */
    unsigned spm_words[NPU_SLICE_TENSORS]; /* one buffer of each tensor's tile */
    int bufs[NPU_SLICE_TENSORS];    /* 2 (double-buffered) or 1 (a single tile, resident) */
    unsigned obuf_rows;             /* OBUF rows of one output tile */
    uint64_t steps;
    uint64_t cycles;                /* predicted, Q16 */
    uint64_t compute, transfer;     /* sum of E_i (a GEMM's without its drains) and of all
                                       transfers, Q16 (no overlap) */
    npu_slice_tstat_t t[NPU_SLICE_TENSORS];
    uint64_t index;                 /* enumeration index (the tie-break) */
} npu_slice_plan_t;

typedef struct npu_slice_result {
    npu_slice_plan_t best, second;  /* second: the runner-up by the same order (valid if fitting > 1
                                       and the cost's runner is set) */
    uint64_t visited;               /* candidates enumerated: npu_slice_count() */
    uint64_t fitting;               /* of which fit the SPM and the OBUF */
    uint64_t evaluated;             /* of which were costed step by step (the others' lower bound
                                       exceeds the best's cycles, or with runner the runner-up's) */
} npu_slice_result_t;

/* The balanced tile sizes of a dim of ext elements in units of u: for every count n of
 * ceil(ext/u) blocks, the smallest tile giving ceil(blocks/n) blocks, min(ext, that * u);
 * distinct, largest first. Writes up to max sizes to out (out may be NULL); returns how many. */
int npu_slice_tile_opts(int64_t ext, int64_t u, int64_t *out, int max);

/* Candidates the search visits: NPU_SLICE_SPLITS x NPU_SLICE_ORDERS x bands (GEMM
 * NPU_SLICE_BANDS, convolutions 1) x the product of the dims' tile option counts. */
uint64_t npu_slice_count(const npu_cfg_t *cfg, int kind, const npu_conv_t *c, int M, int N, int K);

/* The searches. 0, or -1 with the reason in msg (bad shape, depthwise, nothing fits). */
int npu_slice_gemm(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int M, int N, int K,
                   npu_slice_result_t *r, char *msg, size_t n);
int npu_slice_conv(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_conv_t *c, int kind,
                   npu_slice_result_t *r, char *msg, size_t n);

/* Costs one candidate (tile sizes per dim, split, order) as the search does: 0 when it fits
 * (plan filled), 1 when it does not fit, -1 on bad input. For tests and reports. */
int npu_slice_eval(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int kind, const npu_conv_t *c,
                   int M, int N, int K, const int64_t *tile, int split, int order, npu_slice_plan_t *p);
/* The same with a band (NPU_SLICE_BAND_NONE or _ON; _ON for a GEMM only, 1 when it does not fit). */
int npu_slice_eval_band(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int kind, const npu_conv_t *c,
                        int M, int N, int K, const int64_t *tile, int split, int order, int band,
                        npu_slice_plan_t *p);

#endif
