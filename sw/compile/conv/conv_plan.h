/*
 * conv_plan.h - planning stage of the convolution lowering (docs/conv.md): bands of output rows,
 * output-channel block groups, the SPM layout (double-buffered input bands, resident stationary
 * tiles, double-buffered output tiles), OBUF regions, and the DRAM bytes the plan implies.
 *
 * A pure function of (cfg, layer, kernel, dataflow, options): no simulator, no DRAM addresses.
 *
 * Work is cut into UNITS, executed in order (LOAD -> EXEC -> STORE, double-buffered), each with
 * its OBUF half (u % 2):
 *   fwd, dX: unit = (image b, band of output rows [r0, r1), output-channel blocks [k0, k1)); the
 *            block groups of a band share its input buffer (band % 2, loaded by the first group
 *            with its halo rows: the halo rows are re-loaded per band, the residency plan; dX
 *            ecoflow with opts dy_ring: one ring of dY rows instead, each row loaded once) and
 *            its output tile (band % 2, stored by the last group as one run).
 *   dW:      unit = (pass, image b, band of X plane rows, with the dY rows they meet); the dW
 *            tile stays in the SPM, a pass's taps are stored after its drains; a pass accumulates
 *            the (c-block, tap) regions that fit the OBUF (both halves) over the whole input and
 *            drains them once; a layer whose dW does not fit the OBUF takes several passes, each
 *            streaming the input again. Bands of X rows, not dY rows: each X row is loaded once
 *            per pass and its one LDW serves every kh of its chain (bands of dY rows cut the
 *            chains of the X rows two bands share: two LDWs there); the dY halo rows are the
 *            cheap ones (F x ceil(OW/2S) words each).
 *
 * DRAM layouts (NHWC, one tensor row per pixel): dense by default, each row exactly its channels
 * (pitches in bytes below); with opts.padded each row padded to whole beats (pitch cw, fw or
 * ceil(4 * channels / B) beats: the step engine's layout). The SPM holds a pixel in
 * whole words either way (cw, fw, pout): the DMA zero-fills a row's last word on LOAD and writes
 * only the row's bytes on STORE (docs/memory.md).
 *   X   [b][H][W]   rows of C int16,  pitch 2C
 *   dY  [b][OH][OW] rows of F int16,  pitch 2F (dW zeropad: the host's zero-inserted dY,
 *                   [b][DH][DW], DH = s(OH-1)+1, DW = s(OW-1)+1)
 *   Wt  [KH][KW][F] rows of C int16,  pitch 2C; depthwise (F = C): the host packs the weights
 *                   once into diagonal 2S x 2S blocks, [KH][KW][cw][2S] one-word rows, row r of
 *                   block b holding Wt[kh][kw][2S*b + r] in lane r (zero elsewhere)
 *   Y   [b][OH][OW] rows of F int32,  pitch 4F
 *   dX  [b][H][W]   rows of C int32,  pitch 4C
 *   dW  [KH][KW][F] rows of C int32,  pitch 4C (depthwise: the dense C x C per tap; the host
 *                   takes its diagonal)
 */
#ifndef NPU_CONV_PLAN_H
#define NPU_CONV_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"

typedef struct npu_conv_plan_opts {
    int max_band_rows; /* 0: as many output rows (dW: X plane rows) per band as the SPM and OBUF allow */
    int max_blocks;    /* 0: as many output-channel blocks per unit as the OBUF allows */
    int dy_ring;       /* dX ecoflow: the dY rows in one ring (npu_conv_ring_rows), each loaded once */
    int padded;        /* DRAM pixel rows padded to whole beats (else dense) */
    /* The layer cut into parts (conv_split.h) as given, not by npu_conv_split's own search: filters
     * and channels per range (multiples of 2S, or at least F / C: one range), columns per range
     * (fwd output, dX dX columns; at least their count: one range; dW none). All 0: npu_conv_split's
     * own split (the slicing stage's candidates set them, conv_slice.h). Plans ignore them. */
    int split_f, split_c, split_w;
} npu_conv_plan_opts_t;

