/*
 * test_dma_bursts.c - the DMA run and burst rule (sw/prog/prog_expect.h npu_dma_*, docs/memory.md
 * "DMA runs and bursts") on hand-computed cases: a run's beats, the MAX_BURST split, the 4 KiB
 * split, unaligned starts and ends, contiguous versus per-row runs, transposed groups.
 */
#include <criterion/criterion.h>

#include "hw/isa.h"
#include "prog/prog_expect.h"

static void eq(npu_dma_count_t c, uint64_t beats, uint64_t bursts, const char *what)
{
    cr_assert_eq(c.beats, beats, "%s: %llu beats, expected %llu", what, (unsigned long long)c.beats,
                 (unsigned long long)beats);
    cr_assert_eq(c.bursts, bursts, "%s: %llu bursts, expected %llu", what, (unsigned long long)c.bursts,
                 (unsigned long long)bursts);
}

Test(dma_bursts, one_run)
{
    eq(npu_dma_run(0, 0, 32, 16), 0, 0, "empty");
    eq(npu_dma_run(0, 2, 32, 16), 1, 1, "one element");
    eq(npu_dma_run(30, 2, 32, 16), 1, 1, "the last element of a beat");
    eq(npu_dma_run(30, 4, 32, 16), 2, 1, "two elements across a beat boundary");
    eq(npu_dma_run(0, 32 * 16, 32, 16), 16, 1, "MAX_BURST beats");
    eq(npu_dma_run(0, 32 * 16 + 2, 32, 16), 17, 2, "one element more: MAX_BURST split");
    eq(npu_dma_run(6, 32 * 16, 32, 16), 17, 2, "unaligned start: 17 beats");
    eq(npu_dma_run(0, 32 * 40, 32, 16), 40, 3, "16 + 16 + 8");
    /* 4 KiB: beats 124..131 at B = 32 (bytes 3968..4223): 4 before the line, 4 after */
    eq(npu_dma_run(3970, 4200 - 3970, 32, 16), 8, 2, "across 4 KiB");
    eq(npu_dma_run(4096 - 32, 64, 32, 16), 2, 2, "one beat each side of 4 KiB");
    eq(npu_dma_run(4096 - 2, 4, 32, 16), 2, 2, "one element each side of 4 KiB");
    /* greedy from the start: 4 beats to the line, then 16, 16, 4 */
    eq(npu_dma_run(4096 - 4 * 32, 40 * 32, 32, 16), 40, 4, "4 KiB then MAX_BURST");
    eq(npu_dma_run(8, 8 * 8, 8, 1), 8, 8, "MAX_BURST 1");
}

Test(dma_bursts, rows)
{
    /* 4096 x 5 int16 (10-byte rows) dense: 40960 bytes, 1280 beats of 32, 10 lines of 4 KiB */
    eq(npu_dma_bursts(32, 16, 0, 4096, 10, 10), 1280, 80, "dense rows: one run");
    /* the same rows one beat apart: one single-beat burst per row */
    eq(npu_dma_bursts(32, 16, 0, 4096, 10, 32), 4096, 4096, "padded rows");
    /* rows 12 bytes apart share beats but are runs of their own: [0,10), [12,22), [24,34) */
    eq(npu_dma_bursts(32, 16, 0, 3, 10, 12), 4, 3, "per-row runs that share a beat");
    /* unaligned rows of 64 bytes, stride 96: each covers 3 beats (offsets 2, 2 + 96 = 98 -> 2) */
    eq(npu_dma_bursts(32, 16, 2, 4, 64, 96), 12, 4, "unaligned rows");
    /* stride 0: the same row every time, each its own run */
    eq(npu_dma_bursts(32, 16, 64, 3, 32, 0), 3, 3, "stride 0");
    /* one row: a run whatever the stride */
    eq(npu_dma_bursts(32, 16, 30, 1, 34, 0), 2, 1, "one row");
    /* contiguous rows across a 4 KiB line: bytes [4000, 4000 + 20*10) = beats 125..131 */
    eq(npu_dma_bursts(32, 16, 4000, 20, 10, 10), 7, 2, "dense rows across 4 KiB");
}

Test(dma_bursts, transposed)
{
    /* B = 8 (S = 2): blocks of 4 rows, groups of <= 2 beats */
    /* 10 rows x 20 bytes, stride 24: groups (16 bytes, 4 bytes), per sub-row: 10 x (1 + 1) */
    eq(npu_dma_bursts_tr(8, 16, 0, 10, 20, 24), 30, 20, "per sub-row");
    /* stride = the group: 10 rows of 16 bytes contiguous: one run per block (4 + 4 + 2 rows) */
    eq(npu_dma_bursts_tr(8, 16, 0, 10, 16, 16), 20, 3, "contiguous sub-rows");
    /* beat-padded rows (6 bytes at an 8-byte pitch, aligned): one run per block as before */
    eq(npu_dma_bursts_tr(8, 16, 0, 10, 6, 8), 10, 3, "beat-padded adjacent rows");
    /* the same pitch from an unaligned address: per sub-row (6 bytes at 2 + 8r: one beat each) */
    eq(npu_dma_bursts_tr(8, 16, 2, 10, 6, 8), 10, 10, "unaligned padded rows");
    /* dense 6-byte rows from offset 2: a block of 4 rows = 24 bytes from 2 + 24b: 4 beats */
    eq(npu_dma_bursts_tr(8, 16, 2, 8, 6, 6), 8, 2, "dense unaligned rows");
}

