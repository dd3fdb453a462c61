/* slice_burst.c - exact bursts of DMA transfers on dense tensors; see slice_burst.h. */
#include "compile/slice/slice_burst.h"

#include <string.h>


/* A divisor, with its shift when it is a power of two (beats and burst lengths usually are):
 * the burst counter divides for every row of a strided transfer. */
typedef struct divisor {
    uint64_t d;
    int shift; /* -1: not a power of two */
} divisor_t;

static divisor_t divisor(uint64_t d)
{
    divisor_t v = {d, -1};
    if (d && !(d & (d - 1))) { /* log2: the bits set in d - 1, counted without a loop (once per view) */
        uint64_t x = d - 1;
        x -= (x >> 1) & 0x5555555555555555ull;
        x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
        v.shift = (int)((x * 0x0101010101010101ull) >> 56);
    }
    return v;
}

static uint64_t div_by(divisor_t v, uint64_t a) { return v.shift >= 0 ? a >> v.shift : a / v.d; }
static uint64_t cdiv_by(divisor_t v, uint64_t a) { return div_by(v, a + v.d - 1); }
static uint64_t mod_by(divisor_t v, uint64_t a) { return v.shift >= 0 ? a & (v.d - 1) : a % v.d; }

/* The rule's divisors: bytes per beat, beats per page, beats per burst. */
typedef struct geom_div {
    divisor_t beat, page, mx;
} geom_div_t;

static geom_div_t geom_div(const npu_burst_geom_t *g)
{
    geom_div_t v;
    if (g->divs) { /* found once by npu_slice_geom */
        v.beat = (divisor_t){g->beat, g->beat_sh};
        v.page = (divisor_t){NPU_SLICE_PAGE / g->beat, g->page_sh};
        v.mx = (divisor_t){g->max_beats, g->max_sh};
        return v;
    }
    v.beat = divisor(g->beat);
    v.page = divisor(NPU_SLICE_PAGE / g->beat);
    v.mx = divisor(g->max_beats);
    return v;
}

npu_burst_geom_t npu_slice_geom(const npu_cfg_t *cfg)
{
    npu_burst_geom_t g;
    geom_div_t v;
    memset(&g, 0, sizeof g);
    g.beat = (unsigned)npu_cfg_beat(cfg);
    g.max_beats = cfg->max_burst_beats > 0 ? (unsigned)cfg->max_burst_beats : 1u;
    v = geom_div(&g);
    g.beat_sh = v.beat.shift;
    g.page_sh = v.page.shift;
    g.max_sh = v.mx.shift;
    g.divs = 1;
    return g;
}

/* Beats b0..b1 of a run: the greedy split restarts at every page line, so each page touched
 * contributes ceil(its beats / max) bursts; full middle pages all contribute the same. */
static void run_bursts(const geom_div_t *v, uint64_t addr, uint64_t len, npu_bursts_t *acc)
{
    uint64_t P = v->page.d, b0, b1, p0, p1, n;
    if (len == 0)
        return;
    b0 = div_by(v->beat, addr);
    b1 = div_by(v->beat, addr + len - 1);
    p0 = div_by(v->page, b0);
    p1 = div_by(v->page, b1);
    if (p0 == p1)
        n = cdiv_by(v->mx, b1 - b0 + 1);
    else
        n = cdiv_by(v->mx, (p0 + 1) * P - b0) + (p1 - p0 - 1) * cdiv_by(v->mx, P) +
            cdiv_by(v->mx, b1 - p1 * P + 1);
    acc->bursts += n;
    acc->beats += b1 - b0 + 1;
    acc->bytes += len;
    acc->runs++;
}

void npu_slice_run(const npu_burst_geom_t *g, uint64_t addr, uint64_t len, npu_bursts_t *acc)
{
    geom_div_t v = geom_div(g);
    run_bursts(&v, addr, len, acc);
}

