/* test_isa.c - exact encodings, field round-trips, range rejection and disassembly text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hw/isa.h"
#include "prog/prog.h"
#include "test_cfgs.h"

static void words(const npu_insn_t *in, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3)
{
    cr_assert_eq(in->w[0], w0, "w0 %08x != %08x", (unsigned)in->w[0], (unsigned)w0);
    cr_assert_eq(in->w[1], w1, "w1 %08x != %08x", (unsigned)in->w[1], (unsigned)w1);
    cr_assert_eq(in->w[2], w2, "w2 %08x != %08x", (unsigned)in->w[2], (unsigned)w2);
    cr_assert_eq(in->w[3], w3, "w3 %08x != %08x", (unsigned)in->w[3], (unsigned)w3);
}

static void dis(const npu_insn_t *in, const char *want)
{
    char buf[200];
    int n = npu_disasm(in, buf, sizeof buf);
    cr_assert_str_eq(buf, want);
    cr_assert_eq(n, (int)strlen(want));
}

Test(isa, names_from_xmacros)
{
    cr_assert_str_eq(npu_op_name(0x01), "LOAD");
    cr_assert_str_eq(npu_op_name(0x04), "WAVE");
    cr_assert_str_eq(npu_op_name(0x08), "SYNC_S");
    cr_assert_null(npu_op_name(0x00));
    cr_assert_str_eq(npu_op_name(0x09), "FILL");
    cr_assert_str_eq(npu_op_name(0x0A), "VEC");
    cr_assert_str_eq(npu_op_name(0x0B), "VSET");
    cr_assert_null(npu_op_name(0x0C));
    cr_assert_str_eq(npu_tag_name(1), "X");
    cr_assert_str_eq(npu_tag_name(7), "PARTIAL");
    cr_assert_null(npu_tag_name(8));
    cr_assert_str_eq(npu_mode_name(0), "FW");
    cr_assert_str_eq(npu_mode_name(3), "ISW");
    cr_assert_eq(npu_op_queue(NPU_OP_LOAD), 'L');
    cr_assert_eq(npu_op_queue(NPU_OP_DRAIN), 'E');
    cr_assert_eq(npu_op_queue(NPU_OP_SYNC_S), 'S');
    cr_assert_eq(npu_op_queue(0x42), 0);
    cr_assert_eq(NPU_TAG_X, 1, "npu_defs.h: tag X must be NPU_TAG_X");
    cr_assert_eq(NPU_TAG_W, 2);
    cr_assert_eq(NPU_TAG_Y, 3);
}

Test(isa, load_exact)
{
    npu_insn_t in;
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_W, 1, 20, 0x1000, 0x400, 4, 64, 2), 0);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT);
    words(&in, 0x0014A801u, 0x00001000u, 0x00040400u, 0x00020040u);
    dis(&in, "LOAD W trans rows=20 bytes=64 dram=0x001000+2*r spm=0x0400+4*r [push_next]");
    /* every field at its maximum: 14-bit rows, the pitch 0xFFFF << 3 (stride_shift 3) */
    cr_assert_eq(npu_enc_load(&in, NPU_TAG_X, 0, 16383, 0xFFFFFFFFu, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFu << 3), 0);
    words(&in, 0xFFFF1001u, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
    dis(&in, "LOAD X rows=16383 bytes=65535 dram=0xffffffff+524280*r spm=0xffff+65535*r");
}

Test(isa, store_exact)
{
    npu_insn_t in;
    cr_assert_eq(npu_enc_store(&in, NPU_TAG_Y, 1, 0xFFFFE0, 0x801, 0, 4, 65535), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
    words(&in, 0x00013502u, 0x00FFFFE0u, 0x00000801u, 0xFFFF0004u);
    dis(&in, "STORE Y rows=1 bytes=4 spm=0x0801+0*r dram=0xffffe0+65535*r [pop_prev push_prev]");
}

Test(isa, ldw_wave_drain_sync_exact)
{
    npu_insn_t in;
    cr_assert_eq(npu_enc_ldw(&in, 0, NPU_MODE_ISW, 0x123, 7, 5, 9), 0);
    words(&in, 0x00006003u, 0x00070123u, 0x00000905u, 0);
    dis(&in, "LDW ISW k=5 n=9 spm=0x0123+7*r bank=0");

    cr_assert_eq(npu_enc_wave(&in, 1, NPU_MODE_FW, 1, 64, 0, 1, 16, 16, 64), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    words(&in, 0x00409904u, 0x00010000u, 0x00401010u, 0);
    dis(&in, "WAVE FW m=64 k=16 n=16 spm=0x0000+1*i bank=1 acc obuf=64 [pop_prev push_next]");
    cr_assert_eq(npu_enc_wave(&in, 0, NPU_MODE_VSW, 0, 3, 0x10, 2, 1, 2, 511), 0);
    words(&in, 0x00032004u, 0x00020010u, 0x01FF0201u, 0);
    dis(&in, "WAVE VSW m=3 k=1 n=2 spm=0x0010+2*i bank=0 obuf=511");

    cr_assert_eq(npu_enc_drain(&in, 33, 300, 0x800, 8), 0);
    npu_insn_tok(&in, NPU_TOK_POP_NEXT);
    words(&in, 0x00210205u, 0x0000012Cu, 0x00080800u, 0);
    dis(&in, "DRAIN rows=33 obuf=300 spm=0x0800+8*r [pop_next]");

    cr_assert_eq(npu_enc_sync(&in, NPU_OP_SYNC_E), 0);
    npu_insn_tok(&in, NPU_TOK_POP_PREV);
    words(&in, 0x00000107u, 0, 0, 0);
    dis(&in, "SYNC_E [pop_prev]");
    cr_assert_eq(npu_enc_sync(&in, NPU_OP_WAVE), -1);
}

Test(isa, token_setters)
{
    npu_insn_t in;
    npu_enc_sync(&in, NPU_OP_SYNC_L);
    npu_insn_tok(&in, NPU_TOK_POP_NEXT);
    npu_insn_tok(&in, NPU_TOK_PUSH_NEXT | 0xFFFF0000u); /* bits outside the token field ignored */
    cr_assert_eq(in.w[0], 0x0A06u);
    cr_assert_eq(npu_insn_tokens(&in), NPU_TOK_POP_NEXT | NPU_TOK_PUSH_NEXT);
    npu_insn_set_tok(&in, NPU_TOK_PUSH_PREV);
    cr_assert_eq(in.w[0], 0x0406u);
    dis(&in, "SYNC_L [push_prev]");
    npu_insn_set_tok(&in, 0);
    dis(&in, "SYNC_L");
}

Test(isa, rejects_out_of_range_without_truncating)
{
    npu_insn_t in = {{0xDEADBEEFu, 1, 2, 3}};
    cr_assert_eq(npu_enc_load(&in, 8, 0, 1, 0, 0, 0, 1, 0), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 16384, 0, 0, 0, 1, 0), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 1, 0, 65536, 0, 1, 0), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 1, 0, 0, 65536, 1, 0), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 1, 0, 0, 0, 65536, 0), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 1, 0, 0, 0, 1, 65537), -1);
    cr_assert_eq(npu_enc_load(&in, 1, 0, 1, 0, 0, 0, 1, 8u * 65536), -1);
    cr_assert_eq(npu_enc_store(&in, 3, 70000, 0, 0, 0, 4, 0), -1);
    cr_assert_eq(npu_enc_ldw(&in, 2, 0, 0, 1, 1, 1), -1);
    cr_assert_eq(npu_enc_ldw(&in, 0, 4, 0, 1, 1, 1), -1);
    cr_assert_eq(npu_enc_ldw(&in, 0, 0, 0, 1, 256, 1), -1);
    cr_assert_eq(npu_enc_ldw(&in, 0, 0, 0, 1, 1, 256), -1);
    cr_assert_eq(npu_enc_wave(&in, 0, 0, 0, 65536, 0, 1, 1, 1, 0), -1);
    cr_assert_eq(npu_enc_wave(&in, 0, 0, 0, 1, 0, 1, 1, 1, 65536), -1);
    cr_assert_eq(npu_enc_drain(&in, 1, 65536, 0, 2), -1);
    cr_assert_eq(npu_enc_drain(&in, 1, 0, 0x10000, 2), -1);
    /* the output was never touched */
    cr_assert_eq(in.w[0], 0xDEADBEEFu);
    cr_assert_eq(in.w[3], 3u);
}

