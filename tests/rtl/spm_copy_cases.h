/*
 * spm_copy_cases.h - LOAD_SPM (docs/isa.md: the LOAD engine's strided / transposed load with the
 * SPM as its source) as test cases on any model behind the tb/npu_sim.h API. Shared by
 * tests/rtl/test_spm_copy.c (the Verilated NPU) and tests/unit/test_fake_spm_copy.c (the C
 * functional model), so both are held to the same checks.
 *  - sc_copy_case: random DRAM rows are LOADed into the SPM (as whole words: the SPM source is
 *    the DRAM region byte for byte), LOAD_SPM copies them to one region and a LOAD of the same
 *    rows from DRAM writes another (same transpose, rows, row_bytes, pitch); both regions (FILLed
 *    with zero first) are STOREd back and compared bit for bit with each other and with a C
 *    reference of the copy computed here; the counters against the program (npu_prog_expect:
 *    spm_copy_words, spm_rd_words, spm_wr_words, DRAM bytes per tag: the LOAD_SPM's tag reads 0).
 *  - sc_error: one LOAD_SPM whose checks fail: error code, ERR_PC, ERR_INFO.
 */
#ifndef SPM_COPY_CASES_H
#define SPM_COPY_CASES_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/isa.h"
#include "prog/prog_expect.h"
#include "run/runtime.h"

typedef struct sc_case {
    int tr;              /* transposed */
    unsigned rows, rb;   /* rows, row_bytes */
    unsigned soff;       /* source: words past SC_SRC (odd: a row at half a two-word beat) */
    unsigned sstride;    /* source pitch (words) */
    unsigned dstride;    /* destination pitch (words) */
} sc_case_t;

#define SC_SRC 0x100u   /* SPM word of the source region */
#define SC_DST 0x800u   /* LOAD_SPM's destination */
#define SC_REF 0xC00u   /* the DRAM LOAD's destination */

static inline uint64_t sc_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static inline void sc_push(npu_prog_t *p, npu_insn_t *in, int rc, unsigned tok)
{
    cr_assert_eq(rc, 0, "encoding failed");
    npu_insn_tok(in, tok);
    cr_assert_eq(npu_prog_push(p, in), 0);
}

/* Words of the destination region: rows x pitch (normal), row_bytes/2 columns x pitch (transposed). */
static inline unsigned sc_dst_words(const sc_case_t *c)
{
    return (c->tr ? c->rb / 2 : c->rows) * c->dstride;
}

/* The C reference of the copy: the destination region's bytes from the source rows at src (row r
 * at src + r * pitch bytes); words not written stay zero. */
static inline void sc_reference(const sc_case_t *c, unsigned B, unsigned F, const uint8_t *src,
                                uint8_t *want)
{
    unsigned pitch = c->sstride * B;
    memset(want, 0, (size_t)sc_dst_words(c) * B);
    if (!c->tr) {
        for (unsigned r = 0; r < c->rows; r++)
            memcpy(want + (size_t)r * c->dstride * B, src + (size_t)r * pitch, c->rb);
        return;
    }
    for (unsigned col = 0; col < c->rb / 2; col++)
        for (unsigned r = 0; r < c->rows; r++) {
            uint8_t *d = want + ((size_t)col * c->dstride + r / F) * B + (r % F) * 2;
            d[0] = src[(size_t)r * pitch + 2 * col];
            d[1] = src[(size_t)r * pitch + 2 * col + 1];
        }
}

/* The program of sc_copy_case: LOAD the source words, FILL both destinations, LOAD_SPM (tag DX),
 * LOAD from DRAM (tag W), then (tokens: LOAD queue -> EXEC -> STORE) STORE both regions. */
