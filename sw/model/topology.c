/* topology.c - SCALE-Sim topology CSV files as convolution layers (topology.h). */
#include "model/topology.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 16

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

/* Splits a line at commas in place; a trailing empty field (the trailing comma) is dropped. */
static int split(char *line, char **f)
{
    int nf = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (nf == MAX_FIELDS)
            return -1;
        f[nf++] = trim(p);
        if (!c)
            break;
        p = c + 1;
    }
    if (nf > 1 && !*f[nf - 1])
        nf--;
    return nf;
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

static int is_gemm_header(char **f, int nf)
{
    return nf >= 4 && !strcmp(f[1], "M") && !strcmp(f[2], "N") && !strcmp(f[3], "K");
}

static const char *const k_col[] = {"IFMAP Height", "IFMAP Width", "Filter Height",
                                    "Filter Width", "Channels",    "Num Filter",
                                    "Strides",      "Padding",     "Dilation",
                                    "Depthwise"};

/* The first non-empty line names the columns. 0 or -1 (message in msg). */
static int parse_header(char **f, int nf, int lineno, char *msg, size_t n)
{
    if (is_gemm_header(f, nf))
        return fail(msg, n, lineno, "a GEMM (M, N, K) topology is not a list of convolutions "
                                    "(use npu train --layers for MLPs)");
    if (nf < 8)
        return fail(msg, n, lineno, "header with %d columns; SCALE-Sim's convolution format "
                                    "has 8 (name, IFMAP Height, ..., Strides)", nf);
    return 0;
}

/* One layer line appended to t. 0 or -1 (message in msg). */
static int parse_layer(char **f, int nf, int lineno, int batch, npu_topology_t *t, char *msg,
                       size_t n)
{
    npu_topo_layer_t *L = &t->layer[t->n];
    npu_conv_t *c = &L->conv;
    char why[160];
    int v[10];
    if (nf < 8 || nf > 11)
        return fail(msg, n, lineno, "%d fields; a layer has 8 (name and 7 numbers) plus the "
                                    "optional Padding, Dilation, Depthwise", nf);
    if (t->n == NPU_TOPO_MAX_LAYERS)
        return fail(msg, n, lineno, "more than %d layers", NPU_TOPO_MAX_LAYERS);
    for (int i = 1; i < nf; i++) {
        long lo = i >= 8 ? (i == 9 ? 1 : 0) : 1;
        long hi = i == 10 ? 1 : 65535;
        if (field_int(f[i], lo, hi, &v[i - 1]) != 0)
            return fail(msg, n, lineno, "%s '%s' is not an integer in %ld..%ld", k_col[i - 1],
                        f[i], lo, hi);
    }
    snprintf(L->name, sizeof L->name, "%s", *f[0] ? f[0] : "layer");
    c->batch = batch;
    c->H = v[0];
    c->W = v[1];
    c->KH = v[2];
    c->KW = v[3];
    c->C = v[4];
    c->F = v[5];
    c->stride = v[6];
    c->pad = nf > 8 ? v[7] : 0;
    c->dil = nf > 9 ? v[8] : 1;
    c->depthwise = nf > 10 ? v[9] : 0;
    if (npu_conv_check(c, why, sizeof why) != 0)
        return fail(msg, n, lineno, "layer '%s': %s", L->name, why);
    t->n++;
    return 0;
}

int npu_topo_parse(const char *text, int batch, npu_topology_t *t, char *msg, size_t n)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1), *line, *next;
    int lineno = 0, header = 1, rc = 0;
    if (!buf)
        return fail(msg, n, 0, "out of memory");
    memcpy(buf, text, len + 1);
    memset(t, 0, sizeof *t);
    if (n)
        msg[0] = '\0';
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
        if (nf < 0)
            rc = fail(msg, n, lineno, "more than %d fields", MAX_FIELDS);
        else if (header)
            rc = parse_header(f, nf, lineno, msg, n);
        else
            rc = parse_layer(f, nf, lineno, batch, t, msg, n);
        header = 0;
    }
    if (rc == 0 && t->n == 0)
        rc = fail(msg, n, lineno, "no layers");
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
