/*
 * topology.h - model descriptions as SCALE-Sim topology CSV files (the format that field's most
 * used simulator reads), turned into convolution layers (conv_layer.h).
 *
 * SCALE-Sim's convolution format: one header line, then one line per layer
 *     name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,
 * (the trailing comma is optional; spaces around fields are ignored). SCALE-Sim's IFMAP is the
 * already padded input, so pad = 0 and dil = 1 unless the FlexTrain extension columns follow
 * Strides: Padding, Dilation, Depthwise (0/1), each optional. Lines that are empty or start with
 * '#' are skipped. SCALE-Sim's GEMM ("M, N, K") topologies are not convolutions and are refused
 * with a message (use `npu train --layers` for MLPs).
 */
#ifndef NPU_TOPOLOGY_H
#define NPU_TOPOLOGY_H

#include <stddef.h>

#include "compile/conv/conv_layer.h"

#define NPU_TOPO_MAX_LAYERS 256
#define NPU_TOPO_NAME 32

typedef struct npu_topo_layer {
    char name[NPU_TOPO_NAME]; /* truncated to NPU_TOPO_NAME - 1 characters */
    npu_conv_t conv;
} npu_topo_layer_t;

typedef struct npu_topology {
    int n;
    npu_topo_layer_t layer[NPU_TOPO_MAX_LAYERS];
} npu_topology_t;

/* Parses the text of a topology file; every layer gets `batch` images and must pass
 * npu_conv_check. Returns 0, or -1 with "line N: reason" in msg. */
int npu_topo_parse(const char *text, int batch, npu_topology_t *t, char *msg, size_t n);

/* npu_topo_parse of a file (at most 1 MiB). */
int npu_topo_load(const char *path, int batch, npu_topology_t *t, char *msg, size_t n);

/* Shrinks a layer for RTL simulation keeping its geometry class: channels C and F divided by
 * cdiv (rounded up), height and width by sdiv (rounded up, but never below what the dilated
 * kernel needs, so the output stays at least 1 x 1); kernel, stride, padding and dilation
 * unchanged. cdiv, sdiv < 1 count as 1. */
void npu_topo_scale(npu_conv_t *c, int cdiv, int sdiv);

#endif