typedef struct npu_conv_plan {
    npu_conv_t c;
    int kernel, dataflow;   /* NPU_CONV_FWD/DX/DW, NPU_CONV_ZEROPAD/ECOFLOW */
    int S, L;               /* core side, lanes per word (2S) */
    unsigned B;             /* bytes per SPM word */
    unsigned DB;            /* bytes per DRAM beat (B * BEAT_WORDS): the unit of the byte counts */
    int OH, OW, T;          /* output size, taps KH*KW */
    int cw, fw;             /* words per pixel: C channels (X, dX blocks), F channels (dY) */
    /* SPM words of a pixel of X and dY, of a W row and of an output pixel / dW row */
    unsigned px, pw, pdy, pout;
    /* The DRAM view (conv_split.h): the layer may be a part of a larger one whose tensors hold more
     * channels. Pitches in BYTES of a pixel of X, dY and the output, and of a W / dW row; W and dW
     * rows per tap. A whole layer's view is its own layout. acc: the output adds to the partial
     * sums already in DRAM (a part of a split reduction after the first). */
    unsigned pitch_x, pitch_dy, pitch_out, pitch_w, dtap_rows;
    /* The view's origin: byte offsets of the part's first X, dY, W and output element in the
     * whole tensors (0 for a whole layer). The byte model counts beats from them (tensors start
     * on a beat). */
    uint64_t org_x, org_dy, org_w, org_out;
    int dwx, dwo, dwy;      /* pixels per DRAM row of X, of the output and of dY (W, OW / W, vOW
                               whole: dW zeropad reads the zero-inserted dY; a part over a range of
                               columns reads and writes rows of the whole tensors) */
    int acc;
    /* fwd, one part (conv_split.h npu_conv_split_res_out), and the fused backward's dX
     * (conv_bwd.h npu_conv_bwd_res_dx): the output drained into resident SPM
     * rows, pixel r at word spm_out + r * res_stride, channel block j at word 2j of it (the dense
     * tile's layout at another pitch), by the band's DRAINs, no STORE (a SYNC_S keeps the tile's
     * tokens); 0: the dense tiles stored to DRAM */
    int res_out;
    unsigned spm_out, res_stride;
    /* fwd, one part (conv_split.h npu_conv_split_res_in): X read from resident SPM rows, pixel r
     * at word spm_in + r * res_in_stride (the layout res_out writes), copied into each band's
     * buffer by LOAD_SPMs in place of the band's LOADs (the same words); the halo and padding stay
     * FILLs; 0: X loaded from DRAM */
    int res_in;
    unsigned spm_in, res_in_stride;
    /* dX ecoflow inside the fused backward (conv_bwd.h npu_conv_bwd_res_dy): dY read in place from
     * resident SPM rows, pixel r at word spm_dy + r * res_dy_stride (the dY buffer is unpadded
     * rows of fw-word pixels, so the resident rows are the layout at another pixel pitch), no
     * LOAD of dY; 0: dY loaded into the band buffers or the ring */
    int res_dy;
    unsigned spm_dy, res_dy_stride;
    int no_out;             /* dX ecoflow inside the fused backward without dX (conv_bwd.h
                               npu_conv_bwd_drop_dx): the units load their dY rows and nothing
                               else, no weights, waves, drains or stores of dX */
    /* geometry of the dW program: dY rows vOH x vOW at stride vs, X window origin -vp, in an X
     * plane padded by P (zeropad: the zero-inserted dY, stride 1, the padded X plane). fwd: the
     * padded X plane (P = p). */
    int vOH, vOW, vs, vp, P, PH, PW;
    int PL;                 /* padding left of X column 0: fwd, dW the plane's (P, a column range
                               its own: PW - PL - W on the right), dX the horizontal p of dY
                               column ow = (iw + PL - kw*d) / s (c->pad, a column range its own) */
    int owj;                /* dW: words per transposed dY row, ceil(vOW / 2S) */
    /* dX zeropad: the Z plane (dilated, zero-padded dY) band is ZR x ZW pixels */
    int ZW;
    int row_pitch;          /* dX: pixels per row of the output tile (ecoflow: ceil(W/s)*s) */
    /* blocking */
    int nblk;               /* output-channel blocks: fwd fw, dX cw, dW 1 */
    int G, ngroups;         /* blocks per unit, groups */
    int rows;               /* rows per image cut into bands: fwd OH, dX H, dW the X plane rows read */
    int R, nbands;          /* output rows per band (balanced), bands per image */
    int units;
    /* SPM layout (words) */
    unsigned in_base[2], in_words;
    int dy_ring;            /* opts.dy_ring, of a dX ecoflow plan */
    int ring;               /* dX ecoflow with opts.dy_ring: the dY rows sit in one ring of `ring` row
                               slots at in_base[0] (both in_base), row oh of image b in slot
                               (b*OH + oh) % ring; a band loads only the rows no earlier band of
                               its image holds (npu_conv_ring_new), its halo rows stay; 0: a buffer
                               per band parity, each band loading all its rows */
    unsigned w_base, w_words;      /* stationary weights (fwd, dX), resident */
    unsigned out_base[2], out_words;
    unsigned xoff;                 /* dW: offset of the X plane rows in an input buffer */
    unsigned scratch;              /* 2 words: target of the token-only DRAIN / LDWs (conv_emit.c) */
    unsigned spm_used;
    /* OBUF: fwd/dX rows per unit; dW: passes of regions (npu_conv_dw_layout) */
    unsigned obuf_unit_rows;
    int dw_passes;
    int dw_obuf_rows;       /* dW: the OBUF half the layout was made for (npu_conv_dw_layout) */
    /* DRAM bytes per tag: what the program moves, and each tensor once */
    uint64_t plan_rd[NPU_NUM_TAGS], plan_wr[NPU_NUM_TAGS];
    uint64_t comp_rd[NPU_NUM_TAGS], comp_wr[NPU_NUM_TAGS];
} npu_conv_plan_t;

