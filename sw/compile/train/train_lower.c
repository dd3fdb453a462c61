/* train_lower.c - the lowering choice of a layer's backward pass; see train_lower.h. */
#include "compile/train/train_lower.h"

#include <stdio.h>
#include <string.h>

#include "compile/train/train_emit.h"

const char *npu_lower_form_name(npu_lower_form_t f)
{
    static const char *const k_name[] = {"gemms", "cores", "schedule", "subgemms"};
    return (unsigned)f < sizeof k_name / sizeof k_name[0] ? k_name[f] : "?";
}

void npu_lower_tiles(const npu_cfg_t *cfg, int tile, int M, int K, int N, int *Tm, int *Tn,
                           int *Tk)
{
    int F = 2 * cfg->s;
    npu_bwd_default_tiles(cfg, M, K, N, Tm, Tn, Tk);
    if (tile > 0) {
        *Tm = tile < (M + F - 1) / F * F ? tile : (M + F - 1) / F * F;
        *Tn = tile < (N + F - 1) / F * F ? tile : (N + F - 1) / F * F;
        *Tk = tile < (K + F - 1) / F * F ? tile : (K + F - 1) / F * F;
    }
}

/* The per-core form applies: its split, not asked in sequence, and the operands fit. */
static int cores_apply(const npu_cfg_t *cfg, const npu_train_shape_t *L,
                       const npu_lower_opts_t *o)
{
    int M = (int)L->M, K = (int)L->K, N = (int)L->N;
    if (o->parts_in_sequence)
        return 0;
    return (o->part == NPU_PART_K && npu_bwd_kcores_fits(cfg, M, K, N)) ||
           (o->part == NPU_PART_M && npu_bwd_mcores_fits(cfg, M, K, N)) ||
           (o->part == NPU_PART_N && npu_bwd_ncores_fits(cfg, M, K, N));
}

/* The combining adds of the four per-core parts: the on-chip sum of dW (M) or dX (N). */
static long cores_accum(const npu_lower_plan_t *lw, const npu_train_shape_t *L)
{
    if (lw->part == NPU_PART_K)
        return lw->plan.accum_elems;
    return (long)(NPU_TRAIN_PARTS - 1) * (lw->part == NPU_PART_M ? L->K * L->N : L->M * L->K);
}

/* SCHEDULE: the parts' tile ranges along the split dim; SUBGEMMS: each part's tiles. */
static void part_tiles(const npu_cfg_t *cfg, int tile, npu_lower_plan_t *lw, int T)
{
    npu_part_t p = lw->part;
    lw->part_dim = p == NPU_PART_M ? NPU_DIM_M : p == NPU_PART_N ? NPU_DIM_N : NPU_DIM_K;
    for (int i = 0; i < lw->plan.nparts; i++) {
        const npu_part_sub_t *sp = &lw->plan.part[i];
        long off = p == NPU_PART_M ? sp->m0 : p == NPU_PART_N ? sp->n0 : sp->k0;
        long len = p == NPU_PART_M ? sp->M : p == NPU_PART_N ? sp->N : sp->K;
        lw->part_t0[i] = (int)(off / T);
        lw->part_t0[i + 1] = (int)((off + len + T - 1) / T);
        npu_lower_tiles(cfg, tile, (int)sp->M, (int)sp->K, (int)sp->N, &lw->part_tiles[i][0],
                              &lw->part_tiles[i][1], &lw->part_tiles[i][2]);
    }
}

int npu_lower_choose(const npu_cfg_t *cfg, const npu_train_shape_t *L,
                    const npu_lower_opts_t *o, npu_lower_plan_t *lw, char *msg,
                    size_t msgn)
{
    int order, T;
    memset(lw, 0, sizeof *lw);
    lw->nparts = 1;
    lw->order = NPU_ORDER_SEQ;
    if ((unsigned)o->part > NPU_PART_K) {
        snprintf(msg, msgn, "no lowering of partition %s", npu_part_name(o->part));
        return -1;
    }
    if (!L->has_dx)
        return 0; /* GEMMS: the first layer has no dX, its dW alone (any order) */
    order = npu_order_resolve(o->order, L->M, L->K, L->N);
    if (order < NPU_ORDER_SEQ || order > NPU_ORDER_DWMAJOR) {
        snprintf(msg, msgn, "no lowering of order %s", npu_order_name(o->order));
        return -1;
    }
    if (order == NPU_ORDER_SEQ && o->part == NPU_PART_NONE)
        return 0; /* GEMMS: the sequential baseline */
    lw->order = (npu_order_t)order;
    lw->part = o->part;
    npu_lower_tiles(cfg, o->tile, (int)L->M, (int)L->K, (int)L->N, &lw->Tm, &lw->Tn, &lw->Tk);
    /* the split is aligned to the layer's tile along the split dim (as in the model) */
    T = o->part == NPU_PART_M ? lw->Tm : o->part == NPU_PART_N ? lw->Tn : lw->Tk;
    if (npu_part_split(o->part, o->part == NPU_PART_NONE ? 1 : NPU_TRAIN_PARTS, L->M, L->N, L->K,
                        T, 4, &lw->plan) != 0) {
        lw->form = NPU_LOWER_SCHEDULE;
        snprintf(msg, msgn, "%s: partition %s failed", npu_order_name(lw->order),
                 npu_part_name(o->part));
        return -1;
    }
    lw->nparts = lw->plan.nparts;
    lw->accum_expect = lw->plan.accum_elems;
    part_tiles(cfg, o->tile, lw, T);
    lw->form = NPU_LOWER_SCHEDULE;
    if (cores_apply(cfg, L, o)) {
        lw->form = NPU_LOWER_CORES;
        lw->nparts = NPU_TRAIN_PARTS;
        lw->accum_expect = cores_accum(lw, L);
    }
    return 0;
}

int npu_lower_fallback(npu_lower_plan_t *lw)
{
    switch (lw->form) {
    case NPU_LOWER_CORES:
        lw->form = NPU_LOWER_SCHEDULE;
        lw->nparts = lw->plan.nparts;
        lw->accum_expect = lw->plan.accum_elems;
        return 0;
    case NPU_LOWER_SCHEDULE: lw->form = NPU_LOWER_SUBGEMMS; return 0;
    default: return -1;
    }
}
