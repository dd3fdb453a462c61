/* topology.c - SCALE-Sim topology CSV files, conv and GEMM formats (topology.h). */
#include "model/topology.h"

#include "ref/net_ref.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_FIELDS 64

/* What the header said, and what the rows added to the warnings. */
typedef struct cols {
    int ncols;            /* columns the header names (its trailing comma dropped) */
    int pad, dil, dw;     /* conv extension columns' indices, -1 when absent */
    int nignored;         /* header columns the format does not know */
    char ignored[320];    /* "column 9 (unnamed), column 11 'Eh', ..." */
    int extra_line;       /* first line with values past the header's columns, 0 if none */
    int ndw_guess;        /* layers read as depthwise from "Num Filter 1" */
    char dw_first[NPU_TOPO_NAME];
} cols_t;

static int fail(char *msg, size_t n, int line, const char *fmt, ...)
{
    va_list ap;
    int len = snprintf(msg, n, "line %d: ", line);
    if (len >= 0 && (size_t)len < n) {
        va_start(ap, fmt);
        vsnprintf(msg + len, n - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Splits a line at commas in place; a trailing empty field (the trailing comma) is dropped.
 * Returns the field count, 0 for a line of only commas and blanks, -1 past MAX_FIELDS. */
static int split(char *line, char **f)
{
    int nf = 0, any = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (nf == MAX_FIELDS)
            return -1;
        f[nf] = trim(p);
        any |= *f[nf++] != '\0';
        if (!c)
            break;
        p = c + 1;
    }
    if (nf > 1 && !*f[nf - 1])
        nf--;
    return any ? nf : 0;
}

static int field_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;
    if (!*s)
        return -1;
    v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static const char *const k_col[] = {"IFMAP Height", "IFMAP Width", "Filter Height",
                                    "Filter Width", "Channels",    "Num Filter",
                                    "Strides",      "Padding",     "Dilation",
                                    "Depthwise"};

static void ignore_col(cols_t *c, int i, const char *name)
{
    size_t len = strlen(c->ignored);
    if (len < sizeof c->ignored)
        snprintf(c->ignored + len, sizeof c->ignored - len, *name ? "%scolumn %d '%s'"
                 : "%scolumn %d (unnamed)", c->nignored ? ", " : "", i + 1, name);
    c->nignored++;
}

/* The conv header's columns after Strides: the extensions by name, the rest ignored. */
static int conv_extensions(char **f, int nf, int lineno, cols_t *c, char *msg, size_t n)
{
    for (int i = 8; i < nf; i++) {
        int *slot = NULL;
        for (int e = 0; e < 3; e++)
            if (!strcasecmp(f[i], k_col[7 + e]))
                slot = e == 0 ? &c->pad : e == 1 ? &c->dil : &c->dw;
        if (!slot) {
            ignore_col(c, i, f[i]);
            continue;
        }
        if (*slot >= 0)
            return fail(msg, n, lineno, "column '%s' named twice", f[i]);
        *slot = i;
    }
    return 0;
}

/* The first non-empty line names the columns and decides the format. 0 or -1. */
static int parse_header(char **f, int nf, int lineno, npu_topology_t *t, cols_t *c, char *msg,
                        size_t n)
{
    int v, numbers = 0;
    memset(c, 0, sizeof *c);
    c->pad = c->dil = c->dw = -1;
    c->ncols = nf;
    if (nf >= 4 && !strcasecmp(f[1], "M") && !strcasecmp(f[2], "N") && !strcasecmp(f[3], "K")) {
        t->format = NPU_TOPO_GEMM;
        for (int i = 4; i < nf; i++)
            ignore_col(c, i, f[i]);
        return 0;
    }
    t->format = NPU_TOPO_CONV;
    if (nf < 8)
        return fail(msg, n, lineno, "header with %d columns; SCALE-Sim's convolution format has "
                                    "8 (Layer name, IFMAP Height, ..., Strides), its GEMM format "
                                    "4 (Layer, M, N, K)", nf);
    for (int i = 1; i < 8; i++)
        numbers += field_int(f[i], 0, 1L << 30, &v) == 0;
    if (numbers == 7)
        return fail(msg, n, lineno, "no header: SCALE-Sim's first line names the columns "
                                    "(Layer name, IFMAP Height, ..., Strides or Layer, M, N, K)");
    return conv_extensions(f, nf, lineno, c, msg, n);
}

/* One GEMM line appended to t. 0 or -1. */
static int parse_gemm(char **f, int nf, int lineno, int batch, npu_topology_t *t, char *msg,
                      size_t n)
{
    static const char *const names[] = {"M", "N", "K"};
    npu_topo_layer_t *L = &t->layer[t->n];
    int v[3];
    if (nf < 4)
        return fail(msg, n, lineno, "%d fields; a GEMM layer has 4 (Layer, M, N, K)", nf);
    for (int i = 0; i < 3; i++)
        if (field_int(f[i + 1], 1, NPU_TOPO_MAX_GEMM_DIM, &v[i]) != 0)
            return fail(msg, n, lineno, "%s '%s' is not an integer in 1..%d", names[i], f[i + 1],
                        NPU_TOPO_MAX_GEMM_DIM);
    if ((long long)v[0] * batch > NPU_TOPO_MAX_GEMM_DIM)
        return fail(msg, n, lineno, "M x batch = %lld exceeds %d", (long long)v[0] * batch,
                    NPU_TOPO_MAX_GEMM_DIM);
    L->M = v[0] * batch;
    L->N = v[1];
    L->K = v[2];
    return 0;
}

/* Column `col` of a conv line as an extension value: absent or empty gives dflt. 0 or -1. */
static int conv_ext(char **f, int nf, int col, int e, int dflt, int *out, int lineno, char *msg,
                    size_t n)
{
    long lo = e == 1 ? 1 : 0, hi = e == 2 ? 1 : 65535;
    *out = dflt;
    if (col < 0 || col >= nf || !*f[col])
        return 0;
    if (field_int(f[col], lo, hi, out) != 0)
        return fail(msg, n, lineno, "%s '%s' is not an integer in %ld..%ld", k_col[7 + e], f[col],
                    lo, hi);
    return 0;
}

/* One conv line appended to t. 0 or -1. */
static int parse_conv(char **f, int nf, int lineno, int batch, npu_topology_t *t, cols_t *cl,
                      char *msg, size_t n)
{
    npu_topo_layer_t *L = &t->layer[t->n];
    npu_conv_t *c = &L->conv;
    int v[7];
    if (nf < 8)
        return fail(msg, n, lineno, "%d fields; a layer has 8 (name and 7 numbers) plus the "
                                    "columns the header adds", nf);
    for (int i = 0; i < 7; i++)
        if (field_int(f[i + 1], 1, 65535, &v[i]) != 0)
            return fail(msg, n, lineno, "%s '%s' is not an integer in 1..65535", k_col[i],
                        f[i + 1]);
    c->batch = batch;
    c->H = v[0];
    c->W = v[1];
    c->KH = v[2];
    c->KW = v[3];
    c->C = v[4];
    c->F = v[5];
    c->stride = v[6];
    if (conv_ext(f, nf, cl->pad, 0, 0, &c->pad, lineno, msg, n) ||
        conv_ext(f, nf, cl->dil, 1, 1, &c->dil, lineno, msg, n) ||
        conv_ext(f, nf, cl->dw, 2, 0, &c->depthwise, lineno, msg, n))
        return -1;
    /* SCALE-Sim's depthwise layer: one filter over all C channels (topology.h) */
    if (cl->dw < 0 && c->F == 1 && c->C > 1 && c->KH * c->KW > 1) {
        c->F = c->C;
        c->depthwise = 1;
        if (cl->ndw_guess++ == 0)
            snprintf(cl->dw_first, sizeof cl->dw_first, "%s", L->name);
    }
    return 0;
}

/* One layer line: the name, the format's fields, the checks. 0 or -1. */
static int parse_layer(char **f, int nf, int lineno, int batch, npu_topology_t *t, cols_t *cl,
                       char *msg, size_t n)
{
    npu_topo_layer_t *L = &t->layer[t->n];
    char why[160];
    if (t->n == NPU_TOPO_MAX_LAYERS)
        return fail(msg, n, lineno, "more than %d layers", NPU_TOPO_MAX_LAYERS);
    memset(L, 0, sizeof *L);
    if (*f[0])
        snprintf(L->name, sizeof L->name, "%s", f[0]);
    else
        snprintf(L->name, sizeof L->name, "layer%d", t->n + 1);
    for (int i = cl->ncols; i < nf && !cl->extra_line; i++)
        if (*f[i])
            cl->extra_line = lineno;
    if (t->format == NPU_TOPO_GEMM) {
        if (parse_gemm(f, nf, lineno, batch, t, msg, n) != 0)
            return -1;
    } else {
        if (parse_conv(f, nf, lineno, batch, t, cl, msg, n) != 0)
            return -1;
        if (npu_conv_check(&L->conv, why, sizeof why) != 0)
            return fail(msg, n, lineno, "layer '%s': %s", L->name, why);
    }
    t->n++;
    return 0;
}

/* The file's warnings, one per line, into t->warn. */
static void warnings(npu_topology_t *t, const cols_t *c)
{
    const char *fmt = t->format == NPU_TOPO_GEMM ? "GEMM" : "convolution";
    size_t len = 0;
    char *w = t->warn;
#define ADD(...)                                                                                  \
    do {                                                                                          \
        if (len < sizeof t->warn)                                                                 \
            len += (size_t)snprintf(w + len, sizeof t->warn - len, __VA_ARGS__);                 \
    } while (0)
    if (c->nignored)
        ADD("warning: ignored %d column%s not in SCALE-Sim's %s format: %s", c->nignored,
            c->nignored > 1 ? "s" : "", fmt, c->ignored);
    if (c->extra_line)
        ADD("%s values past the header's %d columns ignored (first on line %d)",
            c->nignored ? ";" : "warning:", c->ncols, c->extra_line);
    if (c->nignored || c->extra_line)
        ADD("\n");
    if (c->ndw_guess)
        ADD("note: %d layer%s with Num Filter 1, Channels > 1 and a filter larger than 1x1 read "
            "as depthwise convolutions over their channels (SCALE-Sim's way of writing them; "
            "first '%s'); a Depthwise column decides instead\n",
            c->ndw_guess, c->ndw_guess > 1 ? "s" : "", c->dw_first);
#undef ADD
}

int npu_topo_parse(const char *text, int batch, npu_topology_t *t, char *msg, size_t n)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1), *line, *next;
    int lineno = 0, header = 1, rc = 0;
    cols_t cols;
    memset(t, 0, sizeof *t);
    memset(&cols, 0, sizeof cols);
    if (n)
        msg[0] = '\0';
    if (!buf || batch < 1) {
        free(buf);
        return fail(msg, n, 0, buf ? "batch %d: must be >= 1" : "out of memory", batch);
    }
    memcpy(buf, text, len + 1);
    for (line = buf; line && rc == 0; line = next) {
        char *f[MAX_FIELDS], *l;
        int nf;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        l = trim(line);
        if (!*l || *l == '#')
            continue;
        nf = split(l, f);
        if (nf == 0)
            continue; /* only commas */
        if (nf < 0)
            rc = fail(msg, n, lineno, "more than %d fields", MAX_FIELDS);
        else if (header)
            rc = parse_header(f, nf, lineno, t, &cols, msg, n);
        else
            rc = parse_layer(f, nf, lineno, batch, t, &cols, msg, n);
        header = 0;
    }
    if (rc == 0 && t->n == 0)
        rc = fail(msg, n, lineno, "no layers");
    warnings(t, &cols);
    free(buf);
    return rc;
}

