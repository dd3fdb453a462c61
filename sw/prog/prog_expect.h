/*
 * prog_expect.h - the expected-counter model of a program: what the performance counters must
 * say after it runs, from the instruction list alone (docs/compiler.md "Expected counters").
 * Every flow (GEMM, training, convolution) checks the hardware against it after each run; what
 * depends on timing or data (cycles, stalls, waits, SPM conflicts, macs_zero) is not in it.
 */
#ifndef NPU_PROG_EXPECT_H
#define NPU_PROG_EXPECT_H

#include <stddef.h>
#include <stdint.h>

#include "hw/isa.h"
#include "hw/npu_cfg.h"

/* What a program should make the counters say (ISA-level accounting, see each field). */
typedef struct npu_prog_expect {
    uint64_t rd_bytes[NPU_NUM_TAGS]; /* LOAD: the beats of its runs * B (npu_dma_bursts,
                                        npu_dma_bursts_tr); PROG: ceil(n*16/B)*B */
    uint64_t wr_bytes[NPU_NUM_TAGS]; /* STORE: the beats of its runs * B (npu_dma_bursts) */
    uint64_t rd_bursts, wr_bursts;   /* DMA only (fetch excluded), by the same functions.
                                        Checked: wr_bursts exactly, rd_bursts as a lower bound
                                        of dram_rd_bursts (which also counts the fetch's) */
    uint64_t macs;                   /* sum of m*(k-k_lo)*n over WAVEs */
    uint64_t macs_core[4];           /* per core, the rows of each set (npu_wave_sets) times the
                                        core's part of k x n (FW: core0 k<S,n<S; 1 k<S,n>=S; ...) */
    uint64_t waves[NPU_NUM_MODES], rows[NPU_NUM_MODES];
    uint64_t insn_load, insn_exec, insn_store;
    uint64_t spm_rd_words, spm_wr_words; /* LOAD/DRAIN write, STORE/LDW/WAVE read */
    uint64_t obuf_drain_rows;
    uint64_t fill_words;             /* FILL: rows * ceil(row_bytes/B) */
    uint64_t spm_copy_words;         /* LOAD_SPM: the words a LOAD of the same rows writes; its
                                        source reads (spm_rd_words) are the DRAM beats of a LOAD
                                        of the same rows at byte src_addr * B, pitch src_stride *
                                        B, times BEAT_WORDS; no DRAM bytes */
    /* VEC (len from the last VSET before it): words of a (and b) read, of d written (rows x
     * the words of a row, SUM's d one row), and the unit's busy cycles (npu_vec_busy). Its SPM
     * ports have the first claim on every sub-bank, so the cycles do not depend on other
     * traffic. */
    uint64_t vec_rd_words, vec_wr_words, vec_busy;
    /* The least cycles the LOAD and STORE queues can have an instruction in flight (counters
     * busy_load, busy_store, checked as lower bounds): per instruction the most of its DRAM
     * beats (one a cycle on the port), its chunks (npu_dma_chunks: the realigner and the packer
     * move one a cycle) or, transposed, its SPM words (one a cycle), a LOAD_SPM's source words
     * (the burst server reads one a cycle), a FILL's chunks. */
    uint64_t load_busy_min, store_busy_min;
} npu_prog_expect_t;

/* ---- the vector unit's cycles (docs/isa.md "VEC", docs/datapath.md "Vector unit") ------------
 * npu_vec_serial: whether a VEC (fields f, the VSET's len, S lanes per word) runs in order word
 * for word: d's words overlap those of a (or of b, when the op reads b) without being that
 * source in place (same first word, stride and width, an element-wise op, rows that do not
 * overlap: one row or stride >= words per row). npu_vec_busy: its busy cycles (vec_busy), for a
 * VEC that passes its checks. In order: per row and chunk of 2S elements its reads + 3 + its
 * writes (SUM: per row and chunk reads + 3, the writes once per chunk). Pipelined otherwise: with
 * R and W a chunk's reads (a's words, twice with b; SUM: a's) and writes (SUM: only a column's
 * last row writes, its other rows W = 0), taken chunk after chunk in the unit's order,
 *     R(first) + sum over consecutive chunks of max(W(previous), R(next)) + 3 + W(last).
 * A chunk of 32-bit elements has two words, a row's last one when the row's words are odd one. */
int npu_vec_serial(const npu_fields_t *f, unsigned len, unsigned S);
uint64_t npu_vec_busy(const npu_fields_t *f, unsigned len, unsigned S);

/* ---- DMA bursts (docs/memory.md "DMA runs and bursts"): the one rule of the RTL's DMA engines,
 * shared by the expected counters and the compiler's burst-count model ------------------------ */
typedef struct npu_dma_count {
    uint64_t beats;  /* DRAM beats transferred (the DRAM byte counters say beats * B) */
    uint64_t bursts; /* AXI bursts */
} npu_dma_count_t;

