/*
 * step_tags.h - which step tensor each DMA tag of a kernel's program moves (issue 16 acceptance 1:
 * per-tensor DRAM bytes from the DMA counters, docs/estimator.md section 7). The counters count
 * bytes per tag and direction (docs/isa.md: dram_rd_<tag>, dram_wr_<tag>); a kernel whose every
 * (tag, direction) carries at most one tensor has its bytes split by tensor exactly:
 *  - GEMM: tag_a, tag_b, tag_c name A, B, C (distinct in every step plan);
 *  - vector kernel: each DRAM tensor its own tag (the plan gives them 1, 2, .. in order,
 *    npu_step_vt); resident tensors move nothing;
 *  - convolution forward: X, W, Y the tags of its input, weights and output; the fused backward
 *    X, W, DY, DX, DW those of X, W, dY, dX and dW^T (no DX without dX);
 *  - transpose: its one tag read is W16T (the source), written W16 (the destination).
 * The runtime splits the RTL's counters with it and the estimator the program's expected ones, so
 * the two per-tensor figures come from one attribution.
 */
#ifndef NPU_STEP_TAGS_H
#define NPU_STEP_TAGS_H

#include <stdint.h>

#include "compile/step/step_plan.h"
#include "hw/npu_defs.h"

/* Per tag, the step tensor read (rd) and written (wr) under it; -1 none. */
typedef struct npu_step_tagmap {
    int rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];
} npu_step_tagmap_t;

/* Kernel k of plan p: its tag map. 0, or -1 when a tag carries two tensors in one direction
 * (then that tag's bytes are not split; the map keeps the first). */
int npu_step_tagmap(const npu_step_plan_t *p, const npu_step_kernel_t *k, npu_step_tagmap_t *m);

/* Adds to in[t] / out[t] the bytes rd[g] / wr[g] (one program's, per tag) of the tensors m names;
 * returns the bytes no tensor takes (tag 0, the program fetch, is never a tensor's). */
uint64_t npu_step_tag_split(const npu_step_tagmap_t *m, const uint64_t *rd, const uint64_t *wr, uint64_t *in,
                            uint64_t *out);

#endif
