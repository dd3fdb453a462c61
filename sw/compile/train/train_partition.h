/*
 * train_partition.h - data partitioning of the fused backward GEMM (brief 000 section 2.9,
 * Fig. 11), named by the split dimension:
 *
 *   scheme | split | shared by all parts | dX                          | dW
 *   M      | M     | W                   | independent (rows M_p)      | SUM of P partials (K*N each)
 *   N      | N     | X                   | SUM of P partials (M*K each)| independent (columns N_p)
 *   K      | K     | dY                  | independent (columns K_p)   | independent (rows K_p)
 *
 * (The paper's "weight-sharing" = M, "dY-sharing" = N (it shares X), "ifmap-sharing" = K (it
 * shares dY); the names look swapped against the contents, so the code uses the dims.)
 *
 * The split is balanced in units of `align` elements (a tile side, so every part is tile
 * aligned): D / align units rounded up, distributed as evenly as possible, earlier parts
 * taking the extra unit; when D has fewer units than P there are fewer parts.
 *
 * Accumulation work (excluded from the 2*M*N*K MACs of T2): (nparts - 1) * (K*N or M*K)
 * element additions. Where it happens is the model's decision (train_model.h):
 *   single core, parts in sequence: part p > 0 reads the running sum back from DRAM and adds
 *     (accum_dram_bytes = 2 * (nparts - 1) * elems * acc_bytes: a write and a read per extra
 *     part);
 *   multi-core with the shared SPM: the partials are added on chip (no DRAM traffic when they
 *     fit), the shared operand is multicast (read once from DRAM: shared_bytes saved
 *     (nparts - 1) times).
 */
#ifndef NPU_TRAIN_PARTITION_H
#define NPU_TRAIN_PARTITION_H

#include <stdint.h>

#include "compile/train/train_order.h"

#define NPU_PART_MAX 8

typedef enum npu_part {
    NPU_PART_NONE = 0,
    NPU_PART_M,
    NPU_PART_N,
    NPU_PART_K,
    NPU_PART_KNN, /* resolved by the KNN selector (knn.h) */
    NPU_PART_COUNT
} npu_part_t;

typedef struct npu_part_sub {
    long M, N, K;    /* sub-GEMM dims */
    long m0, n0, k0; /* offsets in the layer's GEMM */
} npu_part_sub_t;

typedef struct npu_part_plan {
    npu_part_t scheme;
    int P;                  /* requested parts */
    int nparts;             /* actual parts (<= P) */
    npu_part_sub_t part[NPU_PART_MAX];
    int shared;             /* npu_tensor_t read by every part (W, X, dY), -1 for NONE */
    int accum_grad;         /* NPU_PHASE_DW (M), NPU_PHASE_DX (N), -1 (K, NONE) */
    long accum_elems;       /* element additions to combine the partials */
    uint64_t accum_dram_bytes; /* sequential accumulation through DRAM (see above) */
    uint64_t shared_bytes;  /* bytes of the shared operand (int16) */
} npu_part_plan_t;

const char *npu_part_name(npu_part_t p); /* "none", "m", "n", "k", "knn" */
int npu_part_parse(const char *s);        /* -1 if unknown */

/* Splits (M,N,K) into P parts (1..NPU_PART_MAX) along the scheme's dim, aligned to `align`
 * (>= 1) elements; acc_bytes (0: 4) sizes the accumulation traffic. Returns 0 or -1. */
int npu_part_split(npu_part_t scheme, int P, long M, long N, long K, long align, int acc_bytes,
                    npu_part_plan_t *out);

#endif
