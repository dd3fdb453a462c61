/* conv_layer.c - convolution layer description; see conv_layer.h. */
#include "compile/conv/conv_layer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define NPU_CONV_MAX_DIM_STR STR(NPU_CONV_MAX_DIM)

static int out_dim(int in, int k, int s, int p, int d)
{
    long long num;
    if (s < 1)
        return 0;
    num = (long long)in + 2LL * p - (long long)d * ((long long)k - 1) - 1;
    if (num < 0)
        return 0;
    num = num / s + 1;
    return num > INT_MAX ? INT_MAX : (int)num;
}

int npu_conv_oh(const npu_conv_t *c)
{
    return out_dim(c->H, c->KH, c->stride, c->pad, c->dil);
}

int npu_conv_ow(const npu_conv_t *c)
{
    return out_dim(c->W, c->KW, c->stride, c->pad, c->dil);
}

static int bad(char *msg, size_t n, const char *fmt, const char *what, long long v)
{
    if (msg && n)
        snprintf(msg, n, fmt, what, v);
    return -1;
}

int npu_conv_check(const npu_conv_t *c, char *msg, size_t n)
{
    const struct { const char *name; int v, min; } f[] = {
        {"batch", c->batch, 1}, {"C", c->C, 1},       {"H", c->H, 1},
        {"W", c->W, 1},         {"F", c->F, 1},       {"KH", c->KH, 1},
        {"KW", c->KW, 1},       {"stride", c->stride, 1}, {"pad", c->pad, 0},
        {"dil", c->dil, 1},
    };
    size_t i;
    if (msg && n)
        msg[0] = '\0';
    for (i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v < f[i].min)
            return bad(msg, n, f[i].min ? "%s = %lld: must be >= 1" : "%s = %lld: must be >= 0",
                       f[i].name, f[i].v);
        if (f[i].v > NPU_CONV_MAX_DIM)
            return bad(msg, n, "%s = %lld: must be <= " NPU_CONV_MAX_DIM_STR, f[i].name, f[i].v);
    }
    if (c->depthwise != 0 && c->depthwise != 1)
        return bad(msg, n, "%s = %lld: must be 0 or 1", "depthwise", c->depthwise);
    if (c->depthwise && c->F != c->C) {
        if (msg && n)
            snprintf(msg, n, "depthwise layer needs F == C (F = %d, C = %d)", c->F, c->C);
        return -1;
    }
    if (npu_conv_oh(c) < 1) {
        if (msg && n)
            snprintf(msg, n, "dilated kernel height d(KH-1)+1 = %d exceeds padded height H+2p = %d",
                     c->dil * (c->KH - 1) + 1, c->H + 2 * c->pad);
        return -1;
    }
    if (npu_conv_ow(c) < 1) {
        if (msg && n)
            snprintf(msg, n, "dilated kernel width d(KW-1)+1 = %d exceeds padded width W+2p = %d",
                     c->dil * (c->KW - 1) + 1, c->W + 2 * c->pad);
        return -1;
    }
    return 0;
}

int npu_conv_str(const npu_conv_t *c, char *buf, size_t n)
{
    char dw[4] = "", b[16] = "";
    if (c->depthwise)
        strcpy(dw, " dw");
    if (c->batch != 1)
        snprintf(b, sizeof b, " b%d", c->batch);
    return snprintf(buf, n, "C%dx%dx%d F%d k%dx%d s%d p%d d%d%s%s", c->C, c->H, c->W, c->F, c->KH,
                    c->KW, c->stride, c->pad, c->dil, dw, b);
}

/* One decimal field of [p, e) (blanks around it allowed) -> *v; 0 or -1. */
static int parse_int(const char *p, const char *e, int *v)
{
    char tmp[32];
    char *end;
    long x;
    size_t len;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    len = (size_t)(e - p);
    if (len == 0 || len >= sizeof tmp)
        return -1;
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    if (!(tmp[0] == '-' || tmp[0] == '+' || (tmp[0] >= '0' && tmp[0] <= '9')))
        return -1;
    errno = 0;
    x = strtol(tmp, &end, 10);
    if (errno || *end || x < INT_MIN || x > INT_MAX)
        return -1;
    *v = (int)x;
    return 0;
}

int npu_conv_parse(const char *s, npu_conv_t *c, char *msg, size_t n)
{
    static const char *names[10] = {"C", "H", "W", "F", "KH", "KW", "stride", "pad", "dil", "dw"};
    int v[10] = {0};
    int k = 0;
    const char *p = s;
    npu_conv_t t;
    if (msg && n)
        msg[0] = '\0';
    if (!s) {
        if (msg && n)
            snprintf(msg, n, "no conv layer given");
        return -1;
    }
    for (;;) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        if (k == 10) {
            if (msg && n)
                snprintf(msg, n, "conv '%s': more than 10 fields (C,H,W,F,KH,KW,stride,pad,dil[,dw])", s);
            return -1;
        }
        if (parse_int(p, e, &v[k])) {
            const char *q = p, *r = e;
            while (q < r && (*q == ' ' || *q == '\t'))
                q++;
            while (r > q && (r[-1] == ' ' || r[-1] == '\t'))
                r--;
            if (k == 9 && r - q == 2 && !strncmp(q, "dw", 2)) {
                v[k] = 1;
            } else {
                if (msg && n)
                    snprintf(msg, n, "conv '%s': field %d (%s) '%.*s' is not an integer", s, k + 1,
                             names[k], (int)(e - p > 32 ? 32 : e - p), p);
                return -1;
            }
        }
        k++;
        if (!*e)
            break;
        p = e + 1;
    }
    if (k < 9) {
        if (msg && n)
            snprintf(msg, n, "conv '%s': %d fields, expected C,H,W,F,KH,KW,stride,pad,dil[,dw]", s, k);
        return -1;
    }
    if (k == 10 && v[9] != 0 && v[9] != 1) {
        if (msg && n)
            snprintf(msg, n, "conv '%s': dw field must be 0, 1 or 'dw'", s);
        return -1;
    }
    t.batch = 1;
    t.C = v[0];
    t.H = v[1];
    t.W = v[2];
    t.F = v[3];
    t.KH = v[4];
    t.KW = v[5];
    t.stride = v[6];
    t.pad = v[7];
    t.dil = v[8];
    t.depthwise = k == 10 ? v[9] : 0;
    {
        char why[160];
        if (npu_conv_check(&t, why, sizeof why)) {
            if (msg && n)
                snprintf(msg, n, "conv '%.64s': %s", s, why);
            return -1;
        }
    }
    *c = t;
    return 0;
}

size_t npu_conv_x_elems(const npu_conv_t *c)
{
    return (size_t)c->batch * (size_t)c->H * (size_t)c->W * (size_t)c->C;
}

size_t npu_conv_y_elems(const npu_conv_t *c)
{
    return (size_t)c->batch * (size_t)npu_conv_oh(c) * (size_t)npu_conv_ow(c) * (size_t)c->F;
}

size_t npu_conv_w_elems(const npu_conv_t *c)
{
    return (size_t)c->KH * (size_t)c->KW * (size_t)(c->depthwise ? 1 : c->F) * (size_t)c->C;
}
