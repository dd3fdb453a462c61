/* test_emit.c - emitted GEMM programs: DRAM bytes per tag and MACs against closed forms, token
 * discipline, buffer/bank/OBUF ranges, accumulate flags, encoding limits. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_swap.h"
#include "compile/gemm/gemm_tiling.h"
#include "hw/isa.h"
#include "prog/prog_locate.h"
#include "queue_machine.h"
#include "run/runtime.h"
#include "test_cfgs.h"

static uint64_t cdivu(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

typedef struct built {
    npu_gemm_plan_t p;
    npu_gemm_args_t a;
    npu_prog_t prog;
} built_t;

static void build(const npu_cfg_t *c, int M, int N, int K, int ta, int tb, built_t *b)
{
    uint64_t B = (uint64_t)4 * c->s;
    memset(b, 0, sizeof *b);
    cr_assert_eq(npu_gemm_tile(c, M, N, K, &b->p), 0);
    npu_gemm_pitches(M, N, K, ta, tb, &b->a.pitch_a, &b->a.pitch_b, &b->a.pitch_c);
    b->a.transA = ta;
    b->a.transB = tb;
    b->a.a = (uint32_t)(B * 1000);
    b->a.b = (uint32_t)(b->a.a + b->a.pitch_a * (uint64_t)(ta ? K : M));
    b->a.c = (uint32_t)(b->a.b + b->a.pitch_b * (uint64_t)(tb ? N : K));
    npu_prog_init(&b->prog);
    cr_assert_eq(npu_gemm_emit(c, &b->p, &b->a, &b->prog), 0, "emit %dx%dx%d", M, N, K);
}

/* DRAM bytes of the dense tensors as the tiling moves them: the (m-tile, n-tile, k-chunk) steps
 * in the plan's m-major order each load their A and B tiles (rows of the stored matrix, pitch
 * 2K / 2M / 2N / 2K), except a tile the step two back loaded too (the double buffer of that
 * parity holds it), and every (m-tile, n-tile) stores its C tile (pitch 4N); each transfer counted
 * by the DMA's rule (npu_dma_bursts, npu_dma_bursts_tr: unit-tested on their own). Independent
 * of the emitter's address arithmetic: tile origins from the plan's tile sizes and M, N, K only.
 * ld: the LOAD-queue instructions (a step that loads nothing still has its token SYNC). */
typedef struct { uint64_t x, w, y, ld; } dense_bytes_t;
static dense_bytes_t tiled_bytes(const npu_cfg_t *c, const built_t *b, int M, int N, int K, int ta,
                                 int tb)
{
    uint64_t B = (uint64_t)4 * c->s, mb = (uint64_t)c->max_burst_beats;
    const npu_gemm_plan_t *p = &b->p;
    dense_bytes_t r = {0, 0, 0, 0};
    long ka_hist[2] = {-1, -1}, kb_hist[2] = {-1, -1}, step = 0; /* A, B tiles of the last two steps */
    cr_assert_eq(p->order, 0);
    for (int i = 0; i < p->m_tiles; i++)
        for (int j = 0; j < p->n_tiles; j++) {
            uint64_t m0 = (uint64_t)i * p->Mt, n0 = (uint64_t)j * p->Nt;
            uint64_t ma = (uint64_t)M - m0 < (uint64_t)p->Mt ? (uint64_t)M - m0 : (uint64_t)p->Mt;
            uint64_t na = (uint64_t)N - n0 < (uint64_t)p->Nt ? (uint64_t)N - n0 : (uint64_t)p->Nt;
            for (int g = 0; g < p->k_chunks; g++, step++) {
                uint64_t k0 = (uint64_t)g * p->Kc;
                uint64_t ka = (uint64_t)K - k0 < (uint64_t)p->Kc ? (uint64_t)K - k0 : (uint64_t)p->Kc;
                long keya = (long)i * p->k_chunks + g, keyb = (long)j * p->k_chunks + g;
                int la = keya != ka_hist[step % 2], lb = keyb != kb_hist[step % 2];
                ka_hist[step % 2] = keya;
                kb_hist[step % 2] = keyb;
                r.ld += la + lb ? (uint64_t)(la + lb) : 1u;
                if (la)
                    r.x += B * (ta ? npu_dma_bursts_tr(B, mb, b->a.a + k0 * 2 * M + 2 * m0, ka, 2 * ma, 2ull * M)
                                   : npu_dma_bursts(B, mb, b->a.a + m0 * 2 * K + 2 * k0, ma, 2 * ka, 2ull * K)).beats;
                if (lb)
                    r.w += B * (tb ? npu_dma_bursts_tr(B, mb, b->a.b + n0 * 2 * K + 2 * k0, na, 2 * ka, 2ull * K)
                                   : npu_dma_bursts(B, mb, b->a.b + k0 * 2 * N + 2 * n0, ka, 2 * na, 2ull * N)).beats;
            }
            r.y += B * npu_dma_bursts(B, mb, b->a.c + m0 * 4 * N + 4 * n0, ma, 4 * na, 4ull * N).beats;
        }
    return r;
}

