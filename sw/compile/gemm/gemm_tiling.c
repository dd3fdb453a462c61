/* gemm_tiling.c - choose Mt, nb, Kc for a GEMM; see gemm_tiling.h. */
#include "compile/gemm/gemm_tiling.h"

#include "compile/gemm/flexsa_mode.h"
#include "compile/slice/slice.h"

#include <string.h>

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* A's double buffer split over two banks (A0 in bank 0, A1 in bank 3) when two A buffers do not
 * fit one bank but one does, and bank 3 is free: no C band, no band chunks of their own. */
static int a_split_ok(const npu_cfg_t *cfg, const npu_gemm_plan_t *p)
{
    long a = (long)p->Mt * (p->Kc / p->F);
    return cfg->spm_banks >= 4 && a <= cfg->spm_bank_words && !p->cband &&
           (p->res == NPU_GEMM_RES_NONE || p->k_chunks == 1);
}
/* Where place() puts A1. */
static unsigned a_second(const npu_cfg_t *cfg, const npu_gemm_plan_t *p)
{
    return npu_gemm_split_a(cfg, p) ? 3u * (unsigned)cfg->spm_bank_words : (unsigned)(p->Mt * (p->Kc / p->F));
}

static void place(const npu_cfg_t *cfg, npu_gemm_plan_t *p)
{
    unsigned bw = (unsigned)cfg->spm_bank_words;
    unsigned b = (unsigned)(p->Kc * p->nb);
    unsigned c = npu_gemm_c_words(p);
    p->spm_a[0] = 0;
    p->spm_a[1] = a_second(cfg, p);
    p->spm_b[0] = bw;
    p->spm_b[1] = bw + b;
    p->spm_c[0] = 2 * bw;
    p->spm_c[1] = 2 * bw + c;
}

/* The first bank above the C buffers (bank 2; with the C band, the banks its two buffers span). */
static unsigned c_end_bank(const npu_cfg_t *cfg, const npu_gemm_plan_t *p)
{
    unsigned bw = (unsigned)cfg->spm_bank_words;
    return (2u * bw + 2u * npu_gemm_c_words(p) + bw - 1) / bw;
}

/* The resident band's chunk buffers (gemm_tiling.h): in the operand's bank from its first
 * buffer, then in the banks above the C buffers (3, 4, ...; none for one chunk: the double
 * buffer holds the band); -1 when they do not fit. */
static int place_res(const npu_cfg_t *cfg, const npu_gemm_plan_t *p, unsigned *res)
{
    unsigned bw = (unsigned)cfg->spm_bank_words, free0 = c_end_bank(cfg, p);
    unsigned size = p->res == NPU_GEMM_RES_A ? (unsigned)(p->Mt * (p->Kc / p->F)) : (unsigned)(p->Kc * p->nb);
    unsigned bank = p->res == NPU_GEMM_RES_A ? 0u : 1u, at = 0;
    if (p->k_chunks < 1 || p->k_chunks > NPU_GEMM_RES_MAX || size == 0 || size > bw)
        return -1;
    if (p->k_chunks == 1) /* the band in the double buffer: no buffers of its own */
        return 0;
    for (int c = 0; c < p->k_chunks; c++) {
        if (at + size > bw) { /* the next free bank */
            bank = bank < free0 ? free0 : bank + 1u;
            at = 0;
        }
        if (bank >= (unsigned)cfg->spm_banks)
            return -1;
        if (res)
            res[c] = bank * bw + at;
        at += size;
    }
    return 0;
}

