/* step_run.c - whole training steps on the NPU (step_run.h). */
#include "run/step_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "ref/bf16.h"
#include "ref/conv_golden.h"
#include "ref/vk_golden.h"
#include "run/conv_bf16.h"
#include "run/runtime.h"

/* Records a failure (printf format); the first one's text is kept. Returns -1. */
static int fail(npu_step_run_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!s->failed++)
        vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* A vector, convolution or transpose kernel's program into kp (a convolution's plan kept in
 * kp->conv for its golden model). 0, or -1 with the reason. */
static int emit_other(npu_step_run_t *s, const npu_step_kernel_t *k, npu_step_prog_t *kp, char *why, size_t n)
{
    const npu_step_conv_t *cv = &k->cv;
    if (k->kind == NPU_SK_VEC)
        return npu_vk_emit(s->cfg, &k->v, &kp->prog, why, n);
    if (k->kind == NPU_SK_XPOSE)
        return npu_vk_xpose_emit(s->cfg, &k->xp, &kp->prog, why, n);
    if (k->kind == NPU_SK_CONV_FWD) {
        npu_conv_split_t *sp = calloc(1, sizeof *sp);
        npu_conv_addrs_t ad = {cv->x, cv->w, 0, cv->y};
        if (!(kp->conv = sp)) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        return npu_conv_split(s->cfg, &cv->c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NULL, sp, why, n) ||
                       npu_conv_split_emit(s->cfg, sp, &ad, &kp->prog, why, n) ? -1 : 0;
    }
    npu_conv_bwd_plan_t *bp = calloc(1, sizeof *bp);
    npu_conv_bwd_addrs_t ad = {cv->x, cv->w, cv->dy, cv->dx, cv->dwt};
    if (!(kp->conv = bp)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    return npu_conv_bwd_plan(s->cfg, &cv->c, bp, why, n) ||
                   npu_conv_bwd_emit(s->cfg, bp, &ad, &kp->prog, why, n) ? -1 : 0;
}

/* Kernel i's program at *base (advanced past it, beat-aligned). */
static int compile_kernel(npu_step_run_t *s, int i, uint64_t *base)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    npu_step_prog_t *kp = &s->kp[i];
    uint64_t beat = (uint64_t)npu_cfg_beat(s->cfg), align = beat > 16 ? beat : 16; /* PROG_BASE */
    char why[256] = "";
    kp->base = *base = (*base + align - 1) / align * align;
    if (k->kind == NPU_SK_GEMM) {
        npu_gemm_report_t *rep = calloc(1, sizeof *rep);
        if (!(kp->gemm = rep))
            return fail(s, "%s: out of memory", k->name);
        if (npu_gemm_compile_args(s->cfg, k->g.M, k->g.N, k->g.K, &k->g.args, *base, rep) != NPU_GEMM_PASS)
            return fail(s, "%s: %s", k->name, rep->host_msg);
        kp->prog = rep->prog; /* shared with rep: freed once, through rep */
        kp->expect = rep->expect;
    } else {
        npu_prog_init(&kp->prog);
        if (emit_other(s, k, kp, why, sizeof why))
            return fail(s, "%s: %s", k->name, why);
        npu_prog_expect(s->cfg, kp->prog.insn, kp->prog.n, &kp->expect);
    }
    *base += (kp->prog.n * NPU_INSN_BYTES + beat - 1) / beat * beat;
    return 0;
}

/* Every kernel of s->plan compiled, the programs after the tensors, the golden image. */
static int compile_all(npu_step_run_t *s)
{
    uint64_t base = s->plan.end;
    if (!(s->kp = calloc((size_t)s->plan.nk, sizeof *s->kp)) || !(s->gold = calloc(1, s->plan.end)) ||
        !(s->last = calloc((size_t)s->plan.nk, sizeof *s->last)))
        return fail(s, "out of memory");
    for (int i = 0; i < s->plan.nk; i++)
        if (compile_kernel(s, i, &base))
            return -1;
    size_t dram_bytes = 0;
    npu_sim_dram(s->sim, &dram_bytes);
    if (base > dram_bytes) {
        return fail(s, "the step needs %llu bytes of DRAM (tensors and programs); the DRAM holds %llu",
                    (unsigned long long)base, (unsigned long long)dram_bytes);
    }
    return 0;
}

