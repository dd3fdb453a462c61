/*
 * test_conv_isa.c - the convolution ISA additions on the Verilated NPU (docs/isa.md):
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
    npu_insn_put(&in, NPU_FLD_LOAD_transpose, 1);             /* transpose bit: ignored */
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
    cv_klo_t cs[3] = {{NPU_MODE_FW, 2 * F + 1, F, F, 0, 0, 0, 0, 0},
                      {NPU_MODE_FW, 2 * F + 1, F, F, 1, F - 1, 0, 0, 1},
                      {NPU_MODE_ISW, 4 * S + 3, S, S, 0, 1, 1, 0, 0}};
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

/* Transposed LOAD bursts (npu_dma_load): per 2S-row block, groups of <= 2 beats (2S-column
 * blocks) per source row; one burst run per row, or one per block when the group's rows are
 * adjacent (dram_stride = the group's beats: dY and Z of dW), split by the burst rule
 * (MAX_BURST, 4 KiB). Bit-exact against the host's transpose (read back through a STORE; lanes
 * past `rows` zero) and the burst count against that rule, with and without DRAM stalls. */
/* The bursts of the run of `bytes` bytes at addr in DRAM beats of DB bytes (the word-geometry
 * cases below are whole words; with BEAT_WORDS > 1 a run may start or end inside a beat); its
 * beats are added to *nb. */
static uint64_t tr_bursts_of(uint64_t addr, uint64_t bytes, unsigned DB, unsigned mb, uint64_t *nb)
{
    uint64_t n = 0, beats = (addr + bytes - 1) / DB - addr / DB + 1;
    *nb += beats;
    addr -= addr % DB;
    while (beats) {
        uint64_t to4k = (4096 - addr % 4096) / DB, len = beats < mb ? beats : mb;
        if (len > to4k)
            len = to4k;
        addr += len * DB;
        beats -= len;
        n++;
    }
    return n;
}

Test(conv_isa, transposed_load_bursts)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned S = (unsigned)cfg.s, E = 2 * S, B = 4 * S, mb = (unsigned)cfg.max_burst_beats;
    unsigned DB = (unsigned)npu_cfg_beat(&cfg); /* the DRAM beat: B, or a multiple with wide beats */
    /* rows, columns (int16), dram_stride (beats), beats before a 4 KiB line (0: on it) */
    const unsigned c[][4] = {
        {2 * E + 3, E, 1, 0},          /* one beat per row, adjacent rows: a run per block */
        {2 * E + 3, 2 * E, 2, 0},      /* two beats (dY of dW at C = F = 4S): a run per block */
        {E, 2 * E, 2, 5},              /* the run crosses a 4 KiB line */
        {E + 1, 2 * E + 3, 3, 0},      /* three beats: per-row pairs, then single beats */
        {5, E - 1, 2, 0},              /* rows not adjacent: one single-beat burst per row */
        {3 * E, 3 * E, 4, 1},          /* rows further apart than their beats */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (unsigned stall = 0; stall <= 20; stall += 20) {
            unsigned rows = c[i][0], cols = c[i][1], ds = c[i][2], beats = (2 * cols + B - 1) / B;
            unsigned wpr = (rows + E - 1) / E, R0 = 0x40;
            uint64_t src = 0x10000 + (c[i][3] ? 4096 - (uint64_t)c[i][3] * B : 0), dst = 0x40000, x = rtl_seed(131) + i, want = 0;
            uint64_t nbeats = 0, nfetch = 0; /* DRAM beats of the LOAD, of the fetch */
            npu_sim_t *s = rtl_open(&cfg, stall, 0, x + stall);
            size_t dbytes;
            uint8_t *d = npu_sim_dram(s, &dbytes);
            for (uint64_t k = 0; k < (uint64_t)rows * ds * B + (uint64_t)beats * B; k++)
                d[src + k] = (uint8_t)cv_rand(&x);
            memset(d + dst, 0xA5, (size_t)cols * wpr * B);
            npu_prog_t p;
            npu_insn_t in;
            npu_prog_init(&p);
            cv_push(&p, &in, npu_enc_load(&in, NPU_TAG_DY, 1, rows, (uint32_t)src, R0, wpr, 2 * cols, ds * B),
                    NPU_TOK_PUSH_NEXT);
            cv_push(&p, &in, npu_enc_sync(&in, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
            cv_push(&p, &in, npu_enc_store(&in, NPU_TAG_Y, cols, (uint32_t)dst, R0, wpr, wpr * B, wpr * B),
                    NPU_TOK_POP_PREV);
            npu_run_result_t r;
            int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 500000, &r);
            cr_assert_eq(rc, NPU_RUN_DONE, "case %zu: rc %d, %s", i, rc, cv_err(r.err));
            for (unsigned col = 0; col < cols; col++)
                for (unsigned rw = 0; rw < wpr * E; rw++) {
                    const uint8_t *g = d + dst + ((uint64_t)col * wpr * E + rw) * 2;
                    const uint8_t *w = d + src + (uint64_t)rw * ds * B + (uint64_t)col * 2;
                    uint8_t z[2] = {0, 0};
                    cr_assert(memcmp(g, rw < rows ? w : z, 2) == 0, "case %zu stall %u: column %u row %u",
                              i, stall, col, rw);
                }
            for (unsigned wb = 0; wb < wpr; wb++) {
                unsigned r0 = wb * E, nr = rows - r0 < E ? rows - r0 : E;
                for (unsigned cb = 0; cb < beats; cb += 2) {
                    unsigned g = beats - cb < 2 ? beats - cb : 2;
                    if (ds == g)
                        want += tr_bursts_of(src + ((uint64_t)r0 * ds + cb) * B, (uint64_t)nr * g * B, DB, mb, &nbeats);
                    else
                        for (unsigned rr = r0; rr < r0 + nr; rr++)
                            want += tr_bursts_of(src + ((uint64_t)rr * ds + cb) * B, (uint64_t)g * B, DB, mb, &nbeats);
                }
            }
            uint64_t fetch = tr_bursts_of(0, (uint64_t)p.n * 16, DB, mb, &nfetch);
            cr_assert_eq(r.cnt[NPU_CNT_dram_rd_bursts], want + fetch, "case %zu: %llu read bursts, want %llu + %llu fetch",
                         i, (unsigned long long)r.cnt[NPU_CNT_dram_rd_bursts], (unsigned long long)want,
                         (unsigned long long)fetch);
            cr_assert_eq(r.cnt[NPU_CNT_dram_rd_dy], nbeats * DB, "case %zu: %llu bytes of dY, want %llu beats",
                         i, (unsigned long long)r.cnt[NPU_CNT_dram_rd_dy], (unsigned long long)nbeats);
            cv_check_counters(&cfg, &p, &r, "transposed LOAD");
            npu_prog_free(&p);
            npu_sim_close(s);
        }
}
