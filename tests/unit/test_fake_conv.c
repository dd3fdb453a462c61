/*
 * test_fake_conv.c - the convolution ISA additions on the C functional model (npu_funcsim.c):
 * FILL, the LDW / WAVE window start k_lo, macs_zero / fill_words and their BAD_DESC / SPM_ADDR
 * checks, with the cases of tests/rtl/conv_cases.h that tests/rtl/test_conv_isa.c runs on the
 * RTL (so the model the fuzzer compares against is held to the same checks), at S = 2 and 8.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../rtl/conv_cases.h"
#include "fake_sim.h"
#include "test_cfgs.h"

static npu_sim_t *fake_open(npu_cfg_t *c, int S)
{
    *c = test_cfg(S);
    return open_fake_exact(c);
}

Test(fake_conv, fill)
{
    for (int S = 2; S <= 8; S += 6) {
        npu_cfg_t c;
        npu_sim_t *s = fake_open(&c, S);
        cv_fill_case(&c, s, 91);
        npu_sim_close(s);
        unsigned B = 4u * (unsigned)S, W = (unsigned)(c.spm_banks * c.spm_bank_words);
        s = fake_open(&c, S);
        cv_fill_error(&c, s, 0, 0x100, 1, B, NPU_ERR_BAD_DESC, 0);
        npu_sim_close(s);
        s = fake_open(&c, S);
        cv_fill_error(&c, s, 4, 0x100, 1, 0, NPU_ERR_BAD_DESC, 0);
        npu_sim_close(s);
        s = fake_open(&c, S);
        cv_fill_error(&c, s, 3, W - 10, 5, B + 1, NPU_ERR_SPM_ADDR, W + 1);
        npu_sim_close(s);
    }
}

Test(fake_conv, k_lo_all_modes)
{
    for (int S = 2; S <= 8; S += 6)
        for (unsigned mode = 0; mode < NPU_NUM_MODES; mode++) {
            cv_klo_t cs[16];
            int n = cv_klo_cases(S, mode, cs, 16);
            cr_assert_gt(n, 0);
            for (int i = 0; i < n; i++) {
                npu_cfg_t c;
                npu_sim_t *s = fake_open(&c, S);
                cv_klo_case(&c, s, &cs[i], 100 + (uint64_t)i);
                npu_sim_close(s);
            }
        }
}

Test(fake_conv, k_lo_bad_desc_and_range)
{
    for (int S = 2; S <= 8; S += 6) {
        npu_cfg_t c;
        unsigned F = 2u * (unsigned)S, W;
        npu_sim_t *s = fake_open(&c, S);
        W = (unsigned)(c.spm_banks * c.spm_bank_words);
        cv_klo_outcome(&c, s, 0, NPU_MODE_FW, 3, 2, 3, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0);
        npu_sim_close(s);
        s = fake_open(&c, S);
        cv_klo_outcome(&c, s, 1, NPU_MODE_FW, F, F, F, 0, 1, NPU_RUN_ERROR, NPU_ERR_BAD_DESC, 0);
        npu_sim_close(s);
        s = fake_open(&c, S);
        cv_klo_outcome(&c, s, 0, NPU_MODE_FW, 4, 2, 3, W - 1, 5, NPU_RUN_DONE, 0, 0);
        npu_sim_close(s);
        s = fake_open(&c, S);
        cv_klo_outcome(&c, s, 0, NPU_MODE_FW, 4, 2, 2, W - 1, 5, NPU_RUN_ERROR, NPU_ERR_SPM_ADDR, W + 4);
        npu_sim_close(s);
    }
}
