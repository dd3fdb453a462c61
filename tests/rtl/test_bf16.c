/*
 * test_bf16.c - the element type on the Verilated NPU of this build (issue 15; docs/datapath.md
 * section 6). At a bf16 configuration the array multiplies bf16 and sums fp32, the OBUF adds fp32
 * across K waves; every result is compared as a 32-bit pattern with the order-matched golden
 * (ref/golden_bf16.h, the plan's K partition). At an int16 configuration the same tests check the
 * int16 datapath (int16 operands, int32 wrap-around), so they run in every TEST_CONFIGS entry.
 *   - random shapes under the three mapping policies with random DRAM stalls (four parts of 50:
 *     200 GEMMs per config);
 *   - DRAIN narrow: int16 shift, rounding and saturation; bf16 RNE ties, overflow, Inf, NaN;
 *     its BAD_DESC cases;
 *   - training steps (--order seq --partition none: forward, dX, dW as GEMM programs) under the
 *     three policies, every result bit-exact (bf16: each GEMM's golden in its plan's order, the
 *     next layer's operands rounded to bf16); the fused orders and the partitionings at bf16 are
 *     test_train.c's and test_train_part.c's bf16_* tests (ref/bwd_golden_bf16.h);
 *   - special values, one output each, with hand-derived results: signs, ±0, Inf, NaN of both
 *     signs, 0 x Inf, Inf - Inf, denormal inputs flushed, overflow of a product and of a sum,
 *     RNE ties whose result depends on the summation order (int16: wrap-around extremes).
 */
#include <string.h>

#include "bf16_specials.h"
#include "rtl_common.h"
#include "run/train_run.h"

static const unsigned STALL = 10; /* % of cycles the DRAM withholds a handshake */
static const int k_policy[3] = {NPU_EMIT_FW, NPU_EMIT_FLEXSA, NPU_EMIT_1G4C};

/* Random shapes: at S = 2 up to 40 x 40 x 48 (several K chunks and tiles), at S >= 8 up to
 * 72 x 72 x 96; the policy rotates. */
static void random_shapes(int part, int count)
{
    npu_cfg_t cfg = rtl_cfg();
    uint64_t seed = rtl_seed(5000 + (uint64_t)part);
    uint64_t x = seed * 2654435761u + 1;
    int mn = cfg.s <= 2 ? 40 : 72, kmax = cfg.s <= 2 ? 48 : 96;
    for (int i = 0; i < count; i++) {
        int M = 1 + (int)(rtl_rand(&x) % (uint64_t)mn), N = 1 + (int)(rtl_rand(&x) % (uint64_t)mn);
        int K = 1 + (int)(rtl_rand(&x) % (uint64_t)kmax);
        int ta = (int)(rtl_rand(&x) % 4 == 0), tb = (int)(rtl_rand(&x) % 4 == 0);
        rtl_gemm_check_policy(&cfg, M, N, K, ta, tb, seed + (uint64_t)i, STALL, 0,
                              k_policy[(i + part) % 3], NULL);
    }
}
Test(bf16, random_a, .timeout = 900) { random_shapes(0, 50); }
Test(bf16, random_b, .timeout = 900) { random_shapes(1, 50); }
Test(bf16, random_c, .timeout = 900) { random_shapes(2, 50); }
Test(bf16, random_d, .timeout = 900) { random_shapes(3, 50); }

/* A 16-bit pattern as the int16_t the operand arrays carry. */
static int16_t pat(uint16_t v) { return (int16_t)(v >= 0x8000u ? (int)v - 0x10000 : (int)v); }

/* int16: products and wrap-around at the extremes. */
static const special_t k_int16[] = {
    {"1*1 + 2*1 + 3*1 = 6", {1, 2, 3, 0}, {1, 1, 1, 0}, 6u},
    {"-32768 * -32768 = 2^30", {0x8000, 0, 0, 0}, {0x8000, 0, 0, 0}, 0x40000000u},
    {"2 * 2^30 wraps to -2^31", {0x8000, 0x8000, 0, 0}, {0x8000, 0x8000, 0, 0}, 0x80000000u},
    {"4 * 2^30 wraps to 0", {0x8000, 0x8000, 0x8000, 0x8000}, {0x8000, 0x8000, 0x8000, 0x8000}, 0u},
    {"-32768 * 32767", {0x8000, 0, 0, 0}, {0x7FFF, 0, 0, 0}, 0xC0008000u},
    {"-1 * 1 = -1", {0xFFFF, 0, 0, 0}, {1, 0, 0, 0}, 0xFFFFFFFFu},
};

