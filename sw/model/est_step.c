/* est_step.c - the estimator on the step engine's kernels (est_step.h). */
#include "model/est_step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/slice/slice_cost.h"
#include "compile/step/step_emit.h"
#include "compile/step/step_res.h"
#include "compile/step/step_tags.h"
#include "model/prog_time.h"
#include "prog/prog_expect.h"
#include "run/runtime.h"

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Kernel i of a residency plan (NULL: none): its program and the transfers it overlaps. */
typedef struct res_ctx {
    const npu_step_plan_t *p;
    const npu_step_res_t *res;
    int i;
} res_ctx_t;

/* The program kernel s's emitter builds (the runtime's: npu_gemm_compile_args, npu_vk_emit; with
 * residency the transfers appended to it): its expected counters and its predicted cycles
 * (npu_prog_time). 0, or -1 with the reason. */
static int kernel_expect(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_kernel_t *s,
                         const res_ctx_t *rx, npu_prog_expect_t *x, uint64_t *pt, char *why, size_t n)
{
    if (s->kind == NPU_SK_GEMM) {
        npu_gemm_report_t rep;
        int rc = npu_gemm_compile_args(cfg, s->g.M, s->g.N, s->g.K, &s->g.args, 0, &rep);
        if (rc == NPU_GEMM_PASS && rx && npu_step_res_append(rx->p, rx->res, rx->i, &rep.prog)) {
            snprintf(why, n, "%s: its overlapped transfers do not fit", s->name);
            rc = NPU_GEMM_HOST_ERROR;
        } else if (rc == NPU_GEMM_PASS) {
            npu_prog_expect(cfg, rep.prog.insn, rep.prog.n, x);
            if (npu_prog_time(cfg, c, rep.prog.insn, rep.prog.n, pt, why, n))
                rc = NPU_GEMM_HOST_ERROR;
        } else {
            snprintf(why, n, "%s: %s", s->name, rep.host_msg);
        }
        npu_gemm_report_free(&rep);
        return rc == NPU_GEMM_PASS ? 0 : -1;
    }
    npu_prog_t p;
    void *conv;
    npu_prog_init(&p);
    int rc = npu_step_emit_other(cfg, s, &p, &conv, why, n);
    npu_step_conv_free(s, conv);
    if (rc == 0 && rx && npu_step_res_append(rx->p, rx->res, rx->i, &p)) {
        snprintf(why, n, "%s: its overlapped transfers do not fit", s->name);
        rc = -1;
    }
    if (rc == 0) {
        npu_prog_expect(cfg, p.insn, p.n, x);
        rc = npu_prog_time(cfg, c, p.insn, p.n, pt, why, n);
    }
    npu_prog_free(&p);
    return rc;
}

/* Kernel s: bytes, counters, the prediction, the roofline and the class. 0 or -1. */
static int kernel(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_kernel_t *s,
                  const res_ctx_t *rx, npu_est_kernel_t *k, char *why, size_t n)
{
    npu_prog_expect_t x;
    uint64_t pes = 4u * (uint64_t)cfg->s * (uint64_t)cfg->s, pt = 0;
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", s->name);
    k->kind = s->kind;
    k->phase = s->phase;
    k->layer = s->layer;
    if (kernel_expect(cfg, c, s, rx, &x, &pt, why, n))
        return -1;
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        k->rd[t] = x.rd_bytes[t];
        k->wr[t] = x.wr_bytes[t];
        k->bytes += x.rd_bytes[t] + x.wr_bytes[t];
    }
    k->macs = x.macs;
    k->vec_busy = x.vec_busy;
    k->compute = x.macs ? cdiv(x.macs, pes) : x.vec_busy; /* GEMM and conv kernels: the array */
    uint64_t dma = (uint64_t)ceil((double)k->bytes / cfg->dram_bw);
    k->roof = max64(cdiv(x.macs, pes), dma);
    k->timed = pt;
    k->cycles = max64(pt, k->roof); /* never below the roofline (acceptance 5) */
    k->memory_bound = dma > k->compute;
    return 0;
}

/* The residency plan's transfers: each one program of one instruction (the runtime's), its
 * bytes to its tensor, its predicted cycles to the step's. 0 or -1. */