static void run_start(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t max_cycles)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->sim = sim;
    s->max_cycles = max_cycles;
    s->check = 1;
}

int npu_step_run_init_q(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const int *dims,
                        int layers, int batch, float lr, float mu, float wd, int modes,
                        const npu_step_q_t *q, uint64_t max_cycles)
{
    run_start(s, cfg, sim, max_cycles);
    if (npu_step_plan_mlp_q(cfg, dims, layers, batch, lr, mu, wd, modes, q, 0, &s->plan, s->why,
                            sizeof s->why)) {
        s->failed = 1;
        return -1;
    }
    return compile_all(s);
}

int npu_step_run_init_cnn(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *conv,
                          int n_conv, const int *fc, int n_fc, int batch, float lr, float mu, float wd,
                          int modes, const npu_step_q_t *q, uint64_t max_cycles)
{
    run_start(s, cfg, sim, max_cycles);
    if (npu_step_plan_cnn(cfg, conv, n_conv, fc, n_fc, batch, lr, mu, wd, modes, q, 0, &s->plan, s->why,
                          sizeof s->why)) {
        s->failed = 1;
        return -1;
    }
    return compile_all(s);
}

int npu_step_run_init(npu_step_run_t *s, const npu_cfg_t *cfg, npu_sim_t *sim, const int *dims,
                      int layers, int batch, float lr, float mu, float wd, int modes,
                      uint64_t max_cycles)
{
    return npu_step_run_init_q(s, cfg, sim, dims, layers, batch, lr, mu, wd, modes, NULL, max_cycles);
}

void npu_step_run_free(npu_step_run_t *s)
{
    for (int i = 0; s->kp && i < s->plan.nk; i++) {
        if (s->kp[i].gemm) {
            npu_gemm_report_free(s->kp[i].gemm);
            free(s->kp[i].gemm);
        } else {
            npu_prog_free(&s->kp[i].prog);
        }
        if (s->kp[i].conv && s->plan.k[i].kind == NPU_SK_CONV_FWD)
            npu_conv_split_free(s->kp[i].conv);
        free(s->kp[i].conv);
    }
    free(s->kp);
    free(s->last);
    free(s->gold);
    npu_step_plan_free(&s->plan);
    memset(s, 0, sizeof *s);
}

/* ---- the two images ---- */

/* Byte address of element i of tensor T (row-major, rows at its pitch). */
static uint64_t el_addr(const npu_step_tensor_t *T, size_t i)
{
    size_t r = i / (size_t)T->cols, c = i % (size_t)T->cols;
    return T->dram + (uint64_t)r * npu_step_tensor_pitch(T) + (uint64_t)c * (T->width / 8);
}

static uint32_t f32u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* v in tensor T's fixed point, round(v * 2^q) saturated to its width (int16 configurations). */
static uint32_t fixed(const npu_step_tensor_t *T, float v)
{
    double lim = T->width == 32 ? 2147483647.0 : 32767.0, x = nearbyint(ldexp((double)v, T->q));
    x = x > lim ? lim : x < -lim - 1 ? -lim - 1 : x;
    return T->width == 32 ? (uint32_t)(int32_t)x : (uint32_t)(uint16_t)(int16_t)x;
}

/* fp32 values into tensor t of both images: as fp32 (width 32) or rounded to bf16, or in the
 * tensor's fixed point at int16 configurations; n values, then zeros up to the tensor's size. */
