/*
 * test_vec.c - the vector unit's host side: VEC / VSET encoding (field ranges, round trip,
 * disassembly), the golden model's element rules on hand-made cases (both dtypes), and the
 * functional model (tb/npu_funcsim.c) against the golden model on random data, every op, both
 * widths, both dtypes, S = 2 and 8, with the expected counters.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "hw/isa.h"
#include "npu_funcsim.h"
#include "prog/prog.h"
#include "prog/prog_expect.h"
#include "ref/vec_golden.h"
#include "run/runtime.h"
#include "test_cfgs.h"

Test(vec_isa, encode_ranges_and_round_trip)
{
    npu_insn_t in;
    npu_fields_t f;
    cr_assert_eq(npu_enc_vec(&in, 16, 0, 1, 0, 0, 0, 0, 0, 0), -1, "vop has 4 bits");
    cr_assert_eq(npu_enc_vec(&in, 0, 0, 4096, 0, 0, 0, 0, 0, 0), -1, "rows has 12 bits");
    cr_assert_eq(npu_enc_vec(&in, 0, 0, 1, 65536, 0, 0, 0, 0, 0), -1, "a_addr has 16 bits");
    cr_assert_eq(npu_enc_vset(&in, 0, 0, 65536, 0), -1, "len has 16 bits");
    cr_assert_eq(npu_enc_vset(&in, 0, 0, 1, 32), -1, "shift has 5 bits");
    cr_assert_eq(npu_enc_vec(&in, NPU_VOP_AXPBY, 1, 4095, 1, 2, 3, 4, 5, 65535), 0);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert(f.op == NPU_OP_VEC && f.vop == NPU_VOP_AXPBY && f.wide == 1 && f.rows == 4095);
    cr_assert(f.a_addr == 1 && f.a_stride == 2 && f.b_addr == 3 && f.b_stride == 4);
    cr_assert(f.d_addr == 5 && f.d_stride == 65535);
    char buf[160];
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "VEC AXPBY w32 rows=4095 a=0x0001+2*r b=0x0003+4*r d=0x0005+65535*r");
    cr_assert_eq(npu_enc_vset(&in, 0xBF800000u, 7, 40, 31), 0);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert(f.op == NPU_OP_VSET && f.alpha == 0xBF800000u && f.beta == 7 && f.len == 40 && f.shift == 31);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "VSET len=40 alpha=0xbf800000 beta=0x00000007 shift=31");
    cr_assert_eq(npu_op_queue(NPU_OP_VEC), 'E');
    cr_assert_eq(npu_op_queue(NPU_OP_VSET), 'E');
    cr_assert_str_eq(npu_vop_name(NPU_VOP_RELU_BWD), "RELU_BWD");
    cr_assert_str_eq(npu_vop_name(NPU_VOP_VMUL), "VMUL");
    cr_assert_null(npu_vop_name(NPU_NUM_VOPS));
    cr_assert_eq(npu_enc_vec(&in, NPU_VOP_VMUL, 0, 7, 0x10, 3, 0x80, 0, 0x10, 3), 0);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "VEC VMUL w16 rows=7 a=0x0010+3*r b=0x0080+0*r d=0x0010+3*r");
}

/* The table's columns (npu_defs.h NPU_VOPS): which ops read b and which have no 32-bit form. */
Test(vec_isa, vop_table)
{
    static const unsigned reads_b[] = {NPU_VOP_ADD, NPU_VOP_AXPBY, NPU_VOP_RELU_BWD, NPU_VOP_VMUL};
    static const unsigned no_wide[] = {NPU_VOP_NARROW, NPU_VOP_WIDEN, NPU_VOP_VMUL};
    unsigned nb = 0, nw = 0, wa, wd;
    for (unsigned v = 0; v < 16; v++) {
        nb += NPU_VOP_READS_B(v);
        nw += v < NPU_NUM_VOPS && !NPU_VOP_HAS_WIDE(v);
    }
    cr_assert_eq(nb, 4u);
    cr_assert_eq(nw, 3u);
    for (unsigned i = 0; i < 4; i++)
        cr_assert(NPU_VOP_READS_B(reads_b[i]), "%s reads b", npu_vop_name(reads_b[i]));
    for (unsigned i = 0; i < 3; i++) {
        cr_assert(!NPU_VOP_HAS_WIDE(no_wide[i]), "%s has no 32-bit form", npu_vop_name(no_wide[i]));
        cr_assert_eq(npu_vec_widths(no_wide[i], 1, &wa, &wd), -1);
    }
    cr_assert_eq(npu_vec_widths(NPU_VOP_VMUL, 0, &wa, &wd), 0);
    cr_assert(wa == 16 && wd == 16);
}

