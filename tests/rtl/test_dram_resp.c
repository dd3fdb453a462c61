/*
 * test_dram_resp.c - DRAM error responses (a poisoned region, a slave error: the DRAM model's
 * dram_set_error_range) stop the NPU with STATUS ERROR DRAM_RESP, ERR_PC on the instruction and
 * ERR_INFO on the faulting beat (LOAD, program fetch) or burst (STORE: one B response per burst),
 * for every unit that reads or writes DRAM; the NPU then runs the next program normally.
 * The range checks (DRAM_ADDR) stop every out-of-range access before it is issued, so these
 * paths are reachable only through the model's error window.
 */
#include "rtl_common.h"

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0); \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

static unsigned beat(void) { return 4u * (unsigned)rtl_cfg().s; } /* one SPM word */

/* Runs p (at DRAM 0) with the error window [lo, hi) and expects DRAM_RESP at (pc, info). Then
 * clears the window and runs `after` (if not NULL) on the same NPU, which must complete. */
static void expect_resp(const npu_prog_t *p, unsigned stall_pct, uint64_t lo, uint64_t hi,
                        uint32_t pc, uint32_t info, const npu_prog_t *after)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, stall_pct, 0, 7);
    dram_t *d = npu_sim_dram_model(s);
    dram_set_error_range(d, lo, hi);
    npu_run_result_t r;
    int rc = npu_run_program(&cfg, s, 0, p->insn, p->n, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "expected ERROR DRAM_RESP, got run rc %d state %s err %s", rc,
                 npu_state_name(r.state), npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    cr_assert_eq(r.err, NPU_ERR_DRAM_RESP, "error %s, expected DRAM_RESP", npu_error_name(r.err));
    cr_assert_eq(r.err_pc, pc, "ERR_PC %u, expected %u", (unsigned)r.err_pc, (unsigned)pc);
    /* ERR_INFO names a DRAM beat: the cases' geometry is in SPM words, which a wide beat
     * (BEAT_WORDS > 1) may hold several of */
    info &= ~((uint32_t)npu_cfg_beat(&cfg) - 1u);
    cr_assert_eq(r.err_info, info, "ERR_INFO 0x%x, expected 0x%x", (unsigned)r.err_info,
                 (unsigned)info);
    dram_stats_t st;
    dram_get_stats(d, &st);
    cr_assert_geq(st.err_bursts, 1, "the model answered no error response");
    cr_assert_eq(st.proto_errors, 0);
    dram_set_error_range(d, 0, 0);
    if (after) {
        rc = npu_run_program(&cfg, s, 0, after->insn, after->n, 200000, &r);
        cr_assert_eq(rc, NPU_RUN_DONE, "the next program after the error: rc %d err %s", rc,
                     npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    }
    npu_sim_close(s);
}

/* A LOAD of 4 rows of 2 beats (row pitch 4 beats in DRAM): the error window covers the second
 * beat of row 2; ERR_INFO is that beat's address, not its burst's. The same LOAD without the
 * window then completes. */
Test(dram_resp, load_names_the_faulting_beat)
{
    uint32_t src = 4096, B = beat();
    uint32_t bad = src + 2 * 4 * B + B;
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 4, src, 0, 2, 2 * B, 4 * B));
    expect_resp(&p, 0, bad, bad + B, 0, bad, &p);
    npu_prog_free(&p);
}

/* Many bursts in flight, random DRAM stalls: 16 rows of 4 beats, 3 LOADs; the window is beat 2
 * of row 9 of the second LOAD, whose later bursts are already requested. The engine drains them
 * and `halted` waits until the DRAM owes no beat, so the next program starts clean. */
Test(dram_resp, load_bursts_in_flight_with_stalls)
{
    uint32_t src = 4096, B = beat();
    npu_prog_t p; npu_prog_init(&p);
    for (unsigned l = 0; l < 3; l++)
        PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 16, src + l * 16 * 8 * B, 0, 4, 4 * B, 8 * B));
    uint32_t bad = src + 16 * 8 * B + 9 * 8 * B + 2 * B;
    expect_resp(&p, 20, bad, bad + B, 1, bad, &p);
    npu_prog_free(&p);
}