int npu_topo_load(const char *path, int batch, npu_topology_t *t, char *msg, size_t n)
{
    enum { MAX_BYTES = 1 << 20 };
    FILE *fp = fopen(path, "rb");
    char *text;
    size_t got;
    int rc;
    if (!fp) {
        snprintf(msg, n, "cannot open '%s'", path);
        return -1;
    }
    text = malloc(MAX_BYTES + 1);
    if (!text) {
        fclose(fp);
        snprintf(msg, n, "out of memory");
        return -1;
    }
    got = fread(text, 1, MAX_BYTES + 1, fp);
    fclose(fp);
    if (got > MAX_BYTES) {
        free(text);
        snprintf(msg, n, "'%s' is larger than 1 MiB", path);
        return -1;
    }
    text[got] = '\0';
    if (memchr(text, '\0', got)) {
        free(text);
        snprintf(msg, n, "'%s' is not a text file", path);
        return -1;
    }
    rc = npu_topo_parse(text, batch, t, msg, n);
    free(text);
    return rc;
}

int npu_topo_gemm_shape(const npu_topology_t *t, int i, int *M, int *N, int *K, char *why,
                        size_t n)
{
    const npu_topo_layer_t *L = &t->layer[i];
    const npu_conv_t *c = &L->conv;
    long long m, k;
    if (t->format == NPU_TOPO_GEMM) {
        *M = L->M;
        *N = L->N;
        *K = L->K;
        return 0;
    }
    if (c->depthwise) {
        snprintf(why, n, "depthwise: no single GEMM (%d products of N = 1); run it with npu conv",
                 c->C);
        return -1;
    }
    m = (long long)c->batch * npu_conv_oh(c) * npu_conv_ow(c);
    k = (long long)c->C * c->KH * c->KW;
    if (m > NPU_TOPO_MAX_GEMM_DIM || k > NPU_TOPO_MAX_GEMM_DIM) {
        snprintf(why, n, "im2col GEMM M = %lld, K = %lld exceeds %d", m, k, NPU_TOPO_MAX_GEMM_DIM);
        return -1;
    }
    *M = (int)m;
    *N = c->F;
    *K = (int)k;
    return 0;
}

