/*
 * conv_split.h - a layer whose one band does not fit the SPM (or whose dW rows do not fit the
 * OBUF), cut into PARTS: each part is an ordinary plan (conv_plan.h) of the sub-layer over a range
 * of filters, a range of channels and a range of columns, whose DRAM view (the plan's dp* pitches)
 * reads and writes its own channels and columns of the whole layer's tensors. The parts run one
 * after another in one program, a barrier between them (docs/conv.md "Parts").
 *
 *   output ranges     fwd filters, dX channels, dW filters and channels (depthwise: channels, the
 *                     filters with them): independent parts.
 *   column ranges     fwd and dX of a layer whose rows do not fit (a 414-pixel output row, an
 *                     11-row band of 224 pixels, YOLO-tiny's 416-pixel dX rows): independent parts
 *                     over output (dX: dX) columns, each reading the X (dX: dY) columns it needs,
 *                     with its own padding on each side (npu_conv_plan_cols): the first range
 *                     pads on the left only, the last on the right only, the inner ones not.
 *                     Zeropad dW whose zero-inserted dY band does not fit (ResNet-50's and
 *                     AlexNet's conv1): ranges of dY columns (each with the zero-inserted
 *                     columns up to the next range's first), each a reduction range of the whole
 *                     dW (below). Not ecoflow's dW (its dY view pads rows and columns alike).
 *   reduction ranges  fwd channels, dX filters, dW columns: the parts of one output range run
 *                     consecutively; the first writes the output tensor, each later one loads
 *                     those partial sums into its output tiles and its DRAINs add to them (acc)
 *                     before it stores.
 *
 * Ranges are balanced in 2S-channel blocks, so every view is beat-aligned. The split is the one
 * whose parts all plan with the fewest DRAM bytes (the partial sums' loads and stores included),
 * then the fewest parts; a layer that plans whole is one part, and its program is the plan's.
 * Options that give a split (npu_conv_plan_opts_t split_f, split_c, split_w: the slicing stage's
 * candidates, conv_slice.h) replace that choice; their parts must plan.
 * A pure function of (cfg, layer, kernel, dataflow, options).
 */
#ifndef NPU_CONV_SPLIT_H
#define NPU_CONV_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_emit.h"
#include "compile/conv/conv_plan.h"

typedef struct npu_conv_split {
    npu_conv_plan_t whole; /* geometry and DRAM layout of the whole layer (npu_conv_geometry) */
    int nf, nc;            /* ranges of filters, of channels */
    int fblk, cblk;        /* 2S-channel blocks per range (the last range may have fewer) */
    int nw, wseg;          /* ranges of columns (fwd, dW: output, dX: dX columns), columns per range */
    int parts;             /* nw x nf x nc, column ranges outermost, reduction ranges innermost */
    npu_conv_plan_t *part; /* the parts' plans, views set */
    int units;             /* the parts' units */
    /* DRAM bytes per tag: what the program moves (partial sums included), each tensor once */
    uint64_t plan_rd[NPU_NUM_TAGS], plan_wr[NPU_NUM_TAGS];
    uint64_t comp_rd[NPU_NUM_TAGS], comp_wr[NPU_NUM_TAGS];
} npu_conv_split_t;

/* Plans kernel x dataflow of layer c, split as needed. Returns 0, or -1 with the reason in msg
 * (the layer is invalid, or no split fits: the whole plan's reason and the smallest part tried).
 * Free with npu_conv_split_free. */
int npu_conv_split(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                   const npu_conv_plan_opts_t *opts, npu_conv_split_t *s, char *msg, size_t n);
void npu_conv_split_free(npu_conv_split_t *s);

/* Part i's first filter and first channel in the whole layer. */
void npu_conv_split_origin(const npu_conv_split_t *s, int i, int *f0, int *c0);
/* Part i's first output column (fwd: Y, dX: dX, dW: dY; 0 without column ranges). */
int npu_conv_split_col(const npu_conv_split_t *s, int i);

/* Part i's DRAM addresses: the whole layer's, moved to its first filter and channel. */
npu_conv_addrs_t npu_conv_split_addrs(const npu_conv_split_t *s, int i, const npu_conv_addrs_t *a);

/* The forward's output Y drained into resident SPM rows (the step's scheduler, compile/step/
 * step_res.h): pixel r at word spm + r * stride, no STORE; the plan's and the compulsory bytes of
 * Y become 0. Only a forward of one part (no split reduction, no column range) and rows of at
 * least pout words at or above the plan's SPM (cfg: the configuration it was planned on, the banks
 * below the resident ones). 0, or -1 with the reason in msg. */
int npu_conv_split_res_out(const npu_cfg_t *cfg, npu_conv_split_t *s, unsigned spm, unsigned stride, char *msg,
                           size_t n);

/* Whether split s may take its forward's output (input = 0, npu_conv_split_res_out) or input
 * (input = 1, npu_conv_split_res_in) in resident rows `stride` words apart: a forward of one part
 * (no split reduction, no column range; an input also unpadded in columns) and rows of at least a
 * pixel's words. The SPM address is the caller's to keep above the plan's. */
int npu_conv_split_res_ok(const npu_conv_split_t *s, int input, unsigned stride);

/* The forward's input X read from resident SPM rows (the step's scheduler): pixel r at word
 * spm + r * stride (npu_conv_split_res_out's layout), copied into each band's buffer by LOAD_SPMs
 * (the LOAD engine with the SPM as the source, docs/isa.md) in place of the band's LOADs: the same
 * words, any X; halo and padding FILLed as before; the plan's and the compulsory bytes of X become 0. Only a forward of one
 * part and rows of at least cw words at or above the plan's SPM. 0, or -1 with the reason. */
int npu_conv_split_res_in(const npu_cfg_t *cfg, npu_conv_split_t *s, unsigned spm, unsigned stride, char *msg,
                          size_t n);

/* The program: the parts' programs (npu_conv_emit) with a barrier between consecutive ones (the
 * next part's loads and drains wait until every STORE of the previous part has completed).
 * Appends to *out. Returns 0, or -1 with the reason in msg (part i: ...). */
int npu_conv_split_emit(const npu_cfg_t *cfg, const npu_conv_split_t *s, const npu_conv_addrs_t *a,
                        npu_prog_t *out, char *msg, size_t n);

#endif