/* The counters a program implies, against formulas in M, N, K and the plan's tile sizes. */
static void check_bytes(const npu_cfg_t *c, const built_t *b, int M, int N, int K, int ta, int tb)
{
    npu_prog_expect_t e;
    uint64_t B = (uint64_t)4 * c->s, F = (uint64_t)2 * c->s;
    uint64_t mT = (uint64_t)b->p.m_tiles, nT = (uint64_t)b->p.n_tiles;
    dense_bytes_t t = tiled_bytes(c, b, M, N, K, ta, tb);
    uint64_t x = t.x, w = t.w, y = t.y;
    uint64_t waves = mT * cdivu((uint64_t)K, F) * cdivu((uint64_t)N, F);
    npu_prog_expect(c, b->prog.insn, b->prog.n, &e);
    cr_assert_eq(e.rd_bytes[NPU_TAG_X], x, "X bytes %dx%dx%d ta=%d", M, N, K, ta);
    cr_assert_eq(e.rd_bytes[NPU_TAG_W], w, "W bytes %dx%dx%d tb=%d", M, N, K, tb);
    cr_assert_eq(e.wr_bytes[NPU_TAG_Y], y, "Y bytes");
    cr_assert_eq(e.rd_bytes[NPU_TAG_PROG], cdivu(16ull * b->prog.n, B) * B);
    for (int t = 0; t < NPU_NUM_TAGS; t++) {
        if (t != NPU_TAG_X && t != NPU_TAG_W && t != NPU_TAG_PROG)
            cr_assert_eq(e.rd_bytes[t], 0u);
        if (t != NPU_TAG_Y)
            cr_assert_eq(e.wr_bytes[t], 0u);
    }
    cr_assert_eq(e.macs, (uint64_t)M * N * K);
    cr_assert_eq(e.macs_core[0] + e.macs_core[1] + e.macs_core[2] + e.macs_core[3], e.macs);
    cr_assert_eq(e.waves[NPU_MODE_FW], waves);
    cr_assert_eq(e.rows[NPU_MODE_FW], (uint64_t)M * cdivu((uint64_t)K, F) * cdivu((uint64_t)N, F));
    cr_assert_eq(e.obuf_drain_rows, (uint64_t)M * cdivu((uint64_t)N, F));
    cr_assert_eq(e.insn_load + e.insn_exec + e.insn_store, b->prog.n);
    cr_assert_eq(e.insn_load, t.ld);
    cr_assert_eq(e.insn_store, mT * nT);
}

/* Does the program's first chunk load B and A in load groups of their own, each pushing l2e (the
 * first LDW pops B's, the first WAVE A's: gemm_emit.c emit_loads)? Its first two LOADs push. */
static int first_chunk_split(const built_t *b)
{
    npu_fields_t f0, f1;
    if (b->prog.n < 2 || npu_decode(&b->prog.insn[0], &f0) || npu_decode(&b->prog.insn[1], &f1))
        return 0;
    return f0.op == NPU_OP_LOAD && f1.op == NPU_OP_LOAD && f0.push_next && f1.push_next;
}

