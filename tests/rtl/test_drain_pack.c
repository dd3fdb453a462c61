/*
 * test_drain_pack.c - DRAIN pack (w1[25:21]; docs/isa.md "DRAIN") on the Verilated NPU: the first n
 * int32 lanes of each OBUF row back to back in the SPM, so one contiguous STORE writes a dense
 * M x n result. Plain (FW waves, one stream) and skinny (ISW waves, two streams) tiles, with
 * random DRAM stalls, checked bit-exact against golden and against the C functional model (its
 * DRAM image and counters), the SPM word count against npu_prog_expect; malformed packed DRAINs
 * are BAD_DESC, a packed image past the SPM is SPM_ADDR with its last word, on both models.
 */
#include <string.h>

#include "rtl_common.h"

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0, "encoding failed: %s", #expr); \
                           if (pk) { cr_assert_eq(npu_insn_drain_pack(&_i, pk), 0); } pk = 0;     \
                           npu_insn_tok(&_i, tok); tok = 0;                                       \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

/* C = A . B (M x N, K <= 2S) in one wave, drained packed (n = N) into segments a power of two
 * apart and stored as one STORE of its segments, contiguous in DRAM. skinny: ISW (N, K <= S) and a
 * packed split DRAIN (four segments). */
static void pack_case(int M, int N, int K, int skinny, uint64_t seed)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned Bt = 4 * (unsigned)cfg.s, S = (unsigned)cfg.s;
    uint64_t x = seed | 1;
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * K), *Bw = malloc(sizeof(int16_t) * (size_t)K * N);
    int32_t *C = malloc(sizeof(int32_t) * (size_t)M * N), *G = malloc(sizeof(int32_t) * (size_t)M * N);
    cr_assert(A && Bw && C && G);
    rtl_operands(&cfg, A, (size_t)M * K, Bw, (size_t)K * N, &x); /* int16, or bf16 (fp32 lanes) */
    rtl_golden_one_wave(&cfg, M, N, K, A, Bw, G);
    uint64_t da = 0x10000, db = 0x20000, dc = 0x40000;
    npu_prog_t p;
    npu_prog_init(&p);
    unsigned tok = 0, pk = 0, mode = skinny ? NPU_MODE_ISW : NPU_MODE_FW;
    unsigned ha = ((unsigned)M + 1) / 2, SB = 0x300, SC = 0x800;
    unsigned segs = skinny ? 4 : 2, hw = (unsigned)M / segs * (unsigned)N / S, P = 1;
    while (P < hw)
        P *= 2;
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, (unsigned)M, (uint32_t)da, 0, 1, 2u * (unsigned)K, 1 * Bt));
    tok = NPU_TOK_PUSH_NEXT;
    PUSH(p, npu_enc_load(I, NPU_TAG_W, 0, (unsigned)K, (uint32_t)db, SB, 1, 2u * (unsigned)N, 1 * Bt));
    tok = NPU_TOK_POP_PREV;
    PUSH(p, npu_enc_ldw(I, 0, mode, SB, 1, (unsigned)K, (unsigned)N));
    PUSH(p, npu_enc_wave(I, 0, mode, 0, (unsigned)M, 0, 1, (unsigned)K, (unsigned)N, 0));
    tok = NPU_TOK_PUSH_NEXT;
    pk = (unsigned)N;
    if (skinny)
        PUSH(p, npu_enc_drain_split(I, ha, 0, SC, P, ha, (unsigned)M - ha));
    else
        PUSH(p, npu_enc_drain(I, (unsigned)M, 0, SC, P));
    tok = NPU_TOK_POP_PREV;
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, segs, (uint32_t)dc, SC, P, hw * Bt, hw * Bt));
    /* the operands in one image: the functional model runs the same program from the same DRAM */
    size_t img = (size_t)(dc - da) + (size_t)M * N * 4;
    uint8_t *init = calloc(1, img);
    cr_assert_not_null(init);
    npu_write_i16(init, 0, Bt, M, K, A, (size_t)K);
    npu_write_i16(init, db - da, Bt, K, N, Bw, (size_t)N);
    npu_sim_t *s = rtl_open(&cfg, 10, 0, seed);
    uint8_t *d = npu_sim_dram(s, NULL);
    memcpy(d + da, init, img);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&cfg, s, 0, p.insn, p.n, 2000000, &r), NPU_RUN_DONE,
                 "M=%d N=%d K=%d skinny=%d: err %s pc %u", M, N, K, skinny,
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_pc);
    npu_read_i32(d, dc, (size_t)N * 4, M, N, C, (size_t)N);
    int br = 0, bc = 0;
    int32_t got = 0, exp = 0;
    size_t bad = npu_compare_i32(M, N, C, (size_t)N, G, (size_t)N, &br, &bc, &got, &exp);
    cr_assert_eq(bad, 0u, "M=%d N=%d K=%d skinny=%d: %zu mismatches, first C[%d][%d]=%d expected %d",
                 M, N, K, skinny, bad, br, bc, (int)got, (int)exp);
    npu_prog_expect_t e;
    npu_prog_expect(&cfg, p.insn, p.n, &e);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "SPM writes %llu, expected %llu",
                 (unsigned long long)r.cnt[NPU_CNT_spm_wr_words], (unsigned long long)e.spm_wr_words);
    cr_assert_eq(r.cnt[NPU_CNT_obuf_drain_rows], e.obuf_drain_rows);
    /* the functional model: the same result bytes and SPM word count */
    npu_sim_t *m = rtl_model_run(p.insn, p.n, da, init, img, "drain pack");
    cr_assert_eq(memcmp(fnpu_sim_dram(m, NULL) + dc, d + dc, (size_t)M * N * 4), 0,
                 "RTL and functional model differ (M=%d N=%d skinny=%d)", M, N, skinny);
    fnpu_sim_close(m);
    free(init);
    npu_prog_free(&p);
    free(A); free(Bw); free(C); free(G);
    npu_sim_close(s);
}

