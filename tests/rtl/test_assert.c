/*
 * test_assert.c - the RTL's invariant checks (rtl/npu_assert.vh, models built with
 * +define+NPU_ASSERTS) fire, stop the model and reach the host as a clear report.
 *
 * No RTL is changed for this: the DRAM model breaks the AXI-like protocol on purpose
 * (dram_set_faults, tb/dram_model.h) and the NPU's DRAM-port assertions must catch it:
 *   R_EXTRA_BEAT  a read burst returns one beat more than AR asked for  -> "R beat ... not requested"
 *   R_EARLY_LAST  r_last one beat early                                  -> "r_last on a wrong beat"
 *   R_BAD_ID      r_id of no outstanding read                            -> "R id ... not outstanding"
 *   B_EXTRA       a second B response for one write burst                -> "B with no write outstanding"
 * Any NPU_ASSERT line is accepted (the check may sit in the read arbiter, fetch or a DMA engine);
 * the test prints the one that fired. NPU_ASSERT_SITES (Makefile: number of NPU_ASSERT_FAIL uses
 * in rtl/) = 0 means the RTL has no checks yet: the fault tests then skip, saying so.
 */
#include <string.h>

#include "rtl_common.h"

#ifndef NPU_ASSERT_SITES
#define NPU_ASSERT_SITES 0
#endif

#define BUDGET 200000u

/* A program touching both DRAM ports: LOAD X (4 rows of 4 beats), SYNC, STORE Y of the same words. */
static void load_store_prog(const npu_cfg_t *cfg, npu_prog_t *p)
{
    unsigned beat = 4u * (unsigned)cfg->s;
    npu_insn_t i;
    npu_prog_init(p);
    cr_assert_eq(npu_enc_load(&i, NPU_TAG_X, 0, 4, 4096, 0, 4, 4 * beat, 4 * beat), 0);
    npu_insn_tok(&i, NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &i), 0);
    cr_assert_eq(npu_enc_sync(&i, NPU_OP_SYNC_E), 0);
    npu_insn_tok(&i, NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &i), 0);
    cr_assert_eq(npu_enc_store(&i, NPU_TAG_Y, 4, 8192, 0, 4, 4 * beat, 4 * beat), 0);
    npu_insn_tok(&i, NPU_TOK_POP_PREV);
    cr_assert_eq(npu_prog_push(p, &i), 0);
}

/* Runs the program with the given DRAM faults; returns npu_run_program's code. */
static int run_with_faults(unsigned faults, npu_sim_t **out, npu_run_result_t *r)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_prog_t p;
    size_t bytes;
    uint8_t *dram = npu_sim_dram(s, &bytes);
    for (unsigned k = 0; k < 16u * 4u * (unsigned)cfg.s; k++)
        dram[4096 + k] = (uint8_t)(k * 7u + 1u);
    load_store_prog(&cfg, &p);
    dram_set_faults(npu_sim_dram_model(s), faults);
    int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, BUDGET, r);
    npu_prog_free(&p);
    *out = s;
    return rc;
}

/* The control: without faults the program completes, copies the data and no check fires. */
Test(assert, no_fault_no_assertion)
{
    npu_sim_t *s;
    npu_run_result_t r;
    int rc = run_with_faults(0, &s, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "run rc %d state %s err %s", rc, npu_state_name(r.state),
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    cr_assert_null(npu_sim_assert_msg(s, NULL), "assertion without a fault: %s",
                   npu_sim_assert_msg(s, NULL));
    cr_assert_eq(npu_sim_finished(s), 0);
    size_t bytes;
    uint8_t *dram = npu_sim_dram(s, &bytes);
    unsigned n = 16u * 4u * (unsigned)rtl_cfg().s;
    cr_assert_eq(memcmp(dram + 4096, dram + 8192, n), 0, "STORE did not write back what LOAD read");
    npu_sim_close(s);
}

static void expect_assertion(unsigned faults, const char *what)
{
    if (NPU_ASSERT_SITES == 0)
        cr_skip_test("rtl/ has no NPU_ASSERT_FAIL checks yet: nothing can catch %s", what);
    npu_sim_t *s;
    npu_run_result_t r;
    int rc = run_with_faults(faults, &s, &r);
    uint64_t at = 0;
    const char *m = npu_sim_assert_msg(s, &at);
    cr_assert_eq(rc, NPU_RUN_SIM_STOPPED,
                 "DRAM fault '%s': no RTL assertion fired (run rc %d, state %s, err %s, "
                 "%llu cycles)", what, rc, npu_state_name(r.state),
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?",
                 (unsigned long long)(r.end_cycle - r.start_cycle));
    cr_assert_not_null(m, "$finish without an NPU_ASSERT line");
    cr_assert_eq(strncmp(m, "NPU_ASSERT npu.", 15), 0, "message '%s' lacks the instance path", m);
    cr_assert(strstr(m, ": ") && strlen(strstr(m, ": ")) > 3, "message '%s' has no text", m);
    cr_assert(at >= r.start_cycle && at <= r.end_cycle, "assertion cycle %llu outside the run",
              (unsigned long long)at);
    /* the model stays stopped: no further cycles, run keeps reporting the stop */
    uint64_t c = npu_sim_cycle(s);
    cr_assert_eq(npu_sim_run(s, 100), -1);
    npu_sim_step(s, 100);
    cr_assert_eq(npu_sim_cycle(s), c, "the model advanced after $finish");
    cr_log_info("DRAM fault '%s' caught at cycle %llu: %s", what, (unsigned long long)at, m);
    npu_sim_close(s);
}

Test(assert, r_extra_beat) { expect_assertion(DRAM_FAULT_R_EXTRA_BEAT, "R: one beat too many"); }
Test(assert, r_early_last) { expect_assertion(DRAM_FAULT_R_EARLY_LAST, "R: r_last one beat early"); }
Test(assert, r_bad_id) { expect_assertion(DRAM_FAULT_R_BAD_ID, "R: r_id not outstanding"); }
Test(assert, b_extra) { expect_assertion(DRAM_FAULT_B_EXTRA, "B: response without a write"); }

/* Through the GEMM driver, as the CLI sees it: the report says where and why the run stopped. */
Test(assert, gemm_report_names_the_assertion)
{
    if (NPU_ASSERT_SITES == 0)
        cr_skip_test("rtl/ has no NPU_ASSERT_FAIL checks yet");
    npu_cfg_t cfg = rtl_cfg();
    int M = 2 * cfg.s + 1, N = 2 * cfg.s, K = 2 * cfg.s;
    int16_t *A = malloc(sizeof(int16_t) * (size_t)(M * K));
    int16_t *B = malloc(sizeof(int16_t) * (size_t)(K * N));
    cr_assert(A && B);
    npu_random_operands(M, N, K, 3, A, B);
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 3);
    dram_set_faults(npu_sim_dram_model(s), DRAM_FAULT_R_EXTRA_BEAT);
    npu_gemm_report_t rep;
    int rc = npu_gemm_run(&cfg, s, M, N, K, A, B, 0, 0, NULL, rtl_budget(&cfg, M, N, K), &rep);
    cr_assert_eq(rc, NPU_GEMM_HOST_ERROR, "rc %s", npu_gemm_rc_name(rc));
    cr_assert_eq(strncmp(rep.host_msg, "RTL assertion failed at cycle ", 30), 0, "host_msg '%s'",
                 rep.host_msg);
    cr_assert_not_null(strstr(rep.host_msg, "NPU_ASSERT npu."), "host_msg '%s'", rep.host_msg);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
    free(A);
    free(B);
}
