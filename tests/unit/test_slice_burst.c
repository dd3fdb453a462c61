/* test_slice_burst.c - the slicing stage's burst counter: the brief's golden cases (TSO Fig. 1,
 * InceptionV3 conv5), hand cases (unaligned start, 4 KiB crossing, MAX split) and random views
 * against a beat-by-beat walk of the DMA rule. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/slice/slice_burst.h"
#include "prog/prog_expect.h"
#include "test_cfgs.h"

/* Geometries given as {beat, max_beats, 0, ...} have the counter find its divisors per view;
 * npu_slice_geom's (the slicing stage's) carry them: geom() makes one such, for a beat of 4S. */
static npu_burst_geom_t geom(unsigned beat, unsigned max_beats)
{
    npu_cfg_t c;
    memset(&c, 0, sizeof c);
    c.s = (int)beat / 4;
    c.max_burst_beats = (int)max_beats;
    return npu_slice_geom(&c);
}

/* 128-byte bursts: 32-byte beats (S = 8) at most 4 per burst. */
static const npu_burst_geom_t G128 = {32, 4, 0, 0, 0, 0};

static npu_bursts_t run1(const npu_burst_geom_t *g, uint64_t a, uint64_t len)
{
    npu_bursts_t b;
    memset(&b, 0, sizeof b);
    npu_slice_run(g, a, len, &b);
    return b;
}

/* The rule walked beat by beat: a new burst at the run's start, after max beats, or at a page. */
static uint64_t walk_run(const npu_burst_geom_t *g, uint64_t a, uint64_t len, uint64_t *beats)
{
    uint64_t n = 0, in = 0, b0 = a / g->beat, b1 = (a + len - 1) / g->beat;
    for (uint64_t b = b0; b <= b1; b++) {
        if (b == b0 || in == g->max_beats || (b * g->beat) % 4096 == 0) {
            n++;
            in = 0;
        }
        in++;
    }
    *beats += b1 - b0 + 1;
    return n;
}

Test(slice_burst, fig1_golden)
{
    /* 128 x 128 int16 single channel (256-byte rows); slices (a) 128 rows x 32 B, (b) 128 x 64 B,
     * (c) 64 x 128 B covering the image: 1024 / 512 / 256 bursts, for 128-byte bursts made of
     * 32-byte beats and of one 128-byte beat. */
    static const npu_burst_geom_t geoms[2] = {{32, 4, 0, 0, 0, 0}, {128, 1, 0, 0, 0, 0}};
    static const int tr[3] = {128, 128, 64}, tcb[3] = {32, 64, 128};
    static const uint64_t want[3] = {1024, 512, 256};
    for (int gi = 0; gi < 2; gi++)
        for (int s = 0; s < 3; s++) {
            npu_bursts_t b;
            int tc = tcb[s] / 2;
            memset(&b, 0, sizeof b);
            for (int r0 = 0; r0 < 128; r0 += tr[s])
                for (int c0 = 0; c0 < 128; c0 += tc)
                    cr_assert_eq(npu_slice_matrix_tile(&geoms[gi], 0x10000, 2, 128, 128, r0, c0, tr[s], tc, &b), 0);
            cr_assert_eq(b.bursts, want[s], "geom %d slice %d: %llu bursts", gi, s, (unsigned long long)b.bursts);
            cr_assert_eq(b.bytes, 128u * 128u * 2u);
        }
}

Test(slice_burst, inception_conv5_golden)
{
    /* 80 IFMs of 73 x 73 int16 (NCHW, batch 1) at address 0. TSO-burst IN tile 14 x 4 x 73
     * (channels x rows x cols): full rows, so each channel's 4 rows are one 584-byte run of 5
     * bursts: 70. TSO-noburst tile 16 x 11 x 20: one 40-byte run per row, 16 * 11 = 176. */
    npu_slice_box_t ext = {1, 73, 73, 80}, org = {0, 0, 0, 0};
    npu_slice_box_t t1 = {1, 4, 73, 14}, t2 = {1, 11, 20, 16};
    npu_bursts_t b;
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NCHW, &ext, &org, &t1, &b), 0);
    cr_assert_eq(b.bursts, 70);
    cr_assert_eq(b.runs, 14);
    cr_assert_eq(b.xfers, 1, "one transfer: 14 runs at the channel stride");
    cr_assert_eq(b.bytes, 8176);
    /* at the origin one row (channel 8, row 5: bytes 85994..86033) crosses the 4 KiB line at
     * 86016, which the paper's ceil(len / B) ignores: 177; the same tile 11 columns on: 176 */
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NCHW, &ext, &org, &t2, &b), 0);
    cr_assert_eq(b.bursts, 177);
    memset(&b, 0, sizeof b);
    org.w = 11;
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NCHW, &ext, &org, &t2, &b), 0);
    cr_assert_eq(b.bursts, 176);
    cr_assert_eq(b.runs, 176);
    cr_assert_eq(b.xfers, 16, "one transfer of 11 rows per channel");
    cr_assert_eq(b.bytes, 7040);
}

