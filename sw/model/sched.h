/*
 * sched.h - the scratchpad scheduler of a training iteration at tensor granularity (issue 16;
 * ../shared/briefs/003_analytical_model.md section 2.5, the thesis's Listing 1):
 *
 *   residency  Belady: when space is short, evict the resident tensor whose next use is
 *              farthest (never one the current step needs); a dirty tensor that is used again,
 *              or must end in DRAM, is written out, a clean one (with a valid DRAM copy) is
 *              dropped without a write; a tensor with no further use is freed after its last.
 *   prefetch   latency-aware: a step's input is loaded k steps early, k the fewest steps whose
 *              compute covers the load time (latency + bytes / bandwidth); never before the
 *              space it takes has been freed.
 *   offload    look-ahead: a tensor that will be evicted before its next use is written out as
 *              soon as the step that last wrote it is done (reads after it do not change it),
 *              not when its space is needed.
 *
 * Time (our reconstruction, brief 003 section 2.5): one compute engine runs the steps in order;
 * one DMA channel runs transfers one at a time in the order they become ready, each taking
 * `latency + ceil(bytes / bw)` cycles; a step starts when the previous one has ended and its
 * inputs are loaded (the difference is its stall) and its outputs' space is free.
 *
 * A pure function of its problem: the estimator (`npu estimate`) and, later, the emitters use
 * the same plan, so the RTL's DRAM counters can be compared with it byte for byte.
 */
#ifndef NPU_MODEL_SCHED_H
#define NPU_MODEL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#define NPU_SCHED_MAX_IO 12 /* inputs or outputs of one step (a normalised layer's update: 9) */

typedef struct npu_sched_tensor {
    const char *name;
    uint64_t bytes;
    int in_dram;  /* 1: a valid copy is in DRAM at the start (batch, weights) */
    int keep_out; /* 1: must be in DRAM at the end (updated weights, results) */
    uint64_t spm_bytes; /* its room in the SPM when that differs from bytes (rows padded to
                           words); 0: bytes */
} npu_sched_tensor_t;

typedef struct npu_sched_step {
    const char *name;
    uint64_t cycles; /* compute time of the step */
    int n_in, n_out;
    int in[NPU_SCHED_MAX_IO], out[NPU_SCHED_MAX_IO]; /* tensor indices */
    /* Tensors the step reads or writes in DRAM itself (a transposed GEMM operand the DMA
     * transposes, the host's logits and loss gradient): before the step a dirty resident copy
     * of a DRAM input is written back (and stays, clean); a resident copy of a DRAM output is
     * freed (the step's write makes it stale). */
    int n_dram_in, n_dram_out;
    int dram_in[NPU_SCHED_MAX_IO], dram_out[NPU_SCHED_MAX_IO];
} npu_sched_step_t;

typedef struct npu_sched_problem {
    int n_tensors, n_steps;
    const npu_sched_tensor_t *t;
    const npu_sched_step_t *s;
    uint64_t spm_bytes;  /* capacity */
    double bw;           /* DRAM bytes per cycle */
    uint64_t latency;    /* cycles per transfer before its first byte */
    int prefetch;        /* 1: latency-aware prefetch; 0: loads when the step starts */
    int lookahead;       /* 1: look-ahead offload; 0: write-back when evicted */
} npu_sched_problem_t;

enum { NPU_SCHED_LOAD = 0, NPU_SCHED_STORE = 1, NPU_SCHED_DROP = 2, NPU_SCHED_FREE = 3 };

/* One decision of the plan: at step `step` (for LOAD: the step that needs it; STORE / DROP /
 * FREE: the step before which it leaves the SPM), with its DMA time for LOAD and STORE. */
typedef struct npu_sched_event {
    int kind, tensor, step;
    int forced;                 /* evicted to make room for `step` (it waits for the write) */
    int keep;                   /* STORE only: written back for a step's DRAM read; stays resident */
    int at;                     /* LOAD / STORE: the step at whose start it is issued (prefetch:
                                   before `step`; look-ahead offload: after the last write) */
    uint64_t issue, start, end; /* DMA: ready, began, done (0 for DROP, FREE) */
} npu_sched_event_t;

typedef struct npu_sched_tensor_stat {
    uint64_t in_bytes, out_bytes; /* DRAM -> SPM, SPM -> DRAM */
    int loads, stores, drops;
} npu_sched_tensor_stat_t;

typedef struct npu_sched_step_stat {
    uint64_t start, end, stall;   /* stall: cycles between the previous step's end and start */
    uint64_t in_bytes, out_bytes; /* its loads; the write-backs it forced or that follow it */
    int prefetch_k;               /* the latency rule's distance of its largest load (0: none) */
} npu_sched_step_stat_t;

typedef struct npu_sched_result {
    int ok;                       /* 0: a step's inputs and outputs exceed the SPM (why) */
    int bad_step;                 /* ok 0: the step that could not run */
    char why[160];
    uint64_t cycles;              /* end of the last step, then the final write-backs */
    uint64_t in_bytes, out_bytes, stall;
    npu_sched_tensor_stat_t *tensor; /* n_tensors */
    npu_sched_step_stat_t *step;     /* n_steps */
    npu_sched_event_t *ev;
    int n_ev;
} npu_sched_result_t;

/* Plans and times p. Returns 0 (r filled; r->ok 0 when a step alone does not fit, with why) or
 * -1 on a malformed problem or out of memory (why says which). Free r with npu_sched_free. */
int npu_sched_run(const npu_sched_problem_t *p, npu_sched_result_t *r);
void npu_sched_free(npu_sched_result_t *r);

/* The latency rule alone: the fewest steps before `step` whose compute covers a load of `bytes`
 * (0 when even all earlier steps do not: load at step 0). */
int npu_sched_prefetch_k(const npu_sched_problem_t *p, int step, uint64_t bytes);

#endif
