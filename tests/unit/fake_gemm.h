/* fake_gemm.h - one GEMM's operands and its golden result for plan-against-plan tests on the C
 * functional model (test_resident.c's bands, test_cband.c's C band): random operands, a plan run
 * bit-exact on a fresh model with random stalls, the token discipline on the queue machine. */
#ifndef FAKE_GEMM_H
#define FAKE_GEMM_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fake_sim.h"
#include "queue_machine.h"
#include "ref/golden.h"
#include "run/runtime.h"
#include "test_cfgs.h"

typedef struct fake_gemm {
    int M, N, K;
    int16_t *A, *B;   /* M x K, K x N, in [-1000, 1000] */
    int32_t *C, *G;   /* the run's result, the golden one */
    uint64_t seed;    /* the generator after the operands: the model's stall seed */
} fake_gemm_t;

/* A then B drawn from seed, and their golden product. */
static inline void fake_gemm_init(fake_gemm_t *g, int M, int N, int K, uint64_t seed)
{
    g->M = M, g->N = N, g->K = K;
    g->A = malloc(sizeof *g->A * (size_t)M * K);
    g->B = malloc(sizeof *g->B * (size_t)K * N);
    g->C = malloc(sizeof *g->C * (size_t)M * N);
    g->G = malloc(sizeof *g->G * (size_t)M * N);
    cr_assert(g->A && g->B && g->C && g->G);
    for (size_t i = 0; i < (size_t)M * K; i++)
        g->A[i] = (int16_t)((int)(test_rand(&seed) % 2001) - 1000);
    for (size_t i = 0; i < (size_t)K * N; i++)
        g->B[i] = (int16_t)((int)(test_rand(&seed) % 2001) - 1000);
    g->seed = seed;
    npu_golden_gemm(M, N, K, g->A, (size_t)K, 0, g->B, (size_t)N, 0, g->G, (size_t)N);
}

static inline void fake_gemm_free(fake_gemm_t *g)
{
    free(g->A);
    free(g->B);
    free(g->C);
    free(g->G);
}

/* The last run's C is the golden one. */
static inline int fake_gemm_exact(const fake_gemm_t *g)
{
    return memcmp(g->C, g->G, sizeof *g->C * (size_t)g->M * (size_t)g->N) == 0;
}

/* plan on a fresh model (3 cycles of jitter, stalls from g->seed) under policy modes: PASS and
 * bit-exact. */
static inline void fake_gemm_run_plan(const npu_cfg_t *c, fake_gemm_t *g, const npu_gemm_plan_t *plan, int modes,
                                      npu_gemm_report_t *r)
{
    npu_sim_t *s = open_fake(c, 3, g->seed);
    int rc = npu_gemm_run_plan(c, s, plan, g->A, g->B, modes, g->C, 50000000, r);
    npu_sim_close(s);
    cr_assert_eq(rc, NPU_GEMM_PASS, "S=%d %dx%dx%d modes %d: %s %s", c->s, g->M, g->N, g->K, modes,
                 r->counters_msg, r->host_msg);
    cr_assert(fake_gemm_exact(g), "S=%d %dx%dx%d modes %d", c->s, g->M, g->N, g->K, modes);
}

/* The program's tokens on the queue machine: no deadlock at the configured queue depth, no
 * counter above 2 (l2e 3: the first chunk may push it twice, B's LOAD and A's, gemm_emit.c). */
static inline void fake_gemm_tokens(const npu_cfg_t *c, const npu_gemm_report_t *r)
{
    queue_machine_t qm;
    cr_assert_eq(queue_machine_run(r->prog.insn, r->prog.n, c->queue_depth, &qm), 0, "%s", qm.msg);
    for (int ch = 0; ch < 4; ch++)
        cr_assert_leq(qm.max_tok[ch], ch == 0 ? 3 : 2, "channel %d", ch);
}

#endif