Test(isa, generic_encoder_checks_format)
{
    npu_fields_t f;
    npu_insn_t in;
    memset(&f, 0, sizeof f);
    f.op = 0x0C;
    cr_assert_eq(npu_encode(&f, &in), -1, "unknown opcode");
    f.op = NPU_OP_STORE;
    f.k = 1;
    cr_assert_eq(npu_encode(&f, &in), -1, "STORE has no k");
    f.k = 0;
    f.pop_prev = 2;
    cr_assert_eq(npu_encode(&f, &in), -1, "token flags are bits");
    f.pop_prev = 1;
    cr_assert_eq(npu_encode(&f, &in), 0);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LDW;
    f.m = 4;
    cr_assert_eq(npu_encode(&f, &in), -1, "LDW has no m");
    f.op = NPU_OP_SYNC_L;
    cr_assert_eq(npu_encode(&f, &in), -1, "SYNC has no fields");
}

static unsigned rbits(uint64_t *s, unsigned bits)
{
    return (unsigned)(test_rand(s) & ((bits >= 32) ? 0xFFFFFFFFull : ((1ull << bits) - 1)));
}

Test(isa, random_round_trips)
{
    uint64_t s = 12345;
    static const unsigned ops[] = {NPU_OP_LOAD, NPU_OP_STORE, NPU_OP_LDW, NPU_OP_WAVE,
                                   NPU_OP_DRAIN, NPU_OP_SYNC_L, NPU_OP_SYNC_E, NPU_OP_SYNC_S,
                                   NPU_OP_LOAD_SPM};
    for (int it = 0; it < 20000; it++) {
        npu_fields_t f, g;
        npu_insn_t in, in2;
        memset(&f, 0, sizeof f);
        f.op = ops[it % 9];
        f.pop_prev = rbits(&s, 1);
        f.pop_next = rbits(&s, 1);
        f.push_prev = rbits(&s, 1);
        f.push_next = rbits(&s, 1);
        switch (f.op) {
        case NPU_OP_LOAD:
        case NPU_OP_STORE:
            f.tag = rbits(&s, 3);
            f.transpose = rbits(&s, 1);
            f.rows = rbits(&s, 14);
            f.dram_addr = (uint32_t)rbits(&s, 32);
            f.spm_addr = rbits(&s, 16);
            f.spm_stride = rbits(&s, 16);
            f.row_bytes = rbits(&s, 16);
            f.stride_shift = rbits(&s, 2);
            f.dram_stride = rbits(&s, 16) << f.stride_shift; /* the pitch in bytes */
            break;
        case NPU_OP_LOAD_SPM:
            f.tag = rbits(&s, 3);
            f.transpose = rbits(&s, 1);
            f.rows = rbits(&s, 14);
            f.src_addr = rbits(&s, 16);
            f.src_stride = rbits(&s, 16);
            f.spm_addr = rbits(&s, 16);
            f.spm_stride = rbits(&s, 16);
            f.row_bytes = rbits(&s, 16);
            break;
        case NPU_OP_WAVE:
            f.acc = rbits(&s, 1);
            f.m = rbits(&s, 16);
            f.obuf_addr = rbits(&s, 16);
            /* fall through */
        case NPU_OP_LDW:
            f.wbank = rbits(&s, 1);
            f.mode = rbits(&s, 2);
            f.spm_addr = rbits(&s, 16);
            f.spm_stride = rbits(&s, 16);
            f.k = rbits(&s, 8);
            f.n = rbits(&s, 8);
            break;
        case NPU_OP_DRAIN:
            f.rows = rbits(&s, 16);
            f.obuf_addr = rbits(&s, 16);
            f.spm_addr = rbits(&s, 16);
            f.spm_stride = rbits(&s, 16);
            break;
        default:
            break;
        }
        cr_assert_eq(npu_encode(&f, &in), 0);
        cr_assert_eq(npu_decode(&in, &g), 0);
        cr_assert(memcmp(&f, &g, sizeof f) == 0, "round trip of op %u (iteration %d)", f.op, it);
        cr_assert_eq(npu_encode(&g, &in2), 0);
        cr_assert(memcmp(&in, &in2, sizeof in) == 0);
    }
}

