/*
 * test_conv_isa.c - the convolution ISA additions on the Verilated NPU (docs/design.md section 2):
 *  - FILL (LOAD queue): zeroes exactly the words a LOAD of the same rows / spm / stride /
 *    row_bytes would write (read back through a STORE), leaves the neighbours intact, ignores
 *    the LOAD format's tag / transpose / DRAM fields, one word per cycle; BAD_DESC (rows or
 *    row_bytes zero, ERR_INFO 0) and SPM_ADDR (ERR_INFO = last word);
 *  - LDW / WAVE window start k_lo, bit-exact against a golden in FW, HSW, VSW and ISW (SPM rows
 *    before the LDW window and A lanes below the WAVE window hold nonzero data), with a_hi;
 *  - counters: fill_words, macs_zero (planted zeros, and 0 without zeros), the MAC counters and
 *    idle_pe_shape with k_lo (npu_prog_expect / npu_prog_expect_array);
 *  - BAD_DESC for k_lo >= k (LDW, WAVE) and the LDW's SPM range over the rows it reads.
 * The cases live in conv_cases.h; tests/unit/test_fake_conv.c runs them on the C model.
 */
#include "rtl_common.h"
#include "conv_cases.h"

Test(conv_isa, fill_zeroes_exact_words)
{
    npu_cfg_t cfg = rtl_cfg();
    for (unsigned stall = 0; stall <= 20; stall += 20) {
        npu_sim_t *s = rtl_open(&cfg, stall, 0, rtl_seed(91) + stall);
        cv_fill_case(&cfg, s, rtl_seed(91) + stall);
        npu_sim_close(s);
    }
}

Test(conv_isa, fill_errors)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s, W = (unsigned)(cfg.spm_banks * cfg.spm_bank_words);
    struct { unsigned rows, spm, stride, rb, err; uint32_t info; } c[] = {
        {0, 0x100, 1, B, NPU_ERR_BAD_DESC, 0},
        {4, 0x100, 1, 0, NPU_ERR_BAD_DESC, 0},
        {3, W - 10, 5, B + 1, NPU_ERR_SPM_ADDR, W + 1},  /* rows at W-10, W-5, W: 2 words each */
        {1, W - 1, 0, 2 * B, NPU_ERR_SPM_ADDR, W},
        {2, 0, 0xFFFF, B, NPU_ERR_SPM_ADDR, 0xFFFF},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
        cv_fill_error(&cfg, s, c[i].rows, c[i].spm, c[i].stride, c[i].rb, c[i].err, c[i].info);
        npu_sim_close(s);
    }
    /* up to the last word: fine */
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_insn_t in;
    npu_run_result_t r;
    cr_assert_eq(npu_enc_fill(&in, 3, W - 10, 4, B + 1), 0); /* words W-10 .. W-1 */
    in.w[0] |= 1u << 15;                                      /* transpose bit: ignored */
    cr_assert_eq(npu_run_program(&cfg, s, 0, &in, 1, 100000, &r), NPU_RUN_DONE, "%s", cv_err(r.err));
    cr_assert_eq(r.cnt[NPU_CNT_fill_words], 6u);
    cr_assert_eq(r.cnt[NPU_CNT_insn_load], 1u);
    npu_sim_close(s);
}

/* FILL runs in the LOAD DMA engine at one SPM word per cycle (the write port is free here). */
Test(conv_isa, fill_one_word_per_cycle)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s, rows = 256, beats = 4;
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_insn_t in;
    npu_run_result_t r;
    cr_assert_eq(npu_enc_fill(&in, rows, 0, beats + 1, beats * B), 0);
    cr_assert_eq(npu_run_program(&cfg, s, 0, &in, 1, 100000, &r), NPU_RUN_DONE, "%s", cv_err(r.err));
    uint64_t words = (uint64_t)rows * beats, cyc = r.cnt[NPU_CNT_cycles];
    cr_assert_eq(r.cnt[NPU_CNT_fill_words], words);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], words);
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_bursts], 1u, "only the program fetch reads the DRAM");
    cr_log_info("FILL of %llu words: %llu cycles (program fetch included)", (unsigned long long)words,
                (unsigned long long)cyc);
    cr_assert_leq(cyc, words + 80, "FILL of %llu words took %llu cycles", (unsigned long long)words,
                  (unsigned long long)cyc);
    npu_sim_close(s);
}

