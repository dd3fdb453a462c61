/*
 * test_dense.c - LOAD and STORE on dense tensors (docs/isa.md, docs/memory.md "DMA runs and
 * bursts"): rows at any element address and pitch.
 *
 * dense/random_*  random programs LOAD (normal or transposed) -> SYNC_E -> STORE of the loaded
 *                 SPM words as whole words (shows the LOAD, zero lanes included) -> a random dense
 *                 STORE of the same words -> a random transposed STORE (int32) of SPM rows
 *                 0..C-1 (C = its row_bytes / 4) of the same words. Random row_bytes, rows, unaligned dram_addr, pitches
 *                 equal to row_bytes (one run) or larger (rows sharing beats, beat-padded rows),
 *                 runs crossing 4 KiB lines, seeded DRAM stalls. The DRAM around the rows is
 *                 filled with a pattern first. Checked: the whole data window byte-exact against
 *                 a plain C reference of the semantics (so a STORE touching a byte outside its
 *                 rows fails) and against the functional model (tb/npu_funcsim.c); the DRAM
 *                 byte and burst counters equal npu_prog_expect (npu_dma_bursts) exactly, read
 *                 bursts plus the program fetch's, and equal the functional model's. With wide
 *                 DRAM beats (BEAT_WORDS > 1) half the cases take their addresses and pitches in
 *                 beats instead of SPM words: short rows sharing a 64-byte beat, unaligned starts,
 *                 partial first and last beats, runs crossing 4 KiB lines at 64-byte beats.
 * dense/wide_store  the STORE's two-word chunks (BEAT_WORDS = 2: words j, j+1 of a row read in one
 *                 cycle and packed as one piece of up to 64 bytes): odd word counts, rows
 *                 starting at odd SPM words (w, w+1 in one sub-bank when w ends in binary 011:
 *                 the chunk falls back to one word), partial first and last beats, unaligned
 *                 starts at both word offsets of a beat, pitches that make rows share beats,
 *                 runs crossing 4 KiB lines; checked as dense/random (byte-exact window,
 *                 counters, functional model). At BEAT_WORDS = 1 the same cases run one word a
 *                 cycle. dense/throughput: with wide beats a STORE of long rows takes one DRAM
 *                 beat per cycle (two SPM words), also from odd SPM row starts.
 *                 Planted faults caught (small-w2): the two words of a chunk swapped in the
 *                 read-ahead entry fails dense/random_*, matrix_4096x5 and wide_store on the
 *                 byte compare; a two-word chunk ending a row sent as 64 bytes trips the
 *                 packer's overlap assertion in wide_store.
 * dense/errors    BAD_DESC for an odd address, row length or pitch, a transposed STORE whose
 *                 row_bytes is not whole int32s; DRAM_ADDR with the last byte (no overflow for a
 *                 2^32-wide span); a dense transfer ending on the last byte; a transposed
 *                 STORE's last SPM word at and one past the end (SPM_ADDR).
 * NPU_SEED replays (base seed), NPU_DENSE_CASES sets the cases per part (default 32, 4 parts).
 */
#include <stdio.h>
#include <string.h>

#include "prog/prog_expect.h"
#include "rtl_common.h"

#define WIN_LO 0x10000u  /* data window: sources and destinations */
#define WIN_HI 0x40000u
#define SRC 0x10000u     /* + up to 64 KiB */
#define D1 0x20000u      /* whole SPM words of the LOAD */
#define D2 0x30000u      /* the dense STORE */
#define D3 0x38000u      /* the transposed STORE */

typedef struct dcase {
    unsigned tr, rows, rb, ds;       /* the LOAD */
    uint32_t da;
    unsigned sa, ss;
    unsigned srows, words;           /* SPM rows written and their words */
    unsigned rows2, rb2, ds2;        /* the dense STORE of SPM rows 0..rows2-1 */
    uint32_t da2;
    unsigned rows3, rb3, ds3;        /* the transposed STORE: rows3 x rb3/4 int32 from SPM rows */
    uint32_t da3;                    /* 0..rb3/4-1, word r/S lane r%S */
    unsigned stall;
} dcase_t;