/* The DRAM pitch: the 16-bit field << stride_shift; encoding picks the smallest shift. */
Test(isa, dram_stride_shift)
{
    static const struct { unsigned pitch; int shift; } c[] = {
        {0, 0}, {2, 0}, {65535, 0}, {65536, 1}, {73096, 1}, /* GNMT's int16 rows of 36,548 */
        {146192, 2}, /* and its int32 C rows */ {131070, 1}, {131074, -1}, /* 2 x 65,537 */
        {524280, 3}, {524288, -1}, {65537, -1}};
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        npu_insn_t in;
        npu_fields_t f;
        int rc = npu_enc_load(&in, NPU_TAG_W, 0, 3, 0x100, 0, 1, 64, c[i].pitch);
        cr_assert_eq(npu_dram_stride_shift(c[i].pitch), c[i].shift, "pitch %u", c[i].pitch);
        cr_assert_eq(rc, c[i].shift < 0 ? -1 : 0, "pitch %u", c[i].pitch);
        if (rc)
            continue;
        cr_assert_eq(npu_insn_get(&in, NPU_FLD_LOAD_stride_shift), (unsigned)c[i].shift);
        cr_assert_eq(npu_insn_get(&in, NPU_FLD_LOAD_dram_stride), c[i].pitch >> c[i].shift);
        cr_assert_eq(npu_decode(&in, &f), 0);
        cr_assert_eq(f.dram_stride, c[i].pitch);
    }
    { /* a given shift must divide the pitch; rows are 14 bits */
        npu_fields_t f;
        npu_insn_t in;
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_STORE;
        f.rows = 1;
        f.row_bytes = 2;
        f.dram_stride = 6;
        f.stride_shift = 2;
        cr_assert_eq(npu_encode(&f, &in), -1);
        f.stride_shift = 1;
        cr_assert_eq(npu_encode(&f, &in), 0);
        f.rows = 16384;
        cr_assert_eq(npu_encode(&f, &in), -1);
    }
}

Test(isa, decode_unknown_and_disasm_illegal)
{
    npu_insn_t in = {{0x0000031Fu, 0x11, 0x22, 0x33}};
    npu_fields_t f;
    cr_assert_eq(npu_decode(&in, &f), -1);
    cr_assert_eq(f.op, 0x1Fu);
    cr_assert_eq(f.pop_prev, 1u);
    cr_assert_eq(f.pop_next, 1u);
    dis(&in, "ILLEGAL op=0x1f w=0000031f_00000011_00000022_00000033");
}

Test(isa, disasm_truncates_safely)
{
    npu_insn_t in;
    char buf[10];
    int n;
    npu_enc_wave(&in, 1, NPU_MODE_FW, 1, 64, 0, 1, 16, 16, 64);
    npu_insn_tok(&in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_NEXT);
    memset(buf, 'x', sizeof buf);
    n = npu_disasm(&in, buf, sizeof buf);
    cr_assert_eq(n, (int)strlen("WAVE FW m=64 k=16 n=16 spm=0x0000+1*i bank=1 acc obuf=64 [pop_prev push_next]"));
    cr_assert_str_eq(buf, "WAVE FW m");
}

Test(isa, prog_array_grows)
{
    npu_prog_t p;
    npu_insn_t in;
    npu_prog_init(&p);
    for (unsigned i = 0; i < 1000; i++) {
        npu_enc_drain(&in, i + 1, 0, 0, 2);
        cr_assert_eq(npu_prog_push(&p, &in), 0);
    }
    cr_assert_eq(p.n, 1000u);
    cr_assert_eq(p.insn[999].w[0] >> 16, 1000u);
    npu_prog_free(&p);
    cr_assert_eq(p.n, 0u);
    cr_assert_null(p.insn);
}

