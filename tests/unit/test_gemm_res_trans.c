/* test_gemm_res_trans.c - a GEMM whose transposed operand is resident in the SPM (gemm_emit.h:
 * its tiles LOAD_SPMed transposed from the stored rows), on the C functional model: C bit for bit
 * the program's that LOADs the operand transposed from DRAM, no byte of it read from DRAM but the
 * LOAD that fills its rows, and the transposed LOADs all gone. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "fake_sim.h"
#include "hw/isa.h"
#include "run/runtime.h"
#include "test_cfgs.h"

/* One run of M x N x K (ta / tb: A / B stored transposed) with the operands in DRAM at args' places
 * and, with res, the transposed ones resident above the last bank (filled by LOADs ahead of the
 * program); C's bytes out in c (malloc'd), the counters in *rr. */
static uint8_t *run_case(const npu_cfg_t *cfg, int M, int N, int K, int ta, int tb, int res, npu_run_result_t *rr)
{
    npu_gemm_args_t a;
    npu_gemm_report_t rep;
    npu_prog_t prog;
    npu_insn_t in;
    size_t dbytes;
    uint64_t x = 0x5EED + (uint64_t)(M * 7 + N * 3 + K);
    unsigned limit = (unsigned)((cfg->spm_banks - 1) * cfg->spm_bank_words);
    memset(&a, 0, sizeof a);
    npu_gemm_pitches(M, N, K, ta, tb, &a.pitch_a, &a.pitch_b, &a.pitch_c);
    a.transA = ta;
    a.transB = tb;
    a.a = 1u << 20;
    a.b = 2u << 20;
    a.c = 3u << 20;
    a.modes = NPU_EMIT_FLEXSA;
    a.spm_limit = limit;
    unsigned ra = npu_gemm_res_words(cfg, M, 0), rb = npu_gemm_res_words(cfg, K, 0);
    a.res_a = res && ta;
    a.spm_ra = limit;
    a.res_b = res && tb;
    a.spm_rb = limit + (a.res_a ? (unsigned)K * ra : 0);
    npu_sim_t *sim = open_fake(cfg, 50, x);
    uint8_t *d = npu_sim_dram(sim, &dbytes);
    for (uint64_t i = 0; i < (1u << 20); i += 2) { /* A and B, whatever their layout */
        int16_t va = (int16_t)((int)(test_rand(&x) % 201) - 100), vb = (int16_t)((int)(test_rand(&x) % 201) - 100);
        memcpy(d + a.a + i, &va, 2);
        memcpy(d + a.b + i, &vb, 2);
    }
    npu_prog_init(&prog);
    if (a.res_a) { /* A stored K x M: its K rows into the resident rows */
        cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, (unsigned)K, a.a, a.spm_ra, ra, 2u * (unsigned)M, a.pitch_a), 0);
        cr_assert_eq(npu_prog_push(&prog, &in), 0);
    }
    if (a.res_b) { /* B stored N x K */
        cr_assert_eq(npu_enc_load(&in, NPU_TAG_W, 0, (unsigned)N, a.b, a.spm_rb, rb, 2u * (unsigned)K, a.pitch_b), 0);
        cr_assert_eq(npu_prog_push(&prog, &in), 0);
    }
    cr_assert_eq(npu_gemm_compile_args(cfg, M, N, K, &a, 4u << 20, &rep), NPU_GEMM_PASS, "%s", rep.host_msg);
    int spm_loads = 0, tr_loads = 0;
    for (size_t i = 0; i < rep.prog.n; i++) {
        npu_fields_t f;
        cr_assert_eq(npu_decode(&rep.prog.insn[i], &f), 0);
        spm_loads += f.op == NPU_OP_LOAD_SPM && f.transpose;
        tr_loads += f.op == NPU_OP_LOAD && f.transpose;
        cr_assert_eq(npu_prog_push(&prog, &rep.prog.insn[i]), 0);
    }
    cr_assert_eq(spm_loads > 0, res && (ta || tb), "LOAD_SPMs: %d", spm_loads);
    cr_assert_eq(tr_loads > 0, !res && (ta || tb), "transposed LOADs: %d", tr_loads);
    cr_assert_eq(npu_run_program(cfg, sim, 4u << 20, prog.insn, prog.n, 100000000, rr), NPU_RUN_DONE,
                 "%dx%dx%d ta %d tb %d res %d: err %u", M, N, K, ta, tb, res, rr->err);
    size_t cb = (size_t)M * a.pitch_c;
    uint8_t *c = malloc(cb);
    cr_assert_not_null(c);
    memcpy(c, d + a.c, cb);
    npu_gemm_report_free(&rep);
    npu_prog_free(&prog);
    npu_sim_close(sim);
    return c;
}

static void same_c(const npu_cfg_t *cfg, int M, int N, int K, int ta, int tb)
{
    npu_run_result_t r0, r1;
    uint8_t *c0 = run_case(cfg, M, N, K, ta, tb, 0, &r0), *c1 = run_case(cfg, M, N, K, ta, tb, 1, &r1);
    cr_assert_arr_eq(c1, c0, (size_t)M * 4u * (size_t)N, "C bit for bit: S=%d %dx%dx%d ta %d tb %d", cfg->s, M, N, K,
                     ta, tb);
    /* the resident operand: its fill's bytes alone (whole rows), the other one's as before */
    uint64_t B = (uint64_t)npu_cfg_word(cfg), fa = (uint64_t)K * ((2u * (uint64_t)M + B - 1) / B) * B;
    uint64_t fb = (uint64_t)N * ((2u * (uint64_t)K + B - 1) / B) * B;
    if (ta)
        cr_assert_leq(r1.cnt[NPU_CNT_dram_rd_x], fa + B * (uint64_t)K, "A read once, by its fill");
    else
        cr_assert_eq(r1.cnt[NPU_CNT_dram_rd_x], r0.cnt[NPU_CNT_dram_rd_x]);
    if (tb)
        cr_assert_leq(r1.cnt[NPU_CNT_dram_rd_w], fb + B * (uint64_t)N, "B read once, by its fill");
    else
        cr_assert_eq(r1.cnt[NPU_CNT_dram_rd_w], r0.cnt[NPU_CNT_dram_rd_w]);
    cr_assert_gt(r1.cnt[NPU_CNT_spm_copy_words], 0);
    free(c0);
    free(c1);
}

/* dW-like (A transposed: X^T), dX-like (B transposed: W^T) and both, edge tiles in every dimension,
 * several chunks and tiles, S = 2 and 8. */
Test(gemm_res_trans, same_c_operand_read_once)
{
    npu_cfg_t c2 = test_cfg(2), c8 = test_cfg(8);
    int shapes[][3] = {{37, 24, 13}, {64, 48, 40}, {66, 20, 40}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 1; t < 4; t++) {
            same_c(&c2, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1);
            same_c(&c8, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1);
        }
}