/* One element through the golden model. */
static uint32_t g1(unsigned dtype, unsigned vop, int wide, uint32_t al, uint32_t be, unsigned sh,
                   uint32_t a, uint32_t b)
{
    npu_vec_regs_t g = { al, be, sh };
    uint32_t d;
    cr_assert_eq(npu_vec_golden(dtype, vop, wide, &g, 1, 1, &a, &b, &d), 0);
    return d;
}

Test(vec_golden, int16_rules)
{
    unsigned I = NPU_DTYPE_INT16;
    cr_assert_eq(g1(I, NPU_VOP_ADD, 0, 0, 0, 0, 0x7FFF, 1), 0x7FFFu, "16-bit results saturate");
    cr_assert_eq(g1(I, NPU_VOP_ADD, 1, 0, 0, 0, 0x7FFFFFFF, 1), 0x80000000u, "32-bit ones wrap");
    cr_assert_eq(g1(I, NPU_VOP_NARROW, 0, 0, 0, 1, (uint32_t)-3, 0), 0xFFFFu, "-1.5 rounds half up to -1");
    cr_assert_eq(g1(I, NPU_VOP_NARROW, 0, 0, 0, 1, 3, 0), 2u, "1.5 rounds to 2");
    cr_assert_eq(g1(I, NPU_VOP_NARROW, 0, 0, 0, 4, 0x7FFFFFFF, 0), 0x7FFFu, "no wrap in the rounding add");
    cr_assert_eq(g1(I, NPU_VOP_NARROW, 0, 0, 0, 0, 0xFFFF0000u, 0), 0x8000u, "saturates below");
    cr_assert_eq(g1(I, NPU_VOP_MUL, 1, 0xABCD0003u, 0, 0, 5, 0), 15u, "alpha is its low 16 bits");
    cr_assert_eq(g1(I, NPU_VOP_AXPBY, 0, 0x7FFF, 0x7FFF, 15, 0x7FFF, 0x7FFF), 0x7FFFu);
    cr_assert_eq(g1(I, NPU_VOP_AXPBY, 1, 0xFFFF, 2, 1, 10, 3), (uint32_t)-2, "(-10 + 6) / 2");
    cr_assert_eq(g1(I, NPU_VOP_RELU, 0, 0, 0, 0, 0x8000, 0), 0u);
    cr_assert_eq(g1(I, NPU_VOP_RELU_BWD, 0, 0, 0, 0, 0x1234, 0), 0u, "b = 0 masks");
    cr_assert_eq(g1(I, NPU_VOP_RELU_BWD, 0, 0, 0, 0, 0x1234, 1), 0x1234u);
    cr_assert_eq(g1(I, NPU_VOP_WIDEN, 0, 0, 0, 0, 0xFFFE, 0), 0xFFFFFFFEu, "sign-extended");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 5, 0, 0, 0xFFFD, 7), (uint32_t)-21 & 0xFFFFu, "a * b, not alpha");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 2, 3, 3), 2u, "9 / 4 rounds to 2");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 1, 0xFFFD, 1), 0xFFFFu, "-1.5 rounds half up to -1");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 0, 0x8000, 0x8000), 0x7FFFu, "2^30 saturates");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 15, 0x8000, 0x8000), 0x7FFFu, "2^15 saturates");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 16, 0x8000, 0x8000), 0x4000u, "2^30 / 2^16");
    cr_assert_eq(g1(I, NPU_VOP_VMUL, 0, 0, 0, 31, 0x7FFF, 0x7FFF), 0u, "(2^30 - 2^16 + 1) / 2^31 rounds to 0");
}

