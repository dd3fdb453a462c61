/*
 * slice_nest.h - the slicing stage's problem geometry (compile/slice internal): the loop dims of
 * a GEMM or a convolution kernel, its three dense tensors as views over those dims, what a tile
 * occupies in the SPM and the OBUF, and the GEMM a tile step runs. slice_search.c walks it.
 *
 * Tensors live at 4 KiB-aligned DRAM addresses in the layouts of conv_layer.h (dense, no
 * pitch): GEMM A [M][K] int16, B [K][N] int16, C [M][N] int32; X [b][H][W][C] int16,
 * W [KH][KW][F][C] int16, Y [b][OH][OW][F] int32, dY [b][OH][OW][F] int16, dX [b][H][W][C]
 * int32, dW [KH][KW][F][C] int32.
 */
#ifndef NPU_SLICE_NEST_H
#define NPU_SLICE_NEST_H

#include "compile/slice/slice.h"

enum { NPU_SLICE_T_MATRIX = 0, NPU_SLICE_T_NHWC, NPU_SLICE_T_KFC };
/* How a tensor axis follows a loop dim: the tile's own range, the input rows (columns) a range
 * of output rows (columns) reads, or the dY rows (columns) a range of dX rows (columns) meets. */
enum { NPU_SLICE_W_PLAIN = 0, NPU_SLICE_W_FWD, NPU_SLICE_W_DX };

typedef struct npu_slice_axis {
    int dim;      /* loop dim it follows */
    int win;      /* NPU_SLICE_W_* */
    int kk;       /* kernel extent along it (windows) */
    int64_t lim;  /* the tensor's extent along it */
} npu_slice_axis_t;

typedef struct npu_slice_tensor {
    int layout;   /* NPU_SLICE_T_*: MATRIX axes (row, col); NHWC (n, h, w, c); KFC (f, c) x taps */
    unsigned ebytes;
    int naxes;
    npu_slice_axis_t ax[4];
    unsigned dep; /* loop dims it depends on (bit mask) */
} npu_slice_tensor_t;

typedef struct npu_slice_nest {
    const npu_cfg_t *cfg;
    int kind, S, L;
    unsigned B;         /* an SPM word's bytes (npu_cfg_word): SPM and OBUF capacity */
    unsigned DB;        /* a DRAM beat's bytes (npu_cfg_beat): the bus time of a beat */
    npu_burst_geom_t g; /* the burst rule (npu_slice_geom), found once */
    npu_conv_t c;  /* convolutions */
    int T;         /* taps KH*KW (GEMM: 1) */
    int nd;
    int64_t ext[NPU_SLICE_DIMS], unit[NPU_SLICE_DIMS];
    const char *name[NPU_SLICE_DIMS];
    unsigned red;  /* reduction dims (bit mask) */
    int order[NPU_SLICE_ORDERS][NPU_SLICE_DIMS];
    npu_slice_tensor_t t[NPU_SLICE_TENSORS];
    int no_split_a; /* GEMM: A's two buffers in bank 0 only (the cost's no_split_a) */
} npu_slice_nest_t;

/* The nest of a GEMM (kind NPU_SLICE_GEMM, M N K) or a convolution kernel (c). 0, or -1 with the
 * reason in msg. */
int npu_slice_nest_init(npu_slice_nest_t *x, const npu_cfg_t *cfg, int kind, const npu_conv_t *c,
                        int M, int N, int K, char *msg, size_t n);

/* The range [*lo, *lo + *len) of tensor axis a for the tile at origins o, sizes s (per dim). */
void npu_slice_axis_range(const npu_slice_nest_t *x, const npu_slice_axis_t *a, const int64_t *o,
                          const int64_t *s, int64_t *lo, int64_t *len);

/* The transfers of tensor t's tile at (o, s), added to acc (nothing for an empty window). */
void npu_slice_tile_bursts(const npu_slice_nest_t *x, int t, const int64_t *o, const int64_t *s,
                           npu_bursts_t *acc);
/* The same from the tile's range along each of the tensor's axes (npu_slice_axis_range). */
void npu_slice_range_bursts(const npu_slice_nest_t *x, int t, const int64_t *lo, const int64_t *len,
                            npu_bursts_t *acc);

/* Capacity of full tiles `tile` (ntiles per dim given): SPM words of one buffer per tensor, the
 * buffers (1 when the tensor has a single tile, else 2; GEMM always 2, as gemm_tiling), the OBUF
 * rows of an output tile. Returns 1 when it fits the SPM and the OBUF, else 0. */
int npu_slice_fit(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *ntiles,
                  unsigned *words, int *bufs, unsigned *obuf_rows);

/* The GEMM of a step with tile sizes s: m rows, n columns, taps x kd contraction; OBUF rows. */
void npu_slice_step_gemm(const npu_slice_nest_t *x, const int64_t *s, int64_t *m, int64_t *n,
                         int64_t *taps, int64_t *kd, int64_t *orows);

/* Q16 cycles the DRAINs of a GEMM step's output tile (sizes s, full tiles `tile`) lose to SPM
 * sub-bank conflicts in the emitter's C staging layout (gemm_tiling: bank 2, two buffers of
 * Mt x 2nb words, row stride 2nb, n-block j at word 2j; FlexSA's skinny DRAIN for an n-block of
 * at most S columns): npu_slice_drain_stalls per n-block, the mean over the two buffers. 0 for
 * the convolutions (their emitters take no slice plan). */
uint64_t npu_slice_step_drain(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *s);

#endif
