/* gemm_emit.c - GEMM program emission; see gemm_emit.h. */
#include "compile/gemm/gemm_emit.h"

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_swap.h"
#include "prog/prog_builder.h"

#include <stdio.h>
#include <string.h>

static int imin(int a, int b) { return a < b ? a : b; }

unsigned npu_gemm_res_words(const npu_cfg_t *cfg, int cols, int c32)
{
    unsigned F = 2u * (unsigned)cfg->s, blocks = ((unsigned)cols + F - 1) / F;
    return c32 ? 2 * blocks : blocks;
}

/* One resident operand's check: rows x cols at word spm within [limit, the SPM's end). */
static int res_fits(const npu_cfg_t *cfg, const char *what, int on, int trans, unsigned spm, int rows,
                    int cols, int c32, unsigned limit, char *why, size_t n)
{
    /* a transposed operand's rows are its stored ones (cols x rows), LOAD_SPMed per tile */
    uint64_t end = (uint64_t)spm + (uint64_t)(trans ? cols : rows) * npu_gemm_res_words(cfg, trans ? rows : cols, c32);
    if (!on)
        return 0;
    if (spm < limit || end > (uint64_t)npu_cfg_spm_words(cfg))
        snprintf(why, n, "resident %s: words %u..%llu outside the resident area %u..%d", what, spm,
                 (unsigned long long)end, limit, npu_cfg_spm_words(cfg));
    else
        return 0;
    return -1;
}

int npu_gemm_res_check(const npu_cfg_t *cfg, int M, int N, int K, const npu_gemm_args_t *a,
                       char *why, size_t n)
{
    if (a->spm_limit % (unsigned)cfg->spm_bank_words || a->spm_limit > (unsigned)npu_cfg_spm_words(cfg)) {
        snprintf(why, n, "spm_limit %u is not a bank boundary within the SPM", a->spm_limit);
        return -1;
    }
    return res_fits(cfg, "A", a->res_a, a->transA, a->spm_ra, M, K, 0, a->spm_limit, why, n) ||
                   res_fits(cfg, "B", a->res_b, a->transB, a->spm_rb, K, N, 0, a->spm_limit, why, n) ||
                   res_fits(cfg, "C", a->res_c, 0, a->spm_rc, M, N, 1, a->spm_limit, why, n)
               ? -1
               : 0;
}

void npu_gemm_pitches(int M, int N, int K, int transA, int transB, unsigned *pitch_a,
                      unsigned *pitch_b, unsigned *pitch_c)
{
    *pitch_a = 2u * (unsigned)(transA ? M : K);
    *pitch_b = 2u * (unsigned)(transB ? K : N);
    *pitch_c = 4u * (unsigned)N;
}

/* One step of the program per K chunk g (prog_builder.h): its loads, its LDW/WAVEs and, at the
 * tile's last chunk, the tile's DRAINs and STORE. A GEMM can have millions of chunks, so the
 * steps stream through a ring (npu_pb_stream_*); s: the step being built. */
typedef struct emitter {
    npu_pb_t b;
    const npu_cfg_t *cfg;
    const npu_gemm_plan_t *p;
    const npu_gemm_args_t *a;
    npu_pb_stream_t st;
    npu_pb_step_t *s;
} emitter_t;

typedef struct chunk {
    int t, c;        /* tile index, chunk index within the tile */
    int mi, ni;      /* the tile's m-tile and n-tile */
    int m0, n0, k0;  /* origins */
    int m_act, n_act, kc_act;
} chunk_t;

static chunk_t chunk_at(const npu_gemm_plan_t *p, int g)
{
    chunk_t ch;
    ch.t = g / p->k_chunks;
    ch.c = g % p->k_chunks;
    npu_gemm_tile_at(p, ch.t, &ch.mi, &ch.ni);
    ch.m0 = npu_gemm_m0(p, ch.mi);
    ch.n0 = ch.ni * p->Nt;
    ch.k0 = ch.c * p->Kc;
    ch.m_act = npu_gemm_mrows(p, ch.mi);
    ch.n_act = imin(p->Nt, p->N - ch.n0);
    ch.kc_act = imin(p->Kc, p->K - ch.k0);
    return ch;
}

static unsigned tag_or(unsigned tag, unsigned dflt) { return tag ? tag : dflt; }

/* Chunk g's A: the SPM word of its first row's first k-block, and the words between its rows
 * (its buffer, or the resident matrix at row m0, k-block k0 / 2S; a resident transposed A is
 * LOAD_SPMed into the buffer, emit_loads). */
