/*
 * topology.h - model descriptions as SCALE-Sim topology CSV files (the format that field's most
 * used simulator reads), in both of SCALE-Sim's formats: convolution layers (conv_layer.h) or
 * GEMMs. The first line names the columns and decides the format:
 *
 * GEMM format, header "Layer, M, N, K": one GEMM per line, name, M, N, K. SCALE-Sim lowers such a
 * row to a convolution with an M x K input, N filters of 1 x K and stride 1, i.e. an M x N output
 * whose elements are dot products of length K: C[M][N] = A[M][K] x B[K][N], exactly
 * `npu gemm -m M -n N -k K`. The batch multiplies M (the rows of A and C).
 *
 * Convolution format: name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
 * Num Filter, Strides (read by position, as SCALE-Sim does; the header's names of these columns
 * are not checked). SCALE-Sim's IFMAP is the already padded input, so pad = 0 and dil = 1 unless
 * the FlexTrain extension columns Padding, Dilation, Depthwise (0/1) are named in the header
 * (anywhere after Strides). Depthwise layers: SCALE-Sim writes a depthwise convolution over C
 * channels as "Channels C, Num Filter 1" (one filter spanning all channels: the same MACs). Without
 * a Depthwise column, a layer with Num Filter 1, Channels > 1 and a filter larger than 1 x 1 is
 * read as the network's depthwise layer (F = C, depthwise = 1), with a note; a Depthwise column,
 * when present, decides instead.
 *
 * Tolerated: columns the format does not know (ignored, one warning per file naming them), values
 * past the header's last column (ignored, in the same warning), empty lines, lines of only commas,
 * lines starting with '#', trailing commas, spaces around fields, CR LF line ends, no final line
 * end. Errors name the line.
 *
 * Nothing here prints: warnings and notes go to the topology's `warn` text for the caller.
 */
#ifndef NPU_TOPOLOGY_H
#define NPU_TOPOLOGY_H

#include <stddef.h>

#include "compile/conv/conv_layer.h"

#define NPU_TOPO_MAX_LAYERS 256
#define NPU_TOPO_NAME 32
#define NPU_TOPO_WARN 512
#define NPU_TOPO_MAX_GEMM_DIM (1 << 30) /* largest M (after the batch), N or K of a GEMM layer */

enum { NPU_TOPO_CONV = 0, NPU_TOPO_GEMM = 1 }; /* the two formats */

typedef struct npu_topo_layer {
    char name[NPU_TOPO_NAME]; /* truncated to NPU_TOPO_NAME - 1 characters */
    npu_conv_t conv;          /* conv format */
    int M, N, K;              /* GEMM format (M includes the batch); 0 in a conv file */
} npu_topo_layer_t;

typedef struct npu_topology {
    int format; /* NPU_TOPO_CONV or NPU_TOPO_GEMM */
    int n;
    npu_topo_layer_t layer[NPU_TOPO_MAX_LAYERS];
    char warn[NPU_TOPO_WARN]; /* warnings / notes, one per line ("" if none), for the caller */
} npu_topology_t;

/* Parses the text of a topology file; every layer gets `batch` images (conv) or `batch` times its
 * M rows (GEMM); conv layers must pass npu_conv_check. Returns 0, or -1 with "line N: reason" in
 * msg. t->warn holds the warnings either way. */
int npu_topo_parse(const char *text, int batch, npu_topology_t *t, char *msg, size_t n);

/* npu_topo_parse of a file (at most 1 MiB). */
int npu_topo_load(const char *path, int batch, npu_topology_t *t, char *msg, size_t n);

/* The GEMM a layer runs as `npu gemm`: the GEMM of a GEMM file, or the forward pass of a conv
 * layer lowered by im2col: M = batch x OH x OW output pixels, N = F filters, K = C x KH x KW taps
 * (row-major, the NHWC input gathered per output pixel). A depthwise layer is no single GEMM (C
 * independent products of N = 1): -1 with the reason in why, as for a shape past
 * NPU_TOPO_MAX_GEMM_DIM. */
int npu_topo_gemm_shape(const npu_topology_t *t, int i, int *M, int *N, int *K, char *why,
                        size_t n);

/* Shrinks a layer for RTL simulation keeping its geometry class: channels C and F divided by
 * cdiv (rounded up), height and width by sdiv (rounded up, but never below what the dilated
 * kernel needs, so the output stays at least 1 x 1); kernel, stride, padding and dilation
 * unchanged. cdiv, sdiv < 1 count as 1. */
void npu_topo_scale(npu_conv_t *c, int cdiv, int sdiv);

/* The topology as a network for the estimator (ref/net_ref.h), per sample (parse it with batch
 * 1): a conv row is a convolution layer (its own input shape, padding and depthwise flag), a GEMM
 * row a 1 x 1 convolution over M pixels of K channels with N filters (its M x N x K MACs). The
 * layers need not chain: the estimator gives a layer whose input is not the previous one's output
 * an input of its own. 0, or -1 with the reason (more layers than NPU_NET_MAX_LAYERS, a
 * non-square or dilated kernel). */
struct npu_net_shape;
int npu_topo_net(const npu_topology_t *t, struct npu_net_shape *net, char *why, size_t n);

#endif
