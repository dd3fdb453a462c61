/* est_step.c - the estimator on the step engine's kernels (est_step.h). */
#include "model/est_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/slice/slice.h"
#include "model/prog_time.h"
#include "prog/prog_expect.h"
#include "run/runtime.h"

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Q16 cycles of one DMA transfer of `rows` rows of row_bytes, dense, at addr. */
static uint64_t xfer(const npu_cfg_t *cfg, const npu_slice_cost_t *k, uint64_t addr, uint64_t rows,
                     uint64_t row_bytes, int store)
{
    npu_burst_geom_t g = npu_slice_geom(cfg);
    npu_bursts_t b;
    memset(&b, 0, sizeof b);
    npu_slice_xfer(&g, addr, rows, row_bytes, row_bytes, &b);
    return npu_slice_xfer_cost(k, &b, g.beat, store);
}

/* The program fetch before the first instruction runs: one read of its bytes. */
static uint64_t fetch(const npu_cfg_t *cfg, const npu_slice_cost_t *k, uint64_t prog_bytes)
{
    return prog_bytes ? xfer(cfg, k, 0, 1, prog_bytes, 0) : 0;
}

/* Q16 cycles of the GEMM the emitter runs: the slicing stage's cost of its tiles and loop order
 * (npu_slice_eval), the cheapest of the three core splits as the search keeps it. 0 when the
 * slicing stage's rules do not admit those tiles. */
static uint64_t gemm_q16(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_gemm_plan_t *g)
{
    int64_t tile[3] = {g->Mt < g->M ? g->Mt : g->M, g->Nt < g->N ? g->Nt : g->N, g->Kc < g->K ? g->Kc : g->K};
    uint64_t best = 0;
    for (int split = 0; split < NPU_SLICE_SPLITS; split++)
        for (int order = 0; order < NPU_SLICE_ORDERS; order++) {
            npu_slice_plan_t p;
            if (npu_slice_eval(cfg, k, NPU_SLICE_GEMM, NULL, g->M, g->N, g->K, tile, split, order, &p) == 0 &&
                (p.loop[0] == 1) == (g->order == 1) && (!best || p.cycles < best))
                best = p.cycles;
        }
    return best;
}

/* A vector kernel's transfers of chunk i (rows [r0, r0 + n)): its loads (store 0) or stores,
 * the one-row tensors with the first chunk's loads and the last chunk's stores. Q16 cycles. */
static uint64_t vec_xfers(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_vkern_t *v, int r0,
                          int n, int first, int last, int store)
{
    uint64_t q = 0;
    for (int t = 0; t < v->nt; t++) {
        const npu_vk_tensor_t *T = &v->t[t];
        uint64_t rb = npu_vk_row_bytes(v, t);
        if (!(store ? T->store : T->load))
            continue;
        if (!T->one_row)
            q += xfer(cfg, c, T->dram + (uint64_t)r0 * rb, (uint64_t)n, rb, store);
        else if (store ? last : first)
            q += xfer(cfg, c, T->dram, 1, rb, store);
    }
    return q;
}

/* Q16 cycles of a vector kernel as npu_vk_emit runs it: chunk i's loads wait for the previous
 * chunk's loads and (i >= 2) for chunk i - 1's first op; its ops for its loads, the previous
 * ops and chunk i - 1's stores (the buffer half it reuses); its stores for its ops and the
 * previous stores. -1 with the emitter's reason. */