static unsigned a_at(const emitter_t *e, const chunk_t *ch, long g, unsigned *stride)
{
    const npu_gemm_plan_t *p = e->p;
    if (e->a->res_a && !e->a->transA) {
        *stride = npu_gemm_res_words(e->cfg, p->K, 0);
        return e->a->spm_ra + (unsigned)ch->m0 * *stride + (unsigned)(ch->k0 / p->F);
    }
    *stride = (unsigned)(p->Kc / p->F);
    return npu_gemm_spm_a(p, g);
}

/* Chunk g's B: the SPM word of its row k0's first n-block, and the words between its rows. */
static unsigned b_at(const emitter_t *e, const chunk_t *ch, long g, unsigned *stride)
{
    const npu_gemm_plan_t *p = e->p;
    if (e->a->res_b && !e->a->transB) {
        *stride = npu_gemm_res_words(e->cfg, p->N, 0);
        return e->a->spm_rb + (unsigned)ch->k0 * *stride + (unsigned)(ch->n0 / p->F);
    }
    *stride = (unsigned)p->nb;
    return npu_gemm_spm_b(p, g);
}

/* The tile of chunk ch in C: its staging buffer, or the resident matrix at row m0, column n0. */
static unsigned c_at(const emitter_t *e, const chunk_t *ch, unsigned *stride)
{
    const npu_gemm_plan_t *p = e->p;
    if (e->a->res_c) {
        *stride = npu_gemm_res_words(e->cfg, p->N, 1);
        return e->a->spm_rc + (unsigned)ch->m0 * *stride + 2u * (unsigned)(ch->n0 / p->F);
    }
    if (p->cband) { /* m-tile mi's band, the tile at its columns */
        *stride = npu_gemm_res_words(e->cfg, p->N, 1);
        return p->spm_c[ch->mi % 2] + 2u * (unsigned)(ch->n0 / p->F);
    }
    *stride = 2u * (unsigned)p->nb;
    return p->spm_c[ch->t % 2];
}

/* Does chunk ch's tile end with a STORE? Every tile, or with the C band its m-tile's last. */
static int stores_tile(const npu_gemm_plan_t *p, const chunk_t *ch)
{
    return !p->cband || ch->ni == p->n_tiles - 1;
}

/* A LOAD (or STORE) of `rows` rows of row_bytes at DRAM pitch `pitch` to (from) SPM words spm +
 * r*spm_stride: one instruction, or one per row when the instruction cannot hold the pitch
 * (npu_dram_stride_shift: rows of more than 65,535 elements with too few factors of two; a
 * transposed LOAD's rows are not separable, so its encoder refuses such a pitch). */
static int pitch_too_long(unsigned pitch) { return npu_dram_stride_shift(pitch) < 0; }

static void put_rows(emitter_t *e, npu_prog_t *l, int store, unsigned tag, unsigned rows, uint64_t dram,
                     unsigned spm, unsigned spm_stride, unsigned row_bytes, unsigned pitch)
{
    npu_insn_t in;
    int one = pitch_too_long(pitch); /* one row per instruction, which needs no pitch (a chunk of
                                      * one row, K's last, too) */
    unsigned n = one ? rows : 1, r_each = one ? 1 : rows;
    for (unsigned r = 0; r < n; r++) {
        uint32_t d = npu_pb_dram(&e->b, dram + (uint64_t)r * pitch);
        int rc = store ? npu_enc_store(&in, tag, r_each, d, spm + r * spm_stride, spm_stride, row_bytes,
                                       one ? 0 : pitch)
                       : npu_enc_load(&in, tag, 0, r_each, d, spm + r * spm_stride, spm_stride, row_bytes,
                                      one ? 0 : pitch);
        npu_pb_put(&e->b, l, rc, &in, 0);
    }
}

/* The transposed LOAD_SPM of a resident operand's tile (rows of its stored matrix at `first`,
 * `stride` words apart, row_bytes from the word holding element col0, col0 a multiple of 2S: Mt
 * and Kc are) into buf, buf_stride words a row of the transposed tile. */
static void put_spm_tr(emitter_t *e, npu_prog_t *l, unsigned tag, unsigned rows, unsigned first, unsigned stride,
                       unsigned col0, unsigned buf, unsigned buf_stride, unsigned row_bytes)
{
    npu_insn_t in;
    unsigned src = first + col0 / (2u * (unsigned)e->cfg->s);
    npu_pb_put(&e->b, l, npu_enc_load_spm(&in, tag, 1, rows, src, stride, buf, buf_stride, row_bytes), &in, 0);
}

/* Does chunk g move B into its buffer (not read in place from resident rows, and not held by its
 * resident band or its buffer from an earlier chunk)? */
