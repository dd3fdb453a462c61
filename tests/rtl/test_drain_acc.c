/*
 * test_drain_acc.c - DRAIN acc (w0[15]) on the Verilated NPU: an output tile reduced in the SPM
 * over several waves (the partial sums of the fused backward orders). Each DRAIN acc adds the
 * OBUF rows to the int32 words already in the SPM; the old words come through the weight
 * loader's SPM port, so LDWs run during the accumulating drains here too. Checked bit-exact
 * against golden, with random DRAM stalls; overlapping destinations are BAD_DESC. At a bf16
 * configuration the operands are bf16, each wave's result its psum chain and the DRAINs add old +
 * new in fp32 in program order.
 */
#include <string.h>

#include "ref/bf16.h"
#include "rtl_common.h"

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0, "encoding failed: %s", #expr); \
                           if (acc) { cr_assert_eq(npu_insn_drain_acc(&_i), 0); } acc = 0;       \
                           npu_insn_tok(&_i, tok); tok = 0;                                      \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

/* C = A . (B_0 + ... + B_{nb-1}): one wave per B_j (banks and OBUF halves alternate), the first
 * DRAIN plain, the others accumulating. skinny: ISW waves (n, k <= S) with split DRAINs. */
static void acc_case(int M, int N, int K, int nb, int skinny, uint64_t seed)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned Bt = 4 * (unsigned)cfg.s, ob_rows = (unsigned)cfg.obuf_rows;
    uint64_t x = seed | 1;
    npu_sim_t *s = rtl_open(&cfg, 10, 0, seed);
    size_t dbytes;
    uint8_t *d = npu_sim_dram(s, &dbytes);
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * K);
    int16_t *Bs = malloc(sizeof(int16_t) * (size_t)nb * K * N);
    int32_t *C = malloc(sizeof(int32_t) * (size_t)M * N), *G = malloc(sizeof(int32_t) * (size_t)M * N);
    int32_t *Gj = malloc(sizeof(int32_t) * (size_t)M * N);
    cr_assert(A && Bs && C && G && Gj);
    rtl_operands(&cfg, A, (size_t)M * K, Bs, (size_t)nb * K * N, &x);
    memset(G, 0, sizeof(int32_t) * (size_t)M * N);
    for (int j = 0; j < nb; j++) { /* sum of products mod 2^32 (not the product of a sum) */
        rtl_golden_one_wave(&cfg, M, N, K, A, Bs + (size_t)j * K * N, Gj);
        for (size_t i = 0; i < (size_t)M * N; i++) /* bf16: old + new, in fp32 (DRAIN acc) */
            G[i] = j == 0 ? Gj[i]
                 : npu_cfg_bf16(&cfg) ? (int32_t)npu_fp32_add((uint32_t)G[i], (uint32_t)Gj[i])
                                      : (int32_t)((uint32_t)G[i] + (uint32_t)Gj[i]);
    }
    uint64_t da = 0x10000, db = 0x20000, dc = 0x40000;
    npu_write_i16(d, da, Bt, M, K, A, (size_t)K);
    npu_write_i16(d, db, Bt, nb * K, N, Bs, (size_t)N);
    npu_prog_t p;
    npu_prog_init(&p);
    unsigned tok = 0, acc = 0, mode = skinny ? NPU_MODE_ISW : NPU_MODE_FW;
    unsigned ha = ((unsigned)M + 1) / 2, SB = 0x300, SC = 0x600;
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, (unsigned)M, (uint32_t)da, 0, 1, 2u * (unsigned)K, 1 * Bt));
    tok = NPU_TOK_PUSH_NEXT;
    PUSH(p, npu_enc_load(I, NPU_TAG_W, 0, (unsigned)(nb * K), (uint32_t)db, SB, 1, 2u * (unsigned)N, 1 * Bt));
    for (int j = 0; j < nb; j++) {
        unsigned bank = (unsigned)j & 1u, ob = ((unsigned)j & 1u) * ob_rows;
        if (j == 0) tok = NPU_TOK_POP_PREV;
        PUSH(p, npu_enc_ldw(I, bank, mode, SB + (unsigned)(j * K), 1, (unsigned)K, (unsigned)N));
        PUSH(p, npu_enc_wave(I, bank, mode, 0, (unsigned)M, 0, 1, (unsigned)K, (unsigned)N, ob));
        acc = j > 0;
        if (j == nb - 1) tok = NPU_TOK_PUSH_NEXT;
        if (skinny)
            PUSH(p, npu_enc_drain_split(I, ha, ob, SC, 2, ha, (unsigned)M - ha));
        else
            PUSH(p, npu_enc_drain(I, (unsigned)M, ob, SC, 2));
    }
    tok = NPU_TOK_POP_PREV;
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, (unsigned)M, (uint32_t)dc, SC, 2, 4u * (unsigned)N, 2 * Bt));
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&cfg, s, 0, p.insn, p.n, 2000000, &r), NPU_RUN_DONE,
                 "M=%d N=%d K=%d nb=%d skinny=%d seed=%llu: err %s pc %u", M, N, K, nb, skinny,
                 (unsigned long long)seed, npu_error_name(r.err) ? npu_error_name(r.err) : "?",
                 (unsigned)r.err_pc);
    npu_read_i32(d, dc, 2 * Bt, M, N, C, (size_t)N);
    int br = 0, bc = 0;
    int32_t got = 0, exp = 0;
    size_t bad = npu_compare_i32(M, N, C, (size_t)N, G, (size_t)N, &br, &bc, &got, &exp);
    cr_assert_eq(bad, 0u, "M=%d N=%d K=%d nb=%d skinny=%d seed=%llu: %zu mismatches, first C[%d][%d]=%d expected %d",
                 M, N, K, nb, skinny, (unsigned long long)seed, bad, br, bc, (int)got, (int)exp);
    /* counters: every accumulated word was read once more from the SPM */
    uint64_t words_per = skinny ? (uint64_t)M : 2u * (uint64_t)M;
    npu_prog_expect_t e;
    npu_prog_expect(&cfg, p.insn, p.n, &e);
    cr_assert_eq(r.cnt[NPU_CNT_spm_rd_words], e.spm_rd_words, "SPM reads (acc reads %llu)",
                 (unsigned long long)((uint64_t)(nb - 1) * words_per));
    npu_prog_free(&p);
    free(A); free(Bs); free(C); free(G); free(Gj);
    npu_sim_close(s);
}

