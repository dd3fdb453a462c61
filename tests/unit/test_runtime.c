/* test_runtime.c - runtime on the functional fake NPU: layout, launch, every error, timeouts,
 * token semantics and end-to-end GEMMs (S = 2 and 8, transA/transB) bit-exact. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "npu_funcsim.h"
#include "ref/golden.h"
#include "hw/isa.h"
#include "npu_sim.h"
#include "run/runtime.h"
#include "compile/slice/slice.h"
#include "compile/slice/slice_cost.h"
#include "prog/prog_expect.h"
#include "test_cfgs.h"

static npu_sim_t *open_sim(const npu_cfg_t *c, uint64_t seed, unsigned stall_pct)
{
    npu_dram_timing_t t;
    npu_sim_t *s;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = c->dram_bw;
    t.latency = (unsigned)c->dram_latency;
    t.burst_cost = (unsigned)c->dram_burst_cost;
    t.stall_pct = stall_pct;
    t.seed = seed;
    npu_funcsim_config(c);
    s = npu_sim_open(&t);
    cr_assert_not_null(s);
    return s;
}

/* ---- names, allocator, layout ---------------------------------------------------------- */

Test(runtime, names)
{
    char buf[200];
    cr_assert_str_eq(npu_error_name(NPU_ERR_DEADLOCK), "DEADLOCK");
    cr_assert_str_eq(npu_error_name(0), "NONE");
    cr_assert_null(npu_error_name(200));
    cr_assert_str_eq(npu_error_text(NPU_ERR_SPM_ADDR), "SPM address out of range");
    cr_assert_str_eq(npu_state_name(NPU_STATE_DONE), "DONE");
    cr_assert_str_eq(npu_csr_name(0x0A), "QSTATE");
    npu_qstate_str(0xF1234321u, buf, sizeof buf);
    cr_assert_str_eq(buf, "queues L=1 E=2 S=3 tokens l2e=4 e2l=3 e2s=2 s2e=1 fetch_done=1 busy L=1 E=1 S=1");
}

Test(runtime, allocator)
{
    npu_alloc_t a;
    uint64_t x;
    npu_alloc_init(&a, 1000, 32);
    cr_assert_eq(npu_alloc(&a, 1, &x), 0);
    cr_assert_eq(x, 0u);
    cr_assert_eq(npu_alloc(&a, 33, &x), 0);
    cr_assert_eq(x, 32u);
    cr_assert_eq(npu_alloc(&a, 64, &x), 0);
    cr_assert_eq(x, 96u);
    cr_assert_eq(npu_alloc(&a, 1000, &x), -1);
    cr_assert_eq(npu_alloc(&a, 832, &x), 0, "exactly the rest");
    cr_assert_eq(x, 160u);
    cr_assert_eq(npu_alloc(&a, 1, &x), -1);
    cr_assert_eq(npu_alloc(&a, UINT64_MAX - 3, &x), -1, "no wrap-around");
}

/* The GEMM driver places the program, A, B and C at 4 KiB lines, the alignment the slicing
 * stage counts bursts at: the program of the stage's pick then writes exactly the bursts the
 * stage predicts for C (beat-aligned, 4096 x 5 x 5 wrote 176 instead of 160, 1024 x 256 x 16
 * 2,304 instead of 2,048: a tile's run crossed one line more). */
Test(runtime, gemm_tensors_on_4k_lines)
{
    npu_cfg_t c = test_cfg(8);
    static const int shapes[][3] = {{4096, 5, 5}, {1024, 256, 16}, {4096, 24, 24}};
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        npu_gemm_report_t rep;
        npu_slice_result_t r;
        char msg[160];
        cr_assert_eq(npu_gemm_compile_modes(&c, 1u << 26, M, N, K, 0, 0,
                                            NPU_EMIT_FLEXSA | NPU_GEMM_SLICING_BURST, &rep),
                     NPU_GEMM_PASS, "%s", rep.host_msg);
        cr_assert_eq(rep.prog_base % 4096u, 0u);
        cr_assert_eq(rep.args.a % 4096u, 0u, "A at %u", rep.args.a);
        cr_assert_eq(rep.args.b % 4096u, 0u, "B at %u", rep.args.b);
        cr_assert_eq(rep.args.c % 4096u, 0u, "C at %u", rep.args.c);
        cr_assert_eq(npu_slice_gemm(&c, &k, M, N, K, &r, msg, sizeof msg), 0, "%s", msg);
        cr_assert_eq(rep.expect.wr_bursts, r.best.t[NPU_SLICE_OUT].b.bursts, "%dx%dx%d: %llu written, %llu predicted",
                     M, N, K, (unsigned long long)rep.expect.wr_bursts,
                     (unsigned long long)r.best.t[NPU_SLICE_OUT].b.bursts);
        npu_gemm_report_free(&rep);
    }
}

