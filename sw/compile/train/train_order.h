/*
 * train_order.h - the ORDER stage of the training backward pass (brief 000 sections 2.2-2.8):
 * which tile-op runs when.
 *
 * Layer GEMMs (M is the batch dimension):
 *   fwd  Y(M,N)  = X(M,K) W(K,N)        reduction over K
 *   dx   dX(M,K) = dY(M,N) W^T          reduction over N
 *   dw   dW(K,N) = X^T dY(M,N)          reduction over M
 * Tiles Tm x Tn x Tk, counts Mt, Nt, Kt. A tile-op is (grad, m, n, k): one tile GEMM of one
 * gradient; dx and dw have Mt*Nt*Kt tile-ops each, so every backward order issues exactly
 * 2*Mt*Nt*Kt tile-ops (brief T2).
 *
 * An order is a SCHEDULE of one or two loop NESTS over (m, n, k) (npu_order_sched_t):
 *   seq        nest 0 = dx in (m,k,n) (dY row-major, reduction innermost), then nest 1 = dw in
 *              (k,n,m) (dY column-major): the two traditional output-stationary GEMMs one after
 *              the other (brief 2.3, "dX before dW"). Variant bits let the baseline pick the
 *              other output-stationary permutation of each GEMM: bit 0 dx in (k,m,n), bit 1 dw
 *              in (n,k,m) (brief 2.3 [INTERP]: the baseline chooses its best loop order).
 *   interleave the same two traditional streams ZIPPED 1:1: dx op s, dw op s, dx op s+1, ...
 *              (brief 2.4). dY is shared only when both streams touch the same tile.
 *   dxmajor    ONE fused nest (m,k,n); at each point the dx op then the dw op, both on the same
 *              dY[m,n] (brief 2.5); dW becomes a partial sum living across m.
 *   dwmajor    ONE fused nest (k,n,m); at each point the dw op then the dx op (brief 2.6,
 *              the (k,n,m) reading); dX[:,k] becomes a partial strip living across n.
 *   auto       Algorithm 1 on the ELEMENT dims (npu_order_alg1), resolved by
 *              npu_order_resolve(); oracle is resolved by the model (train_model.h).
 * A forward schedule (npu_order_fwd_schedule) is provided for the model: one nest (m,n,k), or
 * (n,m,k) with variant bit 0.
 *
 * Every tile-op carries first/last flags for its OUTPUT tile: first = its first contribution in
 * the sequence (an emitter starts the accumulator instead of reloading), last = its final one
 * (the tile is complete and can be stored). They are computed by counting contributions, so
 * they hold for any schedule.
 *
 * Algorithm 1 (brief 2.8, rule (a), literal, element dims):
 *   max(M,N,K) / min(M,N,K) < 4 (strict)  -> interleave
 *   else K > N and K > M (strict)          -> dwmajor
 *   else                                   -> dxmajor
 * Rule (b) of the prose ("dXmajor when dX is larger than dW", i.e. M > N) is provided for
 * logging only (npu_order_alg1_rule_b); the two disagree when N is the largest dimension.
 */
#ifndef NPU_TRAIN_ORDER_H
#define NPU_TRAIN_ORDER_H

#include <stddef.h>
#include <stdint.h>

typedef enum npu_order {
    NPU_ORDER_SEQ = 0,
    NPU_ORDER_INTERLEAVE,
    NPU_ORDER_DXMAJOR,
    NPU_ORDER_DWMAJOR,
    NPU_ORDER_AUTO,
    NPU_ORDER_ORACLE,
    NPU_ORDER_COUNT
} npu_order_t;

typedef enum npu_phase { NPU_PHASE_FWD = 0, NPU_PHASE_DX = 1, NPU_PHASE_DW = 2 } npu_phase_t;

/* Loop dimensions of a nest. */
typedef enum npu_dim { NPU_DIM_M = 0, NPU_DIM_N = 1, NPU_DIM_K = 2 } npu_dim_t;

/* Tensors of a layer (also the residency planner's index). */
typedef enum npu_tensor {
    NPU_TENSOR_X = 0, NPU_TENSOR_W, NPU_TENSOR_DY, NPU_TENSOR_DX, NPU_TENSOR_DW, NPU_TENSOR_Y, NPU_TENSOR_COUNT
} npu_tensor_t;