static unsigned rnd(uint64_t *x, unsigned lo, unsigned hi) { return lo + (unsigned)(rtl_rand(x) % (hi - lo + 1)); }

/* A pitch for rows of rb bytes: equal (one run), a little larger (rows share beats), or whole
 * beats (padded rows). */
static unsigned pick_pitch(uint64_t *x, unsigned rb, unsigned B)
{
    switch (rtl_rand(x) % 5) {
    case 0: case 1: return rb;
    case 2: case 3: return rb + 2 * rnd(x, 1, B);
    default: return (rb + B - 1) / B * B + B * rnd(x, 0, 1);
    }
}

/* An address inside [base, base + 4 KiB) for a span of `span` bytes: aligned, unaligned, or
 * starting just before a 4 KiB line so that the span crosses it. */
static uint32_t pick_addr(uint64_t *x, uint32_t base, unsigned B, int aligned_ok)
{
    unsigned k = (unsigned)(rtl_rand(x) % 4);
    if (k == 0 && aligned_ok)
        return base + B * rnd(x, 0, 4096 / B - 1);
    if (k == 1)
        return base + 4096 - 2 * rnd(x, 1, 2 * B); /* crosses the line at base + 4096 */
    return base + 2 * rnd(x, 0, 2048 - 1);
}

static void gen(const npu_cfg_t *cfg, uint64_t *x, dcase_t *c)
{
    unsigned B = 4u * (unsigned)cfg->s, E = 2u * (unsigned)cfg->s, DB = (unsigned)npu_cfg_beat(cfg);
    memset(c, 0, sizeof *c);
    /* the unit of the picks below: the SPM word, or with wide beats in half the cases the beat
     * (no draw at BEAT_WORDS = 1: the cases stay those of the word = beat configs) */
    unsigned G = DB > B && rtl_rand(x) % 2 ? DB : B;
    c->tr = rtl_rand(x) % 4 == 0;
    unsigned len = (unsigned)(rtl_rand(x) % 3); /* short (several per beat), medium, long rows */
    c->rb = 2 * (len == 0 ? rnd(x, 1, B / 2) : len == 1 ? rnd(x, B / 2, 2 * B) : rnd(x, 2 * B, 4 * B));
    c->rows = c->tr ? rnd(x, 1, 3 * E + 2) : rnd(x, 1, 60);
    c->ds = pick_pitch(x, c->rb, G);
    c->da = pick_addr(x, SRC, G, 1);
    if (c->tr && rtl_rand(x) % 3 == 0) /* beat-padded adjacent sub-rows (the old layout) */
        c->da &= ~(uint32_t)(G - 1);
    if (c->tr) {
        c->srows = c->rb / 2;
        c->words = (c->rows + E - 1) / E;
    } else {
        c->srows = c->rows;
        c->words = (c->rb + B - 1) / B;
    }
    c->ss = c->words + rnd(x, 0, 1);
    c->sa = rnd(x, 0, 64);
    c->rows2 = rnd(x, 1, c->srows);
    c->rb2 = 2 * rnd(x, 1, c->words * B / 2);
    c->ds2 = pick_pitch(x, c->rb2, G);
    c->da2 = pick_addr(x, D2, G, 1);
    c->rb3 = 4 * rnd(x, 1, c->srows < 3 * (unsigned)cfg->s ? c->srows : 3 * (unsigned)cfg->s);
    c->rows3 = rnd(x, 1, c->words * (unsigned)cfg->s);
    c->ds3 = pick_pitch(x, c->rb3, G);
    c->da3 = pick_addr(x, D3, G, 1);
    c->stall = (unsigned)(rtl_rand(x) % 3) * 15;
}