static int transfers(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_plan_t *p,
                     const npu_step_res_t *res, npu_est_kplan_t *e, char *why, size_t n)
{
    for (int x = 0; x < res->nx; x++) {
        const npu_res_xfer_t *X = &res->x[x];
        npu_insn_t in;
        npu_prog_expect_t ex;
        uint64_t pt = 0, rd = 0, wr = 0;
        if (X->app) { /* in its kernel's program, estimated with it */
            e->nx_app++;
            continue;
        }
        if (npu_step_res_xfer_insn(p, res, X->store, X->t, X->spm, p->t[X->t].dram, 0, &in)) {
            snprintf(why, n, "transfer of %s: the instruction does not fit", p->t[X->t].name);
            return -1;
        }
        npu_prog_expect(cfg, &in, 1, &ex);
        if (npu_prog_time(cfg, c, &in, 1, &pt, why, n))
            return -1;
        for (int g = 1; g < NPU_NUM_TAGS; g++) {
            rd += ex.rd_bytes[g];
            wr += ex.wr_bytes[g];
        }
        e->t[X->t].xfer_in += rd;
        e->t[X->t].xfer_out += wr;
        e->xfer_bytes += rd + wr + ex.rd_bytes[NPU_TAG_PROG];
        e->xfer_rd += rd + ex.rd_bytes[NPU_TAG_PROG];
        e->xfer_wr += wr;
        pt = max64(pt, (uint64_t)ceil((double)(rd + wr) / cfg->dram_bw));
        e->xfer_cycles += pt;
        e->pre[X->step] += pt;
    }
    e->nx = res->nx;
    e->cycles += e->xfer_cycles;
    return 0;
}

/* Per tensor: the kernels' bytes split by tag (the residency's tags, or the plan's: step_tags.h),
 * the transfers' and the scheduler's events (res NULL: none). */
static void per_tensor(const npu_step_plan_t *p, const npu_step_res_t *res, npu_est_kplan_t *e)
{
    uint64_t in[NPU_STEP_MAX_TENSORS] = {0}, out[NPU_STEP_MAX_TENSORS] = {0};
    for (int i = 0; i < e->nk; i++) {
        npu_step_tagmap_t m;
        if (res) {
            npu_step_res_split(res, i, e->k[i].rd, e->k[i].wr, in, out);
            continue;
        }
        e->shared += npu_step_tagmap(p, &p->k[i], &m) != 0;
        e->lost += npu_step_tag_split(&m, e->k[i].rd, e->k[i].wr, in, out);
    }
    e->nt = p->nt;
    for (int t = 0; t < p->nt; t++) {
        npu_est_tensor_t *T = &e->t[t];
        snprintf(T->name, sizeof T->name, "%s", p->t[t].name);
        T->in = in[t] + T->xfer_in;
        T->out = out[t] + T->xfer_out;
        T->loads = res ? res->r.tensor[t].loads : 0;
        T->stores = res ? res->r.tensor[t].stores : 0;
        T->drops = res ? res->r.tensor[t].drops : 0;
    }
}

/* Every kernel of the step (the plan's, or res's) estimated into e. 0 or -1. */
static int kernels(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_plan_t *p,
                   const npu_step_res_t *res, npu_est_kplan_t *e, char *why, size_t n)
{
    int rc = 0;
    for (; rc == 0 && e->nk < p->nk; e->nk++) {
        npu_est_kernel_t *k = &e->k[e->nk];
        res_ctx_t rx = {p, res, e->nk};
        rc = kernel(cfg, c, res ? &res->k[e->nk] : &p->k[e->nk], res ? &rx : NULL, k, why, n);
        e->cycles += k->cycles;
        e->macs += k->macs;
        for (int t = 0; t < NPU_NUM_TAGS; t++) {
            e->rd_bytes += k->rd[t];
            e->wr_bytes += k->wr[t];
        }
    }
    return rc;
}

uint64_t npu_est_res_cycles(void *cfg, const npu_step_plan_t *p, const npu_step_res_t *res)
{
    npu_slice_cost_t c = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    npu_est_kplan_t *e = calloc(1, sizeof *e);
    char why[256];
    uint64_t cycles = UINT64_MAX; /* a plan the estimator cannot cost is never chosen */
    if (e && kernels(cfg, &c, p, res, e, why, sizeof why) == 0 && transfers(cfg, &c, p, res, e, why, sizeof why) == 0)
        cycles = e->cycles;
    free(e);
    return cycles;
}

int npu_est_res_plan(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap, int overlap,
                     npu_step_res_t *res)
{
    npu_step_res_cost_fn by = overlap & NPU_RES_BY_TRAFFIC ? NULL : npu_est_res_cycles;
    return npu_step_res_plan_by(cfg, p, res_banks, cap, overlap, by, (void *)cfg, res);
}

