/* conv_run.c - the convolution driver; see conv_run.h. */
#include "run/conv_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_emit.h"
#include "compile/conv/conv_slice.h"
#include "compile/conv/conv_split.h"
#include "ref/golden.h"
#include "run/conv_bf16.h"
#include "run/report.h"
#include "run/runtime.h"

static const char *const k_kernel[3] = {"fwd", "dx", "dw"};
static const char *const k_df[2] = {"zeropad", "ecoflow"};

const char *npu_conv_kernel_name(int kernel)
{
    return kernel >= 0 && kernel < 3 ? k_kernel[kernel] : "?";
}

const char *npu_conv_dataflow_name(int df) { return df >= 0 && df < 2 ? k_df[df] : "?"; }

int npu_conv_kernel_parse(const char *s)
{
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, k_kernel[i]) == 0)
            return i;
    return -1;
}

int npu_conv_dataflow_parse(const char *s)
{
    for (int i = 0; s && i < 2; i++)
        if (strcmp(s, k_df[i]) == 0)
            return i;
    return -1;
}

static size_t wt_elems(const npu_conv_t *c)
{
    return (size_t)c->KH * (size_t)c->KW * (size_t)(c->depthwise ? 1 : c->F) * (size_t)c->C;
}

void npu_conv_operands(const npu_conv_t *c, uint64_t seed, int16_t *X, int16_t *Wt, int16_t *dY)
{
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    size_t nx = (size_t)c->batch * (size_t)c->H * (size_t)c->W * (size_t)c->C;
    size_t ndy = (size_t)c->batch * (size_t)npu_conv_oh(c) * (size_t)npu_conv_ow(c) * (size_t)c->F;
    size_t nw = wt_elems(c);
    int16_t *dst[3] = {X, Wt, dY};
    size_t cnt[3] = {nx, nw, ndy};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < cnt[t]; i++) {
            int16_t v;
            do { /* nonzero: macs_zero then counts only the dataflow's structural zeros */
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v = (int16_t)(x >> 40);
            } while (v == 0);
            if (dst[t])
                dst[t][i] = v;
        }
}

static int done(npu_conv_report_t *rep, int rc, const char *msg)
{
    rep->rc = rc;
    if (msg && !rep->msg[0])
        snprintf(rep->msg, sizeof rep->msg, "%s", msg);
    return rc;
}

static int conv_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                    int dataflow, const npu_conv_plan_opts_t *opts, uint64_t seed,
                    uint64_t max_cycles, npu_conv_io_t *io, npu_conv_report_t *rep);

int npu_conv_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel, int dataflow,
                 uint64_t seed, uint64_t max_cycles, npu_conv_report_t *rep)
{
    return conv_run(cfg, sim, c, kernel, dataflow, NULL, seed, max_cycles, NULL, rep);
}

int npu_conv_run_opts(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                      int dataflow, const npu_conv_plan_opts_t *opts, uint64_t seed,
                      uint64_t max_cycles, npu_conv_report_t *rep)
{
    return conv_run(cfg, sim, c, kernel, dataflow, opts, seed, max_cycles, NULL, rep);
}

int npu_conv_run_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                    int dataflow, uint64_t seed, uint64_t max_cycles, npu_conv_io_t *io,
                    npu_conv_report_t *rep)
{
    return conv_run(cfg, sim, c, kernel, dataflow, NULL, seed, max_cycles, io, rep);
}

int npu_conv_run_opts_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel, int dataflow,
                         const npu_conv_plan_opts_t *opts, uint64_t seed, uint64_t max_cycles, npu_conv_io_t *io,
                         npu_conv_report_t *rep)
{
    return conv_run(cfg, sim, c, kernel, dataflow, opts, seed, max_cycles, io, rep);
}