Test(runtime, layout_pitch_and_padding)
{
    uint8_t dram[256];
    int16_t m[6] = {1, -2, 0x1234, -32768, 32767, 0};
    int32_t back[4];
    memset(dram, 0xEE, sizeof dram);
    npu_write_i16(dram, 16, 2 * 8, 2, 3, m, 3); /* 2 x 3, pitch 2 beats of 8 bytes */
    {
        static const uint8_t want[32] = {1, 0, 0xFE, 0xFF, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                         0, 0x80, 0xFF, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        cr_assert(memcmp(dram + 16, want, 32) == 0);
        cr_assert_eq(dram[15], 0xEE);
        cr_assert_eq(dram[48], 0xEE);
    }
    {
        uint8_t d[32] = {0};
        d[0] = 0xFF; d[1] = 0xFF; d[2] = 0xFF; d[3] = 0xFF;       /* -1 */
        d[4] = 0; d[5] = 0; d[6] = 0; d[7] = 0x80;                /* INT32_MIN */
        d[16] = 7;                                                /* row 1 col 0 */
        d[20] = 0xFF; d[21] = 0xFF; d[22] = 0xFF; d[23] = 0x7F;   /* INT32_MAX */
        npu_read_i32(d, 0, 2 * 8, 2, 2, back, 2);
        cr_assert_eq(back[0], -1);
        cr_assert_eq(back[1], INT32_MIN);
        cr_assert_eq(back[2], 7);
        cr_assert_eq(back[3], INT32_MAX);
    }
}

/* ---- hand-written programs on the fake ------------------------------------------------ */

static int run(const npu_cfg_t *c, npu_sim_t *s, const npu_insn_t *p, size_t n, npu_run_result_t *r)
{
    return npu_run_program(c, s, 0, p, n, 10000000, r);
}

Test(runtime, copy_program_tokens_and_strobes)
{
    npu_cfg_t c = test_cfg(2); /* B = 8 */
    npu_sim_t *s = open_sim(&c, 1, 0);
    npu_insn_t p[3];
    npu_run_result_t r;
    uint8_t *d = npu_sim_dram(s, NULL);
    for (int i = 0; i < 48; i++)
        d[0x1000 + i] = (uint8_t)(i + 1);
    memset(d + 0x2000, 0xEE, 64);
    npu_enc_load(&p[0], NPU_TAG_X, 0, 3, 0x1000, 0, 2, 12, 2 * 8);
    npu_insn_tok(&p[0], NPU_TOK_PUSH_NEXT);
    npu_enc_sync(&p[1], NPU_OP_SYNC_E);
    npu_insn_tok(&p[1], NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    npu_enc_store(&p[2], NPU_TAG_Y, 3, 0x2000, 0, 2, 12, 2 * 8);
    npu_insn_tok(&p[2], NPU_TOK_POP_PREV);
    cr_assert_eq(run(&c, s, p, 3, &r), NPU_RUN_DONE);
    cr_assert_eq(r.state, (unsigned)NPU_STATE_DONE);
    for (int row = 0; row < 3; row++) {
        cr_assert(memcmp(d + 0x2000 + 16 * row, d + 0x1000 + 16 * row, 12) == 0, "row %d", row);
        cr_assert_eq(d[0x2000 + 16 * row + 12], 0xEE, "strobes stop at row_bytes");
    }
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_x], 3u * 2 * 8);
    cr_assert_eq(r.cnt[NPU_CNT_dram_wr_y], 3u * 2 * 8);
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_prog], 48u);
    cr_assert_eq(r.cnt[NPU_CNT_insn_load], 1u);
    cr_assert_eq(r.cnt[NPU_CNT_insn_exec], 1u);
    cr_assert_eq(r.cnt[NPU_CNT_insn_store], 1u);
    cr_assert(r.cnt[NPU_CNT_cycles] > 30u, "DRAM latency is modelled");
    /* a second run on the same simulator starts from a clean state */
    cr_assert_eq(run(&c, s, p, 3, &r), NPU_RUN_DONE);
    cr_assert_eq(r.cnt[NPU_CNT_insn_load], 1u, "counters cleared by the runtime");
    npu_sim_close(s);
}

Test(runtime, transposed_load_layout)
{
    /* S=2 (F=4, B=8): DRAM 5 rows x 3 columns int16 (row_bytes 6, pitch 1 beat). SPM row c gets
     * column c: word 0 = elements (0..3, c), word 1 = (4, c), 0, 0, 0. */
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    npu_insn_t p[3];
    npu_run_result_t r;
    uint8_t *d = npu_sim_dram(s, NULL);
    memset(d + 0x3000, 0x77, 64);
    for (int row = 0; row < 5; row++)
        for (int col = 0; col < 4; col++) { /* column 3 is beyond row_bytes: never read */
            int16_t v = (int16_t)(100 * row + col - 250);
            d[0x1000 + 8 * row + 2 * col] = (uint8_t)((uint16_t)v & 0xFF);
            d[0x1000 + 8 * row + 2 * col + 1] = (uint8_t)((uint16_t)v >> 8);
        }
    /* fill the SPM target with garbage first, so zero lanes are really written */
    npu_enc_load(&p[0], NPU_TAG_W, 0, 6, 0x3000, 0x10, 1, 8, 1 * 8);
    npu_enc_load(&p[1], NPU_TAG_W, 1, 5, 0x1000, 0x10, 2, 6, 1 * 8);
    npu_insn_tok(&p[1], NPU_TOK_PUSH_NEXT);
    npu_enc_store(&p[2], NPU_TAG_Y, 3, 0x2000, 0x10, 2, 16, 2 * 8);
    {
        npu_insn_t q[4] = {p[0], p[1], {{0, 0, 0, 0}}, p[2]};
        npu_enc_sync(&q[2], NPU_OP_SYNC_E);
        npu_insn_tok(&q[2], NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
        npu_insn_tok(&q[3], NPU_TOK_POP_PREV);
        cr_assert_eq(run(&c, s, q, 4, &r), NPU_RUN_DONE, "err %u pc %u", r.err, r.err_pc);
    }
    for (int col = 0; col < 3; col++)
        for (int lane = 0; lane < 8; lane++) {
            const uint8_t *e = d + 0x2000 + 16 * col + 2 * lane;
            int16_t got = (int16_t)(uint16_t)(e[0] | e[1] << 8);
            int16_t want = lane < 5 ? (int16_t)(100 * lane + col - 250) : 0;
            cr_assert_eq(got, want, "SPM row %d lane %d", col, lane);
        }
    cr_assert_eq(r.cnt[NPU_CNT_dram_rd_w], 6u * 8 + 5u * 8, "transposed: rows * ceil(row_bytes/B) beats");
    npu_sim_close(s);
}

Test(runtime, wave_uses_only_k_rows_of_weights)
{
    /* S=2: SPM rows of W beyond k hold garbage and A lanes beyond k are non-zero: LDW must
     * zero the rows r >= k, so C = A[:, :k] * W[:k, :]. */
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    npu_insn_t p[7];
    npu_run_result_t r;
    uint8_t *d = npu_sim_dram(s, NULL);
    int16_t A[2][4] = {{1, 2, 3, 4}, {-5, 6, -7, 8}}, W[4][4] = {{1, 0, 0, 1}, {0, 1, 0, 2}, {9, 9, 9, 9}, {9, 9, 9, 9}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            d[0x1000 + 8 * i + 2 * j] = (uint8_t)((uint16_t)A[i][j] & 0xFF);
            d[0x1000 + 8 * i + 2 * j + 1] = (uint8_t)((uint16_t)A[i][j] >> 8);
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            d[0x1100 + 8 * i + 2 * j] = (uint8_t)((uint16_t)W[i][j] & 0xFF);
            d[0x1100 + 8 * i + 2 * j + 1] = (uint8_t)((uint16_t)W[i][j] >> 8);
        }
    npu_enc_load(&p[0], NPU_TAG_X, 0, 2, 0x1000, 0, 1, 8, 1 * 8);
    npu_enc_load(&p[1], NPU_TAG_W, 0, 4, 0x1100, 0x100, 1, 8, 1 * 8);
    npu_insn_tok(&p[1], NPU_TOK_PUSH_NEXT);
    npu_enc_ldw(&p[2], 1, NPU_MODE_FW, 0x100, 1, 2, 4);
    npu_insn_tok(&p[2], NPU_TOK_POP_PREV);
    npu_enc_wave(&p[3], 1, NPU_MODE_FW, 0, 2, 0, 1, 2, 4, 70); /* rows 70, 71: second half */
    npu_enc_drain(&p[4], 2, 70, 0x200, 2);
    npu_insn_tok(&p[4], NPU_TOK_PUSH_NEXT);
    npu_enc_store(&p[5], NPU_TAG_Y, 2, 0x2000, 0x200, 2, 16, 2 * 8);
    npu_insn_tok(&p[5], NPU_TOK_POP_PREV);
    cr_assert_eq(run(&c, s, p, 6, &r), NPU_RUN_DONE, "err %u pc %u", r.err, r.err_pc);
    {
        int32_t got[2][4];
        int32_t want[2][4] = {{1, 2, 0, 5}, {-5, 6, 0, 7}};
        npu_read_i32(d, 0x2000, 2 * 8, 2, 4, &got[0][0], 4);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++)
                cr_assert_eq(got[i][j], want[i][j], "C[%d][%d] = %d", i, j, got[i][j]);
    }
    cr_assert_eq(r.cnt[NPU_CNT_macs_core0] + r.cnt[NPU_CNT_macs_core1] + r.cnt[NPU_CNT_macs_core2] +
                     r.cnt[NPU_CNT_macs_core3], 2u * 2 * 4);
    cr_assert_eq(r.cnt[NPU_CNT_macs_core0], 2u * 2 * 2, "k<S, n<S");
    cr_assert_eq(r.cnt[NPU_CNT_macs_core1], 2u * 2 * 2, "k<S, n>=S");
    cr_assert_eq(r.cnt[NPU_CNT_macs_core2], 0u);
    npu_sim_close(s);
}