/* Token discipline, on the abstract machine of queue_machine.h: the program must finish (no
 * deadlock at this depth), every counter stays <= 2 (far below TOKEN_MAX; l2e 3 when the first
 * chunk pushes twice) and the balance at the end is exact. */
static void check_tokens(const built_t *b, int depth)
{
    queue_machine_t m;
    int *pushes = m.pushes, *pops = m.pops, split = first_chunk_split(b);
    cr_assert_eq(queue_machine_run(b->prog.insn, b->prog.n, depth, &m), 0, "%s", m.msg);
    for (int c = 0; c < 4; c++)
        cr_assert(m.max_tok[c] <= 2 + (c == 0 && split), "channel %d reaches %d", c, m.max_tok[c]);
    {
        int chunks = b->p.m_tiles * b->p.n_tiles * b->p.k_chunks;
        int tiles = b->p.m_tiles * b->p.n_tiles;
        cr_assert_eq(pushes[0], chunks + split);
        cr_assert_eq(pops[0], chunks + split);
        cr_assert_eq(pushes[1], chunks);
        cr_assert_eq(pops[1], chunks > 2 ? chunks - 2 : 0);
        cr_assert_eq(pushes[2], tiles);
        cr_assert_eq(pops[2], tiles);
        cr_assert_eq(pushes[3], tiles);
        cr_assert_eq(pops[3], tiles > 2 ? tiles - 2 : 0);
    }
}

/* Every access stays inside its own buffer / OBUF half; WAVE acc is clear exactly on the first
 * k-block of each output block; DMA rows stay inside the tensors. */