void npu_conv_out_shape(const npu_conv_t *c, int kernel, int *rows, int *cols)
{
    *rows = kernel == NPU_CONV_FWD  ? c->batch * npu_conv_oh(c) * npu_conv_ow(c)
            : kernel == NPU_CONV_DX ? c->batch * c->H * c->W
                                    : c->KH * c->KW * (c->depthwise ? 1 : c->F);
    *cols = kernel == NPU_CONV_FWD ? c->F : c->C;
}

/* One kernel run: the plan, the host tensors, the DRAM layout and the program. */
typedef struct conv_job {
    const npu_cfg_t *cfg;
    npu_sim_t *sim;
    const npu_conv_t *c;
    int kernel, dataflow;
    npu_conv_report_t *rep;
    npu_conv_io_t *io;     /* the caller's tensors, or NULL */
    npu_conv_split_t *sp;        /* the plan, in parts when the layer needs them */
    const npu_conv_plan_t *p;    /* the whole layer's geometry and DRAM layout (sp->whole) */
    uint8_t *dram;
    size_t dram_bytes;
    unsigned B;                  /* beat bytes */
    int16_t *X, *Wt, *dY, *Z;    /* Z: the zeropad baseline's zero-inserted dY (dW only) */
    int32_t *got, *exp;
    int orows, ocols;            /* the output as the NPU stores it */
    npu_conv_addrs_t ad;
    uint64_t apg;                /* program address */
    npu_prog_t prog;
    npu_run_result_t rr;
    char msg[200];
} conv_job_t;

/* The plan and what it implies for the report. */
static int plan_kernel(conv_job_t *j, const npu_conv_plan_opts_t *opts)
{
    npu_conv_report_t *rep = j->rep;
    if (npu_conv_split(j->cfg, j->c, j->kernel, j->dataflow, opts, j->sp, j->msg, sizeof j->msg) != 0)
        return done(rep, NPU_GEMM_HOST_ERROR, j->msg);
    j->p = &j->sp->whole;
    rep->expect = npu_conv_macs(j->c, j->kernel, j->dataflow);
    rep->bands = j->sp->units;
    rep->parts = j->sp->parts;
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        rep->plan_rd_bytes += j->sp->plan_rd[t];
        rep->plan_wr_bytes += j->sp->plan_wr[t];
        rep->compulsory_rd_bytes += j->sp->comp_rd[t];
        rep->compulsory_wr_bytes += j->sp->comp_wr[t];
    }
    return NPU_GEMM_PASS;
}

/* Seeded operands, the result buffers and, for the zeropad dW, the zero-inserted dY. */
static int host_tensors(conv_job_t *j, uint64_t seed)
{
    const npu_conv_t *c = j->c;
    const npu_conv_plan_t *p = j->p;
    size_t nx = (size_t)c->batch * c->H * c->W * c->C, ndy = (size_t)c->batch * p->OH * p->OW * c->F;
    j->X = malloc(sizeof *j->X * nx);
    j->Wt = malloc(sizeof *j->Wt * wt_elems(c));
    j->dY = malloc(sizeof *j->dY * ndy);
    if (j->kernel == NPU_CONV_FWD) {
        j->orows = c->batch * p->OH * p->OW;
        j->ocols = c->F;
    } else if (j->kernel == NPU_CONV_DX) {
        j->orows = c->batch * c->H * c->W;
        j->ocols = c->C;
    } else { /* depthwise: the dense C x C per tap (F = C), the host takes the diagonal */
        j->orows = p->T * c->F;
        j->ocols = c->C;
    }
    j->got = malloc(sizeof *j->got * (size_t)j->orows * (size_t)j->ocols);
    j->exp = malloc(sizeof *j->exp * (size_t)j->orows * (size_t)j->ocols);
    if (!j->X || !j->Wt || !j->dY || !j->got || !j->exp)
        return done(j->rep, NPU_GEMM_HOST_ERROR, "out of memory");
    if (npu_cfg_bf16(j->cfg))
        npu_conv_operands_bf16(c, seed, j->X, j->Wt, j->dY);
    else
        npu_conv_operands(c, seed, j->X, j->Wt, j->dY);
    if (j->io && j->io->X)
        memcpy(j->X, j->io->X, sizeof *j->X * nx);
    if (j->io && j->io->Wt)
        memcpy(j->Wt, j->io->Wt, sizeof *j->Wt * wt_elems(c));
    if (j->io && j->io->dY)
        memcpy(j->dY, j->io->dY, sizeof *j->dY * ndy);
    if (j->kernel != NPU_CONV_DW || j->dataflow != NPU_CONV_ZEROPAD)
        return NPU_GEMM_PASS;
    /* the baseline's lowering: the host materialises the zero-inserted dY (s-1 zeros between
     * elements, DH x DW pixels) in DRAM; its traffic is s^2 x dY's (docs/conv.md) */
    j->Z = calloc((size_t)c->batch * p->vOH * p->vOW * c->F, sizeof *j->Z);
    if (!j->Z)
        return done(j->rep, NPU_GEMM_HOST_ERROR, "out of memory");
    for (int b = 0; b < c->batch; b++)
        for (int oh = 0; oh < p->OH; oh++)
            for (int ow = 0; ow < p->OW; ow++)
                memcpy(j->Z + (((size_t)b * p->vOH + (size_t)oh * c->stride) * p->vOW + (size_t)ow * c->stride) * c->F,
                       j->dY + (((size_t)b * p->OH + oh) * p->OW + ow) * c->F, sizeof *j->Z * (size_t)c->F);
    return NPU_GEMM_PASS;
}