Test(slice_burst, hand_cases)
{
    npu_bursts_t b;
    npu_burst_geom_t g16 = {32, 16, 0, 0, 0, 0};
    /* aligned 128 B: 4 beats, 1 burst; 1 byte later: 5 beats, 2 bursts */
    b = run1(&G128, 0, 128);
    cr_assert(b.beats == 4 && b.bursts == 1);
    b = run1(&G128, 1, 128);
    cr_assert(b.beats == 5 && b.bursts == 2);
    /* unaligned 2-byte run inside a beat; across a beat line */
    b = run1(&G128, 33, 2);
    cr_assert(b.beats == 1 && b.bursts == 1);
    b = run1(&G128, 31, 2);
    cr_assert(b.beats == 2 && b.bursts == 1);
    /* 4 KiB crossing: 64 bytes from 4096-32 are 2 beats in two pages: 2 bursts */
    b = run1(&g16, 4096 - 32, 64);
    cr_assert(b.beats == 2 && b.bursts == 2);
    /* MAX split: 17 aligned beats = 16 + 1 */
    b = run1(&g16, 0, 17 * 32);
    cr_assert(b.beats == 17 && b.bursts == 2);
    /* a whole 8 KiB run from 100: 257 beats over 3 pages: 128 - 3 = 125 + 128 + 4 beats:
     * 8 + 8 + 1 bursts */
    b = run1(&g16, 100, 8192);
    cr_assert_eq(b.beats, 257);
    cr_assert_eq(b.bursts, 17);
    /* a transfer with stride == row_bytes is one run; with a larger stride each row alone */
    memset(&b, 0, sizeof b);
    npu_slice_xfer(&g16, 0, 4, 100, 100, &b);
    cr_assert(b.runs == 1 && b.beats == 13 && b.bursts == 1 && b.xfers == 1);
    memset(&b, 0, sizeof b);
    npu_slice_xfer(&g16, 0, 4, 100, 128, &b);
    cr_assert(b.runs == 4 && b.beats == 16 && b.bursts == 4);
}

Test(slice_burst, nhwc_merges_from_the_layout)
{
    /* 2 x 5 x 6 x 24 int16 NHWC. Full channel depth and full width: one run per image. */
    npu_slice_box_t ext = {2, 5, 6, 24}, org = {0, 1, 0, 0};
    npu_slice_box_t full = {2, 3, 6, 24}, part = {1, 3, 6, 8}, cols = {1, 3, 2, 24};
    npu_bursts_t b;
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NHWC, &ext, &org, &full, &b), 0);
    cr_assert_eq(b.runs, 2);
    cr_assert_eq(b.xfers, 1);
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NHWC, &ext, &org, &part, &b), 0);
    cr_assert_eq(b.runs, 18, "8 of 24 channels: one run per pixel");
    cr_assert_eq(b.xfers, 1, "full-width rows continue at the pixel stride: one transfer");
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NHWC, &ext, &org, &cols, &b), 0);
    cr_assert_eq(b.runs, 3, "2 full-depth pixels of a row are contiguous");
    cr_assert_eq(npu_slice_image_tile(&G128, 0, 2, NPU_SLICE_NHWC, &ext, &org, &(npu_slice_box_t){1, 5, 6, 24}, &b),
                 -1, "tile past the image");
}