static void host_write(npu_step_run_t *s, int t, const float *v, size_t n, npu_step_tally_t *ty)
{
    const npu_step_tensor_t *T = &s->plan.t[t];
    uint8_t *img[2] = {npu_sim_dram(s->sim, NULL), s->gold};
    size_t all = (size_t)T->rows * T->cols;
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < all; i++) {
            uint32_t u = i < n && v ? (s->plan.int16 ? fixed(T, v[i]) : f32u(v[i])) : 0;
            uint16_t h = s->plan.int16 ? (uint16_t)u : npu_fp32_to_bf16(u);
            memcpy(img[m] + el_addr(T, i), T->width == 32 ? (const void *)&u : (const void *)&h, T->width / 8);
        }
    if (ty) /* the elements: a pitched tensor's padding is never written */
        ty->host_wr += all * (T->width / 8);
}

/* A convolution's [tap][F][C] weights as W32's [tap][C][F] (dW^T's layout). NULL: out of memory. */
static float *per_tap_transpose(const npu_conv_t *c, const float *w)
{
    int T = c->KH * c->KW;
    float *t = malloc((size_t)T * c->F * c->C * sizeof *t);
    for (int k = 0; t && k < T; k++)
        for (int f = 0; f < c->F; f++)
            for (int ch = 0; ch < c->C; ch++)
                t[((size_t)k * c->C + ch) * c->F + f] = w[((size_t)k * c->F + f) * c->C + ch];
    return t;
}

void npu_step_run_params(npu_step_run_t *s, float *const *w, float *const *b)
{
    for (int l = 1; l <= s->plan.layers; l++) {
        const npu_step_lt_t *L = &s->plan.l[l];
        const npu_step_tensor_t *W = &s->plan.t[L->w16];
        size_t nw = (size_t)W->rows * W->cols;
        float *wt = l <= s->plan.n_conv ? per_tap_transpose(&s->plan.conv[l], w[l - 1]) : NULL;
        if (l <= s->plan.n_conv && !wt) {
            fail(s, "out of memory");
            return;
        }
        host_write(s, L->w32, wt ? wt : w[l - 1], nw, NULL);
        host_write(s, L->w16, w[l - 1], nw, NULL);
        host_write(s, L->b32, b[l - 1], (size_t)s->plan.t[L->b32].cols, NULL);
        host_write(s, L->vw, NULL, 0, NULL);
        host_write(s, L->vb, NULL, 0, NULL);
        free(wt);
    }
}

/* Element i of tensor T as fp32: its bits (fp32, bf16), or its fixed point / 2^q (int16). */
static float tensor_f32(const uint8_t *img, const npu_step_tensor_t *T, size_t i, int int16)
{
    float f;
    uint32_t u = 0;
    const uint8_t *at = img + el_addr(T, i);
    if (int16) {
        int32_t v32 = 0;
        int16_t v16 = 0;
        if (T->width == 32)
            memcpy(&v32, at, 4);
        else
            memcpy(&v16, at, 2);
        return (float)ldexp(T->width == 32 ? (double)v32 : (double)v16, -T->q);
    }
    if (T->width == 32) {
        memcpy(&u, at, 4);
    } else {
        uint16_t h;
        memcpy(&h, at, 2);
        u = (uint32_t)h << 16;
    }
    memcpy(&f, &u, 4);
    return f;
}

/* ---- running a kernel ---- */

/* The tensors kernel k writes: its GEMM's C, its vector kernel's stored tensors, a convolution's
 * outputs, the transpose's destination. Calls f on each (DRAM address, rows, row bytes, pitch,
 * element width, name). */
typedef void (*out_fn)(npu_step_run_t *s, const npu_step_kernel_t *k, uint32_t at, uint64_t rows,
                       unsigned row_bytes, unsigned pitch, unsigned width, const char *name);