/* DRAM addresses of the kernel's tensors (npu_conv_dram_layout: the slicing selection costs its
 * candidates at the same ones), the program emitted and placed after them. */
static int layout_and_emit(conv_job_t *j)
{
    uint64_t end, lim = j->dram ? j->dram_bytes : 0;
    npu_alloc_t al;
    unsigned DB = (unsigned)npu_cfg_beat(j->cfg); /* tensors and program from a DRAM beat */
    npu_alloc_init(&al, lim, DB > 16 ? DB : 16);
    npu_conv_dram_layout(j->p, al.align, &j->ad, &end);
    if (end > lim || end > 0xFFFFFFFFull) {
        char msg[160];
        snprintf(msg, sizeof msg, "the tensors need %llu bytes of DRAM; the DRAM holds %llu bytes",
                 (unsigned long long)end, (unsigned long long)lim);
        return done(j->rep, NPU_GEMM_NO_FIT, msg);
    }
    al.next = end;
    if (npu_conv_split_emit(j->cfg, j->sp, &j->ad, &j->prog, j->msg, sizeof j->msg) != 0)
        return done(j->rep, NPU_GEMM_HOST_ERROR, j->msg);
    j->rep->insns = j->prog.n;
    if (npu_alloc(&al, (uint64_t)j->prog.n * NPU_INSN_BYTES, &j->apg) != 0)
        return done(j->rep, NPU_GEMM_HOST_ERROR, "the program does not fit the DRAM");
    return NPU_GEMM_PASS;
}

/* The depthwise weights packed once into diagonal 2S x 2S blocks (docs/conv.md): row r of block
 * b of tap t is a word with Wt[t][2S*b + r] in lane r, zero elsewhere. */
static int write_depthwise_weights(conv_job_t *j)
{
    const npu_conv_plan_t *p = j->p;
    int L = p->L, rows = p->T * p->cw * L;
    int16_t *D = calloc((size_t)rows * (size_t)L, sizeof *D);
    if (!D)
        return done(j->rep, NPU_GEMM_HOST_ERROR, "out of memory");
    for (int t = 0; t < p->T; t++)
        for (int ch = 0; ch < j->c->C; ch++)
            D[((size_t)(t * p->cw + ch / L) * (size_t)L + (size_t)(ch % L)) * (size_t)L + (size_t)(ch % L)] =
                j->Wt[(size_t)t * (size_t)j->c->C + (size_t)ch];
    npu_write_i16(j->dram, j->ad.w, j->B, rows, L, D, (size_t)L);
    free(D);
    return NPU_GEMM_PASS;
}