/* Random views: the counter equals the walk over the same runs, for several geometries. */
Test(slice_burst, random_views_vs_walk)
{
    static const npu_burst_geom_t geoms[4] = {
        {8, 16, 0, 0, 0, 0}, {32, 16, 0, 0, 0, 0}, {32, 4, 0, 0, 0, 0}, {64, 16, 0, 0, 0, 0}};
    uint64_t seed = 0x5eed511ceull ^ 0x9e3779b97f4a7c15ull;
    for (int it = 0; it < 3000; it++) {
        const npu_burst_geom_t *g = &geoms[it % 4];
        int64_t H = 1 + (int64_t)(test_rand(&seed) % 9), W = 1 + (int64_t)(test_rand(&seed) % 40);
        int64_t C = 1 + (int64_t)(test_rand(&seed) % 300);
        npu_slice_box_t ext = {2, H, W, C}, org, t;
        uint64_t base = test_rand(&seed) % 20000, want = 0, beats = 0;
        unsigned e = (it & 8) ? 4 : 2;
        int layout = (it >> 4) & 1;
        npu_bursts_t b;
        t.n = 1 + (int64_t)(test_rand(&seed) % 2);
        t.h = 1 + (int64_t)(test_rand(&seed) % (uint64_t)H);
        t.w = 1 + (int64_t)(test_rand(&seed) % (uint64_t)W);
        t.c = 1 + (int64_t)(test_rand(&seed) % (uint64_t)C);
        org.n = (int64_t)(test_rand(&seed) % (uint64_t)(3 - t.n));
        org.h = (int64_t)(test_rand(&seed) % (uint64_t)(H - t.h + 1));
        org.w = (int64_t)(test_rand(&seed) % (uint64_t)(W - t.w + 1));
        org.c = (int64_t)(test_rand(&seed) % (uint64_t)(C - t.c + 1));
        memset(&b, 0, sizeof b);
        cr_assert_eq(npu_slice_image_tile(g, base, e, layout, &ext, &org, &t, &b), 0);
        /* the walk: every element run of the innermost dim, merged only where the addresses are
         * adjacent (an element-level reconstruction of the runs) */
        {
            uint64_t run_a = 0, run_len = 0, n = 0;
            for (int64_t in = 0; in < t.n; in++)
                for (int64_t o1 = 0; o1 < (layout ? t.c : t.h); o1++)
                    for (int64_t o2 = 0; o2 < (layout ? t.h : t.w); o2++)
                        for (int64_t o3 = 0; o3 < (layout ? t.w : t.c); o3++) {
                            int64_t nn = org.n + in, h, w, c;
                            uint64_t a;
                            h = org.h + (layout ? o2 : o1);
                            w = org.w + (layout ? o3 : o2);
                            c = org.c + (layout ? o1 : o3);
                            a = base + e * (uint64_t)(layout ? ((nn * C + c) * H + h) * W + w
                                                             : ((nn * H + h) * W + w) * C + c);
                            if (run_len && a == run_a + run_len) {
                                run_len += e;
                                continue;
                            }
                            if (run_len) {
                                want += walk_run(g, run_a, run_len, &beats);
                                n++;
                            }
                            run_a = a;
                            run_len = e;
                        }
            want += walk_run(g, run_a, run_len, &beats);
            n++;
            cr_assert_eq(b.runs, n, "it %d runs", it);
        }
        cr_assert_eq(b.bursts, want, "it %d: %llu vs walk %llu", it, (unsigned long long)b.bursts,
                     (unsigned long long)want);
        cr_assert_eq(b.beats, beats, "it %d beats", it);
        cr_assert_eq(b.bytes, (uint64_t)(t.n * t.h * t.w * t.c) * e);
    }
}

/* The compiler's burst model and the expected-counter model (prog/prog_expect: the rule the RTL's
 * DMA follows, the one its counters are checked against) are written apart on purpose, so each
 * checks the other: on random normal transfers (any even address, rows, row bytes, and strides
 * equal to, below and above the row) they count the same beats and bursts. */
Test(slice_burst, agrees_with_the_dma_rule)
{
    static const unsigned beats[] = {8, 32, 64}, maxb[] = {1, 4, 16};
    uint64_t seed = 0x5EED;
    for (int i = 0; i < 20000; i++) {
        npu_burst_geom_t g = {beats[i % 3], maxb[(i / 3) % 3], 0, 0, 0, 0};
        uint64_t addr = 2 * (test_rand(&seed) % 40000), rows = 1 + test_rand(&seed) % 40;
        uint64_t rb = 2 * (1 + test_rand(&seed) % 300), stride;
        switch (test_rand(&seed) % 3) {
        case 0: stride = rb; break;
        case 1: stride = rb + 2 * (test_rand(&seed) % 200); break;
        default: stride = 2 * (1 + test_rand(&seed) % (rb / 2)); break;
        }
        npu_bursts_t a;
        memset(&a, 0, sizeof a);
        npu_slice_xfer(&g, addr, rows, rb, stride, &a);
        npu_dma_count_t d = npu_dma_bursts(g.beat, g.max_beats, addr, rows, rb, stride);
        cr_assert(a.beats == d.beats && a.bursts == d.bursts,
                  "B=%u max=%u addr=%llu rows=%llu row_bytes=%llu stride=%llu: slice %llu/%llu, "
                  "dma %llu/%llu beats/bursts", g.beat, g.max_beats, (unsigned long long)addr,
                  (unsigned long long)rows, (unsigned long long)rb, (unsigned long long)stride,
                  (unsigned long long)a.beats, (unsigned long long)a.bursts,
                  (unsigned long long)d.beats, (unsigned long long)d.bursts);
    }
}