Test(vec_golden, bf16_rules)
{
    unsigned B = NPU_DTYPE_BF16;
    cr_assert_eq(g1(B, NPU_VOP_ADD, 0, 0, 0, 0, 0x3F80, 0x3F80), 0x4000u, "1 + 1");
    cr_assert_eq(g1(B, NPU_VOP_ADD, 0, 0, 0, 0, 0x3F80, 0x3B80), 0x3F80u, "1 + 2^-8: a tie, to even");
    cr_assert_eq(g1(B, NPU_VOP_ADD, 0, 0, 0, 0, 0x3F81, 0x3B80), 0x3F82u, "odd: the tie rounds up");
    cr_assert_eq(g1(B, NPU_VOP_ADD, 1, 0, 0, 0, 0x3F800000, 0x33800000), 0x3F800000u, "fp32: 1 + 2^-24");
    cr_assert_eq(g1(B, NPU_VOP_MUL, 0, 0x40000000, 0, 0, 0x3FC0, 0), 0x4040u, "2 * 1.5");
    cr_assert_eq(g1(B, NPU_VOP_MUL, 1, 0x00000000, 0, 0, 0x7F800000, 0), 0x7FC00000u, "0 * Inf");
    cr_assert_eq(g1(B, NPU_VOP_RELU, 0, 0, 0, 0, 0x8000, 0), 0u, "-0 -> +0");
    cr_assert_eq(g1(B, NPU_VOP_RELU, 0, 0, 0, 0, 0x0001, 0), 0u, "a denormal reads as 0");
    cr_assert_eq(g1(B, NPU_VOP_RELU, 0, 0, 0, 0, 0xFFC1, 0), 0x7FC0u, "NaN stays NaN, canonical");
    cr_assert_eq(g1(B, NPU_VOP_RELU, 1, 0, 0, 0, 0x7F800000, 0), 0x7F800000u, "+Inf");
    cr_assert_eq(g1(B, NPU_VOP_RELU_BWD, 1, 0, 0, 0, 0x3F800000, 0x80000000), 0u, "b = -0 masks");
    cr_assert_eq(g1(B, NPU_VOP_RELU_BWD, 1, 0, 0, 0, 0x00000001, 0x3F800000), 0u, "a denormal passes as 0");
    cr_assert_eq(g1(B, NPU_VOP_RELU_BWD, 0, 0, 0, 0, 0xC000, 0x7FC0), 0u, "b NaN masks");
    cr_assert_eq(g1(B, NPU_VOP_NARROW, 0, 0, 0, 0, 0x3F808000, 0), 0x3F80u, "RNE tie to even");
    cr_assert_eq(g1(B, NPU_VOP_WIDEN, 0, 0, 0, 0, 0x7F81, 0), 0x7FC00000u, "sNaN -> canonical");
    cr_assert_eq(g1(B, NPU_VOP_VMUL, 0, 0x40000000, 0, 0, 0x3FC0, 0x4040), 0x4090u, "1.5 * 3, not alpha");
    cr_assert_eq(g1(B, NPU_VOP_VMUL, 0, 0, 0, 0, 0x3F81, 0x3F81), 0x3F82u, "(1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 rounds down");
    cr_assert_eq(g1(B, NPU_VOP_VMUL, 0, 0, 0, 0, 0x0000, 0xFF80), 0x7FC0u, "0 * -Inf = NaN");
    cr_assert_eq(g1(B, NPU_VOP_VMUL, 0, 0, 0, 0, 0x0080, 0x3F00), 0x0000u, "2^-126 * 0.5 flushes to +0");
    cr_assert_eq(g1(B, NPU_VOP_VMUL, 0, 0, 0, 0, 0x7F00, 0x4000), 0x7F80u, "2^127 * 2 overflows to Inf");
    /* SUM in row order from +0: (1 + 2^-24) + 2^-24 = 1 (each add rounds), (-0) -> +0 */
    uint32_t a[3] = {0x3F800000, 0x33800000, 0x33800000}, d;
    npu_vec_regs_t g = {0, 0, 0};
    cr_assert_eq(npu_vec_golden(B, NPU_VOP_SUM, 1, &g, 3, 1, a, NULL, &d), 0);
    cr_assert_eq(d, 0x3F800000u);
    a[0] = 0x80000000u;
    cr_assert_eq(npu_vec_golden(B, NPU_VOP_SUM, 1, &g, 1, 1, a, NULL, &d), 0);
    cr_assert_eq(d, 0u, "+0 + -0 = +0");
}

