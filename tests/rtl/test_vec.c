/*
 * test_vec.c - the vector unit (VEC, VSET; docs/isa.md "VEC") on the Verilated NPU: every
 * operation on random data, random shapes (rows, len not a multiple of the lanes), random
 * strides with padding words, broadcast sources (stride 0), in place (d = a), both element
 * widths, random DRAM stalls; bit-exact against the golden model (sw/ref/vec_golden.c, chosen by
 * the build's DTYPE: the same tests run at tiny / small and at tiny-bf16 / small-bf16). Each run
 * also checks that nothing outside d's words changed (the whole SPM span goes back to DRAM),
 * every counter the program implies (vec_busy, vec_rd_words, vec_wr_words included), and that
 * the C functional model (tb/npu_funcsim.c) ends with the same SPM image and counters.
 * Errors: BAD_DESC and SPM_ADDR with ERR_PC and ERR_INFO; a VEC waits for a DRAIN before it.
 */
#include <string.h>

#include "rtl_common.h"
#include "ref/bf16.h"
#include "ref/vec_golden.h"
#include "prog/prog_builder.h"
#include "prog/prog_expect.h"
#include "../fp/fp_operands.h"

#define DRAM_IN  0x100000u  /* the SPM image the program loads */
#define DRAM_OUT 0x400000u  /* where it stores the SPM back */

typedef struct vcase {
    unsigned vop, wide, rows, len, shift;
    uint32_t alpha, beta;
    unsigned sa, sb, sd;     /* extra words of row pitch; ~0u: stride 0 (broadcast) */
    int inplace;             /* d at a's words (same-width element-wise ops) */
    int specials;            /* bf16: operands and scalars from the special values */
    unsigned stall;
    const uint32_t *spec;    /* nspec > 0: a[r][e] = spec[e % nspec], b[r][e] = spec[r % nspec] */
    unsigned nspec;
} vcase_t;

/* Where the operands are: first word and stride of a, b, d, their words per row, the span. */
typedef struct vlay {
    unsigned wa, wd, ea, ed, use_b, rows_d;
    unsigned aa, ba, da, as, bs, ds, span;
} vlay_t;

static unsigned vwords(const npu_cfg_t *c, unsigned len, unsigned bits)
{
    return (len * (bits / 8) + 4u * (unsigned)c->s - 1) / (4u * (unsigned)c->s);
}

/* One element of the given width: bf16 / fp32 of moderate magnitude (sums and products stay
 * normal), or a special value; int16 any, int32 any or near the int16 range (saturation). */
static uint32_t rand_elem(const npu_cfg_t *c, unsigned bits, int specials, uint64_t *x)
{
    uint64_t r = rtl_rand(x);
    if (npu_cfg_bf16(c)) {
        if (specials && r % 3 == 0)
            return bits == 16 ? BF16_SPECIALS[(r >> 8) % BF16_NSPECIALS] : FP_SPECIALS[(r >> 8) % FP_NSPECIALS];
        uint32_t f = fp_with_exp((uint32_t)(r >> 16), 112 + (int)((r >> 8) % 32));
        return bits == 16 ? f >> 16 : f;
    }
    if (bits == 16)
        return (uint32_t)(r >> 20) & 0xFFFFu;
    return r % 2 ? (uint32_t)(r >> 24) : (uint32_t)((int32_t)(uint32_t)(r >> 32) % 300000);
}

static uint32_t get_el(const uint8_t *img, unsigned B, unsigned word, unsigned e, unsigned bits)
{
    const uint8_t *p = img + (size_t)word * B + (size_t)e * (bits / 8);
    return bits == 16 ? (uint32_t)(p[0] | p[1] << 8) : (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                        (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_el(uint8_t *img, unsigned B, unsigned word, unsigned e, unsigned bits, uint32_t v)
{
    uint8_t *p = img + (size_t)word * B + (size_t)e * (bits / 8);
    for (unsigned i = 0; i < bits / 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Lays the operands out from word 0 with random gaps; 0 when they do not fit the SPM. */
static int layout(const npu_cfg_t *c, const vcase_t *v, vlay_t *l, uint64_t *x)
{
    unsigned wa_bits, wd_bits;
    cr_assert_eq(npu_vec_widths(v->vop, (int)v->wide, &wa_bits, &wd_bits), 0);
    l->ea = wa_bits; l->ed = wd_bits;
    l->wa = vwords(c, v->len, wa_bits);
    l->wd = vwords(c, v->len, wd_bits);
    l->use_b = NPU_VOP_READS_B(v->vop);
    l->rows_d = v->vop == NPU_VOP_SUM ? 1 : v->rows;
    l->as = v->sa == ~0u ? 0 : l->wa + v->sa;
    l->bs = v->sb == ~0u ? 0 : l->wa + v->sb;
    l->ds = v->sd == ~0u ? 0 : l->wd + v->sd;
    l->aa = (unsigned)(rtl_rand(x) % 5);
    l->ba = l->aa + (v->rows - 1) * l->as + l->wa + (unsigned)(rtl_rand(x) % 5);
    l->da = l->ba + (l->use_b ? (v->rows - 1) * l->bs + l->wa : 0) + (unsigned)(rtl_rand(x) % 5);
    if (v->inplace) {
        l->da = l->aa;
        l->ds = l->as;
    }
    unsigned end_a = l->aa + (v->rows - 1) * l->as + l->wa;
    unsigned end_b = l->use_b ? l->ba + (v->rows - 1) * l->bs + l->wa : 0;
    unsigned end_d = l->da + (l->rows_d - 1) * l->ds + l->wd;
    l->span = end_a > end_b ? end_a : end_b;
    l->span = (end_d > l->span ? end_d : l->span) + (unsigned)(rtl_rand(x) % 4);
    return l->span <= (unsigned)(c->spm_banks * c->spm_bank_words);
}

/* The golden result, written into the expected SPM image: each row of d its len elements and
 * zero in the rest of its words. */
static void expect_image(const npu_cfg_t *c, const vcase_t *v, const vlay_t *l, const uint8_t *init,
                         uint8_t *want)
{
    unsigned B = 4u * (unsigned)c->s, n = v->rows * v->len;
    uint32_t *a = malloc(sizeof *a * n), *b = malloc(sizeof *b * n), *d = malloc(sizeof *d * n);
    cr_assert(a && b && d);
    for (unsigned r = 0; r < v->rows; r++)
        for (unsigned e = 0; e < v->len; e++) {
            a[r * v->len + e] = get_el(init, B, l->aa + r * l->as, e, l->ea);
            b[r * v->len + e] = l->use_b ? get_el(init, B, l->ba + r * l->bs, e, l->ea) : 0;
        }
    npu_vec_regs_t g = { v->alpha, v->beta, v->shift };
    cr_assert_eq(npu_vec_golden((unsigned)c->dtype, v->vop, (int)v->wide, &g, v->rows, v->len, a,
                                l->use_b ? b : NULL, d), 0);
    memcpy(want, init, (size_t)l->span * B);
    for (unsigned r = 0; r < l->rows_d; r++) {
        unsigned w = l->da + r * l->ds;
        memset(want + (size_t)w * B, 0, (size_t)l->wd * B);
        for (unsigned e = 0; e < v->len; e++)
            put_el(want, B, w, e, l->ed, d[r * v->len + e]);
    }
    free(a); free(b); free(d);
}

/* LOAD the span, VSET, VEC, STORE the span, with tokens between the queues. */
static void build_prog(const npu_cfg_t *c, const vcase_t *v, const vlay_t *l, npu_prog_t *p)
{
    unsigned B = 4u * (unsigned)c->s;
    npu_insn_t in;
    npu_prog_init(p);
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, l->span, DRAM_IN, 0, 1, B, B), 0);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_vset(&in, v->alpha, v->beta, v->len, v->shift), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_vec(&in, v->vop, (int)v->wide, v->rows, l->aa, l->as, l->ba, l->bs,
                             l->da, l->ds), 0);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_prog_push(p, &in), 0);
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, l->span, DRAM_OUT, 0, 1, B, B), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV);
    cr_assert_eq(npu_prog_push(p, &in), 0);
}