/* One run: the `bytes` (>= 1) bytes from byte address addr cover the beats floor(addr/B) ..
 * floor((addr+bytes-1)/B); they are split greedily from the first into bursts of <= max_burst
 * beats that never cross a 4 KiB line. bytes = 0: nothing. */
npu_dma_count_t npu_dma_run(uint64_t addr, uint64_t bytes, uint64_t B, uint64_t max_burst);
/* A normal LOAD or a STORE of `rows` rows of row_bytes at dram_addr + r * dram_stride (bytes):
 * one run of rows * row_bytes bytes when dram_stride == row_bytes (rows contiguous), else one run
 * per row. */
npu_dma_count_t npu_dma_bursts(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                               uint64_t row_bytes, uint64_t dram_stride);
/* A transposed LOAD: per block of 2S rows (B/2) and group of <= 2 column blocks (cb, cb + 1:
 * the sub-row of gb = min(2B, row_bytes - cb*B) bytes at +cb*B of each row): one run of the
 * block's sub-rows when they are contiguous (dram_stride == gb) or beat-padded and adjacent
 * (dram_stride == the group's beats * B, dram_addr beat-aligned), else one run per sub-row. */
npu_dma_count_t npu_dma_bursts_tr(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                                  uint64_t row_bytes, uint64_t dram_stride);
/* The same rule with its groups in SPM words of W bytes and its runs counted in DRAM beats of DB
 * bytes (npu_dma_bursts_tr is W = DB = B). */
npu_dma_count_t npu_dma_bursts_tr_wb(uint64_t W, uint64_t DB, uint64_t max_burst, uint64_t dram_addr,
                                     uint64_t rows, uint64_t row_bytes, uint64_t dram_stride);
/* A transposed STORE (int32 elements): one run of rows * row_bytes when row_bytes <= B and the
 * rows are contiguous (dram_stride == row_bytes), else one run per sub-row (r, cb): the
 * min(B, row_bytes - cb*B) bytes at dram_addr + r * dram_stride + cb * B. */
npu_dma_count_t npu_dma_bursts_str(uint64_t B, uint64_t max_burst, uint64_t dram_addr, uint64_t rows,
                                   uint64_t row_bytes, uint64_t dram_stride);
/* A LOAD's or STORE's count by the rule of its kind (normal, transposed LOAD, transposed STORE),
 * W the SPM word's bytes (the transposed rules' groups and column blocks), DB the DRAM beat's
 * (the runs' beats and bursts; W * BEAT_WORDS). npu_dma_bursts_of: W = DB = B (BEAT_WORDS = 1);
 * npu_dma_bursts_cfg: the config's word, beat and MAX_BURST_BEATS. The three rules above take a
 * single B: at BEAT_WORDS = 1, word = beat. */
npu_dma_count_t npu_dma_bursts_wb(uint64_t W, uint64_t DB, uint64_t max_burst, const npu_fields_t *f);
npu_dma_count_t npu_dma_bursts_of(uint64_t B, uint64_t max_burst, const npu_fields_t *f);
npu_dma_count_t npu_dma_bursts_cfg(const npu_cfg_t *cfg, const npu_fields_t *f);
/* The SPM side of a normal LOAD, a FILL or a normal STORE: its chunks, one a cycle at best (W the
 * SPM word's bytes, bw = BEAT_WORDS). A chunk is up to bw words of one row, or, at bw = 2, two
 * rows of at most one word when they are contiguous in DRAM (or a FILL's): the DMA's row pairs
 * (docs/memory.md "Words and beats"). */
uint64_t npu_dma_chunks(uint64_t W, unsigned bw, const npu_fields_t *f);

void npu_prog_expect(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n,
                     npu_prog_expect_t *e);

/* Array-occupancy counters a program implies exactly (the WAVEs alone decide them):
 * busy[mode] = injection slots = sum of the first (longest) row set of each wave
 * (npu_wave_sets), idle_pe_shape = sum of m x (4S^2 / parts - k x n) (PEs of each row-carrying
 * sub-array outside the wave's tile). npu_gemm_run and conv_run check them after npu_check_counters. */
typedef struct npu_array_expect {
    uint64_t busy[NPU_NUM_MODES];
    uint64_t idle_pe_shape;
    /* NoC (docs/isa.md (counters)), also implied by the program alone:
     * V (LDW): one flit per stationary row sent (2S when k is split over two cores: FW, VSW;
     *   else S), each delivered to every core of the LDW's core mask (all four without one);
     * H (WAVE): one flit per slot and H channel; a row set's rows cross the link of the cores
     *   where they enter the array (cores 0/2, and 1/3 for the sets that do not reach them
     *   through core 0/2's horizontal bypass: VSW's right set, ISW's sets on cores 1/3). */
    uint64_t noc_v_flits, noc_h_flits, noc_deliveries, lbuf_v_words, lbuf_h_words;
    uint64_t noc_h_link[4], noc_v_link[4];
} npu_array_expect_t;
void npu_prog_expect_array(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n,
                           npu_array_expect_t *x);

#endif
