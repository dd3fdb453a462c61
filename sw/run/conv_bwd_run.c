/* conv_bwd_run.c - the fused convolution backward driver; see conv_bwd_run.h. */
#include "run/conv_bwd_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "prog/prog_expect.h"
#include "ref/golden.h"
#include "run/conv_bf16.h"
#include "run/conv_run.h"
#include "run/runtime.h"

typedef struct bwd_job {
    const npu_cfg_t *cfg;
    npu_sim_t *sim;
    const npu_conv_t *c;
    npu_conv_bwd_report_t *rep;
    npu_conv_bwd_io_t *io;
    npu_conv_bwd_plan_t bp;
    uint8_t *dram;
    size_t dram_bytes;
    unsigned B;
    int16_t *X, *Wt, *dY;
    int32_t *dx, *dx_exp, *dwt, *dw, *dw_exp; /* dwt: dW^T as stored, T*C x F */
    size_t nx, nw, ndy;
    npu_conv_bwd_addrs_t ad;
    uint64_t apg;
    npu_prog_t prog;
    npu_run_result_t rr;
    char msg[240];
} bwd_job_t;

static int done(npu_conv_bwd_report_t *rep, int rc, const char *msg)
{
    rep->rc = rc;
    if (msg && !rep->msg[0])
        snprintf(rep->msg, sizeof rep->msg, "%s", msg);
    return rc;
}

int npu_conv_bwd_supported(const npu_cfg_t *cfg, const npu_conv_t *c, char *msg, size_t n)
{
    npu_conv_bwd_plan_t *bp = malloc(sizeof *bp);
    int ok;
    if (!bp) {
        snprintf(msg, n, "out of memory");
        return 0;
    }
    ok = npu_conv_bwd_plan(cfg, c, 0, bp, msg, n) == 0;
    free(bp);
    return ok;
}

/* The plan, the expected MACs and bytes, the host tensors (seeded, then the caller's). */
static int prepare(bwd_job_t *j, uint64_t seed)
{
    const npu_conv_t *c = j->c;
    npu_conv_bwd_report_t *rep = j->rep;
    if (npu_conv_bwd_plan(j->cfg, c, 0, &j->bp, j->msg, sizeof j->msg) != 0)
        return done(rep, NPU_GEMM_HOST_ERROR, j->msg);
    rep->expect_dx = npu_conv_macs(c, NPU_CONV_DX, NPU_CONV_ECOFLOW);
    rep->expect_dw = npu_conv_macs(c, NPU_CONV_DW, NPU_CONV_ECOFLOW);
    rep->units = j->bp.dx.units;
    memcpy(rep->plan_rd, j->bp.plan_rd, sizeof rep->plan_rd);
    memcpy(rep->plan_wr, j->bp.plan_wr, sizeof rep->plan_wr);
    memcpy(rep->comp_rd, j->bp.comp_rd, sizeof rep->comp_rd);
    memcpy(rep->comp_wr, j->bp.comp_wr, sizeof rep->comp_wr);
    j->nx = npu_conv_x_elems(c);
    j->nw = npu_conv_w_elems(c);
    j->ndy = npu_conv_y_elems(c);
    j->X = malloc(sizeof *j->X * j->nx);
    j->Wt = malloc(sizeof *j->Wt * j->nw);
    j->dY = malloc(sizeof *j->dY * j->ndy);
    j->dx = malloc(sizeof *j->dx * j->nx);
    j->dx_exp = malloc(sizeof *j->dx_exp * j->nx);
    j->dwt = malloc(sizeof *j->dwt * j->nw);
    j->dw = malloc(sizeof *j->dw * j->nw);
    j->dw_exp = malloc(sizeof *j->dw_exp * j->nw);
    if (!j->X || !j->Wt || !j->dY || !j->dx || !j->dx_exp || !j->dwt || !j->dw || !j->dw_exp)
        return done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
    if (npu_cfg_bf16(j->cfg))
        npu_conv_operands_bf16(c, seed, j->X, j->Wt, j->dY);
    else
        npu_conv_operands(c, seed, j->X, j->Wt, j->dY);
    if (j->io && j->io->X)
        memcpy(j->X, j->io->X, sizeof *j->X * j->nx);
    if (j->io && j->io->Wt)
        memcpy(j->Wt, j->io->Wt, sizeof *j->Wt * j->nw);
    if (j->io && j->io->dY)
        memcpy(j->dY, j->io->dY, sizeof *j->dY * j->ndy);
    return NPU_GEMM_PASS;
}

/* DRAM: X, Wt, dY, dX, dW^T, then the program; the inputs written, the outputs poisoned (an
 * element the NPU never writes cannot match by accident). */