/* The cases as an M x 4 A and a 4 x M B (case i in row i of A and column i of B); C[i][i] must
 * be case i's result, every other output the golden's (npu_gemm_run's compare). */
static void run_specials(const special_t *sp, int n, int emit)
{
    npu_cfg_t cfg = rtl_cfg();
    int16_t A[32 * 4], B[4 * 32];
    int32_t C[32 * 32];
    npu_gemm_report_t r;
    cr_assert(n <= 32);
    memset(B, 0, sizeof B);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            A[i * 4 + k] = pat(sp[i].a[k]);
            B[k * n + i] = pat(sp[i].b[k]);
        }
    npu_sim_t *s = rtl_open(&cfg, STALL, 0, 9);
    int rc = npu_gemm_run_modes(&cfg, s, n, n, 4, A, B, 0, 0, emit, C, rtl_budget(&cfg, n, n, 4), &r);
    cr_assert_eq(rc, NPU_GEMM_PASS, "policy %d: %s, C[%d][%d] = 0x%08x, expected 0x%08x %s", emit,
                 npu_gemm_rc_name(rc), r.bad_row, r.bad_col, (unsigned)r.bad_got, (unsigned)r.bad_exp,
                 r.counters_msg);
    for (int i = 0; i < n; i++)
        cr_expect_eq((uint32_t)C[i * n + i], sp[i].c, "policy %d, %s: 0x%08x, expected 0x%08x", emit,
                     sp[i].what, (unsigned)(uint32_t)C[i * n + i], (unsigned)sp[i].c);
    npu_gemm_report_free(&r);
    npu_sim_close(s);
}

Test(bf16, special_values)
{
    npu_cfg_t cfg = rtl_cfg();
    for (int p = 0; p < 3; p++) {
        if (npu_cfg_bf16(&cfg))
            run_specials(k_bf16, (int)(sizeof k_bf16 / sizeof k_bf16[0]), k_policy[p]);
        else
            run_specials(k_int16, (int)(sizeof k_int16 / sizeof k_int16[0]), k_policy[p]);
    }
}

/* ---- DRAIN narrow (docs/isa.md "DRAIN") ----------------------------------------------------- */

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0, "encoding failed: %s", #expr); \
                           npu_insn_tok(&_i, tok); tok = 0;                                      \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

/* R rows of A (R x 2) against W (2 x 2S) in one FW wave; row i drained alone, narrow with
 * shift[i], to SPM word SC + i; the words stored to DRAM and read back into out (R x 2S). */
static void run_narrow(const npu_cfg_t *cfg, int R, const int16_t *A, const int16_t *W,
                       const unsigned *shift, int16_t *out)
{
    unsigned F = 2 * (unsigned)cfg->s, Bt = 4 * (unsigned)cfg->s, SB = 0x100, SC = 0x200, tok = 0;
    uint64_t da = 0x10000, db = 0x20000, dc = 0x30000;
    npu_sim_t *s = rtl_open(cfg, STALL, 0, 21);
    uint8_t *d = npu_sim_dram(s, NULL);
    npu_prog_t p;
    npu_run_result_t r;
    npu_write_i16(d, da, Bt, R, 2, A, 2);
    npu_write_i16(d, db, Bt, 2, (int)F, W, F);
    npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, (unsigned)R, (uint32_t)da, 0, 1, 4, Bt));
    tok = NPU_TOK_PUSH_NEXT;
    PUSH(p, npu_enc_load(I, NPU_TAG_W, 0, 2, (uint32_t)db, SB, 1, 2 * F, Bt));
    tok = NPU_TOK_POP_PREV;
    PUSH(p, npu_enc_ldw(I, 0, NPU_MODE_FW, SB, 1, 2, F));
    PUSH(p, npu_enc_wave(I, 0, NPU_MODE_FW, 0, (unsigned)R, 0, 1, 2, F, 0));
    for (int i = 0; i < R; i++) {
        npu_insn_t in;
        cr_assert_eq(npu_enc_drain(&in, 1, (unsigned)i, SC + (unsigned)i, 1), 0);
        cr_assert_eq(npu_insn_drain_narrow(&in, shift[i]), 0);
        npu_insn_tok(&in, i == R - 1 ? NPU_TOK_PUSH_NEXT : 0);
        cr_assert_eq(npu_prog_push(&p, &in), 0);
    }
    tok = NPU_TOK_POP_PREV;
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, (unsigned)R, (uint32_t)dc, SC, 1, Bt, Bt));
    cr_assert_eq(npu_run_program(cfg, s, 0, p.insn, p.n, 200000, &r), NPU_RUN_DONE, "err %s pc %u",
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_pc);
    for (int i = 0; i < R; i++)
        for (unsigned l = 0; l < F; l++) {
            const uint8_t *b = d + dc + (uint64_t)i * Bt + 2 * l;
            out[(size_t)i * F + l] = (int16_t)(b[0] | b[1] << 8);
        }
    npu_prog_expect_t e;
    npu_prog_expect(cfg, p.insn, p.n, &e);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "one SPM word per narrow row");
    npu_prog_free(&p);
    npu_sim_close(s);
}

