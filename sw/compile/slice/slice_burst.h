/*
 * slice_burst.h - exact DRAM bursts and beats of DMA transfers on DENSE tensors (the slicing
 * stage's burst counter, docs/compiler.md "Slicing").
 *
 * The DMA rule (the RTL's npu_burst_len on dense tensors):
 *  - a transfer is `rows` rows of `row_bytes` at byte address a + r*stride;
 *  - a RUN is the whole transfer when stride == row_bytes, else each row alone;
 *  - a run covers beats floor(start/B) .. floor((end-1)/B) (B = bytes per beat);
 *  - each run is split into bursts of at most max_beats beats that never cross a 4 KiB line,
 *    greedily from the run's start.
 * So a run's bursts are the sum, over the 4 KiB pages it touches, of ceil(beats in page /
 * max_beats): O(1) per run (npu_slice_run); a strided transfer of rows up to a page in
 * O(B + rows crossing a line) (npu_slice_xfer), else O(rows).
 *
 * Tiles of tensors are described as strided views (npu_slice_view_t): dims from outer to inner,
 * each a count and a stride in elements, the innermost dim contiguous (stride 1). The counter
 * merges, from the inside out, every dim whose stride equals the run built so far (contiguous:
 * a tile spanning full rows or the full channel depth), the next dim becomes the transfer's rows
 * (with the outer dims that continue them at the same stride) and the remaining outer dims
 * enumerate the transfers. Layout front-ends (row-major matrices,
 * NHWC and NCHW images) only build the view: no layout is special-cased.
 */
#ifndef NPU_SLICE_BURST_H
#define NPU_SLICE_BURST_H

#include <stdint.h>

#include "hw/npu_cfg.h"

#define NPU_SLICE_PAGE 4096u /* bytes: no burst crosses this line (AXI) */
#define NPU_SLICE_MAX_DIMS 6

/* The burst rule's parameters: bytes per beat (a power of two dividing 4096), longest burst.
 * npu_slice_geom also fills the counter's divisors (divs = 1), so that the slicing stage's
 * millions of tile views do not find them each; a geometry given as {beat, max_beats} alone
 * (divs = 0) has them found per view. */
typedef struct npu_burst_geom {
    unsigned beat;
    unsigned max_beats;
    int divs;                          /* 1: the shifts below are set */
    int beat_sh, page_sh, max_sh;      /* log2 of beat, of beats per 4 KiB, of max_beats (-1: not a power of two) */
} npu_burst_geom_t;

/* What a set of transfers costs the DRAM port. Counters accumulate (callers zero them). */
typedef struct npu_bursts {
    uint64_t bursts; /* DRAM bursts (AR or AW requests) */
    uint64_t beats;  /* data beats, partial first / last beats included */
    uint64_t bytes;  /* payload bytes */
    uint64_t runs;   /* contiguous runs */
    uint64_t xfers;  /* DMA transfers (descriptors) */
    uint64_t words;  /* SPM words: each descriptor row starts a word (rows x ceil(row bytes / B));
                        the DMA moves one per cycle, so rows narrower than a beat cost words */
} npu_bursts_t;

/* A strided view: dim[0] outermost; dim[nd-1] is the innermost, its stride must be 1. */
typedef struct npu_slice_dim {
    int64_t count;  /* elements along this dim in the tile (>= 1) */
    int64_t stride; /* elements between consecutive indices of this dim in DRAM */
} npu_slice_dim_t;
typedef struct npu_slice_view {
    uint64_t base;   /* byte address of the tile's first element */
    unsigned ebytes; /* bytes per element */
    int nd;
    npu_slice_dim_t dim[NPU_SLICE_MAX_DIMS];
} npu_slice_view_t;

/* The config's rule: B = 4S bytes per beat, MAX_BURST_BEATS. */
npu_burst_geom_t npu_slice_geom(const npu_cfg_t *cfg);

/* One contiguous run of len > 0 bytes at addr: adds its bursts, beats, bytes and one run. */
void npu_slice_run(const npu_burst_geom_t *g, uint64_t addr, uint64_t len, npu_bursts_t *acc);

/* One DMA transfer (the rule above): adds one transfer, its runs and its SPM words. */
void npu_slice_xfer(const npu_burst_geom_t *g, uint64_t addr, uint64_t rows, uint64_t row_bytes,
                    uint64_t stride, npu_bursts_t *acc);

/* Every transfer of a view (merged as described above); its SPM words are those of descriptors
 * whose rows are the view's innermost dim (the emitters' layout). 0, or -1 for a malformed view. */
int npu_slice_view(const npu_burst_geom_t *g, const npu_slice_view_t *v, npu_bursts_t *acc);

/* Row-major R x C matrix of ebytes elements at base: the tr x tc tile at (r0, c0). */
int npu_slice_matrix_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int64_t R,
                          int64_t C, int64_t r0, int64_t c0, int64_t tr, int64_t tc, npu_bursts_t *acc);

/* Image tensors: extents and tile origins / sizes are given in (N, H, W, C) order whatever the
 * layout; NHWC stores [n][h][w][c], NCHW [n][c][h][w]. */
enum { NPU_SLICE_NHWC = 0, NPU_SLICE_NCHW = 1 };
typedef struct npu_slice_box {
    int64_t n, h, w, c;
} npu_slice_box_t;
int npu_slice_image_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int layout,
                         const npu_slice_box_t *ext, const npu_slice_box_t *org,
                         const npu_slice_box_t *tile, npu_bursts_t *acc);

#endif