static inline void sc_program(const sc_case_t *c, unsigned B, unsigned nsrc, uint32_t dsrc,
                              uint32_t dout, npu_prog_t *p)
{
    unsigned nd = sc_dst_words(c), P = c->sstride * B;
    npu_insn_t in;
    npu_prog_init(p);
    sc_push(p, &in, npu_enc_load(&in, NPU_TAG_X, 0, nsrc, dsrc, SC_SRC, 1, B, B), 0);
    sc_push(p, &in, npu_enc_fill(&in, nd, SC_DST, 1, B), 0);
    sc_push(p, &in, npu_enc_fill(&in, nd, SC_REF, 1, B), 0);
    sc_push(p, &in, npu_enc_load_spm(&in, NPU_TAG_DX, c->tr, c->rows, SC_SRC + c->soff, c->sstride,
                                     SC_DST, c->dstride, c->rb), 0);
    sc_push(p, &in, npu_enc_load(&in, NPU_TAG_W, c->tr, c->rows, dsrc + c->soff * B, SC_REF,
                                 c->dstride, c->rb, P), NPU_TOK_PUSH_NEXT);
    sc_push(p, &in, npu_enc_sync(&in, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    sc_push(p, &in, npu_enc_store(&in, NPU_TAG_Y, nd, dout, SC_DST, 1, B, B), NPU_TOK_POP_PREV);
    sc_push(p, &in, npu_enc_store(&in, NPU_TAG_Y, nd, dout + nd * B, SC_REF, 1, B, B), 0);
}

static inline void sc_copy_case(const npu_cfg_t *cfg, npu_sim_t *s, const sc_case_t *c, uint64_t seed)
{
    unsigned B = 4u * (unsigned)cfg->s, F = 2u * (unsigned)cfg->s, nd = sc_dst_words(c);
    unsigned nsrc = c->soff + (c->rows - 1) * c->sstride + (c->rb + B - 1) / B + 2;
    uint32_t dsrc = 0x10000, dout = 0x40000;
    size_t dbytes;
    uint8_t *d = npu_sim_dram(s, &dbytes), *want = malloc((size_t)nd * B);
    uint64_t x = seed | 1;
    npu_prog_t p;
    npu_prog_expect_t e;
    npu_run_result_t r;
    char msg[256];
    cr_assert(want);
    for (unsigned i = 0; i < nsrc * B; i++)
        d[dsrc + i] = (uint8_t)sc_rand(&x);
    memset(d + dout, 0xA5, (size_t)2 * nd * B);
    sc_reference(c, B, F, d + dsrc + c->soff * B, want);
    sc_program(c, B, nsrc, dsrc, dout, &p);
    int rc = npu_run_program(cfg, s, 0, p.insn, p.n, 2000000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "LOAD_SPM %s rows=%u rb=%u: rc %d, error %u at pc %u info 0x%x",
                 c->tr ? "trans" : "normal", c->rows, c->rb, rc, r.err, (unsigned)r.err_pc,
                 (unsigned)r.err_info);
    for (unsigned w = 0; w < nd; w++) {
        cr_assert(memcmp(d + dout + (size_t)w * B, want + (size_t)w * B, B) == 0,
                  "LOAD_SPM %s rows=%u rb=%u soff=%u sstride=%u: destination word %u differs from "
                  "the reference", c->tr ? "trans" : "normal", c->rows, c->rb, c->soff, c->sstride, w);
        cr_assert(memcmp(d + dout + (size_t)(nd + w) * B, want + (size_t)w * B, B) == 0,
                  "the DRAM LOAD of the same rows: word %u differs from the reference", w);
    }
    npu_prog_expect(cfg, p.insn, p.n, &e);
    cr_assert_eq(npu_check_counters(r.cnt, &e, msg, sizeof msg), 0, "LOAD_SPM counters: %s", msg);
    cr_assert_eq(r.cnt[NPU_CNT_spm_copy_words], (c->tr ? (uint64_t)(c->rb / 2) * ((c->rows + F - 1) / F)
                                                        : (uint64_t)c->rows * ((c->rb + B - 1) / B)),
                 "spm_copy_words %llu", (unsigned long long)r.cnt[NPU_CNT_spm_copy_words]);
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_dx], 0u, "LOAD_SPM (tag DX) read %llu DRAM bytes",
                 (unsigned long long)r.cnt[NPU_CNT_dram_rd_dx]);
    cr_assert_eq(r.cnt[NPU_CNT_spm_rd_words], e.spm_rd_words, "spm_rd_words %llu, expected %llu",
                 (unsigned long long)r.cnt[NPU_CNT_spm_rd_words], (unsigned long long)e.spm_rd_words);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "spm_wr_words %llu, expected %llu",
                 (unsigned long long)r.cnt[NPU_CNT_spm_wr_words], (unsigned long long)e.spm_wr_words);
    npu_prog_free(&p);
    free(want);
}

/* The cases: plain and transposed; odd rows; row_bytes not a multiple of a word or a beat;
 * source pitch above the row; odd source words (half a two-word beat); contiguous rows (one run,
 * and a transposed block as one run); a row block of 2S rows and more; one element. */