static void add_times(npu_bursts_t *acc, const npu_bursts_t *b, uint64_t times)
{
    acc->bursts += times * b->bursts;
    acc->beats += times * b->beats;
    acc->bytes += times * b->bytes;
    acc->runs += times * b->runs;
}

/* A run counted as if it crossed no 4 KiB line: ceil(beats / max) bursts. */
static void uncrossed(const geom_div_t *v, uint64_t addr, uint64_t len, npu_bursts_t *acc)
{
    uint64_t beats = div_by(v->beat, addr + len - 1) - div_by(v->beat, addr) + 1;
    acc->bursts += cdiv_by(v->mx, beats);
    acc->beats += beats;
    acc->bytes += len;
    acc->runs++;
}

/* The rows (len <= 4096 bytes: each crosses at most one line) that cross a 4 KiB line L, those
 * starting in [L - len + 1, L - 1], found line by line: their bursts moved from the uncrossed
 * count to the run's own. */
static void crossings(const geom_div_t *v, uint64_t addr, uint64_t rows, uint64_t len, uint64_t stride,
                      npu_bursts_t *acc)
{
    uint64_t end = addr + (rows - 1) * stride + len;
    for (uint64_t L = (addr / NPU_SLICE_PAGE + 1) * NPU_SLICE_PAGE; L < end; L += NPU_SLICE_PAGE) {
        uint64_t lo = L - len + 1 > addr ? (L - len + 1 - addr + stride - 1) / stride : 0;
        for (uint64_t r = lo; r <= (L - 1 - addr) / stride && r < rows; r++) {
            npu_bursts_t t, u;
            memset(&t, 0, sizeof t);
            memset(&u, 0, sizeof u);
            run_bursts(v, addr + r * stride, len, &t);
            uncrossed(v, addr + r * stride, len, &u);
            acc->bursts += t.bursts - u.bursts;
        }
    }
}

/* Can no row of a strided transfer cross a 4 KiB line? Every row starts at addr mod g within
 * a g-byte block of the page, g = gcd(stride, 4096) (a power of two: the lowest set bit of the
 * stride mod 4096, or 4096), so a row ends within its page when (addr mod g) + len <= g. The
 * usual NHWC tile row (channels at a power-of-two pixel stride) passes this test, and its
 * transfer then needs no line-by-line recount. */
static int never_crosses(uint64_t addr, uint64_t len, uint64_t stride)
{
    uint64_t m = stride % NPU_SLICE_PAGE, g = m ? m & (~m + 1) : NPU_SLICE_PAGE;
    return (addr & (g - 1)) + len <= g;
}

/* The rows of a strided transfer, each its own run. The usual tile (rows of at most a page,
 * fewer lines under the transfer than rows, or no row crossing a line: never_crosses) is counted
 * in two parts: every row as if it crossed no line, its beats a function of its address mod B
 * and so periodic in r with period p = 1 when B divides the stride, else B (one period counted
 * and repeated, then the first rows % p); then the rows that cross a line, recounted
 * (crossings). Any other transfer row by row. */
static void strided_rows(const geom_div_t *v, uint64_t addr, uint64_t rows, uint64_t len, uint64_t stride,
                         npu_bursts_t *acc)
{
    uint64_t end = addr + (rows - 1) * stride + len;
    divisor_t p = mod_by(v->beat, stride) ? v->beat : divisor(1);
    npu_bursts_t per, part;
    int crosses = len > NPU_SLICE_PAGE || !never_crosses(addr, len, stride);
    if (stride == 0 || (crosses && (len > NPU_SLICE_PAGE || end / NPU_SLICE_PAGE - addr / NPU_SLICE_PAGE > rows))) {
        for (uint64_t r = 0; r < rows; r++)
            run_bursts(v, addr + r * stride, len, acc);
        return;
    }
    memset(&per, 0, sizeof per);
    memset(&part, 0, sizeof part);
    for (uint64_t r = 0, rem = mod_by(p, rows); r < rows && r < p.d; r++) {
        if (r == rem)
            part = per;
        uncrossed(v, addr + r * stride, len, &per);
    }
    add_times(acc, &per, rows < p.d ? 1 : div_by(p, rows));
    if (rows >= p.d)
        add_times(acc, &part, 1);
    if (crosses)
        crossings(v, addr, rows, len, stride, acc);
}

