/* gemm_emit.c - GEMM program emission and expected counters; see gemm_emit.h. */
#include "compile/gemm/gemm_emit.h"

#include "compile/gemm/flexsa_mode.h"

#include <stdio.h>
#include <string.h>

static unsigned cdivu(uint64_t a, uint64_t b) { return (unsigned)((a + b - 1) / b); }
static int imin(int a, int b) { return a < b ? a : b; }

void npu_gemm_pitches(const npu_cfg_t *cfg, int M, int N, int K, int transA, int transB,
                      unsigned *pitch_a, unsigned *pitch_b, unsigned *pitch_c)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    *pitch_a = cdivu(2ull * (uint64_t)(transA ? M : K), B);
    *pitch_b = cdivu(2ull * (uint64_t)(transB ? K : N), B);
    *pitch_c = cdivu(4ull * (uint64_t)N, B);
}

typedef struct emitter {
    const npu_cfg_t *cfg;
    const npu_gemm_plan_t *p;
    const npu_gemm_args_t *a;
    npu_prog_t *out;
    uint64_t B;
    unsigned wave; /* global wave counter: weight bank = wave % 2 */
    int err;
} emitter_t;

static void put(emitter_t *e, int enc_rc, npu_insn_t *in, unsigned tok)
{
    if (enc_rc != 0) {
        e->err = 1;
        return;
    }
    npu_insn_tok(in, tok);
    if (npu_prog_push(e->out, in) != 0)
        e->err = 1;
}

/* A DRAM address must fit the 32-bit field; otherwise the emission fails. */
static uint32_t daddr(emitter_t *e, uint64_t a)
{
    if (a > 0xFFFFFFFFull) {
        e->err = 1;
        return 0;
    }
    return (uint32_t)a;
}

typedef struct chunk {
    int t, c;        /* tile index, chunk index within the tile */
    int m0, n0, k0;  /* origins */
    int m_act, n_act, kc_act;
} chunk_t;

static chunk_t chunk_at(const npu_gemm_plan_t *p, int g)
{
    chunk_t ch;
    int mi, ni;
    ch.t = g / p->k_chunks;
    ch.c = g % p->k_chunks;
    mi = ch.t / p->n_tiles;
    ni = ch.t % p->n_tiles;
    ch.m0 = mi * p->Mt;
    ch.n0 = ni * p->Nt;
    ch.k0 = ch.c * p->Kc;
    ch.m_act = imin(p->Mt, p->M - ch.m0);
    ch.n_act = imin(p->Nt, p->N - ch.n0);
    ch.kc_act = imin(p->Kc, p->K - ch.k0);
    return ch;
}

static unsigned tag_or(unsigned tag, unsigned dflt) { return tag ? tag : dflt; }

static void emit_loads(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    chunk_t ch = chunk_at(p, g);
    unsigned q = (unsigned)g % 2u, wpr = (unsigned)(p->Kc / p->F);
    npu_insn_t in;
    int rc;
    if (!a->transA)
        rc = npu_enc_load(&in, tag_or(a->tag_a, NPU_TAG_X), 0, (unsigned)ch.m_act,
                          daddr(e, a->a + (uint64_t)ch.m0 * a->pitch_a * e->B + 2ull * ch.k0),
                          p->spm_a[q], wpr, 2u * (unsigned)ch.kc_act, a->pitch_a);
    else
        rc = npu_enc_load(&in, tag_or(a->tag_a, NPU_TAG_X), 1, (unsigned)ch.kc_act,
                          daddr(e, a->a + (uint64_t)ch.k0 * a->pitch_a * e->B + 2ull * ch.m0),
                          p->spm_a[q], wpr, 2u * (unsigned)ch.m_act, a->pitch_a);
    put(e, rc, &in, g >= 2 ? NPU_TOK_POP_NEXT : 0);
    if (!a->transB)
        rc = npu_enc_load(&in, tag_or(a->tag_b, NPU_TAG_W), 0, (unsigned)ch.kc_act,
                          daddr(e, a->b + (uint64_t)ch.k0 * a->pitch_b * e->B + 2ull * ch.n0),
                          p->spm_b[q], (unsigned)p->nb, 2u * (unsigned)ch.n_act, a->pitch_b);
    else
        rc = npu_enc_load(&in, tag_or(a->tag_b, NPU_TAG_W), 1, (unsigned)ch.n_act,
                          daddr(e, a->b + (uint64_t)ch.n0 * a->pitch_b * e->B + 2ull * ch.k0),
                          p->spm_b[q], (unsigned)p->nb, 2u * (unsigned)ch.kc_act, a->pitch_b);
    put(e, rc, &in, NPU_TOK_PUSH_NEXT);
}