static void check_ranges(const npu_cfg_t *c, const built_t *b, int M, int N, int K, int ta, int tb)
{
    const npu_gemm_plan_t *p = &b->p;
    unsigned F = 2u * (unsigned)c->s, B = 4u * (unsigned)c->s, wpr = (unsigned)p->Kc / F;
    unsigned asz = (unsigned)p->Mt * wpr, bsz = (unsigned)(p->Kc * p->nb), csz = 2u * (unsigned)(p->Mt * p->nb);
    uint64_t a_end = b->a.a + (uint64_t)b->a.pitch_a * (uint64_t)(ta ? K : M);
    uint64_t b_end = b->a.b + (uint64_t)b->a.pitch_b * (uint64_t)(tb ? N : K);
    uint64_t c_end = b->a.c + (uint64_t)b->a.pitch_c * (uint64_t)M;
    int fresh_waves = 0;
    for (size_t i = 0; i < b->prog.n; i++) {
        npu_fields_t f;
        npu_decode(&b->prog.insn[i], &f);
        switch (f.op) {
        case NPU_OP_LOAD: {
            unsigned base, size, words, srows;
            uint64_t lo, hi, beats = cdivu(f.row_bytes, B);
            int isA = f.tag == NPU_TAG_X;
            cr_assert(isA || f.tag == NPU_TAG_W);
            base = isA ? (f.spm_addr == p->spm_a[0] ? p->spm_a[0] : p->spm_a[1])
                       : (f.spm_addr == p->spm_b[0] ? p->spm_b[0] : p->spm_b[1]);
            cr_assert_eq(f.spm_addr, base, "LOAD %zu starts at its buffer", i);
            size = isA ? asz : bsz;
            cr_assert_eq(f.transpose, (unsigned)(isA ? ta : tb));
            srows = f.transpose ? f.row_bytes / 2 : f.rows;
            words = f.transpose ? (unsigned)cdivu(f.rows, F) : (unsigned)beats;
            cr_assert(f.rows > 0 && f.row_bytes > 0 && f.dram_addr % 2 == 0);
            cr_assert((srows - 1) * f.spm_stride + words <= size, "LOAD %zu overflows its buffer", i);
            lo = f.dram_addr;
            hi = f.dram_addr + (uint64_t)(f.rows - 1) * f.dram_stride + f.row_bytes;
            cr_assert(lo >= (isA ? b->a.a : b->a.b) && hi <= (isA ? a_end : b_end), "LOAD %zu in tensor", i);
            break;
        }
        case NPU_OP_LDW:
            cr_assert_eq(f.mode, (unsigned)NPU_MODE_FW);
            cr_assert(f.k >= 1 && f.k <= F && f.n >= 1 && f.n <= F);
            cr_assert(f.spm_addr >= p->spm_b[0] && f.spm_addr + (f.k - 1) * f.spm_stride < p->spm_b[0] + 2 * bsz);
            cr_assert_eq((f.spm_addr - p->spm_b[0]) / bsz, (f.spm_addr + (f.k - 1) * f.spm_stride - p->spm_b[0]) / bsz,
                         "LDW %zu stays in one B buffer", i);
            break;
        case NPU_OP_WAVE: {
            unsigned h = f.obuf_addr / (unsigned)c->obuf_rows;
            cr_assert(f.m >= 1 && f.m <= (unsigned)p->Mt);
            cr_assert(f.k >= 1 && f.k <= F && f.n >= 1 && f.n <= F);
            cr_assert(h < 2 && (f.obuf_addr + f.m - 1) / (unsigned)c->obuf_rows == h, "WAVE %zu in one OBUF half", i);
            cr_assert(f.spm_addr + (f.m - 1) * f.spm_stride < 2 * asz);
            cr_assert_eq(f.spm_stride, wpr);
            if (!f.acc)
                fresh_waves++;
            break;
        }
        case NPU_OP_DRAIN: {
            unsigned h = f.obuf_addr / (unsigned)c->obuf_rows;
            cr_assert(h < 2 && (f.obuf_addr + f.rows - 1) / (unsigned)c->obuf_rows == h);
            /* a packed DRAIN: 2 (skinny 4) segments of rows/2 * n lanes, spm_stride words apart */
            uint64_t end = f.pack ? f.spm_addr + (f.split_rows ? 3u : 1u) * f.spm_stride +
                                        (uint64_t)(f.rows / 2) * f.pack / (unsigned)c->s
                                  : f.spm_addr + (uint64_t)(f.rows - 1) * f.spm_stride + 2;
            cr_assert(f.spm_addr >= p->spm_c[0] && end <= p->spm_c[0] + 2 * csz);
            if (f.pack)
                cr_assert(f.spm_addr == p->spm_c[h] && end <= p->spm_c[h] + csz, "packed DRAIN %zu in its buffer", i);
            else
                cr_assert_eq(p->spm_c[h], f.spm_addr - (f.spm_addr - p->spm_c[h]) % (2u * (unsigned)p->nb),
                             "DRAIN %zu uses the staging buffer of its half", i);
            break;
        }
        case NPU_OP_STORE: {
            uint64_t hi = f.dram_addr + (uint64_t)(f.rows - 1) * f.dram_stride + f.row_bytes;
            cr_assert_eq(f.tag, (unsigned)NPU_TAG_Y);
            cr_assert(f.spm_addr == p->spm_c[0] || f.spm_addr == p->spm_c[1]);
            cr_assert(f.dram_addr >= b->a.c && hi <= c_end && f.dram_addr % 2 == 0);
            break;
        }
        default:
            cr_assert_fail("unexpected opcode %u", f.op);
        }
    }
    /* one overwrite (acc = 0) wave per output F-column block per m-tile */
    cr_assert_eq((uint64_t)fresh_waves, (uint64_t)p->m_tiles * cdivu((uint64_t)N, F));
}

Test(emit, programs_many_shapes_and_configs)
{
    static const int ss[] = {2, 8, 16};
    static const int dims[] = {1, 2, 3, 4, 5, 7, 13, 15, 16, 17, 31, 32, 33, 64, 97, 128, 129, 255, 300};
    uint64_t seed = 77;
    int nd = (int)(sizeof dims / sizeof dims[0]);
    for (int si = 0; si < 3; si++) {
        npu_cfg_t c = test_cfg(ss[si]);
        for (int it = 0; it < 120; it++) {
            int M = dims[test_rand(&seed) % (uint64_t)nd], N = dims[test_rand(&seed) % (uint64_t)nd];
            int K = dims[test_rand(&seed) % (uint64_t)nd], ta = it & 1, tb = (it >> 1) & 1;
            built_t b;
            build(&c, M, N, K, ta, tb, &b);
            check_bytes(&c, &b, M, N, K, ta, tb);
            check_tokens(&b, c.queue_depth);
            check_ranges(&c, &b, M, N, K, ta, tb);
            npu_prog_free(&b.prog);
        }
    }
}