typedef struct err_case {
    const char *what;
    npu_insn_t p[4];
    size_t n;
    unsigned err;
    uint32_t pc;
    int check_info;
    uint32_t info;
} err_case_t;

static void expect_error(const npu_cfg_t *c, const npu_insn_t *p, size_t n, unsigned err,
                         uint32_t pc, int check_info, uint32_t info, const char *what)
{
    npu_sim_t *s = open_sim(c, 3, 0);
    npu_run_result_t r;
    cr_assert_eq(run(c, s, p, n, &r), NPU_RUN_ERROR, "%s: not an error", what);
    cr_assert_eq(r.state, (unsigned)NPU_STATE_ERROR, "%s", what);
    cr_assert_eq(r.err, err, "%s: error %s, expected %s", what, npu_error_name(r.err), npu_error_name(err));
    cr_assert_eq(r.err_pc, pc, "%s: pc %u", what, r.err_pc);
    if (check_info)
        cr_assert_eq(r.err_info, info, "%s: info 0x%x, expected 0x%x", what, r.err_info, info);
    npu_sim_close(s);
}

Test(runtime, every_error_is_reported)
{
    npu_cfg_t c = test_cfg(2); /* F=4, B=8, SPM 8192 words, OBUF 2x64 rows, DRAM 16 MiB */
    npu_insn_t p[20];
    uint32_t dram_end = 1u << 24;
    npu_enc_sync(&p[0], NPU_OP_SYNC_L);
    memset(&p[1], 0, sizeof p[1]);
    npu_insn_put(&p[1], NPU_FLD_INSN_op, 0x1F); /* no such opcode */
    expect_error(&c, p, 2, NPU_ERR_ILLEGAL_OPCODE, 1, 1, 0x1F, "illegal opcode");

    npu_enc_sync(&p[0], NPU_OP_SYNC_L);
    npu_enc_load(&p[1], NPU_TAG_X, 0, 0, 0x1000, 0, 1, 8, 1 * 8);
    expect_error(&c, p, 2, NPU_ERR_BAD_DESC, 1, 0, 0, "LOAD rows=0");
    npu_enc_load(&p[0], NPU_TAG_X, 0, 1, 0x1000, 0, 1, 0, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "LOAD row_bytes=0");
    npu_enc_load(&p[0], NPU_TAG_X, 0, 1, 0x1003, 0, 1, 8, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "odd dram_addr");
    npu_enc_load(&p[0], NPU_TAG_X, 0, 2, 0x1004, 0, 1, 8, 7);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "odd dram_stride");
    npu_enc_load(&p[0], NPU_TAG_X, 0, 2, 0x1004, 0, 1, 9, 10);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "odd row_bytes");
    npu_enc_store(&p[0], NPU_TAG_Y, 1, 0x1001, 0, 1, 8, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "misaligned STORE");
    npu_enc_ldw(&p[0], 0, NPU_MODE_FW, 0, 1, 5, 4);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "LDW k > 2S");
    npu_enc_wave(&p[0], 0, NPU_MODE_FW, 0, 1, 0, 1, 4, 0, 0);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "WAVE n = 0");
    npu_enc_wave(&p[0], 0, NPU_MODE_FW, 0, 0, 0, 1, 4, 4, 0);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "WAVE m = 0");
    npu_enc_drain(&p[0], 0, 0, 0, 2);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 0, 0, "DRAIN rows = 0");

    npu_enc_load(&p[0], NPU_TAG_X, 0, 2, dram_end - 8, 0, 1, 8, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_DRAM_ADDR, 0, 1, dram_end + 7, "LOAD past DRAM end (info: last byte)");
    npu_enc_store(&p[0], NPU_TAG_Y, 1, dram_end - 8, 0, 2, 10, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_DRAM_ADDR, 0, 1, dram_end + 1, "STORE past DRAM end");
    npu_enc_store_tr(&p[0], NPU_TAG_Y, 1, 0x1000, 0, 2, 10, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0x1000, "transposed STORE, row_bytes not whole int32s");
    npu_enc_store_tr(&p[0], NPU_TAG_Y, 3, 0x1000, 8190, 1, 8, 1 * 8); /* 2 SPM rows of 2 words at 8190.. */
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8190 + 1 + 1, "transposed STORE past SPM end (S = 2: 3 rows = 2 words)");
    npu_enc_load(&p[0], NPU_TAG_X, 1, 4, 0x1000, 0, 1, 7, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0x1000, "transposed LOAD, odd row_bytes");
    npu_enc_load(&p[0], NPU_TAG_X, 0, 1, 0x1000, 8191, 1, 16, 1 * 8);
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8192, "LOAD past SPM end (info: last word)");
    npu_enc_load(&p[0], NPU_TAG_X, 1, 5, 0x1000, 8190, 1, 8, 1 * 8); /* 4 SPM rows of 2 words at 8190.. */
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8190 + 3 + 1, "transposed LOAD past SPM end");
    npu_enc_wave(&p[0], 0, NPU_MODE_FW, 0, 3, 8190, 1, 4, 4, 0);
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8192, "WAVE A rows past SPM end");
    npu_enc_drain(&p[0], 1, 0, 8191, 2);
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8192, "DRAIN second word past SPM end");
    npu_enc_ldw(&p[0], 0, NPU_MODE_FW, 8000, 100, 4, 4);
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8300, "LDW rows past SPM end");
    npu_enc_wave(&p[0], 0, NPU_MODE_FW, 0, 2, 0, 1, 4, 4, 127);
    expect_error(&c, p, 1, NPU_ERR_OBUF_ADDR, 0, 1, 129, "WAVE past OBUF end (info: end row)");
    npu_enc_wave(&p[0], 0, NPU_MODE_FW, 0, 2, 0, 1, 4, 4, 63);
    expect_error(&c, p, 1, NPU_ERR_OBUF_ADDR, 0, 1, 65, "WAVE across the OBUF halves");
    npu_enc_drain(&p[0], 65, 64, 0, 2);
    expect_error(&c, p, 1, NPU_ERR_OBUF_ADDR, 0, 1, 129, "DRAIN past OBUF end");
    npu_enc_ldw(&p[0], 0, NPU_MODE_VSW, 0, 1, 4, 4);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "LDW VSW with n > S");
    npu_enc_wave(&p[0], 0, NPU_MODE_HSW, 0, 2, 0, 1, 3, 4, 0);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "WAVE HSW with k > S");
    npu_enc_wave(&p[0], 0, NPU_MODE_ISW, 0, 2, 0, 1, 2, 3, 0);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "WAVE ISW with n > S");
    npu_enc_ldw_cores(&p[0], 0, NPU_MODE_FW, 0, 1, 2, 2, 0x1);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "LDW core mask outside ISW");
    npu_enc_drain_split(&p[0], 2, 0, 0, 1, 0, 1);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "DRAIN hi_rows without split_rows");
    npu_enc_drain_split(&p[0], 2, 0, 0, 1, 2, 3);
    expect_error(&c, p, 1, NPU_ERR_BAD_DESC, 0, 1, 0, "DRAIN hi_rows > rows");
    npu_enc_drain_split(&p[0], 2, 0, 8180, 4, 3, 1);
    expect_error(&c, p, 1, NPU_ERR_SPM_ADDR, 0, 1, 8192, "skinny DRAIN high rows past SPM end");
    npu_enc_wave(&p[0], 0, NPU_MODE_VSW, 0, 5, 0, 1, 4, 2, 62);
    expect_error(&c, p, 1, NPU_ERR_OBUF_ADDR, 0, 1, 65, "skinny WAVE uses ceil(m/2) OBUF rows");

    for (int i = 0; i < 17; i++) {
        npu_enc_sync(&p[i], NPU_OP_SYNC_L);
        npu_insn_tok(&p[i], NPU_TOK_PUSH_NEXT);
    }
    expect_error(&c, p, 17, NPU_ERR_TOKEN_OVERFLOW, 15, 1, 1u << 0, "16th l2e token (info: channel bits)");

    npu_enc_sync(&p[0], NPU_OP_SYNC_L);
    npu_enc_sync(&p[1], NPU_OP_SYNC_E);
    npu_insn_tok(&p[1], NPU_TOK_POP_PREV);
    /* QSTATE: EXEC queue holds 1, fetch done, nothing busy */
    expect_error(&c, p, 2, NPU_ERR_DEADLOCK, 1, 1, (1u << 4) | (1u << 28), "EXEC waits for l2e");
}