/* OBUF rows per n-block region: Mt, or Mt + 1 for 1G4C when Mt is odd (its two n-halves take
 * ceil(m/2) rows each). */
static unsigned region_rows(const emitter_t *e)
{
    unsigned mt = (unsigned)e->p->Mt;
    return e->a->modes == NPU_EMIT_1G4C ? mt + (mt & 1u) : mt;
}

/* 1G4C: the S x S sub-tiles of one 2S x 2S (k, n) block, each as four per-core LDWs and one ISW
 * WAVE (gemm_emit.h). *first / *last: tokens of the chunk's first LDW / last WAVE. */
static void emit_1g4c_block(emitter_t *e, const chunk_t *ch, unsigned qb, int kb, int j, int k,
                            int n, int *first, int last)
{
    const npu_gemm_plan_t *p = e->p;
    unsigned S = (unsigned)e->cfg->s, wpr = (unsigned)(p->Kc / p->F);
    unsigned ob = ((unsigned)ch->t % 2u) * (unsigned)e->cfg->obuf_rows + (unsigned)j * region_rows(e);
    unsigned ha = ((unsigned)ch->m_act + 1) / 2;
    int kh_n = (k + (int)S - 1) / (int)S, nh_n = (n + (int)S - 1) / (int)S;
    npu_insn_t in;
    for (int kh = 0; kh < kh_n; kh++)
        for (int nh = 0; nh < nh_n; nh++) {
            unsigned kk = (unsigned)imin((int)S, k - kh * (int)S);
            unsigned nn = (unsigned)imin((int)S, n - nh * (int)S);
            unsigned bank = e->wave % 2u;
            int acc = ch->k0 + kb * p->F + kh * (int)S > 0;
            for (unsigned c = 0; c < 4; c++) {
                int rc = npu_enc_ldw_cores(&in, bank, NPU_MODE_ISW,
                                           p->spm_b[qb] + (unsigned)((kb * p->F + kh * (int)S) * p->nb + j),
                                           (unsigned)p->nb, kk, nn, 1u << c);
                if (rc == 0 && nh)
                    rc = npu_insn_lane_hi(&in);
                put(e, rc, &in, *first ? NPU_TOK_POP_PREV : 0);
                *first = 0;
            }
            int rc = npu_enc_wave(&in, bank, NPU_MODE_ISW, acc, (unsigned)ch->m_act,
                                  p->spm_a[qb] + (unsigned)kb, wpr, kk, nn, ob + (unsigned)nh * ha);
            if (rc == 0 && kh)
                rc = npu_insn_lane_hi(&in);
            put(e, rc, &in, last && kh == kh_n - 1 && nh == nh_n - 1 ? NPU_TOK_PUSH_PREV : 0);
            e->wave++;
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
static int block_at(const emitter_t *e, int g, int i, int kblocks, int nblocks)
{
    int kb, j;
    if (e->a->modes == NPU_EMIT_FLEXSA && g % 2)
        i = kblocks * nblocks - 1 - i;
    kb = i / nblocks;
    j = i % nblocks;
    if (e->a->modes == NPU_EMIT_FLEXSA && kb % 2)
        j = nblocks - 1 - j;
    return kb * nblocks + j;
}

static void emit_exec(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    chunk_t ch = chunk_at(p, g);
    unsigned q = (unsigned)g % 2u, wpr = (unsigned)(p->Kc / p->F);
    unsigned h = (unsigned)ch.t % 2u;
    int kblocks = (ch.kc_act + p->F - 1) / p->F, nblocks = (ch.n_act + p->F - 1) / p->F;
    int nw = kblocks * nblocks;
    npu_insn_t in;
    int first1g4c = 1;
    for (int i = 0; i < nw; i++) {
        int b = block_at(e, g, i, kblocks, nblocks), kb = b / nblocks, j = b % nblocks;
        int k = imin(p->F, ch.kc_act - kb * p->F);
        int n = imin(p->F, ch.n_act - j * p->F);
        unsigned bank = e->wave % 2u;
        int first = i == 0, last = i == nw - 1, acc = ch.k0 > 0;
        for (int i2 = 0; i2 < i && !acc; i2++) /* an earlier wave of this chunk into region j */
            acc = block_at(e, g, i2, kblocks, nblocks) % nblocks == j;
        if (e->a->modes == NPU_EMIT_1G4C) {
            emit_1g4c_block(e, &ch, q, kb, j, k, n, &first1g4c, last);
            continue;
        }
        unsigned mode = e->a->modes == NPU_EMIT_FLEXSA ? (unsigned)npu_flexsa_mode(e->cfg->s, n, k)
                                                       : NPU_MODE_FW;
        put(e,
            npu_enc_ldw(&in, bank, mode, p->spm_b[q] + (unsigned)(kb * p->F * p->nb + j),
                        (unsigned)p->nb, (unsigned)k, (unsigned)n),
            &in, first ? NPU_TOK_POP_PREV : 0);
        put(e,
            npu_enc_wave(&in, bank, mode, acc, (unsigned)ch.m_act, p->spm_a[q] + (unsigned)kb, wpr,
                         (unsigned)k, (unsigned)n,
                         h * (unsigned)e->cfg->obuf_rows + (unsigned)(j * p->Mt)),
            &in, last ? NPU_TOK_PUSH_PREV : 0);
        e->wave++;
    }
}

static void emit_drain_store(emitter_t *e, int g)
{
    const npu_gemm_plan_t *p = e->p;
    const npu_gemm_args_t *a = e->a;
    chunk_t ch = chunk_at(p, g);
    unsigned h = (unsigned)ch.t % 2u, cs = p->spm_c[h], stride = 2u * (unsigned)p->nb;
    int nblocks = (ch.n_act + p->F - 1) / p->F;
    int kblocks = (ch.kc_act + p->F - 1) / p->F, nw = kblocks * nblocks;
    npu_insn_t in;
    /* FlexSA: the DRAINs in the order their regions receive their last wave (the drain engine
     * takes them in order and each starts as its rows become final): the n-blocks in the order of
     * the chunk's last k-block pass (block_at). */
    for (int jj = 0; jj < nblocks; jj++) {
        int j = e->a->modes == NPU_EMIT_FLEXSA ? block_at(e, g, nw - nblocks + jj, kblocks, nblocks) % nblocks
                                               : jj;
        unsigned tok = 0;
        if (jj == 0 && ch.t >= 2)
            tok |= NPU_TOK_POP_NEXT;
        int n = imin(p->F, ch.n_act - j * p->F);
        unsigned ob = h * (unsigned)e->cfg->obuf_rows + (unsigned)j * region_rows(e);
        unsigned ha = ((unsigned)ch.m_act + 1) / 2;
        if (e->a->modes == NPU_EMIT_1G4C) { /* one split DRAIN per n-half (C words 2j, 2j+1) */
            int nh_n = (n + e->cfg->s - 1) / e->cfg->s;
            for (int nh = 0; nh < nh_n; nh++) {
                if (jj == nblocks - 1 && nh == nh_n - 1)
                    tok |= NPU_TOK_PUSH_NEXT;
                put(e,
                    npu_enc_drain_split(&in, ha, ob + (unsigned)nh * ha,
                                        cs + 2u * (unsigned)j + (unsigned)nh, stride, ha,
                                        (unsigned)ch.m_act - ha),
                    &in, tok);
                tok = 0;
            }
            continue;
        }
        if (jj == nblocks - 1)
            tok |= NPU_TOK_PUSH_NEXT;
        if (e->a->modes == NPU_EMIT_FLEXSA && n <= e->cfg->s) /* skinny n-block (VSW/ISW waves) */
            put(e,
                npu_enc_drain_split(&in, ha, ob, cs + 2u * (unsigned)j, stride, ha,
                                    (unsigned)ch.m_act - ha),
                &in, tok);
        else
            put(e, npu_enc_drain(&in, (unsigned)ch.m_act, ob, cs + 2u * (unsigned)j, stride), &in,
                tok);
    }
    put(e,
        npu_enc_store(&in, tag_or(a->tag_c, NPU_TAG_Y), (unsigned)ch.m_act,
                      daddr(e, a->c + (uint64_t)ch.m0 * a->pitch_c * e->B + 4ull * ch.n0), cs,
                      stride, 4u * (unsigned)ch.n_act, a->pitch_c),
        &in, NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
}

int npu_gemm_lookahead(const npu_cfg_t *cfg)
{
    /* Two chunks of loads may wait in the LOAD queue (4 instructions) while the fetcher moves on. */
    return cfg->queue_depth >= 4 ? 2 : 1;
}

int npu_gemm_emit(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                  npu_prog_t *out)
{
    emitter_t e;
    int total, ahead;
    if (npu_gemm_plan_check(cfg, plan) != 0)
        return -1;
    memset(&e, 0, sizeof e);
    e.cfg = cfg;
    e.p = plan;
    e.a = args;
    e.out = out;
    e.B = (uint64_t)npu_cfg_beat(cfg);
    if (args->a % e.B || args->b % e.B || args->c % e.B)
        return -1;
    if (args->modes < NPU_EMIT_FW || args->modes > NPU_EMIT_1G4C)
        return -1;
    /* 1G4C with an odd Mt needs one more OBUF row per n-block */
    if (region_rows(&e) * (unsigned)plan->nb > (unsigned)cfg->obuf_rows)
        return -1;
    total = plan->m_tiles * plan->n_tiles * plan->k_chunks;
    /* Loads run `ahead` chunks ahead in program order: LOAD(g+2) waits in the LOAD queue for
     * EXEC(g) to free its buffer and starts the moment it does, so it has the whole of EXEC(g+1)
     * to arrive. (One chunk ahead, LOAD(g+2) would be fetched only when EXEC(g+1) is almost
     * done, because the fetcher sits on the full EXEC queue.) */
    ahead = npu_gemm_lookahead(cfg);
    for (int g = 0; g < ahead && g < total; g++)
        emit_loads(&e, g);
    for (int g = 0; g < total && !e.err; g++) {
        if (g + ahead < total)
            emit_loads(&e, g + ahead);
        emit_exec(&e, g);
        if (g % plan->k_chunks == plan->k_chunks - 1)
            emit_drain_store(&e, g);
    }
    return e.err ? -1 : 0;
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

int npu_gemm_locate(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                    const npu_insn_t *prog, size_t n, int row, int col, npu_gemm_loc_t *loc,
                    char *buf, size_t bufn)
{
    unsigned tag_c = tag_or(args->tag_c, NPU_TAG_Y), S = (unsigned)cfg->s;
    long t, seen = -1;
    int F = plan->F, r_in, c_in, ncols;
    memset(loc, 0, sizeof *loc);
    loc->store_pc = loc->drain_pc = loc->wave_pc[0] = loc->wave_pc[1] = -1;
    if (row < 0 || col < 0 || row >= plan->M || col >= plan->N || plan->Mt < 1 || plan->Nt < 1)
        return -1;
    loc->m_tile = row / plan->Mt;
    loc->n_tile = col / plan->Nt;
    r_in = row % plan->Mt;
    c_in = col % plan->Nt;
    loc->n_block = c_in / F;
    t = (long)loc->m_tile * plan->n_tiles + loc->n_tile;
    for (size_t i = 0; i < n; i++) { /* the t-th STORE of C */
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) == 0 && f.op == NPU_OP_STORE && f.tag == tag_c && ++seen == t) {
            loc->store_pc = (long)i;
            break;
        }
    }
    if (loc->store_pc < 0)
        return -1;
    /* the DRAIN that moved the element: walk back over the tile's DRAINs (SPM word of the column) */
    ncols = 0;
    for (long i = loc->store_pc - 1; i >= 0; i--) {
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_STORE && f.tag == tag_c)
            break; /* the previous tile */
        if (f.op != NPU_OP_DRAIN)
            continue;
        {
            /* C staging word of the element: 2 per 2S-column block, S int32 each */
            unsigned word = (unsigned)(2 * loc->n_block) + (unsigned)((c_in % F) / (int)S);
            unsigned w0 = (f.spm_addr - plan->spm_c[(unsigned)t % 2u]);
            unsigned orow;
            int hit = 0;
            if (!f.split_rows) { /* normal: words w0, w0+1 of each row */
                hit = word == w0 || word == w0 + 1;
                orow = f.obuf_addr + (unsigned)r_in;
            } else {            /* skinny: lanes 0..S-1 of row r -> row r, S..2S-1 -> row r+split */
                hit = word == w0;
                loc->skinny_hi = (unsigned)r_in >= f.split_rows;
                orow = f.obuf_addr + ((unsigned)r_in < f.split_rows ? (unsigned)r_in : (unsigned)r_in - f.split_rows);
            }
            if (!hit)
                continue;
            loc->drain_pc = i;
            loc->obuf_row = orow;
            ncols = 1;
            break;
        }
    }
    if (!ncols)
        return -1;
    /* WAVEs before the DRAIN writing that OBUF row, back to the previous DRAIN of the same rows */
    for (long i = loc->drain_pc - 1; i >= 0; i--) {
        npu_fields_t f;
        npu_wave_sets_t ws;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_DRAIN && f.obuf_addr <= loc->obuf_row && loc->obuf_row < f.obuf_addr + f.rows)
            break;
        if (f.op != NPU_OP_WAVE)
            continue;
        npu_wave_sets_f(&f, &ws);
        if (f.obuf_addr <= loc->obuf_row && loc->obuf_row < f.obuf_addr + ws.obuf_rows) {
            if (loc->wave_pc[1] < 0)
                loc->wave_pc[1] = i;
            loc->wave_pc[0] = i;
            loc->waves++;
            loc->modes |= 1u << f.mode;
            if (!f.acc)
                break; /* the first k-block starts the accumulation */
        }
    }
    /* The cores of the last WAVE whose outputs hold the element: the row set that wrote its
     * OBUF row and lane (wide: lane = column in the 2S-block; skinny: the drain's half), and of
     * that set's cores the ones in the element's column (left {0,2} / right {1,3}) for wide sets. */
    if (loc->wave_pc[1] >= 0) {
        npu_fields_t f;
        npu_wave_sets_t ws;
        npu_decode(&prog[loc->wave_pc[1]], &f);
        npu_wave_sets_f(&f, &ws);
        {
            int skinny = ws.amode == NPU_MODE_VSW || ws.amode == NPU_MODE_ISW;
            unsigned lane = (unsigned)(c_in % F), side;
            if (skinny)
                lane = lane % S + (loc->skinny_hi ? S : 0);
            side = lane < S ? 0x5u : 0xAu;
            for (int j = 0; j < 4; j++) {
                unsigned r0 = f.obuf_addr + ws.orow[j];
                if (!ws.len[j] || loc->obuf_row < r0 || loc->obuf_row >= r0 + ws.len[j])
                    continue;
                if (skinny && (lane >= S) != (ws.lane_hi[j] != 0))
                    continue;
                loc->set = j;
                loc->cores = skinny ? ws.cores[j] : ws.cores[j] & side;
                break;
            }
        }
    }
    if (buf && bufn) {
        char ms[32] = "", cs[16] = "";
        for (unsigned c = 0; c < 4; c++)
            if (loc->cores >> c & 1u) {
                size_t l = strlen(cs);
                snprintf(cs + l, sizeof cs - l, "%s%u", l ? "+" : "", c);
            }
        for (unsigned m = 0; m < 4; m++)
            if (loc->modes >> m & 1u) {
                size_t l = strlen(ms);
                snprintf(ms + l, sizeof ms - l, "%s%s", l ? "+" : "", npu_flexsa_mode_name((npu_mode_t)m));
            }
        snprintf(buf, bufn, "tile (%d,%d) n-block %d: STORE #%ld, DRAIN #%ld, %d WAVE%s #%ld..#%ld in %s, "
                 "OBUF row %u, core %s (row set %d)", loc->m_tile, loc->n_tile, loc->n_block,
                 loc->store_pc, loc->drain_pc, loc->waves, loc->waves == 1 ? "" : "s",
                 loc->wave_pc[0], loc->wave_pc[1], ms[0] ? ms : "-", loc->obuf_row,
                 cs[0] ? cs : "?", loc->set);
    }
    return 0;
}