static int chunk_loads_b(const emitter_t *e, int g)
{
    return !(e->a->res_b && !e->a->transB) && npu_gemm_loads_b(e->p, g);
}

/* Chunk g's LOAD of A (unless resident or still in its buffer). */
static void emit_load_a(emitter_t *e, int g, const chunk_t *ch, npu_prog_t *l)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    unsigned wpr = (unsigned)(p->Kc / p->F), sa = npu_gemm_spm_a(p, g);
    npu_insn_t in;
    if ((a->res_a && !a->transA) || !npu_gemm_loads_a(p, g)) {
        /* read in place from its resident rows, or its resident band holds it */
    } else if (a->res_a) {
        unsigned st = npu_gemm_res_words(e->cfg, p->M, 0);
        put_spm_tr(e, l, tag_or(a->tag_a, NPU_TAG_X), (unsigned)ch->kc_act, a->spm_ra + (unsigned)ch->k0 * st, st,
                   (unsigned)ch->m0, sa, wpr, 2u * (unsigned)ch->m_act);
    } else if (!a->transA) {
        put_rows(e, l, 0, tag_or(a->tag_a, NPU_TAG_X), (unsigned)ch->m_act,
                 a->a + (uint64_t)ch->m0 * a->pitch_a + 2ull * ch->k0, sa, wpr, 2u * (unsigned)ch->kc_act,
                 a->pitch_a);
    } else {
        int rc = npu_enc_load(&in, tag_or(a->tag_a, NPU_TAG_X), 1, (unsigned)ch->kc_act,
                              npu_pb_dram(&e->b, a->a + (uint64_t)ch->k0 * a->pitch_a + 2ull * ch->m0),
                              sa, wpr, 2u * (unsigned)ch->m_act, a->pitch_a);
        npu_pb_put(&e->b, l, rc, &in, 0);
    }
}

/* Chunk g's LOAD of B (unless resident or still in its buffer). */
static void emit_load_b(emitter_t *e, int g, const chunk_t *ch, npu_prog_t *l)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    unsigned sb = npu_gemm_spm_b(p, g);
    npu_insn_t in;
    if (!chunk_loads_b(e, g)) {
        /* read in place from its resident rows, or its resident band holds it */
    } else if (a->res_b) {
        unsigned st = npu_gemm_res_words(e->cfg, p->K, 0);
        put_spm_tr(e, l, tag_or(a->tag_b, NPU_TAG_W), (unsigned)ch->n_act, a->spm_rb + (unsigned)ch->n0 * st, st,
                   (unsigned)ch->k0, sb, (unsigned)p->nb, 2u * (unsigned)ch->kc_act);
    } else if (!a->transB) {
        put_rows(e, l, 0, tag_or(a->tag_b, NPU_TAG_W), (unsigned)ch->kc_act,
                 a->b + (uint64_t)ch->k0 * a->pitch_b + 2ull * ch->n0, sb, (unsigned)p->nb,
                 2u * (unsigned)ch->n_act, a->pitch_b);
    } else {
        int rc = npu_enc_load(&in, tag_or(a->tag_b, NPU_TAG_W), 1, (unsigned)ch->n_act,
                              npu_pb_dram(&e->b, a->b + (uint64_t)ch->n0 * a->pitch_b + 2ull * ch->k0),
                              sb, (unsigned)p->nb, 2u * (unsigned)ch->kc_act, a->pitch_b);
        npu_pb_put(&e->b, l, rc, &in, 0);
    }
}

/* LOAD of chunk g's A and B into their buffers (npu_gemm_spm_a / _b; transposed by the DMA when
 * stored transposed; a resident transposed operand by LOAD_SPMs from its rows), each unless its
 * resident band, or its rows in place, hold it already. */
static int emit_loads(emitter_t *e, int g)
{
    chunk_t ch = chunk_at(e->p, g);
    npu_prog_t *l = &e->s->ld[0];
    /* The first chunk loads the smaller operand first. The LOAD engine holds two descriptors (it
     * takes the next once the last one's bursts are out): small, large lets the next chunk's
     * LOAD in as soon as the small one is done, so its bursts go out during the large one's
     * stream; large, small, large would issue the third only when the first is done and wait
     * out its DRAM latency (4096 x 5 x 5: 30 cycles). Later chunks keep A, B: they follow a
     * stream already, either order exposes the same. B first in its own load group, with its
     * own L2E token to the first LDW (split_l2e), so the weights go into the array while A
     * streams. Returns 1 for that split. */
    if (g == 0 && e->a->modes != NPU_EMIT_1G4C &&
        (uint64_t)ch.kc_act * (uint64_t)ch.n_act < (uint64_t)ch.m_act * (uint64_t)ch.kc_act) {
        emit_load_b(e, g, &ch, l);
        if (!chunk_loads_b(e, g)) { /* B resident: A alone */
            emit_load_a(e, g, &ch, l);
            npu_pb_or_sync(&e->b, l, NPU_OP_SYNC_L);
            return 0;
        }
        emit_load_a(e, g, &ch, &e->s->ld[1]);
        return e->s->ld[1].n != 0;
    }
    emit_load_a(e, g, &ch, l);
    emit_load_b(e, g, &ch, l);
    npu_pb_or_sync(&e->b, l, NPU_OP_SYNC_L); /* both resident: the group still carries the tokens */
    return 0;
}