/* The SPM words (srows x words) the LOAD writes. */
static uint8_t *reference_load(const dcase_t *c, unsigned B, unsigned E, const uint8_t *win)
{
    uint8_t *spm = calloc((size_t)c->srows * c->words, B);
    cr_assert_not_null(spm);
    const uint8_t *src = win + (c->da - WIN_LO);
    for (unsigned r = 0; r < c->rows; r++)
        for (unsigned i = 0; i < c->rb; i++) {
            unsigned sr = c->tr ? i / 2 : r;
            size_t lane = c->tr ? (size_t)(r / E) * B + (r % E) * 2 + i % 2 : i;
            spm[(size_t)sr * c->words * B + lane] = src[(size_t)r * c->ds + i];
        }
    return spm;
}

/* The reference: the SPM words the LOAD writes, then the three STOREs. */
static void reference(const dcase_t *c, unsigned B, unsigned E, uint8_t *win)
{
    uint8_t *spm = reference_load(c, B, E, win);
    memcpy(win + (D1 - WIN_LO), spm, (size_t)c->srows * c->words * B);
    for (unsigned r = 0; r < c->rows2; r++)
        memcpy(win + (c->da2 - WIN_LO) + (size_t)r * c->ds2, spm + (size_t)r * c->words * B, c->rb2);
    for (unsigned r = 0; r < c->rows3; r++) /* element (r, k) from SPM row k, lane r of the words */
        for (unsigned k = 0; k < c->rb3 / 4; k++)
            memcpy(win + (c->da3 - WIN_LO) + (size_t)r * c->ds3 + 4 * k,
                   spm + (size_t)k * c->words * B + (size_t)r * 4, 4);
    free(spm);
}

static void build(const dcase_t *c, unsigned B, npu_prog_t *p)
{
    npu_insn_t in;
    npu_prog_init(p);
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, (int)c->tr, c->rows, c->da, c->sa, c->ss, c->rb, c->ds), 0);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_sync(&in, NPU_OP_SYNC_E), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, c->srows, D1, c->sa, c->ss, c->words * B, c->words * B), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_DY, c->rows2, c->da2, c->sa, c->ss, c->rb2, c->ds2), 0);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    if (c->rows3) {
        cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_DY, c->rows3, c->da3, c->sa, c->ss, c->rb3, c->ds3), 0);
        cr_assert_eq(npu_prog_push(p, &in), 0);
    }
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return n;
}

/* The functional model runs p on the same DRAM image; its window must equal want, its DMA
 * counters the RTL's. */
static void check_model(const npu_cfg_t *cfg, const npu_prog_t *p, const uint8_t *init,
                        const uint8_t *want, const npu_run_result_t *r, const char *tag)
{
    npu_sim_t *m = rtl_model_run(p->insn, p->n, WIN_LO, init, WIN_HI - WIN_LO, tag);
    uint8_t *d = fnpu_sim_dram(m, NULL);
    size_t k = first_diff(d + WIN_LO, want, WIN_HI - WIN_LO);
    cr_assert_eq(k, (size_t)(WIN_HI - WIN_LO), "%s: model byte 0x%zx = 0x%02x, reference 0x%02x", tag,
                 WIN_LO + k, d[WIN_LO + k], want[k]);
    static const unsigned cnt[] = {NPU_CNT_dram_rd_bursts, NPU_CNT_dram_wr_bursts, NPU_CNT_dram_rd_x,
                                   NPU_CNT_dram_wr_y, NPU_CNT_dram_wr_dy};
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++) {
        uint64_t v = fnpu_sim_csr_read(m, NPU_CSR_CNT_LO + cnt[i]) |
                     (uint64_t)fnpu_sim_csr_read(m, NPU_CSR_CNT_HI + cnt[i]) << 32;
        cr_assert_eq(v, r->cnt[cnt[i]], "%s: counter %s RTL %llu, model %llu", tag, npu_counter_name(cnt[i]),
                     (unsigned long long)r->cnt[cnt[i]], (unsigned long long)v);
    }
    (void)cfg;
    fnpu_sim_close(m);
}

