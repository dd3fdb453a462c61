/*
 * test_spm_copy.c - LOAD_SPM on the Verilated NPU (docs/isa.md "LOAD_SPM"): the LOAD engine's
 * strided / transposed load with the SPM as its source (rtl/npu_spm_burst.v serves its bursts):
 *  - copies, plain and transposed (odd rows, row_bytes not a multiple of a word or beat, a
 *    source pitch above the row, odd source words, contiguous rows), with and without DRAM
 *    stalls, bit for bit against a C reference and against a DRAM LOAD of the same rows; the
 *    counters against the program (spm_copy_words exact, 0 DRAM bytes for the LOAD_SPM's tag,
 *    spm_rd_words / spm_wr_words exact); the program orders LOAD -> LOAD_SPM -> LOAD in one queue
 *    (the engine's source switch, docs/memory.md "LOAD_SPM");
 *  - 40 random shapes, each LOAD_SPM right after the LOAD of its source and before a DRAM LOAD of
 *    the same rows (the engine's in-queue order at LOAD_PIPELINE = 1), with and without stalls;
 *  - errors through STATUS / ERR_PC / ERR_INFO: BAD_DESC (rows 0, odd row_bytes, a DRAM pitch
 *    field, a source pitch past 19 bits, overlapping source and destination), SPM_ADDR
 *    (source, destination);
 *  - cycles: a LOAD_SPM of R rows x rb bytes over a SYNC_L alone (logged), against the timing
 *    model (sw/model/prog_time.h npu_load_spm_cycles: within 4 cycles + 5 %).
 * The cases live in spm_copy_cases.h; tests/unit/test_fake_spm_copy.c runs them on the C model.
 */
#include "rtl_common.h"
#include "spm_copy_cases.h"
#include "model/prog_time.h"

Test(spm_copy, copies_match_the_reference_and_a_dram_load)
{
    npu_cfg_t cfg = rtl_cfg();
    sc_case_t cs[16];
    int n = sc_cases(cfg.s, cs, 16);
    for (unsigned stall = 0; stall <= 20; stall += 20)
        for (int i = 0; i < n; i++) {
            npu_sim_t *s = rtl_open(&cfg, stall, 0, rtl_seed(55) + stall + (uint64_t)i);
            sc_copy_case(&cfg, s, &cs[i], rtl_seed(55) + (uint64_t)i);
            npu_sim_close(s);
        }
}

Test(spm_copy, random_shapes_right_after_their_load)
{
    npu_cfg_t cfg = rtl_cfg();
    for (uint64_t i = 0; i < 40; i++) {
        npu_sim_t *s = rtl_open(&cfg, i % 2 ? 20 : 0, 0, rtl_seed(3) + i);
        sc_random_case(&cfg, s, rtl_seed(3) * 1000 + i);
        npu_sim_close(s);
    }
}

static npu_sim_t *rtl_open_plain(const npu_cfg_t *cfg) { return rtl_open(cfg, 0, 0, 1); }

Test(spm_copy, errors)
{
    npu_cfg_t cfg = rtl_cfg();
    sc_errors(&cfg, rtl_open_plain);
}

/* Cycles of one program (its cycles counter) on a fresh NPU. */
static uint64_t prog_cycles(const npu_cfg_t *cfg, const npu_insn_t *p, size_t n, npu_run_result_t *r)
{
    npu_sim_t *s = rtl_open(cfg, 0, 0, 1);
    cr_assert_eq(npu_run_program(cfg, s, 0, p, n, 1000000, r), NPU_RUN_DONE, "error %u", r->err);
    npu_sim_close(s);
    return r->cnt[NPU_CNT_cycles];
}

/* A LOAD_SPM of R rows x rb bytes costs its source reads (one word per cycle: BEAT_WORDS words per
 * beat of its runs) plus a fixed latency, measured against a SYNC_L alone (fetch and start). */
Test(spm_copy, cycles)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s, F = 2u * (unsigned)cfg.s;
    unsigned W = (unsigned)(cfg.spm_banks * cfg.spm_bank_words);
    struct { int tr; unsigned rows, rb, ss; } t[] = {
        {0, 64, 4 * B, 4}, {0, 64, 4 * B, 5}, {0, 128, B, 1}, {0, 33, 2 * B + 6, 3},
        {1, 4 * F, 2 * B, 2}, {1, 4 * F, 4 * B, 4}, {1, 2 * F + 1, 3 * B, 5},
    };
    npu_insn_t in;
    npu_run_result_t r;
    cr_assert_eq(npu_enc_sync(&in, NPU_OP_SYNC_L), 0);
    uint64_t base = prog_cycles(&cfg, &in, 1, &r);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        unsigned nd = t[i].tr ? (t[i].rows + F - 1) / F : (t[i].rb + B - 1) / B;
        cr_assert_eq(npu_enc_load_spm(&in, NPU_TAG_X, t[i].tr, t[i].rows, 0, t[i].ss, W / 2, nd,
                                      t[i].rb), 0);
        uint64_t c = prog_cycles(&cfg, &in, 1, &r) - base, rd = r.cnt[NPU_CNT_spm_rd_words];
        uint64_t wr = r.cnt[NPU_CNT_spm_copy_words];
        cr_log_info("LOAD_SPM %s %u rows x %u bytes (pitch %u words): %llu cycles over SYNC_L, "
                    "%llu source words read, %llu written",
                    t[i].tr ? "trans" : "plain", t[i].rows, t[i].rb, t[i].ss, (unsigned long long)c,
                    (unsigned long long)rd, (unsigned long long)wr);
        cr_assert_eq(r.cnt[NPU_CNT_dram_rd_x], 0u);
        npu_fields_t f;
        npu_decode(&in, &f);
        uint64_t m = npu_load_spm_cycles(&cfg, &f), d = m > c ? m - c : c - m;
        cr_log_info("  the timing model (npu_load_spm_cycles): %llu", (unsigned long long)m);
        cr_assert_leq(d, 4 + m / 20, "LOAD_SPM %zu: %llu cycles on the RTL, %llu in the model", i,
                      (unsigned long long)c, (unsigned long long)m);
    }
}
