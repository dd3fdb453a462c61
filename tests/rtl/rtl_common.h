/*
 * rtl_common.h - helpers shared by the RTL tests: the build's configuration, a model with
 * seeded random DRAM stalls, seeded random operands, and a GEMM check with a useful message.
 * Each Criterion test runs in its own process and opens its own model; nothing is rebuilt.
 */
#ifndef RTL_COMMON_H
#define RTL_COMMON_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_params.h" /* NPU_CFG_INIT of this build */
#include "prog/prog_locate.h"
#include "ref/golden.h"
#include "ref/golden_bf16.h"
#include "run/report.h"
#include "run/runtime.h"

/* The C functional ISA model, linked into test_rtl under fnpu_sim_* names (tb/npu_funcsim.c built
 * with -Dnpu_sim_X=fnpu_sim_X): test_fuzz and test_dense run programs on both. */
npu_sim_t *fnpu_sim_open(const npu_dram_timing_t *t);
void fnpu_sim_close(npu_sim_t *s);
uint8_t *fnpu_sim_dram(npu_sim_t *s, size_t *bytes);
void fnpu_sim_csr_write(npu_sim_t *s, uint32_t addr, uint32_t v);
uint32_t fnpu_sim_csr_read(npu_sim_t *s, uint32_t addr);
int fnpu_sim_run(npu_sim_t *s, uint64_t max_cycles);
uint64_t fnpu_sim_cycle(npu_sim_t *s);

/* Runs the n instructions of prog (at DRAM 0) on a fresh functional model whose DRAM holds
 * `bytes` of init at byte `at`; asserts it halts DONE and returns it: the caller compares its
 * DRAM and counters, then closes it. */
static inline npu_sim_t *rtl_model_run(const npu_insn_t *prog, size_t n, uint64_t at,
                                       const uint8_t *init, size_t bytes, const char *tag)
{
    npu_sim_t *m = fnpu_sim_open(NULL);
    cr_assert_not_null(m);
    uint8_t *d = fnpu_sim_dram(m, NULL);
    memcpy(d + at, init, bytes);
    for (size_t i = 0; i < n; i++)
        memcpy(d + i * NPU_INSN_BYTES, prog[i].w, NPU_INSN_BYTES);
    fnpu_sim_csr_write(m, NPU_CSR_PROG_BASE, 0);
    fnpu_sim_csr_write(m, NPU_CSR_PROG_LEN, (uint32_t)n);
    fnpu_sim_csr_write(m, NPU_CSR_CTRL, 2);
    fnpu_sim_csr_write(m, NPU_CSR_CTRL, 1);
    cr_assert_eq(fnpu_sim_run(m, 100000000), 1, "%s: the model did not halt", tag);
    uint32_t st = fnpu_sim_csr_read(m, NPU_CSR_STATUS);
    cr_assert_eq(st & 3u, (unsigned)NPU_STATE_DONE, "%s: model status 0x%x", tag, st);
    return m;
}

static inline npu_cfg_t rtl_cfg(void)
{
    npu_cfg_t c = NPU_CFG_INIT;
    return c;
}

/* Seed from NPU_SEED (replay) or the given default; printed by every failing check. */
static inline uint64_t rtl_seed(uint64_t dflt)
{
    const char *s = getenv("NPU_SEED");
    return s ? strtoull(s, NULL, 0) : dflt;
}

static inline uint64_t rtl_rand(uint64_t *x)
{
    *x ^= *x << 13; *x ^= *x >> 7; *x ^= *x << 17;
    return *x;
}

static inline npu_sim_t *rtl_open(const npu_cfg_t *cfg, unsigned stall_pct, double bw, uint64_t seed)
{
    npu_dram_timing_t t = { bw > 0 ? bw : (double)cfg->dram_bw, (unsigned)cfg->dram_latency,
                            (unsigned)cfg->dram_burst_cost, stall_pct, seed };
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s, "npu_sim_open failed");
    char msg[160];
    cr_assert_eq(npu_check_hw(cfg, s, msg, sizeof msg), 0, "%s", msg);
    return s;
}

static inline void rtl_fill(int16_t *v, size_t n, uint64_t *x)
{
    for (size_t i = 0; i < n; i++) v[i] = (int16_t)(rtl_rand(x) & 0xFFFF);
}

/* Operands of the config's element type: int16 patterns, or bf16 (npu_random_operands_bf16). */
static inline void rtl_operands(const npu_cfg_t *cfg, int16_t *A, size_t na, int16_t *B, size_t nb, uint64_t *x)
{
    if (!npu_cfg_bf16(cfg)) {
        rtl_fill(A, na, x);
        rtl_fill(B, nb, x);
        return;
    }
    npu_random_operands_bf16((int)na, (int)nb, 1, rtl_rand(x), A, B); /* na x 1 and 1 x nb */
}

/* The one wave's result A . B_j (K <= 2S: a single wave, its psum chain in k order in bf16). */
static inline size_t rtl_one_wave(void *ctx, int i, int j, int *k0, int *k1, size_t max)
{
    (void)i;
    (void)j;
    if (max) {
        k0[0] = 0;
        k1[0] = *(const int *)ctx;
    }
    return 1;
}
static inline void rtl_golden_one_wave(const npu_cfg_t *cfg, int M, int N, int K, const int16_t *A,
                            const int16_t *B, int32_t *G)
{
    if (npu_cfg_bf16(cfg))
        cr_assert_eq(npu_golden_gemm_bf16(M, N, K, A, (size_t)K, 0, B, (size_t)N, 0, G, (size_t)N,
                                          rtl_one_wave, &K), 0);
    else
        npu_golden_gemm(M, N, K, A, (size_t)K, 0, B, (size_t)N, 0, G, (size_t)N);
}