static void run_case(const npu_cfg_t *cfg, const dcase_t *c, uint64_t seed, unsigned idx)
{
    unsigned B = 4u * (unsigned)cfg->s, E = 2u * (unsigned)cfg->s;
    char tag[256];
    snprintf(tag, sizeof tag,
             "case %u (NPU_SEED=%llu): LOAD%s rows=%u bytes=%u dram=0x%x+%u*r spm=%u+%u*r; "
             "STORE rows=%u bytes=%u dram=0x%x+%u*r; STORE trans rows=%u bytes=%u dram=0x%x+%u*r; stall %u%%",
             idx, (unsigned long long)seed, c->tr ? " trans" : "", c->rows, c->rb, (unsigned)c->da, c->ds,
             c->sa, c->ss, c->rows2, c->rb2, (unsigned)c->da2, c->ds2, c->rows3, c->rb3, (unsigned)c->da3,
             c->ds3, c->stall);
    size_t n = WIN_HI - WIN_LO;
    uint8_t *init = malloc(n), *want = malloc(n);
    cr_assert(init && want);
    uint64_t x = seed ^ 0x5DEECE66Dull;
    for (size_t i = 0; i < n; i++)
        init[i] = (uint8_t)(rtl_rand(&x) >> 24);
    memcpy(want, init, n);
    reference(c, B, E, want);

    npu_prog_t p;
    build(c, B, &p);
    npu_sim_t *s = rtl_open(cfg, c->stall, 0, seed);
    uint8_t *d = npu_sim_dram(s, NULL);
    memcpy(d + WIN_LO, init, n);
    npu_run_result_t r;
    int rc = npu_run_program(cfg, s, 0, p.insn, p.n, 2000000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "%s: rc %d err %s pc %u info 0x%x", tag, rc,
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_pc, (unsigned)r.err_info);
    size_t k = first_diff(d + WIN_LO, want, n);
    cr_assert_eq(k, n, "%s: RTL byte 0x%zx = 0x%02x, reference 0x%02x", tag, WIN_LO + k, d[WIN_LO + k], want[k]);

    npu_prog_expect_t e;
    char msg[256];
    npu_prog_expect(cfg, p.insn, p.n, &e);
    cr_assert_eq(npu_check_counters(r.cnt, &e, msg, sizeof msg), 0, "%s: %s", tag, msg);
    uint64_t fetch = npu_dma_run(0, p.n * NPU_INSN_BYTES, B, (uint64_t)cfg->max_burst_beats).bursts;
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_bursts], e.rd_bursts + fetch, "%s: %llu read bursts, expected %llu + %llu fetch",
                 tag, (unsigned long long)r.cnt[NPU_CNT_dram_rd_bursts], (unsigned long long)e.rd_bursts,
                 (unsigned long long)fetch);
    cr_assert_eq(r.cnt[NPU_CNT_dram_wr_bursts], e.wr_bursts, "%s: %llu write bursts, expected %llu", tag,
                 (unsigned long long)r.cnt[NPU_CNT_dram_wr_bursts], (unsigned long long)e.wr_bursts);
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_x], e.rd_bytes[NPU_TAG_X], "%s: read bytes", tag);
    cr_assert_eq(r.cnt[NPU_CNT_dram_wr_y] + r.cnt[NPU_CNT_dram_wr_dy],
                 e.wr_bytes[NPU_TAG_Y] + e.wr_bytes[NPU_TAG_DY], "%s: written bytes", tag);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "%s: SPM words written", tag);
    npu_sim_close(s);

    check_model(cfg, &p, init, want, &r, tag);
    npu_prog_free(&p);
    free(init);
    free(want);
}

static void random_part(unsigned part)
{
    npu_cfg_t cfg = rtl_cfg();
    const char *env = getenv("NPU_DENSE_CASES");
    unsigned n = env ? (unsigned)strtoul(env, NULL, 0) : 32;
    uint64_t base = rtl_seed(1);
    for (unsigned i = 0; i < n; i++) {
        uint64_t seed = base * 1000003u + part * 1000u + i + 1, x = seed;
        dcase_t c;
        gen(&cfg, &x, &c);
        run_case(&cfg, &c, seed, part * 1000u + i);
    }
}