Test(dma_bursts, transposed_store)
{
    /* B = 8 (S = 2): sub-rows of <= 8 bytes (2 int32 columns) */
    /* 3 rows x 20 bytes (5 columns), stride 24, aligned: sub-rows 8, 8, 4 bytes, one beat each */
    eq(npu_dma_bursts_str(8, 16, 0, 3, 20, 24), 9, 9, "per sub-row, aligned");
    /* from +4: each 8-byte sub-row straddles two beats, the 4-byte tail one */
    eq(npu_dma_bursts_str(8, 16, 4, 3, 20, 24), 15, 9, "per sub-row, unaligned");
    /* dense rows of one column block (8 bytes): the whole transfer is one run (10 beats) */
    eq(npu_dma_bursts_str(8, 16, 0, 10, 8, 8), 10, 1, "one column block, contiguous");
    /* dense rows of two column blocks (12 bytes): per sub-row again, 8 + 4 bytes from 12r */
    eq(npu_dma_bursts_str(8, 16, 0, 2, 12, 12), 5, 4, "two column blocks, contiguous rows");
    /* the dispatcher takes the STORE's rule for a transposed STORE, the LOAD's for a LOAD */
    npu_fields_t f = {0};
    f.op = NPU_OP_STORE;
    f.transpose = 1;
    f.rows = 3;
    f.row_bytes = 20;
    f.dram_stride = 24;
    eq(npu_dma_bursts_of(8, 16, &f), 9, 9, "dispatch: STORE transposed");
    f.op = NPU_OP_LOAD;
    npu_dma_count_t c = npu_dma_bursts_tr(8, 16, 0, 3, 20, 24), d = npu_dma_bursts_of(8, 16, &f);
    cr_assert(c.beats == d.beats && c.bursts == d.bursts, "dispatch: LOAD transposed");
}

/* The SPM side's chunks (npu_dma_chunks): up to BEAT_WORDS words of a row a cycle, or at two
 * words a beat two rows of at most one word when they are contiguous in DRAM or a FILL's (the
 * row pairs of rtl/npu_dma_load.v and npu_dma_store.v). */
Test(dma_bursts, chunks)
{
    npu_fields_t f = {0};
    f.op = NPU_OP_LOAD;
    f.rows = 1001;
    f.row_bytes = 10;
    f.dram_stride = 10;
    cr_assert_eq(npu_dma_chunks(32, 1, &f), 1001u, "one word a beat: a word a cycle");
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 501u, "two words a beat, contiguous one-word rows: pairs");
    f.op = NPU_OP_STORE;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 501u, "the STORE's pairs");
    f.dram_stride = 12;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 1001u, "rows apart in DRAM: one a cycle");
    f.op = NPU_OP_FILL;
    f.dram_stride = 0;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 501u, "a FILL's rows: pairs");
    f.op = NPU_OP_LOAD;
    f.row_bytes = 32;
    f.dram_stride = 32;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 501u, "a whole word is still one word");
    f.row_bytes = 40;
    f.dram_stride = 40;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 1001u, "two-word rows: a chunk each, no pairs");
    f.row_bytes = 70; /* three words: a chunk of two, then one */
    f.dram_stride = 70;
    cr_assert_eq(npu_dma_chunks(32, 2, &f), 2002u, "three-word rows: two chunks each");
    cr_assert_eq(npu_dma_chunks(32, 1, &f), 3003u, "three-word rows, a word a beat");
}

/* npu_prog_expect's least busy cycles of the DMA queues (counters busy_load / busy_store): per
 * instruction the most of its beats, its chunks or (transposed) its SPM words, at least one. S = 8:
 * 32-byte words; beat_words 1 and 2. */
Test(dma_bursts, busy_minimum)
{
    npu_cfg_t c = {0};
    npu_insn_t p[5];
    npu_prog_expect_t e;
    c.s = 8, c.spm_banks = 4, c.spm_bank_words = 1024, c.obuf_rows = 256, c.max_burst_beats = 16;
    /* 256 contiguous 10-byte rows: 80 beats at 32 bytes; a chunk each, or a pair each at two words a beat */
    cr_assert_eq(npu_enc_load(&p[0], NPU_TAG_X, 0, 256, 0, 0, 1, 10, 10), 0);
    /* 64 rows of 100 bytes, 128 apart: 4 words (4 chunks, 2 at two words a beat), 4 beats */
    cr_assert_eq(npu_enc_store(&p[1], NPU_TAG_Y, 64, 1u << 20, 0, 4, 100, 128), 0);
    /* transposed: 16 rows x 64 bytes (32 columns) -> 32 SPM words, 16 x 2 beats */
    cr_assert_eq(npu_enc_load(&p[2], NPU_TAG_W, 1, 16, 1u << 16, 512, 1, 64, 64), 0);
    cr_assert_eq(npu_enc_fill(&p[3], 9, 600, 1, 30), 0); /* 9 one-word rows: 9 chunks, 5 pairs */
    cr_assert_eq(npu_enc_store_tr(&p[4], NPU_TAG_Y, 8, 2u << 20, 700, 1, 64, 64), 0); /* 16 columns x 1 word */
    c.beat_words = 1;
    npu_prog_expect(&c, p, 5, &e);
    cr_assert_eq(e.load_busy_min, 256u + 32u + 9u, "%llu", (unsigned long long)e.load_busy_min);
    cr_assert_eq(e.store_busy_min, 256u + 16u, "%llu", (unsigned long long)e.store_busy_min);
    c.beat_words = 2; /* 64-byte beats: 40 beats, 128 pairs; 2 chunks a row; the transposed LOAD's words stay */
    npu_prog_expect(&c, p, 5, &e);
    cr_assert_eq(e.load_busy_min, 128u + 32u + 5u, "%llu", (unsigned long long)e.load_busy_min);
    cr_assert_eq(e.store_busy_min, 128u + 16u, "%llu", (unsigned long long)e.store_busy_min);
}
