/*
 * test_store_pipe.c - pipelined STOREs (STORE_PIPELINE = 1, docs/memory.md "Pipelined STOREs"):
 * the STORE engine takes the next descriptor once the last one's W beats are sent, while its B
 * responses are still due, and each STORE's `done` (its tokens: a later LOAD may read its bytes)
 * still comes after all of its own B responses. The DRAM model's test-only write delay
 * (dram_set_write_delay) answers each write burst that many cycles after its last W beat and
 * returns 0xA5 bytes to a read of a burst not answered yet, so:
 *  store_pipe/store_then_load_bit_exact  STOREs then a LOAD of their bytes (after the last
 *      STORE's token) and a STORE of what it read: bit-exact, with and without random stalls;
 *      a `done` before a STORE's own B responses lets the LOAD read 0xA5 bytes;
 *  store_pipe/back_to_back_overlap       N STOREs back to back, each cycle count against a
 *      formula: with STORE_PIPELINE = 1 a STORE takes its beats and the restart (below the
 *      B delay: the responses overlap the next STORE's beats), with 0 its beats and the delay;
 *  store_pipe/older_b_error_while_next_runs  an error response of a STORE whose successor was
 *      already accepted: DRAM_RESP on the older one (ERR_PC, ERR_INFO its burst), no hang, the
 *      next program runs;
 *  store_pipe/next_check_error_waits     the successor fails its range check while the older
 *      STORE's B responses are due: DRAM_ADDR on the successor's pc (reported after the older
 *      one's done), the older STORE's bytes all written.
 * The tests run at every config; with STORE_PIPELINE = 0 they check the one-at-a-time engine.
 */
#include "rtl_common.h"
#include <string.h>

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0); \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define PUSHT(p, expr, tok) do { npu_insn_t _i; cr_assert_eq((expr), 0); npu_insn_tok(&_i, (tok)); \
                                 cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

static unsigned word(void) { return 4u * (unsigned)rtl_cfg().s; } /* one SPM word */
static unsigned dbeat(void) { npu_cfg_t c = rtl_cfg(); return (unsigned)npu_cfg_beat(&c); }

/* Runs p (at DRAM 0) with the write delay and stalls, `init` at byte `at` first; expects rc and
 * returns the open sim (the caller checks the DRAM and closes it). */
static npu_sim_t *run_delayed(const npu_prog_t *p, unsigned delay, unsigned stall, double bw,
                              const uint8_t *init, uint32_t at, size_t n, int want_rc, npu_run_result_t *r)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, stall, bw, 11);
    dram_t *d = npu_sim_dram_model(s);
    dram_set_write_delay(d, delay);
    if (init)
        memcpy(dram_mem(d, NULL) + at, init, n);
    int rc = npu_run_program(&cfg, s, 0, p->insn, p->n, 2000000, r);
    cr_assert_eq(rc, want_rc, "run rc %d (expected %d) state %s err %s pc %u", rc, want_rc,
                 npu_state_name(r->state), npu_error_name(r->err) ? npu_error_name(r->err) : "-",
                 (unsigned)r->err_pc);
    return s;
}

/* NS STOREs of R rows of RB bytes (not whole words: strobes) from SPM A to DRAM dst, a token
 * from the last through EXEC to a LOAD of all of dst into SPM B, and a STORE of B to dst2;
 * the source comes from DRAM src by a first LOAD. dst and dst2 must equal src. */