/* OBUF rows per n-block region: Mt, or Mt + 1 for 1G4C when Mt is odd (its two n-halves take
 * ceil(m/2) rows each). */
static unsigned region_rows(const emitter_t *e)
{
    unsigned mt = (unsigned)e->p->Mt;
    return e->a->modes == NPU_EMIT_1G4C ? mt + (mt & 1u) : mt;
}

/* 1G4C: the S x S sub-tiles of one 2S x 2S (k, n) block, each as four per-core LDWs and one ISW
 * WAVE (gemm_emit.h), into the EXEC list l. */
static void emit_1g4c_block(emitter_t *e, npu_prog_t *l, const chunk_t *ch, int g, int kb, int j,
                            int k, int n)
{
    const npu_gemm_plan_t *p = e->p;
    unsigned S = (unsigned)e->cfg->s, wpr, nbs;
    unsigned sa = a_at(e, ch, g, &wpr), sb = b_at(e, ch, g, &nbs);
    unsigned ob = npu_pb_obuf_half(&e->b, ch->t) + (unsigned)j * region_rows(e);
    unsigned ha = ((unsigned)ch->m_act + 1) / 2;
    int kh_n = (k + (int)S - 1) / (int)S, nh_n = (n + (int)S - 1) / (int)S;
    npu_insn_t in;
    for (int kh = 0; kh < kh_n; kh++)
        for (int nh = 0; nh < nh_n; nh++) {
            unsigned kk = (unsigned)imin((int)S, k - kh * (int)S);
            unsigned nn = (unsigned)imin((int)S, n - nh * (int)S);
            unsigned bank = npu_pb_bank(&e->b);
            int acc = ch->k0 + kb * p->F + kh * (int)S > 0;
            for (unsigned c = 0; c < 4; c++) {
                int rc = npu_enc_ldw_cores(&in, bank, NPU_MODE_ISW,
                                           sb + (unsigned)(kb * p->F + kh * (int)S) * nbs + (unsigned)j,
                                           nbs, kk, nn, 1u << c);
                if (rc == 0 && nh)
                    rc = npu_insn_lane_hi(&in);
                npu_pb_put(&e->b, l, rc, &in, 0);
            }
            int rc = npu_enc_wave(&in, bank, NPU_MODE_ISW, acc, (unsigned)ch->m_act,
                                  sa + (unsigned)kb, wpr, kk, nn, ob + (unsigned)nh * ha);
            if (rc == 0 && kh)
                rc = npu_insn_lane_hi(&in);
            npu_pb_put(&e->b, l, rc, &in, 0);
        }
}

/* The (k-block, n-block) order of chunk g's waves, as index i -> kb = i / nblocks, j = i % nblocks
 * of the plain order. FW and 1G4C: k-blocks in order, n-blocks in order. FlexSA: serpentine, so
 * that consecutive waves share their mode where they can and the mode changes cost less (docs/datapath.md
 * §2: a change away from FW, or from HSW/VSW to another mode, spaces the waves by S or 2S; into
 * FW or out of ISW it is free): the n-blocks run backwards in odd k-blocks, and every other chunk
 * runs the whole sequence backwards (it then starts in the mode the previous one ended in). With
 * the four modes of one tile (K and N of two 2S-blocks, the second partial: FW, VSW, ISW, HSW,
 * then HSW, ISW, VSW, FW) that is 1.5 gaps of S per tile instead of three. The sums are the same
 * in any order (int32 wrap-around): the first wave of each OBUF region in the chunk starts it. */
int npu_gemm_enc_ldw(npu_insn_t *in, int modes, unsigned bank, unsigned mode, unsigned spm, unsigned stride,
                     unsigned k, unsigned n)
{
    int rc = npu_enc_ldw(in, bank, mode, spm, stride, k, n);
    return rc == 0 && modes == NPU_EMIT_FW ? npu_insn_ldw_mono(in) : rc;
}