/* Plans kernel x dataflow of layer c for cfg. Returns 0, or -1 with the reason in msg (layer
 * invalid, a row does not fit the OBUF, the bands do not fit the SPM, a field overflows). */
int npu_conv_plan(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                  const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, char *msg, size_t n);

/* A range of columns of a larger layer (conv_split.h "column ranges"), planned as the sub-layer c
 * whose W is the range's X (fwd, dW) or dX columns, with its own padding on each side: pad columns
 * of padding on the left (fwd, dW: before its first X column; dX: the horizontal p of the index
 * math, dY column ow = (iw + pad - kw*d) / s) and ow output (dX, dW: dY) columns, in place of
 * c->pad and the layer's own OW (fwd, dW: the plane's right padding is what its ow columns read
 * past its W). dW (zeropad): tail zero-inserted dY columns after its last one (s - 1 but in the
 * last range), so the ranges' zero-inserted dY columns are the layer's, each once. */
typedef struct npu_conv_cols { int pad, ow, tail; } npu_conv_cols_t;
int npu_conv_plan_cols(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                       const npu_conv_plan_opts_t *opts, const npu_conv_cols_t *cols, npu_conv_plan_t *p, char *msg,
                       size_t n);
/* The same without the DRAM bytes (plan_rd, plan_wr, comp_*: zero), for a caller that sets the
 * plan's view first and then calls npu_conv_plan_bytes (conv_split's parts). */
int npu_conv_plan_layout(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                         const npu_conv_plan_opts_t *opts, const npu_conv_cols_t *cols, npu_conv_plan_t *p, char *msg,
                         size_t n);

/* The geometry of kernel x dataflow of layer c (sizes, words per pixel, DRAM layout and view, the
 * compulsory bytes), without bands or an SPM layout: what a run lays out its DRAM tensors by.
 * Returns 0, or -1 with the reason in msg (layer invalid). */