/* int16: V = hi * 16384 + lo in even lanes, -V in odd lanes (W columns +-16384, +-1); each row
 * shifted by its own shift: rounding (half up), saturation at both ends, shift 0 and 31. */
static void narrow_int16(const npu_cfg_t *cfg)
{
    static const int k[][5] = { /* hi, lo, shift, result for V, result for -V */
        {0, 5, 1, 3, -2}, {0, 3, 1, 2, -1}, {0, 6, 2, 2, -1}, {1, 16383, 0, 32767, -32767},
        {2, 0, 0, 32767, -32768}, {2, 7232, 0, 32767, -32768}, {3, 16383, 1, 32767, -32767},
        {3, 16381, 1, 32767, -32766}, {32767, 16383, 14, 32767, -32768}, {0, 100, 31, 0, 0},
        {-32768, 5, 13, -32768, 32767}, {753, 8526, 10, 12056, -12056}, {-1, 16383, 1, 0, 1},
        {0, 0, 0, 0, 0},
    };
    enum { R = sizeof k / sizeof k[0] };
    unsigned F = 2 * (unsigned)cfg->s, shift[R];
    int16_t A[R * 2], W[2 * 64], out[R * 64];
    for (unsigned c = 0; c < F; c++) {
        W[c] = (int16_t)(c & 1 ? -16384 : 16384);
        W[F + c] = (int16_t)(c & 1 ? -1 : 1);
    }
    for (int i = 0; i < R; i++) {
        A[2 * i] = (int16_t)k[i][0];
        A[2 * i + 1] = (int16_t)k[i][1];
        shift[i] = (unsigned)k[i][2];
    }
    run_narrow(cfg, R, A, W, shift, out);
    for (int i = 0; i < R; i++)
        for (unsigned c = 0; c < F; c++)
            cr_expect_eq(out[(size_t)i * F + c], k[i][3 + (c & 1)], "row %d (V = %d, shift %d) lane %u: %d",
                         i, k[i][0] * 16384 + k[i][1], k[i][2], c, out[(size_t)i * F + c]);
}

/* bf16: lane value a0 * w0[c] + a1 * w1[c] (fp32, exact here), narrowed to bf16 RNE: ties to
 * even both ways, a tie at the largest finite value rounding to Inf, exact values, Inf, NaN.
 * Lanes 4.. (S >= 4) have zero weights: +0, or NaN where A holds an Inf. */
static void narrow_bf16(const npu_cfg_t *cfg)
{
    /* weights: lane 0 (1, 2^-4), 1 (1, 3 * 2^-4), 2 (largest finite, 2^123), 3 (-1, 1) */
    static const uint16_t w0[4] = {0x3F80, 0x3F80, 0x7F7F, 0xBF80}, w1[4] = {0x3D80, 0x3E40, 0x7D00, 0x3F80};
    static const struct { uint16_t a0, a1, out[4], rest; } k[] = {
        /* 1 + 2^-8 (tie, to even 0x3F80); 1 + 3 * 2^-8 (tie, to even 0x3F82); max + 2^119 (tie,
         * to even = Inf); -1 + 2^-4 exact */
        {0x3F80, 0x3D80, {0x3F80, 0x3F82, 0x7F80, 0xBF70}, 0x0000},
        /* -1 + 2^-8, -1 + 3 * 2^-8 exact; -max + 2^119 (tie, to even 0xFF7E); 1 + 2^-4 exact */
        {0xBF80, 0x3D80, {0xBF7F, 0xBF7D, 0xFF7E, 0x3F88}, 0x0000},
        /* Inf in lanes 0..2, Inf * -1 + 0 = -Inf; Inf x the zero weights of lanes 4.. = NaN */
        {0x7F80, 0x0000, {0x7F80, 0x7F80, 0x7F80, 0xFF80}, 0x7FC0},
        /* Inf - Inf = NaN, except lane 3: -Inf + -Inf */
        {0x7F80, 0xFF80, {0x7FC0, 0x7FC0, 0x7FC0, 0xFF80}, 0x7FC0},
    };
    enum { R = sizeof k / sizeof k[0] };
    unsigned F = 2 * (unsigned)cfg->s, shift[R] = {0};
    int16_t A[R * 2], W[2 * 64], out[R * 64];
    memset(W, 0, sizeof W);
    for (unsigned c = 0; c < 4 && c < F; c++) {
        W[c] = pat(w0[c]);
        W[F + c] = pat(w1[c]);
    }
    for (int i = 0; i < R; i++) {
        A[2 * i] = pat(k[i].a0);
        A[2 * i + 1] = pat(k[i].a1);
    }
    run_narrow(cfg, R, A, W, shift, out);
    for (int i = 0; i < R; i++)
        for (unsigned c = 0; c < F; c++)
            cr_expect_eq((uint16_t)out[(size_t)i * F + c], c < 4 ? k[i].out[c] : k[i].rest,
                         "row %d lane %u: 0x%04x", i, c, (unsigned)(uint16_t)out[(size_t)i * F + c]);
}