int npu_gemm_plan_check(const npu_cfg_t *cfg, const npu_gemm_plan_t *p)
{
    int F = 2 * cfg->s;
    long bw = cfg->spm_bank_words;
    if (p->M < 1 || p->N < 1 || p->K < 1 || p->F != F || p->Mt < 1 || p->nb < 1 || p->Kc < F)
        return -1;
    if (p->Kc % F || p->Nt != p->nb * F)
        return -1;
    if (p->M >= F ? (p->Mt % F != 0) : (p->Mt != p->M))
        return -1;
    if ((long)p->Mt * p->nb > cfg->obuf_rows)
        return -1;
    if ((2L * p->Mt * (p->Kc / F) > bw && !a_split_ok(cfg, p)) || 2L * p->Kc * p->nb > bw ||
        (!p->cband && 4L * p->Mt * p->nb > bw))
        return -1;
    if (cfg->spm_banks < 3)
        return -1;
    /* the C band: m-major tiles over several n-tiles, its two buffers from bank 2 on */
    if (p->cband && (p->order != 0 || p->n_tiles < 2 || p->res == NPU_GEMM_RES_B ||
                     c_end_bank(cfg, p) > (unsigned)cfg->spm_banks))
        return -1;
    if ((p->split_last != 0 && p->split_last != 1) || (p->split_last && (p->n_tiles != 1 || p->cband)) ||
        p->m_tiles != cdiv(p->M, p->Mt) + p->split_last || p->n_tiles != cdiv(p->N, p->Nt) ||
        p->k_chunks != cdiv(p->K, p->Kc))
        return -1;
    /* buffers inside their banks and disjoint */
    if (p->spm_a[0] != 0 || p->spm_a[1] != a_second(cfg, p) ||
        p->spm_b[0] != (unsigned)bw || p->spm_b[1] != (unsigned)(bw + p->Kc * p->nb) ||
        p->spm_c[0] != (unsigned)(2 * bw) || p->spm_c[1] != (unsigned)(2 * bw) + npu_gemm_c_words(p))
        return -1;
    if (p->res != NPU_GEMM_RES_NONE) {
        unsigned res[NPU_GEMM_RES_MAX];
        if ((p->res != NPU_GEMM_RES_A && p->res != NPU_GEMM_RES_B) ||
            p->order != (p->res == NPU_GEMM_RES_B) || place_res(cfg, p, res) != 0 ||
            (p->k_chunks > 1 && memcmp(res, p->spm_res, sizeof res[0] * (size_t)p->k_chunks) != 0))
            return -1;
    }
    return 0;
}

/* DMA rows of A and B over the whole program (a row per LOAD row: A's Kc-wide, B's Nt-wide
 * when stored untransposed): the tie-break between resident bands of equal traffic. */
static uint64_t load_rows(const npu_gemm_plan_t *p)
{
    uint64_t a = (uint64_t)p->M * (uint64_t)p->k_chunks * (p->res == NPU_GEMM_RES_A ? 1u : (uint64_t)p->n_tiles);
    uint64_t b = (uint64_t)p->K * (uint64_t)p->n_tiles * (p->res == NPU_GEMM_RES_B ? 1u : (uint64_t)p->m_tiles);
    return a + b;
}

static uint64_t traffic(const npu_gemm_plan_t *p)
{
    uint64_t a = (uint64_t)p->M * (p->res == NPU_GEMM_RES_A ? 1u : (uint64_t)p->n_tiles);
    uint64_t b = (uint64_t)p->N * (p->res == NPU_GEMM_RES_B ? 1u : (uint64_t)p->m_tiles);
    return 2ull * (uint64_t)p->K * (a + b);
}

/* Candidate c with the resident band that cuts its traffic most (then its DMA rows), if one
 * fits and cuts it at all. */
static void pick_res(const npu_cfg_t *cfg, npu_gemm_plan_t *c)
{
    npu_gemm_plan_t best = *c;
    for (int r = NPU_GEMM_RES_A; r <= NPU_GEMM_RES_B; r++) {
        npu_gemm_plan_t v = *c;
        v.res = r;
        v.order = r == NPU_GEMM_RES_B;
        if (place_res(cfg, &v, NULL) != 0)
            continue;
        v.est_dram_bytes = traffic(&v);
        if (v.est_dram_bytes < best.est_dram_bytes ||
            (v.est_dram_bytes == best.est_dram_bytes && best.res != NPU_GEMM_RES_NONE &&
             load_rows(&v) < load_rows(&best)))
            best = v;
    }
    *c = best;
}

/* Is candidate a better than b? (lexicographic criteria of gemm_tiling.h) */
static int better(const npu_gemm_plan_t *a, const npu_gemm_plan_t *b, int F)
{
    int pa, pb;
    if (a->est_dram_bytes != b->est_dram_bytes)
        return a->est_dram_bytes < b->est_dram_bytes;
    pa = a->M >= 4 * F && a->Mt < 4 * F;
    pb = b->M >= 4 * F && b->Mt < 4 * F;
    if (pa != pb)
        return pa < pb;
    if (a->k_chunks != b->k_chunks)
        return a->k_chunks < b->k_chunks;
    if (a->Mt * a->nb != b->Mt * b->nb)
        return a->Mt * a->nb < b->Mt * b->nb;
    return a->Mt < b->Mt;
}