int npu_gemm_block_at(int modes, long g, int i, int kblocks, int nblocks)
{
    int kb, j;
    if (modes == NPU_EMIT_FLEXSA && g % 2)
        i = kblocks * nblocks - 1 - i;
    kb = i / nblocks;
    j = i % nblocks;
    if (modes == NPU_EMIT_FLEXSA && kb % 2)
        j = nblocks - 1 - j;
    return kb * nblocks + j;
}

static int block_at(const emitter_t *e, int g, int i, int kblocks, int nblocks)
{
    return npu_gemm_block_at(e->a->modes, g, i, kblocks, nblocks);
}

size_t npu_gemm_kwaves(const npu_gemm_plan_t *p, int modes, int S, int mi, int ni, int *k0, int *k1,
                       size_t max)
{
    long t = p->order ? (long)ni * p->m_tiles + mi : (long)mi * p->n_tiles + ni;
    int step = modes == NPU_EMIT_1G4C ? S : p->F; /* 1G4C: an ISW wave per S-deep k-half */
    size_t n = 0;
    for (int c = 0; c < p->k_chunks; c++) {
        int kc0 = c * p->Kc, kc_act = imin(p->Kc, p->K - kc0);
        int kblocks = (kc_act + p->F - 1) / p->F;
        for (int i = 0; i < kblocks; i++) {
            /* the k-block of the region's i-th wave in the chunk (any n-block: one per k-block) */
            int kb = npu_gemm_block_at(modes, t * p->k_chunks + c, i, kblocks, 1);
            for (int lo = kc0 + kb * p->F; lo < imin(kc0 + (kb + 1) * p->F, p->K); lo += step) {
                if (n < max) {
                    k0[n] = lo;
                    k1[n] = imin(lo + step, imin(kc0 + (kb + 1) * p->F, p->K));
                }
                n++;
            }
        }
    }
    return n;
}

/* Chunk g's LDW/WAVEs (its A and B buffers, OBUF half t%2); the first wave of each OBUF
 * region in the chunk starts its accumulation unless an earlier chunk of the tile did. */
static void emit_exec(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    chunk_t ch = chunk_at(p, g);
    unsigned wpr, nbs, sa = a_at(e, &ch, g, &wpr), sb = b_at(e, &ch, g, &nbs);
    int kblocks = (ch.kc_act + p->F - 1) / p->F, nblocks = (ch.n_act + p->F - 1) / p->F;
    int nw = kblocks * nblocks;
    npu_prog_t *l = &e->s->ex;
    npu_insn_t in;
    for (int i = 0; i < nw; i++) {
        int b = block_at(e, g, i, kblocks, nblocks), kb = b / nblocks, j = b % nblocks;
        int k = imin(p->F, ch.kc_act - kb * p->F);
        int n = imin(p->F, ch.n_act - j * p->F);
        int acc = ch.k0 > 0;
        for (int i2 = 0; i2 < i && !acc; i2++) /* an earlier wave of this chunk into region j */
            acc = block_at(e, g, i2, kblocks, nblocks) % nblocks == j;
        if (e->a->modes == NPU_EMIT_1G4C) {
            emit_1g4c_block(e, l, &ch, g, kb, j, k, n);
            continue;
        }
        unsigned mode = e->a->modes == NPU_EMIT_FLEXSA ? (unsigned)npu_flexsa_mode(e->cfg->s, n, k)
                                                       : NPU_MODE_FW;
        unsigned bank = npu_pb_bank(&e->b);
        npu_pb_put(&e->b, l,
                   npu_gemm_enc_ldw(&in, e->a->modes, bank, mode, sb + (unsigned)(kb * p->F) * nbs + (unsigned)j,
                                    nbs, (unsigned)k, (unsigned)n),
                   &in, 0);
        npu_pb_put(&e->b, l,
                   npu_enc_wave(&in, bank, mode, acc, (unsigned)ch.m_act, sa + (unsigned)kb, wpr,
                                (unsigned)k, (unsigned)n,
                                npu_pb_obuf_half(&e->b, ch.t) + (unsigned)(j * p->Mt)),
                   &in, 0);
    }
}

/* The packed form of the tile of chunk ch (docs/isa.md "DRAIN" pack), or 0 segments: when its rows
 * are all of C's (dense, pitch 4N, not transposed, staged alone in C(t%2)) and shorter than an
 * OBUF row, a row of n < 2S int32 lanes takes n/S words instead of two, so the STORE moves whole
 * words at the DMA's word rate instead of one or two rows a cycle. The DRAIN writes 2 (skinny: 4)
 * segments of the tile's rows, each of seg_words whole words, *pitch words apart (a power of two:
 * its four words a cycle in four sub-banks; plain, not the sub-bank code of bit 0, so that its
 * two-word writes keep apart too); the STORE writes them as rows contiguous in DRAM. */