/* A transposed LOAD (the Wt / Xt path: its own burst run into the transpose buffers). */
Test(dram_resp, transposed_load)
{
    npu_cfg_t cfg = rtl_cfg();
    uint32_t src = 8192, B = beat();
    unsigned rows = 2u * (unsigned)cfg.s; /* one 2S-row block of 1-beat rows */
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_W, 1, rows, src, 0, 1, B, 1 * B));
    expect_resp(&p, 0, src + 3 * B, src + 4 * B, 0, src + 3 * B, &p);
    npu_prog_free(&p);
}

/* A STORE of one 4-beat row (one burst): the B response is per burst, so ERR_INFO is the
 * address of the burst that holds the poisoned beat (its third), and nothing of it is written. */
Test(dram_resp, store_names_the_burst)
{
    uint32_t dst = 12288, B = beat();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 1, dst, 0, 4, 4 * B, 4 * B));
    expect_resp(&p, 0, dst + 2 * B, dst + 3 * B, 0, dst, &p);
    npu_prog_free(&p);
}

/* 8 rows of 4 beats at a pitch of 8 beats (one burst per row), random stalls: the window is in
 * row 3; the W beats of the bursts already issued are still sent and answered (DRAIN), the
 * unsent data is flushed, and the next program runs. Memory outside the window is written. */
Test(dram_resp, store_bursts_in_flight_with_stalls)
{
    uint32_t dst = 12288, B = beat();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 8, dst, 0, 4, 4 * B, 8 * B));
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 8, dst + 64 * B, 0, 4, 4 * B, 8 * B));
    expect_resp(&p, 20, dst + 3 * 8 * B + B, dst + 3 * 8 * B + 2 * B, 0, dst + 3 * 8 * B, &p);
    npu_prog_free(&p);
}

/* The read-ahead is flushed: 32 rows of 4 beats, the window in row 1. When its B response comes
 * the reader has already read words of rows whose bursts were never issued; FLUSH drops them
 * (and waits for a read still in flight) before the engine goes idle. */
Test(dram_resp, store_flushes_the_read_ahead)
{
    uint32_t dst = 12288, B = beat();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 32, dst, 0, 4, 4 * B, 8 * B));
    expect_resp(&p, 0, dst + 8 * B, dst + 8 * B + B, 0, dst + 8 * B, &p);
    npu_prog_free(&p);
}

/* The program fetch: instruction 5 of a program of SYNCs lies in the window. ERR_INFO is the
 * address of the beat holding it; ERR_PC is where the fetcher stopped (at or before 5). */
Test(dram_resp, program_fetch)
{
    uint32_t base = 16384, B = beat();
    npu_prog_t p; npu_prog_init(&p);
    for (int i = 0; i < 12; i++)
        PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_L));
    uint32_t bad = (base + 5 * 16) / B * B; /* the beat holding instruction 5 */
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    dram_set_error_range(npu_sim_dram_model(s), bad, bad + B);
    npu_run_result_t r;
    int rc = npu_run_program(&cfg, s, base, p.insn, p.n, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "run rc %d", rc);
    cr_assert_eq(r.err, NPU_ERR_DRAM_RESP, "error %s", npu_error_name(r.err));
    cr_assert_eq(r.err_info, bad, "ERR_INFO 0x%x, expected the beat 0x%x", (unsigned)r.err_info,
                 (unsigned)bad);
    cr_assert_leq(r.err_pc, 5, "ERR_PC %u: instructions past the faulting beat were fetched",
                  (unsigned)r.err_pc);
    dram_set_error_range(npu_sim_dram_model(s), 0, 0);
    rc = npu_run_program(&cfg, s, base, p.insn, p.n, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "the same program without the window: rc %d", rc);
    npu_sim_close(s);
    npu_prog_free(&p);
}

/* A transposed STORE (int32: the swapped GEMM's C): 2S + 3 DRAM rows (two row blocks) of three
 * column blocks, pitch 4 beats, so every sub-row is its own one-beat burst; the window is the
 * sub-row (row 1, column block 1), written after all of column block 0's. ERR_INFO is its burst;
 * the bursts in flight drain, the transpose reader stops and the next program runs. */
Test(dram_resp, transposed_store)
{
    npu_cfg_t cfg = rtl_cfg();
    uint32_t dst = 16384, B = beat();
    unsigned rows = 2u * (unsigned)cfg.s + 3;
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store_tr(I, NPU_TAG_Y, rows, dst, 0, 3, 3 * B, 4 * B));
    uint32_t bad = dst + 4 * B + B;
    expect_resp(&p, 20, bad, bad + B, 0, bad, &p);
    npu_prog_free(&p);
}