static void each_output(npu_step_run_t *s, int i, out_fn f)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    const npu_conv_t *c = &k->cv.c;
    unsigned B = (unsigned)npu_cfg_beat(s->cfg);
    if (k->kind == NPU_SK_GEMM) {
        f(s, k, k->g.args.c, (uint64_t)k->g.M, 4u * (unsigned)k->g.N, k->g.args.pitch_c, 32, "C");
    } else if (k->kind == NPU_SK_CONV_FWD) {
        const npu_conv_split_t *sp = s->kp[i].conv;
        f(s, k, k->cv.y, npu_conv_y_elems(c) / (size_t)c->F, 4u * (unsigned)c->F, sp->whole.pout * B, 32, "Y");
    } else if (k->kind == NPU_SK_CONV_BWD) {
        const npu_conv_bwd_plan_t *bp = s->kp[i].conv;
        f(s, k, k->cv.dx, npu_conv_x_elems(c) / (size_t)c->C, 4u * (unsigned)c->C, bp->dx.pout * B, 32, "dX");
        f(s, k, k->cv.dwt, (uint64_t)c->KH * c->KW * c->C, 4u * (unsigned)c->F, bp->pf * B, 32, "dW^T");
    } else if (k->kind == NPU_SK_XPOSE) {
        f(s, k, k->xp.dst, (uint64_t)k->xp.taps * k->xp.cols, 2u * (unsigned)k->xp.rows, k->xp.dst_pitch, 16,
          "transpose");
    } else {
        for (int t = 0; t < k->v.nt; t++)
            if (k->v.t[t].store)
                f(s, k, k->v.t[t].dram, k->v.t[t].one_row ? 1u : (uint64_t)k->v.rows, npu_vk_row_bytes(&k->v, t),
                  npu_vk_row_pitch(&k->v, t), k->v.t[t].width, k->v.t[t].name);
    }
}

static void compare_out(npu_step_run_t *s, const npu_step_kernel_t *k, uint32_t at, uint64_t rows,
                        unsigned row_bytes, unsigned pitch, unsigned width, const char *name)
{
    unsigned w = width / 8;
    for (uint64_t r = 0; r < rows; r++) {
        const uint8_t *got = npu_sim_dram(s->sim, NULL) + at + r * pitch, *exp = s->gold + at + r * pitch;
        if (!memcmp(got, exp, row_bytes))
            continue;
        for (unsigned e = 0; e < row_bytes / w; e++) {
            uint32_t g = 0, x = 0;
            memcpy(&g, got + e * w, w);
            memcpy(&x, exp + e * w, w);
            if (g != x) {
                fail(s, "%s: element %llu of %s is 0x%0*x, the golden model's 0x%0*x", k->name,
                     (unsigned long long)(r * (row_bytes / w) + e), name, (int)(2 * w), g, (int)(2 * w), x);
                return;
            }
        }
    }
}

/* rows x cols 16-bit elements at a pitch from the golden image into a dense array, and 32-bit
 * dense ones out (dst[r][c] = src[r][c], or with tr the per-tap transpose of [taps][cols] rows
 * of `rows`: dW^T from dW). */
static void gather16(const uint8_t *img, uint32_t at, unsigned pitch, size_t rows, int cols, int16_t *d)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(d + r * (size_t)cols, img + at + r * pitch, 2u * (unsigned)cols);
}

static void scatter32(uint8_t *img, uint32_t at, unsigned pitch, size_t rows, int cols, const int32_t *v)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(img + at + r * pitch, v + r * (size_t)cols, 4u * (unsigned)cols);
}

/* A convolution kernel's golden model (bf16: in its program's summation order; int16: exact) on
 * the golden image: its inputs gathered from their pitched rows, its outputs written back at theirs. */