int npu_gemm_tile(const npu_cfg_t *cfg, int M, int N, int K, npu_gemm_plan_t *plan)
{
    return npu_gemm_tile_ex(cfg, M, N, K, 0, plan);
}

static int tile(const npu_cfg_t *cfg, int M, int N, int K, int even_regions, int resident,
                npu_gemm_plan_t *plan)
{
    int F, bw, found = 0, mt_lo, mt_hi, mt_step, nb_hi, kblocks;
    npu_gemm_plan_t best;
    if (!cfg || cfg->s < 1 || M < 1 || N < 1 || K < 1 || cfg->spm_banks < 3)
        return -1;
    F = 2 * cfg->s;
    bw = cfg->spm_bank_words;
    if (M < F) {
        mt_lo = mt_hi = M;
        mt_step = 1;
    } else {
        mt_lo = mt_step = F;
        mt_hi = cdiv(M, F) * F;
    }
    nb_hi = cdiv(N, F);
    kblocks = cdiv(K, F);
    memset(&best, 0, sizeof best);
    for (int Mt = mt_lo; Mt <= mt_hi && Mt <= cfg->obuf_rows; Mt += mt_step) {
        for (int nb = 1; nb <= nb_hi; nb++) {
            npu_gemm_plan_t c;
            int kc_blocks, nch;
            if ((long)(Mt + (even_regions ? Mt % 2 : 0)) * nb > cfg->obuf_rows ||
                4L * Mt * nb > bw)
                break; /* grows with nb */
            /* largest Kc/F allowed by both double buffers */
            kc_blocks = bw / (2 * Mt);
            if (kc_blocks > bw / (2 * F * nb))
                kc_blocks = bw / (2 * F * nb);
            if (kc_blocks < 1)
                continue;
            if (kc_blocks > kblocks)
                kc_blocks = kblocks;
            nch = cdiv(kblocks, kc_blocks);
            kc_blocks = cdiv(kblocks, nch); /* balanced chunks */
            memset(&c, 0, sizeof c);
            c.M = M;
            c.N = N;
            c.K = K;
            c.F = F;
            c.Mt = Mt;
            c.nb = nb;
            c.Nt = nb * F;
            c.Kc = kc_blocks * F;
            c.m_tiles = cdiv(M, Mt);
            c.n_tiles = cdiv(N, c.Nt);
            c.k_chunks = cdiv(K, c.Kc);
            c.est_dram_bytes = traffic(&c);
            if (!found || better(&c, &best, F)) {
                best = c;
                found = 1;
            }
        }
    }
    if (!found)
        return -1;
    place(cfg, &best);
    if (resident) /* the same tiles, with one band resident if that cuts the traffic */
        npu_gemm_plan_band(cfg, &best);
    *plan = best;
    return 0;
}

int npu_gemm_tile_ex(const npu_cfg_t *cfg, int M, int N, int K, int even_regions,
                     npu_gemm_plan_t *plan)
{
    return tile(cfg, M, N, K, even_regions, 0, plan);
}

int npu_gemm_tile_res(const npu_cfg_t *cfg, int M, int N, int K, int even_regions,
                      npu_gemm_plan_t *plan)
{
    return tile(cfg, M, N, K, even_regions, 1, plan);
}

void npu_gemm_plan_band(const npu_cfg_t *cfg, npu_gemm_plan_t *plan)
{
    pick_res(cfg, plan);
    if (plan->res != NPU_GEMM_RES_NONE)
        place_res(cfg, plan, plan->spm_res);
}

/* The plan of slicing tiles tile (m, n, k elements) in loop order n_major with resident band res
 * (NPU_GEMM_RES_*): Mt, Kc rounded up to whole 2S blocks, Nt = nb * 2S, the buffers placed.
 * 0, or -1 when it breaks a constraint (npu_gemm_plan_check, the band's placement included). */
