/*
 * conv_cases.h - the convolution ISA additions (docs/isa.md: FILL, the LDW / WAVE
 * window start k_lo, counters macs_zero and fill_words) as test cases on any model behind the
 * tb/npu_sim.h API. Shared by tests/rtl/test_conv_isa.c (the Verilated NPU, with DRAM stalls)
 * and tests/unit/test_fake_conv.c (the C functional model), so both models are held to the same
 * checks. Each case writes its operands into DRAM, runs a hand-made program and checks the
 * result against a golden computed here, bit-exact, and the counters against the program
 * (npu_prog_expect / npu_prog_expect_array) and the data (macs_zero).
 */
#ifndef CONV_CASES_H
#define CONV_CASES_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/isa.h"
#include "run/runtime.h"

static inline uint64_t cv_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A nonzero int16 (zeros only where a case plants them). */
static inline int16_t cv_nz(uint64_t *x)
{
    int16_t v = (int16_t)(cv_rand(x) & 0xFFFF);
    return v ? v : 1;
}

static inline void cv_push(npu_prog_t *p, npu_insn_t *in, int rc, unsigned tok)
{
    cr_assert_eq(rc, 0, "encoding failed");
    npu_insn_tok(in, tok);
    cr_assert_eq(npu_prog_push(p, in), 0);
}

static inline const char *cv_err(unsigned e)
{
    return npu_error_name(e) ? npu_error_name(e) : "?";
}

/* Counters that the program alone decides, and the SPM word counts (FILL words are writes). */
static inline void cv_check_counters(const npu_cfg_t *cfg, const npu_prog_t *p,
                                     const npu_run_result_t *r, const char *what)
{
    npu_prog_expect_t e;
    npu_array_expect_t x;
    char msg[256];
    npu_prog_expect(cfg, p->insn, p->n, &e);
    npu_prog_expect_array(cfg, p->insn, p->n, &x);
    cr_assert_eq(npu_check_counters(r->cnt, &e, msg, sizeof msg), 0, "%s: %s", what, msg);
    cr_assert_eq(npu_check_array_counters(r->cnt, &x, msg, sizeof msg), 0, "%s: %s", what, msg);
    cr_assert_eq(r->cnt[NPU_CNT_spm_rd_words], e.spm_rd_words, "%s: spm_rd_words %llu, expected %llu",
                 what, (unsigned long long)r->cnt[NPU_CNT_spm_rd_words],
                 (unsigned long long)e.spm_rd_words);
    cr_assert_eq(r->cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "%s: spm_wr_words %llu, expected %llu",
                 what, (unsigned long long)r->cnt[NPU_CNT_spm_wr_words],
                 (unsigned long long)e.spm_wr_words);
}

/* ---- FILL ------------------------------------------------------------------------------ */

#define CV_FILL_WORDS 64u

/* LOADs CV_FILL_WORDS random words into the SPM at word 0x100, FILLs parts of them (row_bytes
 * not a multiple of the word, strides, a single word, tag / transpose / DRAM fields set: they
 * are ignored), STOREs the region back: filled words read zero, every other word is intact. */
