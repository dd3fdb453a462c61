/*
 * knn.h - the K-nearest-neighbour partition selector of brief 000 section 2.10.
 *
 * Features: the dims of dX (M,K), dW (K,N) and dY (M,N) as log2 (so M, K, N each appear
 * twice), Euclidean distance, k in {1, 3, 5} [INTERP: the paper gives neither k, the metric
 * nor the scaling]. Prediction: majority vote of the k nearest training samples (ties between
 * samples at equal distance broken by index, ties in the vote by the nearest voter).
 * Labels are produced by the model (train_model.h npu_tmodel_best_partition).
 * Accuracy: mean over `splits` random train/test splits (train_frac of the samples for
 * training), shuffled by a xorshift64 seeded with `seed` (deterministic).
 * Pure C99 without libm (log2 is computed here).
 */
#ifndef NPU_KNN_H
#define NPU_KNN_H

#include <stdint.h>

#define NPU_KNN_FEATURES 6

typedef struct npu_knn_sample {
    double f[NPU_KNN_FEATURES];
    int label;
} npu_knn_sample_t;

/* log2(x) for x > 0 (no libm); 0 for x <= 0. */
double npu_log2(double x);

/* Features of a layer GEMM: log2 of M, K (dX), K, N (dW), M, N (dY). */
void npu_knn_features(long M, long K, long N, double f[NPU_KNN_FEATURES]);

/* Label predicted for f from train[0..n-1] with k neighbours; -1 if n < 1 or k < 1. */
int npu_knn_predict(const npu_knn_sample_t *train, int n, const double f[NPU_KNN_FEATURES],
                    int k);

/* Mean accuracy in [0,1] over `splits` random splits; -1 on bad arguments or allocation. */
double npu_knn_accuracy(const npu_knn_sample_t *s, int n, int k, int splits, double train_frac,
                        uint64_t seed);

/* Leave-one-out predictions: pred[i] = prediction of sample i from all the others. */
int npu_knn_loo(const npu_knn_sample_t *s, int n, int k, int *pred);

#endif