static int layout(bwd_job_t *j)
{
    const npu_conv_plan_t *p = &j->bp.dx;
    const npu_conv_t *c = j->c;
    uint64_t bytes[5], at[5];
    npu_alloc_t al;
    bytes[0] = npu_conv_tensor_bytes(p, NPU_TAG_X);
    bytes[1] = npu_conv_tensor_bytes(p, NPU_TAG_W);
    bytes[2] = npu_conv_tensor_bytes(p, NPU_TAG_DY);
    bytes[3] = npu_conv_tensor_bytes(p, NPU_TAG_DX);
    bytes[4] = (uint64_t)j->bp.dwt_words * j->B;
    unsigned DB = (unsigned)npu_cfg_beat(j->cfg); /* tensors and program from a DRAM beat */
    npu_alloc_init(&al, j->dram ? j->dram_bytes : 0, DB > 16 ? DB : 16);
    for (int i = 0; i < 5; i++)
        if (npu_alloc(&al, bytes[i], &at[i]) != 0 || al.next > 0xFFFFFFFFull)
            return done(j->rep, NPU_GEMM_NO_FIT, "the tensors do not fit the DRAM");
    j->ad.x = (uint32_t)at[0];
    j->ad.w = (uint32_t)at[1];
    j->ad.dy = (uint32_t)at[2];
    j->ad.dx = (uint32_t)at[3];
    j->ad.dwt = (uint32_t)at[4];
    if (npu_conv_bwd_emit(j->cfg, &j->bp, &j->ad, &j->prog, j->msg, sizeof j->msg) != 0)
        return done(j->rep, NPU_GEMM_HOST_ERROR, j->msg);
    j->rep->insns = j->prog.n;
    if (npu_alloc(&al, (uint64_t)j->prog.n * NPU_INSN_BYTES, &j->apg) != 0)
        return done(j->rep, NPU_GEMM_HOST_ERROR, "the program does not fit the DRAM");
    npu_write_i16(j->dram, j->ad.x, p->pitch_x, c->batch * c->H * c->W, c->C, j->X, (size_t)c->C);
    npu_write_i16(j->dram, j->ad.w, p->pitch_w, p->T * c->F, c->C, j->Wt, (size_t)c->C);
    npu_write_i16(j->dram, j->ad.dy, p->pitch_dy, c->batch * p->OH * p->OW, c->F, j->dY, (size_t)c->F);
    memset(j->dram + j->ad.dx, 0xA5, (size_t)bytes[3]);
    memset(j->dram + j->ad.dwt, 0xA5, (size_t)bytes[4]);
    return NPU_GEMM_PASS;
}

/* Runs the program; its counters go to the report whatever the outcome. */
static int run(bwd_job_t *j, uint64_t max_cycles)
{
    npu_conv_bwd_report_t *rep = j->rep;
    npu_run_result_t *rr = &j->rr;
    int rc = npu_run_program(j->cfg, j->sim, j->apg, j->prog.insn, j->prog.n, max_cycles, rr);
    npu_conv_sums_t sm = npu_conv_run_sums(rr->cnt);
    memcpy(rep->cnt, rr->cnt, sizeof rep->cnt);
    rep->cycles = sm.cycles;
    rep->exec_busy = sm.exec_busy;
    rep->macs = sm.macs;
    rep->macs_zero = sm.macs_zero;
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        rep->rd[t] = rr->cnt[NPU_CNT_dram_rd_prog + t];
        rep->wr[t] = rr->cnt[NPU_CNT_dram_wr_prog + t];
    }
    rc = npu_conv_run_outcome(j->sim, rc, rr, j->msg, sizeof j->msg);
    return rc == NPU_GEMM_PASS ? rc : done(rep, rc, j->msg);
}

/* dX and dW (dW^T read back, transposed to [tap][f][c]) against the golden models, bit-exact. */
static int check_results(bwd_job_t *j)
{
    const npu_conv_t *c = j->c;
    const npu_conv_plan_t *p = &j->bp.dx;
    int T = p->T, br = 0, bc = 0;
    int32_t gv = 0, ev = 0;
    size_t bad;
    npu_read_i32(j->dram, j->ad.dx, p->pitch_out, c->batch * c->H * c->W, c->C, j->dx, (size_t)c->C);
    npu_read_i32(j->dram, j->ad.dwt, j->bp.pf * j->B, T * c->C, c->F, j->dwt, (size_t)c->F);
    for (int t = 0; t < T; t++)
        for (int f = 0; f < c->F; f++)
            for (int ch = 0; ch < c->C; ch++)
                j->dw[((size_t)t * (size_t)c->F + (size_t)f) * (size_t)c->C + (size_t)ch] =
                    j->dwt[((size_t)t * (size_t)c->C + (size_t)ch) * (size_t)c->F + (size_t)f];
    if (!npu_cfg_bf16(j->cfg)) {
        npu_conv_dx_golden(c, j->dY, j->Wt, j->dx_exp);
        npu_conv_dw_golden(c, j->X, j->dY, j->dw_exp);
    } else if (npu_conv_bwd_golden_bf16(&j->bp, j->X, j->Wt, j->dY, j->dx_exp, j->dw_exp) != 0) {
        return done(j->rep, NPU_GEMM_HOST_ERROR, "the bf16 golden model failed (out of memory)");
    }
    if (j->io && j->io->dX)
        memcpy(j->io->dX, j->dx, sizeof *j->dx * j->nx);
    if (j->io && j->io->dW)
        memcpy(j->io->dW, j->dw, sizeof *j->dw * j->nw);
    if (j->io)
        j->io->filled = 1;
    bad = npu_compare_i32(c->batch * c->H * c->W, c->C, j->dx, (size_t)c->C, j->dx_exp, (size_t)c->C, &br, &bc,
                          &gv, &ev);
    if (bad) {
        snprintf(j->msg, sizeof j->msg, "dX: %zu mismatches, first pixel %d channel %d = %d expected %d", bad, br,
                 bc, (int)gv, (int)ev);
        return done(j->rep, NPU_GEMM_MISMATCH, j->msg);
    }
    bad = npu_compare_i32(T * c->F, c->C, j->dw, (size_t)c->C, j->dw_exp, (size_t)c->C, &br, &bc, &gv, &ev);
    if (bad) {
        snprintf(j->msg, sizeof j->msg, "dW: %zu mismatches, first row %d (tap*F+f) channel %d = %d expected %d",
                 bad, br, bc, (int)gv, (int)ev);
        return done(j->rep, NPU_GEMM_MISMATCH, j->msg);
    }
    return NPU_GEMM_PASS;
}

