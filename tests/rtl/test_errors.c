/*
 * test_errors.c - bad programs end in an error status with the faulting instruction index,
 * never in a hang: illegal opcode, DRAM / SPM / OBUF addresses out of range, malformed
 * descriptors, misaligned program, token overflow, and a deadlock caught by the watchdog.
 */
#include "rtl_common.h"
#include <string.h>

#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0); \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)
#define I (&_i)

static void expect_error(const npu_prog_t *p, uint64_t base, unsigned code, uint32_t pc)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_run_result_t r;
    int rc = npu_run_program(&cfg, s, base, p->insn, p->n, 200000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "expected ERROR %s, got run rc %d state %s err %s",
                 npu_error_name(code), rc, npu_state_name(r.state),
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    cr_assert_eq(r.err, code, "error %s, expected %s", npu_error_name(r.err), npu_error_name(code));
    cr_assert_eq(r.err_pc, pc, "ERR_PC %u, expected %u", (unsigned)r.err_pc, (unsigned)pc);
    /* halted for good: no DRAM traffic after the error */
    uint64_t rd0, wr0, rd1, wr1;
    npu_sim_dram_stats(s, &rd0, &wr0, NULL, NULL, NULL);
    npu_sim_step(s, 200);
    npu_sim_dram_stats(s, &rd1, &wr1, NULL, NULL, NULL);
    cr_assert(rd1 <= rd0 + 64 && wr1 == wr0, "DRAM traffic after the error");
    npu_sim_close(s);
}

static unsigned beat(void) { return 4u * (unsigned)rtl_cfg().s; }
static unsigned spm_words(void) { npu_cfg_t c = rtl_cfg(); return (unsigned)(c.spm_banks * c.spm_bank_words); }

Test(errors, illegal_opcode)
{
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_E));
    npu_insn_t bad = { { 0x1Fu, 0, 0, 0 } };
    cr_assert_eq(npu_prog_push(&p, &bad), 0);
    expect_error(&p, 0, NPU_ERR_ILLEGAL_OPCODE, 1);
    npu_prog_free(&p);
}

Test(errors, dma_dram_address_out_of_range)
{
    npu_cfg_t cfg = rtl_cfg();
    uint32_t end = (uint32_t)((uint64_t)1 << cfg.dram_addr_bits); /* 4 GiB: 0, addresses wrap */
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 1, 4096, 0, 1, beat(), 1 * beat()));
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 2, end - beat(), 0, 1, beat(), 1 * beat()));
    expect_error(&p, 0, NPU_ERR_DRAM_ADDR, 1);
    npu_prog_free(&p);
}

Test(errors, store_dram_address_out_of_range)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 4, (uint32_t)(((uint64_t)1 << cfg.dram_addr_bits) - 2 * beat()), 0, 1,
                          beat(), 1 * beat()));
    expect_error(&p, 0, NPU_ERR_DRAM_ADDR, 0);
    npu_prog_free(&p);
}

Test(errors, spm_address_out_of_range)
{
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_W, 0, 2, 4096, spm_words() - 1, 1, beat(), 1 * beat()));
    expect_error(&p, 0, NPU_ERR_SPM_ADDR, 0);
    npu_prog_free(&p);
}

Test(errors, ldw_spm_address_out_of_range)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_E));
    PUSH(p, npu_enc_ldw(I, 0, NPU_MODE_FW, spm_words() - 2, 1, 2 * cfg.s, 2 * cfg.s));
    expect_error(&p, 0, NPU_ERR_SPM_ADDR, 1);
    npu_prog_free(&p);
}

Test(errors, obuf_address_out_of_range)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_ldw(I, 0, NPU_MODE_FW, 0, 1, 1, 1));
    PUSH(p, npu_enc_wave(I, 0, NPU_MODE_FW, 0, 2, 0, 1, 1, 1, 2 * cfg.obuf_rows - 1));
    expect_error(&p, 0, NPU_ERR_OBUF_ADDR, 1);
    npu_prog_free(&p);
}

Test(errors, zero_rows_is_bad_descriptor)
{
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 0, 4096, 0, 1, beat(), 1 * beat()));
    expect_error(&p, 0, NPU_ERR_BAD_DESC, 0);
    npu_prog_free(&p);
}

Test(errors, odd_dram_address_is_bad_descriptor)
{
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 1, 4096 + 1, 0, 1, beat(), 1 * beat()));
    expect_error(&p, 0, NPU_ERR_BAD_DESC, 0);
    npu_prog_free(&p);
}

Test(errors, wave_k_too_large_is_bad_descriptor)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_wave(I, 0, NPU_MODE_FW, 0, 4, 0, 1, 2 * cfg.s + 1, 1, 0));
    expect_error(&p, 0, NPU_ERR_BAD_DESC, 0);
    npu_prog_free(&p);
}

/* An LDW in `mode` and a bcast WAVE of m rows at OBUF row 0 on its bank end in `code` at the WAVE */
static void bcast_error(unsigned mode, unsigned m, unsigned code)
{
    unsigned S = (unsigned)rtl_cfg().s;
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_ldw(I, 0, mode, 0, 1, S, S));
    PUSH(p, npu_enc_wave(I, 0, mode, 0, m, 0, m < 0x8000, S, S, 0));
    cr_assert_eq(npu_insn_bcast(&p.insn[1]), 0);
    expect_error(&p, 0, code, 1);
    npu_prog_free(&p);
}