/* The transfer's runs and bursts (no SPM words: npu_slice_view counts them by its rows); v: the
 * geometry's divisors, found once per view. */
static void xfer_runs(const geom_div_t *v, uint64_t addr, uint64_t rows, uint64_t row_bytes, uint64_t stride,
                      npu_bursts_t *acc)
{
    acc->xfers++;
    if (stride == row_bytes || rows == 1)
        run_bursts(v, addr, rows * row_bytes, acc);
    else
        strided_rows(v, addr, rows, row_bytes, stride, acc);
}

void npu_slice_xfer(const npu_burst_geom_t *g, uint64_t addr, uint64_t rows, uint64_t row_bytes,
                    uint64_t stride, npu_bursts_t *acc)
{
    geom_div_t v = geom_div(g);
    if (rows == 0 || row_bytes == 0)
        return;
    xfer_runs(&v, addr, rows, row_bytes, stride, acc);
    acc->words += rows * ((row_bytes + g->beat - 1) / g->beat);
}

/* The view's runs (each run bytes; their starts base + the rows' stride and the outer dims 0..i-1
 * with more than one index) counted at once when they are all alike: B divides every stride, so
 * every run starts at the same offset in its beat, and no run crosses a 4 KiB line (they all
 * start at base mod g in a g-byte block, g the gcd of the strides and 4096, as in
 * never_crosses), so each is ceil(beats / max) bursts. The usual NHWC tile of a dense tensor
 * whose channels fill whole beats. 1 when counted, 0 when not (the runs differ). */
static int alike_runs(const geom_div_t *gv, const npu_slice_view_t *v, int i, uint64_t run, uint64_t rows,
                      uint64_t stride, npu_bursts_t *acc)
{
    uint64_t bits = rows > 1 ? stride : 0, n = rows, xfers = 1;
    npu_bursts_t one;
    for (int d = 0; d < i; d++) {
        uint64_t c = (uint64_t)v->dim[d].count;
        bits |= c > 1 ? (uint64_t)v->dim[d].stride * v->ebytes : 0;
        n *= c;
        xfers *= c;
    }
    /* the strides' lowest set bit is their gcd with 4096 (never_crosses takes it of one stride) */
    if (gv->beat.shift < 0 || bits & (gv->beat.d - 1) || !never_crosses(v->base, run, bits))
        return 0;
    memset(&one, 0, sizeof one);
    run_bursts(gv, v->base, run, &one);
    acc->bursts += n * one.bursts;
    acc->beats += n * one.beats;
    acc->bytes += n * one.bytes;
    acc->runs += n;
    acc->xfers += xfers;
    return 1;
}

