/*
 * conv_unit.h - the convolution emitter's units (compile/conv internal, prefix npu_cx_): the
 * emission state, the instruction groups of one unit (conv_emit.h: L, L2, FO, C, D, S), the
 * primitives every kernel builds its units with, and the per-kernel unit emitters.
 *   conv_unit.c    primitives: FILL / LOAD / LDW / WAVE / DRAIN / STORE shapes, resident weights
 *   conv_fwd_dx.c  the fwd and dX units (zeropad, ecoflow)
 *   conv_dw.c      the dW units
 *   conv_emit.c    one program-builder step per unit: tokens and program order; npu_conv_emit
 */
#ifndef NPU_CONV_UNIT_H
#define NPU_CONV_UNIT_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_emit.h"
#include "compile/conv/conv_plan.h"
#include "prog/prog_builder.h"

/* The instruction groups of one unit (conv_emit.h). */
typedef struct npu_cx_unit {
    npu_prog_t L, FO, C, D, S;
    int first_grp, last_grp; /* first / last unit of its band (the band's input and output) */
    int band;                /* band index over the program (dW: the unit index) */
    int tile_wait; /* fwd/dX: first unit of a band >= 2: its output tile must be stored first
                      (none without one: no_out) */
    npu_prog_t L2;   /* dW, first unit: the rest of its input, loaded while C starts */
    size_t c_split;  /* dW, first unit: 1 + the first C instruction that needs L2 (pops its l2e) */
    size_t dstart;   /* assembly: where D starts in the unit's EXEC list */
    int nx, n2;      /* assembly: the first units of the next two bands (U: none) */
} npu_cx_unit_t;

typedef struct npu_cx {
    const npu_cfg_t *cfg;
    const npu_conv_plan_t *p;
    const npu_conv_addrs_t *a;
    npu_pb_t b;          /* the program builder: failures, weight banks, tokens */
    unsigned B;
    int S, L;
    uint8_t *cov;        /* per OBUF row: written since its region was (re)started -> acc = 1 */
    uint8_t *tap_valid;  /* dW: some wave of the whole program reaches tap t */
    size_t *tap_c;       /* fwd, dX: unit 0's C index of the first LDW of tap t (SIZE_MAX: none) */
    int *pass_of;        /* dW: region q's pass and OBUF row (npu_conv_dw_layout) */
    unsigned *row_of;
} npu_cx_t;


/* ---- primitives (conv_unit.c) ---- */

/* FILL `rows` rows of `words` words at spm + r*stride (long rows cut into 16-bit row_bytes). */
void npu_cx_fill(npu_cx_t *x, npu_prog_t *l, unsigned rows, unsigned spm, unsigned stride, unsigned words);
/* LOAD of `nrows` tensor rows of `pix` pixels x `pw` words (DRAM pitch dpitch bytes, pixels ppitch
 * bytes apart, rowb bytes of channels each; SPM spitch words). */
void npu_cx_load_rows(npu_cx_t *x, npu_prog_t *l, unsigned tag, unsigned nrows, uint64_t dram,
                      unsigned dpitch, unsigned ppitch, unsigned rowb, unsigned spm, unsigned spitch, unsigned pix,
                      unsigned pw);
/* LDW into the next weight bank (window k_lo = klo); returns the bank. */
unsigned npu_cx_ldw(npu_cx_t *x, npu_prog_t *l, unsigned spm, unsigned stride, int k, int klo, int n);
/* WAVE of m rows into OBUF rows obuf.., cut into runs of equal coverage (acc). */
void npu_cx_wave(npu_cx_t *x, npu_prog_t *l, unsigned bank, int m, unsigned spm, unsigned stride,
                 int k, int klo, int n, unsigned obuf);
/* The same in a given mode: a wave whose k is below its tile's (k > S: FW) keeps the tile's mode
 * (conv_bwd.c: the lanes past its k are zero in its A words). */