static int vec_q16(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_vkern_t *v, uint64_t *q,
                   char *why, size_t n)
{
    int R, nc;
    uint64_t *busy = malloc(sizeof *busy * (size_t)v->rows);
    if (!busy || (nc = npu_vk_chunks(cfg, v, &R, busy, v->rows, why, n)) < 0) {
        if (!busy)
            snprintf(why, n, "out of memory");
        free(busy);
        return -1;
    }
    uint64_t le = 0, es = 0, ee = 0, se = 0, es_prev = 0;
    for (int i = 0; i < nc; i++) {
        int r0 = i * R, rows = v->rows - r0 < R ? v->rows - r0 : R;
        uint64_t ls = max64(le, i >= 2 ? es_prev : 0);
        le = ls + vec_xfers(cfg, c, v, r0, rows, i == 0, i == nc - 1, 0);
        es_prev = es;
        es = max64(max64(le, ee), se);
        ee = es + (busy[i] << NPU_SLICE_Q);
        se = max64(ee, se) + vec_xfers(cfg, c, v, r0, rows, i == 0, i == nc - 1, 1);
        if (getenv("EST_DEBUG"))
            fprintf(stderr, "  chunk %d rows %d ld %.0f busy %llu st %.0f -> le %.0f es %.0f ee %.0f se %.0f\n", i, rows,
                    vec_xfers(cfg, c, v, r0, rows, i == 0, i == nc - 1, 0) / 65536.0, (unsigned long long)busy[i],
                    vec_xfers(cfg, c, v, r0, rows, i == 0, i == nc - 1, 1) / 65536.0, le / 65536.0, es / 65536.0,
                    ee / 65536.0, se / 65536.0);
    }
    free(busy);
    *q = se;
    return 0;
}

/* The emitter's program of kernel s: its expected counters. 0, or -1 with the reason. */
static int kernel_expect(const npu_cfg_t *cfg, const npu_slice_cost_t *c, const npu_step_kernel_t *s,
                         npu_prog_expect_t *x, npu_gemm_plan_t *plan, uint64_t *pt, char *why, size_t n)
{
    if (s->kind == NPU_SK_GEMM) {
        npu_gemm_report_t rep;
        int rc = npu_gemm_compile_args(cfg, s->g.M, s->g.N, s->g.K, &s->g.args, 0, &rep);
        if (rc == NPU_GEMM_PASS) {
            *x = rep.expect;
            *plan = rep.plan;
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
    npu_gemm_plan_t plan = {0};
    uint64_t pes = 4u * (uint64_t)cfg->s * (uint64_t)cfg->s, q = 0;
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", s->name);
    k->kind = s->kind;
    k->phase = s->phase;
    k->layer = s->layer;
    uint64_t pt = 0;
    if (kernel_expect(cfg, c, s, &x, &plan, &pt, why, n))
        return -1;
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        k->rd[t] = x.rd_bytes[t];
        k->wr[t] = x.wr_bytes[t];
        k->bytes += x.rd_bytes[t] + x.wr_bytes[t];
    }
    k->macs = x.macs;
    k->vec_busy = x.vec_busy;
    k->compute = s->kind == NPU_SK_GEMM ? cdiv(x.macs, pes) : x.vec_busy;
    if (s->kind == NPU_SK_GEMM)
        q = gemm_q16(cfg, c, &plan);
    else if (vec_q16(cfg, c, &s->v, &q, why, n))
        return -1;
    if (getenv("EST_DEBUG"))
        fprintf(stderr, "%s: q %.0f fetch %.0f prog %llu plan Mt %d Nt %d Kc %d order %d res %d tiles %d %d %d\n", s->name, q / 65536.0,
                fetch(cfg, c, x.rd_bytes[NPU_TAG_PROG]) / 65536.0, (unsigned long long)x.rd_bytes[NPU_TAG_PROG], plan.Mt,
                plan.Nt, plan.Kc, plan.order, plan.res, plan.m_tiles, plan.n_tiles, plan.k_chunks);
    q += fetch(cfg, c, x.rd_bytes[NPU_TAG_PROG]);
    uint64_t dma = (uint64_t)((double)k->bytes / cfg->dram_bw + 0.999999);
    k->roof = max64(cdiv(x.macs, pes), dma);
    k->cycles = max64(getenv("EST_OLD") ? cdiv(q, 1u << NPU_SLICE_Q) : pt, k->roof);
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
