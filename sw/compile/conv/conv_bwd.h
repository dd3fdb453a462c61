/*
 * conv_bwd.h - the fused convolution backward kernel `bwd` (docs/conv.md §5): dX (ecoflow) and dW
 * of a layer in one program that reads each dY element from DRAM once.
 *
 * Why dW is computed transposed. dX reduces over the filters f, so its streamed operand A is dY
 * as stored (an SPM word = one pixel's f lanes). dW reduces over pixels: A's lanes or the
 * stationary tile's rows must run over pixels. The existing dW streams dY^T (a transposed LOAD,
 * word lanes over pixels), a second copy of dY. The array cannot transpose an SPM operand (its
 * output lanes are the stationary tile's lanes, A's lanes are the reduction), so the only way to
 * read one dY copy for both is to make dY the STATIONARY tile of dW: rows = dY pixels of one dY
 * row (stride fw), lanes = one f-block. A is then X^T (rows = channels c, lanes = pixels) and
 * the result is dW^T[tap] (C x F): rows c, lanes f. X^T comes by transposed LOADs of X, one per
 * (X row, column phase ph of the stride s), DRAM rows s pixels apart, so lane r of word j is
 * X column ph + s(2S*j + r); tap kw reads phase ph = (kw*d - p) mod s with dY column
 * ow = 2S*j + r - e, e = floor((kw*d - p) / s). dW^T is stored [tap][c][f] and the host
 * transposes it (the forward kernel loads its weights transposed too, conv_emit.h).
 *
 * The program is the dX ecoflow program of a plan with, when it fits, ONE band per image (the
 * image's dY rows resident in the band's input buffer, loaded once), else SEVERAL bands of dX rows
 * per image over a RING of dY row slots (conv_plan.h dy_ring: a band loads only the dY rows no
 * earlier band of its image loaded, its halo rows stay in the ring where the previous band left
 * them; the ring holds the rows two consecutive bands span, because the load of band k runs after
 * band k-2's last wave while band k-1 may still read). Per band, in the unit of its last c-block
 * group, after the dX waves: the dW^T waves reading the same dY rows, each band those it loaded
 * (npu_conv_bwd_band_rows: each dY row once), so the band's e2l release, pushed by the unit's last
 * wave, comes after them; their OBUF regions resident beside the dX rows of both halves when they
 * all fit (the whole batch accumulated, drained once after the last band), else in the half the
 * unit's dX does not use, drained per band with acc into the SPM-resident dW^T tile (FILLed to
 * zero by unit 0); the image's X^T loads (whole, by image parity) join its first band's input
 * loads (same l2e), or, with several bands where it plans and when two whole images' X^T leave no
 * dX plan, X^T sits in a ring too (xt_ring) and each band loads the X rows its dW^T waves read
 * that no earlier band of the image loaded; the last unit stores the dW^T tile after its dX tile.
 * Without dX (npu_conv_bwd_drop_dx) the same program keeps only the dY loads of the dX part.
 *
 * A pure function of (cfg, layer): no simulator. Limits (the planner refuses with the limit named):
 * ecoflow only, not depthwise, a dX row (ceil(W/s)*s pixels) within an OBUF half, the dW^T tile
 * and X^T (two images' or the ring) in the SPM beside the dX plan, C rows of a dW^T region within
 * an OBUF half.
 */
#ifndef NPU_CONV_BWD_H
#define NPU_CONV_BWD_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_plan.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "prog/prog.h"

#define NPU_CONV_BWD_KWG 8