static inline int sc_cases(int S, sc_case_t *cs, int max)
{
    unsigned B = 4u * (unsigned)S, F = 2u * (unsigned)S;
    const sc_case_t all[] = {
        {0, 5, B + 6, 1, 3, 2},
        {0, 7, 2 * B, 0, 2, 2},            /* contiguous: one run */
        {0, 9, B / 2 + 2, 3, 1, 1},        /* rows of half a word, contiguous words */
        {1, F + 3, 2 * B + 4, 1, 4, 3},    /* transposed, two row blocks, three column words */
        {1, 2 * F, 2 * B, 0, 2, 2},        /* transposed, contiguous sub-rows: block runs */
        {1, 3, 6, 1, 1, 1},                /* few rows and columns, odd source */
        {0, 1, 2, 0, 1, 1},                /* one element */
    };
    int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n && i < max; i++)
        cs[i] = all[i];
    return n;
}

/* One LOAD_SPM whose checks fail (a LOAD runs before it): error code, ERR_PC 1, ERR_INFO.
 * raw_pitch: a value for LOAD's DRAM pitch field (must be zero in a LOAD_SPM). */
static inline void sc_error(const npu_cfg_t *cfg, npu_sim_t *s, unsigned rows, unsigned src,
                            unsigned sstride, unsigned dst, unsigned dstride, unsigned rb,
                            unsigned raw_pitch, unsigned err, uint32_t info)
{
    npu_insn_t p[2];
    npu_run_result_t r;
    unsigned B = 4u * (unsigned)cfg->s;
    cr_assert_eq(npu_enc_load(&p[0], NPU_TAG_X, 0, 1, 0x10000, 0, 1, B, B), 0);
    cr_assert_eq(npu_enc_load_spm(&p[1], NPU_TAG_X, 0, rows, src, sstride, dst, dstride, rb), 0);
    if (raw_pitch)
        cr_assert_eq(npu_insn_put(&p[1], NPU_FLD_LOAD_dram_stride, raw_pitch), 0);
    int rc = npu_run_program(cfg, s, 0, p, 2, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "LOAD_SPM rows=%u src=%u+%u dst=%u+%u bytes=%u: rc %d", rows,
                 src, sstride, dst, dstride, rb, rc);
    cr_assert_eq(r.err, err, "LOAD_SPM rows=%u src=%u+%u dst=%u+%u bytes=%u: error %u, expected %u",
                 rows, src, sstride, dst, dstride, rb, r.err, err);
    cr_assert_eq(r.err_pc, 1u);
    cr_assert_eq(r.err_info, info, "LOAD_SPM rows=%u src=%u dst=%u: ERR_INFO 0x%x, expected 0x%x",
                 rows, src, dst, (unsigned)r.err_info, (unsigned)info);
}

/* The error cases at an SPM of W words: (each opens a fresh model through open_fn) */
typedef npu_sim_t *(*sc_open_fn)(const npu_cfg_t *cfg);
static inline void sc_errors(const npu_cfg_t *cfg, sc_open_fn open_fn)
{
    unsigned B = 4u * (unsigned)cfg->s, W = (unsigned)(cfg->spm_banks * cfg->spm_bank_words);
    struct { unsigned rows, src, ss, dst, ds, rb, raw, err; uint32_t info; } t[] = {
        {0, 0x100, 1, 0x200, 1, B, 0, NPU_ERR_BAD_DESC, 0x100},          /* rows 0 */
        {2, 0x100, 1, 0x200, 1, 3, 0, NPU_ERR_BAD_DESC, 0x100},          /* odd row_bytes */
        {2, 0x100, 1, 0x200, 1, B, 4, NPU_ERR_BAD_DESC, 0x100},          /* a DRAM pitch field */
        {3, W - 5, 2, 0x200, 1, B + 2, 0, NPU_ERR_SPM_ADDR, W},          /* source past the end */
        {2, 0x100, 1, W - 2, 2, B, 0, NPU_ERR_SPM_ADDR, W},              /* destination too */
        {4, 0x100, 2, 0x106, 1, B, 0, NPU_ERR_BAD_DESC, 0x100},          /* overlap: src end */
        {4, 0x104, 1, 0x100, 2, B, 0, NPU_ERR_BAD_DESC, 0x104},          /* overlap: dst end */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npu_sim_t *s = open_fn(cfg);
        sc_error(cfg, s, t[i].rows, t[i].src, t[i].ss, t[i].dst, t[i].ds, t[i].rb, t[i].raw,
                 t[i].err, t[i].info);
        npu_sim_close(s);
    }
    if ((1u << 19) / B <= 0xFFFFu) { /* a source pitch past the engine's 19-bit byte pitch (S >= 4) */
        npu_sim_t *s = open_fn(cfg);
        sc_error(cfg, s, 1, 0x100, (1u << 19) / B, 0x200, 1, B, 0, NPU_ERR_BAD_DESC, 0x100);
        npu_sim_close(s);
    }
}