static inline void cv_fill_case(const npu_cfg_t *cfg, npu_sim_t *s, uint64_t seed)
{
    unsigned B = 4u * (unsigned)cfg->s, R0 = 0x100;
    size_t dbytes;
    uint8_t *d = npu_sim_dram(s, &dbytes);
    uint64_t src = 0x10000, dst = 0x20000, x = seed | 1;
    uint8_t *want = malloc((size_t)CV_FILL_WORDS * B);
    cr_assert(want);
    for (unsigned i = 0; i < CV_FILL_WORDS * B; i++) {
        d[src + i] = (uint8_t)(cv_rand(&x) | 1u);
        d[dst + i] = 0xA5;
    }
    memcpy(want, d + src, (size_t)CV_FILL_WORDS * B);
    /* rows, spm (relative to R0), stride; row_bytes */
    const unsigned fills[4][3] = {{3, 2, 5}, {1, 40, 0}, {4, 50, 2}, {2, 30, 3}};
    const unsigned rbs[4] = {B + 3, 1, B, 2 * B};
    npu_prog_t p;
    npu_insn_t in;
    npu_prog_init(&p);
    cv_push(&p, &in, npu_enc_load(&in, NPU_TAG_X, 0, CV_FILL_WORDS, (uint32_t)src, R0, 1, B, 1 * B), 0);
    for (int f = 0; f < 4; f++) {
        unsigned rb = rbs[f];
        cr_assert_eq(npu_enc_fill(&in, fills[f][0], R0 + fills[f][1], fills[f][2], rb), 0);
        if (f == 2) { /* the LOAD format's other fields are ignored by FILL */
            npu_insn_put(&in, NPU_FLD_LOAD_tag, NPU_TAG_DX);
            npu_insn_put(&in, NPU_FLD_LOAD_transpose, 1);
            npu_insn_put(&in, NPU_FLD_LOAD_dram_addr, 0x123457u); /* misaligned */
            npu_insn_put(&in, NPU_FLD_LOAD_dram_stride, 7);
        }
        cv_push(&p, &in, 0, f == 3 ? NPU_TOK_PUSH_NEXT : 0);
        unsigned beats = (rb + B - 1) / B;
        for (unsigned r = 0; r < fills[f][0]; r++)
            memset(want + (size_t)(fills[f][1] + r * fills[f][2]) * B, 0, (size_t)beats * B);
    }
    cv_push(&p, &in, npu_enc_sync(&in, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    cv_push(&p, &in, npu_enc_store(&in, NPU_TAG_Y, CV_FILL_WORDS, (uint32_t)dst, R0, 1, B, 1 * B),
            NPU_TOK_POP_PREV);
    npu_run_result_t r;
    int rc = npu_run_program(cfg, s, 0, p.insn, p.n, 500000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "FILL program: rc %d, %s at pc %u", rc, cv_err(r.err),
                 (unsigned)r.err_pc);
    for (unsigned w = 0; w < CV_FILL_WORDS; w++)
        cr_assert(memcmp(d + dst + (size_t)w * B, want + (size_t)w * B, B) == 0,
                  "SPM word 0x%x after the FILLs: %s", R0 + w,
                  want[(size_t)w * B] == 0 ? "should be zero" : "should be intact");
    cv_check_counters(cfg, &p, &r, "FILL");
    cr_assert_eq(r.cnt[NPU_CNT_fill_words], 3u * 2 + 1 + 4 + 2 * 2, "fill_words %llu",
                 (unsigned long long)r.cnt[NPU_CNT_fill_words]);
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_prog + NPU_TAG_DX], 0u, "FILL read the DRAM (tag 5 set)");
    npu_prog_free(&p);
    free(want);
}

/* One FILL whose checks fail: error code, ERR_PC and ERR_INFO. A LOAD before it runs. */
static inline void cv_fill_error(const npu_cfg_t *cfg, npu_sim_t *s, unsigned rows, unsigned spm,
                                 unsigned stride, unsigned rb, unsigned err, uint32_t info)
{
    npu_insn_t p[2];
    npu_run_result_t r;
    cr_assert_eq(npu_enc_load(&p[0], NPU_TAG_X, 0, 1, 0x10000, 0, 1, 4u * (unsigned)cfg->s, 4u * (unsigned)cfg->s), 0);
    cr_assert_eq(npu_enc_fill(&p[1], rows, spm, stride, rb), 0);
    npu_insn_put(&p[1], NPU_FLD_LOAD_dram_addr, 0x10001); /* misaligned: ignored, not BAD_DESC, not ERR_INFO */
    int rc = npu_run_program(cfg, s, 0, p, 2, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "FILL rows=%u spm=%u stride=%u bytes=%u: rc %d", rows, spm,
                 stride, rb, rc);
    cr_assert_eq(r.err, err, "FILL rows=%u spm=%u stride=%u bytes=%u: %s, expected %s", rows, spm,
                 stride, rb, cv_err(r.err), cv_err(err));
    cr_assert_eq(r.err_pc, 1u);
    cr_assert_eq(r.err_info, info, "FILL rows=%u spm=%u stride=%u bytes=%u: ERR_INFO 0x%x, "
                 "expected 0x%x", rows, spm, stride, rb, (unsigned)r.err_info, (unsigned)info);
}

/* ---- LDW / WAVE window start k_lo ------------------------------------------------------ */

typedef struct cv_klo {
    unsigned mode;
    int M, K, N;
    unsigned kl_ldw, kl_wave; /* window starts of the LDW and of the WAVE */
    int a_hi;                 /* WAVE a_hi (HSW, ISW): the k-block in lanes S..2S-1 of A */
    int zeros;                /* plant zeros in A (also below k_lo and past k) */
    int mono;                 /* the LDW mono (FW / VSW: one row a flit, not the two core pairs) */
} cv_klo_t;

/* C = A . W over the k-block lanes r in [max(kl_ldw, kl_wave), K): the LDW reads B rows
 * r >= kl_ldw from spm_addr + (r - kl_ldw) (spm_addr points at B row kl_ldw, so the words before
 * it hold B's first rows, nonzero: they must not be read), the WAVE zeroes A lanes < kl_wave
 * (A is nonzero there). A rows are full words (lanes past K nonzero too). */