static int packs_tile(const emitter_t *e, const chunk_t *ch, unsigned *seg_words, unsigned *pitch)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    unsigned S = (unsigned)e->cfg->s, n = (unsigned)ch->n_act, m = (unsigned)ch->m_act;
    int skinny = a->modes == NPU_EMIT_FLEXSA && n <= S;
    unsigned segs = skinny ? 4u : 2u, hn = m / segs * n, P = 1, k = 0;
    if (p->cband || a->res_c || a->trans_c || ch->n0 != 0 || ch->n_act != p->N || a->pitch_c != 4u * n ||
        a->modes == NPU_EMIT_1G4C || n >= 2 * S || m % segs || hn % S)
        return 0;
    while (P < hn / S || (!skinny && k % 3 == 0))
        P *= 2, k++;
    if (segs * P > npu_gemm_c_words(p))
        return 0;
    *seg_words = hn / S;
    *pitch = P;
    return (int)segs;
}

/* The DRAIN(s) of n-block j of the tile of chunk ch into its staging buffer at cs. */
static void emit_drain_block(emitter_t *e, npu_prog_t *l, const chunk_t *ch, int j, unsigned cs,
                             unsigned stride)
{
    const npu_gemm_plan_t *p = e->p;
    int n = imin(p->F, ch->n_act - j * p->F);
    unsigned ob = npu_pb_obuf_half(&e->b, ch->t) + (unsigned)j * region_rows(e);
    unsigned ha = ((unsigned)ch->m_act + 1) / 2, lo = (unsigned)ch->m_act - ha;
    npu_insn_t in;
    unsigned seg_words, pitch;
    int segs = packs_tile(e, ch, &seg_words, &pitch);
    if (segs) { /* one n-block: its segments from cs */
        int rc = segs == 4 ? npu_enc_drain_split(&in, ha, ob, cs, pitch, ha, lo)
                           : npu_enc_drain(&in, (unsigned)ch->m_act, ob, cs, pitch);
        if (rc == 0)
            rc = npu_insn_drain_pack(&in, (unsigned)n);
        npu_pb_put(&e->b, l, rc, &in, 0);
    } else if (e->a->modes == NPU_EMIT_1G4C) { /* one split DRAIN per n-half (C words 2j, 2j+1) */
        int nh_n = (n + e->cfg->s - 1) / e->cfg->s;
        for (int nh = 0; nh < nh_n; nh++)
            npu_pb_put(&e->b, l,
                       npu_enc_drain_split(&in, ha, ob + (unsigned)nh * ha,
                                           cs + 2u * (unsigned)j + (unsigned)nh, stride, ha, lo),
                       &in, 0);
    } else if (e->a->modes == NPU_EMIT_FLEXSA && n <= e->cfg->s) { /* skinny (VSW/ISW waves) */
        npu_pb_put(&e->b, l, npu_enc_drain_split(&in, ha, ob, cs + 2u * (unsigned)j, stride, ha, lo), &in, 0);
    } else {
        npu_pb_put(&e->b, l, npu_enc_drain(&in, (unsigned)ch->m_act, ob, cs + 2u * (unsigned)j, stride), &in,
                   0);
    }
}

/* After the tile's last chunk g: its DRAINs into staging buffer C(t%2), then its STORE. FlexSA:
 * the DRAINs in the order their regions receive their last wave (the drain engine takes them in
 * order and each starts as its rows become final): the n-blocks in the order of the chunk's
 * last k-block pass (block_at). */
