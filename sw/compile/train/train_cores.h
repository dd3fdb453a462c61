/*
 * train_cores.h - what the per-core emitters share (compile/train internal): the emission state
 * of a program of dX and dW steps built on the program builder (prog_builder.h), one step of
 * its graph per dX or dW step. train_cores.c: these and the K split; train_cores_mn.c: the M
 * and N splits. Their entry points are declared in train_emit.h.
 */
#ifndef NPU_TRAIN_CORES_H
#define NPU_TRAIN_CORES_H

#include "compile/train/train_emit.h"
#include "prog/prog_builder.h"

/* The emitter of a per-core program: one step of the program graph (prog_builder.h) per dX or
 * dW step, EXEC instructions into the current step's list. */
typedef struct npu_bwd_cores {
    npu_pb_t b;
    npu_pb_step_t *s;
    long nsteps;
    npu_prog_t *ex;    /* the EXEC list of the step being built */
    unsigned ob_next, obuf_rows, S;
} npu_bwd_cores_t;

/* A per-core layout of `words` SPM words fits the SPM and the 16-bit address fields. */
int npu_bwd_cores_spm_fits(const npu_cfg_t *cfg, long words);
/* The stats of a per-core program: dY and X^T loaded once, W^T w_loads times, 2*M*N*K MACs. */
void npu_bwd_cores_stats(npu_bwd_stats_t *st, int M, int K, int N, long w_loads);
/* Starts the emission of nsteps steps (0, or -1 when memory runs out). */
int npu_bwd_cores_init(npu_bwd_cores_t *e, const npu_cfg_t *cfg, long nsteps);
/* Starts step g (grad: "dX" or "dW", the failure context): its EXEC instructions go to e->ex. */
npu_pb_step_t *npu_bwd_cores_step(npu_bwd_cores_t *e, long g, const char *grad);
/* The tokens of step g once built (train_cores.c). */
void npu_bwd_cores_waits(npu_bwd_cores_t *e, long g);
/* An OBUF region of `rows` (<= one half) after the previous one, wrapping. */
unsigned npu_bwd_cores_obuf(npu_bwd_cores_t *e, unsigned rows);
/* Stitches, orders (loads `ahead` steps early, after the EXEC and STOREs of the step they go
 * with) and appends the program to out; frees the steps. 0, or -1 with the first failure in msg. */
int npu_bwd_cores_finish(npu_bwd_cores_t *e, long ahead, npu_prog_t *out, char *msg, size_t msgn);

#endif
