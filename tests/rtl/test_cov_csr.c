/*
 * test_cov_csr.c - the CSR read decoder (npu_ctrl) off its mapped addresses: `make coverage`
 * showed no test reads a CSR that is not in NPU_CSRS or past the last counter. csr_rdata is 0
 * there, after a run that left every kind of register non-zero, while the mapped registers next
 * to the holes still read their values; writes to those addresses change nothing.
 */
#include <string.h>

#include "rtl_common.h"

#define I (&_i)
#define PUSH(p, expr) do { npu_insn_t _i; cr_assert_eq((expr), 0); \
                           cr_assert_eq(npu_prog_push(&(p), &_i), 0); } while (0)

/* The CSR addresses the decoder does not map: past the last CSR of NPU_CSRS, the gap below the counters, the
 * first address past the last counter (low and high words), the space above, the last address,
 * and the counter index that a decoder truncating the index to its log2(counters) bits would
 * alias onto counter 0 (cycles, non-zero after a run). */
#define NHOLES 11
static uint32_t holes[NHOLES];

/* The first address past the mapped CSRs below the counters (NPU_CSRS grows: NOCSTATE took
 * 0x0F). */
static uint32_t past_last_csr(void)
{
    uint32_t m = 0;
#define X(nm, a, t) if (m < (uint32_t)(a) + 1u) m = (uint32_t)(a) + 1u;
    NPU_CSRS(X)
#undef X
    return m;
}

static void init_holes(void)
{
    uint32_t p2 = 1;
    while (p2 < NPU_NUM_COUNTERS)
        p2 <<= 1;
    const uint32_t h[NHOLES] = {
        past_last_csr(), 0x0FF, NPU_CSR_CNT_LO + NPU_NUM_COUNTERS, NPU_CSR_CNT_LO + p2, 0x1FF,
        NPU_CSR_CNT_HI + NPU_NUM_COUNTERS, NPU_CSR_CNT_HI + p2, 0x2FF, 0x300, 0x7FF, 0xFFF,
    };
    memcpy(holes, h, sizeof holes);
}

static void check_holes(npu_sim_t *s, const char *when)
{
    for (size_t i = 0; i < NHOLES; i++)
        cr_assert_eq(npu_sim_csr_read(s, holes[i]), 0u, "%s: unmapped CSR 0x%03x reads 0x%08x",
                     when, (unsigned)holes[i], (unsigned)npu_sim_csr_read(s, holes[i]));
}

Test(cov_csr, unmapped_addresses_read_zero)
{
    npu_cfg_t cfg = rtl_cfg();
    npu_sim_t *s = rtl_open(&cfg, 0, 0, 1);
    init_holes();
    check_holes(s, "after reset");

    /* A GEMM-free program that still moves data: LOAD, then STORE, with tokens; its counters
     * (cycles, DRAM beats and bursts) end non-zero. */
    unsigned B = 4u * (unsigned)cfg.s;
    npu_prog_t p; npu_prog_init(&p);
    PUSH(p, npu_enc_load(I, NPU_TAG_X, 0, 4, 8192, 0, 1, B, 1 * B));
    npu_insn_tok(&p.insn[p.n - 1], NPU_TOK_PUSH_NEXT);
    PUSH(p, npu_enc_sync(I, NPU_OP_SYNC_E));
    npu_insn_tok(&p.insn[p.n - 1], NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    PUSH(p, npu_enc_store(I, NPU_TAG_Y, 4, 16384, 0, 1, B, 1 * B));
    npu_insn_tok(&p.insn[p.n - 1], NPU_TOK_POP_PREV);
    npu_run_result_t r;
    int rc = npu_run_program(&cfg, s, 0, p.insn, p.n, 100000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "run rc %d state %s", rc, npu_state_name(r.state));

    /* the mapped neighbours of the holes hold their values */
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_FETCH_PC), (uint32_t)p.n);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_S), (uint32_t)cfg.s);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_SPM), (uint32_t)(cfg.spm_banks * cfg.spm_bank_words));
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_OBUF), (uint32_t)cfg.obuf_rows);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_DTYPE), (uint32_t)cfg.dtype);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_PROG_LEN), (uint32_t)p.n);
    cr_assert(r.cnt[NPU_CNT_cycles] > 0, "cycles counter is 0 after a run");
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_CNT_LO + NPU_CNT_cycles),
                 (uint32_t)r.cnt[NPU_CNT_cycles]);
    int last = NPU_NUM_COUNTERS - 1;
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_CNT_LO + last), (uint32_t)r.cnt[last]);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_CNT_HI + last), (uint32_t)(r.cnt[last] >> 32));
    check_holes(s, "after a run");

    /* writes to the holes and to read-only registers change nothing */
    for (size_t i = 0; i < NHOLES; i++)
        npu_sim_csr_write(s, holes[i], 0xFFFFFFFFu);
    npu_sim_csr_write(s, NPU_CSR_HW_S, 0x1234u);
    check_holes(s, "after writes");
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_HW_S), (uint32_t)cfg.s);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_PROG_LEN), (uint32_t)p.n);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_STATUS) & 3u, (unsigned)NPU_STATE_DONE);
    cr_assert_eq(npu_sim_csr_read(s, NPU_CSR_CNT_LO + NPU_CNT_cycles),
                 (uint32_t)r.cnt[NPU_CNT_cycles], "a write to an unmapped CSR changed a counter");
    npu_prog_free(&p);
    npu_sim_close(s);
}
