/*
 * digits.h - the 8x8 handwritten digits (UCI "Optical Recognition of Handwritten Digits", test
 * part: 1,797 images, 10 classes; the copy Debian's python3-sklearn ships, sw/data/README.md).
 *
 * Loading, a seeded train/test split and the batches `npu fit` and the reference trainer share,
 * so both see the same samples in the same order.
 */
#ifndef NPU_DATA_DIGITS_H
#define NPU_DATA_DIGITS_H

#include <stddef.h>
#include <stdint.h>

#define NPU_DIGITS_N 1797      /* images */
#define NPU_DIGITS_FEATURES 64 /* 8 x 8 pixels, each 0..16 */
#define NPU_DIGITS_CLASSES 10

typedef struct npu_dataset {
    int n, features, classes;
    int h, w, c;    /* a sample's shape: features = h * w * c (the digits: 8 x 8 x 1) */
    uint8_t *x;     /* n x features raw values (0..16 for the digits) */
    uint8_t *label; /* n labels in 0..classes-1 */
} npu_dataset_t;

/* Reads the gzip'ed CSV (64 pixel columns then the label, one image per line). 0, or -1 with
 * the reason (file, line and what is wrong) in why. */
int npu_digits_load(const char *path, npu_dataset_t *d, char *why, size_t n);
/* The data file: `path` when given, else sw/data/digits.csv.gz found from the working directory
 * or from the executable's (build/<cfg>/npu). Writes the path into out; 0, or -1 if none exists. */
int npu_digits_find(const char *path, char *out, size_t n);
void npu_dataset_free(npu_dataset_t *d);

/* A seeded split: a permutation of the n samples (splitmix64 Fisher-Yates from seed); the first
 * n_test are the test set, the rest the training set (both in permuted order). */
typedef struct npu_split {
    int n_train, n_test;
    int *train, *test; /* sample indices */
} npu_split_t;
int npu_split_make(int n, double test_frac, uint64_t seed, npu_split_t *s);
void npu_split_free(npu_split_t *s);

/* The order of epoch e's training samples: the training set permuted from (seed, e). Batches
 * are consecutive runs of `batch` indices; a last partial batch is dropped (static shapes). */
void npu_epoch_order(const npu_split_t *s, uint64_t seed, int epoch, int *order);

/* splitmix64: the generator of the split, the epochs and the weight initialisation. */
uint64_t npu_splitmix64(uint64_t *state);

#endif