/* ---- the functional model against the golden model --------------------------------------- */

static uint32_t rnd_el(unsigned dtype, unsigned bits, uint64_t *x)
{
    uint64_t r = test_rand(x);
    if (dtype == NPU_DTYPE_BF16) {
        uint32_t f = ((uint32_t)(r >> 16) & 0x807FFFFFu) | (uint32_t)(110 + (r >> 8) % 36) << 23;
        return bits == 16 ? f >> 16 : f;
    }
    return bits == 16 ? (uint32_t)(r >> 24) & 0xFFFFu : (uint32_t)(r >> 24);
}

/* rows x len of a (and b) at dense rows from SPM word 0 / 1024 / 2048 through one program
 * LOAD, VSET, VEC, STORE on the functional model; d must equal the golden result. */
static void fsim_case(const npu_cfg_t *c, unsigned vop, unsigned wide, unsigned rows, unsigned len,
                      uint64_t *x)
{
    unsigned B = 4u * (unsigned)c->s, wa_b, wd_b;
    cr_assert_eq(npu_vec_widths(vop, (int)wide, &wa_b, &wd_b), 0);
    unsigned wa = (len * wa_b / 8 + B - 1) / B, wd = (len * wd_b / 8 + B - 1) / B, rd = vop == NPU_VOP_SUM ? 1 : rows;
    uint32_t a[64 * 64], b[64 * 64], want[64 * 64];
    npu_vec_regs_t g = {rnd_el(c->dtype, 32, x), rnd_el(c->dtype, 32, x), (unsigned)(test_rand(x) % 20)};
    npu_dram_timing_t t = {(double)c->dram_bw, 10, 2, 0, 1};
    npu_funcsim_config(c);
    npu_sim_t *s = npu_sim_open(&t);
    cr_assert_not_null(s);
    uint8_t *dram = npu_sim_dram(s, NULL);
    for (unsigned i = 0; i < rows * len; i++) {
        a[i] = rnd_el(c->dtype, wa_b, x);
        b[i] = rnd_el(c->dtype, wa_b, x);
        for (unsigned k = 0; k < wa_b / 8; k++) { /* a at DRAM 0x10000, b at 0x20000, dense rows */
            dram[0x10000 + (size_t)(i / len) * wa * B + (i % len) * (wa_b / 8) + k] = (uint8_t)(a[i] >> 8 * k);
            dram[0x20000 + (size_t)(i / len) * wa * B + (i % len) * (wa_b / 8) + k] = (uint8_t)(b[i] >> 8 * k);
        }
    }
    cr_assert_eq(npu_vec_golden((unsigned)c->dtype, vop, (int)wide, &g, rows, len, a, b, want), 0);
    npu_prog_t p;
    npu_insn_t in;
    npu_prog_init(&p);
    npu_enc_load(&in, NPU_TAG_X, 0, rows * wa, 0x10000, 0, 1, B, B); cr_assert_eq(npu_prog_push(&p, &in), 0);
    npu_enc_load(&in, NPU_TAG_X, 0, rows * wa, 0x20000, 1024, 1, B, B);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT); cr_assert_eq(npu_prog_push(&p, &in), 0);
    npu_enc_vset(&in, g.alpha, g.beta, len, g.shift);
    npu_insn_tok(&in, NPU_TOK_POP_PREV); cr_assert_eq(npu_prog_push(&p, &in), 0);
    cr_assert_eq(npu_enc_vec(&in, vop, (int)wide, rows, 0, wa, 1024, wa, 2048, wd), 0);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT); cr_assert_eq(npu_prog_push(&p, &in), 0);
    npu_enc_store(&in, NPU_TAG_Y, rd * wd, 0x40000, 2048, 1, B, B);
    npu_insn_tok(&in, NPU_TOK_POP_PREV); cr_assert_eq(npu_prog_push(&p, &in), 0);
    npu_run_result_t r;
    cr_assert_eq(npu_run_program(c, s, 0, p.insn, p.n, 10000000, &r), NPU_RUN_DONE, "%s: err %u pc %u info %u",
                 npu_vop_name(vop), r.err, (unsigned)r.err_pc, (unsigned)r.err_info);
    for (unsigned i = 0; i < rd * len; i++) {
        const uint8_t *q = dram + 0x40000 + (size_t)(i / len) * wd * B + (i % len) * (wd_b / 8);
        uint32_t got = wd_b == 16 ? (uint32_t)(q[0] | q[1] << 8)
                                  : (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
        cr_assert_eq(got, want[i], "%s %s S=%d w%u rows=%u len=%u: element %u = %08x, golden %08x",
                     npu_dtype_name((unsigned)c->dtype), npu_vop_name(vop), c->s, wd_b, rows, len, i, got, want[i]);
    }
    npu_prog_expect_t e;
    char msg[160];
    npu_prog_expect(c, p.insn, p.n, &e);
    cr_assert_eq(npu_check_counters(r.cnt, &e, msg, sizeof msg), 0, "%s", msg);
    npu_prog_free(&p);
    npu_sim_close(s);
}