/* A small program of every queue, with tokens, plus an unknown opcode. */
Test(isa, prog_keep_queues)
{
    npu_insn_t in[8], ill = {{0x1Fu | NPU_TOK_PUSH_NEXT, 1, 2, 3}};
    npu_prog_t p;
    unsigned ops[8];
    cr_assert_eq(npu_enc_load(&in[0], NPU_TAG_X, 0, 4, 0x100, 0, 1, 32, 1), 0);
    npu_insn_tok(&in[0], NPU_TOK_POP_NEXT);
    cr_assert_eq(npu_enc_load(&in[1], NPU_TAG_W, 1, 4, 0x200, 64, 1, 8, 1), 0);
    npu_insn_tok(&in[1], NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_enc_ldw(&in[2], 0, 0, 64, 1, 4, 4), 0);
    npu_insn_tok(&in[2], NPU_TOK_POP_PREV);
    cr_assert_eq(npu_enc_wave(&in[3], 0, 0, 0, 4, 0, 1, 4, 4, 0), 0);
    npu_insn_tok(&in[3], NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_enc_drain(&in[4], 4, 0, 128, 2), 0);
    npu_insn_tok(&in[4], NPU_TOK_POP_NEXT | NPU_TOK_PUSH_NEXT);
    in[5] = ill;
    cr_assert_eq(npu_enc_store(&in[6], NPU_TAG_Y, 4, 0x300, 128, 2, 16, 1), 0);
    npu_insn_tok(&in[6], NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_enc_sync(&in[7], NPU_OP_SYNC_E), 0);
    npu_insn_set_tok(&in[7], NPU_TOK_MASK);
    for (int i = 0; i < 8; i++)
        ops[i] = npu_insn_op(&in[i]);

    /* compute only: LDW, WAVE, DRAIN, SYNC_E in order, tokens cleared, other bits intact */
    npu_prog_init(&p);
    cr_assert_eq(npu_prog_keep_queues(in, 8, "E", &p), 0);
    cr_assert_eq(p.n, 4u);
    {
        const int want[] = {2, 3, 4, 7};
        for (int i = 0; i < 4; i++) {
            cr_assert_eq(npu_insn_op(&p.insn[i]), ops[want[i]]);
            cr_assert_eq(npu_insn_tokens(&p.insn[i]), 0u, "insn %d keeps tokens", i);
            cr_assert_eq(p.insn[i].w[0], in[want[i]].w[0] & ~NPU_TOK_MASK);
            for (int w = 1; w < 4; w++)
                cr_assert_eq(p.insn[i].w[w], in[want[i]].w[w]);
        }
    }
    npu_prog_free(&p);

    /* transfer only: both LOADs and the STORE; order of `queues` does not matter */
    npu_prog_init(&p);
    cr_assert_eq(npu_prog_keep_queues(in, 8, "SL", &p), 0);
    cr_assert_eq(p.n, 3u);
    cr_assert_eq(npu_insn_op(&p.insn[0]), (unsigned)NPU_OP_LOAD);
    cr_assert_eq(npu_insn_op(&p.insn[1]), (unsigned)NPU_OP_LOAD);
    cr_assert_eq(npu_insn_op(&p.insn[2]), (unsigned)NPU_OP_STORE);
    cr_assert_eq(p.insn[1].w[0], in[1].w[0] & ~NPU_TOK_MASK);
    cr_assert_eq(p.insn[1].w[0] & (1u << 15), 1u << 15, "transpose bit lost");
    for (size_t i = 0; i < p.n; i++)
        cr_assert_eq(npu_insn_tokens(&p.insn[i]), 0u);

    /* appends; the input is untouched */
    cr_assert_eq(npu_prog_keep_queues(in, 8, "LSE", &p), 0);
    cr_assert_eq(p.n, 3u + 7u, "all queues keep everything but the unknown opcode");
    cr_assert_eq(in[0].w[0] & NPU_TOK_MASK, NPU_TOK_POP_NEXT);
    npu_prog_free(&p);

    /* nothing kept, bad arguments */
    npu_prog_init(&p);
    cr_assert_eq(npu_prog_keep_queues(in, 8, "", &p), 0);
    cr_assert_eq(p.n, 0u);
    cr_assert_eq(npu_prog_keep_queues(in, 0, "E", &p), 0);
    cr_assert_eq(p.n, 0u);
    cr_assert_eq(npu_prog_keep_queues(in, 8, NULL, &p), -1);
    npu_prog_free(&p);
}

Test(isa, flexsa_fields_round_trip_and_disasm)
{
    npu_insn_t in;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_ldw_cores(&in, 1, NPU_MODE_ISW, 0x40, 2, 5, 6, 0x9), 0);
    cr_assert_eq(in.w[2], 5u | 6u << 8 | 9u << 16);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.core_mask, 9u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "LDW ISW k=5 n=6 spm=0x0040+2*r bank=1 cores=0x9");
    cr_assert_eq(npu_enc_ldw_cores(&in, 1, NPU_MODE_ISW, 0x40, 2, 5, 6, 16), -1, "mask is 4 bits");
    cr_assert_eq(npu_enc_drain_split(&in, 19, 256, 0x100, 2, 19, 18), 0);
    cr_assert_eq(in.w[3], 19u | 18u << 16);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.split_rows, 19u);
    cr_assert_eq(f.hi_rows, 18u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "DRAIN rows=19 obuf=256 spm=0x0100+2*r split=19 hi=18");
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_WAVE;
    f.m = 1; f.k = 1; f.n = 1;
    f.core_mask = 1;
    cr_assert_eq(npu_encode(&f, &in), -1, "a WAVE has no core mask");
}

/* Lane selects of the 1G4C policy: LDW b_hi = w2[20], WAVE a_hi = w3[0]. */
Test(isa, lane_hi_round_trip_and_disasm)
{
    npu_insn_t in;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_ldw_cores(&in, 0, NPU_MODE_ISW, 0x300, 1, 8, 8, 0x4), 0);
    cr_assert_eq(npu_insn_lane_hi(&in), 0);
    cr_assert_eq(in.w[2], 8u | 8u << 8 | 4u << 16 | 1u << 20);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.lane_hi, 1u);
    cr_assert_eq(f.core_mask, 4u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "LDW ISW k=8 n=8 spm=0x0300+1*r bank=0 cores=0x4 b_hi");
    cr_assert_eq(npu_enc_wave(&in, 0, NPU_MODE_ISW, 1, 64, 0x10, 2, 8, 8, 32), 0);
    cr_assert_eq(npu_insn_lane_hi(&in), 0);
    cr_assert_eq(in.w[3], 1u);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.lane_hi, 1u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "WAVE ISW m=64 k=8 n=8 spm=0x0010+2*i bank=0 acc obuf=32 a_hi");
    {   /* the generic encoder agrees; other formats reject the field */
        npu_insn_t g;
        cr_assert_eq(npu_encode(&f, &g), 0);
        cr_assert_eq(memcmp(&g, &in, sizeof g), 0);
    }
    cr_assert_eq(npu_enc_drain(&in, 4, 0, 0, 2), 0);
    cr_assert_eq(npu_insn_lane_hi(&in), -1, "a DRAIN has no lane select");
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_DRAIN;
    f.rows = 1;
    f.lane_hi = 1;
    cr_assert_eq(npu_encode(&f, &in), -1);
    f.op = NPU_OP_LOAD;
    cr_assert_eq(npu_encode(&f, &in), -1);
}

