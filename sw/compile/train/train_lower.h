/*
 * train_lower.h - the lowering choice of a layer's backward pass (docs/training.md §4 "The
 * lowering choice"): from the configuration, the layer's shape and the step's options, which
 * program form runs dX and dW, under which concrete order, split how, with which tiles. A pure
 * function: the run driver (run/train_run.c) executes what it returns.
 *
 * Forms, in the order they are tried for a partitioned layer:
 *   CORES     one part per core, the four concurrently (kx4c, mx4c, nx4c; train_cores.c):
 *             --partition k / m / n where npu_bwd_{k,m,n}cores_fits holds and the parts are not
 *             asked to run in sequence;
 *   SCHEDULE  one fused program (train_emit.c): the order's nest part after part over the
 *             parts' tile ranges (one part when not partitioned);
 *   SUBGEMMS  the parts as sub-GEMMs behind a SYNC barrier, part p > 0 adding to the running
 *             sum; the fallback when the SCHEDULE emission fails (its residency plan does not
 *             hold across the parts).
 * A form whose emission fails falls back to the next (npu_lower_fallback). GEMMS (dX then
 * dW as two GEMM programs) is the sequential baseline: order seq without partitioning, and
 * every first layer (no dX: its dW alone).
 */
#ifndef NPU_TRAIN_LOWER_H
#define NPU_TRAIN_LOWER_H

#include <stddef.h>

#include "hw/npu_cfg.h"
#include "compile/train/train_order.h"
#include "compile/train/train_partition.h"

#define NPU_TRAIN_PARTS 4 /* partition parts: one per FlexSA core */

/* The GEMMs of one layer: forward Y (M x N) = X (M x K) . W (K x N); backward dX = dY . W^T
 * (when has_dx) and dW = X^T . dY. The one shape type of the training code: the analytical
 * model, the layer sets, the lowering and the run results all describe a layer by it. */
typedef struct npu_train_shape {
    long M, K, N;
    int has_dx; /* 0 for a network's first layer: no dX, only the dW GEMM */
} npu_train_shape_t;

typedef enum npu_lower_form {
    NPU_LOWER_GEMMS = 0, /* dX then dW, two GEMM programs (seq; first layers) */
    NPU_LOWER_CORES,     /* one part per core: npu_bwd_emit_{k,m,n}cores */
    NPU_LOWER_SCHEDULE,  /* one fused program, the parts in one schedule: npu_bwd_emit */
    NPU_LOWER_SUBGEMMS   /* the parts as fused sub-GEMMs behind a SYNC barrier */
} npu_lower_form_t;

/* The step's options that shape a layer's lowering. */
typedef struct npu_lower_opts {
    npu_order_t order;    /* SEQ .. DWMAJOR, or AUTO (Algorithm 1); ORACLE is not a lowering:
                              the driver lowers and measures each concrete order */
    npu_part_t part;      /* NONE, M, N, K; KNN must be resolved first (model/knn_part.h: the
                              selector is trained on the analytical model, which depends on the
                              compiler, not the reverse) */
    int parts_in_sequence; /* 1: no CORES form (kseq, mseq, nseq) */
    int tile;              /* > 0: Tm = Tn = Tk = tile, clipped to the dims rounded up to 2S;
                              0: npu_bwd_default_tiles */
} npu_lower_opts_t;

typedef struct npu_lower_plan {
    npu_lower_form_t form;
    npu_order_t order;     /* concrete (SEQ .. DWMAJOR); SEQ for GEMMS */
    npu_part_t part;       /* NONE, M, N, K; NONE for GEMMS and for a first layer */
    int nparts;             /* parts run: NPU_TRAIN_PARTS for CORES, plan.nparts otherwise */
    long accum_expect;      /* element additions combining the parts' partials: (nparts - 1) *
                               (K*N for M, M*K for N), 0 for K and NONE */
    int Tm, Tn, Tk;         /* the layer's tiles (npu_lower_tiles) */
    npu_part_plan_t plan;  /* the split, aligned to the tile along the split dim (one part for NONE) */
    int part_dim;           /* SCHEDULE: npu_dim_t of the split (K for NONE) */
    int part_t0[NPU_PART_MAX + 1]; /* SCHEDULE: tile ranges [part_t0[p], part_t0[p+1]) */
    int part_tiles[NPU_PART_MAX][3]; /* SUBGEMMS: each part's own Tm, Tn, Tk */
} npu_lower_plan_t;

/* The lowering of layer L under o. Returns 0, or -1 with a reason in msg (bad options, the
 * split fails). Pure. */
int npu_lower_choose(const npu_cfg_t *cfg, const npu_train_shape_t *L,
                    const npu_lower_opts_t *o, npu_lower_plan_t *lw, char *msg,
                    size_t msgn);

/* The emission of lw->form failed: moves lw to the next form (CORES -> SCHEDULE -> SUBGEMMS,
 * nparts and accum_expect following). 0, or -1 when there is none (GEMMS, SUBGEMMS). */
int npu_lower_fallback(npu_lower_plan_t *lw);

/* Tiles of a (sub-)GEMM: the defaults, or tile (> 0) clipped to each dim rounded up to 2S. */
void npu_lower_tiles(const npu_cfg_t *cfg, int tile, int M, int K, int N, int *Tm, int *Tn,
                           int *Tk);

const char *npu_lower_form_name(npu_lower_form_t f); /* "gemms", "cores", "schedule", "subgemms" */

#endif