Test(runtime, bad_program_csrs)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    npu_sim_csr_write(s, NPU_CSR_PROG_BASE, 0);
    npu_sim_csr_write(s, NPU_CSR_PROG_LEN, 0);
    npu_sim_csr_write(s, NPU_CSR_CTRL, 1);
    cr_assert_eq(npu_sim_run(s, 1000), 1);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_STATUS), (unsigned)NPU_STATE_DONE, "an empty program just finishes");
    npu_sim_csr_write(s, NPU_CSR_PROG_BASE, 8);
    npu_sim_csr_write(s, NPU_CSR_PROG_LEN, 1);
    npu_sim_csr_write(s, NPU_CSR_CTRL, 1);
    cr_assert_eq(npu_sim_run(s, 1000), 1);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_STATUS) >> 8, (unsigned)NPU_ERR_BAD_PROGRAM);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_ERR_INFO), 8u);
    npu_sim_csr_write(s, NPU_CSR_PROG_BASE, (1u << 24) - 16);
    npu_sim_csr_write(s, NPU_CSR_PROG_LEN, 2);
    npu_sim_csr_write(s, NPU_CSR_CTRL, 1);
    cr_assert_eq(npu_sim_run(s, 1000), 1);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_STATUS) >> 8, (unsigned)NPU_ERR_BAD_PROGRAM);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_S), 2u);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_SPM), 8192u);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_OBUF), 64u);
    npu_sim_close(s);
}

Test(runtime, timeout_without_watchdog)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s;
    npu_insn_t p[2];
    npu_run_result_t r;
    c.watchdog_cycles = 0;
    s = open_sim(&c, 1, 0);
    npu_enc_sync(&p[0], NPU_OP_SYNC_S);
    npu_insn_tok(&p[0], NPU_TOK_POP_PREV);
    npu_enc_sync(&p[1], NPU_OP_SYNC_L);
    cr_assert_eq(npu_run_program(&c, s, 0, p, 2, 5000000, &r), NPU_RUN_TIMEOUT);
    cr_assert_eq(r.halted, 0);
    cr_assert_eq(r.state, (unsigned)NPU_STATE_RUNNING);
    cr_assert(r.end_cycle - r.start_cycle >= 5000000u);
    cr_assert_eq(r.qstate & 0xF00u, 0x100u, "STORE queue holds the blocked SYNC_S");
    cr_assert(r.qstate & (1u << 28), "fetch done");
    cr_assert_eq(r.pc_s, 0u);
    npu_sim_close(s);
}

Test(runtime, check_hw_detects_wrong_binary)
{
    npu_cfg_t c8 = test_cfg(8), c2 = test_cfg(2);
    npu_sim_t *s = open_sim(&c8, 1, 0);
    char msg[256];
    cr_assert_eq(npu_check_hw(&c8, s, msg, sizeof msg), 0);
    cr_assert_eq(npu_check_hw(&c2, s, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "S=8") && strstr(msg, "'tiny'"), "%s", msg);
    npu_sim_close(s);
}

/* ---- GEMM end to end ------------------------------------------------------------------ */

static void fill(int16_t *v, size_t n, uint64_t *st)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int16_t)((int)(test_rand(st) % 65536) - 32768);
}