/* Random shapes, the source LOADed right before the LOAD_SPM (no other instruction between: the
 * engine must finish the LOAD's writes before it reads them) and a DRAM LOAD of the same rows
 * right after it; only the words the copies write are compared (the rest of the regions is not
 * initialised), against the C reference. */
static inline void sc_random_case(const npu_cfg_t *cfg, npu_sim_t *s, uint64_t seed)
{
    unsigned B = 4u * (unsigned)cfg->s, F = 2u * (unsigned)cfg->s;
    uint64_t x = seed | 1;
    sc_case_t c;
    c.tr = (int)(sc_rand(&x) & 1);
    c.rows = 1 + (unsigned)(sc_rand(&x) % (c.tr ? 3 * F : 40));
    c.rb = 2 * (1 + (unsigned)(sc_rand(&x) % (c.tr ? 2 * B : 3 * B)));
    unsigned wpr = (c.rb + B - 1) / B;
    c.soff = (unsigned)(sc_rand(&x) % 3);
    c.sstride = wpr + (unsigned)(sc_rand(&x) % 3);
    c.dstride = (c.tr ? (c.rows + F - 1) / F : wpr) + (unsigned)(sc_rand(&x) % 2);
    unsigned nd = sc_dst_words(&c), nsrc = c.soff + (c.rows - 1) * c.sstride + wpr + 2;
    uint32_t dsrc = 0x10000, dout = 0x40000;
    size_t dbytes;
    uint8_t *d = npu_sim_dram(s, &dbytes), *want = malloc((size_t)nd * B);
    cr_assert(want);
    for (unsigned i = 0; i < nsrc * B; i++)
        d[dsrc + i] = (uint8_t)sc_rand(&x);
    sc_reference(&c, B, F, d + dsrc + c.soff * B, want);
    npu_prog_t p;
    npu_insn_t in;
    npu_run_result_t r;
    npu_prog_init(&p);
    sc_push(&p, &in, npu_enc_load(&in, NPU_TAG_X, 0, nsrc, dsrc, SC_SRC, 1, B, B), 0);
    sc_push(&p, &in, npu_enc_load_spm(&in, NPU_TAG_DX, c.tr, c.rows, SC_SRC + c.soff, c.sstride,
                                      SC_DST, c.dstride, c.rb), 0);
    sc_push(&p, &in, npu_enc_load(&in, NPU_TAG_W, c.tr, c.rows, dsrc + c.soff * B, SC_REF,
                                  c.dstride, c.rb, c.sstride * B), NPU_TOK_PUSH_NEXT);
    sc_push(&p, &in, npu_enc_sync(&in, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    sc_push(&p, &in, npu_enc_store(&in, NPU_TAG_Y, nd, dout, SC_DST, 1, B, B), NPU_TOK_POP_PREV);
    sc_push(&p, &in, npu_enc_store(&in, NPU_TAG_Y, nd, dout + nd * B, SC_REF, 1, B, B), 0);
    int rc = npu_run_program(cfg, s, 0, p.insn, p.n, 2000000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "random LOAD_SPM (seed %llu): rc %d error %u", (unsigned long long)seed,
                 rc, r.err);
    unsigned n = c.tr ? c.rb / 2 : c.rows, per = c.tr ? (c.rows + F - 1) / F : wpr;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < per; j++) {
            size_t w = (size_t)i * c.dstride + j;
            cr_assert(memcmp(d + dout + w * B, want + w * B, B) == 0 &&
                          memcmp(d + dout + (nd + w) * B, want + w * B, B) == 0,
                      "random LOAD_SPM (seed %llu) %s rows=%u rb=%u soff=%u sstride=%u dstride=%u: "
                      "word %zu", (unsigned long long)seed, c.tr ? "trans" : "normal", c.rows, c.rb,
                      c.soff, c.sstride, c.dstride, w);
        }
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_dx], 0u);
    npu_prog_free(&p);
    free(want);
}

#endif