/* WAVE bcast: w3[1], round trip, disassembly, only in the WAVE format; its row sets */
Test(isa, bcast_round_trip_disasm_and_sets)
{
    npu_insn_t in, g;
    npu_fields_t f;
    npu_wave_sets_t ws;
    char buf[160];
    cr_assert_eq(npu_enc_wave(&in, 1, NPU_MODE_ISW, 0, 37, 0x20, 1, 8, 5, 64), 0);
    cr_assert_eq(npu_insn_bcast(&in), 0);
    cr_assert_eq(npu_insn_lane_hi(&in), 0);
    cr_assert_eq(in.w[3], 3u);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.bcast, 1u);
    cr_assert_eq(f.lane_hi, 1u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "WAVE ISW m=37 k=8 n=5 spm=0x0020+1*i bank=1 obuf=64 a_hi bcast");
    cr_assert_eq(npu_encode(&f, &g), 0);
    cr_assert_eq(memcmp(&g, &in, sizeof g), 0);
    /* sets: both rows [0, m), cores {0,1} at OBUF rows 0.., {2,3} at m..; array mode HSW */
    cr_assert_eq(npu_wave_sets_f(&f, &ws), 2);
    cr_assert_eq(ws.len[0], 37u); cr_assert_eq(ws.len[1], 37u);
    cr_assert_eq(ws.start[0], 0u); cr_assert_eq(ws.start[1], 0u);
    cr_assert_eq(ws.orow[0], 0u); cr_assert_eq(ws.orow[1], 37u);
    cr_assert_eq(ws.cores[0], 0x3u); cr_assert_eq(ws.cores[1], 0xCu);
    cr_assert_eq(ws.obuf_rows, 74u);
    cr_assert_eq(ws.amode, (unsigned)NPU_MODE_HSW);
    cr_assert_eq(ws.tiles, 2u);
    f.bcast = 0;
    cr_assert_eq(npu_wave_sets_f(&f, &ws), 4);
    cr_assert_eq(ws.amode, (unsigned)NPU_MODE_ISW);
    /* other formats reject it */
    cr_assert_eq(npu_enc_ldw(&in, 0, NPU_MODE_ISW, 0, 1, 8, 8), 0);
    cr_assert_eq(npu_insn_bcast(&in), -1);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LDW; f.k = 1; f.n = 1; f.bcast = 1;
    cr_assert_eq(npu_encode(&f, &g), -1);
    f.op = NPU_OP_DRAIN; f.k = f.n = 0; f.rows = 1;
    cr_assert_eq(npu_encode(&f, &g), -1);
    f.op = NPU_OP_WAVE; f.rows = 0; f.m = 1; f.k = 1; f.n = 1; f.bcast = 2;
    cr_assert_eq(npu_encode(&f, &g), -1);
}

Test(isa, wave_sets_split_rows)
{
    npu_wave_sets_t ws;
    cr_assert_eq(npu_wave_sets(NPU_MODE_ISW, 37, &ws), 4);
    /* ha = 19: core 0 [0,10), core 2 [10,19), core 1 [19,28), core 3 [28,37) */
    cr_assert_eq(ws.len[0], 10u); cr_assert_eq(ws.len[1], 9u);
    cr_assert_eq(ws.len[2], 9u); cr_assert_eq(ws.len[3], 9u);
    cr_assert_eq(ws.start[1], 10u); cr_assert_eq(ws.start[2], 19u); cr_assert_eq(ws.start[3], 28u);
    cr_assert_eq(ws.orow[1], 10u); cr_assert_eq(ws.orow[2], 0u); cr_assert_eq(ws.orow[3], 9u);
    cr_assert_eq(ws.obuf_rows, 19u);
    cr_assert_eq(npu_wave_sets(NPU_MODE_VSW, 37, &ws), 2);
    cr_assert_eq(ws.len[0], 19u); cr_assert_eq(ws.len[1], 18u); cr_assert_eq(ws.lane_hi[1], 1u);
    cr_assert_eq(npu_wave_sets(NPU_MODE_HSW, 1, &ws), 2);
    cr_assert_eq(ws.len[0], 1u); cr_assert_eq(ws.len[1], 0u); cr_assert_eq(ws.obuf_rows, 1u);
    cr_assert_eq(npu_wave_sets(NPU_MODE_ISW, 6, &ws), 4);
    cr_assert_eq(ws.len[0] + ws.len[1], 3u); cr_assert_eq(ws.len[2], 2u); cr_assert_eq(ws.len[3], 1u);
    cr_assert(npu_mode_fits(NPU_MODE_HSW, 8, 16, 8) && !npu_mode_fits(NPU_MODE_HSW, 9, 16, 8));
    cr_assert(npu_mode_fits(NPU_MODE_VSW, 16, 8, 8) && !npu_mode_fits(NPU_MODE_VSW, 16, 9, 8));
    cr_assert(!npu_mode_fits(NPU_MODE_ISW, 8, 9, 8) && npu_mode_fits(NPU_MODE_FW, 16, 16, 8));
}

/* DRAIN acc (w0[15]): reduction of an output tile in the SPM over several tile-ops. */
Test(isa, drain_acc_round_trip_and_disasm)
{
    npu_insn_t in;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_drain(&in, 32, 256, 0x200, 4), 0);
    cr_assert_eq(npu_insn_drain_acc(&in), 0);
    cr_assert_eq(in.w[0] >> 15 & 1u, 1u);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.acc, 1u);
    cr_assert_eq(f.rows, 32u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "DRAIN rows=32 obuf=256 spm=0x0200+4*r acc");
    npu_insn_t g;
    cr_assert_eq(npu_encode(&f, &g), 0);
    cr_assert_eq(memcmp(&g, &in, sizeof g), 0);
    cr_assert_eq(npu_enc_ldw(&in, 0, NPU_MODE_FW, 0, 1, 4, 4), 0);
    cr_assert_eq(npu_insn_drain_acc(&in), -1, "only a DRAIN accumulates into the SPM");
}

/* DRAIN narrow (issue 15): w0[12] narrow, w1[20:16] shift, round trip and disassembly. */
Test(isa, drain_narrow_round_trip_and_disasm)
{
    npu_insn_t in, g;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_drain(&in, 8, 64, 0x100, 1), 0);
    cr_assert_eq(npu_insn_drain_narrow(&in, 7), 0);
    cr_assert_eq(in.w[0] >> 12 & 1u, 1u);
    cr_assert_eq(in.w[1] >> 16 & 0x1Fu, 7u);
    cr_assert_eq(in.w[1] & 0xFFFFu, 64u, "obuf_addr kept");
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert(f.narrow == 1 && f.shift == 7 && f.rows == 8 && f.acc == 0);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "DRAIN rows=8 obuf=64 spm=0x0100+1*r narrow shift=7");
    cr_assert_eq(npu_encode(&f, &g), 0);
    cr_assert_eq(memcmp(&g, &in, sizeof g), 0);
    cr_assert_eq(npu_enc_drain(&in, 8, 64, 0x100, 1), 0);
    cr_assert_eq(npu_insn_drain_narrow(&in, 0), 0);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "DRAIN rows=8 obuf=64 spm=0x0100+1*r narrow");
    cr_assert_eq(npu_insn_drain_narrow(&in, 32), -1, "shift is 5 bits");
    cr_assert_eq(npu_enc_ldw(&in, 0, NPU_MODE_FW, 0, 1, 4, 4), 0);
    cr_assert_eq(npu_insn_drain_narrow(&in, 0), -1, "only a DRAIN narrows");
}