/* DRAM bytes the STOREs of C write: each (m-tile, n-tile) of the plan stores its rows of the
 * dense M x N int32 C (pitch 4N) as one transfer, counted by the DMA's rule (npu_dma_bursts);
 * with the C band each m-tile its whole rows (one transfer of Mt x 4N contiguous bytes); a
 * swapped plan's tiles are C^T's (rows n, columns m), each one transposed STORE
 * (npu_dma_bursts_str). */
static uint64_t y_bytes(const npu_cfg_t *c, const npu_gemm_report_t *rep, int M, int N)
{
    uint64_t W = (uint64_t)npu_cfg_word(c), DB = (uint64_t)npu_cfg_beat(c), y = 0;
    const npu_gemm_plan_t *p = &rep->plan;
    int sw = rep->args.swap, R = sw ? N : M, Q = sw ? M : N; /* the plan's rows and columns */
    int nt = p->cband ? Q : p->Nt;
    for (int r0 = 0; r0 < R; r0 += p->Mt)
        for (int q0 = 0; q0 < Q; q0 += nt) {
            uint64_t ra = (uint64_t)(R - r0 < p->Mt ? R - r0 : p->Mt);
            uint64_t qa = (uint64_t)(Q - q0 < nt ? Q - q0 : nt);
            uint64_t m0 = (uint64_t)(sw ? q0 : r0), n0 = (uint64_t)(sw ? r0 : q0);
            npu_fields_t f;
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_STORE;
            f.transpose = (unsigned)sw;
            f.dram_addr = (uint32_t)(rep->args.c + 4ull * m0 * (uint64_t)N + 4ull * n0);
            f.rows = (unsigned)(sw ? qa : ra);
            f.row_bytes = (unsigned)(4 * (sw ? ra : qa));
            f.dram_stride = 4u * (unsigned)N;
            y += DB * npu_dma_bursts_wb(W, DB, (uint64_t)c->max_burst_beats, &f).beats;
        }
    return y;
}

static void gemm_case_modes(npu_sim_t *s, const npu_cfg_t *c, int M, int N, int K, int ta, int tb,
                            int modes, uint64_t seed)
{
    int16_t *A = malloc((size_t)M * K * sizeof *A), *B = malloc((size_t)K * N * sizeof *B);
    int32_t *C = malloc((size_t)M * N * sizeof *C), *G = malloc((size_t)M * N * sizeof *G);
    npu_gemm_report_t rep;
    int rc;
    fill(A, (size_t)M * K, &seed);
    fill(B, (size_t)K * N, &seed);
    rc = npu_gemm_run_modes(c, s, M, N, K, A, B, ta, tb, modes, C, 50000000, &rep);
    cr_assert_eq(rc, NPU_GEMM_PASS,
                 "S=%d M=%d N=%d K=%d ta=%d tb=%d: %s (err %s pc %u, %zu mismatches, C[%d][%d]=%d "
                 "expected %d, counters: %s, host: %s)",
                 c->s, M, N, K, ta, tb, npu_gemm_rc_name(rc), npu_error_name(rep.run.err),
                 rep.run.err_pc, rep.mismatches, rep.bad_row, rep.bad_col, rep.bad_got, rep.bad_exp,
                 rep.counters_msg, rep.host_msg);
    /* independent of the driver's own compare */
    npu_golden_gemm(M, N, K, A, (size_t)(ta ? M : K), ta, B, (size_t)(tb ? K : N), tb, G, (size_t)N);
    cr_assert(memcmp(C, G, (size_t)M * N * sizeof *C) == 0);
    cr_assert_eq(rep.run.cnt[NPU_CNT_dram_rd_x], rep.expect.rd_bytes[NPU_TAG_X]);
    cr_assert_eq(rep.run.cnt[NPU_CNT_dram_wr_y], y_bytes(c, &rep, M, N));
    npu_gemm_report_free(&rep);
    free(A);
    free(B);
    free(C);
    free(G);
}

static void gemm_case(npu_sim_t *s, const npu_cfg_t *c, int M, int N, int K, int ta, int tb, uint64_t seed)
{
    gemm_case_modes(s, c, M, N, K, ta, tb, 0, seed);
}

/* Sizes: 1, primes, multiples of 2S and +-1, up to 300. */
static int pick(uint64_t *st, int F)
{
    static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 31, 37, 61, 101, 127, 131, 199, 251, 257, 293};
    switch (test_rand(st) % 4) {
    case 0: return primes[test_rand(st) % (sizeof primes / sizeof primes[0])];
    case 1: {
        int m = F * (1 + (int)(test_rand(st) % (uint64_t)(300 / F)));
        int d = (int)(test_rand(st) % 3) - 1;
        return m + d > 300 ? 300 : m + d;
    }
    case 2: return 1 + (int)(test_rand(st) % 300);
    default: return 1 + (int)(test_rand(st) % 40);
    }
}

static void gemm_batch(int S, uint64_t seed, int count, unsigned jitter, unsigned stall_pct)
{
    npu_cfg_t c = test_cfg(S);
    npu_sim_t *s;
    npu_funcsim_jitter(jitter);
    s = open_sim(&c, seed, stall_pct);
    for (int i = 0; i < count; i++) {
        int M = pick(&seed, 2 * S), N = pick(&seed, 2 * S), K = pick(&seed, 2 * S);
        gemm_case(s, &c, M, N, K, i & 1, (i >> 1) & 1, seed + (uint64_t)i);
    }
    npu_sim_close(s);
}

Test(gemm_fake, edge_shapes_s2) {
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 11, 0);
    static const int sh[][3] = {{1, 1, 1}, {1, 1, 300}, {300, 1, 1}, {1, 300, 1}, {4, 4, 4},
                                {3, 5, 7}, {5, 3, 4}, {63, 65, 64}, {64, 64, 64}, {65, 63, 3}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int t = 0; t < 4; t++)
            gemm_case(s, &c, sh[i][0], sh[i][1], sh[i][2], t & 1, t >> 1, 100 + i);
    npu_sim_close(s);
}

Test(gemm_fake, edge_shapes_s8) {
    npu_cfg_t c = test_cfg(8);
    npu_sim_t *s = open_sim(&c, 12, 0);
    static const int sh[][3] = {{1, 1, 1}, {15, 16, 17}, {16, 16, 16}, {17, 15, 16}, {256, 16, 33},
                                {257, 17, 15}, {31, 257, 64}, {300, 300, 300}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int t = 0; t < 4; t++)
            gemm_case(s, &c, sh[i][0], sh[i][1], sh[i][2], t & 1, t >> 1, 200 + i);
    npu_sim_close(s);
}

/* BEAT_WORDS = 2 (64-byte DRAM beats at S = 8) in the functional model: the GEMMs stay
 * bit-exact, every counter equals the program's expectation at 64-byte beats (npu_gemm_run's
 * counter check and the independent y_bytes), and a skinny GEMM's dense X and Y take half the
 * beats and bursts they take at 32-byte beats. */
