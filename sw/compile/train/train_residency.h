/*
 * train_residency.h - the explicit SPM residency planner of the training pass (brief 000
 * sections 2.7, 2.11, 2.12 "lesson"): which tiles the compiler PINS in the scratchpad, which it
 * STREAMS, and which partial sums it SPILLS to DRAM. No cache policy (no LRU): the plan is a
 * function of the schedule, the tile counts and the budget only.
 *
 * Model.
 *  - The SPM is split in two parts (double buffering): the STREAM area holds the current and
 *    the next step's operand tiles and accumulators (two slots per stream and tensor it uses,
 *    each sized for that tensor's tile: npu_resid_stream_layout); the rest is the PIN WINDOW
 *    ("reuse window = half the SPM", brief 2.1). The budget given here is the pin window, in
 *    tiles (tile units) or in bytes (byte units); the stream area follows it.
 *  - Reuse analysis per loop nest (train_order.h): a tensor (input X, W, dY, or output dX, dW,
 *    Y) is indexed by two of the three loop dims; it is reused across the loop of the dim it
 *    does not use, at level L (0 outer .. 2 inner). L = 2: the tile stays in the stream buffer
 *    (a stationary operand, an output-stationary accumulator): no pin needed. L < 2: a PIN
 *    CANDIDATE of footprint F = product of the trips of the inner loops (> L) the tensor uses,
 *    valid for one iteration of the outer loops (< L, O iterations), reused R = trips(L) times.
 *      dxmajor (m,k,n): dY row strip F = Nt at k; W all F = Kt*Nt at m; dW partials Kt*Nt at m
 *      dwmajor (k,n,m): dY all F = Mt*Nt at k; X[:,k] strip Mt at n; dX[:,k] partials Mt at n
 *      seq dx (m,k,n): dY row strip Nt, W all;  seq dw (k,n,m): X[:,k] strip Mt, dY all
 *  - Saving of pinning one tile: (R-1)*O loads for an input, 2*(R-1)*O transfers for a partial
 *    (a spill write and a reload read). Candidates are taken greedily by saving per byte
 *    (ties: dY first, then the partials, then X, W: "pin the dY strip and the partials first,
 *    stream the rest"); one that does not fit whole is pinned PARTIALLY ("to the extent
 *    possible", brief 2.7): its first p distinct tiles of every scope stay, the others stream
 *    (a cyclic walk then reloads F - p tiles per reuse; an LRU would reload all F).
 *  - Budgets: a sequential schedule (seq) plans each pass with the whole window (the passes
 *    are separate kernels), plus a LAYER pin of all of dY across the pass boundary when both
 *    passes have room for it (so T7 holds for seq); a zipped (interleave) or fused schedule
 *    shares one window between its streams.
 *  - Residency during the run: a tile is in SPM if it is pinned in a live scope (the op's own
 *    stream, the layer pin, or the other stream of a zipped schedule), or is the current tile
 *    of that tensor of any stream (the stream buffer: consecutive reuse, the interleave "T0"
 *    reuse of dY, both ops of a fused step on one dY tile). Otherwise it is loaded.
 *  - Outputs: a first contribution starts the accumulator (no load); a later one reloads the
 *    partial from DRAM unless it is resident; after a non-final contribution a partial that is
 *    neither pinned nor the next contribution of its stream is spilled; after the last one the
 *    tile is stored (final store). Spills and reloads are DRAM traffic (brief T5):
 *      dxmajor, no dW partial pinned: Mt*Kt*Nt dW writes, (Mt-1)*Kt*Nt dW reads;
 *      dwmajor, no dX partial pinned: Kt*Nt*Mt dX writes, Kt*(Nt-1)*Mt dX reads.
 *  - Bytes: operands int16 (2 B), partials and final gradients int32 (4 B) (the OBUF/SPM
 *    accumulator format of the RTL); edge tiles count their real extents when the element dims
 *    are given, pins are charged the full tile.
 *
 * Output: per tile-op the actions an emitter needs (loads of A/B, partial reload, spill, final
 * store, SPM slots of A, B and the accumulator, DRAM bytes before/after the op) and per-tensor
 * counters.
 */
#ifndef NPU_TRAIN_RESIDENCY_H
#define NPU_TRAIN_RESIDENCY_H

#include <stddef.h>
#include <stdint.h>

#include "compile/train/train_order.h"

#define NPU_RESID_MAX_PINS 16
#define NPU_RESID_LAYER 2 /* pin owner: the whole layer (both passes) */

