/*
 * test_fake_modes.c - the C functional model (npu_funcsim.c) reports what the RTL reports for
 * a WAVE whose mode differs from the mode its weight bank was loaded with: BAD_DESC at the
 * WAVE, ERR_INFO = bank mode << 2 | wave mode (tests/rtl/test_modes.c
 * wave_mode_must_match_its_bank is the RTL side); and the ISW bcast WAVE (w3[1]: every row to
 * all four cores, each with its own tile) bit-exact with the counters the program implies
 * (tests/rtl/test_modes.c isw_bcast_own_tiles is the RTL side).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "npu_funcsim.h"
#include "hw/isa.h"
#include "npu_sim.h"
#include "run/runtime.h"
#include "test_cfgs.h"

static int run_prog(int S, const npu_insn_t *p, size_t n, npu_run_result_t *r)
{
    npu_cfg_t c = test_cfg(S);
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c.dram_bw;
    t.latency = (unsigned)c.dram_latency;
    t.burst_cost = (unsigned)c.dram_burst_cost;
    npu_funcsim_config(&c);
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

static uint64_t xr(uint64_t *x)
{
    *x ^= *x << 13; *x ^= *x >> 7; *x ^= *x << 17;
    return *x;
}

Test(fake_modes, isw_bcast_own_tiles)
{
    for (int S = 2; S <= 8; S += 6) {
        npu_cfg_t c = test_cfg(S);
        npu_dram_timing_t t;
        memset(&t, 0, sizeof t);
        t.bytes_per_cycle = c.dram_bw;
        t.latency = (unsigned)c.dram_latency;
        npu_funcsim_config(&c);
        unsigned F = 2u * (unsigned)S, Bt = 4u * (unsigned)S;
        int M = 3 * S + 1, K = S - (S > 2), N = S;
        uint64_t x = 99 + (uint64_t)S;
        int16_t A[25 * 16], W[8 * 8 * 8];
        int32_t C[2 * 25 * 16];
        for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = (int16_t)(xr(&x) % 2001) - 1000;
        for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) W[i] = (int16_t)(xr(&x) % 2001) - 1000;
        npu_sim_t *s = npu_sim_open(&t);
        cr_assert_not_null(s);
        uint8_t *d = npu_sim_dram(s, NULL);
        npu_write_i16(d, 0x10000, Bt, M, (int)F, A, F);
        npu_write_i16(d, 0x20000, Bt, 8 * K, N, W, (size_t)N);
        npu_insn_t p[16];
        size_t n = 0;
        cr_assert_eq(npu_enc_load(&p[n++], NPU_TAG_X, 0, (unsigned)M, 0x10000, 0, 1, 4u * (unsigned)S, 1 * Bt), 0);
        cr_assert_eq(npu_enc_load(&p[n++], NPU_TAG_W, 0, 8u * (unsigned)K, 0x20000, 0x300, 1, 2u * (unsigned)N, 1 * Bt), 0);
        npu_insn_tok(&p[n - 1], NPU_TOK_PUSH_NEXT);
        for (unsigned q = 0; q < 8; q++)
            cr_assert_eq(npu_enc_ldw_cores(&p[n++], q < 4, NPU_MODE_ISW, 0x300 + q * (unsigned)K, 1,
                                           (unsigned)K, (unsigned)N, 1u << (q % 4)), 0);
        npu_insn_tok(&p[2], NPU_TOK_POP_PREV);
        cr_assert_eq(npu_enc_wave(&p[n++], 1, NPU_MODE_ISW, 0, (unsigned)M, 0, 1, (unsigned)K, (unsigned)N, 0), 0);
        cr_assert_eq(npu_insn_bcast(&p[n - 1]), 0);
        cr_assert_eq(npu_enc_wave(&p[n++], 0, NPU_MODE_ISW, 1, (unsigned)M, 0, 1, (unsigned)K, (unsigned)N, 0), 0);
        cr_assert_eq(npu_insn_bcast(&p[n - 1]), 0);
        cr_assert_eq(npu_insn_lane_hi(&p[n - 1]), 0);
        cr_assert_eq(npu_enc_drain(&p[n++], 2u * (unsigned)M, 0, 0x600, 2), 0);
        npu_insn_tok(&p[n - 1], NPU_TOK_PUSH_NEXT);
        cr_assert_eq(npu_enc_store(&p[n++], NPU_TAG_Y, 2u * (unsigned)M, 0x30000, 0x600, 2, 8u * (unsigned)S, 2 * Bt), 0);
        npu_insn_tok(&p[n - 1], NPU_TOK_POP_PREV);
        npu_run_result_t r;
        cr_assert_eq(npu_run_program(&c, s, 0, p, n, 100000, &r), NPU_RUN_DONE, "S=%d: %s", S,
                     npu_error_name(r.err));
        npu_read_i32(d, 0x30000, 2 * Bt, 2 * M, (int)F, C, F);
        for (int q = 0; q < 4; q++)
            for (int i = 0; i < M; i++)
                for (int cc = 0; cc < N; cc++) {
                    uint32_t g = 0;
                    for (int rr = 0; rr < K; rr++) {
                        g += (uint32_t)((int32_t)A[i * (int)F + rr] * W[(q * K + rr) * N + cc]);
                        g += (uint32_t)((int32_t)A[i * (int)F + S + rr] * W[((q + 4) * K + rr) * N + cc]);
                    }
                    cr_assert_eq(C[((q >> 1) * M + i) * (int)F + (q & 1) * S + cc], (int32_t)g,
                                 "S=%d core %d row %d col %d", S, q, i, cc);
                }
        char msg[256];
        npu_prog_expect_t e;
        npu_array_expect_t ax;
        npu_prog_expect(&c, p, n, &e);
        npu_prog_expect_array(&c, p, n, &ax);
        cr_assert_eq(npu_check_counters(r.cnt, &e, msg, sizeof msg), 0, "S=%d: %s", S, msg);
        cr_assert_eq(npu_check_array_counters(r.cnt, &ax, msg, sizeof msg), 0, "S=%d: %s", S, msg);
        cr_assert_eq(r.cnt[NPU_CNT_macs_core3], 2u * (uint64_t)M * K * N);
        cr_assert_eq(r.cnt[NPU_CNT_noc_h_flits], 2u * (uint64_t)M);
        npu_sim_close(s);
        /* legal only in ISW */
        cr_assert_eq(npu_enc_ldw(&p[0], 0, NPU_MODE_HSW, 0, 1, (unsigned)S, (unsigned)S), 0);
        cr_assert_eq(npu_enc_wave(&p[1], 0, NPU_MODE_HSW, 0, 4, 0, 1, (unsigned)S, (unsigned)S, 0), 0);
        cr_assert_eq(npu_insn_bcast(&p[1]), 0);
        cr_assert_eq(run_prog(S, p, 2, &r), NPU_RUN_ERROR);
        cr_assert_eq(r.err, NPU_ERR_BAD_DESC);
        cr_assert_eq(r.err_pc, 1u);
    }
}