Test(emit, small_program_exact_text)
{
    /* S=2 (F=4): M=5, N=6, K=9 -> Mt=8, Nt=8 (nb=2), Kc=12 (one chunk), one tile */
    npu_cfg_t c = test_cfg(2);
    built_t b;
    char line[160];
    static const char *const want[] = {
        "LOAD X rows=5 bytes=18 dram=0x001f40+18*r spm=0x0000+3*r", /* dense: pitch 2K */
        "LOAD W rows=9 bytes=12 dram=0x001f9a+12*r spm=0x0800+2*r [push_next]",
        "LDW FW k=4 n=4 spm=0x0800+2*r bank=0 mono [pop_prev]",
        "WAVE FW m=5 k=4 n=4 spm=0x0000+3*i bank=0 obuf=0",
        "LDW FW k=4 n=2 spm=0x0801+2*r bank=1 mono",
        "WAVE FW m=5 k=4 n=2 spm=0x0000+3*i bank=1 obuf=8",
        "LDW FW k=4 n=4 spm=0x0808+2*r bank=0 mono",
        "WAVE FW m=5 k=4 n=4 spm=0x0001+3*i bank=0 acc obuf=0",
        "LDW FW k=4 n=2 spm=0x0809+2*r bank=1 mono",
        "WAVE FW m=5 k=4 n=2 spm=0x0001+3*i bank=1 acc obuf=8",
        "LDW FW k=1 n=4 spm=0x0810+2*r bank=0 mono",
        "WAVE FW m=5 k=1 n=4 spm=0x0002+3*i bank=0 acc obuf=0",
        "LDW FW k=1 n=2 spm=0x0811+2*r bank=1 mono",
        "WAVE FW m=5 k=1 n=2 spm=0x0002+3*i bank=1 acc obuf=8 [push_prev]",
        "DRAIN rows=5 obuf=0 spm=0x1000+4*r",
        "DRAIN rows=5 obuf=8 spm=0x1002+4*r [push_next]",
        "STORE Y rows=5 bytes=24 spm=0x1000+4*r dram=0x002006+24*r [pop_prev push_prev]",
    };
    build(&c, 5, 6, 9, 0, 0, &b);
    cr_assert_eq(b.p.Mt, 8);
    cr_assert_eq(b.p.Nt, 8);
    cr_assert_eq(b.p.Kc, 12);
    cr_assert_eq(b.prog.n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < b.prog.n; i++) {
        npu_disasm(&b.prog.insn[i], line, sizeof line);
        cr_assert_str_eq(line, want[i], "insn %zu: got \"%s\"", i, line);
    }
    npu_prog_free(&b.prog);
}

