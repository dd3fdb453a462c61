/*
 * test_fake_spm_copy.c - LOAD_SPM on the C functional model (npu_funcsim.c) with the cases of
 * tests/rtl/spm_copy_cases.h that tests/rtl/test_spm_copy.c runs on the RTL: copies (plain and
 * transposed) against a C reference and a DRAM LOAD of the same rows, counters, errors; at S = 2
 * and 8, one- and two-word beats.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../rtl/spm_copy_cases.h"
#include "fake_sim.h"
#include "test_cfgs.h"

Test(fake_spm_copy, copies_match_the_reference_and_a_dram_load)
{
    for (int S = 2; S <= 8; S += 6)
        for (int bw = 1; bw <= 2; bw++) {
            npu_cfg_t c = test_cfg(S);
            sc_case_t cs[16];
            c.beat_words = bw;
            int n = sc_cases(S, cs, 16);
            for (int i = 0; i < n; i++) {
                npu_sim_t *s = open_fake_exact(&c);
                sc_copy_case(&c, s, &cs[i], 77 + (uint64_t)i);
                npu_sim_close(s);
            }
        }
}

Test(fake_spm_copy, random_shapes)
{
    for (int S = 2; S <= 8; S += 6)
        for (int bw = 1; bw <= 2; bw++)
            for (uint64_t i = 0; i < 20; i++) {
                npu_cfg_t c = test_cfg(S);
                c.beat_words = bw;
                npu_sim_t *s = open_fake_exact(&c);
                sc_random_case(&c, s, 1000 + i);
                npu_sim_close(s);
            }
}

Test(fake_spm_copy, errors)
{
    for (int S = 2; S <= 8; S += 6) {
        npu_cfg_t c = test_cfg(S);
        sc_errors(&c, open_fake_exact);
    }
}

/* The expected counters of one LOAD_SPM: words copied, source reads (the DRAM LOAD's beats of the
 * same rows at byte src_addr * B, times BEAT_WORDS), no DRAM bytes. */
Test(fake_spm_copy, prog_expect_counts)
{
    npu_cfg_t c = test_cfg(2); /* B = 8 */
    npu_insn_t in;
    npu_prog_expect_t e;
    cr_assert_eq(npu_enc_load_spm(&in, NPU_TAG_X, 0, 5, 0x101, 3, 0x800, 2, 14), 0);
    npu_prog_expect(&c, &in, 1, &e);
    cr_assert_eq(e.spm_copy_words, 10u);
    cr_assert_eq(e.spm_wr_words, 10u);
    cr_assert_eq(e.spm_rd_words, 10u, "5 rows of 2 beats");
    cr_assert_eq(e.insn_load, 1u);
    for (int t = 1; t < NPU_NUM_TAGS; t++)
        cr_assert_eq(e.rd_bytes[t], 0u);
    c.beat_words = 2; /* 16-byte beats: rows at bytes 8 + 24r, 14 bytes: beats 0..1, 1..2, ... */
    npu_prog_expect(&c, &in, 1, &e);
    cr_assert_eq(e.spm_rd_words, 2u * (2 + 1 + 2 + 1 + 2), "%llu", (unsigned long long)e.spm_rd_words);
    cr_assert_eq(npu_enc_load_spm(&in, NPU_TAG_X, 1, 4, 0x100, 1, 0x800, 1, 8), 0);
    npu_prog_expect(&c, &in, 1, &e);
    cr_assert_eq(e.spm_copy_words, 4u, "4 columns of one word (4 rows = 2S)");
}