typedef struct npu_resid_cfg {
    int Mt, Nt, Kt;       /* tile counts */
    long budget;          /* pin window: tiles (units = 0) or bytes (units = 1) */
    int bytes;            /* 0: every tile is 1 unit; 1: bytes, from the fields below */
    long M, N, K;         /* element dims (bytes mode; 0: all tiles full) */
    int Tm, Tn, Tk;       /* tile sizes (bytes mode) */
    int in_bytes;         /* operand element bytes (0: 2) */
    int acc_bytes;        /* partial/gradient element bytes (0: 4) */
    int no_pins;          /* ablation: pin nothing (pure streaming) */
} npu_resid_cfg_t;

typedef struct npu_resid_pin {
    uint8_t owner;   /* stream 0/1, or NPU_RESID_LAYER */
    uint8_t tensor;  /* npu_tensor_t */
    uint8_t level;   /* loop level of the reuse (scope = the loops outside it) */
    uint8_t partial; /* output tensor (partial sums) */
    long footprint;  /* tiles of one scope */
    long pinned;     /* tiles kept per scope (<= footprint) */
    long base;       /* slot base in the pin window (units) */
    double saving;   /* transfers saved per pinned tile */
} npu_resid_pin_t;

typedef struct npu_resid_plan {
    npu_order_sched_t sched;
    npu_resid_cfg_t cfg;
    int npins;
    npu_resid_pin_t pin[NPU_RESID_MAX_PINS];
    long used[2];       /* window used per pass (zipped/fused: [0] only) */
    long stream_base;   /* first unit of the stream half (= budget) */
    long tile_unit[NPU_TENSOR_COUNT]; /* charge of one full tile per tensor */
    /* stream buffers (npu_resid_stream_layout): per stream and tensor, the first of its two
     * buffers relative to stream_base (-1: the stream does not use the tensor), and the size
     * of the stream area */
    long stream_off[2][NPU_TENSOR_COUNT];
    long stream_units;
} npu_resid_plan_t;

typedef struct npu_resid_action {
    uint8_t load_a, load_b; /* operand tiles fetched from DRAM before this op */
    uint8_t reload;         /* partial sum read back from DRAM before this op */
    uint8_t spill;          /* partial sum written to DRAM after this op */
    uint8_t store;          /* final output tile written after this op */
    uint8_t pinned_acc;     /* accumulator lives in the pin window */
    long slot_a, slot_b, slot_acc; /* SPM slot (units) of A, B and the accumulator */
    uint32_t rd_bytes;      /* DRAM units read before this op (loads + reload) */
    uint32_t wr_bytes;      /* DRAM units written after this op (spill + store) */
} npu_resid_action_t;

typedef struct npu_resid_counts {
    long loads[NPU_TENSOR_COUNT];   /* operand tile loads (X, W, dY) */
    long reloads[NPU_TENSOR_COUNT]; /* partial reloads (dX, dW, Y) */
    long spills[NPU_TENSOR_COUNT];  /* partial spills */
    long stores[NPU_TENSOR_COUNT];  /* final stores */
    long transfers;             /* all of the above */
    uint64_t rd[NPU_TENSOR_COUNT];  /* units read per tensor (loads + reloads) */
    uint64_t wr[NPU_TENSOR_COUNT];  /* units written per tensor (spills + stores) */
    uint64_t rd_total, wr_total;
} npu_resid_counts_t;

/* Stream buffers of schedule s: two per stream (nest) and tensor that stream uses, each one
 * full tile of that tensor (tile units of cfg), packed stream by stream. Fills off[st][t]
 * (relative to the stream base; -1 if stream st does not use t) and returns the area's size.
 * (Sizing every buffer by the largest tile for all six tensors and both streams, 24 largest
 * tiles, did not fit config medium's SPM with the default tiles.) */
long npu_resid_stream_layout(const npu_order_sched_t *s, const npu_resid_cfg_t *cfg,
                            long off[2][NPU_TENSOR_COUNT]);

/* Plans the pins of schedule s; returns 0 or -1 (bad arguments). */
int npu_resid_plan(const npu_order_sched_t *s, const npu_resid_cfg_t *cfg, npu_resid_plan_t *plan);

/* Runs the plan over ops[0..n-1] (the sequence of the same schedule, npu_order_build_ex);
 * fills act[0..n-1] if act is not NULL and *cnt. Returns 0 or -1 (allocation, bad op). */
int npu_resid_run(const npu_resid_plan_t *plan, const npu_order_op_t *ops, size_t n,
                 npu_resid_action_t *act, npu_resid_counts_t *cnt);

/* Convenience: order + plan + run for a concrete backward order (variant 0), counters only.
 * Returns 0 or -1. */
int npu_resid_eval(npu_order_t o, const npu_resid_cfg_t *cfg, npu_resid_counts_t *cnt);

/* Compulsory transfers of the backward pass in tiles: dY + X + W loads, dX + dW stores. */
long npu_resid_compulsory(int Mt, int Nt, int Kt);

#endif