/* DRAIN pack (issue 14): w1[25:21] n, round trip and disassembly; the other fields kept. */
Test(isa, drain_pack_round_trip_and_disasm)
{
    npu_insn_t in, g;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_drain_split(&in, 128, 256, 0x800, 64, 128, 128), 0);
    cr_assert_eq(npu_insn_drain_pack(&in, 5), 0);
    cr_assert_eq(in.w[1] >> 21 & 0x1Fu, 5u);
    cr_assert_eq(in.w[1] & 0xFFFFu, 256u, "obuf_addr kept");
    cr_assert_eq(in.w[2] >> 16, 64u, "spm_stride kept: the segment pitch");
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert(f.pack == 5 && f.rows == 128 && f.split_rows == 128 && f.hi_rows == 128 && f.narrow == 0);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "DRAIN rows=128 obuf=256 spm=0x0800+64*seg split=128 hi=128 pack=5");
    cr_assert_eq(npu_encode(&f, &g), 0);
    cr_assert_eq(memcmp(&g, &in, sizeof g), 0);
    cr_assert_eq(npu_insn_drain_pack(&in, 32), -1, "pack is 5 bits");
    cr_assert_eq(npu_insn_drain_pack(&in, 0), -1, "pack 0 is the plain DRAIN");
    cr_assert_eq(npu_enc_ldw(&in, 0, NPU_MODE_FW, 0, 1, 4, 4), 0);
    cr_assert_eq(npu_insn_drain_pack(&in, 3), -1, "only a DRAIN packs");
}

Test(isa, fill_and_k_lo)
{
    npu_insn_t in;
    npu_fields_t f;
    char buf[160];
    cr_assert_eq(npu_enc_fill(&in, 9, 0x400, 2, 64), 0);
    cr_assert_eq(in.w[0], 0x00090009u);
    cr_assert_eq(in.w[1], 0u);
    cr_assert_eq(in.w[2], 0x00020400u);
    cr_assert_eq(in.w[3], 64u);
    cr_assert_eq(npu_op_queue(NPU_OP_FILL), 'L');
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "FILL rows=9 bytes=64 spm=0x0400+2*r");
    /* FILL has no DRAM side: the generic encoder rejects DRAM fields and tags */
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_FILL;
    f.rows = 1;
    f.row_bytes = 4;
    f.dram_addr = 64;
    cr_assert_eq(npu_encode(&f, &in), -1);
    f.dram_addr = 0;
    f.tag = 1;
    cr_assert_eq(npu_encode(&f, &in), -1);

    cr_assert_eq(npu_enc_ldw(&in, 1, NPU_MODE_FW, 0x100, 4, 16, 16), 0);
    cr_assert_eq(npu_insn_k_lo(&in, 3), 0);
    cr_assert_eq(in.w[2] >> 24, 3u);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.k_lo, 3u);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert(strstr(buf, " k_lo=3") != NULL, "%s", buf);
    cr_assert_eq(npu_enc_wave(&in, 0, NPU_MODE_HSW, 1, 20, 0x10, 1, 8, 16, 0), 0);
    cr_assert_eq(npu_insn_lane_hi(&in), 0);
    cr_assert_eq(npu_insn_k_lo(&in, 5), 0);
    cr_assert_eq(in.w[3], (5u << 8) | 1u);
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert_eq(f.k_lo, 5u);
    cr_assert_eq(f.lane_hi, 1u);
    cr_assert_eq(npu_insn_k_lo(&in, 64), -1);
    cr_assert_eq(npu_enc_drain(&in, 4, 0, 0, 2), 0);
    cr_assert_eq(npu_insn_k_lo(&in, 1), -1);
    /* round trip through the generic encoder */
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_WAVE;
    f.m = 3; f.k = 9; f.n = 2; f.k_lo = 63;
    cr_assert_eq(npu_encode(&f, &in), 0);
    cr_assert_eq((in.w[3] >> 8) & 0x3Fu, 63u);
    f.k_lo = 64;
    cr_assert_eq(npu_encode(&f, &in), -1);
}

/* ---- the field table NPU_ISA_FIELDS (sw/hw/npu_defs.h) ------------------------------------ */

static const char *fmt_name(unsigned op) { return op == NPU_OP_INSN ? "INSN" : npu_op_name(op); }

static uint32_t field_bits(const npu_isa_field_desc_t *d)
{
    return (d->width >= 32 ? 0xFFFFFFFFu : (1u << d->width) - 1u) << d->lsb;
}

/* The table row of field `name` in the format of op (INSN fields included), or NULL. */
static const npu_isa_field_desc_t *find_field(unsigned op, const char *name)
{
    for (unsigned i = 0; i < NPU_NUM_FIELDS; i++)
        if ((npu_isa_fields[i].op == op || npu_isa_fields[i].op == NPU_OP_INSN) &&
            !strcmp(npu_isa_fields[i].name, name))
            return &npu_isa_fields[i];
    return NULL;
}

Test(isa_fields, fit_their_word_and_name_a_format)
{
    for (unsigned i = 0; i < NPU_NUM_FIELDS; i++) {
        const npu_isa_field_desc_t *d = &npu_isa_fields[i];
        cr_assert_not_null(fmt_name(d->op), "field %u (%s): format 0x%x is no opcode", i, d->name,
                           d->op);
        cr_assert(d->word < 4 && d->width >= 1 && d->lsb + d->width <= 32, "%s %s: w%u[%u +: %u]",
                  fmt_name(d->op), d->name, d->word, d->lsb, d->width);
    }
}