Test(drain_acc, wide_three_waves)
{
    npu_cfg_t cfg = rtl_cfg();
    int F = 2 * cfg.s;
    acc_case(3 * F + 5, F, F, 3, 0, rtl_seed(71));
    acc_case(7, F - 1, 3, 4, 0, rtl_seed(72));
    acc_case(1, 1, 1, 2, 0, rtl_seed(73));
}

Test(drain_acc, skinny_split)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    acc_case(4 * S + 3, S, S, 1, 1, rtl_seed(74));
    acc_case(4 * S + 3, S, S, 2, 1, rtl_seed(74));
    acc_case(4 * S + 3, S, S, 3, 1, rtl_seed(74));
    acc_case(5, S > 1 ? S - 1 : 1, 2, 2, 1, rtl_seed(75));
}

/* Overlapping destinations would read words the same DRAIN already wrote: BAD_DESC. */
Test(drain_acc, overlap_is_bad_desc)
{
    npu_cfg_t cfg = rtl_cfg();
    const unsigned cases[2][4] = {{4, 1, 0, 0}, {4, 1, 2, 2}}; /* rows, stride, split, hi */
    for (int c = 0; c < 2; c++) {
        npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
        npu_insn_t in;
        if (cases[c][2])
            cr_assert_eq(npu_enc_drain_split(&in, cases[c][0], 0, 0x100, cases[c][1], cases[c][2], cases[c][3]), 0);
        else
            cr_assert_eq(npu_enc_drain(&in, cases[c][0], 0, 0x100, cases[c][1]), 0);
        cr_assert_eq(npu_insn_drain_acc(&in), 0);
        npu_run_result_t r;
        cr_assert_eq(npu_run_program(&cfg, s, 0, &in, 1, 100000, &r), NPU_RUN_ERROR, "case %d", c);
        cr_assert_eq(r.err, NPU_ERR_BAD_DESC, "case %d: %s", c, npu_error_name(r.err));
        cr_assert_eq(r.err_pc, 0u);
        npu_sim_close(s);
    }
}