static int golden_conv(npu_step_run_t *s, int i)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    const npu_conv_t *c = &k->cv.c;
    unsigned B = (unsigned)npu_cfg_beat(s->cfg);
    size_t nx = npu_conv_x_elems(c), nw = npu_conv_w_elems(c), ny = npu_conv_y_elems(c), T = (size_t)c->KH * c->KW;
    int16_t *X = malloc(nx * 2), *W = malloc(nw * 2), *dY = malloc(ny * 2);
    int32_t *o1 = malloc((nx > ny ? nx : ny) * 4), *o2 = malloc(nw * 4), *o3 = malloc(nw * 4);
    int rc = X && W && dY && o1 && o2 && o3 ? 0 : -1;
    if (!rc && k->kind == NPU_SK_CONV_FWD) {
        const npu_conv_split_t *sp = s->kp[i].conv;
        gather16(s->gold, k->cv.x, sp->whole.px * B, nx / (size_t)c->C, c->C, X);
        gather16(s->gold, k->cv.w, sp->whole.pw * B, nw / (size_t)c->C, c->C, W);
        if (!npu_cfg_bf16(s->cfg))
            npu_conv_fwd_golden(c, X, W, o1);
        else
            rc = npu_conv_golden_plan_bf16(sp, X, W, NULL, o1);
        if (!rc)
            scatter32(s->gold, k->cv.y, sp->whole.pout * B, ny / (size_t)c->F, c->F, o1);
    } else if (!rc) {
        const npu_conv_bwd_plan_t *bp = s->kp[i].conv;
        gather16(s->gold, k->cv.x, bp->dx.px * B, nx / (size_t)c->C, c->C, X);
        gather16(s->gold, k->cv.w, bp->dx.pw * B, nw / (size_t)c->C, c->C, W);
        gather16(s->gold, k->cv.dy, bp->dx.pdy * B, ny / (size_t)c->F, c->F, dY);
        if (!npu_cfg_bf16(s->cfg)) { /* int16: exact sums, any order */
            npu_conv_dx_golden(c, dY, W, o1);
            npu_conv_dw_golden(c, X, dY, o2);
        } else {
            rc = npu_conv_bwd_golden_bf16(bp, X, W, dY, o1, o2);
        }
        if (!rc) {
            for (size_t t = 0; t < T; t++) /* dW [tap][f][c] -> dW^T [tap][c][f] */
                for (int f = 0; f < c->F; f++)
                    for (int ch = 0; ch < c->C; ch++)
                        o3[(t * c->C + ch) * c->F + f] = o2[(t * c->F + f) * c->C + ch];
            scatter32(s->gold, k->cv.dx, bp->dx.pout * B, nx / (size_t)c->C, c->C, o1);
            scatter32(s->gold, k->cv.dwt, bp->pf * B, T * c->C, c->F, o3);
        }
    }
    free(X);
    free(W);
    free(dY);
    free(o1);
    free(o2);
    free(o3);
    return rc;
}

/* The golden model of kernel i on the golden image. 0 or -1. */
static int golden_kernel(npu_step_run_t *s, int i)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    if (k->kind == NPU_SK_VEC)
        return npu_vk_golden((unsigned)s->cfg->dtype, &k->v, s->gold, s->plan.end);
    if (k->kind == NPU_SK_XPOSE)
        return npu_vk_xpose_golden(&k->xp, s->gold, s->plan.end);
    if (k->kind == NPU_SK_CONV_FWD || k->kind == NPU_SK_CONV_BWD)
        return golden_conv(s, i);
    const npu_gemm_report_t *rep = s->kp[i].gemm;
    const npu_gemm_args_t *g = &k->g.args;
    return npu_gemm_golden_plan(s->cfg, &rep->plan, rep->args.modes, (const int16_t *)(s->gold + g->a),
                                g->pitch_a / 2, g->transA, (const int16_t *)(s->gold + g->b),
                                g->pitch_b / 2, g->transB, (int32_t *)(s->gold + g->c), g->pitch_c / 4);
}

static void tally(npu_step_tally_t *t, const npu_run_result_t *r)
{
    t->kernels++;
    t->cycles += r->cnt[NPU_CNT_cycles];
    for (int g = 0; g < NPU_NUM_TAGS; g++) {
        t->rd[g] += r->cnt[NPU_CNT_dram_rd_prog + g];
        t->wr[g] += r->cnt[NPU_CNT_dram_wr_prog + g];
    }
    t->vec_busy += r->cnt[NPU_CNT_vec_busy];
    for (int c = 0; c < 4; c++)
        t->macs += r->cnt[NPU_CNT_macs_core0 + c];
}