static int shrink(int v, int div, int min)
{
    int r = (v + div - 1) / div;
    return r < min ? (min < v ? min : v) : r;
}

void npu_topo_scale(npu_conv_t *c, int cdiv, int sdiv)
{
    int need_h = c->dil * (c->KH - 1) + 1 - 2 * c->pad, need_w = c->dil * (c->KW - 1) + 1 - 2 * c->pad;
    if (cdiv < 1)
        cdiv = 1;
    if (sdiv < 1)
        sdiv = 1;
    c->C = shrink(c->C, cdiv, 1);
    c->F = c->depthwise ? c->C : shrink(c->F, cdiv, 1);
    c->H = shrink(c->H, sdiv, need_h > 1 ? need_h : 1);
    c->W = shrink(c->W, sdiv, need_w > 1 ? need_w : 1);
}

/* Row i of t as a network layer. 0, or -1 with why. */
static int topo_layer(const npu_topology_t *t, int i, npu_net_layer_t *l, char *why, size_t n)
{
    const npu_topo_layer_t *r = &t->layer[i];
    npu_conv_t c = r->conv;
    if (t->format == NPU_TOPO_GEMM) /* M pixels of K channels, N filters of 1 x 1 */
        c = (npu_conv_t){1, r->K, r->M, 1, r->N, 1, 1, 1, 0, 1, 0};
    if (c.KH != c.KW || c.dil != 1) {
        snprintf(why, n, "layer %d (%s): a %dx%d kernel, dilation %d: the estimator takes square, undilated "
                 "kernels", i + 1, r->name, c.KH, c.KW, c.dil);
        return -1;
    }
    *l = (npu_net_layer_t){NPU_NET_CONV, c.H, c.W, c.C, c.F, c.KH, c.stride, c.pad,
                           npu_conv_oh(&c), npu_conv_ow(&c), c.depthwise};
    return 0;
}

int npu_topo_net(const npu_topology_t *t, npu_net_shape_t *net, char *why, size_t n)
{
    memset(net, 0, sizeof *net);
    if (t->n > NPU_NET_MAX_LAYERS) {
        snprintf(why, n, "%d layers: the estimator takes at most %d", t->n, NPU_NET_MAX_LAYERS);
        return -1;
    }
    for (int i = 0; i < t->n; i++)
        if (topo_layer(t, i, &net->l[i], why, n))
            return -1;
    net->layers = t->n;
    return 0;
}