typedef struct npu_conv_bwd_plan {
    npu_conv_plan_t dx;       /* the dX ecoflow plan, on the SPM below xt_base[0]: one band per image,
                                 or several over a ring of dY rows (dx.ring > 0) */
    int wj;                   /* words per X^T channel row of one (X row, phase): ceil(ceil(W/s) / 2S) */
    int kwg;                  /* tap columns per group of dW^T regions: those of one dY column offset
                                 share the stationary tile (at s = 2, p = 1: kw 1 and 2), up to
                                 NPU_CONV_BWD_KWG */
    int khg;                  /* kh per group of dW^T regions (kwg x khg regions of C OBUF rows fit an
                                 OBUF half) */
    int ngrp;                 /* groups of dW^T regions (npu_conv_bwd_groups) */
    int resident;             /* 1: every region has its own OBUF rows beside the dX rows (the
                                 rows past dx.obuf_unit_rows of both halves) and accumulates the
                                 whole batch, drained once at the end; 0: a group's regions take
                                 rows of the OBUF half the dX unit does not use, per image, drained
                                 with acc into the dW^T tile */
    unsigned pf;              /* words per dW^T row (F int32): ceil(4F / B) */
    int xt_flat;              /* 1: X^T by one transposed LOAD per X row, its W/s groups of s pixels
                                 contiguous (long bursts; W % s == 0 and every phase read); 0: one
                                 per (X row, phase), pixels s apart (a burst per pixel) */
    unsigned xt_p;            /* SPM rows of one (X row, phase): C, or flat in the padded layout
                                 the pixel's padded channels (cw * 2S) */
    int padded;               /* the DRAM layouts' pixel rows padded to whole beats (the step
                                 engine's); 0: dense (conv_plan.h "DRAM layouts"); dW^T rows are
                                 padded either way (pf words) */
    unsigned xt_row, xt_ph;   /* SPM rows from one X row to the next and from one phase to the next:
                                 row c of (ih, ph) is ih*xt_row + ph*xt_ph + c. Per phase C and H*C
                                 (phase-major); flat at s = 1 C and - (a row's LOAD writes its
                                 padding channels where the next row's LOAD, later in the LOAD
                                 queue, writes real ones); flat at s > 1 s*xt_p and xt_p. When
                                 consecutive X rows are C rows apart, a WAVE takes all kh of a tile */
    unsigned xt_base[2], xt_words; /* X^T of an image, wj words per row, by image parity; or the
                                      X^T ring (xt_ring > 0: both bases one region) */
    int xt_ring;              /* 0: X^T of whole images by parity, loaded with an image's first band;
                                 > 0: several bands over a ring of xt_ring X row slots (X row ih of
                                 image b in slot (b*H + ih) % xt_ring), each band loading the X rows
                                 its dW^T waves read that no earlier band of the image loaded
                                 (npu_conv_bwd_xrows): each X row once, as dY */
    unsigned dwt_base, dwt_words;  /* the dW^T tile, T x C rows of pf words, resident */
    int res_x;                /* X read from resident SPM rows (npu_conv_bwd_res_x): pixel r at word
                                 spm_x + r * res_x_stride; the X^T loads are then LOAD_SPMs of those
                                 rows (the same transposed rows, the SPM as their source) */
    unsigned spm_x, res_x_stride;
    /* DRAM bytes per tag the program moves, and each tensor once (X, W, dY read; dX, dW^T written;
     * without dX: X and dY read, dW^T written) */
    uint64_t plan_rd[NPU_NUM_TAGS], plan_wr[NPU_NUM_TAGS];
    uint64_t comp_rd[NPU_NUM_TAGS], comp_wr[NPU_NUM_TAGS];
} npu_conv_bwd_plan_t;

typedef struct npu_conv_bwd_addrs {
    uint32_t x, w, dy;  /* inputs in the dX / dW plans' layouts (conv_plan.h) */
    uint32_t dx;        /* dX, int32 rows of pitch dx.pitch_out bytes */
    uint32_t dwt;       /* dW^T, int32 [KH][KW][C] rows of F, pitch pf beats */
} npu_conv_bwd_addrs_t;

/* Plans the fused backward of layer c for cfg. Returns 0, or -1 with the limit that stops it in
 * msg (depthwise, an OBUF half too small for C rows, no dX plan on the SPM left, ...). */
int npu_conv_bwd_plan(const npu_cfg_t *cfg, const npu_conv_t *c, int padded, npu_conv_bwd_plan_t *bp, char *msg,
                      size_t n);

/* X column phase of tap kw (ph = (kw*d - p) mod s) and its dY column offset e (ow = idx - e, idx
 * the column's index in its phase); the phase's columns nph = ceil((W - ph) / s) (0 if ph >= W). */
void npu_conv_bwd_phase(const npu_conv_t *c, int kw, int *ph, int *e, int *nph);

/* Does some (dY row, kh) read X row ih? Does some kw read column phase ph? */
int npu_conv_bwd_row_used(const npu_conv_t *c, int ih);
int npu_conv_bwd_phase_used(const npu_conv_t *c, int ph);

/* A group of dW^T regions: f-block fb, the tap columns kw[0..nkw) (one dY column offset e: they
 * share the stationary tile), rows kh [kh0, kh1); region (i, kh) holds C OBUF rows at
 * base + (i * (kh1 - kh0) + kh - kh0) * C (resident: an absolute OBUF row; else an offset in the
 * half the unit's dX does not use). */
typedef struct npu_conv_bwd_grp {
    int fb, kw[NPU_CONV_BWD_KWG], nkw, kh0, kh1;
    unsigned base;
} npu_conv_bwd_grp_t;

/* The groups of an image's dW^T waves in emission order (per f-block, the tap columns in groups of
 * up to kwg of one offset e, each over kh groups of up to khg) into g[0..max) (g NULL: count only),
 * with their OBUF rows for obuf_rows per half; *resident: 1 if every group fits beside the dX rows
 * (bp->dx.obuf_unit_rows) of the two halves. Returns the number of groups. */