/* The kernel's inputs into DRAM, the output poisoned: an element the NPU never writes cannot
 * match by accident. */
static int write_tensors(conv_job_t *j)
{
    const npu_conv_t *c = j->c;
    const npu_conv_plan_t *p = j->p;
    int k = j->kernel;
    if (k != NPU_CONV_DX)
        npu_write_i16(j->dram, j->ad.x, p->pitch_x, c->batch * c->H * c->W, c->C, j->X, (size_t)c->C);
    if (k != NPU_CONV_DW && !c->depthwise)
        npu_write_i16(j->dram, j->ad.w, p->pitch_w, p->T * c->F, c->C, j->Wt, (size_t)c->C);
    if (k != NPU_CONV_DW && c->depthwise && write_depthwise_weights(j) != NPU_GEMM_PASS)
        return j->rep->rc;
    if (k != NPU_CONV_FWD)
        npu_write_i16(j->dram, j->ad.dy, p->pitch_dy, c->batch * p->vOH * p->vOW, c->F,
                      j->Z ? j->Z : j->dY, (size_t)c->F);
    memset(j->dram + j->ad.out, 0xA5, (size_t)j->orows * p->pitch_out);
    return NPU_GEMM_PASS;
}

/* Runs the program; its counters go to the report whatever the outcome. */
static int run_kernel(conv_job_t *j, uint64_t max_cycles)
{
    npu_conv_report_t *rep = j->rep;
    npu_run_result_t *rr = &j->rr;
    int rc = npu_run_program(j->cfg, j->sim, j->apg, j->prog.insn, j->prog.n, max_cycles, rr);
    npu_conv_sums_t sm = npu_conv_run_sums(rr->cnt);
    memcpy(rep->cnt, rr->cnt, sizeof rep->cnt);
    rep->cycles = sm.cycles;
    rep->exec_busy = sm.exec_busy;
    rep->macs = sm.macs;
    rep->macs_zero = sm.macs_zero;
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        rep->dram_rd_bytes += rr->cnt[NPU_CNT_dram_rd_prog + t];
        rep->dram_wr_bytes += rr->cnt[NPU_CNT_dram_wr_prog + t];
    }
    rc = npu_conv_run_outcome(j->sim, rc, rr, j->msg, sizeof j->msg);
    return rc == NPU_GEMM_PASS ? rc : done(rep, rc, j->msg);
}

npu_conv_sums_t npu_conv_run_sums(const uint64_t *cnt)
{
    npu_conv_sums_t s = {cnt[NPU_CNT_cycles], npu_report_array_busy(cnt), 0, cnt[NPU_CNT_macs_zero]};
    for (int i = 0; i < 4; i++)
        s.macs += cnt[NPU_CNT_macs_core0 + i];
    return s;
}

int npu_conv_run_outcome(npu_sim_t *sim, int run_rc, const npu_run_result_t *rr, char *msg, size_t n)
{
    if (run_rc == NPU_RUN_HOST_ERROR) {
        snprintf(msg, n, "the program does not fit the DRAM");
        return NPU_GEMM_HOST_ERROR;
    }
    if (run_rc == NPU_RUN_SIM_STOPPED) {
        uint64_t at = rr->end_cycle;
        const char *m = npu_sim_assert_msg(sim, &at);
        snprintf(msg, n, "RTL assertion at cycle %llu: %s", (unsigned long long)at,
                 m ? m : "$finish without a message");
        return NPU_GEMM_HOST_ERROR;
    }
    if (run_rc == NPU_RUN_TIMEOUT) {
        snprintf(msg, n, "timeout");
        return NPU_GEMM_TIMEOUT;
    }
    if (run_rc == NPU_RUN_ERROR) {
        snprintf(msg, n, "NPU error %s at pc %u (info 0x%x)",
                 npu_error_name(rr->err) ? npu_error_name(rr->err) : "?", (unsigned)rr->err_pc,
                 (unsigned)rr->err_info);
        return NPU_GEMM_NPU_ERROR;
    }
    return NPU_GEMM_PASS;
}