int npu_slice_view(const npu_burst_geom_t *g, const npu_slice_view_t *v, npu_bursts_t *acc)
{
    int i, nd = v->nd;
    geom_div_t gv;
    uint64_t run, rows = 1, stride = 0, idx[NPU_SLICE_MAX_DIMS];
    if (nd < 1 || nd > NPU_SLICE_MAX_DIMS || v->ebytes < 1 || v->dim[nd - 1].stride != 1)
        return -1;
    for (i = 0; i < nd; i++)
        if (v->dim[i].count < 1 || v->dim[i].stride < 0)
            return -1;
    /* one descriptor row per innermost line, each starting an SPM word */
    run = ((uint64_t)v->dim[nd - 1].count * v->ebytes + g->beat - 1) / g->beat;
    for (i = 0; i < nd - 1; i++)
        run *= (uint64_t)v->dim[i].count;
    acc->words += run;
    /* merge contiguous dims from the inside out */
    run = (uint64_t)v->dim[nd - 1].count * v->ebytes;
    for (i = nd - 2; i >= 0; i--) {
        if (v->dim[i].count == 1)
            continue;
        if ((uint64_t)v->dim[i].stride * v->ebytes != run)
            break;
        run *= (uint64_t)v->dim[i].count;
    }
    if (i >= 0) { /* the transfer's rows, and the outer dims that continue them at the same stride */
        rows = (uint64_t)v->dim[i].count;
        stride = (uint64_t)v->dim[i].stride * v->ebytes;
        for (i--; i >= 0; i--) {
            if (v->dim[i].count == 1)
                continue;
            if ((uint64_t)v->dim[i].stride * v->ebytes != rows * stride)
                break;
            rows *= (uint64_t)v->dim[i].count;
        }
        i++;
    }
    /* the outer dims 0..i-1 enumerate the transfers (odometer, outermost slowest) */
    i = i > 0 ? i : 0;
    gv = geom_div(g);
    if (alike_runs(&gv, v, i, run, rows, stride, acc))
        return 0;
    memset(idx, 0, sizeof idx);
    for (;;) {
        uint64_t a = v->base;
        int d;
        for (d = 0; d < i; d++)
            a += idx[d] * (uint64_t)v->dim[d].stride * v->ebytes;
        xfer_runs(&gv, a, rows, run, stride, acc);
        for (d = i - 1; d >= 0; d--) {
            if (++idx[d] < (uint64_t)v->dim[d].count)
                break;
            idx[d] = 0;
        }
        if (d < 0)
            return 0;
    }
}

int npu_slice_matrix_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int64_t R,
                          int64_t C, int64_t r0, int64_t c0, int64_t tr, int64_t tc, npu_bursts_t *acc)
{
    npu_slice_view_t v;
    if (r0 < 0 || c0 < 0 || tr < 1 || tc < 1 || r0 + tr > R || c0 + tc > C)
        return -1;
    v.base = base + (uint64_t)(r0 * C + c0) * ebytes;
    v.ebytes = ebytes;
    v.nd = 2;
    v.dim[0].count = tr;
    v.dim[0].stride = C;
    v.dim[1].count = tc;
    v.dim[1].stride = 1;
    return npu_slice_view(g, &v, acc);
}

int npu_slice_image_tile(const npu_burst_geom_t *g, uint64_t base, unsigned ebytes, int layout,
                         const npu_slice_box_t *e, const npu_slice_box_t *o,
                         const npu_slice_box_t *t, npu_bursts_t *acc)
{
    npu_slice_view_t v;
    int64_t sn, sh, sw, sc;
    if (o->n < 0 || o->h < 0 || o->w < 0 || o->c < 0 || t->n < 1 || t->h < 1 || t->w < 1 || t->c < 1 ||
        o->n + t->n > e->n || o->h + t->h > e->h || o->w + t->w > e->w || o->c + t->c > e->c)
        return -1;
    if (layout == NPU_SLICE_NHWC) {
        sc = 1;
        sw = e->c;
        sh = e->w * e->c;
        sn = e->h * sh;
    } else if (layout == NPU_SLICE_NCHW) {
        sw = 1;
        sh = e->w;
        sc = e->h * e->w;
        sn = e->c * sc;
    } else {
        return -1;
    }
    v.base = base + (uint64_t)(o->n * sn + o->h * sh + o->w * sw + o->c * sc) * ebytes;
    v.ebytes = ebytes;
    v.nd = 4;
    v.dim[0].count = t->n;
    v.dim[0].stride = sn;
    if (layout == NPU_SLICE_NHWC) {
        v.dim[1] = (npu_slice_dim_t){t->h, sh};
        v.dim[2] = (npu_slice_dim_t){t->w, sw};
        v.dim[3] = (npu_slice_dim_t){t->c, sc};
    } else {
        v.dim[1] = (npu_slice_dim_t){t->c, sc};
        v.dim[2] = (npu_slice_dim_t){t->h, sh};
        v.dim[3] = (npu_slice_dim_t){t->w, sw};
    }
    return npu_slice_view(g, &v, acc);
}
