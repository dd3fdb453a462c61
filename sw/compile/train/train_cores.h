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
/* Starts step g (grad: "dX" or "dW", the failure context): its EXEC instructions go to e->ex. */
npu_pb_step_t *npu_bwd_cores_step(npu_bwd_cores_t *e, long g, const char *grad);
/* An OBUF region of `rows` (<= one half) after the previous one, wrapping. */
unsigned npu_bwd_cores_obuf(npu_bwd_cores_t *e, unsigned rows);
/* One output block of a step over the S-deep chunks of its contraction (D rows): chunk c has
 * k = min(S, D - c*S) rows of the stationary operand at ldw + c*S*ldw_stride + blk/2 (lane_hi for
 * an odd block: its S lanes are the high half of the words) and meets m A rows at a + c/2 of
 * stride a_stride (lane_hi for an odd chunk), accumulated in the OBUF at ob. */
typedef struct npu_bwd_block {
    int D, blk;
    unsigned ldw, ldw_stride, n, a, a_stride, m, ob;
} npu_bwd_block_t;
/* The stationary operand shared: per chunk one unmasked ISW LDW of n lanes (multicast to the
 * four cores) and one ISW WAVE whose four row sets are the parts. */
void npu_bwd_cores_mcast(npu_bwd_cores_t *e, const npu_bwd_block_t *k);
/* Each core its own tile (core q's qoff words further, S lanes): per chunk four masked LDWs and
 * one bcast ISW WAVE (each A row read once); then two skinny DRAINs: cores 0/1 (rows ob..) low
 * lanes to part 0's m rows at dst (stride apart), high lanes to part 1's (m rows further); cores
 * 2/3 (rows ob + m..) parts 2/3. */
void npu_bwd_cores_bcast(npu_bwd_cores_t *e, const npu_bwd_block_t *k, unsigned qoff, unsigned dst,
                         unsigned stride);
/* A per-core program: dX steps 0..nsx-1 (dx), then dW steps up to nsteps (dw), after the loads
 * of every step (loads); the loads run `ahead` steps early in program order, after the EXEC
 * and STOREs of the step they go with. ctx: the split's emission state. */
typedef struct npu_bwd_cores_prog {
    int nsx, nsteps;
    long ahead;
    void (*loads)(void *ctx);
    void (*dx)(void *ctx, int g);
    void (*dw)(void *ctx, int g);
    void *ctx;
} npu_bwd_cores_prog_t;
/* Emits pg's steps and their tokens (train_cores.c) and appends the program to out. 0, or -1
 * with the first failure in msg. */
int npu_bwd_cores_run(npu_bwd_cores_t *e, const npu_cfg_t *cfg, const npu_bwd_cores_prog_t *pg,
                      npu_prog_t *out, char *msg, size_t msgn);
/* A split that does not apply: -1 with why in msg. */
int npu_bwd_cores_refuse(const npu_cfg_t *cfg, const char *why, char *msg, size_t msgn);

#endif