/* Every counter against the program; MACs and zero MACs against dX + dW by formula; the dY read
 * once (DY bytes = the dense tensor once) and every tag as planned. */
static int check_counters(bwd_job_t *j)
{
    npu_conv_bwd_report_t *rep = j->rep;
    npu_prog_expect_t ex;
    npu_array_expect_t ax;
    uint64_t macs = rep->expect_dx.total + rep->expect_dw.total, zero = rep->expect_dx.zero + rep->expect_dw.zero;
    npu_prog_expect(j->cfg, j->prog.insn, j->prog.n, &ex);
    if (npu_check_counters(j->rr.cnt, &ex, j->msg, sizeof j->msg) != 0)
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    npu_prog_expect_array(j->cfg, j->prog.insn, j->prog.n, &ax);
    if (npu_check_array_counters(j->rr.cnt, &ax, j->msg, sizeof j->msg) != 0)
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    if (rep->macs != macs || (j->io ? rep->macs_zero < zero : rep->macs_zero != zero)) {
        snprintf(j->msg, sizeof j->msg, "MACs %llu (zero %llu), the ecoflow dX + dW formulas say %llu (zero %llu)",
                 (unsigned long long)rep->macs, (unsigned long long)rep->macs_zero, (unsigned long long)macs,
                 (unsigned long long)zero);
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    }
    /* once; less when some dY rows meet only padding (no X row: neither dX nor dW reads them);
     * dense pixel rows: plus at most a beat where two of the units' LOADs (two per unit at most:
     * the ring's wrap) meet inside one */
    uint64_t once = rep->comp_rd[NPU_TAG_DY] + (j->bp.padded ? 0u : 2u * (uint64_t)j->bp.dx.units * j->bp.dx.B);
    if (rep->rd[NPU_TAG_DY] > once) {
        snprintf(j->msg, sizeof j->msg, "DY read %llu bytes, more than one read of dY (%llu)",
                 (unsigned long long)rep->rd[NPU_TAG_DY], (unsigned long long)once);
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    }
    for (int t = 1; t < NPU_NUM_TAGS; t++)
        if (rep->rd[t] != rep->plan_rd[t] || rep->wr[t] != rep->plan_wr[t]) {
            snprintf(j->msg, sizeof j->msg, "tag %d: read %llu written %llu bytes, the plan says %llu and %llu", t,
                     (unsigned long long)rep->rd[t], (unsigned long long)rep->wr[t],
                     (unsigned long long)rep->plan_rd[t], (unsigned long long)rep->plan_wr[t]);
            return done(rep, NPU_GEMM_COUNTERS, j->msg);
        }
    return done(rep, NPU_GEMM_PASS, NULL);
}

int npu_conv_bwd_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, uint64_t seed,
                     uint64_t max_cycles, npu_conv_bwd_io_t *io, npu_conv_bwd_report_t *rep)
{
    bwd_job_t *j = calloc(1, sizeof *j);
    int rc;
    memset(rep, 0, sizeof *rep);
    if (!j)
        return done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
    j->cfg = cfg;
    j->sim = sim;
    j->c = c;
    j->rep = rep;
    j->io = io;
    j->dram = npu_sim_dram(sim, &j->dram_bytes);
    j->B = (unsigned)npu_cfg_word(cfg);
    npu_prog_init(&j->prog);
    if ((rc = prepare(j, seed)) == NPU_GEMM_PASS && (rc = layout(j)) == NPU_GEMM_PASS &&
        (rc = run(j, max_cycles)) == NPU_GEMM_PASS && (rc = check_results(j)) == NPU_GEMM_PASS)
        rc = check_counters(j);
    npu_prog_free(&j->prog);
    free(j->X);
    free(j->Wt);
    free(j->dY);
    free(j->dx);
    free(j->dx_exp);
    free(j->dwt);
    free(j->dw);
    free(j->dw_exp);
    free(j);
    return rc;
}