Test(gemm_fake, wide_beats_s8) {
    npu_cfg_t c1 = test_cfg(8), c2 = test_cfg(8);
    static const int sh[][3] = {{1, 1, 1}, {512, 5, 5}, {300, 5, 32}, {300, 32, 5}, {97, 24, 24},
                                {64, 256, 16}, {31, 257, 64}};
    npu_sim_t *s;
    c2.beat_words = 2;
    cr_assert_eq(npu_cfg_word(&c2), 32);
    cr_assert_eq(npu_cfg_beat(&c2), 64);
    s = open_sim(&c2, 13, 0);
    cr_assert_eq(npu_sim_beat_bytes(), 64u);
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (int t = 0; t < 4; t++)
            gemm_case(s, &c2, sh[i][0], sh[i][1], sh[i][2], t & 1, t >> 1, 300 + i);
    npu_sim_close(s);
    {
        int16_t *A = calloc(4096 * 5, sizeof *A), *B = calloc(5 * 5, sizeof *B);
        npu_gemm_report_t r1, r2;
        s = open_sim(&c1, 14, 0);
        /* FlexSA: its pick (Mt = 256) is the same at both beats and its Y tiles whole bursts */
        cr_assert_eq(npu_gemm_run_modes(&c1, s, 4096, 5, 5, A, B, 0, 0, NPU_EMIT_FLEXSA, NULL, 50000000, &r1),
                     NPU_GEMM_PASS);
        npu_sim_close(s);
        s = open_sim(&c2, 14, 0);
        cr_assert_eq(npu_gemm_run_modes(&c2, s, 4096, 5, 5, A, B, 0, 0, NPU_EMIT_FLEXSA, NULL, 50000000, &r2),
                     NPU_GEMM_PASS);
        cr_assert(r1.plan.Mt == r2.plan.Mt && r1.plan.Mt == 256, "Mt %d and %d", r1.plan.Mt, r2.plan.Mt);
        npu_sim_close(s);
        /* X: 40,960 dense bytes = 1,280 beats of 32 or 640 of 64; Y: 81,920 bytes */
        cr_assert_eq(r1.run.cnt[NPU_CNT_dram_rd_x], 40960);
        cr_assert_eq(r2.run.cnt[NPU_CNT_dram_rd_x], 40960);
        cr_assert_eq(r2.run.cnt[NPU_CNT_dram_wr_y], 81920);
        cr_assert_eq(2 * r2.run.cnt[NPU_CNT_dram_wr_bursts], r1.run.cnt[NPU_CNT_dram_wr_bursts],
                     "write bursts %llu at 64 B, %llu at 32 B",
                     (unsigned long long)r2.run.cnt[NPU_CNT_dram_wr_bursts],
                     (unsigned long long)r1.run.cnt[NPU_CNT_dram_wr_bursts]);
        npu_gemm_report_free(&r1);
        npu_gemm_report_free(&r2);
        free(A);
        free(B);
    }
    npu_funcsim_config(&c1);
}

Test(gemm_fake, random_s2_a) { gemm_batch(2, 1001, 25, 0, 0); }
Test(gemm_fake, random_s2_b_jitter) { gemm_batch(2, 1002, 25, 300, 50); }
Test(gemm_fake, random_s8_a) { gemm_batch(8, 2001, 25, 0, 0); }
Test(gemm_fake, random_s8_b_jitter) { gemm_batch(8, 2002, 25, 300, 50); }

Test(gemm_fake, wrap_around_through_the_npu)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    int M = 3, N = 5, K = 6;
    int16_t A[18], B[30];
    int32_t C[15];
    npu_gemm_report_t rep;
    for (int i = 0; i < 18; i++) A[i] = -32768;
    for (int i = 0; i < 30; i++) B[i] = -32768;
    cr_assert_eq(npu_gemm_run(&c, s, M, N, K, A, B, 0, 0, C, 1000000, &rep), NPU_GEMM_PASS);
    for (int i = 0; i < 15; i++)
        cr_assert_eq(C[i], INT32_MIN, "6 * 2^30 mod 2^32 = 2^31 -> INT32_MIN"); /* 6*2^30 = 2^32 + 2^31 */
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
}

Test(gemm_fake, queue_depth_one_and_tiny_token_max)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s;
    c.queue_depth = 1;
    c.token_max = 2;
    s = open_sim(&c, 5, 0);
    gemm_case(s, &c, 70, 9, 333, 0, 1, 9); /* many chunks and tiles */
    npu_sim_close(s);
}

/* The tokens matter: without them the queues race and the fake computes garbage for some seed;
 * with them every seed is bit-exact. */
Test(gemm_fake, missing_tokens_are_caught)
{
    npu_cfg_t c = test_cfg(2);
    int M = 40, N = 12, K = 1200, broken = 0;
    int16_t *A = malloc((size_t)M * K * 2), *B = malloc((size_t)K * N * 2);
    uint64_t st = 3;
    fill(A, (size_t)M * K, &st);
    fill(B, (size_t)K * N, &st);
    npu_funcsim_jitter(400);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        npu_sim_t *s = open_sim(&c, seed, 0);
        npu_gemm_report_t rep;
        npu_run_result_t r;
        size_t bad;
        int32_t *got = malloc((size_t)M * N * 4), *exp = malloc((size_t)M * N * 4);
        cr_assert_eq(npu_gemm_compile(&c, 1u << 24, M, N, K, 0, 0, &rep), NPU_GEMM_PASS);
        cr_assert(rep.plan.k_chunks >= 3, "enough chunks to reuse buffers");
        npu_write_i16(npu_sim_dram(s, NULL), rep.args.a, rep.args.pitch_a, M, K, A, (size_t)K);
        npu_write_i16(npu_sim_dram(s, NULL), rep.args.b, rep.args.pitch_b, K, N, B, (size_t)N);
        for (size_t i = 0; i < rep.prog.n; i++)
            npu_insn_set_tok(&rep.prog.insn[i], 0);
        cr_assert_eq(npu_run_program(&c, s, rep.prog_base, rep.prog.insn, rep.prog.n, 10000000, &r), NPU_RUN_DONE);
        npu_read_i32(npu_sim_dram(s, NULL), rep.args.c, rep.args.pitch_c, M, N, got, (size_t)N);
        npu_golden_gemm(M, N, K, A, (size_t)K, 0, B, (size_t)N, 0, exp, (size_t)N);
        bad = npu_compare_i32(M, N, got, (size_t)N, exp, (size_t)N, NULL, NULL, NULL, NULL);
        broken += bad > 0;
        npu_gemm_report_free(&rep);
        npu_sim_close(s);
        free(got);
        free(exp);
    }
    cr_assert(broken > 0, "a token-less program must fail on the fake for some seed");
    free(A);
    free(B);
}

