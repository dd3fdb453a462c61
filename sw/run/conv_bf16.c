/* conv_bf16.c - bf16 operands and the order-matched golden of a conv program; see conv_bf16.h. */
#include "run/conv_bf16.h"

#include <stdlib.h>

#include "compile/conv/conv_order.h"
#include "ref/conv_golden_bf16.h"
#include "ref/golden.h"

void npu_conv_operands_bf16(const npu_conv_t *c, uint64_t seed, int16_t *X, int16_t *Wt, int16_t *dY)
{
    uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
    size_t nx = (size_t)c->batch * (size_t)c->H * (size_t)c->W * (size_t)c->C;
    size_t ndy = (size_t)c->batch * (size_t)npu_conv_oh(c) * (size_t)npu_conv_ow(c) * (size_t)c->F;
    size_t nw = (size_t)c->KH * (size_t)c->KW * (size_t)(c->depthwise ? 1 : c->F) * (size_t)c->C;
    int16_t *dst[3] = {X, Wt, dY};
    size_t cnt[3] = {nx, nw, ndy};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < cnt[t]; i++) {
            int16_t v;
            do { /* nonzero (either sign): macs_zero counts only the dataflow's structural zeros */
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v = npu_bf16_from_bits((uint16_t)(x >> 40));
            } while ((v & 0x7FFF) == 0);
            if (dst[t])
                dst[t][i] = v;
        }
}

size_t npu_conv_plan_waves(void *ctx, const int o[4], npu_cwave_t *w, size_t max)
{
    npu_conv_order_t *x = ctx;
    npu_conv_wave_t *buf = x->buf;
    size_t n;
    if (x->cap < max) {
        buf = realloc(x->buf, max * sizeof *buf);
        if (!buf)
            return (size_t)-1; /* the golden then fails: out of memory */
        x->buf = buf;
        x->cap = max;
    }
    n = x->bwd ? npu_conv_bwd_waves(x->bwd, x->kernel, o, buf, max) : npu_conv_waves(x->s, o, buf, max);
    for (size_t i = 0; i < n && i < max; i++) {
        const npu_conv_wave_t *v = &buf[i];
        npu_cwave_t g = {v->kh, v->kw, v->r0, v->r1, v->n, v->row,
                         v->start == NPU_CONV_WAVE_WRITE ? NPU_CW_WRITE
                         : v->start == NPU_CONV_WAVE_ACC ? NPU_CW_ACC : NPU_CW_ADD};
        w[i] = g;
    }
    return n;
}

int npu_conv_golden_plan_bf16(const npu_conv_split_t *s, const int16_t *X, const int16_t *Wt,
                              const int16_t *dY, int32_t *out)
{
    npu_conv_order_t x = {s, NULL, 0, NULL, 0};
    int rc = npu_conv_golden_bf16(&s->whole.c, s->whole.kernel, s->whole.dataflow == NPU_CONV_ZEROPAD, X, Wt,
                                  dY, out, npu_conv_plan_waves, &x);
    free(x.buf);
    return rc;
}

int npu_conv_bwd_golden_bf16(const npu_conv_bwd_plan_t *bp, const int16_t *X, const int16_t *Wt,
                             const int16_t *dY, int32_t *dx, int32_t *dw)
{
    npu_conv_order_t x = {NULL, bp, NPU_CONV_DX, NULL, 0};
    int rc = dx ? npu_conv_golden_bf16(&bp->dx.c, NPU_CONV_DX, 0, X, Wt, dY, dx, npu_conv_plan_waves, &x) : 0;
    x.kernel = NPU_CONV_DW;
    if (rc == 0)
        rc = npu_conv_golden_bf16(&bp->dx.c, NPU_CONV_DW, 0, X, Wt, dY, dw, npu_conv_plan_waves, &x);
    free(x.buf);
    return rc;
}