int npu_estimate_step_res(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                          int res_banks, npu_est_kplan_t *e, char *why, size_t n)
{
    return npu_estimate_step_res_cap(cfg, dims, layers, batch, modes, res_banks, 0, e, why, n);
}

int npu_estimate_step_res_cap(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                              int res_banks, uint64_t cap, npu_est_kplan_t *e, char *why, size_t n)
{
    return npu_estimate_step_res_ex(cfg, dims, layers, batch, modes, res_banks, cap,
                                    NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, e, why, n);
}

/* Plan p (owned: freed here) estimated into e, with the last res_banks banks resident (0: none),
 * the scheduler given cap bytes of them and its prefetch / look-ahead as overlap says. 0 or -1. */
static int estimate_plan(const npu_cfg_t *cfg, npu_step_plan_t *p, int res_banks, uint64_t cap, int overlap,
                         npu_est_kplan_t *e, char *why, size_t n)
{
    npu_step_res_t *res = calloc(1, sizeof *res);
    npu_slice_cost_t c = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    int rc = -1;
    e->layers = p->layers;
    e->batch = p->batch;
    e->res_banks = res_banks;
    memcpy(e->dims, p->dims, (size_t)(p->layers + 1) * sizeof *p->dims);
    if (!res) {
        snprintf(why, n, "out of memory");
    } else if (res_banks == 0) {
        if ((rc = kernels(cfg, &c, p, NULL, e, why, n)) == 0)
            per_tensor(p, NULL, e);
    } else if (npu_est_res_plan(cfg, p, res_banks, cap, overlap, res)) {
        snprintf(why, n, "%s", res->why);
    } else if ((rc = kernels(cfg, &c, p, res, e, why, n)) == 0 && (rc = transfers(cfg, &c, p, res, e, why, n)) == 0) {
        per_tensor(p, res, e);
        e->demoted = res->demoted;
        e->res_overlap = res->overlap;
    }
    if (res)
        npu_step_res_free(res);
    free(res);
    npu_step_plan_free(p);
    return rc;
}

int npu_estimate_step_res_ex(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                             int res_banks, uint64_t cap, int overlap, npu_est_kplan_t *e, char *why,
                             size_t n)
{
    npu_step_plan_t *p = malloc(sizeof *p);
    int rc = -1;
    memset(e, 0, sizeof *e);
    if (!p)
        snprintf(why, n, "out of memory");
    else if (npu_step_plan_mlp(cfg, dims, layers, batch, NPU_STEP_NOMINAL_LR, NPU_STEP_NOMINAL_MU,
                               NPU_STEP_NOMINAL_WD, modes, 0, p, why, n) == 0)
        rc = estimate_plan(cfg, p, res_banks, cap, overlap, e, why, n);
    free(p);
    return rc;
}

int npu_estimate_step_cnn_res(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res,
                              const int *fc, int n_fc, int batch, int modes, int res_banks, uint64_t cap,
                              int overlap, npu_est_kplan_t *e, char *why, size_t n)
{
    npu_step_plan_t *p = malloc(sizeof *p);
    int rc = -1;
    memset(e, 0, sizeof *e);
    if (!p)
        snprintf(why, n, "out of memory");
    else if (npu_step_plan_cnn_res(cfg, conv, n_conv, res, fc, n_fc, batch, NPU_STEP_NOMINAL_LR, NPU_STEP_NOMINAL_MU,
                                   NPU_STEP_NOMINAL_WD, modes, NULL, 0, p, why, n) == 0)
        rc = estimate_plan(cfg, p, res_banks, cap, overlap, e, why, n);
    free(p);
    return rc;
}

int npu_estimate_step_cnn(const npu_cfg_t *cfg, const npu_conv_t *conv, int n_conv, const int *res, const int *fc,
                          int n_fc, int batch, int modes, npu_est_kplan_t *e, char *why, size_t n)
{
    return npu_estimate_step_cnn_res(cfg, conv, n_conv, res, fc, n_fc, batch, modes, 0, 0, 0, e, why, n);
}

int npu_estimate_step(const npu_cfg_t *cfg, const int *dims, int layers, int batch, int modes,
                      npu_est_kplan_t *e, char *why, size_t n)
{
    return npu_estimate_step_res(cfg, dims, layers, batch, modes, 0, e, why, n);
}