/* WAVE bcast (w3[1]) is legal only in ISW, with m < 2^15; its 2m OBUF rows are range checked
 * (m rows fit an OBUF half, 2m do not) */
Test(errors, wave_bcast_only_in_isw)
{
    for (unsigned mode = 0; mode < 3; mode++)
        bcast_error(mode, 4, NPU_ERR_BAD_DESC);
    bcast_error(NPU_MODE_ISW, 0x8000, NPU_ERR_BAD_DESC);
    bcast_error(NPU_MODE_ISW, (unsigned)rtl_cfg().obuf_rows / 2 + 1, NPU_ERR_OBUF_ADDR);
}

Test(errors, misaligned_program)
{
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_E));
    expect_error(&p, 8, NPU_ERR_BAD_PROGRAM, 0);
    npu_prog_free(&p);
}

Test(errors, token_overflow)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    for (int i = 0; i <= cfg.token_max; i++) {
        PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_L));
        npu_insn_tok(&p.insn[p.n - 1], NPU_TOK_PUSH_NEXT);
    }
    npu_run_result_t r;
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 100000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR);
    cr_assert_eq(r.err, NPU_ERR_TOKEN_OVERFLOW, "error %s", npu_error_name(r.err));
    npu_sim_close(s);
    npu_prog_free(&p);
}

/* EXEC waits for a LOAD token that never comes: the NPU's watchdog reports DEADLOCK with the
 * stuck instruction and the queue state instead of hanging. */
Test(errors, deadlock_watchdog)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_S));
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_E));
    npu_insn_tok(&p.insn[1], NPU_TOK_POP_PREV);
    npu_run_result_t r;
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 10ull * cfg.watchdog_cycles, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "rc %d", rc);
    cr_assert_eq(r.err, NPU_ERR_DEADLOCK, "error %s", npu_error_name(r.err));
    cr_assert_eq(r.err_pc, 1u);
    cr_assert_eq((r.err_info >> 4) & 0xF, 1u, "QSTATE in ERR_INFO: one EXEC instruction waiting");
    cr_assert_eq((r.err_info >> 12) & 0xF, 0u, "QSTATE: no l2e token");
    uint64_t cycles = r.end_cycle - r.start_cycle;
    cr_assert(cycles >= (uint64_t)cfg.watchdog_cycles && cycles < 2ull * cfg.watchdog_cycles + 1000,
              "deadlock reported after %llu cycles", (unsigned long long)cycles);
    npu_sim_close(s);
    npu_prog_free(&p);
}

/* The watchdog's report includes the NoC: NOCSTATE (frozen at the error) gives each channel's
 * head flit, waiting or blocked, its group ID and the cores it cannot enter yet. Here the tile of
 * bank 0 reaches cores 0-2 only (masked LDWs, ISW), so the WAVE on bank 0 never issues: DEADLOCK
 * at the WAVE, and the NoC is idle (no flit is stuck: the wait is in EXEC, not in the NoC). */
Test(errors, deadlock_reports_noc_state)
{
    npu_cfg_t cfg = rtl_cfg();
    unsigned S = (unsigned)cfg.s;
    npu_prog_t p; npu_prog_init(&p);
    for (unsigned q = 0; q < 3; q++)
        PUSH(p, npu_enc_ldw_cores(I, 0, NPU_MODE_ISW, 0x100, 1, S, S, 1u << q));
    PUSH(p, npu_enc_wave(I, 0, NPU_MODE_ISW, 0, 2u * (unsigned)cfg.obuf_rows, 0, 1, S, S, 0));
    npu_run_result_t r;
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 10ull * cfg.watchdog_cycles, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "rc %d", rc);
    cr_assert_eq(r.err, NPU_ERR_DEADLOCK, "error %s", npu_error_name(r.err));
    cr_assert_eq(r.err_pc, 3u, "the WAVE is the stuck instruction, not pc %u", (unsigned)r.err_pc);
    char buf[256];
    npu_nocstate_str(r.nocstate, buf, sizeof buf);
    cr_assert_eq(r.nocstate & NPU_NOC_ALL(NPU_NOC_VLD), 0u,
                 "no flit waits in the NoC: NOCSTATE 0x%08x %s", (unsigned)r.nocstate, buf);
    cr_assert_str_eq(buf, "NoC idle");
    npu_sim_close(s);
    npu_prog_free(&p);
}

/* With the NPU's watchdog off, the testbench's cycle limit still ends the run and the host can
 * read which instruction each queue is stuck on. */
Test(errors, testbench_cycle_limit)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    npu_insn_t prog[2];
    cr_assert_eq(npu_enc_sync(&prog[0], NPU_OP_SYNC_E), 0);
    cr_assert_eq(npu_enc_sync(&prog[1], NPU_OP_SYNC_E), 0);
    npu_insn_tok(&prog[1], NPU_TOK_POP_NEXT);
    size_t bytes;
    npu_write_prog(npu_sim_dram(s, &bytes), 0, prog, 2);
    npu_sim_csr_write(s, NPU_CSR_PROG_BASE, 0);
    npu_sim_csr_write(s, NPU_CSR_PROG_LEN, 2);
    npu_sim_csr_write(s, NPU_CSR_WATCHDOG, 0);
    npu_sim_csr_write(s, NPU_CSR_CTRL, 1);
    cr_assert_eq(npu_sim_run(s, 5000), 0, "must not halt");
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_STATUS) & 3u, (unsigned)NPU_STATE_RUNNING);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_PC_E), 1u);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_FETCH_PC), 2u);
    npu_sim_close(s);
}
