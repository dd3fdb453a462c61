/*
 * slice_memo.h - a small direct-mapped table of answers by key, for the slicing search's pure
 * functions that it asks the same few questions over and over (drain stalls, step drains, step
 * computes). Tables are static per function and small on purpose: in a fresh process every page
 * they touch is a fault (~1.4 us here; docs/estimator.md). The host is single-threaded.
 * A key is NPU_MEMO_KEY int64 values, the last one never 0 (an empty slot is all zeros).
 */
#ifndef NPU_SLICE_MEMO_H
#define NPU_SLICE_MEMO_H

#include <stdint.h>
#include <string.h>

#define NPU_MEMO_KEY 5

typedef struct npu_memo_slot {
    int64_t key[NPU_MEMO_KEY];
    uint64_t v;
} npu_memo_slot_t;

/* The slot of key in table t of n slots in *e: 1 when it holds key's answer (e->v), else 0 with
 * the key written in, for the caller to set e->v. */
static inline int npu_memo_find(npu_memo_slot_t *t, unsigned n, const int64_t *key, npu_memo_slot_t **e)
{
    uint64_t h = 0;
    for (int i = 0; i < NPU_MEMO_KEY; i++)
        h = (h ^ (uint64_t)key[i]) * 0x9E3779B97F4A7C15ull;
    *e = &t[(h >> 32) % n];
    if (!memcmp((*e)->key, key, sizeof (*e)->key))
        return 1;
    memcpy((*e)->key, key, sizeof (*e)->key);
    return 0;
}

#endif
