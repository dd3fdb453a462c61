/*
 * test_timing.c - the control paths pipelined for the synthesis view (issue 7) keep their exact
 * results. The DMA descriptor checks (npu_dma_desc) now split the last-address arithmetic over
 * two cycles (half products, pre-sums, sign tests): every check is tried on both sides of its
 * limit, with ERR_INFO (the last DRAM byte / SPM word) compared, for normal and transposed
 * LOADs and for STOREs, with products that use both 8-bit halves of rows.
 */
#include "rtl_common.h"

#define I (&_i)
#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0); \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)

static unsigned beat(void) { return 4u * (unsigned)rtl_cfg().s; }
static unsigned spm_words(void) { npu_cfg_t c = rtl_cfg(); return (unsigned)(c.spm_banks * c.spm_bank_words); }
/* 2^DRAM_ADDR_BITS modulo 2^32: a 4 GiB DRAM ends at 0, and the addresses below it (end - x)
 * and the error's ERR_INFO (the last byte's low 32 bits, end + x) wrap the same way. */
static uint64_t dram_bytes(void) { return (uint64_t)1 << rtl_cfg().dram_addr_bits; }
static uint32_t dram_end(void) { return (uint32_t)dram_bytes(); }

/* Runs a one-instruction program; code 0 expects DONE, else that error at pc 0 with info. */
static void run_one(const npu_insn_t *in, unsigned code, uint32_t info, const char *what)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_run_result_t r;
    int rc = npu_run_program(&cfg, s, 0, in, 1, 400000, &r);
    if (code == 0) {
        cr_assert_eq(rc, NPU_RUN_DONE, "%s: expected DONE, got rc %d err %s info 0x%x", what, rc,
                     npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_info);
    } else {
        cr_assert_eq(rc, NPU_RUN_ERROR, "%s: expected %s, got rc %d", what, npu_error_name(code), rc);
        cr_assert_eq(r.err, code, "%s: error %s, expected %s", what, npu_error_name(r.err),
                     npu_error_name(code));
        cr_assert_eq(r.err_pc, 0, "%s: ERR_PC %u", what, (unsigned)r.err_pc);
        cr_assert_eq(r.err_info, info, "%s: ERR_INFO 0x%x, expected 0x%x", what,
                     (unsigned)r.err_info, (unsigned)info);
    }
    npu_sim_close(s);
}

static void load(unsigned code, uint32_t info, const char *what, int tr, unsigned rows,
                 uint32_t daddr, unsigned saddr, unsigned sstride, unsigned rbytes, unsigned dstride)
{
    npu_insn_t _i;
    cr_assert_eq(npu_enc_load(I, NPU_TAG_X, tr, rows, daddr, saddr, sstride, rbytes, dstride * beat()), 0);
    run_one(I, code, info, what);
}

Test(timing, load_dram_last_byte_at_the_limit)
{
    uint32_t B = beat(), end = dram_end();
    /* 3 rows, stride 5 beats, 3 full beats a row: last byte = daddr + 2*5*B + 3B - 1 */
    uint32_t d = end - 13 * B;
    load(0, 0, "last byte = end - 1", 0, 3, d, 0, 3, 3 * B, 5);
    load(NPU_ERR_DRAM_ADDR, end + B - 1, "last byte = end + B - 1", 0, 3, d + B, 0, 3, 3 * B, 5);
    /* partial last beat: row_bytes = 3B - 2 */
    load(NPU_ERR_DRAM_ADDR, end + B - 3, "partial beat past the end", 0, 3, d + B, 0, 3, 3 * B - 2, 5);
}

Test(timing, load_dram_wide_product)
{
    /* rows = 500 (both 8-bit halves), stride (in beats here, bytes in the field) chosen so the
     * rows span about half the DRAM, at most what the 16-bit dram_stride field holds */
    uint32_t B = beat(), end = dram_end();
    unsigned rows = 500;
    uint64_t half = dram_bytes() / 2 / (rows * B);
    unsigned ds = half > 0xFFFFu / B ? 0xFFFFu / B : (unsigned)half;
    uint32_t span = (rows - 1) * ds * B + B;     /* bytes from daddr to the last byte + 1 */
    uint32_t d = end - span;
    load(0, 0, "wide: last byte = end - 1", 0, rows, d, 0, 1, B, ds);
    load(NPU_ERR_DRAM_ADDR, end + B - 1, "wide: one beat past", 0, rows, d + B, 0, 1, B, ds);
}

Test(timing, load_spm_last_word_at_the_limit)
{
    uint32_t B = beat();
    unsigned W = spm_words();
    /* 40 rows, SPM stride 50, 2 beats a row (row_bytes = 2B - 4): last word = s + 39*50 + 1 */
    unsigned s = W - 1 - 39 * 50 - 1;
    load(0, 0, "spm last word = SPM_WORDS - 1", 0, 40, 4096, s, 50, 2 * B - 4, 2);
    load(NPU_ERR_SPM_ADDR, W, "spm last word = SPM_WORDS", 0, 40, 4096, s + 1, 50, 2 * B - 4, 2);
}

Test(timing, load_transposed_spm_last_word_at_the_limit)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned W = spm_words(), E = 2u * (unsigned)cfg.s;
    /* transposed: rows = 3*2S + 1 (4 words per column), 10 columns (row_bytes 20), stride 7:
     * last word = s + 9*7 + 4 - 1 */
    unsigned rows = 3 * E + 1, s = W - 1 - 63 - 3;
    load(0, 0, "transposed: last word = SPM_WORDS - 1", 1, rows, 4096, s, 7, 20, 3);
    load(NPU_ERR_SPM_ADDR, W, "transposed: last word = SPM_WORDS", 1, rows, 4096, s + 1, 7, 20, 3);
}

Test(timing, store_dram_last_byte_at_the_limit)
{
    uint32_t B = beat(), end = dram_end();
    npu_insn_t _i;
    /* 2 rows, stride 3 beats, one beat a row: last byte = daddr + 3B + B - 1 */
    uint32_t d = end - 4 * B;
    cr_assert_eq(npu_enc_store(I, NPU_TAG_Y, 2, d, 0, 1, B, 3 * B), 0);
    run_one(I, 0, 0, "store: last byte = end - 1");
    cr_assert_eq(npu_enc_store(I, NPU_TAG_Y, 2, d + B, 0, 1, B, 3 * B), 0);
    run_one(I, NPU_ERR_DRAM_ADDR, end + B - 1, "store: last byte = end + B - 1");
}