Test(store_pipe, store_then_load_bit_exact)
{
    enum { NS = 6, R = 8 };
    unsigned W = word(), RB = 2 * W - 8, rows = NS * R;
    uint32_t src = 1u << 16, dst = 2u << 16, dst2 = 3u << 16;
    size_t bytes = (size_t)rows * RB;
    uint8_t *init = rtl_random_bytes(bytes, 0x5707e);
    npu_prog_t p; npu_prog_init(&p);
    PUSHT(p, npu_enc_load(I, NPU_TAG_X, 0, rows, src, 0, 2, RB, RB), NPU_TOK_PUSH_NEXT);
    PUSHT(p, npu_enc_sync(I, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    for (unsigned i = 0; i < NS; i++)
        PUSHT(p, npu_enc_store(I, NPU_TAG_Y, R, dst + i * R * RB, i * R * 2, 2, RB, RB),
              (i == 0 ? NPU_TOK_POP_PREV : 0) | (i == NS - 1 ? NPU_TOK_PUSH_PREV : 0));
    PUSHT(p, npu_enc_sync(I, NPU_OP_SYNC_E), NPU_TOK_POP_NEXT | NPU_TOK_PUSH_PREV);
    PUSHT(p, npu_enc_load(I, NPU_TAG_X, 0, rows, dst, 1024, 2, RB, RB), NPU_TOK_POP_NEXT | NPU_TOK_PUSH_NEXT);
    PUSHT(p, npu_enc_sync(I, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    PUSHT(p, npu_enc_store(I, NPU_TAG_Y, rows, dst2, 1024, 2, RB, RB), NPU_TOK_POP_PREV);
    for (unsigned stall = 0; stall <= 20; stall += 20) {
        npu_run_result_t r;
        npu_sim_t *s = run_delayed(&p, 200, stall, 0, init, src, bytes, NPU_RUN_DONE, &r);
        const uint8_t *m = dram_mem(npu_sim_dram_model(s), NULL);
        cr_assert(memcmp(m + dst, init, bytes) == 0, "stall %u: the STOREs' bytes differ", stall);
        cr_assert(memcmp(m + dst2, init, bytes) == 0,
                  "stall %u: the LOAD after the last STORE's token read bytes not yet answered "
                  "(0xA5: `done` before the STORE's own B responses)", stall);
        npu_sim_close(s);
    }
    npu_prog_free(&p);
    free(init);
}

/* The cycles of n STOREs back to back (no tokens): 4 rows of 8 DRAM beats each from SPM 0,
 * contiguous, to distinct DRAM places, with a B delay of D and a beat a cycle of bandwidth. */
static uint64_t stores_cycles(unsigned n, unsigned D)
{
    unsigned RB = 8 * dbeat();
    npu_prog_t p; npu_prog_init(&p);
    for (unsigned i = 0; i < n; i++)
        PUSH(p, npu_enc_store(I, NPU_TAG_Y, 4, (1u << 16) + i * 4 * RB, 0, RB / word(), RB, RB));
    npu_run_result_t r;
    npu_sim_t *s = run_delayed(&p, D, 0, dbeat(), NULL, 0, 0, NPU_RUN_DONE, &r);
    npu_sim_close(s);
    npu_prog_free(&p);
    return r.end_cycle - r.start_cycle;
}

/* Per STORE (the increment from 1 to 17 STOREs, so the program's fetch and start cancel): 32
 * beats. Pipelined: the bus time (a beat a cycle: two SPM words a cycle at BEAT_WORDS = 2, one
 * at 1; DRAM_BURST_COST per burst) and the restart (accept, the two check cycles, the
 * registered burst length, the read-ahead to the first W beat: ~9), below beats + D: the
 * delayed responses overlap the next STORE. One at a time: beats + D at least (each STORE
 * waits for its last response). */
Test(store_pipe, back_to_back_overlap)
{
    npu_cfg_t cfg = rtl_cfg();
    enum { N = 16, D = 30, BEATS = 32 };
    uint64_t c1 = stores_cycles(1, D), cn = stores_cycles(N + 1, D);
    double per = (double)(cn - c1) / N;
    int bus = BEATS + (BEATS + cfg.max_burst_beats - 1) / cfg.max_burst_beats * cfg.dram_burst_cost;
    if (cfg.store_pipeline)
        cr_assert(per <= bus + 12, "pipelined STOREs: %.2f cycles each, expected <= %d (bus + restart; "
                  "B delay %d overlapped)", per, bus + 12, D);
    else
        cr_assert(per >= BEATS + D, "one STORE at a time: %.2f cycles each, expected >= %d (beats + B delay)",
                  per, BEATS + D);
    cr_log_info("%s: %.2f cycles per STORE of %d beats, B delay %d (STORE_PIPELINE %d)", cfg.name, per,
                BEATS, D, cfg.store_pipeline);
}

/* STORE 0 (one row of 4 words) hits the error window; STORE 1 behind it is accepted while
 * STORE 0's response is delayed (pipelined). DRAM_RESP on pc 0, ERR_INFO its burst; no hang,
 * and the same NPU then runs the program without the window. */
Test(store_pipe, older_b_error_while_next_runs)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned W = word();
    uint32_t dst = 1u << 16, dst1 = 2u << 16;
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 1, dst, 0, 4, 4 * W, 4 * W));
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 16, dst1, 0, 1, W, 2 * W));
    for (unsigned stall = 0; stall <= 20; stall += 20) {
        npu_sim_t *s = rtl_open(&cfg, stall, 0, 5);
        dram_t *d = npu_sim_dram_model(s);
        dram_set_write_delay(d, 60);
        dram_set_error_range(d, dst + W, dst + 2 * W);
        npu_run_result_t r;
        int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 200000, &r);
        cr_assert_eq(rc, NPU_RUN_ERROR, "stall %u: run rc %d", stall, rc);
        cr_assert_eq(r.err, NPU_ERR_DRAM_RESP, "stall %u: error %s", stall, npu_error_name(r.err));
        cr_assert_eq(r.err_pc, 0, "stall %u: ERR_PC %u, expected the older STORE's 0", stall, (unsigned)r.err_pc);
        cr_assert_eq(r.err_info, dst, "stall %u: ERR_INFO 0x%x, expected its burst 0x%x", stall,
                     (unsigned)r.err_info, (unsigned)dst);
        dram_stats_t st;
        dram_get_stats(d, &st);
        cr_assert_eq(st.proto_errors, 0);
        dram_set_error_range(d, 0, 0);
        rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 200000, &r);
        cr_assert_eq(rc, NPU_RUN_DONE, "stall %u: the program again without the window: rc %d", stall, rc);
        npu_sim_close(s);
    }
    npu_prog_free(&p);
}