Test(dense, random_0, .timeout = 1200) { random_part(0); }
Test(dense, random_1, .timeout = 1200) { random_part(1); }
Test(dense, random_2, .timeout = 1200) { random_part(2); }
Test(dense, random_3, .timeout = 1200) { random_part(3); }

/* The 4096 x 5 int16 matrix of the motivating GEMM, dense: one run of 1280 / (B/32) beats in
 * bursts of MAX_BURST, both ways (rows share beats on the STORE too). */
Test(dense, matrix_4096x5)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s;
    dcase_t c = {0};
    c.rows = 1024;     /* 10-byte rows; 1024 keeps the SPM within every config */
    c.rb = 10;
    c.ds = 10;
    c.da = SRC + 6;
    c.sa = 0;
    c.srows = c.rows;
    c.words = (c.rb + B - 1) / B;
    c.ss = c.words;
    c.rows2 = c.rows;
    c.rb2 = 10;
    c.ds2 = 10;
    c.da2 = D2 + 2;
    run_case(&cfg, &c, rtl_seed(7), 9999);
}

/* One directed case for the wide STORE: a LOAD of rows x words SPM words from spm sa at pitch
 * ss, then the dense STORE of rows2 rows of rb2 bytes to D2 + off2 at pitch ds2. */
static void wide_case(const npu_cfg_t *cfg, unsigned rows, unsigned words, unsigned sa, unsigned ss, unsigned rb2,
                      unsigned ds2, uint32_t off2, unsigned idx)
{
    unsigned B = 4u * (unsigned)cfg->s;
    dcase_t c = {0};
    c.rows = rows;
    c.rb = words * B;
    c.ds = c.rb;
    c.da = SRC + 2;
    c.sa = sa;
    c.ss = ss;
    c.srows = rows;
    c.words = words;
    c.rows2 = rows;
    c.rb2 = rb2;
    c.ds2 = ds2;
    c.da2 = D2 + off2;
    c.stall = idx % 2 ? 15 : 0;
    run_case(cfg, &c, rtl_seed(11) + idx, 8000 + idx);
}

Test(dense, wide_store, .timeout = 600)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s;
    /* odd word counts (3, 5), the last word partial, from both word offsets of a beat (+2,
     * +B + 6), rows one after the other (one run) or sharing beats (pitch rb + 2) */
    wide_case(&cfg, 9, 3, 0, 3, 3 * B - 4, 3 * B - 4, 2, 0);
    wide_case(&cfg, 7, 5, 1, 5, 5 * B - 6, 5 * B - 4, B + 6, 1);
    /* rows from SPM words 3, 11, 19, ...: words 3 and 4 share a sub-bank (a one-word chunk, then
     * pairs from 4); odd pitch: the rows alternate between odd and even starts */
    wide_case(&cfg, 12, 4, 3, 8, 4 * B, 4 * B + 2, 0, 2);
    wide_case(&cfg, 11, 6, 3, 7, 6 * B - 2, 6 * B, B - 2, 3);
    /* one run across 4 KiB lines (from 40 bytes before one), even word counts, whole rows */
    wide_case(&cfg, 40, 2, 5, 2, 2 * B, 2 * B, 4096 - 40, 4);
    wide_case(&cfg, 24, 7, 2, 9, 7 * B - 10, 7 * B + 14, 2 * 4096 - 6, 5);
    /* one-word rows (no pair) and two-word rows of which the second is partial */
    wide_case(&cfg, 16, 1, 1, 1, 10, 10, 6, 6);
    wide_case(&cfg, 16, 2, 0, 2, B + 2, B + 2, 4096 - 2 * B - 2, 7);
}

static void dma_error(const npu_cfg_t *cfg, const npu_insn_t *in, unsigned err, uint32_t info, const char *what)
{
    npu_sim_t *s = rtl_open(cfg, 0, 0, 1);
    npu_run_result_t r;
    int rc = npu_run_program(cfg, s, 0, in, 1, 200000, &r);
    if (err == NPU_ERR_NONE) {
        cr_assert_eq(rc, NPU_RUN_DONE, "%s: rc %d err %u info 0x%x", what, rc, r.err, (unsigned)r.err_info);
    } else {
        cr_assert_eq(rc, NPU_RUN_ERROR, "%s: rc %d", what, rc);
        cr_assert_eq(r.err, err, "%s: %s, expected %s", what, npu_error_name(r.err), npu_error_name(err));
        cr_assert_eq(r.err_info, info, "%s: ERR_INFO 0x%x, expected 0x%x", what, (unsigned)r.err_info,
                     (unsigned)info);
    }
    npu_sim_close(s);
}