static inline void cv_klo_case(const npu_cfg_t *cfg, npu_sim_t *s, const cv_klo_t *c, uint64_t seed)
{
    int S = cfg->s, F = 2 * S, M = c->M, K = c->K, N = c->N;
    unsigned Bt = 4u * (unsigned)S, SB = 0x400, SC = 0x600;
    int skinny = c->mode == NPU_MODE_VSW || c->mode == NPU_MODE_ISW;
    int lane0 = c->a_hi ? S : 0; /* word lane of k-block lane 0 */
    uint64_t x = seed | 1, da = 0x10000, db = 0x20000, dc = 0x40000;
    size_t dbytes;
    uint8_t *d = npu_sim_dram(s, &dbytes);
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * F), *Bm = malloc(sizeof(int16_t) * (size_t)K * N);
    int32_t *C = malloc(sizeof(int32_t) * (size_t)M * N), *G = malloc(sizeof(int32_t) * (size_t)M * N);
    cr_assert(A && Bm && C && G);
    for (int i = 0; i < M * F; i++)
        A[i] = c->zeros && cv_rand(&x) % 4 == 0 ? 0 : cv_nz(&x);
    for (int i = 0; i < K * N; i++)
        Bm[i] = cv_nz(&x);
    unsigned klo = c->kl_ldw > c->kl_wave ? c->kl_ldw : c->kl_wave;
    uint64_t mz = 0;
    for (int i = 0; i < M; i++) {
        for (int j = (int)c->kl_wave; j < K; j++)
            mz += A[i * F + lane0 + j] == 0 ? (uint64_t)N : 0;
        for (int n = 0; n < N; n++) {
            uint32_t acc = 0;
            for (int r = (int)klo; r < K; r++)
                acc += (uint32_t)((int32_t)A[i * F + lane0 + r] * (int32_t)Bm[r * N + n]);
            G[i * N + n] = (int32_t)acc;
        }
    }
    npu_write_i16(d, da, Bt, M, F, A, (size_t)F);
    npu_write_i16(d, db, Bt, K, N, Bm, (size_t)N);
    memset(d + dc, 0x5A, (size_t)M * 2 * Bt);

    npu_prog_t p;
    npu_insn_t in;
    npu_prog_init(&p);
    unsigned ha = ((unsigned)M + 1) / 2;
    cv_push(&p, &in, npu_enc_load(&in, NPU_TAG_X, 0, (unsigned)M, (uint32_t)da, 0, 1, Bt, 1 * Bt), 0);
    cv_push(&p, &in, npu_enc_load(&in, NPU_TAG_W, 0, (unsigned)K, (uint32_t)db, SB, 1, 2u * (unsigned)N, 1 * Bt),
            NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_enc_ldw(&in, 0, c->mode, SB + c->kl_ldw, 1, (unsigned)K, (unsigned)N), 0);
    cr_assert_eq(npu_insn_k_lo(&in, c->kl_ldw), 0);
    if (c->mono)
        cr_assert_eq(npu_insn_ldw_mono(&in), 0);
    cv_push(&p, &in, 0, NPU_TOK_POP_PREV);
    cr_assert_eq(npu_enc_wave(&in, 0, c->mode, 0, (unsigned)M, 0, 1, (unsigned)K, (unsigned)N, 0), 0);
    cr_assert_eq(npu_insn_k_lo(&in, c->kl_wave), 0);
    if (c->a_hi)
        cr_assert_eq(npu_insn_lane_hi(&in), 0);
    cv_push(&p, &in, 0, 0);
    if (skinny)
        cv_push(&p, &in, npu_enc_drain_split(&in, ha, 0, SC, 2, ha, (unsigned)M - ha), NPU_TOK_PUSH_NEXT);
    else
        cv_push(&p, &in, npu_enc_drain(&in, (unsigned)M, 0, SC, 2), NPU_TOK_PUSH_NEXT);
    cv_push(&p, &in, npu_enc_store(&in, NPU_TAG_Y, (unsigned)M, (uint32_t)dc, SC, 2, 4u * (unsigned)N, 2 * Bt),
            NPU_TOK_POP_PREV);

    char what[160];
    snprintf(what, sizeof what, "%s M=%d K=%d N=%d LDW k_lo=%u%s WAVE k_lo=%u%s%s seed=%llu",
             npu_mode_name(c->mode), M, K, N, c->kl_ldw, c->mono ? " mono" : "", c->kl_wave,
             c->a_hi ? " a_hi" : "", c->zeros ? " zeros" : "", (unsigned long long)seed);
    npu_run_result_t r;
    int rc = npu_run_program(cfg, s, 0, p.insn, p.n, 500000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "%s: rc %d, %s at pc %u", what, rc, cv_err(r.err), (unsigned)r.err_pc);
    npu_read_i32(d, dc, 2 * Bt, M, N, C, (size_t)N);
    for (int i = 0; i < M * N; i++)
        cr_assert_eq(C[i], G[i], "%s: C[%d][%d] = %d, expected %d", what, i / N, i % N, (int)C[i],
                     (int)G[i]);
    cv_check_counters(cfg, &p, &r, what);
    cr_assert_eq(r.cnt[NPU_CNT_macs_zero], mz, "%s: macs_zero %llu, expected %llu", what,
                 (unsigned long long)r.cnt[NPU_CNT_macs_zero], (unsigned long long)mz);
    if (!c->zeros)
        cr_assert_eq(mz, 0u);
    npu_prog_free(&p);
    free(A); free(Bm); free(C); free(G);
}