/* A LOAD fills the SPM, STORE 0 writes 32 rows (its responses delayed), STORE 1 runs past the
 * end of the DRAM: DRAM_ADDR on STORE 1's pc (not STORE 0's: the failed check waits for STORE
 * 0's done), and all of STORE 0's bytes are written. */
Test(store_pipe, next_check_error_waits)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned W = word(), rows = 32;
    uint32_t src = 1u << 16, dst = 2u << 16;
    uint32_t end = (uint32_t)((uint64_t)1 << cfg.dram_addr_bits); /* 4 GiB: 0, addresses wrap */
    size_t bytes = (size_t)rows * W;
    uint8_t *init = rtl_random_bytes(bytes, 0xc4ec);
    npu_prog_t p; npu_prog_init(&p);
    PUSHT(p, npu_enc_load(I, NPU_TAG_X, 0, rows, src, 0, 1, W, W), NPU_TOK_PUSH_NEXT);
    PUSHT(p, npu_enc_sync(I, NPU_OP_SYNC_E), NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    PUSHT(p, npu_enc_store(I, NPU_TAG_Y, rows, dst, 0, 1, W, W), NPU_TOK_POP_PREV);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 4, end - 2 * W, 0, 1, W, W));
    npu_run_result_t r;
    npu_sim_t *s = run_delayed(&p, 60, 0, 0, init, src, bytes, NPU_RUN_ERROR, &r);
    cr_assert_eq(r.err, NPU_ERR_DRAM_ADDR, "error %s", npu_error_name(r.err));
    cr_assert_eq(r.err_pc, 3, "ERR_PC %u, expected the failing STORE's 3 (reported before the "
                 "older STORE's done?)", (unsigned)r.err_pc);
    cr_assert(memcmp(dram_mem(npu_sim_dram_model(s), NULL) + dst, init, bytes) == 0,
              "the older STORE's bytes are not all written");
    npu_sim_close(s);
    npu_prog_free(&p);
    free(init);
}