/* Every format with the INSN fields: no bit used twice, no name twice. */
Test(isa_fields, fields_of_a_format_do_not_overlap)
{
    static const unsigned ops[] = {
#define X(n, v, q, t) v,
        NPU_OPCODES(X)
#undef X
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        uint32_t used[4] = {0, 0, 0, 0};
        for (unsigned i = 0; i < NPU_NUM_FIELDS; i++) {
            const npu_isa_field_desc_t *d = &npu_isa_fields[i];
            if (d->op != ops[k] && d->op != NPU_OP_INSN)
                continue;
            cr_assert_eq(used[d->word] & field_bits(d), 0u, "%s: %s overlaps another field",
                         npu_op_name(ops[k]), d->name);
            used[d->word] |= field_bits(d);
            cr_assert_eq(find_field(ops[k], d->name), d, "%s: %s twice", npu_op_name(ops[k]), d->name);
        }
    }
}

Test(isa, load_spm_round_trip_and_disasm)
{
    npu_insn_t in, in2;
    npu_fields_t f;
    char buf[160];
    cr_assert_str_eq(npu_op_name(0x11), "LOAD_SPM");
    cr_assert_eq(npu_op_queue(NPU_OP_LOAD_SPM), 'L');
    cr_assert_eq(npu_enc_load_spm(&in, NPU_TAG_X, 1, 20, 0x100, 3, 0x400, 4, 64), 0);
    cr_assert_eq(in.w[0], 0x00149011u, "w0 %08x", in.w[0]);
    cr_assert_eq(in.w[1], 0x00030100u);
    cr_assert_eq(in.w[2], 0x00040400u);
    cr_assert_eq(in.w[3], 64u, "w3[31:16] (a LOAD's DRAM pitch) stays 0");
    cr_assert_eq(npu_decode(&in, &f), 0);
    cr_assert(f.op == NPU_OP_LOAD_SPM && f.tag == NPU_TAG_X && f.transpose == 1 && f.rows == 20 &&
              f.src_addr == 0x100 && f.src_stride == 3 && f.spm_addr == 0x400 && f.spm_stride == 4 &&
              f.row_bytes == 64 && f.dram_addr == 0 && f.dram_stride == 0 && f.stride_shift == 0);
    cr_assert_eq(npu_encode(&f, &in2), 0);
    cr_assert_eq(memcmp(&in, &in2, sizeof in), 0);
    npu_disasm(&in, buf, sizeof buf);
    cr_assert_str_eq(buf, "LOAD_SPM X trans rows=20 bytes=64 src=0x0100+3*r spm=0x0400+4*r");
    cr_assert_eq(npu_enc_load_spm(&in, 0, 0, 1, 0x10000, 0, 0, 0, 2), -1, "src_addr is 16 bits");
    cr_assert_eq(npu_enc_load_spm(&in, 0, 0, 1, 0, 0x10000, 0, 0, 2), -1, "src_stride is 16 bits");
    /* no DRAM side: the generic encoder rejects DRAM fields */
    f.dram_addr = 64;
    cr_assert_eq(npu_encode(&f, &in2), -1);
    f.dram_addr = 0;
    f.dram_stride = 2;
    cr_assert_eq(npu_encode(&f, &in2), -1);
    /* the LOAD engine tells LOAD, FILL and LOAD_SPM apart by two opcode bits (npu_dma_load):
     * LOAD_SPM must equal LOAD where FILL differs, and FILL LOAD where LOAD_SPM differs */
    cr_assert_eq((NPU_OP_LOAD ^ NPU_OP_FILL) & (NPU_OP_LOAD ^ NPU_OP_LOAD_SPM), 0);
    cr_assert_neq(NPU_OP_LOAD ^ NPU_OP_LOAD_SPM, 0);
}

/* npu_fields_t holds 32-bit members only: the table's offsets must reach each of them. */
Test(isa_fields, every_npu_fields_t_member_is_in_the_table)
{
    cr_assert_eq(sizeof(npu_fields_t) % sizeof(unsigned), 0u);
    for (size_t off = 0; off < sizeof(npu_fields_t); off += sizeof(unsigned)) {
        int found = 0;
        for (unsigned i = 0; i < NPU_NUM_FIELDS; i++)
            found |= npu_isa_fields[i].offset == off;
        cr_assert(found, "the npu_fields_t member at byte %zu has no row in NPU_ISA_FIELDS", off);
    }
}

/* One RTL descriptor (npu_dma_desc) reads LOAD, STORE, FILL and LOAD_SPM at the LOAD positions
 * (LOAD_SPM's source fields inside LOAD's dram_addr word). */
Test(isa_fields, store_and_fill_share_the_load_layout)
{
    for (unsigned i = 0; i < NPU_NUM_FIELDS; i++) {
        const npu_isa_field_desc_t *d = &npu_isa_fields[i], *l;
        if (d->op != NPU_OP_STORE && d->op != NPU_OP_FILL && d->op != NPU_OP_LOAD_SPM)
            continue;
        if (d->op == NPU_OP_LOAD_SPM && !strncmp(d->name, "src_", 4)) {
            l = find_field(NPU_OP_LOAD, "dram_addr");
            cr_assert(d->word == l->word && d->lsb + d->width <= 32, "LOAD_SPM %s: not in w1", d->name);
            continue;
        }
        l = find_field(NPU_OP_LOAD, d->name);
        cr_assert_not_null(l, "%s %s: not a LOAD field", fmt_name(d->op), d->name);
        cr_assert(l->word == d->word && l->lsb == d->lsb && l->width == d->width,
                  "%s %s: not where LOAD has it", fmt_name(d->op), d->name);
    }
}