Test(gemm_fake, counter_check_catches_a_wrong_counter)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    int16_t A[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, B[12] = {1, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    npu_gemm_report_t rep;
    char msg[256];
    cr_assert_eq(npu_gemm_run(&c, s, 3, 3, 4, A, B, 0, 0, NULL, 1000000, &rep), NPU_GEMM_PASS);
    cr_assert_eq(npu_check_counters(rep.run.cnt, &rep.expect, msg, sizeof msg), 0);
    cr_assert_str_eq(msg, "");
    rep.run.cnt[NPU_CNT_dram_rd_w] += 8;
    cr_assert_eq(npu_check_counters(rep.run.cnt, &rep.expect, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "dram_rd_w") != NULL, "%s", msg);
    rep.run.cnt[NPU_CNT_dram_rd_w] -= 8;
    rep.run.cnt[NPU_CNT_macs_core3] += 1;
    cr_assert_eq(npu_check_counters(rep.run.cnt, &rep.expect, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "macs_core3") != NULL, "%s", msg);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
}

Test(gemm_fake, host_errors)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s = open_sim(&c, 1, 0);
    npu_gemm_report_t rep;
    int16_t *A = calloc((size_t)4000 * 4000, 2);
    cr_assert_not_null(A);
    /* 4000 x 4000 int16 A + B + int32 C = 128 MB: does not fit 16 MiB; the message names the
     * bytes (A and B 4000 rows of 8000 bytes, C 4000 rows of 16000 bytes: the tensors alone
     * exceed the DRAM, so the program is not counted) and the limit */
    cr_assert_eq(npu_gemm_run(&c, s, 4000, 4000, 4000, A, A, 0, 0, NULL, 1000, &rep), NPU_GEMM_NO_FIT);
    cr_assert_eq(rep.dram_need, 128000000ull);
    cr_assert(strstr(rep.host_msg, "needs more than 128000000 bytes of DRAM") != NULL, "%s", rep.host_msg);
    cr_assert(strstr(rep.host_msg, "the DRAM holds 16777216 bytes") != NULL, "%s", rep.host_msg);
    npu_gemm_report_free(&rep);
    free(A);
    npu_sim_close(s);
}

/* The emitter's per-wave FlexSA modes (Algorithm 1; skinny n-blocks drain with split_rows) on the
 * functional model: bit-exact, and the counters (waves/rows per mode, MACs per core) add up. */
static void policy_batch(int S, uint64_t seed, int count, int policy)
{
    npu_cfg_t c = test_cfg(S);
    npu_sim_t *s;
    npu_funcsim_jitter(0);
    s = open_sim(&c, seed, 0);
    for (int i = 0; i < count; i++) {
        int M = pick(&seed, 2 * S), N = pick(&seed, 2 * S), K = pick(&seed, 2 * S);
        gemm_case_modes(s, &c, M, N, K, i & 1, (i >> 1) & 1, policy, seed + (uint64_t)i);
    }
    {   /* the cross-mode sequences of Fig. 9: VSW then ISW; FW then HSW on two n-blocks */
        gemm_case_modes(s, &c, 37, S >= 8 ? 6 : S, 2 * S + 5, 0, 0, policy, seed);
        gemm_case_modes(s, &c, 37, 3 * S + 1, 2 * S + 5, 0, 0, policy, seed + 1);
    }
    /* 1G4C: an odd Mt (M < 2S) with two n-blocks needs the Mt + 1 OBUF region; larger shapes */
    gemm_case_modes(s, &c, 2 * S - 1, 4 * S + 3, 3 * S + 1, 0, 0, policy, seed + 2);
    gemm_case_modes(s, &c, 9 * S + 3, 5 * S + 1, 7 * S - 2, 1, 0, policy, seed + 3);
    npu_sim_close(s);
}
Test(gemm_fake, flexsa_modes_s2) { policy_batch(2, 3001, 20, NPU_EMIT_FLEXSA); }
Test(gemm_fake, flexsa_modes_s8) { policy_batch(8, 3002, 20, NPU_EMIT_FLEXSA); }
Test(gemm_fake, policy_1g4c_s2) { policy_batch(2, 3011, 20, NPU_EMIT_1G4C); }
Test(gemm_fake, policy_1g4c_s8) { policy_batch(8, 3012, 20, NPU_EMIT_1G4C); }

/* Tiles from the slicing stage (npu gemm --slicing burst|noburst), m-major and n-major tile
 * orders, on the functional model: bit-exact and the counters; some shapes must run n-major (the
 * GEMM reloads both operands at every step, so the slicer prefers n-major only where its edge
 * tiles overlap better: the seeds are ones whose shapes include such a case). */
static void sliced_batch(int S, uint64_t seed, int count)
{
    npu_cfg_t c = test_cfg(S);
    npu_sim_t *s;
    int nmajor = 0;
    npu_funcsim_jitter(0);
    s = open_sim(&c, seed, 0);
    for (int i = 0; i < count; i++) {
        int M = pick(&seed, 8 * S), N = pick(&seed, 8 * S), K = pick(&seed, 4 * S);
        int slicing = i & 1 ? NPU_GEMM_SLICING_NOBURST : NPU_GEMM_SLICING_BURST;
        npu_gemm_plan_t p;
        if (npu_gemm_tile_sliced(&c, M, N, K, i & 1 ? NPU_SLICE_NOBURST : NPU_SLICE_BURST, NPU_POLICY_1G1C, &p) != 0)
            continue;
        cr_assert_eq(npu_gemm_plan_check(&c, &p), 0);
        nmajor += p.order;
        gemm_case_modes(s, &c, M, N, K, i % 3 == 1, i % 3 == 2, (i & 2 ? NPU_EMIT_FLEXSA : NPU_EMIT_FW) | slicing,
                        seed + (uint64_t)i);
    }
    gemm_case_modes(s, &c, 40 * S, 36 * S, 4 * S, 0, 0, NPU_EMIT_FLEXSA | NPU_GEMM_SLICING_BURST, seed + 99);
    npu_sim_close(s);
    cr_assert_gt(nmajor, 0, "no shape ran n-major: the test lost its purpose");
}
/* Rows longer than 65,535 bytes: GNMT's 36,548-wide layers fit the pitch field with a stride
 * shift (one LOAD / STORE per tile); 65,537 elements (an odd count past the field) take one LOAD /
 * STORE per row, loads one chunk ahead. Bit-exact with every counter, both policies. */