static void emit_drain_store(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    chunk_t ch = chunk_at(p, g);
    unsigned stride, cs = c_at(e, &ch, &stride);
    int nblocks = (ch.n_act + p->F - 1) / p->F;
    int kblocks = (ch.kc_act + p->F - 1) / p->F, nw = kblocks * nblocks;
    for (int jj = 0; jj < nblocks; jj++) {
        int j = a->modes == NPU_EMIT_FLEXSA ? block_at(e, g, nw - nblocks + jj, kblocks, nblocks) % nblocks
                                            : jj;
        emit_drain_block(e, &e->s->ex, &ch, j, cs, stride);
    }
    if (!stores_tile(p, &ch)) /* the C band's m-tile goes on: stored with its last tile */
        return;
    if (p->cband) { /* the band: its Mt rows of all of N, whole rows */
        cs = p->spm_c[ch.mi % 2];
        put_rows(e, &e->s->st, 1, tag_or(a->tag_c, NPU_TAG_Y), (unsigned)ch.m_act, a->c + (uint64_t)ch.m0 * a->pitch_c,
                 cs, stride, 4u * (unsigned)p->N, a->pitch_c);
        return;
    }
    if (a->res_c) { /* the tile stays in the SPM; the STORE group still carries the tokens */
        npu_pb_or_sync(&e->b, &e->s->st, NPU_OP_SYNC_S);
        return;
    }
    if (a->trans_c) { /* the tile is C^T's: C rows n0.., columns m0.. */
        npu_insn_t in;
        int rc = npu_enc_store_tr(&in, tag_or(a->tag_c, NPU_TAG_Y), (unsigned)ch.n_act,
                                  npu_pb_dram(&e->b, a->c + (uint64_t)ch.n0 * a->pitch_c + 4ull * ch.m0), cs,
                                  stride, 4u * (unsigned)ch.m_act, a->pitch_c);
        npu_pb_put(&e->b, &e->s->st, rc, &in, 0);
        return;
    }
    unsigned seg_words, pitch;
    int segs = packs_tile(e, &ch, &seg_words, &pitch);
    if (segs) { /* the packed segments: rows of seg_words words, contiguous in DRAM */
        unsigned seg_bytes = seg_words * 4u * (unsigned)e->cfg->s;
        put_rows(e, &e->s->st, 1, tag_or(a->tag_c, NPU_TAG_Y), (unsigned)segs, a->c + (uint64_t)ch.m0 * a->pitch_c,
                 cs, pitch, seg_bytes, seg_bytes);
        return;
    }
    put_rows(e, &e->s->st, 1, tag_or(a->tag_c, NPU_TAG_Y), (unsigned)ch.m_act,
             a->c + (uint64_t)ch.m0 * a->pitch_c + 4ull * ch.n0, cs, stride, 4u * (unsigned)ch.n_act, a->pitch_c);
}

/* May chunk g's first LDW run ahead of its LOADs (the L2E wait on its first WAVE instead)? When the
 * chunk loads no B (its buffer or band holds it, or B is read in place), so its LDWs read what an
 * earlier chunk's EXEC waited for: the weights are then in the array when the A rows arrive
 * (skinny GEMMs: ~10 cycles a chunk on the path LOAD -> wave -> buffer free -> next LOAD).
 * Not 1G4C, whose first instructions are its own. */
static int ldw_ahead(const emitter_t *e, int g)
{
    return e->a->modes != NPU_EMIT_1G4C && !chunk_loads_b(e, g) && e->s->ex.n >= 2;
}

/* Chunk g's tokens (gemm_emit.h): its EXEC waits for its loads, which wait (g >= 2) for chunk
 * g-2's EXEC to free their buffers; every chunk's last wave frees them. At the tile's end the
 * DRAINs wait (t >= 2) for the STORE of tile t-2 (the same staging buffer), the STORE for the
 * DRAINs; every STORE frees its buffer. */
static void emit_chunk(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    npu_pb_step_t *s = e->s = npu_pb_stream_step(&e->st);
    chunk_t ch = chunk_at(p, g);
    npu_pb_context(&e->b, "chunk %d (tile %d)", g, ch.t);
    int split_l2e = emit_loads(e, g);
    emit_exec(e, g);
    s->push_e2l = s->ex.n - 1;
    s->free = 1u << NPU_PB_E2L;
    if (split_l2e && s->ex.n >= 2) { /* the first LDW waits for B, the first WAVE for A */
        npu_pb_wait(&e->b, s, NPU_PB_L2E, 0, 0, 0);
        npu_pb_wait(&e->b, s, NPU_PB_L2E, 0, 1, 1);
    } else {
        npu_pb_wait(&e->b, s, NPU_PB_L2E, 0, 0, ldw_ahead(e, g) ? 1 : 0);
    }
    if (g >= 2)
        npu_pb_wait(&e->b, s, NPU_PB_E2L, g - 2, 0, 0);
    if (ch.c == p->k_chunks - 1) {
        size_t first_drain = s->ex.n;
        emit_drain_store(e, g);
        if (p->cband) { /* band mi % 2 was last stored by m-tile mi - 2 (its last chunk) */
            if (ch.mi >= 2)
                npu_pb_wait(&e->b, s, NPU_PB_S2E, (long)(ch.mi - 1) * p->n_tiles * p->k_chunks - 1, 0,
                            first_drain);
        } else if (ch.t >= 2) {
            npu_pb_wait(&e->b, s, NPU_PB_S2E, g - 2 * p->k_chunks, 0, first_drain);
        }
        if (stores_tile(p, &ch)) {
            s->push_e2s = s->ex.n - 1;
            s->free |= 1u << NPU_PB_S2E;
            npu_pb_wait(&e->b, s, NPU_PB_E2S, 0, 0, 0);
        }
    }
}