Test(vec_fsim, matches_golden)
{
    uint64_t x = 0x5DEECE66Dull;
    for (int dt = 0; dt < 2; dt++)
        for (int si = 0; si < 2; si++) {
            npu_cfg_t c = test_cfg(si ? 8 : 2);
            c.dtype = dt ? NPU_DTYPE_BF16 : NPU_DTYPE_INT16;
            for (unsigned vop = 0; vop < NPU_NUM_VOPS; vop++)
                for (unsigned wide = 0; wide < 2; wide++) {
                    if (wide && !NPU_VOP_HAS_WIDE(vop))
                        continue; /* NARROW, WIDEN, VMUL: no 32-bit form */
                    for (int k = 0; k < 3; k++)
                        fsim_case(&c, vop, wide, 1 + (unsigned)(test_rand(&x) % 8),
                                  1 + (unsigned)(test_rand(&x) % 60), &x);
                }
        }
}

/* npu_vec_busy's closed forms against the unit's schedule stepped chunk by chunk (docs/datapath.md
 * "Vector unit"): chunk j's reads R, writes W (SUM: a column's last row only); pipelined, its last
 * read L = max(L + R, L + W of the one before) after the previous one's; in order, its first read
 * the cycle after the previous one's writes (or its stage 2, without writes); busy until
 * L + 3 + W of the last. Plus npu_vec_serial on hand-made overlaps, and the 64 x 128 wide AXPBY
 * (S = 8: 4608 cycles in order, 2053 pipelined). */