Test(bf16, drain_narrow)
{
    npu_cfg_t cfg = rtl_cfg();
    if (npu_cfg_bf16(&cfg))
        narrow_bf16(&cfg);
    else
        narrow_int16(&cfg);
}

/* BAD_DESC: narrow with acc, narrow with split_rows, shift without narrow, shift at bf16 (at
 * int16 a shift with narrow is legal: that case must run). */
Test(bf16, drain_narrow_bad_desc)
{
    npu_cfg_t cfg = rtl_cfg();
    for (int c = 0; c < 4; c++) {
        npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
        npu_insn_t in;
        npu_run_result_t r;
        if (c == 1)
            cr_assert_eq(npu_enc_drain_split(&in, 2, 0, 0x100, 1, 2, 0), 0);
        else
            cr_assert_eq(npu_enc_drain(&in, 2, 0, 0x100, 2), 0);
        if (c == 0)
            cr_assert_eq(npu_insn_drain_acc(&in), 0);
        if (c <= 1)
            cr_assert_eq(npu_insn_drain_narrow(&in, 0), 0);
        if (c == 2)
            cr_assert_eq(npu_insn_put(&in, NPU_FLD_DRAIN_shift, 3), 0);
        if (c == 3)
            cr_assert_eq(npu_insn_drain_narrow(&in, 1), 0);
        int rc = npu_run_program(&cfg, s, 0, &in, 1, 100000, &r);
        if (c == 3 && !npu_cfg_bf16(&cfg)) {
            cr_assert_eq(rc, NPU_RUN_DONE, "int16: narrow with a shift is legal");
        } else {
            cr_assert_eq(rc, NPU_RUN_ERROR, "case %d", c);
            cr_assert_eq(r.err, (unsigned)NPU_ERR_BAD_DESC, "case %d: %s", c,
                         npu_error_name(r.err) ? npu_error_name(r.err) : "?");
            cr_assert_eq(r.err_pc, 0u);
        }
        npu_sim_close(s);
    }
}

/* MLP training steps, the sequential form (GEMM programs, npu_gemm_golden_plan's order). */
Test(bf16, train_seq)
{
    npu_cfg_t cfg = rtl_cfg();
    static const int dims[][4] = {{24, 40, 16, 0}, {7, 33, 20, 9}};
    static const int nl[] = {2, 3}, batch[] = {20, 13};
    for (int d = 0; d < 2; d++)
        for (int p = 0; p < 3; p++) {
            npu_mlp_t mlp;
            npu_train_result_t *r = malloc(sizeof *r);
            uint64_t seed = rtl_seed(700 + (uint64_t)(d * 3 + p));
            memset(&mlp, 0, sizeof mlp);
            mlp.batch = batch[d];
            mlp.layers = nl[d];
            memcpy(mlp.dims, dims[d], sizeof dims[d]);
            cr_assert_not_null(r);
            npu_sim_t *s = rtl_open(&cfg, STALL, 0, seed);
            int rc = npu_train_step(&cfg, s, &mlp, NPU_ORDER_SEQ, k_policy[p], seed, 50000000, r);
            cr_assert_eq(rc, 0, "MLP %d policy %d seed %llu: %s\n  replay: build/%s/npu train --layers "
                         "%d,%d,%d%s --batch %d --order seq --seed %llu --stall-pct %u --policy %s",
                         d, k_policy[p], (unsigned long long)seed, r->msg, cfg.name, dims[d][0],
                         dims[d][1], dims[d][2], nl[d] == 3 ? ",9" : "", batch[d],
                         (unsigned long long)seed, STALL, p == 1 ? "flexsa" : p == 2 ? "1g4c" : "1g1c");
            npu_sim_close(s);
            free(r);
        }
}

