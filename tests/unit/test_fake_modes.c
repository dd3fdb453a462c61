/*
 * test_fake_modes.c - the C functional model (fake_npu_sim.c) reports what the RTL reports for
 * a WAVE whose mode differs from the mode its weight bank was loaded with: BAD_DESC at the
 * WAVE, ERR_INFO = bank mode << 2 | wave mode (tests/rtl/test_modes.c
 * wave_mode_must_match_its_bank is the RTL side).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fake_npu_sim.h"
#include "isa.h"
#include "npu_sim.h"
#include "runtime.h"
#include "test_cfgs.h"

static int run_prog(int S, const npu_insn_t *p, size_t n, npu_run_result_t *r)
{
    npu_cfg_t c = test_cfg(S);
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c.dram_bw;
    t.latency = (unsigned)c.dram_latency;
    t.burst_cost = (unsigned)c.dram_burst_cost;
    fake_npu_sim_config(&c);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    int rc = npu_run_program(&c, s, 0, p, n, 100000, r);
    npu_sim_close(s);
    return rc;
}

Test(fake_modes, wave_mode_must_match_its_bank)
{
    for (int S = 2; S <= 8; S += 6) {
        npu_insn_t p[2];
        npu_run_result_t r;
        cr_assert_eq(npu_enc_ldw(&p[0], 1, NPU_MODE_FW, 0, 1, (unsigned)S, (unsigned)S), 0);
        cr_assert_eq(npu_enc_wave(&p[1], 1, NPU_MODE_ISW, 0, 4, 0, 1, (unsigned)S, (unsigned)S, 0), 0);
        cr_assert_eq(run_prog(S, p, 2, &r), NPU_RUN_ERROR, "S=%d", S);
        cr_assert_eq(r.err, NPU_ERR_BAD_DESC, "S=%d: %s", S, npu_error_name(r.err));
        cr_assert_eq(r.err_pc, 1u);
        cr_assert_eq(r.err_info, (unsigned)(NPU_MODE_FW << 2 | NPU_MODE_ISW));
        /* a masked (independent-core) LDW loads the ISW layout: an FW wave on it is refused,
         * an ISW wave runs */
        cr_assert_eq(npu_enc_ldw_cores(&p[0], 0, NPU_MODE_ISW, 0, 1, (unsigned)S, (unsigned)S, 0xF), 0);
        cr_assert_eq(npu_enc_wave(&p[1], 0, NPU_MODE_FW, 0, 4, 0, 1, (unsigned)S, (unsigned)S, 0), 0);
        cr_assert_eq(run_prog(S, p, 2, &r), NPU_RUN_ERROR, "S=%d masked", S);
        cr_assert_eq(r.err_info, (unsigned)(NPU_MODE_ISW << 2 | NPU_MODE_FW));
        cr_assert_eq(npu_enc_wave(&p[1], 0, NPU_MODE_ISW, 0, 4, 0, 1, (unsigned)S, (unsigned)S, 0), 0);
        cr_assert_eq(run_prog(S, p, 2, &r), NPU_RUN_DONE, "S=%d matching ISW wave", S);
        /* same mode: runs */
        cr_assert_eq(npu_enc_ldw(&p[0], 1, NPU_MODE_HSW, 0, 1, (unsigned)S, (unsigned)S), 0);
        cr_assert_eq(npu_enc_wave(&p[1], 1, NPU_MODE_HSW, 0, 4, 0, 1, (unsigned)S, (unsigned)S, 0), 0);
        cr_assert_eq(run_prog(S, p, 2, &r), NPU_RUN_DONE, "S=%d matching HSW wave", S);
    }
}