/* A strided transfer is counted without visiting every row (one period of the rows' beats, then
 * the rows that cross a 4 KiB line): it equals the rule applied row by row (npu_slice_run per
 * row) on long transfers, short and long strides, rows longer than a page and page strides. */
Test(slice_burst, strided_rows_equal_row_by_row)
{
    static const unsigned beats[] = {8, 32, 64, 128}, maxb[] = {1, 3, 4, 16};
    uint64_t seed = 0x57D;
    for (int i = 0; i < 20000; i++) {
        npu_burst_geom_t g = {beats[i % 4], maxb[(i / 4) % 4], 0, 0, 0, 0};
        uint64_t addr = test_rand(&seed) % 100000, rows = 2 + test_rand(&seed) % 3000;
        uint64_t rb = 1 + test_rand(&seed) % (i % 7 ? 700 : 9000), stride;
        switch (test_rand(&seed) % 4) {
        case 0: stride = rb + 1 + test_rand(&seed) % 5000; break;
        case 1: stride = 4096 * (1 + test_rand(&seed) % 3); break;
        case 2: stride = 1 + test_rand(&seed) % rb; break;
        default: stride = rb + 4096 * (1 + test_rand(&seed) % 40); break;
        }
        if (stride == rb)
            stride++;
        npu_bursts_t a, w;
        memset(&a, 0, sizeof a);
        memset(&w, 0, sizeof w);
        npu_slice_xfer(&g, addr, rows, rb, stride, &a);
        for (uint64_t r = 0; r < rows; r++)
            npu_slice_run(&g, addr + r * stride, rb, &w);
        cr_assert(a.bursts == w.bursts && a.beats == w.beats && a.bytes == w.bytes && a.runs == w.runs &&
                      a.xfers == 1,
                  "B=%u max=%u addr=%llu rows=%llu row_bytes=%llu stride=%llu: %llu/%llu vs row by row "
                  "%llu/%llu bursts/beats", g.beat, g.max_beats, (unsigned long long)addr,
                  (unsigned long long)rows, (unsigned long long)rb, (unsigned long long)stride,
                  (unsigned long long)a.bursts, (unsigned long long)a.beats,
                  (unsigned long long)w.bursts, (unsigned long long)w.beats);
    }
}

/* SPM words: a word per descriptor row and beat of it, the view's innermost line being the row,
 * whether or not the rows merge into one DRAM run. */
Test(slice_burst, spm_words_per_row)
{
    static const npu_burst_geom_t g = {32, 16, 0, 0, 0, 0};
    npu_bursts_t b;
    memset(&b, 0, sizeof b);
    /* 256 rows of 5 int32 (20 B) of a 4096 x 5 matrix: one run of 160 beats, 256 words */
    cr_assert_eq(npu_slice_matrix_tile(&g, 0, 4, 4096, 5, 256, 0, 256, 5, &b), 0);
    cr_assert(b.xfers == 1 && b.runs == 1 && b.beats == 160 && b.words == 256, "beats %llu words %llu",
              (unsigned long long)b.beats, (unsigned long long)b.words);
    /* 8 rows of 40 int16 (80 B, 3 words each) of a 64-wide matrix: strided, 24 words */
    memset(&b, 0, sizeof b);
    cr_assert_eq(npu_slice_matrix_tile(&g, 0, 2, 16, 64, 0, 0, 8, 40, &b), 0);
    cr_assert_eq(b.words, 24u);
    /* one transfer: rows x ceil(row bytes / B) */
    memset(&b, 0, sizeof b);
    npu_slice_xfer(&g, 12, 7, 33, 40, &b);
    cr_assert_eq(b.words, 14u);
}

/* The plain rule over a view: every element in view order (the last dim fastest), adjacent
 * elements merged into runs, each run walked beat by beat (walk_run). Bursts, beats, runs. */
