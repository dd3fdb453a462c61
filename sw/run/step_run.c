/* step_run.c - whole training steps on the NPU (step_run.h). */
#include "run/step_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "compile/step/step_emit.h"
#include "compile/step/step_res.h"
#include "compile/step/step_tags.h"
#include "model/est_step.h"
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

/* The kernel i runs: the plan's, or with its resident operands. */
static const npu_step_kernel_t *kernel_run(const npu_step_run_t *s, int i)
{
    return s->res ? &s->res->k[i] : &s->plan.k[i];
}

/* Kernel i's program at *base (advanced past it, beat-aligned). Each program starts on a 4 KiB
 * line: the fetch's bursts then split where the estimator's npu_prog_time puts them (MAX_BURST
 * beats from the start), whatever the programs before it hold; packed one after another, an
 * instruction appended to one program moved every later one and its fetch bursts' 4 KiB cuts
 * (tiny-nopipe: a prefetch LOAD cost 24 cycles on the RTL, 4 in the estimate). */
static int compile_kernel(npu_step_run_t *s, int i, uint64_t *base)
{
    const npu_step_kernel_t *k = kernel_run(s, i);
    npu_step_prog_t *kp = &s->kp[i];
    uint64_t beat = (uint64_t)npu_cfg_beat(s->cfg), align = 4096; /* a multiple of PROG_BASE's beat */
    char why[256] = "";
    kp->base = *base = (*base + align - 1) / align * align;
    if (k->kind == NPU_SK_GEMM) {
        npu_gemm_report_t *rep = calloc(1, sizeof *rep);
        if (!(kp->gemm = rep))
            return fail(s, "%s: out of memory", k->name);
        if (npu_gemm_compile_args(s->cfg, k->g.M, k->g.N, k->g.K, &k->g.args, *base, rep) != NPU_GEMM_PASS)
            return fail(s, "%s: %s", k->name, rep->host_msg);
        if (s->res && npu_step_res_append(&s->plan, s->res, i, &rep->prog))
            return fail(s, "%s: its overlapped transfers do not fit", k->name);
        kp->prog = rep->prog; /* shared with rep: freed once, through rep */
        npu_prog_expect(s->cfg, kp->prog.insn, kp->prog.n, &kp->expect);
    } else {
        npu_prog_init(&kp->prog);
        /* a convolution's plan stays in kp->conv for its golden model */
        if (npu_step_emit_other(s->cfg, k, &kp->prog, &kp->conv, why, sizeof why))
            return fail(s, "%s: %s", k->name, why);
        if (s->res && npu_step_res_append(&s->plan, s->res, i, &kp->prog))
            return fail(s, "%s: its overlapped transfers do not fit", k->name);
        npu_prog_expect(s->cfg, kp->prog.insn, kp->prog.n, &kp->expect);
    }
    *base += (kp->prog.n * NPU_INSN_BYTES + beat - 1) / beat * beat;
    return 0;
}

/* Every kernel of s->plan compiled, the programs after the tensors, the golden image. */
/* Every kernel's program, placed from the tensors' end on; *base: past the last. 0 or -1. */
static int compile_kernels(npu_step_run_t *s, uint64_t *base)
{
    *base = s->plan.end;
    for (int i = 0; i < s->plan.nk; i++)
        if (compile_kernel(s, i, base))
            return -1;
    return 0;
}

/* 0, or -1 naming the bytes when tensors and programs, [0, end), exceed the DRAM. */
static int check_dram(npu_step_run_t *s, uint64_t end)
{
    size_t dram_bytes = 0;
    npu_sim_dram(s->sim, &dram_bytes);
    if (end <= dram_bytes)
        return 0;
    return fail(s, "the step needs %llu bytes of DRAM (tensors and programs); the DRAM holds %llu",
                (unsigned long long)end, (unsigned long long)dram_bytes);
}