Test(dense, errors)
{
    npu_cfg_t cfg = rtl_cfg();
    uint32_t end = (uint32_t)((1ull << cfg.dram_addr_bits) - 1) + 1u; /* 0 when the DRAM is 4 GiB */
    npu_insn_t in;
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, 2, 0x10001, 0, 1, 10, 10), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10001, "LOAD odd dram_addr");
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, 2, 0x10002, 0, 1, 9, 10), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10002, "LOAD odd row_bytes");
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, 2, 0x10002, 0, 1, 10, 11), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10002, "STORE odd dram_stride");
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 1, 3, 0x10002, 0, 1, 6, 7), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10002, "transposed LOAD odd dram_stride");
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3, 0x10002, 0, 1, 6, 8), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10002, "transposed STORE, row_bytes not whole int32s");
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3, 0x10001, 0, 1, 8, 8), 0);
    dma_error(&cfg, &in, NPU_ERR_BAD_DESC, 0x10001, "transposed STORE odd dram_addr");
    /* transposed: rows = 3S + 1 (4 words per SPM row), 5 SPM rows (row_bytes 20), stride 7:
     * last word = s + 4*7 + 4 - 1 */
    unsigned W = (unsigned)npu_cfg_spm_words(&cfg), s = W - 1 - 28 - 3;
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3 * (unsigned)cfg.s + 1, 0x10000, s, 7, 20, 20), 0);
    dma_error(&cfg, &in, NPU_ERR_NONE, 0, "transposed STORE: last word = SPM_WORDS - 1");
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3 * (unsigned)cfg.s + 1, 0x10000, s + 1, 7, 20, 20), 0);
    dma_error(&cfg, &in, NPU_ERR_SPM_ADDR, W, "transposed STORE: last word = SPM_WORDS");
    /* its DRAM range is the rows x row_bytes region's: up to the last byte, then two past */
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3, end - 36, 0, 1, 12, 12), 0);
    dma_error(&cfg, &in, NPU_ERR_NONE, 0, "transposed STORE up to the last byte");
    cr_assert_eq(npu_enc_store_tr(&in, NPU_TAG_Y, 3, end - 34, 0, 1, 12, 12), 0);
    dma_error(&cfg, &in, NPU_ERR_DRAM_ADDR, end + 1, "transposed STORE two bytes past");
    /* dense rows ending on the last byte, unaligned: fine; two bytes further: DRAM_ADDR */
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, 3, end - 30, 0, 1, 10, 10), 0);
    dma_error(&cfg, &in, NPU_ERR_NONE, 0, "STORE up to the last byte");
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, 3, end - 30, 0, 1, 10, 10), 0);
    dma_error(&cfg, &in, NPU_ERR_NONE, 0, "LOAD up to the last byte");
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, 3, end - 28, 0, 1, 10, 10), 0);
    dma_error(&cfg, &in, NPU_ERR_DRAM_ADDR, end + 1, "LOAD two bytes past");
    /* a span past 2^33: the most rows at the longest pitch (65,534 << 3), reported as the low
     * 32 bits of the last byte */
    uint64_t last = 0xFFFF0000ull + 16382ull * (65534ull << 3) + 65534ull - 1;
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, 16383, 0xFFFF0000u, 0, 0, 65534, 65534u << 3), 0);
    dma_error(&cfg, &in, NPU_ERR_DRAM_ADDR, (uint32_t)last, "STORE span past 2^32");
}