static const char *vname(unsigned vop) { return npu_vop_name(vop) ? npu_vop_name(vop) : "?"; }

/* The functional model on the same program and DRAM image: same SPM image out, same counters. */
static void check_model(const npu_prog_t *p, const uint8_t *init, const uint8_t *want, size_t bytes,
                        const npu_run_result_t *r, const char *tag)
{
    npu_sim_t *m = rtl_model_run(p->insn, p->n, DRAM_IN, init, bytes, tag);
    uint8_t *d = fnpu_sim_dram(m, NULL);
    for (size_t k = 0; k < bytes; k++)
        cr_assert_eq(d[DRAM_OUT + k], want[k], "%s: model SPM byte 0x%zx = 0x%02x, golden 0x%02x", tag,
                     k, d[DRAM_OUT + k], want[k]);
    static const unsigned cnt[] = {NPU_CNT_vec_busy, NPU_CNT_vec_rd_words, NPU_CNT_vec_wr_words,
                                   NPU_CNT_spm_rd_words, NPU_CNT_spm_wr_words, NPU_CNT_insn_exec};
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++) {
        uint64_t v = fnpu_sim_csr_read(m, NPU_CSR_CNT_LO + cnt[i]) |
                     (uint64_t)fnpu_sim_csr_read(m, NPU_CSR_CNT_HI + cnt[i]) << 32;
        cr_assert_eq(v, r->cnt[cnt[i]], "%s: counter %s RTL %llu, model %llu", tag,
                     npu_counter_name(cnt[i]), (unsigned long long)r->cnt[cnt[i]], (unsigned long long)v);
    }
    fnpu_sim_close(m);
}

/* Runs p (its data at DRAM_IN: init, the SPM image it loads) on a fresh model with stall % DRAM
 * stalls; the SPM image it stores at DRAM_OUT must be want, the counters what the program
 * implies, and the functional model must agree. */