static int compile_all(npu_step_run_t *s)
{
    uint64_t base;
    if (!(s->kp = calloc((size_t)s->plan.nk, sizeof *s->kp)) || !(s->gold = calloc(1, s->plan.end)) ||
        !(s->last = calloc((size_t)s->plan.nk, sizeof *s->last)))
        return fail(s, "out of memory");
    return compile_kernels(s, &base) || check_dram(s, base) ? -1 : 0;
}

/* The one-instruction program of whole-tensor transfer x (or a copy of tensor t's resident rows
 * at spm to DRAM byte `to`, for checking: store 1, keep = -1). */
static int xfer_prog(npu_step_run_t *s, int store, int t, unsigned spm, uint64_t to, npu_prog_t *out)
{
    npu_insn_t in;
    npu_prog_init(out);
    if (npu_step_res_xfer_insn(&s->plan, s->res, store, t, spm, to, 0, &in) || npu_prog_push(out, &in))
        return fail(s, "transfer of %s: the instruction does not fit (%d rows)", s->plan.t[t].name,
                    s->plan.t[t].rows);
    return 0;
}

/* The transfers' programs after the kernels' from *base; then the scratch area. */
static int compile_xfers(npu_step_run_t *s, uint64_t *base)
{
    uint64_t beat = (uint64_t)npu_cfg_beat(s->cfg), most = 0;
    beat = beat > 16 ? beat : 16; /* PROG_BASE's alignment, and a program's slot */
    for (int x = 0; x < s->res->nx; x++) {
        const npu_res_xfer_t *X = &s->res->x[x];
        if (X->app) /* in its kernel's program */
            continue;
        *base = (*base + beat - 1) / beat * beat;
        s->xp[x].base = *base;
        if (xfer_prog(s, X->store, X->t, X->spm, s->plan.t[X->t].dram, &s->xp[x].prog))
            return -1;
        npu_prog_expect(s->cfg, s->xp[x].prog.insn, s->xp[x].prog.n, &s->xp[x].expect);
        *base += beat;
    }
    for (int t = 0; t < s->plan.nt; t++)
        most = s->plan.t[t].bytes > most ? s->plan.t[t].bytes : most;
    s->scratch = (*base + beat - 1) / beat * beat;
    *base = s->scratch + beat + most;
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
                          int n_conv, const int *res, const int *fc, int n_fc, int batch, float lr, float mu, float wd,
                          int modes, const npu_step_q_t *q, uint64_t max_cycles)
{
    run_start(s, cfg, sim, max_cycles);
    if (npu_step_plan_cnn_res(cfg, conv, n_conv, res, fc, n_fc, batch, lr, mu, wd, modes, q, 0, &s->plan, s->why,
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

static void free_kernels(npu_step_run_t *s)
{
    for (int i = 0; s->kp && i < s->plan.nk; i++) {
        if (s->kp[i].gemm) {
            npu_gemm_report_free(s->kp[i].gemm);
            free(s->kp[i].gemm);
        } else {
            npu_prog_free(&s->kp[i].prog);
        }
        npu_step_conv_free(&s->plan.k[i], s->kp[i].conv);
        memset(&s->kp[i], 0, sizeof s->kp[i]);
    }
}

int npu_step_run_resident(npu_step_run_t *s, int res_banks)
{
    return npu_step_run_resident_cap(s, res_banks, 0);
}

int npu_step_run_resident_cap(npu_step_run_t *s, int res_banks, uint64_t cap)
{
    return npu_step_run_resident_ex(s, res_banks, cap, NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD);
}

int npu_step_run_resident_ex(npu_step_run_t *s, int res_banks, uint64_t cap, int overlap)
{
    uint64_t base;
    if (!(s->res = calloc(1, sizeof *s->res)))
        return fail(s, "out of memory");
    if (npu_est_res_plan(s->cfg, &s->plan, res_banks, cap, overlap, s->res))
        return fail(s, "%s", s->res->why);
    free_kernels(s); /* the plain kernels init compiled: recompiled with their resident operands */
    if (compile_kernels(s, &base))
        return -1;
    if (!(s->pre_cycles = calloc((size_t)s->res->n_steps + 1, sizeof *s->pre_cycles)) ||
        !(s->xp = calloc((size_t)(s->res->nx ? s->res->nx : 1), sizeof *s->xp)))
        return fail(s, "out of memory");
    return compile_xfers(s, &base) || check_dram(s, base) ? -1 : 0;
}

void npu_step_run_free(npu_step_run_t *s)
{
    free_kernels(s);
    for (int x = 0; s->xp && s->res && x < s->res->nx; x++)
        npu_prog_free(&s->xp[x].prog);
    free(s->xp);
    free(s->pre_cycles);
    if (s->res)
        npu_step_res_free(s->res);
    free(s->res);
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

/* A normalised layer's gamma = 1 (G32, G16), beta = 0, velocities 0 (ref/net_ref.h). */
static void norm_params(npu_step_run_t *s, const npu_step_norm_t *N, int F)
{
    float *one = malloc((size_t)F * sizeof *one);
    if (!one) {
        fail(s, "out of memory");
        return;
    }
    for (int i = 0; i < F; i++)
        one[i] = 1.0f;
    host_write(s, N->g32, one, (size_t)F, NULL);
    host_write(s, N->g16, one, (size_t)F, NULL);
    host_write(s, N->vg, NULL, 0, NULL);
    host_write(s, N->bn32, NULL, 0, NULL);
    host_write(s, N->vbn, NULL, 0, NULL);
    free(one);
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
        host_write(s, L->vw, NULL, 0, NULL);
        if (L->b32 >= 0) { /* a normalised layer has no bias (beta: norm_params) */
            host_write(s, L->b32, b[l - 1], (size_t)s->plan.t[L->b32].cols, NULL);
            host_write(s, L->vb, NULL, 0, NULL);
        }
        free(wt);
        if (l <= s->plan.n_conv && s->plan.nrm[l].on)
            norm_params(s, &s->plan.nrm[l], s->plan.conv[l].F);
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
 * outputs, the transpose's destination. Calls f on each (resident: the kernel that runs leaves it in
 * the SPM; DRAM address, rows, row bytes, pitch, element width, name). */
typedef void (*out_fn)(npu_step_run_t *s, const npu_step_kernel_t *k, int resident, uint32_t at, uint64_t rows,
                       unsigned row_bytes, unsigned pitch, unsigned width, const char *name);

static void each_output(npu_step_run_t *s, int i, out_fn f)
{
    const npu_step_kernel_t *k = &s->plan.k[i], *r = kernel_run(s, i);
    const npu_conv_t *c = &k->cv.c;
    unsigned B = (unsigned)npu_cfg_word(s->cfg);
    if (k->kind == NPU_SK_GEMM) {
        f(s, k, r->g.args.res_c, k->g.args.c, (uint64_t)k->g.M, 4u * (unsigned)k->g.N, k->g.args.pitch_c, 32, "C");
    } else if (k->kind == NPU_SK_CONV_FWD) {
        const npu_conv_split_t *sp = s->kp[i].conv;
        f(s, k, r->cv.res_y, k->cv.y, npu_conv_y_elems(c) / (size_t)c->F, 4u * (unsigned)c->F, sp->whole.pout * B, 32, "Y");
    } else if (k->kind == NPU_SK_CONV_BWD) {
        const npu_conv_bwd_plan_t *bp = s->kp[i].conv;
        if (!k->cv.no_dx)
            f(s, k, r->cv.res_dx, k->cv.dx, npu_conv_x_elems(c) / (size_t)c->C, 4u * (unsigned)c->C, bp->dx.pout * B, 32,
              "dX");
        f(s, k, 0, k->cv.dwt, (uint64_t)c->KH * c->KW * c->C, 4u * (unsigned)c->F, bp->pf * B, 32, "dW^T");
    } else if (k->kind == NPU_SK_XPOSE) {
        f(s, k, 0, k->xp.dst, (uint64_t)k->xp.taps * k->xp.cols, 2u * (unsigned)k->xp.rows, k->xp.dst_pitch, 16,
          "transpose");
    } else {
        for (int t = 0; t < k->v.nt; t++)
            if (k->v.t[t].store)
                f(s, k, r->v.t[t].resident, k->v.t[t].dram, k->v.t[t].one_row ? 1u : (uint64_t)k->v.rows,
                  npu_vk_row_bytes(&k->v, t), npu_vk_row_pitch(&k->v, t), k->v.t[t].width, k->v.t[t].name);
    }
}

/* A resident output's rows (tensor at DRAM address `at`) copied at its DRAM pitch to the scratch area; NULL
 * after a failure. The copy's program stays out of the tallies: checking does not change what is
 * measured. */
static const uint8_t *resident_copy(npu_step_run_t *s, const npu_step_kernel_t *k, uint32_t at)
{
    int t = -1;
    for (int u = 0; u < s->plan.nt && t < 0; u++)
        t = s->plan.t[u].dram == at ? u : -1;
    unsigned spm = 0;
    for (int v = 0; v < s->res->nstay; v++)
        if (s->res->stay[v].t == t && s->res->stay[v].from <= s->cur_step && s->cur_step < s->res->stay[v].to)
            spm = s->res->stay[v].spm;
    npu_prog_t p;
    npu_run_result_t r;
    uint64_t beat = (uint64_t)npu_cfg_beat(s->cfg);
    beat = beat > 16 ? beat : 16; /* the slot compile_xfers left */
    if (t < 0 || xfer_prog(s, 1, t, spm, s->scratch + beat, &p))
        return NULL;
    int rc = npu_run_program(s->cfg, s->sim, s->scratch, p.insn, p.n, s->max_cycles, &r);
    npu_prog_free(&p);
    if (rc != NPU_RUN_DONE) {
        fail(s, "%s: the copy of its resident output for checking failed", k->name);
        return NULL;
    }
    return npu_sim_dram(s->sim, NULL) + s->scratch + beat;
}

static void compare_out(npu_step_run_t *s, const npu_step_kernel_t *k, int resident, uint32_t at, uint64_t rows,
                        unsigned row_bytes, unsigned pitch, unsigned width, const char *name)
{
    unsigned w = width / 8;
    const uint8_t *copy = resident ? resident_copy(s, k, at) : NULL;
    if (resident && !copy)
        return;
    for (uint64_t r = 0; r < rows; r++) {
        const uint8_t *got = (copy ? copy : npu_sim_dram(s->sim, NULL) + at) + r * pitch; /* the copy at its pitch */
        const uint8_t *exp = s->gold + at + r * pitch;
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
    unsigned B = (unsigned)npu_cfg_word(s->cfg);
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
            if (!k->cv.no_dx)
                npu_conv_dx_golden(c, dY, W, o1);
            npu_conv_dw_golden(c, X, dY, o2);
        } else {
            rc = npu_conv_bwd_golden_bf16(bp, X, W, dY, k->cv.no_dx ? NULL : o1, o2);
        }
        if (!rc) {
            for (size_t t = 0; t < T; t++) /* dW [tap][f][c] -> dW^T [tap][c][f] */
                for (int f = 0; f < c->F; f++)
                    for (int ch = 0; ch < c->C; ch++)
                        o3[(t * c->C + ch) * c->F + f] = o2[(t * c->F + f) * c->C + ch];
            if (!k->cv.no_dx)
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
    if (k->kind == NPU_SK_VEC) { /* the plan's tensors in DRAM, summed in the blocks the run's kernel sums */
        npu_vkern_t v = k->v;
        v.sum_chunk = kernel_run(s, i)->v.sum_chunk;
        return npu_vk_golden((unsigned)s->cfg->dtype, &v, s->gold, s->plan.end);
    }
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

/* Adds a program's counters to t (kernels: 1 for a kernel, 0 for a transfer). */
static void tally(npu_step_tally_t *t, const npu_run_result_t *r, int kernels)
{
    t->kernels += (uint64_t)kernels;
    t->cycles += r->cnt[NPU_CNT_cycles];
    for (int g = 0; g < NPU_NUM_TAGS; g++) {
        t->rd[g] += r->cnt[NPU_CNT_dram_rd_prog + g];
        t->wr[g] += r->cnt[NPU_CNT_dram_wr_prog + g];
    }
    t->vec_busy += r->cnt[NPU_CNT_vec_busy];
    for (int c = 0; c < 4; c++)
        t->macs += r->cnt[NPU_CNT_macs_core0 + c];
}

/* Runs one program, labelled `what` (a kernel's name, "LOAD of T"); 0, or -1 naming `what` and the NPU's error. */
static int run_prog(npu_step_run_t *s, const char *what, const npu_step_prog_t *kp, npu_run_result_t *r)
{
    npu_run_set_label("%s", what); /* the recorder's and the timeline's name of the program */
    int rc = npu_run_program(s->cfg, s->sim, kp->base, kp->prog.insn, kp->prog.n, s->max_cycles, r);
    if (rc == NPU_RUN_DONE)
        return 0;
    return fail(s, rc == NPU_RUN_ERROR ? "%s: NPU error %s at pc %u (info 0x%x)" : "%s: did not finish (%s%u)",
                what, rc == NPU_RUN_ERROR && npu_error_name(r->err) ? npu_error_name(r->err) : "",
                (unsigned)r->err_pc, (unsigned)r->err_info);
}

/* The fused backward's DRAM bytes per tag against its plan's: dY read once, and without dX no W
 * read and no dX written; with residency less the transfers the plan appends to kernel i's
 * program (their expected bytes). "" or the first difference in msg. */
static void conv_bwd_bytes(const npu_step_run_t *s, int i, const npu_step_tally_t *t, char *msg, size_t n)
{
    const npu_conv_bwd_plan_t *bp = s->kp[i].conv;
    npu_prog_expect_t app;
    npu_prog_t p;
    memset(&app, 0, sizeof app);
    npu_prog_init(&p);
    if (s->res && npu_step_res_append(&s->plan, s->res, i, &p) == 0)
        npu_prog_expect(s->cfg, p.insn, p.n, &app);
    npu_prog_free(&p);
    for (int g = 1; g < NPU_NUM_TAGS && !msg[0]; g++) /* tag 0: the program fetch */
        if (t->rd[g] - app.rd_bytes[g] != bp->plan_rd[g] || t->wr[g] - app.wr_bytes[g] != bp->plan_wr[g])
            snprintf(msg, n, "tag %d: read %llu written %llu bytes, the plan says %llu and %llu", g,
                     (unsigned long long)(t->rd[g] - app.rd_bytes[g]), (unsigned long long)(t->wr[g] - app.wr_bytes[g]),
                     (unsigned long long)bp->plan_rd[g], (unsigned long long)bp->plan_wr[g]);
}

/* Runs kernel i on the NPU and, when checking, on the golden image; compares. 0 or -1. */
static int run_kernel(npu_step_run_t *s, int i, npu_step_tally_t *ty)
{
    const npu_step_kernel_t *k = &s->plan.k[i];
    if (s->res)
        s->cur_step = npu_step_res_step(&s->plan, i);
    const npu_step_prog_t *kp = &s->kp[i];
    npu_run_result_t r;
    char msg[256] = "";
    if (run_prog(s, k->name, kp, &r))
        return -1;
    tally(ty, &r, 1);
    memset(&s->last[i], 0, sizeof s->last[i]);
    tally(&s->last[i], &r, 1);
    if (s->res) {
        npu_step_res_split(s->res, i, s->last[i].rd, s->last[i].wr, s->cur_in, s->cur_out);
    } else { /* each kernel's tags name its own tensors (step_tags.h) */
        npu_step_tagmap_t m;
        s->cur_shared += (uint64_t)(npu_step_tagmap(&s->plan, k, &m) != 0);
        s->cur_lost += npu_step_tag_split(&m, s->last[i].rd, s->last[i].wr, s->cur_in, s->cur_out);
    }
    if (npu_check_counters(r.cnt, &kp->expect, msg, sizeof msg) == 0) {
        npu_array_expect_t ax;
        npu_prog_expect_array(s->cfg, kp->prog.insn, kp->prog.n, &ax);
        npu_check_array_counters(r.cnt, &ax, msg, sizeof msg);
    }
    if (!msg[0] && k->kind == NPU_SK_CONV_BWD)
        conv_bwd_bytes(s, i, &s->last[i], msg, sizeof msg);
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

/* The residency plan's transfers before scheduler step j (n_steps: after the last kernel). */
static int run_xfers(npu_step_run_t *s, int j, npu_step_tally_t *ty)
{
    for (int x = s->res ? s->res->x_at[j] : 0; s->res && x < s->res->x_at[j + 1]; x++) {
        const npu_res_xfer_t *X = &s->res->x[x];
        npu_run_result_t r;
        if (X->app)
            continue;
        char msg[256] = "";
        uint64_t before_rd = s->res_rd[X->t], before_wr = s->res_wr[X->t];
        snprintf(msg, sizeof msg, "%s of %s", X->store ? "STORE" : "LOAD", s->plan.t[X->t].name);
        if (run_prog(s, msg, &s->xp[x], &r))
            return -1;
        if (npu_check_counters(r.cnt, &s->xp[x].expect, msg, sizeof msg))
            return fail(s, "%s of %s: counters: %s", X->store ? "STORE" : "LOAD", s->plan.t[X->t].name, msg);
        tally(ty, &r, 0);
        s->pre_cycles[j] += r.cnt[NPU_CNT_cycles];
        for (int g = 0; g < NPU_NUM_TAGS; g++) {
            s->res_rd[X->t] += g == NPU_TAG_PROG ? 0 : r.cnt[NPU_CNT_dram_rd_prog + g];
            s->res_wr[X->t] += r.cnt[NPU_CNT_dram_wr_prog + g];
        }
        s->cur_in[X->t] += s->res_rd[X->t] - before_rd;
        s->cur_out[X->t] += s->res_wr[X->t] - before_wr;
    }
    return 0;
}

static int run_range(npu_step_run_t *s, int from, int to, npu_step_tally_t *ty)
{
    for (int i = from; i < to; i++)
        if (run_xfers(s, npu_step_res_step(&s->plan, i), ty) || run_kernel(s, i, ty))
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
    memset(s->res_rd, 0, sizeof s->res_rd);
    memset(s->res_wr, 0, sizeof s->res_wr);
    memset(s->cur_in, 0, sizeof s->cur_in);
    memset(s->cur_out, 0, sizeof s->cur_out);
    s->cur_lost = s->cur_shared = 0;
    if (s->res)
        memset(s->pre_cycles, 0, (size_t)(s->res->n_steps + 1) * sizeof *s->pre_cycles);
    if (run_range(s, 0, p->n_fwd, &s->fwd) || run_xfers(s, p->n_fwd, &s->fwd)) /* logits out */
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
    if (run_range(s, p->n_fwd, p->nk, &s->bwd) || run_xfers(s, p->nk + 1, &s->bwd))
        return -1;
    memcpy(s->t_in, s->cur_in, sizeof s->t_in); /* a whole step: not clobbered by a forward alone */
    memcpy(s->t_out, s->cur_out, sizeof s->t_out);
    s->t_lost = s->cur_lost;
    s->t_shared = s->cur_shared;
    return 0;
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