int npu_conv_geometry(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow,
                      const npu_conv_plan_opts_t *opts, npu_conv_plan_t *p, char *msg, size_t n);

/* One unit of work (see above). */
typedef struct npu_conv_unit {
    int u, b, band, grp; /* grp: block group (fwd, dX) or pass (dW) */
    int r0, r1;  /* output rows of image b */
    int k0, k1;  /* output-channel blocks (fwd: f-blocks, dX: c-blocks; dW: the pass, pass + 1) */
    int i0, i1;  /* input rows held in the buffer: fwd/dW the X plane rows, dX zeropad the Z rows
                    (Z coordinates: row u = ih + p - kh*d), dX ecoflow the dY rows (may be empty) */
    int o0, o1;  /* dW: the dY rows its X rows meet (every (oh, kh) with oh*vs + kh*d - vp in
                    [i0, i1)); a band's rows [r0, r1) are X plane rows, i0 = r0, i1 = r1 */
} npu_conv_unit_t;
void npu_conv_unit_at(const npu_conv_plan_t *p, int u, npu_conv_unit_t *un);

/* dX ecoflow ring: the ring's row slots (the most global dY rows, b*OH + oh, two consecutive bands
 * of the program span: the load of band k runs while band k-1 still reads, after band k-2's last
 * wave, conv_emit.c), 0 when some band reads no dY row; the rows [*n0, *n1) band `band` of an
 * image loads (those past every earlier band's of the image: each dY row loaded once). */
int npu_conv_ring_rows(const npu_conv_plan_t *p);
void npu_conv_ring_new(const npu_conv_plan_t *p, int band, int *n0, int *n1);
/* The SPM word of dY row oh of unit un (dX ecoflow: in its band's buffer or in the ring). */
unsigned npu_conv_dy_row(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int oh);

/* SPM words from one dY pixel to the next in the rows npu_conv_dy_row returns: fw, or the
 * resident rows' stride (res_dy). */
unsigned npu_conv_dy_px(const npu_conv_plan_t *p);

/* fwd / dW: is plane row pr (in [un->i0, un->i1)) read by any (output row, kh) of the unit? */
int npu_conv_plane_row_used(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int pr);

/* dX ecoflow column phases: dX column iw = x*s + b; nx(b) real columns in phase b. */
int npu_conv_phase_nx(const npu_conv_plan_t *p, int b);

/* dW OBUF layout: region q = cb*T + tap holds dW[tap][f][cb-block], F rows. Regions form chains
 * per (c-block, kw, class of kh mod s/g, g = gcd(s, d)), kh decreasing: the kh of a chain that
 * share an X row read consecutive dY rows when d/g = 1, so one WAVE of the chain's F-row blocks
 * covers them. Regions are packed class by class (a pass loads only the X rows its classes
 * read: npu_conv_plane_row_used), in chain order, never across an OBUF half (a chain cut there
 * takes two WAVEs), halves in order, two per pass, the passes as even as the halves allow (each
 * streams the whole input). Fills pass_of[q] and row_of[q] (OBUF row, both halves) for the
 * T * cw regions; returns the number of passes (0 if F rows exceed a half). */
int npu_conv_dw_layout(const npu_conv_plan_t *p, int obuf_rows, int *pass_of, unsigned *row_of);
/* dW: kh of one class differ by step = s/gcd(s, d) (s: the dW program's stride); 1 when the kh of
 * a chain read consecutive dY rows (d/gcd(s, d) = 1: the layout's waves merge). */
int npu_conv_dw_step(const npu_conv_plan_t *p);
int npu_conv_dw_chained(const npu_conv_plan_t *p);

/* dW stores (conv_dw.c), shared with the byte model (conv_bytes.c) so the plan follows every cut:
 * the last X plane row the waves of kh read; the X rows after which the pass's last unit drains
 * and stores its early groups (cp[0] < cp[1], -1 when none; i0 the unit's first row); the end of
 * the run of consecutive taps from t that the pass completes with their last row in (lo, hi] (t
 * when tap t is not one: each run is one STORE, or a STORE per tap for a part). */