void npu_cx_wave_mode(npu_cx_t *x, npu_prog_t *l, unsigned bank, unsigned mode, int m, unsigned spm,
                      unsigned stride, int k, int klo, int n, unsigned obuf);
/* The LDW / WAVE mode of a tile of k rows: FW when k > S, else HSW (half the slots). */
unsigned npu_cx_mode(const npu_cx_t *x, int k);
/* Rows [lo, hi) of the unit's padded X plane into SPM base: LOAD interior rows, FILL padding. */
void npu_cx_load_plane_rows(npu_cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base, int lo, int hi);
void npu_cx_load_plane(npu_cx_t *x, npu_prog_t *l, const npu_conv_unit_t *un, unsigned base);
/* LOAD of `words` contiguous words as runs of long bursts. */
void npu_cx_load_flat(npu_cx_t *x, npu_prog_t *l, unsigned tag, uint64_t dram, unsigned spm, uint64_t words);
/* fwd, dX: notes where unit 0's first LDW of tap t is. */
void npu_cx_mark_tap(npu_cx_t *x, const npu_conv_unit_t *un, const npu_cx_unit_t *up, int t);
/* Unit 0's resident weights in two parts (L, L2), split where the waves hide the rest. */
void npu_cx_resident_weights(npu_cx_t *x, npu_cx_unit_t *up);
/* DRAIN of block blk of a dense output tile (a last block of <= S lanes: its low word only). */
void npu_cx_drain_blk(npu_cx_t *x, npu_prog_t *l, unsigned rows, unsigned obuf, unsigned spm,
                      unsigned stride, int blk, int chans);
/* STORE of `bytes` contiguous bytes from SPM word spm. */
void npu_cx_store_flat(npu_cx_t *x, npu_prog_t *l, unsigned tag, unsigned spm, uint64_t dram, uint64_t bytes);
/* STORE (store = 1) or LOAD (partial sums) of n rows of pw words dense in the SPM, rowb bytes
 * each, DRAM rows dpitch bytes apart. */
void npu_cx_move_px(npu_cx_t *x, npu_prog_t *l, int store, unsigned tag, unsigned spm, uint64_t dram, uint64_t n,
                    unsigned pw, unsigned rowb, unsigned dpitch);
/* The unit's band over the program, its input buffer and output tile (band parity). */
int npu_cx_band(const npu_cx_t *x, const npu_conv_unit_t *un);
unsigned npu_cx_in(const npu_cx_t *x, const npu_conv_unit_t *un);
unsigned npu_cx_tile(const npu_cx_t *x, const npu_conv_unit_t *un);
/* The band's tile (rows pixels from pixel pix0) stored by its last block group. */
void npu_cx_store_tile(npu_cx_t *x, npu_prog_t *l, unsigned tag, const npu_conv_unit_t *un,
                       unsigned rows, uint64_t pix0);

/* p->acc: the band's partial-sum tile into FO (its first block group). */
void npu_cx_load_partial(npu_cx_t *x, npu_cx_unit_t *up, unsigned tag, const npu_conv_unit_t *un,
                         unsigned rows, uint64_t pix0);

/* ---- the units of each kernel (conv_fwd_dx.c, conv_dw.c) ---- */

void npu_cx_unit_fwd(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up);
void npu_cx_unit_dx_zeropad(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up);
void npu_cx_unit_dx_ecoflow(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up);
void npu_cx_unit_dw(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up);
/* ---- emission with a hook (conv_emit.c) ---- */

/* Called after each unit's groups are emitted, before the assembly: a fused kernel adds its own
 * instructions to the unit's groups (conv_bwd.c: the dW waves of the image whose dY the unit holds). */
typedef void (*npu_cx_hook_t)(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, void *ctx);
/* npu_conv_emit with a hook (NULL: npu_conv_emit's program). */
int npu_cx_emit(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a, npu_cx_hook_t hook,
                void *ctx, npu_prog_t *out, char *msg, size_t n);

/* dW: does some wave of the whole program reach tap t? */
int npu_cx_dw_tap_valid(const npu_conv_plan_t *p, int t);

#endif