Test(emit, pipelined_order_and_tokens_two_chunks_two_tiles)
{
    /* S=2: K=600 needs several chunks; M=200 needs several m-tiles (Mt <= OBUF_ROWS = 64) */
    npu_cfg_t c = test_cfg(2);
    built_t b;
    npu_fields_t f;
    int loads_seen = 0;
    build(&c, 200, 4, 600, 0, 0, &b);
    cr_assert(b.p.k_chunks >= 2 && b.p.m_tiles >= 3);
    /* program order (two chunks of lookahead): LOAD(0) LOAD(0) LOAD(1) LOAD(1) LOAD(2) LOAD(2)
     * then EXEC(0); the third chunk reuses buffer 0, so its first LOAD pops e2l */
    cr_assert_eq(npu_gemm_lookahead(&c), 2);
    for (int i = 0; i < 6; i++) {
        npu_decode(&b.prog.insn[i], &f);
        cr_assert_eq(f.op, (unsigned)NPU_OP_LOAD);
        loads_seen++;
    }
    npu_decode(&b.prog.insn[0], &f);
    cr_assert_eq(f.pop_next, 0u);
    npu_decode(&b.prog.insn[2], &f);
    cr_assert_eq(f.pop_next, 0u, "chunk 1 uses the other buffer: no e2l pop");
    npu_decode(&b.prog.insn[4], &f);
    cr_assert_eq(f.pop_next, 1u, "chunk 2 waits for EXEC(0) to free buffer 0 (its first LOAD)");
    /* the first chunk loads the smaller operand first (B: 4 columns against Mt rows), the others A, B */
    for (int g = 0; g <= 2; g++) {
        npu_decode(&b.prog.insn[2 * g + (g == 0)], &f);
        cr_assert_eq(f.tag, (unsigned)NPU_TAG_X, "chunk %d: its A LOAD", g);
        cr_assert_eq(f.spm_addr, b.p.spm_a[g % 2]);
        npu_decode(&b.prog.insn[2 * g + (g != 0)], &f);
        cr_assert_eq(f.tag, (unsigned)NPU_TAG_W, "chunk %d: its B LOAD", g);
    }
    npu_decode(&b.prog.insn[6], &f);
    cr_assert_eq(f.op, (unsigned)NPU_OP_LDW);
    cr_assert_eq(f.pop_prev, 1u);
    /* with shallow queues the lookahead drops to one chunk (no deadlock at depth 1) */
    c.queue_depth = 1;
    cr_assert_eq(npu_gemm_lookahead(&c), 1);
    cr_assert_eq(loads_seen, 6);
    npu_prog_free(&b.prog);
}

Test(emit, rejects_unencodable)
{
    npu_cfg_t c = test_cfg(8);
    built_t b;
    npu_prog_t prog;
    build(&c, 20, 20, 20, 0, 0, &b);
    npu_prog_init(&prog);
    b.a.a += 1; /* an odd address: not element-aligned */
    cr_assert_eq(npu_gemm_emit(&c, &b.p, &b.a, &prog), -1);
    npu_prog_free(&prog);
    b.a.a -= 1;
    b.a.pitch_a = 131074; /* a transposed LOAD's pitch the instruction cannot hold (2 x 65,537: its
                             rows do not separate; plain rows take a LOAD each: test_runtime) */
    b.a.transA = 1;
    cr_assert_eq(npu_gemm_emit(&c, &b.p, &b.a, &prog), -1);
    npu_prog_free(&prog);
    b.a.transA = 0;
    b.a.pitch_a = 40;
    b.a.c = 0xFFFFFFE0u; /* C address + offsets overflow 32 bits for the second m-tile */
    b.p.Mt = 16;
    b.p.m_tiles = 2;
    b.p.spm_a[1] = (unsigned)(b.p.Mt * (b.p.Kc / 16));
    b.p.spm_c[1] = 2048u + 2u * (unsigned)(b.p.Mt * b.p.nb);
    cr_assert_eq(npu_gemm_emit(&c, &b.p, &b.a, &prog), -1);
    npu_prog_free(&prog);
    b.p.Kc = 17; /* invalid plan */
    cr_assert_eq(npu_gemm_emit(&c, &b.p, &b.a, &prog), -1);
    npu_prog_free(&prog);
    npu_prog_free(&b.prog);
}