static void walk_view(const npu_burst_geom_t *g, const npu_slice_view_t *v, uint64_t *bursts, uint64_t *beats,
                      uint64_t *runs)
{
    int64_t idx[NPU_SLICE_MAX_DIMS] = {0};
    uint64_t ra = 0, rl = 0;
    int d;
    *bursts = *beats = *runs = 0;
    do {
        uint64_t a = v->base;
        for (d = 0; d < v->nd; d++)
            a += (uint64_t)(idx[d] * v->dim[d].stride) * v->ebytes;
        if (rl && a == ra + rl) {
            rl += v->ebytes;
        } else {
            if (rl) {
                *bursts += walk_run(g, ra, rl, beats);
                ++*runs;
            }
            ra = a;
            rl = v->ebytes;
        }
        for (d = v->nd - 1; d >= 0 && ++idx[d] == v->dim[d].count; d--)
            idx[d] = 0;
    } while (d >= 0);
    *bursts += walk_run(g, ra, rl, beats);
    ++*runs;
}

/* Would every run of the view be counted from one (B divides every stride that moves, and no
 * run can cross a 4 KiB line)? The test's own reading of the rule, to show the random views
 * below reach the shortcut often, and cross lines often. */
static int all_alike(const npu_burst_geom_t *g, const npu_slice_view_t *v)
{
    uint64_t bits = 0, run = (uint64_t)v->dim[v->nd - 1].count * v->ebytes, gg;
    int i = v->nd - 2;
    for (; i >= 0 && (v->dim[i].count == 1 || (uint64_t)v->dim[i].stride * v->ebytes == run); i--)
        run *= (uint64_t)v->dim[i].count;
    for (; i >= 0; i--)
        bits |= v->dim[i].count > 1 ? (uint64_t)v->dim[i].stride * v->ebytes : 0;
    bits %= 4096;
    gg = bits ? bits & (~bits + 1) : 4096;
    return bits % g->beat == 0 && v->base % gg + run <= gg;
}

/* The shortcuts of the counter (a view whose runs are all alike counted from one run; a strided
 * transfer none of whose rows can cross a line counted without the line-by-line recount) give
 * the plain rule's counts: random NHWC / NCHW tiles and [taps][F][C] blocks whose channels fill
 * whole beats (the tensors the slicing stage costs), at beat-aligned and unaligned bases, and
 * strided transfers at power-of-two strides, against the element walk and the row-by-row rule. */