static void run_and_check(const npu_prog_t *p, const uint8_t *init, const uint8_t *want, size_t bytes,
                          unsigned stall, uint64_t seed, const char *tag)
{
    npu_cfg_t c = rtl_cfg();
    unsigned B = 4u * (unsigned)c.s;
    npu_sim_t *s = rtl_open(&c, stall, 0, seed);
    memcpy(npu_sim_dram(s, NULL) + DRAM_IN, init, bytes);
    npu_run_result_t r;
    int rc = npu_run_program(&c, s, 0, p->insn, p->n, 50000000, &r);
    cr_assert_eq(rc, NPU_RUN_DONE, "%s: run rc %d err %s pc %u info %u", tag, rc,
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?", (unsigned)r.err_pc, (unsigned)r.err_info);
    const uint8_t *out = npu_sim_dram(s, NULL) + DRAM_OUT;
    for (size_t k = 0; k < bytes; k++)
        if (out[k] != want[k])
            cr_assert_fail("%s: SPM word %zu byte %zu = 0x%02x, golden 0x%02x", tag, k / B, k % B,
                           out[k], want[k]);
    npu_prog_expect_t e;
    char msg[200];
    npu_prog_expect(&c, p->insn, p->n, &e);
    cr_assert_eq(npu_check_counters(r.cnt, &e, msg, sizeof msg), 0, "%s: %s", tag, msg);
    cr_assert_eq(r.cnt[NPU_CNT_spm_rd_words], e.spm_rd_words, "%s: spm_rd_words", tag);
    cr_assert_eq(r.cnt[NPU_CNT_spm_wr_words], e.spm_wr_words, "%s: spm_wr_words", tag);
    check_model(p, init, want, bytes, &r, tag);
    npu_sim_close(s);
}

/* Runs one case and checks it against the golden model (run_and_check). Returns 0 when the
 * layout did not fit (nothing run). */
static int run_case(const vcase_t *v, uint64_t seed)
{
    npu_cfg_t c = rtl_cfg();
    unsigned B = 4u * (unsigned)c.s;
    uint64_t x = seed | 1;
    vlay_t l;
    if (!layout(&c, v, &l, &x))
        return 0;
    size_t bytes = (size_t)l.span * B;
    uint8_t *init = malloc(bytes), *want = malloc(bytes);
    cr_assert(init && want);
    for (size_t i = 0; i < bytes; i++) /* junk everywhere, then the operands */
        init[i] = (uint8_t)rtl_rand(&x);
    for (unsigned r = 0; r < v->rows; r++)
        for (unsigned e = 0; e < v->len; e++) {
            uint32_t ya = v->nspec ? v->spec[e % v->nspec] : rand_elem(&c, l.ea, v->specials, &x);
            uint32_t yb = v->nspec ? v->spec[r % v->nspec] : rand_elem(&c, l.ea, v->specials, &x);
            put_el(init, B, l.aa + r * l.as, e, l.ea, ya);
            if (l.use_b)
                put_el(init, B, l.ba + r * l.bs, e, l.ea, yb);
        }
    expect_image(&c, v, &l, init, want);
    npu_prog_t p;
    build_prog(&c, v, &l, &p);
    char tag[200];
    snprintf(tag, sizeof tag, "%s %s w%u rows=%u len=%u strides %u/%u/%u%s alpha=%08x beta=%08x shift=%u seed=%llu",
             npu_dtype_name((unsigned)c.dtype), vname(v->vop), l.ea == 32 || l.ed == 32 ? 32u : 16u,
             v->rows, v->len, l.as, l.bs, l.ds, v->inplace ? " in place" : "", (unsigned)v->alpha,
             (unsigned)v->beta, v->shift, (unsigned long long)seed);
    run_and_check(&p, init, want, bytes, v->stall, seed, tag);
    npu_prog_free(&p);
    free(init);
    free(want);
    return 1;
}

/* Random scalars for an op: bf16 moderate fp32 values (a special one now and then with
 * specials); int16 an int16 with junk in the upper half (ignored) and a shift 0..20. */
static void rand_scalars(const npu_cfg_t *c, vcase_t *v, uint64_t *x)
{
    if (npu_cfg_bf16(c)) {
        v->alpha = rand_elem(c, 32, v->specials, x);
        v->beta = rand_elem(c, 32, v->specials, x);
        v->shift = 0;
    } else {
        v->alpha = (uint32_t)rtl_rand(x);
        v->beta = (uint32_t)rtl_rand(x);
        v->shift = (unsigned)(rtl_rand(x) % 21);
    }
}

/* n random cases of one op and width: shapes up to 9 rows of up to 5 chunks (not multiples of
 * the lanes), padding words, broadcast b (or a) one time in four, in place one in five. */
static void random_cases(unsigned vop, unsigned wide, int specials, unsigned n, uint64_t seed)
{
    npu_cfg_t c = rtl_cfg();
    unsigned F = 2u * (unsigned)c.s, ran = 0;
    uint64_t x = rtl_seed(seed) * 0x9E3779B97F4A7C15ull | 1;
    int same = vop != NPU_VOP_NARROW && vop != NPU_VOP_WIDEN && vop != NPU_VOP_SUM;
    for (unsigned i = 0; i < n; i++) {
        vcase_t v;
        memset(&v, 0, sizeof v);
        v.vop = vop;
        v.wide = wide;
        v.specials = specials;
        v.rows = 1 + (unsigned)(rtl_rand(&x) % 9);
        v.len = 1 + (unsigned)(rtl_rand(&x) % (5 * F));
        v.sa = (unsigned)(rtl_rand(&x) % 3);
        v.sb = rtl_rand(&x) % 4 == 0 ? ~0u : (unsigned)(rtl_rand(&x) % 3);
        v.sd = (unsigned)(rtl_rand(&x) % 3);
        if (rtl_rand(&x) % 8 == 0)
            v.sa = ~0u;
        v.inplace = same && v.sa != ~0u && rtl_rand(&x) % 5 == 0;
        v.stall = rtl_rand(&x) % 2 ? (unsigned)(rtl_rand(&x) % 30) : 0;
        rand_scalars(&c, &v, &x);
        ran += (unsigned)run_case(&v, rtl_rand(&x));
    }
    cr_assert_eq(ran, n, "%s: %u of %u cases fit the SPM", vname(vop), ran, n);
}

#define VEC_OP_TESTS(name, vop)                                                        \
    Test(vec, name##_16) { random_cases(vop, 0, 0, 12, 1 + vop); }                    \
    Test(vec, name##_32) { random_cases(vop, 1, 0, 12, 101 + vop); }                  \
    Test(vec, name##_specials) { random_cases(vop, 0, 1, 6, 201 + vop);               \
                                 random_cases(vop, 1, 1, 6, 301 + vop); }
VEC_OP_TESTS(add, NPU_VOP_ADD)
VEC_OP_TESTS(mul, NPU_VOP_MUL)
VEC_OP_TESTS(axpby, NPU_VOP_AXPBY)
VEC_OP_TESTS(relu, NPU_VOP_RELU)
VEC_OP_TESTS(relu_bwd, NPU_VOP_RELU_BWD)
VEC_OP_TESTS(sum, NPU_VOP_SUM)

/* VMUL has no 32-bit form: 16-bit random cases, with specials, and a per-channel scale (b one
 * row broadcast over the rows, stride 0) in place on a, as the normalisation layer uses it. */
Test(vec, vmul)
{
    random_cases(NPU_VOP_VMUL, 0, 0, 24, 8);
    random_cases(NPU_VOP_VMUL, 0, 1, 12, 208);
    npu_cfg_t c = rtl_cfg();
    uint64_t x = rtl_seed(508) | 1;
    for (unsigned k = 0; k < 4; k++) {
        vcase_t v;
        memset(&v, 0, sizeof v);
        v.vop = NPU_VOP_VMUL;
        v.rows = 3 + 5 * k;
        v.len = 1 + (unsigned)(rtl_rand(&x) % (6u * (unsigned)c.s));
        v.sa = k % 2;
        v.sb = ~0u;
        v.inplace = k >= 2;
        v.stall = 10 * k;
        rand_scalars(&c, &v, &x);
        cr_assert_eq(run_case(&v, rtl_rand(&x)), 1);
    }
}

Test(vec, narrow) { random_cases(NPU_VOP_NARROW, 0, 0, 16, 7); random_cases(NPU_VOP_NARROW, 0, 1, 8, 8); }
Test(vec, widen) { random_cases(NPU_VOP_WIDEN, 0, 0, 16, 9); random_cases(NPU_VOP_WIDEN, 0, 1, 8, 10); }

/* ---- special values: every pair, every op ---------------------------------------------------- */

/* The edge values of each element type: bf16 / fp32 the special values of tests/fp (±0,
 * denormals, the normal extremes, ±Inf, quiet and signalling NaNs of both signs); int16 / int32
 * zero, ±1, the extremes and their neighbours, the int16 limits as int32. */
static const uint32_t I16_SPECIALS[] = {0, 1, 0xFFFF, 0x7FFF, 0x8000, 0x7FFE, 0x8001, 0x4000, 0xC000};
static const uint32_t I32_SPECIALS[] = {0, 1, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0x7FFF, 0x8000,
                                        0xFFFF8000u, 0xFFFF7FFFu, 0x40000000u, 0xC0000000u};

static void specials_of(const npu_cfg_t *c, unsigned bits, uint32_t *t, unsigned *n)
{
    *n = 0;
    if (npu_cfg_bf16(c) && bits == 16)
        for (unsigned i = 0; i < BF16_NSPECIALS; i++) t[(*n)++] = BF16_SPECIALS[i];
    else if (npu_cfg_bf16(c))
        for (unsigned i = 0; i < FP_NSPECIALS; i++) t[(*n)++] = FP_SPECIALS[i];
    else if (bits == 16)
        for (unsigned i = 0; i < sizeof I16_SPECIALS / 4; i++) t[(*n)++] = I16_SPECIALS[i];
    else
        for (unsigned i = 0; i < sizeof I32_SPECIALS / 4; i++) t[(*n)++] = I32_SPECIALS[i];
}

/* One op and width over every pair of edge values (a[r][e] = value e, b[r][e] = value r), with
 * four settings of the scalars: bf16 (1, 1), (-0, +Inf), (NaN, a denormal), (2^127, 2); int16
 * (1, 1, shift 0), (32767, -32768, 1), (-1, 32767, 15), (-32768, -32768, 31). */
static void specials_cross(unsigned vop, unsigned wide)
{
    static const uint32_t fs[4][2] = {{0x3F800000u, 0x3F800000u}, {0x80000000u, 0x7F800000u},
                                      {0x7FC00000u, 0x00000001u}, {0x7F000000u, 0x40000000u}};
    static const uint32_t is[4][3] = {{1, 1, 0}, {0x7FFF, 0x8000, 1}, {0xFFFF, 0x7FFF, 15},
                                      {0x8000, 0x8000, 31}};
    npu_cfg_t c = rtl_cfg();
    unsigned wa, wd, n;
    uint32_t t[64];
    cr_assert_eq(npu_vec_widths(vop, (int)wide, &wa, &wd), 0);
    specials_of(&c, wa, t, &n);
    for (unsigned k = 0; k < 4; k++) {
        vcase_t v;
        memset(&v, 0, sizeof v);
        v.vop = vop;
        v.wide = wide;
        v.rows = n;
        v.len = n;
        v.spec = t;
        v.nspec = n;
        v.alpha = npu_cfg_bf16(&c) ? fs[k][0] : is[k][0];
        v.beta = npu_cfg_bf16(&c) ? fs[k][1] : is[k][1];
        v.shift = npu_cfg_bf16(&c) ? 0 : is[k][2];
        cr_assert_eq(run_case(&v, 1000 + 10 * vop + k), 1);
    }
}

Test(vec, specials_every_pair)
{
    for (unsigned vop = 0; vop < NPU_NUM_VOPS; vop++) {
        specials_cross(vop, 0);
        if (NPU_VOP_HAS_WIDE(vop))
            specials_cross(vop, 1);
    }
}

/* ---- the pipelined engine: shapes, chained VECs, operands that overlap d ---------------------- */

/* Every op and width over the shapes that stress the pipeline: rows of one chunk and of many,
 * one row and many, len a multiple of 2S or not (a 32-bit row's last chunk of one word), in
 * place and broadcast b in turn; SUM over many rows and chunks. */
Test(vec, pipeline_shapes)
{
    npu_cfg_t c = rtl_cfg();
    unsigned S = (unsigned)c.s, F = 2 * S, n = 0;
    const unsigned rows[] = {1, 2, 13}, lens[] = {1, S + 1, F, 3 * F - 1, 6 * F + S};
    uint64_t x = rtl_seed(90) | 1;
    for (unsigned vop = 0; vop < NPU_NUM_VOPS; vop++)
        for (unsigned wide = 0; wide < 2; wide++) {
            if (wide && !NPU_VOP_HAS_WIDE(vop))
                continue;
            for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
                for (unsigned j = 0; j < sizeof lens / sizeof lens[0]; j++, n++) {
                    vcase_t v;
                    memset(&v, 0, sizeof v);
                    v.vop = vop;
                    v.wide = wide;
                    v.rows = rows[i];
                    v.len = lens[j];
                    v.sb = n % 3 == 1 ? ~0u : n % 2;
                    v.sd = n % 4 == 3;
                    v.inplace = vop != NPU_VOP_NARROW && vop != NPU_VOP_WIDEN && vop != NPU_VOP_SUM && n % 3 == 0;
                    rand_scalars(&c, &v, &x);
                    cr_assert_eq(run_case(&v, rtl_rand(&x)), 1);
                }
        }
    for (unsigned wide = 0; wide < 2; wide++) { /* SUM: many rows, many chunks */
        vcase_t v;
        memset(&v, 0, sizeof v);
        v.vop = NPU_VOP_SUM;
        v.wide = wide;
        v.rows = 100;
        v.len = 9 * F + 3;
        v.sa = 1;
        v.stall = 10;
        cr_assert_eq(run_case(&v, 91 + wide), 1);
    }
}

/* The documented order on an SPM image (docs/isa.md "VEC", order) through the golden model one
 * chunk at a time: element-wise row by row and chunk by chunk, each chunk read from the image as
 * the chunks before it left it, then its words of d written (zero past len); SUM column by
 * column (a column has no write between its rows). The reference when d overlaps a source. */
static void order_ref(const npu_cfg_t *c, const npu_vec_op_t *o, uint8_t *img)
{
    unsigned B = 4u * (unsigned)c->s, F = 2u * (unsigned)c->s, ea, ed;
    unsigned sum = o->vop == NPU_VOP_SUM, nr = sum ? o->rows : 1;
    int use_b = NPU_VOP_READS_B(o->vop);
    npu_vec_regs_t g = {o->alpha, o->beta, o->shift};
    uint32_t a[2048], b[2048], d[128];
    cr_assert_eq(npu_vec_widths(o->vop, (int)o->wide, &ea, &ed), 0);
    cr_assert(nr * F <= 2048);
    for (unsigned r = 0; r < (sum ? 1 : o->rows); r++)
        for (unsigned e0 = 0; e0 < o->len; e0 += F) {
            unsigned ne = o->len - e0 < F ? o->len - e0 : F;
            for (unsigned i = 0; i < nr; i++)
                for (unsigned e = 0; e < ne; e++) {
                    a[i * ne + e] = get_el(img, B, o->a_addr + (r + i) * o->a_stride, e0 + e, ea);
                    b[i * ne + e] = use_b ? get_el(img, B, o->b_addr + (r + i) * o->b_stride, e0 + e, ea) : 0;
                }
            cr_assert_eq(npu_vec_golden((unsigned)c->dtype, o->vop, (int)o->wide, &g, nr, ne, a,
                                        use_b ? b : NULL, d), 0);
            unsigned w = o->d_addr + (sum ? 0 : r * o->d_stride), lo = e0 * ed / 8 / B;
            unsigned hi = ((e0 + ne) * ed / 8 + B - 1) / B;
            memset(img + (size_t)(w + lo) * B, 0, (size_t)(hi - lo) * B);
            for (unsigned e = 0; e < ne; e++)
                put_el(img, B, w, e0 + e, ed, d[e]);
        }
}

/* Runs the VECs ops[0..n) (each with its VSET, no tokens between them) on an SPM image of span
 * words of random elements (of the first op's source width), against order_ref applied in turn;
 * serial[i]: whether op i must run in order (npu_vec_serial, the engine's mode). */
static void run_ops(const npu_vec_op_t *ops, const int *serial, unsigned n, unsigned span, uint64_t seed,
                    const char *tag)
{
    npu_cfg_t c = rtl_cfg();
    unsigned B = 4u * (unsigned)c.s, ea, ed;
    uint64_t x = seed | 1;
    cr_assert_eq(npu_vec_widths(ops[0].vop, (int)ops[0].wide, &ea, &ed), 0);
    cr_assert(span <= (unsigned)(c.spm_banks * c.spm_bank_words));
    uint8_t *init = malloc((size_t)span * B), *want = malloc((size_t)span * B);
    cr_assert(init && want);
    for (unsigned w = 0; w < span; w++)
        for (unsigned e = 0; e < B * 8 / ea; e++)
            put_el(init, B, w, e, ea, rand_elem(&c, ea, 0, &x));
    memcpy(want, init, (size_t)span * B);
    npu_pb_t b;
    npu_prog_t p;
    npu_insn_t in;
    npu_pb_init(&b, &c);
    npu_prog_init(&p);
    npu_pb_put(&b, &p, npu_enc_load(&in, NPU_TAG_X, 0, span, DRAM_IN, 0, 1, B, B), &in, NPU_TOK_PUSH_NEXT);
    for (unsigned i = 0; i < n; i++) {
        size_t k = npu_pb_vec(&b, &p, &ops[i], i == 0 ? NPU_TOK_POP_PREV : 0, i + 1 == n ? NPU_TOK_PUSH_NEXT : 0);
        npu_fields_t f;
        cr_assert_eq(npu_decode(&p.insn[k], &f), 0);
        cr_assert_eq(npu_vec_serial(&f, ops[i].len, (unsigned)c.s), serial[i], "%s: op %u serial %d", tag, i,
                     npu_vec_serial(&f, ops[i].len, (unsigned)c.s));
        order_ref(&c, &ops[i], want);
    }
    npu_pb_put(&b, &p, npu_enc_store(&in, NPU_TAG_Y, span, DRAM_OUT, 0, 1, B, B), &in, NPU_TOK_POP_PREV);
    char msg[120];
    cr_assert_eq(npu_pb_finish(&b, msg, sizeof msg), 0, "%s: %s", tag, msg);
    run_and_check(&p, init, want, (size_t)span * B, 0, seed, tag);
    npu_prog_free(&p);
    free(init);
    free(want);
}

/* Scalars for the overlap cases: bf16 (1.5, -0.75); int16 (3, -2) with shift 1. */
static npu_vec_op_t vop_of(unsigned vop, unsigned wide, unsigned rows, unsigned len, unsigned aa, unsigned as,
                           unsigned ba, unsigned bs, unsigned da, unsigned ds)
{
    npu_cfg_t c = rtl_cfg();
    int bf = npu_cfg_bf16(&c);
    npu_vec_op_t o = {vop, wide, rows, len, bf ? 0 : 1, bf ? 0x3FC00000u : 3, bf ? 0xBF400000u : 0xFFFEu,
                      aa, as, ba, bs, da, ds};
    return o;
}

/* d over a source at another offset or stride: the engine runs in order, and the result is the
 * documented order's (each chunk reads what the chunks before it wrote). In place (d = a or
 * d = b: same first word, stride, width, rows apart) stays pipelined; stride 0 or overlapping
 * rows in place, a NARROW onto its own source, SUM onto its own rows run in order. */
Test(vec_order, overlap)
{
    npu_cfg_t c = rtl_cfg();
    unsigned F = 2u * (unsigned)c.s;
    unsigned w16 = 4, w32 = 8; /* words per row at len 3F + 1 (16-bit), 4F - 1 (32-bit) */
    struct { npu_vec_op_t o; int ser; const char *tag; } t[] = {
        {vop_of(NPU_VOP_ADD, 0, 3, 3 * F + 1, 0, w16, 40, w16, 1, w16), 1, "ADD d = a + 1"},
        {vop_of(NPU_VOP_ADD, 0, 3, 3 * F + 1, 1, w16, 40, w16, 0, w16), 1, "ADD d = a - 1 (no later read)"},
        {vop_of(NPU_VOP_AXPBY, 1, 3, 4 * F - 1, 40, w32 + 1, 0, w32, 2, w32), 1, "AXPBY d = b + 2"},
        {vop_of(NPU_VOP_AXPBY, 1, 4, F / 2 + 1, 0, 0, 20, w32, 0, 0), 1, "AXPBY in place, stride 0"},
        {vop_of(NPU_VOP_MUL, 1, 5, 4 * F - 1, 0, 3, 0, 0, 0, 3), 1, "MUL in place, rows overlap"},
        {vop_of(NPU_VOP_MUL, 0, 3, 3, 0, 0, 0, 0, 0, 0), 1, "MUL in place, stride 0"},
        {vop_of(NPU_VOP_NARROW, 0, 3, 4 * F - 1, 0, w32, 0, 0, 3, w32), 1, "NARROW onto a + 3"},
        {vop_of(NPU_VOP_SUM, 1, 6, 4 * F - 1, 0, w32, 0, 0, 2, 0), 1, "SUM onto a + 2"},
        {vop_of(NPU_VOP_WIDEN, 0, 3, 3 * F + 1, 2, w16, 0, 0, 0, 2 * w16), 1, "WIDEN d catching up a"},
        {vop_of(NPU_VOP_RELU_BWD, 0, 6, 3 * F + 1, 50, w16, 0, w16, 0, w16), 0, "RELU_BWD d = b"},
        {vop_of(NPU_VOP_ADD, 1, 4, 4 * F - 1, 0, w32, 0, w32, 0, w32), 0, "ADD d = a = b"},
        {vop_of(NPU_VOP_AXPBY, 1, 5, 4 * F - 1, 0, w32, 50, 0, 100, 0), 0, "AXPBY d stride 0, b broadcast"},
        {vop_of(NPU_VOP_ADD, 0, 3, 3 * F + 1, 0, w16, 40, w16, 12, w16), 0, "ADD d just past a"},
        {vop_of(NPU_VOP_VMUL, 0, 3, 3 * F + 1, 40, w16, 0, w16, 1, w16), 1, "VMUL d = b + 1"},
        {vop_of(NPU_VOP_VMUL, 0, 6, 3 * F + 1, 0, w16, 50, 0, 0, w16), 0, "VMUL in place, b broadcast"},
    };
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++)
        run_ops(&t[i].o, &t[i].ser, 1, 160, 300 + i, t[i].tag);
}

/* VECs back to back with no tokens, each reading what the one before wrote (the barrier and the
 * last write before the next VEC's first read): AXPBY into X, RELU in place on X, ADD X + X into
 * Y, SUM of Y's rows; rows of one chunk and of several. */
Test(vec_order, vec_after_vec)
{
    npu_cfg_t c = rtl_cfg();
    unsigned F = 2u * (unsigned)c.s;
    const unsigned lens[] = {F, 5 * F + 3};
    for (unsigned j = 0; j < 2; j++) {
        unsigned len = lens[j], w = (len * 4 + 4 * (unsigned)c.s - 1) / (4 * (unsigned)c.s), R = 6 * w;
        npu_vec_op_t o[] = {
            vop_of(NPU_VOP_AXPBY, 1, 6, len, 0, w, R, w, 2 * R, w),
            vop_of(NPU_VOP_RELU, 1, 6, len, 2 * R, w, 0, 0, 2 * R, w),
            vop_of(NPU_VOP_ADD, 1, 6, len, 2 * R, w, 2 * R, w, 3 * R, w),
            vop_of(NPU_VOP_SUM, 1, 6, len, 3 * R, w, 0, 0, 4 * R, 0),
        };
        int ser[] = {0, 0, 0, 0};
        run_ops(o, ser, 4, 4 * R + w, 400 + j, "vec_after_vec");
    }
}

/* ---- errors ------------------------------------------------------------------------------ */

/* VSET then one VEC: the VEC (pc 1) must fail with code and ERR_INFO, and the NPU halt. */
static void expect_vec_error(unsigned len, unsigned vop, unsigned wide, unsigned rows, unsigned aa,
                             unsigned as, unsigned ba, unsigned bs, unsigned da, unsigned ds,
                             unsigned code, uint32_t info)
{
    npu_cfg_t c = rtl_cfg();
    npu_insn_t p[2];
    cr_assert_eq(npu_enc_vset(&p[0], 0x3F800000u, 0, len, 0), 0);
    cr_assert_eq(npu_enc_vec(&p[1], vop, (int)wide, rows, aa, as, ba, bs, da, ds), 0);
    npu_sim_t *s = rtl_open(&c, 0, 0, 1);
    npu_run_result_t r;
    int rc = npu_run_program(&c, s, 0, p, 2, 100000, &r);
    cr_assert_eq(rc, NPU_RUN_ERROR, "%s len=%u rows=%u: run rc %d", vname(vop), len, rows, rc);
    cr_assert_eq(r.err, code, "%s len=%u rows=%u: error %s, expected %s", vname(vop), len, rows,
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?", npu_error_name(code));
    cr_assert_eq(r.err_pc, 1u);
    cr_assert_eq(r.err_info, info, "%s: ERR_INFO %u, expected %u", vname(vop), (unsigned)r.err_info,
                 (unsigned)info);
    cr_assert_eq(r.cnt[NPU_CNT_vec_busy], 0u);
    npu_sim_close(s);
}

/* Unknown vop, zero rows, zero len (no VSET before: len is zero at start too), a width bit on
 * NARROW / WIDEN / VMUL (no 32-bit form): BAD_DESC, ERR_INFO 0. */
Test(vec_errors, bad_desc)
{
    for (unsigned vop = NPU_NUM_VOPS; vop < 16; vop++)
        expect_vec_error(4, vop, 0, 1, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    expect_vec_error(4, NPU_VOP_ADD, 0, 0, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    expect_vec_error(0, NPU_VOP_RELU, 1, 3, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    expect_vec_error(4, NPU_VOP_NARROW, 1, 1, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    expect_vec_error(4, NPU_VOP_WIDEN, 1, 1, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    expect_vec_error(4, NPU_VOP_VMUL, 1, 1, 0, 1, 8, 1, 16, 1, NPU_ERR_BAD_DESC, 0);
    npu_cfg_t c = rtl_cfg();
    npu_insn_t in;
    npu_sim_t *s = rtl_open(&c, 0, 0, 1);
    npu_run_result_t r;
    cr_assert_eq(npu_enc_vec(&in, NPU_VOP_ADD, 0, 1, 0, 1, 8, 1, 16, 1), 0);
    cr_assert_eq(npu_run_program(&c, s, 0, &in, 1, 100000, &r), NPU_RUN_ERROR, "VEC without VSET");
    cr_assert_eq(r.err, NPU_ERR_BAD_DESC);
    cr_assert_eq(r.err_pc, 0u);
    npu_sim_close(s);
}

/* An operand past the SPM: SPM_ADDR with ERR_INFO = its last word, a before b before d; b is
 * not checked for an op that does not read it, d of SUM is one row. */
Test(vec_errors, spm_addr)
{
    npu_cfg_t c = rtl_cfg();
    unsigned W = (unsigned)(c.spm_banks * c.spm_bank_words), F = 2u * (unsigned)c.s;
    unsigned len = 3 * F, w16 = 3, w32 = 6; /* words per row */
    /* a: 4 rows at stride W/4 from W/4: last word W/4 + 3W/4 + 2 */
    expect_vec_error(len, NPU_VOP_ADD, 0, 4, W / 4, W / 4, 0, 0, 8, 0, NPU_ERR_SPM_ADDR, W + w16 - 1);
    expect_vec_error(len, NPU_VOP_ADD, 1, 2, 0, 8, W - w32, 1, 64, 8, NPU_ERR_SPM_ADDR, W);
    expect_vec_error(len, NPU_VOP_RELU_BWD, 0, 1, W - w16 - 1, 0, W - 1, 0, 0, 0, NPU_ERR_SPM_ADDR, W + 1);
    /* VMUL reads b: a in range, b's broadcast row past the end, then d past the end */
    expect_vec_error(len, NPU_VOP_VMUL, 0, 3, 0, w16, W - 1, 0, 64, w16, NPU_ERR_SPM_ADDR, W + 1);
    expect_vec_error(len, NPU_VOP_VMUL, 0, 3, 0, w16, 16, 0, W - 2 * w16, w16, NPU_ERR_SPM_ADDR, W + w16 - 1);
    expect_vec_error(len, NPU_VOP_WIDEN, 0, 2, 0, 3, 0, 0, W - w32 - 3, 4, NPU_ERR_SPM_ADDR, W);
    expect_vec_error(len, NPU_VOP_AXPBY, 1, 4095, 0, 0, 0, 0, 0, 65535, NPU_ERR_SPM_ADDR,
                     4094u * 65535u + w32 - 1);
    /* in range: RELU ignores b; SUM's d is one row whatever its stride */
    npu_insn_t p[2];
    cr_assert_eq(npu_enc_vset(&p[0], 0, 0, len, 0), 0);
    cr_assert_eq(npu_enc_vec(&p[1], NPU_VOP_RELU, 0, 2, 0, 3, 0xFFFF, 0xFFFF, 8, 3), 0);
    npu_sim_t *s = rtl_open(&c, 0, 0, 1);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&c, s, 0, p, 2, 100000, &r), NPU_RUN_DONE, "RELU with b out of range");
    npu_sim_close(s);
    cr_assert_eq(npu_enc_vec(&p[1], NPU_VOP_SUM, 1, 4, 0, 6, 0, 0, W - w32, 0xFFFF), 0);
    s = rtl_open(&c, 0, 0, 1);
    cr_assert_eq(npu_run_program(&c, s, 0, p, 2, 100000, &r), NPU_RUN_DONE, "SUM with a d stride");
    npu_sim_close(s);
}

/* ---- SGD with momentum, and the ordering after a DRAIN --------------------------------------- */

/* One optimizer step on 32-bit master copies (fp32 in bf16 configs, int32 Q8 in int16 configs),
 * three AXPBYs (docs/isa.md "VEC": the rounding order): t = wd*W + dW; v = mu*v + t;
 * W = W - lr*v (in place). Golden: the same three operations on the element arrays. */
Test(vec, sgd_momentum)
{
    npu_cfg_t c = rtl_cfg();
    unsigned B = 4u * (unsigned)c.s, rows = 5, len = 3 * 2u * (unsigned)c.s + 3;
    unsigned w = vwords(&c, len, 32), R = rows * w, n = rows * len;
    int bf = npu_cfg_bf16(&c);
    /* the scalars: bf16 wd 2^-10, mu 0.875, lr 2^-4 (fp32); int16 Q8 with shift 8 */
    uint32_t wd = bf ? 0x3A800000u : 1, one = bf ? 0x3F800000u : 256, mu = bf ? 0x3F600000u : 224;
    uint32_t nlr = bf ? 0xBD800000u : (uint32_t)-16 & 0xFFFFu;
    unsigned sh = bf ? 0 : 8;
    uint64_t x = rtl_seed(77) | 1;
    uint32_t *W = malloc(4 * n), *V = malloc(4 * n), *G = malloc(4 * n), *T = malloc(4 * n);
    uint8_t *init = calloc(4 * R, B), *want = calloc(4 * R, B);
    cr_assert(W && V && G && T && init && want);
    for (unsigned i = 0; i < n; i++) {
        W[i] = rand_elem(&c, 32, 0, &x); V[i] = rand_elem(&c, 32, 0, &x); G[i] = rand_elem(&c, 32, 0, &x);
        put_el(init, B, i / len * w, i % len, 32, W[i]);
        put_el(init, B, R + i / len * w, i % len, 32, V[i]);
        put_el(init, B, 2 * R + i / len * w, i % len, 32, G[i]);
    }
    npu_vec_regs_t g1 = {wd, one, sh}, g2 = {mu, one, sh}, g3 = {one, nlr, sh};
    npu_vec_golden((unsigned)c.dtype, NPU_VOP_AXPBY, 1, &g1, rows, len, W, G, T);
    npu_vec_golden((unsigned)c.dtype, NPU_VOP_AXPBY, 1, &g2, rows, len, V, T, V);
    npu_vec_golden((unsigned)c.dtype, NPU_VOP_AXPBY, 1, &g3, rows, len, W, V, W);
    memcpy(want, init, (size_t)4 * R * B);
    for (unsigned i = 0; i < n; i++) {
        put_el(want, B, i / len * w, i % len, 32, W[i]);
        put_el(want, B, R + i / len * w, i % len, 32, V[i]);
        put_el(want, B, 3 * R + i / len * w, i % len, 32, T[i]);
    }
    npu_pb_t b;
    npu_prog_t p;
    npu_insn_t in;
    npu_pb_init(&b, &c);
    npu_prog_init(&p);
    npu_pb_put(&b, &p, npu_enc_load(&in, NPU_TAG_W, 0, 4 * R, DRAM_IN, 0, 1, B, B), &in, NPU_TOK_PUSH_NEXT);
    npu_vec_op_t t = {NPU_VOP_AXPBY, 1, rows, len, sh, wd, one, 0, w, 2 * R, w, 3 * R, w};
    npu_pb_vec(&b, &p, &t, NPU_TOK_POP_PREV, 0);
    npu_vec_op_t v = {NPU_VOP_AXPBY, 1, rows, len, sh, mu, one, R, w, 3 * R, w, R, w};
    npu_pb_vec(&b, &p, &v, 0, 0);
    npu_vec_op_t u = {NPU_VOP_AXPBY, 1, rows, len, sh, one, nlr, 0, w, R, w, 0, w};
    npu_pb_vec(&b, &p, &u, 0, NPU_TOK_PUSH_NEXT);
    npu_pb_put(&b, &p, npu_enc_store(&in, NPU_TAG_W, 4 * R, DRAM_OUT, 0, 1, B, B), &in, NPU_TOK_POP_PREV);
    char msg[120];
    cr_assert_eq(npu_pb_finish(&b, msg, sizeof msg), 0, "%s", msg);
    run_and_check(&p, init, want, (size_t)4 * R * B, 10, 77, "sgd_momentum");
    npu_prog_free(&p);
    free(W); free(V); free(G); free(T); free(init); free(want);
}

/* A VEC right behind a DRAIN, no tokens between them, reads the drained results: it issues
 * only when the drain (and every earlier EXEC unit) is idle. The wave multiplies A by the
 * identity (1 as the element type has it), the drain writes A as 32-bit values, NARROW makes
 * them 16-bit again: the stored rows must be A. */
Test(vec_order, after_drain)
{
    npu_cfg_t c = rtl_cfg();
    unsigned B = 4u * (unsigned)c.s, F = 2u * (unsigned)c.s, M = 3 * F + 1;
    uint16_t one = npu_cfg_bf16(&c) ? 0x3F80 : 1;
    uint64_t x = rtl_seed(78) | 1;
    uint8_t *init = calloc(M + F, B), *want = calloc(2 * M, B);
    cr_assert(init && want);
    for (unsigned i = 0; i < M; i++) /* A: M rows of F elements at SPM 0; I at SPM M */
        for (unsigned e = 0; e < F; e++) {
            uint32_t a = rand_elem(&c, 16, 0, &x);
            put_el(init, B, i, e, 16, a);
            put_el(want, B, i, e, 16, a);
        }
    for (unsigned e = 0; e < F; e++)
        put_el(init, B, M + e, e, 16, one);
    npu_pb_t b;
    npu_prog_t p;
    npu_insn_t in;
    npu_pb_init(&b, &c);
    npu_prog_init(&p);
    unsigned C = 2 * M; /* the drained int32 / fp32 rows: two words each */
    npu_pb_put(&b, &p, npu_enc_load(&in, NPU_TAG_X, 0, M + F, DRAM_IN, 0, 1, B, B), &in, NPU_TOK_PUSH_NEXT);
    npu_pb_put(&b, &p, npu_enc_ldw(&in, 0, NPU_MODE_FW, M, 1, F, F), &in, NPU_TOK_POP_PREV);
    npu_pb_put(&b, &p, npu_enc_wave(&in, 0, NPU_MODE_FW, 0, M, 0, 1, F, F, 0), &in, 0);
    npu_pb_put(&b, &p, npu_enc_drain(&in, M, 0, C, 2), &in, 0);
    npu_vec_op_t v = {NPU_VOP_NARROW, 0, M, F, 0, 0, 0, C, 2, 0, 0, 4 * M, 1};
    npu_pb_vec(&b, &p, &v, 0, NPU_TOK_PUSH_NEXT);
    npu_pb_put(&b, &p, npu_enc_store(&in, NPU_TAG_Y, M, DRAM_OUT, 4 * M, 1, B, B), &in, NPU_TOK_POP_PREV);
    char msg[120];
    cr_assert_eq(npu_pb_finish(&b, msg, sizeof msg), 0, "%s", msg);
    npu_sim_t *s = rtl_open(&c, 20, 0, 78);
    memcpy(npu_sim_dram(s, NULL) + DRAM_IN, init, (size_t)(M + F) * B);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(&c, s, 0, p.insn, p.n, 10000000, &r), NPU_RUN_DONE, "err %s",
                 npu_error_name(r.err) ? npu_error_name(r.err) : "?");
    const uint8_t *out = npu_sim_dram(s, NULL) + DRAM_OUT;
    for (size_t k = 0; k < (size_t)M * B; k++)
        cr_assert_eq(out[k], want[k], "row %zu byte %zu: 0x%02x, A has 0x%02x", k / B, k % B, out[k], want[k]);
    npu_sim_close(s);
    npu_prog_free(&p);
    free(init);
    free(want);
}