/* The output read back (depthwise dW: the diagonal of each tap's C x C) against the golden
 * model, bit-exact. */
static int check_result(conv_job_t *j)
{
    const npu_conv_t *c = j->c;
    int rows = j->orows, br = 0, bc = 0, k = j->kernel;
    int32_t gv = 0, ev = 0;
    size_t bad;
    npu_read_i32(j->dram, j->ad.out, j->p->pitch_out, j->orows, j->ocols, j->got, (size_t)j->ocols);
    if (k == NPU_CONV_DW && c->depthwise) {
        for (int t = 0; t < j->p->T; t++)
            for (int ch = 0; ch < c->C; ch++)
                j->got[(size_t)t * (size_t)c->C + (size_t)ch] = j->got[((size_t)t * (size_t)c->C + (size_t)ch) * (size_t)c->C + (size_t)ch];
        rows = j->p->T;
    }
    if (npu_cfg_bf16(j->cfg)) { /* fp32 sums: the program's order (conv_bf16.h) */
        if (npu_conv_golden_plan_bf16(j->sp, j->X, j->Wt, j->dY, j->exp) != 0)
            return done(j->rep, NPU_GEMM_HOST_ERROR, "the bf16 golden model failed (out of memory)");
    } else if (k == NPU_CONV_FWD)
        npu_conv_fwd_golden(c, j->X, j->Wt, j->exp);
    else if (k == NPU_CONV_DX)
        npu_conv_dx_golden(c, j->dY, j->Wt, j->exp);
    else
        npu_conv_dw_golden(c, j->X, j->dY, j->exp);
    bad = npu_compare_i32(rows, j->ocols, j->got, (size_t)j->ocols, j->exp, (size_t)j->ocols, &br,
                          &bc, &gv, &ev);
    if (j->io && j->io->out)
        memcpy(j->io->out, j->got, sizeof *j->got * (size_t)rows * (size_t)j->ocols);
    if (j->io && j->io->golden)
        memcpy(j->io->golden, j->exp, sizeof *j->exp * (size_t)rows * (size_t)j->ocols);
    if (j->io)
        j->io->filled = 1;
    if (!bad)
        return NPU_GEMM_PASS;
    snprintf(j->msg, sizeof j->msg,
             npu_cfg_bf16(j->cfg) ? "%zu mismatches, first %s row %d (%s) channel %d = 0x%08x expected 0x%08x"
                                  : "%zu mismatches, first %s row %d (%s) channel %d = %d expected %d",
             bad, npu_conv_kernel_name(k), br, k == NPU_CONV_DW ? "tap*F+f" : "pixel", bc, (int)gv,
             (int)ev);
    return done(j->rep, NPU_GEMM_MISMATCH, j->msg);
}

/* Every counter against the program (npu_prog_expect, npu_prog_expect_array). */
static int check_counters(conv_job_t *j)
{
    npu_prog_expect_t ex;
    npu_array_expect_t ax;
    npu_prog_expect(j->cfg, j->prog.insn, j->prog.n, &ex);
    if (npu_check_counters(j->rr.cnt, &ex, j->msg, sizeof j->msg) != 0)
        return done(j->rep, NPU_GEMM_COUNTERS, j->msg);
    npu_prog_expect_array(j->cfg, j->prog.insn, j->prog.n, &ax);
    if (npu_check_array_counters(j->rr.cnt, &ax, j->msg, sizeof j->msg) != 0)
        return done(j->rep, NPU_GEMM_COUNTERS, j->msg);
    return NPU_GEMM_PASS;
}

