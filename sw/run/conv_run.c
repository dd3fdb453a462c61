/* conv_run.c - the convolution driver; see conv_run.h. */
#include "run/conv_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_emit.h"
#include "ref/golden.h"
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

int npu_conv_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel, int dataflow,
                 uint64_t seed, uint64_t max_cycles, npu_conv_report_t *rep)
{
    return npu_conv_run_opts(cfg, sim, c, kernel, dataflow, NULL, seed, max_cycles, rep);
}

int npu_conv_run_opts(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                      int dataflow, const npu_conv_plan_opts_t *opts, uint64_t seed,
                      uint64_t max_cycles, npu_conv_report_t *rep)
{
    npu_conv_plan_t *p = malloc(sizeof *p);
    npu_prog_t prog;
    npu_prog_expect_t ex;
    npu_run_result_t rr;
    npu_conv_addrs_t ad;
    npu_alloc_t al;
    size_t dram_bytes = 0;
    uint8_t *dram = npu_sim_dram(sim, &dram_bytes);
    unsigned B = (unsigned)npu_cfg_beat(cfg);
    int16_t *X = NULL, *Wt = NULL, *dY = NULL, *Z = NULL;
    int32_t *got = NULL, *exp = NULL;
    uint64_t ax = 0, aw = 0, ady = 0, aout = 0, apg = 0;
    char msg[200];
    int rc, OH, OW, orows = 0, ocols = 0;

    memset(rep, 0, sizeof *rep);
    rep->kernel = kernel;
    rep->dataflow = dataflow;
    npu_prog_init(&prog);
    if (!p)
        return done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
    if (npu_conv_plan(cfg, c, kernel, dataflow, opts, p, msg, sizeof msg) != 0) {
        free(p);
        return done(rep, NPU_GEMM_HOST_ERROR, msg);
    }
    rep->expect = npu_conv_macs(c, kernel, dataflow);
    rep->bands = p->units;
    OH = p->OH;
    OW = p->OW;
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        rep->plan_rd_bytes += p->plan_rd[t];
        rep->plan_wr_bytes += p->plan_wr[t];
        rep->compulsory_rd_bytes += p->comp_rd[t];
        rep->compulsory_wr_bytes += p->comp_wr[t];
    }
    {
        size_t nx = (size_t)c->batch * c->H * c->W * c->C, ndy = (size_t)c->batch * OH * OW * c->F;
        X = malloc(sizeof *X * nx);
        Wt = malloc(sizeof *Wt * wt_elems(c));
        dY = malloc(sizeof *dY * ndy);
        if (kernel == NPU_CONV_FWD) {
            orows = c->batch * OH * OW;
            ocols = c->F;
        } else if (kernel == NPU_CONV_DX) {
            orows = c->batch * c->H * c->W;
            ocols = c->C;
        } else { /* depthwise: the dense C x C per tap (F = C), the host takes the diagonal */
            orows = p->T * c->F;
            ocols = c->C;
        }
        got = malloc(sizeof *got * (size_t)orows * (size_t)ocols);
        exp = malloc(sizeof *exp * (size_t)orows * (size_t)ocols);
        if (!X || !Wt || !dY || !got || !exp) {
            rc = done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
            goto out;
        }
        npu_conv_operands(c, seed, X, Wt, dY);
    }
    if (kernel == NPU_CONV_DW && dataflow == NPU_CONV_ZEROPAD) {
        /* the baseline's lowering: the host materialises the zero-inserted dY (s-1 zeros between
         * elements, DH x DW pixels) in DRAM; its traffic is s^2 x dY's (docs/conv.md) */
        size_t nz = (size_t)c->batch * p->vOH * p->vOW * c->F;
        Z = calloc(nz, sizeof *Z);
        if (!Z) {
            rc = done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
            goto out;
        }
        for (int b = 0; b < c->batch; b++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++)
                    memcpy(Z + (((size_t)b * p->vOH + (size_t)oh * c->stride) * p->vOW + (size_t)ow * c->stride) * c->F,
                           dY + (((size_t)b * OH + oh) * OW + ow) * c->F, sizeof *Z * (size_t)c->F);
    }
    npu_alloc_init(&al, dram ? dram_bytes : 0, B > 16 ? B : 16);
    if ((kernel != NPU_CONV_DX && npu_alloc(&al, npu_conv_tensor_bytes(p, NPU_TAG_X), &ax)) ||
        (kernel != NPU_CONV_DW && npu_alloc(&al, npu_conv_tensor_bytes(p, NPU_TAG_W), &aw)) ||
        (kernel != NPU_CONV_FWD && npu_alloc(&al, npu_conv_tensor_bytes(p, NPU_TAG_DY), &ady)) ||
        npu_alloc(&al, npu_conv_tensor_bytes(p, kernel == NPU_CONV_FWD ? NPU_TAG_Y
                                                 : kernel == NPU_CONV_DX ? NPU_TAG_DX : NPU_TAG_DW), &aout) ||
        al.next > 0xFFFFFFFFull) {
        rc = done(rep, NPU_GEMM_HOST_ERROR, "the tensors do not fit the DRAM");
        goto out;
    }
    ad.x = (uint32_t)ax;
    ad.w = (uint32_t)aw;
    ad.dy = (uint32_t)ady;
    ad.out = (uint32_t)aout;
    if (npu_conv_emit(cfg, p, &ad, &prog, msg, sizeof msg) != 0) {
        rc = done(rep, NPU_GEMM_HOST_ERROR, msg);
        goto out;
    }
    rep->insns = prog.n;
    if (npu_alloc(&al, (uint64_t)prog.n * NPU_INSN_BYTES, &apg) != 0) {
        rc = done(rep, NPU_GEMM_HOST_ERROR, "the program does not fit the DRAM");
        goto out;
    }
    if (kernel != NPU_CONV_DX)
        npu_write_i16(dram, ax, p->px, B, c->batch * c->H * c->W, c->C, X, (size_t)c->C);
    if (kernel != NPU_CONV_DW && !c->depthwise)
        npu_write_i16(dram, aw, p->pw, B, p->T * c->F, c->C, Wt, (size_t)c->C);
    if (kernel != NPU_CONV_DW && c->depthwise) {
        /* the depthwise weights packed once into diagonal 2S x 2S blocks (docs/conv.md): row r of
         * block b of tap t is a word with Wt[t][2S*b + r] in lane r, zero elsewhere */
        int L = p->L, rows = p->T * p->cw * L;
        int16_t *D = calloc((size_t)rows * (size_t)L, sizeof *D);
        if (!D) {
            rc = done(rep, NPU_GEMM_HOST_ERROR, "out of memory");
            goto out;
        }
        for (int t = 0; t < p->T; t++)
            for (int ch = 0; ch < c->C; ch++)
                D[((size_t)(t * p->cw + ch / L) * (size_t)L + (size_t)(ch % L)) * (size_t)L + (size_t)(ch % L)] =
                    Wt[(size_t)t * (size_t)c->C + (size_t)ch];
        npu_write_i16(dram, aw, 1, B, rows, L, D, (size_t)L);
        free(D);
    }
    if (kernel != NPU_CONV_FWD)
        npu_write_i16(dram, ady, p->pdy, B, c->batch * p->vOH * p->vOW, c->F, Z ? Z : dY, (size_t)c->F);
    /* poison the output: an element the NPU never writes cannot match by accident */
    memset(dram + aout, 0xA5, (size_t)orows * p->pout * B);

    npu_prog_expect(cfg, prog.insn, prog.n, &ex);
    rc = npu_run_program(cfg, sim, apg, prog.insn, prog.n, max_cycles, &rr);
    memcpy(rep->cnt, rr.cnt, sizeof rep->cnt);
    rep->cycles = rr.cnt[NPU_CNT_cycles];
    for (int m = 0; m < NPU_NUM_MODES; m++)
        rep->exec_busy += rr.cnt[NPU_CNT_busy_fw + m];
    for (int i = 0; i < 4; i++)
        rep->macs += rr.cnt[NPU_CNT_macs_core0 + i];
    rep->macs_zero = rr.cnt[NPU_CNT_macs_zero];
    for (int t = 1; t < NPU_NUM_TAGS; t++) {
        rep->dram_rd_bytes += rr.cnt[NPU_CNT_dram_rd_prog + t];
        rep->dram_wr_bytes += rr.cnt[NPU_CNT_dram_wr_prog + t];
    }
    if (rc == NPU_RUN_HOST_ERROR) {
        rc = done(rep, NPU_GEMM_HOST_ERROR, "the program does not fit the DRAM");
        goto out;
    }
    if (rc == NPU_RUN_SIM_STOPPED) {
        uint64_t at = rr.end_cycle;
        const char *m = npu_sim_assert_msg(sim, &at);
        snprintf(msg, sizeof msg, "RTL assertion at cycle %llu: %s", (unsigned long long)at,
                 m ? m : "$finish without a message");
        rc = done(rep, NPU_GEMM_HOST_ERROR, msg);
        goto out;
    }
    if (rc == NPU_RUN_TIMEOUT) {
        rc = done(rep, NPU_GEMM_TIMEOUT, "timeout");
        goto out;
    }
    if (rc == NPU_RUN_ERROR) {
        snprintf(msg, sizeof msg, "NPU error %s at pc %u (info 0x%x)",
                 npu_error_name(rr.err) ? npu_error_name(rr.err) : "?", (unsigned)rr.err_pc,
                 (unsigned)rr.err_info);
        rc = done(rep, NPU_GEMM_NPU_ERROR, msg);
        goto out;
    }
    npu_read_i32(dram, aout, p->pout, B, orows, ocols, got, (size_t)ocols);
    if (kernel == NPU_CONV_DW && c->depthwise) { /* the diagonal of each tap's C x C */
        for (int t = 0; t < p->T; t++)
            for (int ch = 0; ch < c->C; ch++)
                got[(size_t)t * (size_t)c->C + (size_t)ch] = got[((size_t)t * (size_t)c->C + (size_t)ch) * (size_t)c->C + (size_t)ch];
        orows = p->T;
    }
    if (kernel == NPU_CONV_FWD)
        npu_conv_fwd_golden(c, X, Wt, exp);
    else if (kernel == NPU_CONV_DX)
        npu_conv_dx_golden(c, dY, Wt, exp);
    else
        npu_conv_dw_golden(c, X, dY, exp);
    {
        int br = 0, bc = 0;
        int32_t gv = 0, ev = 0;
        size_t bad = npu_compare_i32(orows, ocols, got, (size_t)ocols, exp, (size_t)ocols, &br, &bc, &gv, &ev);
        if (bad) {
            snprintf(msg, sizeof msg, "%zu mismatches, first %s row %d (%s) channel %d = %d expected %d",
                     bad, npu_conv_kernel_name(kernel), br,
                     kernel == NPU_CONV_DW ? "tap*F+f" : "pixel", bc, (int)gv, (int)ev);
            rc = done(rep, NPU_GEMM_MISMATCH, msg);
            goto out;
        }
    }
    if (npu_check_counters(rr.cnt, &ex, msg, sizeof msg) != 0) {
        rc = done(rep, NPU_GEMM_COUNTERS, msg);
        goto out;
    }
    {
        npu_array_expect_t ax2;
        npu_prog_expect_array(cfg, prog.insn, prog.n, &ax2);
        if (npu_check_array_counters(rr.cnt, &ax2, msg, sizeof msg) != 0) {
            rc = done(rep, NPU_GEMM_COUNTERS, msg);
            goto out;
        }
    }
    /* the MAC formulas. Depthwise: the hardware counts k x n per row (the diagonal tiles' and
     * the dense dW's zero pairs too), so the MACs are checked against the program above and the
     * zeros against the formula scaled by the pairs per useful pair: fwd / dX sum(ck^2) / C over
     * the channel blocks (a zero lane meets its block's ck filters), dW F (= C) */
    if (c->depthwise) {
        uint64_t sq = 0;
        for (int cb = 0; cb < p->cw; cb++) {
            uint64_t ck = (uint64_t)(c->C - cb * p->L < p->L ? c->C - cb * p->L : p->L);
            sq += ck * ck;
        }
        rep->expect.zero = kernel == NPU_CONV_DW ? rep->expect.zero * (uint64_t)c->F
                                                 : rep->expect.zero / (uint64_t)c->C * sq;
    }
    if (!c->depthwise && rep->macs != rep->expect.total) {
        snprintf(msg, sizeof msg, "MACs %llu, the %s %s formula says %llu", (unsigned long long)rep->macs,
                 npu_conv_kernel_name(kernel), npu_conv_dataflow_name(dataflow),
                 (unsigned long long)rep->expect.total);
        rc = done(rep, NPU_GEMM_COUNTERS, msg);
        goto out;
    }
    if (rep->macs_zero != rep->expect.zero) {
        snprintf(msg, sizeof msg, "macs_zero %llu, the %s %s formula says %llu",
                 (unsigned long long)rep->macs_zero, npu_conv_kernel_name(kernel),
                 npu_conv_dataflow_name(dataflow), (unsigned long long)rep->expect.zero);
        rc = done(rep, NPU_GEMM_COUNTERS, msg);
        goto out;
    }
    rc = done(rep, NPU_GEMM_PASS, NULL);
out:
    npu_prog_free(&prog);
    free(p);
    free(X);
    free(Wt);
    free(dY);
    free(Z);
    free(got);
    free(exp);
    return rc;
}
