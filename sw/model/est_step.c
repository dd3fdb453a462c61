/* est_step.c - the estimator on the step engine's kernels (est_step.h). */
#include "model/est_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/slice/slice_cost.h"
#include "model/prog_time.h"
#include "prog/prog_expect.h"
#include "run/runtime.h"

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The program kernel s's emitter builds (the runtime's: npu_gemm_compile_args, npu_vk_emit): its
 * expected counters and its predicted cycles (npu_prog_time). 0, or -1 with the reason. */
static int kernel_expect(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_kernel_t *s,
                         npu_prog_expect_t *x, uint64_t *pt, char *why, size_t n)
{
    if (s->kind == NPU_SK_GEMM) {
        npu_gemm_report_t rep;
        int rc = npu_gemm_compile_args(cfg, s->g.M, s->g.N, s->g.K, &s->g.args, 0, &rep);
        if (rc == NPU_GEMM_PASS) {
            *x = rep.expect;
            if (npu_prog_time(cfg, c, rep.prog.insn, rep.prog.n, pt, why, n))
                rc = NPU_GEMM_HOST_ERROR;
        } else {
            snprintf(why, n, "%s: %s", s->name, rep.host_msg);
        }
        npu_gemm_report_free(&rep);
        return rc == NPU_GEMM_PASS ? 0 : -1;
    }
    npu_prog_t p;
    npu_prog_init(&p);
    int rc = npu_vk_emit(cfg, &s->v, &p, why, n);
    if (rc == 0) {
        npu_prog_expect(cfg, p.insn, p.n, x);
        rc = npu_prog_time(cfg, c, p.insn, p.n, pt, why, n);
    }
    npu_prog_free(&p);
    return rc;
}

/* Kernel s: bytes, counters, the prediction, the roofline and the class. 0 or -1. */
static int kernel(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_kernel_t *s,
                  npu_est_kernel_t *k, char *why, size_t n)
{
    npu_prog_expect_t x;
    uint64_t pes = 4u * (uint64_t)cfg->s * (uint64_t)cfg->s, pt = 0;
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", s->name);
    k->kind = s->kind;
    k->phase = s->phase;
    k->layer = s->layer;
    if (kernel_expect(cfg, c, s, &x, &pt, why, n))
        return -1;
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        k->rd[t] = x.rd_bytes[t];
        k->wr[t] = x.wr_bytes[t];
        k->bytes += x.rd_bytes[t] + x.wr_bytes[t];
    }
    k->macs = x.macs;
    k->vec_busy = x.vec_busy;
    k->compute = s->kind == NPU_SK_GEMM ? cdiv(x.macs, pes) : x.vec_busy;
    uint64_t dma = (uint64_t)ceil((double)k->bytes / cfg->dram_bw);
    k->roof = max64(cdiv(x.macs, pes), dma);
    k->timed = pt;
    k->cycles = max64(pt, k->roof); /* never below the roofline (acceptance 5) */
    k->memory_bound = dma > k->compute;
    return 0;
}

int npu_estimate_step(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                      npu_est_kplan_t *e, char *why, size_t n)
{
    npu_step_plan_t *p = malloc(sizeof *p);
    npu_slice_cost_t c = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    int rc = -1;
    memset(e, 0, sizeof *e);
    if (!p) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    if (npu_step_plan_mlp(cfg, dims, layers, batch, 0.1f, 0.9f, 0, modes, 0, p, why, n) == 0) {
        e->layers = layers;
        e->batch = batch;
        memcpy(e->dims, dims, (size_t)(layers + 1) * sizeof *dims);
        for (rc = 0; rc == 0 && e->nk < p->nk; e->nk++) {
            npu_est_kernel_t *k = &e->k[e->nk];
            rc = kernel(cfg, &c, &p->k[e->nk], k, why, n);
            e->cycles += k->cycles;
            e->macs += k->macs;
            for (int t = 0; t < NPU_NUM_TAGS; t++) {
                e->rd_bytes += k->rd[t];
                e->wr_bytes += k->wr[t];
            }
        }
        npu_step_plan_free(p);
    }
    free(p);
    return rc;
}