static int from_tiles(const npu_cfg_t *cfg, int M, int N, int K, const int64_t *tile, int n_major, int res,
                      int cband, npu_gemm_plan_t *g)
{
    int F = 2 * cfg->s;
    memset(g, 0, sizeof *g);
    g->M = M, g->N = N, g->K = K, g->F = F;
    g->Mt = M < F ? M : cdiv((int)tile[0], F) * F;
    g->nb = cdiv((int)tile[1], F);
    g->Nt = g->nb * F;
    g->Kc = cdiv((int)tile[2], F) * F;
    g->m_tiles = cdiv(M, g->Mt);
    g->n_tiles = cdiv(N, g->Nt);
    g->k_chunks = cdiv(K, g->Kc);
    g->order = n_major;
    g->res = res;
    g->cband = cband;
    g->est_dram_bytes = traffic(g);
    place(cfg, g);
    if (res != NPU_GEMM_RES_NONE && place_res(cfg, g, g->spm_res) != 0)
        return -1;
    return npu_gemm_plan_check(cfg, g);
}

int npu_gemm_band_fits(const npu_cfg_t *cfg, int M, int N, int K, const int64_t *tile, int res)
{
    npu_gemm_plan_t g;
    if (!cfg || cfg->s < 1 || (res != NPU_GEMM_RES_A && res != NPU_GEMM_RES_B))
        return 0;
    return from_tiles(cfg, M, N, K, tile, res == NPU_GEMM_RES_B, res, 0, &g) == 0;
}

int npu_gemm_plan_no_cband(const npu_cfg_t *cfg, npu_gemm_plan_t *plan)
{
    npu_gemm_plan_t g = *plan;
    g.cband = 0;
    place(cfg, &g);
    if (g.res != NPU_GEMM_RES_NONE && place_res(cfg, &g, g.spm_res) != 0)
        return -1;
    if (npu_gemm_plan_check(cfg, &g) != 0)
        return -1;
    *plan = g;
    return 0;
}

int npu_gemm_cband_fits(const npu_cfg_t *cfg, int M, int N, int K, const int64_t *tile)
{
    npu_gemm_plan_t g;
    return cfg && cfg->s >= 1 && from_tiles(cfg, M, N, K, tile, 0, NPU_GEMM_RES_A, 1, &g) == 0;
}

int npu_gemm_plan_from_slice(const npu_cfg_t *cfg, const npu_slice_plan_t *sp, int M, int N, int K,
                             int even_regions, npu_gemm_plan_t *plan)
{
    npu_gemm_plan_t g;
    int n_major = sp->loop[0] == 1; /* n outermost */
    /* the slicing stage's band: that of the input following the outermost dim (slice.h) */
    int res = sp->band == NPU_SLICE_BAND_NONE ? NPU_GEMM_RES_NONE : n_major ? NPU_GEMM_RES_B : NPU_GEMM_RES_A;
    if (from_tiles(cfg, M, N, K, sp->tile, n_major, res, sp->cband, &g) != 0 ||
        (even_regions && (long)(g.Mt + g.Mt % 2) * g.nb > cfg->obuf_rows))
        return -1;
    *plan = g;
    return 0;
}

int npu_gemm_split_a(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan)
{
    return 2L * plan->Mt * (plan->Kc / plan->F) > cfg->spm_bank_words;
}

int npu_gemm_tile_sliced(const npu_cfg_t *cfg, int M, int N, int K, int cost_mode, int policy,
                         npu_gemm_plan_t *plan)
{
    return npu_gemm_tile_sliced_ex(cfg, M, N, K, cost_mode, policy, 0, plan);
}

int npu_gemm_tile_sliced_ex(const npu_cfg_t *cfg, int M, int N, int K, int cost_mode, int policy, int no_split_a,
                            npu_gemm_plan_t *plan)
{
    npu_slice_cost_t k;
    npu_slice_result_t r;
    char msg[160];
    if (!cfg || cfg->s < 1 || M < 1 || N < 1 || K < 1 || policy < NPU_POLICY_1G1C || policy >= NPU_NUM_POLICIES)
        return -1;
    k = npu_slice_cost_default(cfg, cost_mode);
    k.policy = policy;
    k.no_split_a = no_split_a;
    if (npu_slice_gemm(cfg, &k, M, N, K, &r, msg, sizeof msg) != 0)
        return -1;
    return npu_gemm_plan_from_slice(cfg, &r.best, M, N, K, policy == NPU_POLICY_1G4C, plan);
}