static uint64_t busy_stepped(const npu_fields_t *f, unsigned len, unsigned S, int ser)
{
    unsigned v = f->vop, sum = v == NPU_VOP_SUM, F = 2 * S, nch = (len + F - 1) / F, wa_, wd_;
    unsigned nb = NPU_VOP_READS_B(v);
    cr_assert_eq(npu_vec_widths(v, (int)f->wide, &wa_, &wd_), 0);
    unsigned ea = wa_ / 16, ed = wd_ / 16; /* words per full chunk */
    unsigned wa = (len * wa_ / 8 + 4 * S - 1) / (4 * S), wd = (len * wd_ / 8 + 4 * S - 1) / (4 * S);
    int64_t L = -1, end = 0, Wp = 0;
    int first = 1;
    for (unsigned o = 0; o < (sum ? nch : f->rows); o++)
        for (unsigned i = 0; i < (sum ? f->rows : nch); i++) {
            unsigned c = sum ? o : i, last = c + 1 == nch;
            int64_t R = (last ? wa - (nch - 1) * ea : ea) * (sum ? 1 : 1 + nb);
            int64_t W = sum && i + 1 < f->rows ? 0 : last ? wd - (nch - 1) * ed : ed;
            if (first)
                L = R - 1;
            else if (ser)
                L = end + R; /* end: the previous chunk's last cycle */
            else
                L = L + (R > Wp ? R : Wp);
            end = L + 3 + W;
            Wp = W;
            first = 0;
        }
    return (uint64_t)end + 1;
}

Test(vec_fsim, busy_formula)
{
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (unsigned S = 2; S <= 8; S *= 2)
        for (unsigned vop = 0; vop < NPU_NUM_VOPS; vop++)
            for (unsigned wide = 0; wide < 2; wide++) {
                if (wide && !NPU_VOP_HAS_WIDE(vop))
                    continue;
                for (int k = 0; k < 40; k++) {
                    npu_fields_t f;
                    memset(&f, 0, sizeof f);
                    f.op = NPU_OP_VEC;
                    f.vop = vop;
                    f.wide = wide;
                    f.rows = 1 + (unsigned)(test_rand(&x) % 20);
                    unsigned len = 1 + (unsigned)(test_rand(&x) % (12 * S));
                    f.a_addr = 0; f.a_stride = 1000; f.b_addr = 30000; f.b_stride = 1000;
                    f.d_addr = 60000; f.d_stride = 1;
                    int ser = k % 2;
                    if (ser) /* d over a at another stride: in order */
                        f.d_addr = 0;
                    cr_assert_eq(npu_vec_serial(&f, len, S), ser);
                    cr_assert_eq(npu_vec_busy(&f, len, S), busy_stepped(&f, len, S, ser),
                                 "vop %u wide %u rows %u len %u S %u serial %d: %llu, stepped %llu", vop, wide,
                                 f.rows, len, S, ser, (unsigned long long)npu_vec_busy(&f, len, S),
                                 (unsigned long long)busy_stepped(&f, len, S, ser));
                }
            }
    /* the overlap rule: in place (same first word, stride, width, rows apart) is not an overlap */
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC; f.vop = NPU_VOP_AXPBY; f.wide = 1; f.rows = 64;
    f.a_addr = 0; f.a_stride = 16; f.b_addr = 1024; f.b_stride = 16; f.d_addr = 0; f.d_stride = 16;
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 0);
    cr_assert_eq(npu_vec_busy(&f, 128, 8), 2053u);
    f.d_stride = 15; /* rows apart no more: d differs from a */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 1);
    cr_assert_eq(npu_vec_busy(&f, 128, 8), 4608u);
    f.d_stride = 16; f.a_stride = 0; f.d_stride = 0; /* stride 0 in place: rows rewrite one row */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 1);
    f.rows = 1; /* ... unless there is one row */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 0);
    f.a_stride = 16; f.d_stride = 16; f.rows = 64; f.d_addr = 1024; /* d = b in place */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 0);
    f.vop = NPU_VOP_RELU; f.b_addr = 0; /* b not read: its overlap does not count */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 0);
    f.vop = NPU_VOP_SUM; f.d_addr = 1023; /* SUM's one row of d ends in a's row 64? no: a ends at 1023 */
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 1);
    f.d_addr = 1024;
    cr_assert_eq(npu_vec_serial(&f, 128, 8), 0);
}