/* Cycles of one LOAD or STORE alone on a DRAM that is not the limit (4 beats of bandwidth, no
 * per-burst cost), from the start of the program to the end. tr: a transposed LOAD of rows x
 * rb / 2 elements at pitch ds, its rb / 2 columns written ceil(rows / 2S) words apart. */
static uint64_t xfer_cycles_tr(const npu_cfg_t *cfg, int store, int tr, unsigned rows, unsigned rb, unsigned ds,
                               uint32_t da)
{
    unsigned B = 4u * (unsigned)cfg->s, E = 2u * (unsigned)cfg->s;
    npu_dram_timing_t t = {4.0 * B, (unsigned)cfg->dram_latency, 0, 0, 1};
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    unsigned words = tr ? (rows + E - 1) / E : (rb + B - 1) / B;
    npu_insn_t in;
    if (store)
        cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, rows, da, 0, words, rb, ds), 0);
    else
        cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, tr, rows, da, 0, words, rb, ds), 0);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(cfg, s, 0, &in, 1, 1000000, &r), NPU_RUN_DONE);
    npu_sim_close(s);
    return r.end_cycle - r.start_cycle;
}

static uint64_t xfer_cycles(const npu_cfg_t *cfg, int store, unsigned rows, unsigned rb, uint32_t da)
{
    return xfer_cycles_tr(cfg, store, 0, rows, rb, rb, da);
}

/* Row pairs (two-word beats, docs/memory.md "Words and beats"): contiguous rows of one word move
 * two a cycle both ways (c_load, c_store: `rows` rows of 6 B), rows a pair of which falls in one
 * sub-bank (w odd with a carry: one in eight here) one; a FILL of one-word rows too; rows at a
 * pitch wider than the row one a cycle (each its own run). The RTL's counts against the chunks
 * of the DMA rule (npu_dma_chunks) that the cost models charge. */
static void row_pairs(const npu_cfg_t *cfg, unsigned rows, uint64_t c_load, uint64_t c_store)
{
    unsigned B = 4u * (unsigned)cfg->s;
    npu_fields_t f = {0};
    f.op = NPU_OP_LOAD;
    f.rows = rows;
    f.row_bytes = 6;
    f.dram_stride = 6;
    uint64_t pairs = npu_dma_chunks(B, 2, &f);
    f.dram_stride = 8;
    uint64_t single = npu_dma_chunks(B, 2, &f);
    uint64_t c_strided = xfer_cycles_tr(cfg, 0, 0, rows, 6, 8, SRC);
    npu_dram_timing_t t = {4.0 * B, (unsigned)cfg->dram_latency, 0, 0, 1};
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    npu_insn_t in;
    cr_assert_eq(npu_enc_fill(&in, rows, 0, 1, 6), 0);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(cfg, s, 0, &in, 1, 1000000, &r), NPU_RUN_DONE);
    npu_sim_close(s);
    uint64_t c_fill = r.end_cycle - r.start_cycle;
    cr_log_info("dense throughput: row pairs: LOAD %llu, STORE %llu, FILL %llu cycles for %llu chunks; "
                "rows at a wider pitch %llu for %llu", (unsigned long long)c_load, (unsigned long long)c_store,
                (unsigned long long)c_fill, (unsigned long long)pairs, (unsigned long long)c_strided,
                (unsigned long long)single);
    cr_assert_eq(pairs, (rows + 1) / 2);
    cr_assert_eq(single, rows);
    uint64_t most = pairs + rows / 8 + 100; /* the pairs a sub-bank splits */
    cr_assert(c_load <= most && c_store <= most && c_fill <= most, "row pairs: LOAD %llu, STORE %llu, FILL %llu "
              "cycles for %llu chunks", (unsigned long long)c_load, (unsigned long long)c_store,
              (unsigned long long)c_fill, (unsigned long long)pairs);
    cr_assert(c_strided >= single, "rows at a wider pitch: %llu cycles for %llu rows", (unsigned long long)c_strided,
              (unsigned long long)single);
}