/* Runs kernel i on the NPU and, when checking, on the golden image; compares. 0 or -1. */
static int run_kernel(npu_step_run_t *s, int i, npu_step_tally_t *ty)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    const npu_step_prog_t *kp = &s->kp[i];
    npu_run_result_t r;
    char msg[256] = "";
    int rc = npu_run_program(s->cfg, s->sim, kp->base, kp->prog.insn, kp->prog.n, s->max_cycles, &r);
    if (rc != NPU_RUN_DONE) {
        snprintf(msg, sizeof msg, rc == NPU_RUN_ERROR ? "NPU error %s at pc %u" : "did not finish (%s%u)",
                 rc == NPU_RUN_ERROR && npu_error_name(r.err) ? npu_error_name(r.err) : "",
                 (unsigned)r.err_pc);
        return fail(s, "%s: %s", k->name, msg);
    }
    tally(ty, &r);
    memset(&s->last[i], 0, sizeof s->last[i]);
    tally(&s->last[i], &r);
    if (npu_check_counters(r.cnt, &kp->expect, msg, sizeof msg) == 0) {
        npu_array_expect_t ax;
        npu_prog_expect_array(s->cfg, kp->prog.insn, kp->prog.n, &ax);
        npu_check_array_counters(r.cnt, &ax, msg, sizeof msg);
    }
    if (msg[0])
        return fail(s, "%s: counters: %s", k->name, msg);
    if (!s->check)
        return 0;
    s->checked++;
    if (golden_kernel(s, i))
        return fail(s, "%s: the golden model failed", k->name);
    uint64_t before = s->failed;
    each_output(s, i, compare_out);
    return s->failed == before ? 0 : -1;
}

static int run_range(npu_step_run_t *s, int from, int to, npu_step_tally_t *ty)
{
    for (int i = from; i < to; i++)
        if (run_kernel(s, i, ty))
            return -1;
    return 0;
}

int npu_step_forward(npu_step_run_t *s, const float *x, int rows, float *logits)
{
    const npu_step_plan_t *p = &s->plan;
    const npu_step_tensor_t *Z = &p->t[p->l[p->layers].z32];
    memset(&s->fwd, 0, sizeof s->fwd);
    if (rows < 1 || rows > p->batch)
        return fail(s, "forward of %d rows (the plan's batch: %d)", rows, p->batch);
    host_write(s, p->x16, x, (size_t)rows * p->dims[0], &s->fwd);
    if (run_range(s, 0, p->n_fwd, &s->fwd))
        return -1;
    const uint8_t *img = npu_sim_dram(s->sim, NULL);
    for (size_t i = 0; i < (size_t)rows * Z->cols; i++)
        logits[i] = tensor_f32(img, Z, i, p->int16);
    s->fwd.host_rd += (uint64_t)rows * Z->cols * 4;
    return 0;
}

int npu_step_backward(npu_step_run_t *s, const float *dlogits)
{
    const npu_step_plan_t *p = &s->plan;
    memset(&s->bwd, 0, sizeof s->bwd);
    host_write(s, p->l[p->layers].dz32, dlogits, (size_t)p->batch * p->dims[p->layers], &s->bwd);
    return run_range(s, p->n_fwd, p->nk, &s->bwd);
}

int npu_step_below_roof(const npu_cfg_t *cfg, const npu_step_tally_t *t, double *need)
{
    double beat = npu_cfg_beat(cfg), bw = cfg->dram_bw, cap = 4 * beat > 2 * beat + bw ? 4 * beat : 2 * beat + bw;
    uint64_t pes = 4u * (uint64_t)cfg->s * (uint64_t)cfg->s, bytes = 0, macs = (t->macs + pes - 1) / pes;
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        bytes += t->rd[g] + t->wr[g];
    *need = (double)macs;
    if (t->cycles < macs)
        return 1;
    *need = ((double)bytes - cap) / bw;
    return (double)t->cycles < *need ? 2 : 0;
}