Test(drain_pack, plain_rows)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s, F = 2 * S;
    pack_case(6 * S, 5 % F ? 5 % F : 1, F, 0, rtl_seed(81));   /* rows*n a multiple of S */
    pack_case(2 * S, F - 1, 3, 0, rtl_seed(82));                /* the longest packed row */
    pack_case(4 * S, 1, 2, 0, rtl_seed(83));                    /* one lane a row */
    pack_case(6 * S, 3 % F ? 3 % F : 1, F, 0, rtl_seed(88));
    pack_case(4 * S, S, F, 0, rtl_seed(84));                    /* whole words */
}

Test(drain_pack, skinny_streams)
{
    npu_cfg_t cfg = rtl_cfg();
    int S = cfg.s;
    pack_case(8 * S, S > 5 ? 5 : S - 1 ? S - 1 : 1, S, 1, rtl_seed(85));
    pack_case(4 * S, S, S, 1, rtl_seed(86));
    pack_case(4 * S, S > 3 ? 3 : 1, 2, 1, rtl_seed(87));
    pack_case(4 * S + 2 * S, 2, S, 1, rtl_seed(89));
}

/* One DRAIN (no wave: the check runs before any row moves) on both models: the error and its info. */
static void pack_error(const npu_insn_t *in, unsigned code, uint32_t info, const char *what)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&cfg, s, 0, in, 1, 100000, &r), NPU_RUN_ERROR, "%s: no error", what);
    cr_assert_eq(r.err, code, "%s: error %s", what, npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    cr_assert_eq(r.err_info, info, "%s: ERR_INFO %u, expected %u", what, (unsigned)r.err_info, (unsigned)info);
    npu_sim_close(s);
    npu_sim_t *m = fnpu_sim_open(NULL);
    cr_assert_not_null(m);
    memcpy(fnpu_sim_dram(m, NULL), in->w, NPU_INSN_BYTES);
    fnpu_sim_csr_write(m, NPU_CSR_PROG_BASE, 0);
    fnpu_sim_csr_write(m, NPU_CSR_PROG_LEN, 1);
    fnpu_sim_csr_write(m, NPU_CSR_CTRL, 2);
    fnpu_sim_csr_write(m, NPU_CSR_CTRL, 1);
    cr_assert_eq(fnpu_sim_run(m, 1000000), 1, "%s: the model did not halt", what);
    cr_assert_eq((fnpu_sim_csr_read(m, NPU_CSR_STATUS) >> 8) & 0xFFu, code, "%s: model error", what);
    cr_assert_eq(fnpu_sim_csr_read(m, NPU_CSR_ERR_INFO), info, "%s: model ERR_INFO", what);
    fnpu_sim_close(m);
}