int npu_conv_dw_fin_row(const npu_conv_plan_t *p, int kh);
void npu_conv_dw_early_rows(const npu_conv_plan_t *p, const int *pass_of, int pass, int i0, int cp[2]);
int npu_conv_dw_store_run(const npu_conv_plan_t *p, const int *pass_of, int pass, int lo, int hi, int t);

/* dX zeropad: the dY columns [ow0, ow1) that land inside the Z plane (s*ow in [PL-(KW-1)d, W+PL)). */
void npu_conv_zp_cols(const npu_conv_plan_t *p, int *ow0, int *ow1);

/* Floor / ceiling division for any signs (b > 0). */
static inline int npu_floordiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static inline int npu_ceildiv(int a, int b) { return -npu_floordiv(-a, b); }

/* DRAM bytes (conv_bytes.c), as the DMA counters count them: whole beats of each run
 * (npu_dma_bursts). Bytes of a DRAM tensor in the plan's layout (tag X, W, DY, Y, DX or DW),
 * rounded up to a beat. */
uint64_t npu_conv_tensor_bytes(const npu_conv_plan_t *p, unsigned tag);
/* DRAM bytes of a dW column range's load of the partial dW (conv_dw.c dw_load_partial). */
uint64_t npu_conv_dw_partial_bytes(const npu_conv_plan_t *p);
/* dW: the plan's taps are one run of whole words in DRAM (all the tensor's filters, dense words;
 * else a part of a filter range: per tap its F rows of the whole dW). */
static inline int npu_conv_dw_flat(const npu_conv_plan_t *p)
{
    return p->dtap_rows == (unsigned)p->c.F && p->pitch_out == p->pout * p->B;
}
/* plan_rd / plan_wr: what the plan's units move, from the view's pitches and origin (a split
 * recomputes them once it has set a part's view); comp_rd / comp_wr: each tensor once. */
void npu_conv_plan_bytes(npu_conv_plan_t *p);
void npu_conv_comp_bytes(npu_conv_plan_t *p);

/* A LOAD of nrows image rows of pix pixels into the SPM (npu_cx_load_rows): image row r at DRAM
 * +r*dpitch bytes and SPM +r*spitch words, pixels ppitch bytes apart, rowb bytes of channels each,
 * pw SPM words each. How it is cut into descriptors: */
typedef struct npu_conv_rows {
    unsigned nrows, pix, pw, rowb, spitch;
    uint64_t dpitch, ppitch;
} npu_conv_rows_t;
enum {
    NPU_CONV_ROWS_WHOLE,  /* pixels of whole words (padded): one descriptor row per image row */
    NPU_CONV_ROWS_PIXELS, /* pixels contiguous over the rows, none between them in the SPM: one
                             descriptor of nrows * pix pixel rows */
    NPU_CONV_ROWS_EACH    /* one descriptor of pix pixel rows per image row */
};
int npu_conv_rows_kind(const npu_conv_rows_t *r, unsigned B);
/* The bytes those descriptors move from DRAM offset off (B: SPM word bytes, DB: DRAM beat bytes,
 * the DMA moving whole beats of every run). */
uint64_t npu_conv_rows_bytes(const npu_conv_rows_t *r, uint64_t off, unsigned B, unsigned DB);
/* The bytes npu_cx_move_px moves: n rows of rowb bytes (pw SPM words), dpitch bytes apart. */
uint64_t npu_conv_px_bytes(unsigned B, unsigned DB, uint64_t off, uint64_t n, unsigned pw, unsigned rowb,
                           uint64_t dpitch);
/* fwd / dW: the next run of plane rows from *pr below hi that npu_cx_load_plane_rows loads or
 * fills together: [*pr, *q) all used, all inside the image (*in) or all padding. 0 when none. */
int npu_conv_plane_run(const npu_conv_plan_t *p, const npu_conv_unit_t *un, int *pr, int hi, int *q, int *in);


#endif
