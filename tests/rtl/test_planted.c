/*
 * test_planted.c - the regression catches a planted RTL bug (issue 6).
 *
 * Built twice: in every build/<config>/test_rtl (the real RTL: the GEMM below must pass) and, by
 * `make test`, as build/<PLANT_CONFIG>/fault/test_planted against a model verilated with
 * NPU_PLANTED_FAULT (rtl/npu_obuf.v: the path (2) results of cores 0/1 -- HSW and ISW waves --
 * land one OBUF row too far). There the GEMM must fail bit-exactness, and the first-divergence
 * report must name the wrong element, its tile, the WAVEs that wrote it and their mode (HSW), so
 * a designer who broke that line learns from the regression what broke and where.
 */
#include <stdio.h>
#include <string.h>

#include "rtl_common.h"

/* FlexSA policy GEMM whose waves Algorithm 1 runs in HSW (n-block 2S wide, k <= S). On a
 * mismatch: the first divergence in space (tile, WAVE, mode, core) and in time (the cycle the
 * EXEC queue worked on that WAVE, found by re-running the program), and an FST waveform of the
 * failing run around that cycle (trace != NULL). */
static void planted_gemm(int *rc, char *where, size_t n, const char *trace)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, M = 8 * S, N = 2 * S, K = S;
    uint64_t seed = rtl_seed(7);
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * K), *B = malloc(sizeof(int16_t) * (size_t)K * N);
    npu_gemm_report_t r;
    npu_gemm_loc_t loc;
    cr_assert(A && B);
    npu_random_operands(M, N, K, seed, A, B);
    npu_sim_t *s = rtl_open(&cfg, 0, 0, seed);
    *rc = npu_gemm_run_modes(&cfg, s, M, N, K, A, B, 0, 0, NPU_EMIT_FLEXSA, NULL,
                             rtl_budget(&cfg, M, N, K), &r);
    where[0] = '\0';
    if (*rc == NPU_GEMM_MISMATCH) {
        int len = snprintf(where, n, "GEMM %dx%dx%d (policy flexsa, seed %llu): first mismatch "
                                     "C[%d][%d] = %d, expected %d; ",
                           M, N, K, (unsigned long long)seed, r.bad_row, r.bad_col,
                           (int)r.bad_got, (int)r.bad_exp);
        if (len > 0 && (size_t)len < n &&
            npu_prog_locate_gemm(&cfg, &r.plan, &r.args, r.prog.insn, r.prog.n, r.bad_row, r.bad_col,
                            &loc, where + len, n - (size_t)len) == 0 && trace) {
            uint64_t cyc = 0;
            npu_sim_t *s2 = rtl_open(&cfg, 0, 0, seed);
            int found = npu_run_find_exec_pc(&cfg, s2, r.prog_base, r.prog.insn, r.prog.n,
                                             (uint32_t)loc.wave_pc[1], rtl_budget(&cfg, M, N, K), &cyc);
            npu_sim_close(s2);
            len = (int)strlen(where);
            if (found == 0) { /* the failing run once more, traced around that cycle */
                npu_gemm_report_t r3;
                npu_sim_t *s3 = rtl_open(&cfg, 0, 0, seed);
                uint64_t t0 = cyc > 50 ? cyc - 50 : 0;
                cr_assert_eq(npu_sim_trace(s3, trace, t0, cyc + 200), 0, "cannot trace to %s", trace);
                npu_gemm_run_modes(&cfg, s3, M, N, K, A, B, 0, 0, NPU_EMIT_FLEXSA, NULL,
                                   rtl_budget(&cfg, M, N, K), &r3);
                npu_gemm_report_free(&r3);
                npu_sim_close(s3);
                snprintf(where + len, n - (size_t)len, "; WAVE #%ld ran at cycle %llu; waveform "
                         "%s (cycles %llu..%llu)", loc.wave_pc[1], (unsigned long long)cyc, trace,
                         (unsigned long long)t0, (unsigned long long)(cyc + 200));
            } else {
                snprintf(where + len, n - (size_t)len, "; WAVE #%ld: cycle not found",
                         loc.wave_pc[1]);
            }
        }
    }
    npu_gemm_report_free(&r);
    npu_sim_close(s);
    free(A);
    free(B);
}

#ifdef NPU_PLANTED_FAULT
Test(planted, obuf_off_by_one_in_hsw_is_caught_and_located)
{
    char where[600], trace[128];
    int rc;
    FILE *f;
    snprintf(trace, sizeof trace, "build/%s/fault/planted.fst", rtl_cfg().name);
    remove(trace);
    planted_gemm(&rc, where, sizeof where, trace);
    cr_assert_eq(rc, NPU_GEMM_MISMATCH, "the planted bug went unnoticed: %s", npu_gemm_rc_name(rc));
    cr_assert(strstr(where, "tile (") != NULL, "no tile in the report: %s", where);
    cr_assert(strstr(where, "HSW") != NULL, "the report does not name the mode: %s", where);
    cr_assert(strstr(where, ", core ") != NULL, "the report does not name the core: %s", where);
    cr_assert(strstr(where, "ran at cycle ") != NULL, "no cycle in the report: %s", where);
    f = fopen(trace, "rb");
    cr_assert_not_null(f, "no waveform %s", trace);
    fseek(f, 0, SEEK_END);
    cr_assert_gt(ftell(f), 0, "empty waveform %s", trace);
    fclose(f);
    printf("planted bug caught: %s\n", where);
}
#else
Test(planted, same_gemm_passes_on_the_real_rtl)
{
    char where[600];
    int rc;
    planted_gemm(&rc, where, sizeof where, NULL);
    cr_assert_eq(rc, NPU_GEMM_PASS, "%s %s", npu_gemm_rc_name(rc), where);
}
#endif