/* rtl/npu_exec.v decodes these once for several EXEC formats (one wire each): same bits. */
Test(isa_fields, exec_formats_share_what_npu_exec_decodes_once)
{
    static const struct { unsigned op_a; const char *a; unsigned op_b; const char *b; } same[] = {
        {NPU_OP_LDW, "wbank", NPU_OP_WAVE, "wbank"},
        {NPU_OP_LDW, "mode", NPU_OP_WAVE, "mode"},
        {NPU_OP_LDW, "spm_addr", NPU_OP_WAVE, "spm_addr"},
        {NPU_OP_LDW, "spm_stride", NPU_OP_WAVE, "spm_stride"},
        {NPU_OP_LDW, "k", NPU_OP_WAVE, "k"},
        {NPU_OP_LDW, "n", NPU_OP_WAVE, "n"},
        {NPU_OP_DRAIN, "acc", NPU_OP_WAVE, "acc"},
        {NPU_OP_DRAIN, "rows", NPU_OP_WAVE, "m"},
        {NPU_OP_DRAIN, "obuf_addr", NPU_OP_WAVE, "spm_addr"},
        {NPU_OP_DRAIN, "spm_stride", NPU_OP_WAVE, "obuf_addr"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const npu_isa_field_desc_t *x = find_field(same[i].op_a, same[i].a);
        const npu_isa_field_desc_t *y = find_field(same[i].op_b, same[i].b);
        cr_assert(x && y && x->word == y->word && x->lsb == y->lsb && x->width == y->width,
                  "%s %s and %s %s: not the same bits", fmt_name(same[i].op_a), same[i].a,
                  fmt_name(same[i].op_b), same[i].b);
    }
}

Test(isa_fields, token_flags_and_raw_access)
{
    npu_insn_t in;
    const char *tok[4] = {"pop_prev", "pop_next", "push_prev", "push_next"};
    const unsigned flag[4] = {NPU_TOK_POP_PREV, NPU_TOK_POP_NEXT, NPU_TOK_PUSH_PREV, NPU_TOK_PUSH_NEXT};
    for (int i = 0; i < 4; i++) { /* isa.h: the token flags are bits of w0 */
        const npu_isa_field_desc_t *d = find_field(NPU_OP_INSN, tok[i]);
        cr_assert(d && d->word == 0 && d->width == 1 && flag[i] == 1u << d->lsb, "%s", tok[i]);
    }
    cr_assert_eq(npu_enc_sync(&in, NPU_OP_SYNC_L), 0);
    cr_assert_eq(npu_insn_put(&in, NPU_FLD_LOAD_rows, 16384), -1, "too wide: rejected");
    cr_assert_eq(npu_insn_get(&in, NPU_FLD_LOAD_rows), 0u, "and nothing written");
    cr_assert_eq(npu_insn_put(&in, NPU_FLD_LOAD_rows, 16383), 0);
    cr_assert_eq(npu_insn_get(&in, NPU_FLD_LOAD_rows), 16383u);
    cr_assert_eq(npu_insn_put(&in, NPU_FLD_LOAD_dram_addr, 0xFFFFFFFFu), 0);
    cr_assert_eq(npu_insn_get(&in, NPU_FLD_STORE_dram_addr), 0xFFFFFFFFu);
    cr_assert_eq(npu_insn_op(&in), (unsigned)NPU_OP_SYNC_L);
    cr_assert_eq(npu_insn_put(&in, NPU_NUM_FIELDS, 0), -1);
    cr_assert_eq(npu_insn_get(&in, NPU_NUM_FIELDS), 0u);
}

/* Parses the next "`wD[MSB:LSB]` name", "`wD[B]` name" or "`wD` name" at or after p into d
 * (op untouched) and name; returns the position after it, or NULL. */
static const char *next_doc_field(const char *p, npu_isa_field_desc_t *d, char name[32])
{
    while ((p = strstr(p, "`w")) != NULL) {
        unsigned w, a, b;
        int n = 0;
        p += 2;
        if (sscanf(p, "%u[%u:%u]` %n", &w, &a, &b, &n) == 3 && n)
            d->lsb = b, d->width = a - b + 1;
        else if ((n = 0, sscanf(p, "%u[%u]` %n", &w, &a, &n) == 2 && n))
            d->lsb = a, d->width = 1;
        else if ((n = 0, sscanf(p, "%u` %n", &w, &n) == 1 && n))
            d->lsb = 0, d->width = 32;
        else
            continue;
        d->word = w;
        if (sscanf(p + n, "%31[a-z_]", name) == 1)
            return p + n + strlen(name);
    }
    return NULL;
}

/* docs/isa.md section 2 (the common fields, one table row per opcode) agrees with the table, in
 * both directions for the formats whose row gives bit positions (STORE and FILL: see above). */
Test(isa_fields, docs_isa_md_agrees)
{
    FILE *f = fopen("docs/isa.md", "r");
    char line[1024], fmt[16], name[32];
    unsigned seen[NPU_NUM_FIELDS] = {0}, rows = 0;
    cr_assert_not_null(f, "docs/isa.md (run from the repository root)");
    while (fgets(line, sizeof line, f)) {
        npu_isa_field_desc_t d;
        const char *p = line;
        unsigned op;
        if (strstr(line, "` opcode,"))
            op = NPU_OP_INSN;
        else if (sscanf(line, "| %15[A-Z_] 0x%x |", fmt, &op) != 2 || !npu_op_name(op))
            continue;
        while ((p = next_doc_field(p, &d, name)) != NULL) {
            const npu_isa_field_desc_t *t = find_field(op, strcmp(name, "opcode") ? name : "op");
            cr_assert_not_null(t, "docs/isa.md: %s has no field %s", fmt_name(op), name);
            cr_assert(t->word == d.word && t->lsb == d.lsb && t->width == d.width,
                      "docs/isa.md: %s %s is w%u[%u +: %u], the table says w%u[%u +: %u]",
                      fmt_name(op), name, d.word, d.lsb, d.width, t->word, t->lsb, t->width);
            seen[t - npu_isa_fields] = 1;
            rows++;
        }
    }
    fclose(f);
    cr_assert_gt(rows, 0u);
    for (unsigned i = 0; i < NPU_NUM_FIELDS; i++) {
        unsigned op = npu_isa_fields[i].op;
        if (op != NPU_OP_STORE && op != NPU_OP_FILL)
            cr_assert(seen[i], "docs/isa.md lacks %s %s", fmt_name(op), npu_isa_fields[i].name);
    }
}