/* ---- expected counters ---------------------------------------------------------------- */

/* Bursts for `beats` consecutive beats from addr: at most mb beats, never crossing 4 KiB. */
static uint64_t bursts_of(uint64_t addr, uint64_t beats, uint64_t B, uint64_t mb)
{
    uint64_t n = 0;
    while (beats) {
        uint64_t to4k = (4096 - addr % 4096) / B, len = beats < mb ? beats : mb;
        if (to4k && len > to4k)
            len = to4k;
        addr += len * B;
        beats -= len;
        n++;
    }
    return n;
}

static uint64_t row_bursts(const npu_fields_t *f, uint64_t beats, uint64_t B, uint64_t mb)
{
    uint64_t n = 0;
    for (uint64_t r = 0; r < f->rows; r++)
        n += bursts_of(f->dram_addr + r * f->dram_stride * B, beats, B, mb);
    return n;
}

void npu_prog_expect(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n, npu_prog_expect_t *e)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg), F = (uint64_t)npu_cfg_f(cfg), S = (uint64_t)cfg->s;
    uint64_t mb = cfg->max_burst_beats > 0 ? (uint64_t)cfg->max_burst_beats : 1;
    memset(e, 0, sizeof *e);
    e->rd_bytes[NPU_TAG_PROG] = (n * NPU_INSN_BYTES + B - 1) / B * B;
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        uint64_t beats;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        switch (f.op) {
        case NPU_OP_LOAD:
            e->insn_load++;
            beats = (f.row_bytes + B - 1) / B;
            e->rd_bytes[f.tag] += (uint64_t)f.rows * beats * B;
            if (f.transpose) {
                /* npu_dma_load: per 2S-row block, groups of <= 2 beats (column blocks); one burst
                 * run per block when the group's rows are adjacent (dram_stride = the group's
                 * beats), else one per row */
                for (uint64_t r0 = 0; r0 < f.rows; r0 += F) {
                    uint64_t nr = f.rows - r0 < F ? f.rows - r0 : F;
                    for (uint64_t cb = 0; cb < beats; cb += 2) {
                        uint64_t g = beats - cb < 2 ? beats - cb : 2;
                        if (f.dram_stride == g)
                            e->rd_bursts += bursts_of(f.dram_addr + (r0 * g + cb) * B, nr * g, B, mb);
                        else
                            for (uint64_t r = r0; r < r0 + nr; r++)
                                e->rd_bursts += bursts_of(f.dram_addr + (r * f.dram_stride + cb) * B,
                                                          g, B, mb);
                    }
                }
                e->spm_wr_words += (uint64_t)(f.row_bytes / 2) * ((f.rows + F - 1) / F);
            } else {
                e->rd_bursts += row_bursts(&f, beats, B, mb);
                e->spm_wr_words += (uint64_t)f.rows * beats;
            }
            break;
        case NPU_OP_FILL:
            e->insn_load++;
            e->fill_words += (uint64_t)f.rows * ((f.row_bytes + B - 1) / B);
            e->spm_wr_words += (uint64_t)f.rows * ((f.row_bytes + B - 1) / B);
            break;
        case NPU_OP_STORE:
            e->insn_store++;
            beats = (f.row_bytes + B - 1) / B;
            e->wr_bytes[f.tag] += (uint64_t)f.rows * beats * B;
            e->wr_bursts += row_bursts(&f, beats, B, mb);
            e->spm_rd_words += (uint64_t)f.rows * beats;
            break;
        case NPU_OP_LDW:
            e->insn_exec++;
            e->spm_rd_words += f.k - (f.k_lo < f.k ? f.k_lo : f.k); /* rows < k_lo are not read */
            break;
        case NPU_OP_WAVE: {
            /* lanes [k_lo, k) are MACs; k0 of them in the cores' low half (lanes < S) */
            uint64_t klo = f.k_lo < f.k ? f.k_lo : f.k, kk = f.k - klo;
            uint64_t k0 = (f.k < S ? f.k : S) - (klo < S ? klo : S), k1 = kk - k0;
            uint64_t n0 = f.n < S ? f.n : S, n1 = f.n > S ? f.n - S : 0;
            e->insn_exec++;
            e->spm_rd_words += f.m; /* bcast too: one read per row */
            {
                /* per row set, per core it passes through: the core's part of the k x n tile
                 * (bcast: each core its own k x n); per-mode counters by the array's mode */
                npu_wave_sets_t ws;
                int vsplit = f.mode == NPU_MODE_FW || f.mode == NPU_MODE_VSW; /* k over 2 cores */
                int hsplit = f.mode == NPU_MODE_FW || f.mode == NPU_MODE_HSW; /* n over 2 cores */
                npu_wave_sets_f(&f, &ws);
                e->waves[ws.amode]++;
                for (int j = 0; j < 4; j++) {
                    e->rows[ws.amode] += ws.len[j];
                    for (int c = 0; c < 4; c++)
                        if (ws.cores[j] >> c & 1u) {
                            uint64_t mc = (uint64_t)ws.len[j] * (vsplit ? (c >= 2 ? k1 : k0) : kk) *
                                          (hsplit ? (c & 1 ? n1 : n0) : f.n);
                            e->macs_core[c] += mc;
                            e->macs += mc;
                        }
                }
            }
            break;
        }
        case NPU_OP_DRAIN:
            e->insn_exec++;
            e->spm_wr_words += (uint64_t)f.rows + (f.split_rows ? f.hi_rows : f.rows);
            if (f.acc) /* an accumulating DRAIN reads every word it writes */
                e->spm_rd_words += (uint64_t)f.rows + (f.split_rows ? f.hi_rows : f.rows);
            e->obuf_drain_rows += f.rows;
            break;
        case NPU_OP_SYNC_L: e->insn_load++; break;
        case NPU_OP_SYNC_E: e->insn_exec++; break;
        case NPU_OP_SYNC_S: e->insn_store++; break;
        default: break;
        }
    }
}