/* The MACs and zero-operand MACs against the formulas. Depthwise: the hardware counts k x n per
 * row (the diagonal tiles' and the dense dW's zero pairs too), so the MACs are checked against
 * the program (check_counters) and the zeros against the formula scaled by the pairs per useful
 * pair: fwd / dX sum(ck^2) / C over the channel blocks (a zero lane meets its block's ck
 * filters), dW the sum of C'^2 / C over the parts (dense C' x C' per part; C = F whole). */
static int check_macs(conv_job_t *j)
{
    const npu_conv_t *c = j->c;
    npu_conv_report_t *rep = j->rep;
    const char *kn = npu_conv_kernel_name(j->kernel), *dn = npu_conv_dataflow_name(j->dataflow);
    if (c->depthwise) {
        uint64_t sq = 0;
        for (int cb = 0; cb < j->p->cw; cb++) {
            uint64_t ck = (uint64_t)(c->C - cb * j->p->L < j->p->L ? c->C - cb * j->p->L : j->p->L);
            sq += ck * ck;
        }
        uint64_t dense = 0; /* dW: each channel range's dense C' x C' per tap (C' = C whole; its
                               column ranges, the outer index, share its pixels) */
        for (int i = 0; i < j->sp->nf * j->sp->nc; i++)
            dense += (uint64_t)j->sp->part[i].c.C * (uint64_t)j->sp->part[i].c.C;
        rep->expect.zero = rep->expect.zero / (uint64_t)c->C * (j->kernel == NPU_CONV_DW ? dense : sq);
    }
    if (!c->depthwise && rep->macs != rep->expect.total) {
        snprintf(j->msg, sizeof j->msg, "MACs %llu, the %s %s formula says %llu",
                 (unsigned long long)rep->macs, kn, dn, (unsigned long long)rep->expect.total);
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    }
    /* the caller's data may hold zeros of its own: at least the structural ones then */
    if (j->io ? rep->macs_zero < rep->expect.zero : rep->macs_zero != rep->expect.zero) {
        snprintf(j->msg, sizeof j->msg, "macs_zero %llu, the %s %s formula says %llu",
                 (unsigned long long)rep->macs_zero, kn, dn, (unsigned long long)rep->expect.zero);
        return done(rep, NPU_GEMM_COUNTERS, j->msg);
    }
    return done(rep, NPU_GEMM_PASS, NULL);
}

static int conv_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                    int dataflow, const npu_conv_plan_opts_t *opts, uint64_t seed,
                    uint64_t max_cycles, npu_conv_io_t *io, npu_conv_report_t *rep)
{
    conv_job_t j;
    int rc;

    memset(rep, 0, sizeof *rep);
    rep->kernel = kernel;
    rep->dataflow = dataflow;
    memset(&j, 0, sizeof j);
    j.cfg = cfg;
    j.sim = sim;
    j.c = c;
    j.kernel = kernel;
    j.dataflow = dataflow;
    j.rep = rep;
    j.io = io;
    j.dram = npu_sim_dram(sim, &j.dram_bytes);
    j.B = (unsigned)npu_cfg_word(cfg);
    npu_prog_init(&j.prog);
    j.sp = calloc(1, sizeof *j.sp);
    if (!j.sp)
        return done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
    if ((rc = plan_kernel(&j, opts)) == NPU_GEMM_PASS && (rc = host_tensors(&j, seed)) == NPU_GEMM_PASS &&
        (rc = layout_and_emit(&j)) == NPU_GEMM_PASS && (rc = write_tensors(&j)) == NPU_GEMM_PASS &&
        (rc = run_kernel(&j, max_cycles)) == NPU_GEMM_PASS && (rc = check_result(&j)) == NPU_GEMM_PASS &&
        (rc = check_counters(&j)) == NPU_GEMM_PASS)
        rc = check_macs(&j);
    npu_prog_free(&j.prog);
    npu_conv_split_free(j.sp);
    free(j.sp);
    free(j.X);
    free(j.Wt);
    free(j.dY);
    free(j.Z);
    free(j.got);
    free(j.exp);
    return rc;
}