int npu_gemm_lookahead(const npu_cfg_t *cfg)
{
    /* Two chunks of loads may wait in the LOAD queue (4 instructions) while the fetcher moves on. */
    return cfg->queue_depth >= 4 ? 2 : 1;
}

/* npu_gemm_lookahead, but one chunk when two chunks' LOADs do not fit the LOAD queue (rows past
 * a pitch the instruction cannot hold take one LOAD each, put_rows): LOAD(g+2) waits for EXEC(g), which the fetcher
 * would never reach behind a full LOAD queue. */
static int lookahead(const npu_cfg_t *cfg, const npu_gemm_plan_t *p, const npu_gemm_args_t *a)
{
    long per_chunk = (!a->transA && pitch_too_long(a->pitch_a) ? p->Mt : 1) +
                     (!a->transB && pitch_too_long(a->pitch_b) ? p->Kc : 1);
    return 2 * per_chunk > cfg->queue_depth ? 1 : npu_gemm_lookahead(cfg);
}

int npu_gemm_emit(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                  npu_prog_t *out)
{
    emitter_t e;
    int total;
    npu_gemm_args_t swapped;
    if (npu_gemm_plan_check(cfg, plan) != 0)
        return -1;
    if (args->swap && (args->res_a || args->res_b || args->res_c))
        return -1; /* resident operands are laid out for the plain form */
    if (plan->cband && (args->swap || args->trans_c || args->res_c))
        return -1; /* the C band stores whole rows of the plain form's C */
    if (args->swap) { /* C^T = B^T A^T: the plan's operands are B^T and A^T */
        swapped = npu_gemm_swap_args(args);
        args = &swapped;
    }
    memset(&e, 0, sizeof e);
    npu_pb_init(&e.b, cfg);
    e.cfg = cfg;
    e.p = plan;
    e.a = args;
    if (args->a % 2u || args->b % 2u || args->c % 2u) /* element-aligned (dense tensors) */
        return -1;
    if (args->modes < NPU_EMIT_FW || args->modes > NPU_EMIT_1G4C)
        return -1;
    char why[160];
    npu_cfg_t below = *cfg; /* the GEMM's own buffers: below the resident area */
    below.spm_banks = args->spm_limit ? (int)(args->spm_limit / (unsigned)cfg->spm_bank_words) : cfg->spm_banks;
    if (npu_gemm_res_check(cfg, plan->M, plan->N, plan->K, args, why, sizeof why) ||
        npu_gemm_plan_check(&below, plan) != 0)
        return -1;
    /* 1G4C with an odd Mt needs one more OBUF row per n-block */
    if (region_rows(&e) * (unsigned)plan->nb > (unsigned)cfg->obuf_rows)
        return -1;
    total = plan->m_tiles * plan->n_tiles * plan->k_chunks;
    /* Loads run `ahead` chunks ahead in program order: LOAD(g+2) waits in the LOAD queue for
     * EXEC(g) to free its buffer and starts the moment it does, so it has the whole of EXEC(g+1)
     * to arrive. (One chunk ahead, LOAD(g+2) would be fetched only when EXEC(g+1) is almost
     * done, because the fetcher sits on the full EXEC queue.) The farthest wait: a tile's
     * DRAINs (at its last chunk) for the STORE two tiles back; with the C band, those of m-tile
     * mi's first tile for the STORE of m-tile mi - 2 (at its last chunk). */
    long span = 2L * plan->k_chunks;
    if (plan->cband)
        span = (long)(plan->n_tiles + 1) * plan->k_chunks;
    if (npu_pb_stream_init(&e.b, &e.st, span, lookahead(cfg, plan, args), 0, out) == 0)
        for (int g = 0; g < total && !e.b.err; g++) {
            emit_chunk(&e, g);
            npu_pb_stream_commit(&e.b, &e.st);
        }
    return npu_pb_stream_end(&e.b, &e.st);
}

size_t npu_gemm_emit_len(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan,
                         const npu_gemm_args_t *args)
{
    npu_prog_t p;
    npu_gemm_args_t a = *args;
    size_t n;
    a.a = a.b = a.c = 0;
    npu_prog_init(&p);
    n = npu_gemm_emit(cfg, plan, &a, &p) == 0 ? p.n : 0;
    npu_prog_free(&p);
    return n;
}