static void klo_mode(unsigned mode, uint64_t seed)
{
    npu_cfg_t cfg = rtl_cfg();
    cv_klo_t cs[16];
    int n = cv_klo_cases(cfg.s, mode, cs, 16);
    cr_assert_gt(n, 0);
    for (int i = 0; i < n; i++) {
        npu_sim_t *s = rtl_open(&cfg, i % 2 ? 15 : 0, 0, seed + (uint64_t)i);
        cv_klo_case(&cfg, s, &cs[i], seed + (uint64_t)i);
        npu_sim_close(s);
    }
}

Test(conv_isa, klo_fw) { klo_mode(NPU_MODE_FW, rtl_seed(101)); }
Test(conv_isa, klo_hsw) { klo_mode(NPU_MODE_HSW, rtl_seed(102)); }
Test(conv_isa, klo_vsw) { klo_mode(NPU_MODE_VSW, rtl_seed(103)); }
Test(conv_isa, klo_isw) { klo_mode(NPU_MODE_ISW, rtl_seed(104)); }

/* No zeros anywhere in A: macs_zero stays 0 (with and without a window). */
Test(conv_isa, macs_zero_without_zeros)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, F = 2 * S;
    cv_klo_t cs[3] = {{NPU_MODE_FW, 2 * F + 1, F, F, 0, 0, 0, 0},
                      {NPU_MODE_FW, 2 * F + 1, F, F, 1, F - 1, 0, 0},
                      {NPU_MODE_ISW, 4 * S + 3, S, S, 0, 1, 1, 0}};
    for (int i = 0; i < 3; i++) {
        npu_sim_t *s = rtl_open(&cfg, 0, 0, 7);
        cv_klo_case(&cfg, s, &cs[i], rtl_seed(105) + (uint64_t)i);
        npu_sim_close(s);
    }
}

Test(conv_isa, klo_bad_desc_and_range)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned S = (unsigned)cfg.s, F = 2 * S, W = (unsigned)(cfg.spm_banks * cfg.spm_bank_words);
    struct { int wave; unsigned mode, k, n, k_lo, spm, stride; int rc; unsigned err; uint32_t info; } c[] = {
        {0, NPU_MODE_FW, 3, 2, 3, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0},
        {0, NPU_MODE_ISW, 1, 1, 63, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0},
        {0, NPU_MODE_HSW, S, F, S - 1, 0, 1, NPU_RUN_DONE, 0, 0},
        {1, NPU_MODE_FW, F, F, F, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0},
        {1, NPU_MODE_ISW, S, S, 63, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0},
        {1, NPU_MODE_VSW, F, S, F - 1, 0, 1, NPU_RUN_DONE, 0, 0},
        /* LDW: only rows k_lo..k-1 are read: the range check covers k - k_lo rows */
        {0, NPU_MODE_FW, 4, 2, 3, W - 1, 5, NPU_RUN_DONE, 0, 0},
        {0, NPU_MODE_FW, 4, 2, 2, W - 1, 5, NPU_RUN_ERROR, NPU_ERR_SPM_ADDR, W - 1 + 5},
        {0, NPU_MODE_FW, 4, 2, 0, W - 15, 5, NPU_RUN_ERROR, NPU_ERR_SPM_ADDR, W},
        /* WAVE: the window does not change which A rows are read */
        {1, NPU_MODE_FW, 4, 2, 3, W - 3, 1, NPU_RUN_ERROR, NPU_ERR_SPM_ADDR, W},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
        cv_klo_outcome(&cfg, s, c[i].wave, c[i].mode, c[i].k, c[i].n, c[i].k_lo, c[i].spm,
                       c[i].stride, c[i].rc, c[i].err, c[i].info);
        npu_sim_close(s);
    }
}