Test(emit, expect_counts_transposed_and_bursts)
{
    npu_cfg_t c = test_cfg(2); /* B = 8 bytes, F = 4, max burst 16 beats */
    npu_insn_t prog[3];
    npu_prog_expect_t e;
    npu_enc_load(&prog[0], NPU_TAG_X, 1, 10, 0, 0, 1, 20, 3 * 8);  /* 10 rows x 3 beats, transposed */
    npu_enc_load(&prog[1], NPU_TAG_DW, 0, 2, 0, 0, 20, 160, 21 * 8); /* 20 beats per row -> 2 bursts */
    npu_enc_store(&prog[2], NPU_TAG_PARTIAL, 3, 0, 0, 2, 10, 2 * 8);  /* 2 beats per row */
    npu_prog_expect(&c, prog, 3, &e);
    cr_assert_eq(e.rd_bytes[NPU_TAG_X], 10u * 3 * 8);
    cr_assert_eq(e.rd_bytes[NPU_TAG_DW], 2u * 20 * 8);
    cr_assert_eq(e.wr_bytes[NPU_TAG_PARTIAL], 3u * 2 * 8);
    cr_assert_eq(e.rd_bytes[NPU_TAG_PROG], 48u);
    cr_assert_eq(e.rd_bursts, 20u + 4u); /* transposed: 10 rows x 2 groups (2 + 1 beats), rows
                                            not adjacent (stride 3) */
    cr_assert_eq(e.wr_bursts, 3u);
    cr_assert_eq(e.spm_wr_words, 10u * 3 + 40u); /* transposed: C=10 SPM rows x ceil(10/4) words */
    cr_assert_eq(e.spm_rd_words, 6u);
    cr_assert_eq(e.insn_load, 2u);
    cr_assert_eq(e.insn_store, 1u);
    /* adjacent rows (stride = 2 beats = one group): one run per 4-row block: 10 rows = 4+4+2 */
    npu_enc_load(&prog[0], NPU_TAG_X, 1, 10, 0, 0, 1, 16, 2 * 8);
    npu_prog_expect(&c, prog, 1, &e);
    cr_assert_eq(e.rd_bursts, 3u);
    /* rows that cross 4 KiB take one more burst: 3 beats from 4096-16 -> 2 + 1 */
    npu_enc_load(&prog[0], NPU_TAG_X, 0, 2, 4096 - 16, 0, 1, 24, 512 * 8);
    npu_prog_expect(&c, prog, 1, &e);
    cr_assert_eq(e.rd_bursts, 2u + 2u);
    /* contiguous rows (dram_stride = row_bytes): one run of 2 x 160 bytes = 40 beats -> 16+16+8 */
    npu_enc_load(&prog[0], NPU_TAG_DW, 0, 2, 0, 0, 20, 160, 160);
    npu_prog_expect(&c, prog, 1, &e);
    cr_assert_eq(e.rd_bursts, 3u);
    cr_assert_eq(e.rd_bytes[NPU_TAG_DW], 40u * 8);
    /* dense 10-byte rows from an unaligned address: 7 rows = bytes [6, 76) = beats 0..9, one run */
    npu_enc_store(&prog[0], NPU_TAG_Y, 7, 6, 0, 2, 10, 10);
    npu_prog_expect(&c, prog, 1, &e);
    cr_assert_eq(e.wr_bursts, 1u);
    cr_assert_eq(e.wr_bytes[NPU_TAG_Y], 10u * 8);
}

/* First-divergence locator: for elements of GEMMs under each policy, the located DRAIN and WAVEs
 * really cover the element, and one WAVE per k-block (per S-deep k-half for 1G4C) is found. */