typedef struct npu_order_op {
    uint8_t grad;   /* npu_phase_t */
    uint8_t stream; /* nest index in the schedule (0 or 1) */
    uint8_t first;  /* first contribution to its output tile */
    uint8_t last;   /* last contribution: the output tile is final after this op */
    int m, n, k;    /* tile indices */
} npu_order_op_t;

typedef struct npu_order_nest {
    uint8_t perm[3];   /* loop dims, outer to inner (npu_dim_t) */
    uint8_t ngrads;    /* 1 or 2 ops per iteration point */
    uint8_t grads[2];  /* in issue order */
} npu_order_nest_t;

typedef struct npu_order_sched {
    int nnests;        /* 1 or 2 */
    int zipped;        /* 1: the nests alternate op by op (interleave); 0: one after the other */
    npu_order_nest_t nest[2];
} npu_order_sched_t;

/* Names: "seq", "interleave", "dxmajor", "dwmajor", "auto", "oracle"; parse returns -1 if unknown. */
const char *npu_order_name(npu_order_t o);
int npu_order_parse(const char *s);
const char *npu_phase_name(npu_phase_t g);     /* "fwd", "dx", "dw" */
const char *npu_tensor_name(npu_tensor_t t); /* "X", "W", "dY", "dX", "dW", "Y" */

/* Algorithm 1, rule (a) literal (element dims); returns INTERLEAVE, DWMAJOR or DXMAJOR. */
npu_order_t npu_order_alg1(long M, long K, long N);
/* Rule (b) for comparison: AlmostSquare -> INTERLEAVE, else M > N -> DXMAJOR, else DWMAJOR. */
npu_order_t npu_order_alg1_rule_b(long M, long K, long N);
/* AUTO -> npu_order_alg1(M,K,N); concrete orders unchanged; ORACLE -> -1 (needs the model). */
int npu_order_resolve(npu_order_t o, long M, long K, long N);

/* Schedule of a concrete backward order (SEQ..DWMAJOR) with variant bits (SEQ only: bit 0 dx
 * in (k,m,n), bit 1 dw in (n,k,m)); returns 0 or -1. */
int npu_order_schedule(npu_order_t o, unsigned variant, npu_order_sched_t *out);
/* Forward schedule: (m,n,k), or (n,m,k) with variant bit 0. */
void npu_order_fwd_schedule(unsigned variant, npu_order_sched_t *out);

/* Number of tile-ops of a schedule: nests x ngrads x Mt*Nt*Kt (2*Mt*Nt*Kt for backward). */
size_t npu_order_schedule_count(const npu_order_sched_t *s, int Mt, int Nt, int Kt);

/* Writes the tile-op sequence of schedule s into ops[0..max-1] with first/last flags; returns
 * the count, or -1 (bad sizes, max too small, allocation failure). */
long npu_order_build_ex(const npu_order_sched_t *s, int Mt, int Nt, int Kt, npu_order_op_t *ops,
                        size_t max);
/* Same for a concrete backward order with variant 0. */
long npu_order_build(npu_order_t o, int Mt, int Nt, int Kt, npu_order_op_t *ops, size_t max);

/* The output tensor, operand A and operand B of a tile-op's gradient, and tile indices:
 *   fwd: Y[m,n]  += X[m,k]  W[k,n]
 *   dx : dX[m,k] += dY[m,n] W[k,n]^T
 *   dw : dW[k,n] += X[m,k]^T dY[m,n]                                                        */
void npu_order_op_tensors(npu_phase_t g, npu_tensor_t *out, npu_tensor_t *a, npu_tensor_t *b);
/* Row-major tile index of tensor t at (m,n,k): X (m,k): m*Kt+k; W/dW (k,n): k*Nt+n;
 * dY/Y (m,n): m*Nt+n; dX (m,k): m*Kt+k. */
long npu_order_tile_index(npu_tensor_t t, int m, int n, int k, int Mt, int Nt, int Kt);
/* Tile count of tensor t. */
long npu_order_tile_count(npu_tensor_t t, int Mt, int Nt, int Kt);
/* Whether tensor t is indexed by loop dim d. */
int npu_order_tensor_uses(npu_tensor_t t, npu_dim_t d);

#endif