Test(gemm_fake, rows_past_the_pitch_field)
{
    npu_cfg_t c = test_cfg(2);
    npu_sim_t *s;
    npu_funcsim_jitter(0);
    s = open_sim(&c, 77, 0);
    gemm_case_modes(s, &c, 9, 33000, 11, 0, 0, NPU_EMIT_FW, 78);       /* B and C rows, shifted */
    gemm_case_modes(s, &c, 7, 5, 33001, 0, 0, NPU_EMIT_FLEXSA, 79);    /* A rows, shifted */
    gemm_case_modes(s, &c, 7, 5, 33001, 1, 0, NPU_EMIT_FW, 80);        /* A transposed: short rows */
    gemm_case_modes(s, &c, 3, 65537, 5, 0, 0, NPU_EMIT_FW, 81);        /* B and C: a LOAD per row */
    gemm_case_modes(s, &c, 3, 5, 65537, 0, 0, NPU_EMIT_FLEXSA, 82);    /* A: a LOAD per row */
    npu_sim_close(s);
}

/* How many LOAD / STORE instructions a GEMM's program has, and how many have a stride shift. */
static void count_dma(const npu_cfg_t *c, int M, int N, int K, int *ndma, int *nshift)
{
    npu_gemm_report_t rep;
    *ndma = *nshift = 0;
    cr_assert_eq(npu_gemm_compile(c, 1ull << 30, M, N, K, 0, 0, &rep), NPU_GEMM_PASS);
    for (size_t i = 0; i < rep.prog.n; i++) {
        npu_fields_t f;
        cr_assert_eq(npu_decode(&rep.prog.insn[i], &f), 0);
        if (f.op != NPU_OP_LOAD && f.op != NPU_OP_STORE)
            continue;
        (*ndma)++;
        *nshift += npu_insn_get(&rep.prog.insn[i], NPU_FLD_LOAD_stride_shift) != 0;
    }
    npu_gemm_report_free(&rep);
}

/* The pitch field's reach in instructions: a shifted pitch keeps one LOAD per tile. */
Test(gemm_fake, stride_shift_keeps_one_load_per_tile)
{
    npu_cfg_t c = test_cfg(2);
    int nd_short, ns_short, nd_long, ns_long;
    count_dma(&c, 9, 32000, 11, &nd_short, &ns_short); /* pitches 64,000 and 128,000 (C) */
    count_dma(&c, 9, 33000, 11, &nd_long, &ns_long);   /* 66,000 (B) and 132,000 (C) */
    cr_assert_gt(ns_long, 0, "no LOAD / STORE used a stride shift");
    cr_assert_lt(nd_long, 2 * nd_short, "%d LOAD / STOREs against %d: rows went one by one",
                 nd_long, nd_short);
}

Test(gemm_fake, sliced_tiles_s2) { sliced_batch(2, 3023, 30); }
Test(gemm_fake, sliced_tiles_s8) { sliced_batch(8, 3022, 30); }

/* 1G4C on one 2S x 2S block: four S x S sub-tiles, each loaded into every core by its own LDW
 * (16 LDWs, 4 SPM reads per stationary row: no multicast) and run as one ISW WAVE. */
Test(gemm_fake, policy_1g4c_counters)
{
    npu_cfg_t c = test_cfg(8);
    npu_sim_t *s = open_sim(&c, 5, 0);
    int16_t A[64 * 16], B[16 * 16];
    uint64_t st = 11;
    npu_gemm_report_t rep;
    fill(A, sizeof A / sizeof A[0], &st);
    fill(B, sizeof B / sizeof B[0], &st);
    /* gemm_tiling's tiles: one 64-row tile (the slicing stage splits M in two, B's band kept) */
    cr_assert_eq(npu_gemm_run_modes(&c, s, 64, 16, 16, A, B, 0, 0, NPU_EMIT_1G4C | NPU_GEMM_SLICING_HEURISTIC,
                                    NULL, 1000000, &rep),
                 NPU_GEMM_PASS, "%s", rep.counters_msg);
    cr_assert_eq(rep.plan.m_tiles, 1);
    cr_assert_eq(rep.run.cnt[NPU_CNT_waves_isw], 4u);
    cr_assert_eq(rep.run.cnt[NPU_CNT_waves_fw] + rep.run.cnt[NPU_CNT_waves_hsw] +
                     rep.run.cnt[NPU_CNT_waves_vsw], 0u);
    cr_assert_eq(rep.run.cnt[NPU_CNT_rows_isw], 4u * 64);
    for (int q = 0; q < 4; q++) /* each core: 16 rows x 8 x 8 per sub-tile, 4 sub-tiles */
        cr_assert_eq(rep.run.cnt[NPU_CNT_macs_core0 + q], 4u * 16 * 64, "core %d", q);
    /* stationary: 16 LDWs x 8 rows delivered to one core each */
    cr_assert_eq(rep.run.cnt[NPU_CNT_lbuf_v_words], 16u * 8);
    cr_assert_eq(rep.run.cnt[NPU_CNT_lbuf_h_words], 4u * 64);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
}

Test(gemm_fake, flexsa_modes_counters)
{
    npu_cfg_t c = test_cfg(8);
    npu_sim_t *s = open_sim(&c, 5, 0);
    int16_t A[37 * 21], B[21 * 6];
    uint64_t st = 9;
    npu_gemm_report_t rep;
    fill(A, sizeof A / sizeof A[0], &st);
    fill(B, sizeof B / sizeof B[0], &st);
    /* one tile (gemm_tiling's: the counts below are its waves, whatever the slicing stage picks) */
    cr_assert_eq(npu_gemm_run_modes(&c, s, 37, 6, 21, A, B, 0, 0, NPU_EMIT_FLEXSA | NPU_GEMM_SLICING_HEURISTIC, NULL,
                                    1000000, &rep),
                 NPU_GEMM_PASS, "%s", rep.counters_msg);
    cr_assert_eq(rep.plan.m_tiles, 1);
    cr_assert_eq(rep.run.cnt[NPU_CNT_waves_vsw], 1u);
    cr_assert_eq(rep.run.cnt[NPU_CNT_waves_isw], 1u);
    cr_assert_eq(rep.run.cnt[NPU_CNT_waves_fw] + rep.run.cnt[NPU_CNT_waves_hsw], 0u);
    cr_assert_eq(rep.run.cnt[NPU_CNT_rows_vsw], 37u);
    /* ISW k=5 n=6: cores 0, 2, 1, 3 get 10, 9, 9, 9 rows */
    cr_assert_eq(rep.run.cnt[NPU_CNT_macs_core0], 10u * 30 + 19u * 8 * 6);
    cr_assert_eq(rep.run.cnt[NPU_CNT_macs_core3], 9u * 30 + 18u * 8 * 6);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
}