/* Throughput (docs/memory.md "LOAD", "STORE"): short dense rows (several per beat) take one SPM
 * word per cycle both ways, long unaligned rows one beat per cycle; the fixed cost (fetch,
 * descriptor checks, DRAM latency, the last B response) is below 100 cycles. A transposed LOAD
 * of whole groups read as one run per block (rows of 2B bytes at pitch 2B) fills one group's
 * buffers while it writes the last one's columns: one beat per cycle plus the last group's
 * 4S columns (it took two cycles a beat when it alternated). */
Test(dense, throughput)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned B = 4u * (unsigned)cfg.s, rows_s = 1024, rows_l = 64;
    uint64_t beats_l = (2 + (uint64_t)rows_l * 8 * B + B - 1) / B; /* 8B-byte rows from +2 */
    uint64_t c[4] = {xfer_cycles(&cfg, 0, rows_s, 6, SRC + 2), xfer_cycles(&cfg, 0, rows_l, 8 * B, SRC + 2),
                     xfer_cycles(&cfg, 1, rows_s, 6, D2 + 2), xfer_cycles(&cfg, 1, rows_l, 8 * B, D2 + 2)};
    unsigned rows_t = 32u * 2u * (unsigned)cfg.s; /* 32 blocks of 2S rows */
    uint64_t c_t = xfer_cycles_tr(&cfg, 0, 1, rows_t, 2 * B, 2 * B, SRC);
    uint64_t n[4] = {rows_s, beats_l, rows_s, beats_l};
    const char *what[4] = {"LOAD short rows (words)", "LOAD long rows (beats)", "STORE short rows (words)",
                           "STORE long rows (beats)"};
    for (int i = 0; i < 4; i++) {
        cr_log_info("dense throughput: %s: %llu cycles for %llu", what[i], (unsigned long long)c[i],
                    (unsigned long long)n[i]);
        cr_assert(c[i] <= n[i] + 100, "%s: %llu cycles for %llu", what[i], (unsigned long long)c[i],
                  (unsigned long long)n[i]);
    }
    /* wide beats: a STORE of long rows moves a DRAM beat (two SPM words) per cycle, also when
     * its rows start at odd SPM words (a one-word chunk where w, w+1 share a sub-bank) */
    unsigned DB = (unsigned)npu_cfg_beat(&cfg);
    if (DB > B) {
        uint64_t dbeats = (2 + (uint64_t)rows_l * 8 * B + DB - 1) / DB;
        uint64_t cw = xfer_cycles(&cfg, 1, rows_l, 8 * B, D2 + 2);
        npu_dram_timing_t t = {4.0 * DB, (unsigned)cfg.dram_latency, 0, 0, 1};
        npu_sim_t *s = npu_sim_open(&t);
        cr_assert_not_null(s);
        npu_insn_t in;
        cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, rows_l, D2 + 2, 3, 9, 8 * B, 8 * B), 0);
        npu_run_result_t r;
        cr_assert_eq(npu_run_program(&cfg, s, 0, &in, 1, 1000000, &r), NPU_RUN_DONE);
        npu_sim_close(s);
        uint64_t co = r.end_cycle - r.start_cycle;
        cr_log_info("dense throughput: wide STORE long rows: %llu cycles (odd SPM starts %llu) for %llu beats",
                    (unsigned long long)cw, (unsigned long long)co, (unsigned long long)dbeats);
        cr_assert(cw <= dbeats + 100, "wide STORE long rows: %llu cycles for %llu beats", (unsigned long long)cw,
                  (unsigned long long)dbeats);
        cr_assert(co <= dbeats + rows_l + 100, "wide STORE long rows, odd SPM starts: %llu cycles for %llu beats",
                  (unsigned long long)co, (unsigned long long)dbeats);
    }
    if (DB > B)
        row_pairs(&cfg, rows_s, c[0], c[2]);
    cr_log_info("dense throughput: transposed LOAD of whole groups: %llu cycles for %u beats", (unsigned long long)c_t,
                2 * rows_t);
    cr_assert(c_t <= 2 * rows_t + 4 * (unsigned)cfg.s + 100, "transposed LOAD: %llu cycles for %u beats",
              (unsigned long long)c_t, 2 * rows_t);
}