/* The k_lo cases of one mode for core side S: window starts 1, S-1, S, S+1, kmax-1 (those below
 * the mode's largest k), each for the LDW alone, the WAVE alone (a k below kmax, planted zeros)
 * and both with different starts (planted zeros; a_hi in HSW/ISW); every other case a mono LDW
 * (FW / VSW: the two core pairs' streams, B from row max(S, k_lo), or one). Returns the count. */
static inline int cv_klo_cases(int S, unsigned mode, cv_klo_t *out, int max)
{
    int F = 2 * S, n = 0, M = 3 * F + 3;
    int kmax = mode == NPU_MODE_FW || mode == NPU_MODE_VSW ? F : S;
    int nmax = mode == NPU_MODE_FW || mode == NPU_MODE_HSW ? F : S;
    int lanehi = mode == NPU_MODE_HSW || mode == NPU_MODE_ISW;
    const int kls[] = {1, S - 1, S, S + 1, kmax - 1};
    for (unsigned v = 0; v < sizeof kls / sizeof kls[0]; v++) {
        int kl = kls[v];
        if (kl < 1 || kl >= kmax || (v > 0 && kl == kls[v - 1]))
            continue;
        /* the LDW window alone, the WAVE window alone, both (different starts) */
        const unsigned which[3][2] = {{(unsigned)kl, 0}, {0, (unsigned)kl}, {(unsigned)kl / 2, (unsigned)kl}};
        for (int w = 0; w < 3 && n < max; w++) {
            cv_klo_t c = {mode, M - (w + v) % 4, kmax - (w == 1 && kl + 1 < kmax), nmax - (int)(v % 2),
                          which[w][0], which[w][1], lanehi && w == 2, w != 0, (int)((v + (unsigned)w) % 2)};
            if (c.N < 1)
                c.N = 1;
            if (c.kl_ldw >= (unsigned)c.K || c.kl_wave >= (unsigned)c.K)
                continue;
            out[n++] = c;
        }
    }
    return n;
}

/* ---- BAD_DESC and SPM range with k_lo ------------------------------------------------- */

/* One LDW or WAVE (after a valid LDW of its bank): its outcome. */
static inline void cv_klo_outcome(const npu_cfg_t *cfg, npu_sim_t *s, int wave, unsigned mode,
                                  unsigned k, unsigned n, unsigned k_lo, unsigned spm,
                                  unsigned stride, int want_rc, unsigned err, uint32_t info)
{
    npu_insn_t p[2];
    npu_run_result_t r;
    size_t np = 0;
    if (wave)
        cr_assert_eq(npu_enc_ldw(&p[np++], 1, mode, 0, 1, k, n), 0);
    if (wave)
        cr_assert_eq(npu_enc_wave(&p[np], 1, mode, 0, 4, spm, stride, k, n, 0), 0);
    else
        cr_assert_eq(npu_enc_ldw(&p[np], 1, mode, spm, stride, k, n), 0);
    cr_assert_eq(npu_insn_k_lo(&p[np++], k_lo), 0);
    int rc = npu_run_program(cfg, s, 0, p, np, 200000, &r);
    cr_assert_eq(rc, want_rc, "%s %s k=%u k_lo=%u spm=%u stride=%u: rc %d (%s)", wave ? "WAVE" : "LDW",
                 npu_mode_name(mode), k, k_lo, spm, stride, rc, cv_err(r.err));
    if (want_rc != NPU_RUN_ERROR)
        return;
    cr_assert_eq(r.err, err, "%s k=%u k_lo=%u: %s, expected %s", wave ? "WAVE" : "LDW", k, k_lo,
                 cv_err(r.err), cv_err(err));
    cr_assert_eq(r.err_pc, (uint32_t)(np - 1));
    cr_assert_eq(r.err_info, info, "%s k=%u k_lo=%u: ERR_INFO 0x%x, expected 0x%x", wave ? "WAVE" : "LDW",
                 k, k_lo, (unsigned)r.err_info, (unsigned)info);
}

#endif