Test(drain_pack, bad_descriptors)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned S = (unsigned)cfg.s, F = 2 * S, spm = (unsigned)(cfg.spm_banks * cfg.spm_bank_words);
    npu_insn_t in;
    struct { unsigned rows, split, hi, n, stride; int narrow, acc; const char *what; } bad[] = {
        { 2 * S, 0, 0, F, 64, 0, 0, "n = 2S (plain)" },
        { 2 * S + 1, 0, 0, S, 64, 0, 0, "odd rows" },
        { 2 * S + 2, 0, 0, 1, 64, 0, 0, "rows/2 * n not a multiple of S" },
        { 4 * S, 0, 0, S, 1, 0, 0, "a segment longer than the stride" },
        { 2 * S, 2 * S, 2 * S, S + 1, 64, 0, 0, "n > S (skinny)" },
        { 2 * S, 4 * S, 2 * S, 1, 64, 0, 0, "split_rows != rows" },
        { 2 * S, 2 * S, 2 * S - 2, 2, 64, 0, 0, "hi_rows != rows" },
        { 2 * S, 0, 0, 1, 64, 1, 0, "with narrow" },
        { 2 * S, 0, 0, 2, 64, 0, 1, "with acc" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i].split)
            cr_assert_eq(npu_enc_drain_split(&in, bad[i].rows, 0, 0, bad[i].stride, bad[i].split, bad[i].hi), 0);
        else
            cr_assert_eq(npu_enc_drain(&in, bad[i].rows, 0, 0, bad[i].stride), 0);
        if (bad[i].narrow)
            cr_assert_eq(npu_insn_drain_narrow(&in, 0), 0);
        if (bad[i].acc)
            cr_assert_eq(npu_insn_drain_acc(&in), 0);
        cr_assert_eq(npu_insn_drain_pack(&in, bad[i].n), 0);
        pack_error(&in, NPU_ERR_BAD_DESC, 0, bad[i].what);
    }
    cr_assert_eq(npu_insn_drain_pack(&in, 0), -1, "pack 0 is the unpacked DRAIN");
    cr_assert_eq(npu_insn_drain_pack(&in, 32), -1, "pack is 5 bits");
    /* plain: 2S rows of 3 lanes, two segments of 3 words 4 apart: the last word at spm - 6 + 4 + 2 */
    cr_assert_eq(npu_enc_drain(&in, 2 * S, 0, spm - 6, 4), 0);
    cr_assert_eq(npu_insn_drain_pack(&in, 3), 0);
    pack_error(&in, NPU_ERR_SPM_ADDR, spm, "past the SPM");
    /* skinny: four segments of 2 words 2 apart from spm - 7: the last at spm - 7 + 6 + 1 */
    cr_assert_eq(npu_enc_drain_split(&in, 2 * S, 0, spm - 7, 2, 2 * S, 2 * S), 0);
    cr_assert_eq(npu_insn_drain_pack(&in, 2), 0);
    pack_error(&in, NPU_ERR_SPM_ADDR, spm, "skinny past the SPM");
}