Test(slice_burst, shortcuts_equal_the_plain_rule)
{
    static const npu_burst_geom_t geoms[4] = {
        {16, 16, 0, 0, 0, 0}, {32, 16, 0, 0, 0, 0}, {64, 4, 0, 0, 0, 0}, {128, 16, 0, 0, 0, 0}};
    uint64_t seed = 0xA11CE, alike = 0, crossing = 0;
    for (int it = 0; it < 4000; it++) {
        npu_burst_geom_t gd = geom(geoms[it % 4].beat, geoms[it % 4].max_beats);
        const npu_burst_geom_t *g = it & 16 ? &gd : &geoms[it % 4]; /* divisors given, or found */
        unsigned e = it & 4 ? 4 : 2;
        int64_t q = (int64_t)(g->beat / e), C = q << (test_rand(&seed) % 5), F = 1 + (int64_t)(test_rand(&seed) % 40);
        int64_t H = 1 + (int64_t)(test_rand(&seed) % 30), W = 1 + (int64_t)(test_rand(&seed) % 30);
        uint64_t base = it & 1 ? 4096 * (test_rand(&seed) % 9) : e * (test_rand(&seed) % 3000), want, beats, runs;
        npu_slice_view_t v;
        npu_bursts_t b;
        if (it % 3 < 2) { /* a tile of a 2 x H x W x C image, NHWC or NCHW (0 or 1) */
            npu_slice_box_t ext = {2, H, W, C}, org, t;
            npu_bursts_t f;
            t.n = 1 + (int64_t)(test_rand(&seed) % 2);
            t.h = 1 + (int64_t)(test_rand(&seed) % (uint64_t)H);
            t.w = 1 + (int64_t)(test_rand(&seed) % (uint64_t)W);
            t.c = test_rand(&seed) % 2 ? C : q * (1 + (int64_t)(test_rand(&seed) % (uint64_t)(C / q)));
            org.n = (int64_t)(test_rand(&seed) % (uint64_t)(3 - t.n));
            org.h = (int64_t)(test_rand(&seed) % (uint64_t)(H - t.h + 1));
            org.w = (int64_t)(test_rand(&seed) % (uint64_t)(W - t.w + 1));
            org.c = q * (int64_t)(test_rand(&seed) % (uint64_t)((C - t.c) / q + 1));
            v.ebytes = e;
            v.nd = 4;
            if (it % 3 == 0) {
                v.base = base + (uint64_t)(((org.n * H + org.h) * W + org.w) * C + org.c) * e;
                v.dim[0] = (npu_slice_dim_t){t.n, H * W * C};
                v.dim[1] = (npu_slice_dim_t){t.h, W * C};
                v.dim[2] = (npu_slice_dim_t){t.w, C};
                v.dim[3] = (npu_slice_dim_t){t.c, 1};
            } else {
                v.base = base + (uint64_t)(((org.n * C + org.c) * H + org.h) * W + org.w) * e;
                v.dim[0] = (npu_slice_dim_t){t.n, C * H * W};
                v.dim[1] = (npu_slice_dim_t){t.c, H * W};
                v.dim[2] = (npu_slice_dim_t){t.h, W};
                v.dim[3] = (npu_slice_dim_t){t.w, 1};
            }
            memset(&f, 0, sizeof f); /* the front-end builds the same view */
            cr_assert_eq(npu_slice_image_tile(g, base, e, it % 3, &ext, &org, &t, &f), 0);
            memset(&b, 0, sizeof b);
            npu_slice_view(g, &v, &b);
            cr_assert(!memcmp(&f, &b, sizeof f), "it %d: image tile vs its view", it);
        } else { /* taps x an f x ch block of [taps][F][C] */
            int64_t tf = 1 + (int64_t)(test_rand(&seed) % (uint64_t)F), tc = test_rand(&seed) % 2 ? C : q;
            v.base = base + (uint64_t)((int64_t)(test_rand(&seed) % (uint64_t)(F - tf + 1)) * C) * e;
            v.ebytes = e;
            v.nd = 3;
            v.dim[0] = (npu_slice_dim_t){1 + (int64_t)(test_rand(&seed) % 9), F * C};
            v.dim[1] = (npu_slice_dim_t){tf, C};
            v.dim[2] = (npu_slice_dim_t){tc, 1};
        }
        memset(&b, 0, sizeof b);
        cr_assert_eq(npu_slice_view(g, &v, &b), 0);
        walk_view(g, &v, &want, &beats, &runs);
        alike += all_alike(g, &v);
        crossing += !all_alike(g, &v);
        cr_assert(b.bursts == want && b.beats == beats && b.runs == runs,
                  "it %d B=%u: bursts %llu/%llu beats %llu/%llu runs %llu/%llu (counter/walk)", it, g->beat,
                  (unsigned long long)b.bursts, (unsigned long long)want, (unsigned long long)b.beats,
                  (unsigned long long)beats, (unsigned long long)b.runs, (unsigned long long)runs);
    }
    cr_assert(alike > 1000 && crossing > 500, "the views reach both paths: %llu alike, %llu not",
              (unsigned long long)alike, (unsigned long long)crossing);
    for (int it = 0; it < 20000; it++) { /* power-of-two strides, the rows far apart or close */
        npu_burst_geom_t gd = geom(geoms[it % 4].beat, geoms[it % 4].max_beats);
        const npu_burst_geom_t *g = it & 16 ? &gd : &geoms[it % 4];
        uint64_t stride = 16ull << (test_rand(&seed) % 12), rows = 2 + test_rand(&seed) % 60;
        uint64_t rb = 1 + test_rand(&seed) % stride, addr = (test_rand(&seed) % 5000) << (test_rand(&seed) % 8);
        npu_bursts_t a, w;
        if (rb == stride)
            rb--;
        memset(&a, 0, sizeof a);
        memset(&w, 0, sizeof w);
        npu_slice_xfer(g, addr, rows, rb ? rb : 1, stride, &a);
        for (uint64_t r = 0; r < rows; r++)
            npu_slice_run(g, addr + r * stride, rb ? rb : 1, &w);
        cr_assert(a.bursts == w.bursts && a.beats == w.beats && a.runs == w.runs,
                  "B=%u max=%u addr=%llu rows=%llu row_bytes=%llu stride=%llu: %llu vs %llu bursts", g->beat,
                  g->max_beats, (unsigned long long)addr, (unsigned long long)rows, (unsigned long long)rb,
                  (unsigned long long)stride, (unsigned long long)a.bursts, (unsigned long long)w.bursts);
    }
}