int npu_conv_bwd_groups(const npu_conv_bwd_plan_t *bp, int obuf_rows, npu_conv_bwd_grp_t *g, int max, int *resident);

/* The same program without dX, for a layer whose dX nobody reads (a network's first layer, its
 * input's gradient): the units load their dY rows (dx.no_out), the dW^T waves, drains and store
 * are unchanged (the plan's layout and groups stay: dW^T comes out bit for bit as the full
 * program's), no W loads, no dX waves, drains or stores; the bytes per tag follow (W and DX 0). */
void npu_conv_bwd_drop_dx(npu_conv_bwd_plan_t *bp);

/* Whether the plan may read dY in place from resident rows `stride` words apart
 * (npu_conv_bwd_res_dy): rows of at least a pixel's fw words, dY a whole layer's (not a view of
 * a wider one). The SPM address is the caller's to keep above the plan's. */
int npu_conv_bwd_res_dy_ok(const npu_conv_bwd_plan_t *bp, unsigned stride);

/* dY read in place from resident SPM rows (the step's scheduler, compile/step/step_res.h):
 * pixel r at word spm + r * stride, the layout a DRAIN or a vector kernel leaves. The dX ecoflow
 * buffer of dY is unpadded rows of fw-word pixels (a band's halo rows are other dY rows), so the
 * dX waves and the dW^T LDWs read the resident rows at their pitch and no dY is LOADed; the
 * plan's and the compulsory bytes of dY become 0 (its band buffers or ring stay planned, unused).
 * Rows at or above the plan's SPM (cfg: the configuration it was planned on). 0, or -1 with the
 * reason in msg. */
int npu_conv_bwd_res_dy(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                        size_t n);

/* Whether the plan may drain dX into resident rows `stride` words apart (npu_conv_bwd_res_dx):
 * dX written (not npu_conv_bwd_drop_dx's), a whole layer's, W a multiple of the stride (the dX
 * tile's rows are then W pixels apart, the resident rows' order) and rows of at least a pixel's
 * pout words. */
int npu_conv_bwd_res_dx_ok(const npu_conv_bwd_plan_t *bp, unsigned stride);

/* dX drained into resident SPM rows (the step's scheduler): pixel r at word spm + r * stride, the
 * dense tile's layout at another pitch (conv_plan.h res_out, as a forward's output), the zero FILL
 * of pixels no tap reaches there too, no STORE (a SYNC_S keeps the tile's tokens); the plan's and
 * the compulsory bytes of dX become 0. Rows at or above the plan's SPM. 0, or -1 with the reason. */
int npu_conv_bwd_res_dx(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                        size_t n);

/* Whether the plan may read X from resident rows `stride` words apart (npu_conv_bwd_res_x): X a
 * whole layer's (not a view of a wider one), rows of at least a pixel's cw words, and with the flat
 * X^T loads (xt_flat: s pixels read as one row) rows exactly the DRAM pitch of a pixel apart. */
int npu_conv_bwd_res_x_ok(const npu_conv_bwd_plan_t *bp, unsigned stride);

/* X^T made from resident SPM rows of X (the step's scheduler): pixel r at word spm + r * stride,
 * the layout a DRAIN or a vector kernel leaves. Each transposed LOAD of X becomes a LOAD_SPM of the
 * same rows (docs/isa.md): the X^T buffers, their layout and the dW^T waves are unchanged; the
 * plan's and the compulsory bytes of X become 0. Rows at or above the plan's SPM (cfg: the
 * configuration it was planned on). 0, or -1 with the reason in msg. */
int npu_conv_bwd_res_x(const npu_cfg_t *cfg, npu_conv_bwd_plan_t *bp, unsigned spm, unsigned stride, char *msg,
                       size_t n);

/* The dY rows [*oh0, *oh1) whose dW^T waves band unit un takes: its own with one band per image,
 * in a ring (dx.ring) the rows it loads, so that each dY row is read once for dW too. */
void npu_conv_bwd_band_rows(const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, int *oh0, int *oh1);

/* The X rows [*x0, *x1) the dW^T waves of band unit un read (of its npu_conv_bwd_band_rows) and
 * [*n0, *n1) those it loads: with the X^T ring the ones past every earlier band's of the image,
 * else all of the image with its first band (none with the others). */
void npu_conv_bwd_xrows(const npu_conv_bwd_plan_t *bp, const npu_conv_unit_t *un, int *x0, int *x1, int *n0, int *n1);

/* Appends the program to *out. Returns 0, or -1 with the reason in msg. */
int npu_conv_bwd_emit(const npu_cfg_t *cfg, const npu_conv_bwd_plan_t *bp, const npu_conv_bwd_addrs_t *a,
                      npu_prog_t *out, char *msg, size_t n);

#endif
