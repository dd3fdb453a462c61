/* train_partition.c - M / N / K partitioning of the fused backward GEMM; see train_partition.h. */
#include "compile/train/train_partition.h"

#include <string.h>

static const char *const names[NPU_PART_COUNT] = {"none", "m", "n", "k", "knn"};

const char *npu_part_name(npu_part_t p)
{
    return (unsigned)p < NPU_PART_COUNT ? names[p] : "?";
}

int npu_part_parse(const char *s)
{
    for (int i = 0; i < NPU_PART_COUNT; i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int npu_part_split(npu_part_t scheme, int P, long M, long N, long K, long align, int acc_bytes,
                    npu_part_plan_t *out)
{
    if (!out || M < 1 || N < 1 || K < 1 || align < 1 || P < 1 || P > NPU_PART_MAX ||
        scheme < NPU_PART_NONE || scheme > NPU_PART_K)
        return -1;
    memset(out, 0, sizeof *out);
    if (acc_bytes <= 0)
        acc_bytes = 4;
    out->scheme = scheme;
    out->P = P;
    out->shared = -1;
    out->accum_grad = -1;
    if (scheme == NPU_PART_NONE || P == 1) {
        out->nparts = 1;
        out->part[0].M = M;
        out->part[0].N = N;
        out->part[0].K = K;
        if (scheme != NPU_PART_NONE)
            out->shared = scheme == NPU_PART_M ? NPU_TENSOR_W : scheme == NPU_PART_N ? NPU_TENSOR_X : NPU_TENSOR_DY;
        return 0;
    }
    long D = scheme == NPU_PART_M ? M : scheme == NPU_PART_N ? N : K;
    long units = (D + align - 1) / align;
    int np = units < P ? (int)units : P;
    long base = units / np, extra = units % np, off = 0;
    for (int p = 0; p < np; p++) {
        long u = base + (p < extra ? 1 : 0);
        long len = u * align;
        if (off + len > D)
            len = D - off;
        npu_part_sub_t *s = &out->part[p];
        s->M = M;
        s->N = N;
        s->K = K;
        if (scheme == NPU_PART_M) {
            s->M = len;
            s->m0 = off;
        } else if (scheme == NPU_PART_N) {
            s->N = len;
            s->n0 = off;
        } else {
            s->K = len;
            s->k0 = off;
        }
        off += len;
    }
    out->nparts = np;
    switch (scheme) {
    case NPU_PART_M:
        out->shared = NPU_TENSOR_W;
        out->accum_grad = NPU_PHASE_DW;
        out->accum_elems = (long)(np - 1) * K * N;
        out->shared_bytes = (uint64_t)K * (uint64_t)N * 2u;
        break;
    case NPU_PART_N:
        out->shared = NPU_TENSOR_X;
        out->accum_grad = NPU_PHASE_DX;
        out->accum_elems = (long)(np - 1) * M * K;
        out->shared_bytes = (uint64_t)M * (uint64_t)K * 2u;
        break;
    default:
        out->shared = NPU_TENSOR_DY;
        out->shared_bytes = (uint64_t)M * (uint64_t)N * 2u;
        break;
    }
    out->accum_dram_bytes = 2u * (uint64_t)out->accum_elems * (uint64_t)acc_bytes;
    return 0;
}