/* n random bytes (rtl_seed(seed): NPU_SEED overrides), malloc'ed; the caller frees them. */
static inline uint8_t *rtl_random_bytes(size_t n, uint64_t seed)
{
    uint8_t *b = malloc(n);
    uint64_t x = rtl_seed(seed);
    cr_assert_not_null(b);
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)rtl_rand(&x);
    return b;
}

/* Cycle budget: generous against the ideal compute and transfer time, so only a hang hits it. */
static inline uint64_t rtl_budget(const npu_cfg_t *cfg, int M, int N, int K)
{
    uint64_t F = 2u * (uint64_t)cfg->s;
    uint64_t waves = (uint64_t)((M + F - 1) / F + 1) * ((N + F - 1) / F) * ((K + F - 1) / F);
    return 200000 + 40 * (uint64_t)M * ((N + F - 1) / F) * ((K + F - 1) / F) + 400 * waves;
}

/* Runs one GEMM on a fresh model (DRAM stalls seeded by `seed`, operands from
 * npu_random_operands_dt(seed) of the config's element type, exactly as the CLI does) and asserts
 * PASS (bf16: against the order-matched golden, npu_gemm_golden). A failure names the
 * shape, the first mismatch and the one command that replays it. bw = 0: the config's default. */
/* One GEMM on a fresh model under the emitter's mapping policy emit (NPU_EMIT_FW = 1G1C,
 * NPU_EMIT_FLEXSA = Algorithm 1 per wave, NPU_EMIT_1G4C), bit-exact and every counter checked;
 * a failure names the first wrong element's tile and prints the replay command. */
static inline void rtl_gemm_check_policy(const npu_cfg_t *cfg, int M, int N, int K, int ta, int tb,
                                         uint64_t seed, unsigned stall_pct, double bw, int emit,
                                         npu_gemm_report_t *out)
{
    int16_t *A = malloc(sizeof(int16_t) * (size_t)M * K);
    int16_t *B = malloc(sizeof(int16_t) * (size_t)K * N);
    cr_assert(A && B);
    npu_random_operands_dt(npu_cfg_bf16(cfg), M, N, K, seed, A, B); /* as the CLI's --seed */
    npu_sim_t *s = rtl_open(cfg, stall_pct, bw, seed);
    npu_gemm_report_t r;
    int rc = npu_gemm_run_modes(cfg, s, M, N, K, A, B, ta, tb, emit, NULL, rtl_budget(cfg, M, N, K), &r);
    int policy = emit & ~NPU_GEMM_SLICING_MASK, slicing = emit & NPU_GEMM_SLICING_MASK;
    const char *pol = policy == NPU_EMIT_FLEXSA ? " --policy flexsa" : policy == NPU_EMIT_1G4C ? " --policy 1g4c" : "";
    const char *sl = slicing == NPU_GEMM_SLICING_BURST ? " --slicing burst"
                     : slicing == NPU_GEMM_SLICING_NOBURST ? " --slicing noburst" : "";
    char bwopt[48] = "";
    if (bw > 0)
        snprintf(bwopt, sizeof bwopt, " --dram-bw %g", bw);
    char where[200] = "";
    npu_gemm_loc_t loc;
    if (rc == NPU_GEMM_MISMATCH) /* first divergence: tile, instructions and modes */
        npu_prog_locate_gemm(cfg, &r.plan, &r.args, r.prog.insn, r.prog.n, r.bad_row, r.bad_col, &loc,
                        where, sizeof where);
    cr_assert_eq(rc, NPU_GEMM_PASS,
                 "GEMM %dx%dx%d transA=%d transB=%d seed=%llu: %s (%s) err=%s pc=%u "
                 "first mismatch C[%d][%d]=%d expected %d (%s); %s %s\n"
                 "  replay: build/%s/npu gemm -m %d -n %d -k %d --seed %llu --stall-pct %u%s%s%s%s%s",
                 M, N, K, ta, tb, (unsigned long long)seed, npu_gemm_rc_name(rc),
                 npu_state_name(r.run.state), npu_error_name(r.run.err) ? npu_error_name(r.run.err) : "?",
                 (unsigned)r.run.err_pc, r.bad_row, r.bad_col, (int)r.bad_got, (int)r.bad_exp, where,
                 r.counters_msg, r.host_msg, cfg->name, M, N, K, (unsigned long long)seed,
                 stall_pct, bwopt, ta ? " --trans-a" : "", tb ? " --trans-b" : "", pol, sl);
    if (out) *out = r; else npu_gemm_report_free(&r);
    npu_sim_close(s);
    free(A);
    free(B);
}

static inline void rtl_gemm_check(const npu_cfg_t *cfg, int M, int N, int K, int ta, int tb,
                                  uint64_t seed, unsigned stall_pct, double bw,
                                  npu_gemm_report_t *out)
{
    rtl_gemm_check_policy(cfg, M, N, K, ta, tb, seed, stall_pct, bw, NPU_EMIT_FW, out);
}

#endif