Test(emit, locate_first_divergence)
{
    npu_cfg_t c = test_cfg(8);
    const int M = 70, N = 24, K = 40; /* n-blocks 16 + 8 (skinny), k-blocks 16, 16, 8 */
    for (int pol = NPU_EMIT_FW; pol <= NPU_EMIT_1G4C; pol++) {
        npu_gemm_report_t rep;
        /* gemm_tiling's tiles (one K chunk of three k-blocks), which the checks below assume */
        cr_assert_eq(npu_gemm_compile_modes(&c, 1u << 24, M, N, K, 0, 0, pol | NPU_GEMM_SLICING_HEURISTIC, &rep),
                     NPU_GEMM_PASS);
        const int pts[3][2] = {{0, 0}, {69, 20}, {37, 9}};
        for (int q = 0; q < 3; q++) {
            npu_gemm_loc_t loc;
            char buf[200];
            int row = pts[q][0], col = pts[q][1];
            cr_assert_eq(npu_prog_locate_gemm(&c, &rep.plan, &rep.args, rep.prog.insn, rep.prog.n, row, col,
                                         &loc, buf, sizeof buf), 0, "policy %d C[%d][%d]", pol, row, col);
            cr_assert_eq(loc.n_block, (col % rep.plan.Nt) / 16);
            npu_fields_t d, w;
            cr_assert_eq(npu_decode(&rep.prog.insn[loc.drain_pc], &d), 0);
            cr_assert_eq(d.op, NPU_OP_DRAIN);
            cr_assert_eq(npu_decode(&rep.prog.insn[loc.wave_pc[1]], &w), 0);
            cr_assert_eq(w.op, NPU_OP_WAVE);
            cr_assert(loc.obuf_row >= d.obuf_addr && loc.obuf_row < d.obuf_addr + d.rows, "%s", buf);
            int kb = pol == NPU_EMIT_1G4C ? (K + 7) / 8 : (K + 15) / 16;
            cr_assert_eq(loc.waves, kb, "policy %d C[%d][%d]: %s", pol, row, col, buf);
            if (pol == NPU_EMIT_FLEXSA && col >= 16) /* the 8-wide n-block: VSW (k=16) then ISW (k=8) */
                cr_assert_eq(loc.modes, (1u << NPU_MODE_VSW) | (1u << NPU_MODE_ISW), "%s", buf);
            if (pol == NPU_EMIT_FW)
                cr_assert_eq(loc.modes, 1u << NPU_MODE_FW, "%s", buf);
            cr_assert(strstr(buf, "tile (") != NULL);
            /* the core(s) whose outputs hold the element */
            cr_assert(loc.cores != 0 && loc.cores < 16, "%s", buf);
            if (pol == NPU_EMIT_FW) /* both cores of the element's column */
                cr_assert_eq(loc.cores, (col % rep.plan.Nt) % 16 < 8 ? 0x5u : 0xAu, "%s", buf);
            if (pol == NPU_EMIT_FLEXSA && col >= 16) /* ISW: one core */
                cr_assert_eq(__builtin_popcount(loc.cores), 1, "%s", buf);
            cr_assert(strstr(buf, ", core ") != NULL, "%s", buf);
        }
        npu_gemm_loc_t out;
        cr_assert_eq(npu_prog_locate_gemm(&c, &rep.plan, &rep.args, rep.prog.insn, rep.prog.n, M, 0, &out,
                                     NULL, 0), -1, "row M is outside C");
        npu_gemm_report_free(&rep);
    }
}

/* The swapped form's lowering (gemm_swap.h): A' = B, B' = A with the transposes flipped, the
 * pitches and tags with them, C kept and written transposed. */
Test(emit, swap_args)
{
    npu_gemm_args_t a;
    memset(&a, 0, sizeof a);
    a.transA = 0;
    a.transB = 1;
    a.a = 0x100;
    a.b = 0x2000;
    a.c = 0x30000;
    a.pitch_a = 14;
    a.pitch_b = 22;
    a.pitch_c = 40;
    a.tag_a = NPU_TAG_DY;
    a.swap = 1;
    npu_gemm_args_t s = npu_gemm_swap_args(&a);
    cr_assert(s.transA == 0 && s.transB == 1, "transA' = !transB, transB' = !transA");
    cr_assert(s.a == 0x2000 && s.b == 0x100 && s.c == 0x30000);
    cr_assert(s.pitch_a == 22 && s.pitch_b == 14 && s.pitch_c == 40);
    cr_assert(s.tag_a == NPU_TAG_W && s.tag_b == NPU_TAG_DY, "tags follow the tensors (0: the defaults)");
    cr_assert(s.trans_c == 1 && s.swap == 0);
    npu_cfg_t c = test_cfg(8);
    cr_assert(npu_gemm_swap_candidate(&c, 5, 147, 8192), "tiny M, larger N");
    cr_assert(!npu_gemm_swap_candidate(&c, 16, 147, 8192), "M = 2S: waves already 2S rows");
    cr_assert(!npu_gemm_swap_candidate(&c, 5, 5, 8192), "N not larger");
}
