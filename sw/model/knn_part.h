/*
 * knn_part.h - the KNN partition selector as the compiler uses it (`npu train --partition
 * knn`, docs/training.md §6): k = 1 over the analytical model's labels of a paper layer set,
 * trained once per process on the quad-core server set ("server4": for each layer with dX the
 * fastest of the M, N and K splits at P = 4 under Algorithm 1's order; the forward, the same
 * for every scheme, is left out). The bench's own KNN figures (leave-one-out, accuracy over
 * random splits) are in layer_sets.c.
 */
#ifndef NPU_KNN_PART_H
#define NPU_KNN_PART_H

#include "compile/train/train_lower.h"
#include "compile/train/train_partition.h"
#include "model/knn.h"

/* Training samples of a layer set (layer_sets.h npu_lset_config name): features of each layer
 * with dX and the model's fastest split (M, N or K at P = the set's cores). Returns the count
 * (<= max), or -1 (unknown set, allocation). */
int npu_knn_part_samples(const char *set, npu_knn_sample_t *samples, int max);

/* The split predicted for a layer: M, N or K (NPU_PART_M when the training failed). */
npu_part_t npu_knn_partition(const npu_train_shape_t *L);

#endif
