/* slice_search.c - candidate enumeration, step-by-step cost and choice of the slicing stage; see
 * slice.h. */
#include "compile/slice/slice_nest.h"

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_tiling.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX (1 << 20)  /* tiles of one grid whose transfer costs are remembered */
#define CACHE_MAX (1 << 22) /* tiles whose costs one search keeps over its grids (64 MiB) */
#define GRIDS_MAX (1 << 16) /* grids of one tensor a search keeps (more: each candidate its own) */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int npu_slice_tile_opts(int64_t ext, int64_t u, int64_t *out, int max)
{
    int64_t nb = cdiv(ext, u), prev = -1;
    int k = 0;
    for (int64_t n = 1; n <= nb; n++) {
        int64_t t = cdiv(nb, n) * u;
        t = t < ext ? t : ext;
        if (t != prev) {
            if (out && k < max)
                out[k] = t;
            k++;
            prev = t;
        }
    }
    return k;
}

/* One tensor's tiles at one tile grid (the sizes of the dims it depends on): the sums of the
 * transfers of every tile once and, when remembered, each tile's cost and bus time. The
 * candidates with that grid share it: their splits, loop orders and other dims' tiles change how
 * often a tile moves, not what one move costs. */
typedef struct grid {
    int done;
    int64_t n;          /* tiles */
    npu_bursts_t b;     /* every tile once */
    uint64_t cost, bus;
    uint64_t *tile;     /* 3 per tile: cost, bus, bursts (NULL when n > MEMO_MAX) */
} grid_t;

/* One search: the nest, the constants, each dim's tile options and what candidates share: each
 * tensor's grids (by the option indices of its dims; NULL: not kept) and, per tensor axis and
 * option of its dim, the sum of the tiles' ranges along it (the lower bound's bytes). */
typedef struct search {
    const npu_slice_nest_t *x;
    const npu_slice_cost_t *k;
    int64_t *opt[NPU_SLICE_DIMS], *ntl[NPU_SLICE_DIMS]; /* per option: tile, tile count */
    int nopt[NPU_SLICE_DIMS];
    uint64_t combos;    /* tile combinations: the product of nopt */
    int bands;          /* band options per split and order: NPU_SLICE_BANDS (GEMM) or 1 */
    grid_t **grid[NPU_SLICE_TENSORS];   /* per grid a pointer, the grid allocated on first use
                                           (a search uses few of them: fewer pages touched) */
    uint64_t *axsum[NPU_SLICE_TENSORS][4];
    uint64_t cached;    /* tiles whose costs the grids hold */
    uint64_t *lc;       /* per tile combination and split: the compute sum (bound_combo's, which
                           cost_steps then takes; NULL: cost_steps sums it) */
} search_t;

typedef struct step_ctx {
    const npu_slice_nest_t *x;
    const npu_slice_cost_t *k;
    npu_slice_plan_t *p;
    const uint64_t *memo[NPU_SLICE_TENSORS]; /* per tile: cost, bus, bursts (NULL: computed per step) */
    unsigned have;                           /* step classes whose compute is known */
    uint64_t E[1 << NPU_SLICE_DIMS], D[1 << NPU_SLICE_DIMS]; /* per class: compute, drain */
    uint64_t I[1 << NPU_SLICE_DIMS];                         /* per class: EXEC instructions */
} step_ctx_t;

/* The cost of tensor t's transfers b, returned, and in *bus their part of the DRAM credit reads and
 * writes share (npu_slice_xfer_share; a store's with its fixed cost, which its port pays too:
 * npu_slice_pipe_step_w's Sb). */
static uint64_t xfer_of(const npu_slice_nest_t *x, const npu_slice_cost_t *k, int t, const npu_bursts_t *b,
                        uint64_t *bus)
{
    uint64_t cost = npu_slice_xfer_cost(k, b, x->DB, t == NPU_SLICE_OUT);
    *bus = npu_slice_xfer_share(k, b, x->DB);
    if (t == NPU_SLICE_OUT)
        *bus += cost - npu_slice_xfer_bus(k, b, x->DB);
    return cost;
}

/* Tile (o, s) of tensor t: its transfers in *b (zeroed first), their cost returned, their bus
 * time in *bus. */
static uint64_t tile_xfer(const npu_slice_nest_t *x, const npu_slice_cost_t *k, int t, const int64_t *o,
                          const int64_t *s, npu_bursts_t *b, uint64_t *bus)
{
    memset(b, 0, sizeof *b);
    npu_slice_tile_bursts(x, t, o, s, b);
    return xfer_of(x, k, t, b, bus);
}

/* Transfer cost (and bus time in *bus) of tensor t's tile (o, s) with linear tile index key. */
static uint64_t tile_cost(const step_ctx_t *c, int t, int64_t key, const int64_t *o, const int64_t *s,
                          uint64_t *bus, uint64_t *bursts)
{
    npu_bursts_t b;
    uint64_t cost;
    if (c->memo[t]) {
        *bus = c->memo[t][3 * key + 1];
        *bursts = c->memo[t][3 * key + 2];
        return c->memo[t][3 * key];
    }
    cost = tile_xfer(c->x, c->k, t, o, s, &b, bus);
    *bursts = b.bursts;
    return cost;
}

/* Origin and size of tile i along dim d. */
static void tile_at(const npu_slice_plan_t *p, int d, int64_t i, int64_t *o, int64_t *s)
{
    o[d] = i * p->tile[d];
    s[d] = p->tile[d] < p->ext[d] - o[d] ? p->tile[d] : p->ext[d] - o[d];
}

/* A GEMM's emitter loads an operand at every step (chunk) unless the buffer of the step's
 * parity holds its tile already (the tile two steps back; its double buffers alternate); the
 * other kernels keep a tile whose index did not change. */
static int reloads(const npu_slice_nest_t *x) { return x->kind == NPU_SLICE_GEMM; }

/* The plan's band (slice.h) of option b under loop order loop: the input whose tiles follow the
 * outermost dim, + 1; NPU_SLICE_BAND_NONE for b = NONE. */
static int band_of(const npu_slice_nest_t *x, const int *loop, int b)
{
    if (b == NPU_SLICE_BAND_NONE)
        return NPU_SLICE_BAND_NONE;
    return (x->t[NPU_SLICE_IN0].dep >> loop[0] & 1) ? NPU_SLICE_IN0 + 1 : NPU_SLICE_IN1 + 1;
}

/* Does option b (band_of: band) fit beside the plain plan of tiles? gemm_tiling's placement
 * decides (npu_gemm_band_fits, npu_gemm_cband_fits), the one the emitter then uses. The C band
 * (_OUT) needs m outermost and more than one n-tile, and is offered with more than one m-tile
 * only (one m-tile's band is stored at the very end, beside nothing: C's store as one tile
 * with Nt = N, which its own candidate costs without the band's constraints). */
static int band_fits(const npu_slice_nest_t *x, const int64_t *tile, const int *loop, int b, int band)
{
    int M = (int)x->ext[0], N = (int)x->ext[1], K = (int)x->ext[2];
    if (b == NPU_SLICE_BAND_OUT)
        return loop[0] == 0 && tile[0] < x->ext[0] && tile[1] < x->ext[1] &&
               npu_gemm_cband_fits(x->cfg, M, N, K, tile);
    return band == NPU_SLICE_BAND_NONE ||
           npu_gemm_band_fits(x->cfg, M, N, K, tile, band == NPU_SLICE_IN0 + 1 ? NPU_GEMM_RES_A : NPU_GEMM_RES_B);
}

/* Passes of a GEMM's loop nest (outer, middle dim, then k) over input t's tiles, loaded unless
 * the tile two steps back is the same one (reloads): one depending on the outer dim has P =
 * n_mid x kc steps per outer tile, of which it loads min(P, 2) when kc <= 2 (n_mid passes at kc =
 * 1, else one), all when kc > 2 (n_mid passes); one depending on the middle dim repeats its
 * T = n_mid x kc tiles in every outer tile, so T <= 2 loads min(n_outer T, 2) (passes: that / T),
 * more all of them (n_outer passes). */
static uint64_t gemm_passes(const npu_slice_nest_t *x, const int *loop, const int64_t *ntiles, int t)
{
    uint64_t no = (uint64_t)ntiles[loop[0]], nm = (uint64_t)ntiles[loop[1]], kc = (uint64_t)ntiles[loop[2]];
    if (x->t[t].dep >> loop[0] & 1)
        return kc > 2 ? nm : kc == 1 ? (nm < 2 ? nm : 2) : 1;
    if (nm * kc > 2)
        return no;
    return (no * nm * kc < 2 ? no * nm * kc : 2) / (nm * kc);
}

/* Passes of the loop nest (in loop order `loop`) over tensor t's tiles: the product of the tile
 * counts of the dims it does not depend on at the loop positions down to the innermost one it
 * depends on with more than one tile (its index changes there), or at every position (reloads).
 * Its loads are passes x its tile count (every dim it depends on with more than one tile is at
 * or above that position). The banded input (band = t + 1) is read once: one pass. */
static uint64_t passes_of(const npu_slice_nest_t *x, const int *loop, const int64_t *ntiles, int t, int band)
{
    int j = -1;
    uint64_t n = 1;
    if (band == t + 1)
        return 1;
    if (reloads(x))
        return gemm_passes(x, loop, ntiles, t);
    for (int pos = 0; pos < x->nd; pos++)
        if ((x->t[t].dep >> loop[pos] & 1) && ntiles[loop[pos]] > 1)
            j = pos;
    for (int pos = 0; pos <= j; pos++)
        n *= x->t[t].dep >> loop[pos] & 1 ? 1u : (uint64_t)ntiles[loop[pos]];
    return n;
}

/* A lower bound of the candidate's cycles (tile options oi, loop order loop): every byte read
 * crosses the read port, every byte written the write port, and all of them the credit the two
 * share (T >= the sum of each); burst-aware, the loads also cost a burst and xfer_fixed each. Bytes per pass are separable: the product over the tensor's axes
 * of the sum of the tiles' ranges along it (s->axsum). */
static uint64_t lower_bound(const search_t *s, const int *loop, const int64_t *ntiles, const int *oi,
                            int band)
{
    const npu_slice_nest_t *x = s->x;
    const npu_slice_cost_t *k = s->k;
    uint64_t rd = 0, wr = 0, xf = 0, share = npu_slice_share(k), lb;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        const npu_slice_tensor_t *ts = &x->t[t];
        uint64_t bytes = ts->ebytes * (uint64_t)(ts->layout == NPU_SLICE_T_KFC ? x->T : 1), passes, tiles = 1;
        for (int a = 0; a < ts->naxes; a++)
            bytes *= s->axsum[t][a][oi[ts->ax[a].dim]];
        if (t == NPU_SLICE_OUT) {
            wr += bytes;
            continue;
        }
        passes = passes_of(x, loop, ntiles, t, band);
        rd += bytes * passes;
        for (int d = 0; d < x->nd; d++)
            tiles *= ts->dep >> d & 1 ? (uint64_t)ntiles[d] : 1u;
        if (band != t + 1) /* every tile load is a descriptor with a burst at least */
            xf += passes * tiles;
    }
    lb = (rd + wr) * share;
    lb = lb > rd * k->byte ? lb : rd * k->byte;
    lb = lb > wr * k->byte ? lb : wr * k->byte;
    if (k->mode == NPU_SLICE_NOBURST)
        return lb;
    /* the loads' costs (cost_steps' ld): each at least its bytes, a burst and xfer_fixed */
    return lb > rd * k->byte + xf * (k->burst + k->xfer_fixed) ? lb : rd * k->byte + xf * (k->burst + k->xfer_fixed);
}

/* The classes of the dims in mask (bit d of a class: dim d at its last tile, else at its full
 * tiles, of which there are full_d; the dims outside mask at their last tile): their count, and
 * per class its weight (the product of its full counts; 0: the class is empty) in w and its
 * tile sizes in s. */
static int classes(const npu_slice_nest_t *x, const int64_t *tile, const int64_t *ntiles, unsigned mask,
                   uint64_t *w, int64_t (*s)[NPU_SLICE_DIMS])
{
    int n = 0;
    unsigned sub = mask;
    do { /* every subset of mask: the dims at their last tile */
        w[n] = 1;
        for (int d = 0; d < x->nd; d++) {
            int64_t full = ntiles[d] - 1;
            int last = !(mask >> d & 1) || (sub >> d & 1);
            s[n][d] = last ? x->ext[d] - full * tile[d] : tile[d];
            w[n] *= last ? 1u : (uint64_t)full;
        }
        n++;
        sub = (sub - 1) & mask;
    } while (sub != mask);
    return n;
}

/* The exact sums of the steps' compute (with the drains) under the splits s0 .. s1 - 1, in
 * sum[split], with tiles tile: every dim has at most two tile sizes (full and the last), so the
 * steps fall into <= 2^nd classes of equal compute, and the sum over them factors: the GEMM's
 * kd is a function of the reduction dims' sizes alone, m, n and the OBUF rows of the others', and
 * a step's compute is ceil(kd / S) times that at kd = S (slice_cost.h), so it is
 * (sum over the reduction classes of ceil(kd / S)) x (sum over the other classes of the compute at
 * kd = S), each class weighted by its count; exact (integer products distribute over sums). A
 * drain ends an output tile: the other dims' classes once each, the reduction dims at their last
 * tile. */
/* A step's compute: a GEMM's as its emitter runs it under the policy (the split plays no part),
 * a convolution's under the split. */
static uint64_t compute_of(const npu_slice_nest_t *x, const npu_slice_cost_t *k, int split, int64_t m,
                           int64_t n, int64_t taps, int64_t kd)
{
    if (x->kind == NPU_SLICE_GEMM)
        return (uint64_t)taps * npu_slice_gemm_compute(x->cfg, k, m, n, kd);
    return npu_slice_compute_cost(k, x->S, split, m, n, taps, kd);
}

/* compute_sums for a GEMM, whose step compute (npu_slice_gemm_compute) is no multiple of ceil(kd /
 * S): every reduction class with every other class, each pair weighted by both counts (at most 2
 * x 4 classes). Its waves alone: a GEMM's drains run on the drain engine beside the next step's
 * waves (npu_slice_pipe_step_d), not in E. The same for every split. */
static void gemm_sums(const npu_slice_nest_t *x, const npu_slice_cost_t *k, const int64_t *tile,
                      const int64_t *ntiles, int s0, int s1, uint64_t *sum)
{
    uint64_t wr[1 << NPU_SLICE_DIMS], wo[1 << NPU_SLICE_DIMS], t = 0;
    int64_t sr[1 << NPU_SLICE_DIMS][NPU_SLICE_DIMS], so[1 << NPU_SLICE_DIMS][NPU_SLICE_DIMS], s[NPU_SLICE_DIMS];
    int64_t m, n, taps, kd, orows;
    int nr = classes(x, tile, ntiles, x->red, wr, sr);
    int no = classes(x, tile, ntiles, ((1u << x->nd) - 1) & ~x->red, wo, so);
    for (int o = 0; o < no; o++) {
        if (!wo[o])
            continue;
        for (int r = 0; r < nr; r++) {
            if (!wr[r])
                continue;
            for (int d = 0; d < x->nd; d++)
                s[d] = x->red >> d & 1 ? sr[r][d] : so[o][d];
            npu_slice_step_gemm(x, s, &m, &n, &taps, &kd, &orows);
            t += wo[o] * wr[r] * compute_of(x, k, 0, m, n, taps, kd);
        }
    }
    for (int sp = s0; sp < s1; sp++)
        sum[sp] = t;
}

static void compute_sums(const npu_slice_nest_t *x, const npu_slice_cost_t *k, const int64_t *tile,
                         const int64_t *ntiles, int s0, int s1, uint64_t *sum)
{
    uint64_t w[1 << NPU_SLICE_DIMS], kf = 0;
    int64_t s[1 << NPU_SLICE_DIMS][NPU_SLICE_DIMS], m, n, taps, kd, orows;
    int nc;
    if (x->kind == NPU_SLICE_GEMM) {
        gemm_sums(x, k, tile, ntiles, s0, s1, sum);
        return;
    }
    nc = classes(x, tile, ntiles, x->red, w, s);
    for (int cls = 0; cls < nc; cls++)
        if (w[cls]) {
            npu_slice_step_gemm(x, s[cls], &m, &n, &taps, &kd, &orows);
            kf += w[cls] * (uint64_t)((kd + x->S - 1) / x->S);
        }
    for (int sp = s0; sp < s1; sp++)
        sum[sp] = 0;
    nc = classes(x, tile, ntiles, ((1u << x->nd) - 1) & ~x->red, w, s);
    for (int cls = 0; cls < nc; cls++) {
        if (!w[cls])
            continue;
        npu_slice_step_gemm(x, s[cls], &m, &n, &taps, &kd, &orows);
        for (int sp = s0; sp < s1; sp++)
            sum[sp] += w[cls] * (kf * npu_slice_compute_cost(k, x->S, sp, m, n, taps, x->S) + k->drain_fixed +
                                 (uint64_t)orows * k->drain_row);
    }
}

/* The EXEC instructions of a GEMM step as the emitter writes them: an LDW and a WAVE per 2S x 2S
 * (k, n) block (FW, FlexSA's modes), or four core-masked LDWs and an ISW WAVE per S x S sub-tile
 * (1G4C). */
static uint64_t step_insns(const step_ctx_t *c, int64_t n, int64_t taps, int64_t kd)
{
    int sub = c->k->policy == NPU_POLICY_1G4C;
    int64_t u = sub ? c->x->cfg->s : 2 * c->x->cfg->s;
    return (sub ? 5u : 2u) * (uint64_t)(((n + u - 1) / u) * ((taps * kd + u - 1) / u));
}

/* The compute of a step of class cls (bit d: at dim d's last tile; tile sizes s) and, in *drain,
 * the drain after an output tile's last reduction step: the same for every step of the class,
 * so computed once per walk (its EXEC instructions too, for fetch_stall). */
static uint64_t step_compute(step_ctx_t *c, unsigned cls, const int64_t *s, uint64_t *drain)
{
    if (!(c->have >> cls & 1)) {
        int64_t m, n, taps, kd, orows;
        npu_slice_step_gemm(c->x, s, &m, &n, &taps, &kd, &orows);
        c->E[cls] = compute_of(c->x, c->k, c->p->split, m, n, taps, kd);
        c->I[cls] = step_insns(c, n, taps, kd);
        c->D[cls] = c->k->drain_fixed + (uint64_t)orows * c->k->drain_row;
        /* its SPM conflicts: not in the lower bounds (compute_sums), which stay below (>= 0) */
        c->D[cls] += npu_slice_step_drain(c->x, c->p->tile, s);
        c->have |= 1u << cls;
    }
    *drain = c->D[cls];
    return c->E[cls];
}

/* The cycles a GEMM step's waves wait for their instructions while its loads stream (mode burst;
 * 0 for the conv kernels, whose instructions are per tap and not costed here).
 * The fetch (rtl/npu_fetch.v) keeps two bursts of MAX_BURST_BEATS in flight, and the DRAM returns
 * reads in order: while the LOAD engine streams, each fetch burst waits behind up to
 * MAX_OUTSTANDING of the loads' bursts, so the fetch brings 2 MAX_BURST_BEATS beats per round
 * trip R = the latency + its own burst's bus time + the loads' bursts ahead of it (Lb, Lnb: the
 * step's loads' bus time and bursts). When the instructions arrive slower than the waves use them,
 * the waves idle that share of the loads' bus time (t_flexsa at tiny: A's rows of 180 contiguous
 * bytes reloaded every step put 8 bursts of 16 beats ahead of each fetch burst, where B's 3-beat
 * rows put 24 beats). */
static uint64_t fetch_stall(const step_ctx_t *c, unsigned cls, uint64_t E, uint64_t Lb, uint64_t Lnb)
{
    const npu_cfg_t *cfg = c->x->cfg;
    const npu_slice_cost_t *k = c->k;
    uint64_t DB = (uint64_t)npu_cfg_beat(cfg), MB = (uint64_t)cfg->max_burst_beats;
    uint64_t MO = (uint64_t)(cfg->max_outstanding > 0 ? cfg->max_outstanding : 1);
    uint64_t lat = (uint64_t)(cfg->dram_latency > 0 ? cfg->dram_latency : 0), R, sup, one = 1u << NPU_SLICE_Q;
    if (k->mode == NPU_SLICE_NOBURST || c->x->kind != NPU_SLICE_GEMM || !Lnb || !E)
        return 0;
    R = (lat << NPU_SLICE_Q) + MB * DB * k->byte + k->burst + Lb * (Lnb < MO ? Lnb : MO) / Lnb;
    sup = (2 * MB * DB / NPU_INSN_BYTES * E << NPU_SLICE_Q) / (R * c->I[cls]); /* supply / demand */
    return sup >= one ? 0 : ((Lb < E ? Lb : E) * (one - sup)) >> NPU_SLICE_Q;
}

/* The walk's totals still to come after the steps walked: the compute (from the step holding
 * E_prev on), the loads' cost, and their bus time with the stores. */
typedef struct rest { uint64_t E, L, LbS; } rest_t;

static uint64_t sub0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* A lower bound of the walk's final T (npu_slice_pipe_end) after the steps walked: every term
 * still to come is >= 0, and each of the rest's sums is at most what they add, since each later
 * step adds max(E_prev, L, Lb + S_prev2) and the end max(E_prev, S_prev2) + S_prev (a sum of
 * maxima is at least the maximum of the sums). */
static uint64_t rest_bound(const npu_slice_pipe_t *pipe, const rest_t *r)
{
    uint64_t m = r->E > r->L ? r->E : r->L;
    return pipe->T + (m > r->LbS ? m : r->LbS);
}

/* The burst costs of `bursts` bursts that hold the other DRAM port (npu_slice_pipe_step_x): with
 * two ports (a DRAM faster than a beat a cycle, share < byte) in the burst-aware cost; 0 else. */
static uint64_t cross_cost(const npu_slice_cost_t *k, uint64_t bursts)
{
    return k->mode == NPU_SLICE_BURST && k->share < k->byte ? bursts * k->burst : 0;
}

/* A C band's store spread over the steps of the next m-tile (slice.h): what is left of it and
 * the pieces still to come. */
typedef struct band_store { uint64_t S, Sb, Sc, n; } band_store_t;

/* The store of m-tile mi's band (its Mt rows of all of N), after its last n-tile: spread evenly
 * over this step and the next m-tile's other steps, as the STORE engine runs beside them while
 * they fill the other band buffer. */
static void band_store(const step_ctx_t *c, band_store_t *bs, int64_t mi)
{
    const npu_slice_plan_t *p = c->p;
    int64_t o[NPU_SLICE_DIMS] = {0}, s[NPU_SLICE_DIMS];
    uint64_t nb;
    memcpy(s, p->ext, sizeof s);
    tile_at(p, 0, mi, o, s);
    bs->S = tile_cost(c, NPU_SLICE_OUT, mi, o, s, &bs->Sb, &nb);
    bs->Sc = cross_cost(c->k, nb);
    bs->n = (uint64_t)(p->ntiles[1] * p->ntiles[2]);
}

/* This step's piece of the band's store in *S, *Sb, *Sc: an equal share of what is left, all of it
 * at the walk's last step. */
static void band_piece(band_store_t *bs, uint64_t *S, uint64_t *Sb, uint64_t *Sc, int last)
{
    uint64_t n = last ? 1 : bs->n;
    if (!bs->n)
        return;
    *S = bs->S / n;
    *Sb = bs->Sb / n;
    *Sc = bs->Sc / n;
    bs->S -= *S;
    bs->Sb -= *Sb;
    bs->Sc -= *Sc;
    bs->n = last ? 0 : bs->n - 1;
}

/* The step walk: per step the loads of the input tiles whose index changed, the compute (with
 * the waves' wait for the instruction fetch, fetch_stall, and the drain after an output tile's
 * last reduction step) and the store; T by the overlap formula. The loads take L (one after
 * another on the read side) and share the bus with the stores: the DMA time of a step is
 * max(L, Lb + S) (Lb: the loads' bus time). The walk stops (returns 1, the plan's cycles unset)
 * once the lower bound of its T exceeds bound: the candidate can be neither best nor runner-up
 * (the totals are the plan's, which the bounds of cost_steps already take as those of the walk,
 * fetch_stall only adding to it); else 0. */
static int walk_steps(step_ctx_t *c, uint64_t bound)
{
    const npu_slice_nest_t *x = c->x;
    npu_slice_plan_t *p = c->p;
    int64_t idx[NPU_SLICE_DIMS] = {0}, o[NPU_SLICE_DIMS], s[NPU_SLICE_DIMS], last[2] = {-1, -1};
    int64_t last2[2] = {-1, -1}; /* the tiles two steps back (a GEMM's buffer of this parity) */
    band_store_t bs = {0, 0, 0, 0};
    npu_slice_pipe_t pipe;
    rest_t rest = {p->compute, p->t[0].cost + p->t[1].cost, p->t[0].bus + p->t[1].bus + p->t[2].bus};
    uint64_t E_in = 0; /* the compute of the step before the last walked (0 before the second) */
    npu_slice_pipe_init(&pipe, c->k);
    for (;;) {
        uint64_t L = 0, Lb = 0, Lnb = 0, E, D, S = 0, Sb = 0, Sc = 0, bus, drain, nb;
        int64_t key;
        unsigned cls = 0;
        int done = 1;
        for (int d = 0; d < x->nd; d++) {
            tile_at(p, d, idx[d], o, s);
            cls |= (unsigned)(idx[d] == p->ntiles[d] - 1) << d;
            if (x->red >> d & 1 && idx[d] != p->ntiles[d] - 1)
                done = 0;
        }
        for (int t = 0; t < 2; t++) {
            int first = 1; /* the first step of the tile's band: the other dims at their first tile */
            key = 0;
            for (int d = 0; d < x->nd; d++)
                if (x->t[t].dep >> d & 1)
                    key = key * p->ntiles[d] + idx[d];
                else
                    first &= idx[d] == 0;
            if (p->band == t + 1 ? first : reloads(x) ? key != last2[t] : key != last[t]) {
                L += tile_cost(c, t, key, o, s, &bus, &nb);
                Lb += bus;
                Lnb += nb;
            }
            last2[t] = last[t];
            last[t] = key;
        }
        E = step_compute(c, cls, s, &drain);
        E += fetch_stall(c, cls, E, Lb, Lnb);
        D = 0;
        if (done) {
            key = 0;
            for (int d = 0; d < x->nd; d++)
                if (x->t[NPU_SLICE_OUT].dep >> d & 1)
                    key = key * p->ntiles[d] + idx[d];
            if (x->kind == NPU_SLICE_GEMM) /* beside the next step's waves */
                D = drain;
            else
                E += drain;
            if (!p->cband) {
                S = tile_cost(c, NPU_SLICE_OUT, key, o, s, &Sb, &nb);
                Sc = cross_cost(c->k, nb);
            } else if (idx[1] == p->ntiles[1] - 1) {
                band_store(c, &bs, idx[0]);
            }
        }
        if (p->cband)
            band_piece(&bs, &S, &Sb, &Sc, cls == (1u << x->nd) - 1u); /* the walk's last step */
        npu_slice_pipe_step_x(&pipe, L, Lb, cross_cost(c->k, Lnb), E, D, S, Sb, Sc);
        p->steps = pipe.steps;
        rest.E = sub0(rest.E, E_in); /* the previous step's compute is in T now */
        E_in = E;
        rest.L = sub0(rest.L, L);
        rest.LbS = sub0(rest.LbS, Lb + Sb);
        if (rest_bound(&pipe, &rest) > bound)
            return 1;
        /* next step: the odometer in loop order, innermost fastest */
        int pos;
        for (pos = x->nd - 1; pos >= 0; pos--) {
            int d = p->loop[pos];
            if (++idx[d] < p->ntiles[d])
                break;
            idx[d] = 0;
        }
        if (pos < 0)
            break;
    }
    p->cycles = npu_slice_pipe_end(&pipe);
    return 0;
}

/* Fills g with tensor t's grid at p's tiles: every tile once (over the dims t depends on, the
 * last dim fastest), each tile's cost and bus time kept when there are at most MEMO_MAX.
 * 0, or -1 out of memory. */
/* Per axis a of tensor t, the tile ranges along it at p's tiles: lo, len of tile i of the axis's
 * dim at at[a][2i], at[a][2i + 1] (in one block, returned to be freed; NULL out of memory). Each
 * tile's ranges are then looked up, not found again for every tile of the grid. */
static int64_t *axis_ranges(const npu_slice_nest_t *x, const npu_slice_plan_t *p, int t, int64_t **at)
{
    const npu_slice_tensor_t *ts = &x->t[t];
    int64_t n = 0, o[NPU_SLICE_DIMS] = {0}, s[NPU_SLICE_DIMS] = {0}, *r;
    for (int a = 0; a < ts->naxes; a++)
        n += p->ntiles[ts->ax[a].dim];
    if (!(r = malloc(sizeof *r * 2 * (size_t)n)))
        return NULL;
    n = 0;
    for (int a = 0; a < ts->naxes; a++) {
        int d = ts->ax[a].dim;
        at[a] = r + 2 * n;
        for (int64_t i = 0; i < p->ntiles[d]; i++) {
            tile_at(p, d, i, o, s);
            npu_slice_axis_range(x, &ts->ax[a], o, s, &at[a][2 * i], &at[a][2 * i + 1]);
        }
        n += p->ntiles[d];
    }
    return r;
}

static int grid_fill(const npu_slice_nest_t *x, const npu_slice_cost_t *k, const npu_slice_plan_t *p, int t,
                     grid_t *g)
{
    const npu_slice_tensor_t *ts = &x->t[t];
    int64_t n = 1, idx[NPU_SLICE_DIMS] = {0}, *at[4], lo[4], len[4], *rng;
    memset(g, 0, sizeof *g);
    for (int d = 0; d < x->nd; d++)
        if (ts->dep >> d & 1)
            n *= p->ntiles[d];
    if (n <= MEMO_MAX && !(g->tile = malloc(sizeof *g->tile * 3 * (size_t)n)))
        return -1;
    if (!(rng = axis_ranges(x, p, t, at)))
        return -1; /* the caller frees g->tile */
    g->n = n;
    for (int64_t key = 0; key < n; key++) {
        npu_bursts_t b;
        uint64_t cost, bus;
        for (int a = 0; a < ts->naxes; a++) {
            lo[a] = at[a][2 * idx[ts->ax[a].dim]];
            len[a] = at[a][2 * idx[ts->ax[a].dim] + 1];
        }
        memset(&b, 0, sizeof b);
        npu_slice_range_bursts(x, t, lo, len, &b);
        cost = xfer_of(x, k, t, &b, &bus);
        if (g->tile) {
            g->tile[3 * key] = cost;
            g->tile[3 * key + 1] = bus;
            g->tile[3 * key + 2] = b.bursts;
        }
        g->b.bursts += b.bursts;
        g->b.beats += b.beats;
        g->b.bytes += b.bytes;
        g->b.runs += b.runs;
        g->b.xfers += b.xfers;
        g->b.words += b.words;
        g->cost += cost;
        g->bus += bus;
        for (int d = x->nd - 1; d >= 0; d--) /* the next tile: the last dim fastest */
            if (ts->dep >> d & 1) {
                idx[d] = idx[d] + 1 < p->ntiles[d] ? idx[d] + 1 : 0;
                if (idx[d])
                    break;
            }
    }
    free(rng);
    g->done = 1;
    return 0;
}

/* Tensor t's grid for candidate p (tile options oi; NULL: none): the search's, filled on first
 * use, or, when the search keeps no such grid or its budget is spent, *tmp filled (the caller
 * frees its tiles). NULL out of memory. */
static const grid_t *grid_of(search_t *s, const npu_slice_plan_t *p, const int *oi, int t, grid_t *tmp)
{
    const npu_slice_nest_t *x = s->x;
    uint64_t key = 0, n = 1;
    grid_t *g = tmp;
    for (int d = 0; d < x->nd; d++)
        if (x->t[t].dep >> d & 1) {
            key = key * (uint64_t)s->nopt[d] + (uint64_t)(oi ? oi[d] : 0);
            n *= (uint64_t)p->ntiles[d];
        }
    if (oi && s->grid[t] && (n > MEMO_MAX || s->cached + n <= CACHE_MAX)) {
        if (!s->grid[t][key] && !(s->grid[t][key] = calloc(1, sizeof **s->grid[t])))
            return NULL;
        g = s->grid[t][key];
        if (g->done)
            return g;
        s->cached += n > MEMO_MAX ? 0 : n;
    }
    return grid_fill(x, s->k, p, t, g) ? NULL : g;
}

/* OUT's grid of a C band (slice.h): its tiles are the m-tiles' whole rows, the grid of n's
 * largest tile option (all of N, option 0). */
static const grid_t *band_grid(search_t *s, const npu_slice_plan_t *p, const int *oi, grid_t *tmp)
{
    npu_slice_plan_t q = *p;
    int oq[NPU_SLICE_DIMS];
    q.tile[1] = q.ext[1];
    q.ntiles[1] = 1;
    if (oi) {
        memcpy(oq, oi, sizeof oq);
        oq[1] = 0;
    }
    return grid_of(s, &q, oi ? oq : NULL, NPU_SLICE_OUT, tmp);
}

/* The plan's totals for tensor t from its grid: each tile is moved passes = loads / tiles times
 * (every pass of the loop nest over the tensor's dims visits each of its tiles once). */
static void tensor_totals(const npu_slice_nest_t *x, npu_slice_plan_t *p, int t, const grid_t *g)
{
    npu_slice_tstat_t *st = &p->t[t];
    uint64_t passes = t == NPU_SLICE_OUT ? 1 : passes_of(x, p->loop, p->ntiles, t, p->band);
    st->loads = passes * (uint64_t)g->n;
    st->b.bursts = passes * g->b.bursts;
    st->b.beats = passes * g->b.beats;
    st->b.bytes = passes * g->b.bytes;
    st->b.runs = passes * g->b.runs;
    st->b.xfers = passes * g->b.xfers;
    st->b.words = passes * g->b.words;
    st->cost = passes * g->cost;
    st->bus = passes * g->bus;
}

/* The candidate's dims, tiles, loop and band (option b), without its buffers (setup). */
static void fields(const npu_slice_nest_t *x, const int64_t *tile, int split, int order, int b,
                   npu_slice_plan_t *p)
{
    memset(p, 0, sizeof *p);
    p->kind = x->kind;
    p->split = split;
    p->order = order;
    p->band = band_of(x, x->order[order], b);
    p->cband = b == NPU_SLICE_BAND_OUT;
    p->nd = x->nd;
    for (int d = 0; d < x->nd; d++) {
        p->dim_name[d] = x->name[d];
        p->ext[d] = x->ext[d];
        p->tile[d] = tile[d];
        p->ntiles[d] = cdiv(x->ext[d], tile[d]);
        p->loop[d] = x->order[order][d];
    }
}

/* fields, and the buffers: 1 when the candidate fits the SPM and the OBUF. */
static int setup(const npu_slice_nest_t *x, const int64_t *tile, int split, int order, int b,
                 npu_slice_plan_t *p)
{
    fields(x, tile, split, order, b, p);
    return npu_slice_fit(x, p->tile, p->ntiles, p->spm_words, p->bufs, &p->obuf_rows) &&
           band_fits(x, p->tile, p->loop, b, p->band);
}

static int free_tiles(grid_t *tmp, int rc)
{
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        free(tmp[t].tile);
    return rc;
}

/* Costs a fitting candidate (tile options oi, or NULL): the totals per tensor and the compute
 * sum, then, unless max(compute, loads, loads' bus time + stores) (a lower bound of the
 * overlapped cycles) exceeds bound, the step walk (the compute is not summed when the
 * transfers alone exceed it), stopped once its T must exceed bound.
 * 0 costed, 2 bounded out, 3 costed beyond bound (cycles unset), -1 out of memory. */
static int cost_steps(search_t *s, npu_slice_plan_t *p, const int *oi, uint64_t bound)
{
    step_ctx_t c;
    grid_t tmp[NPU_SLICE_TENSORS];
    int rc = 0;
    c.x = s->x; /* no memset: the per-class arrays are read only where have says known */
    c.k = s->k;
    c.p = p;
    c.have = 0;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        tmp[t].tile = NULL;
    for (int t = 0; t < NPU_SLICE_TENSORS && rc == 0; t++) {
        const grid_t *g = t == NPU_SLICE_OUT && p->cband ? band_grid(s, p, oi, &tmp[t]) : grid_of(s, p, oi, t, &tmp[t]);
        if (!g) {
            rc = -1;
            break;
        }
        tensor_totals(s->x, p, t, g);
        c.memo[t] = g->tile;
    }
    if (rc == 0) {
        uint64_t ld = p->t[0].cost + p->t[1].cost, ldbus = p->t[0].bus + p->t[1].bus + p->t[2].bus;
        uint64_t sum[NPU_SLICE_SPLITS];
        p->transfer = p->t[0].cost + p->t[1].cost + p->t[2].cost;
        ld = ld > ldbus ? ld : ldbus;
        if (ld > bound) /* out whatever its compute: not summed */
            return free_tiles(tmp, 2);
        if (s->lc && oi)
            sum[p->split] = s->lc[p->index % s->combos * NPU_SLICE_SPLITS + (uint64_t)p->split];
        else
            compute_sums(s->x, s->k, p->tile, p->ntiles, p->split, p->split + 1, sum);
        p->compute = sum[p->split];
        if (p->compute > bound)
            rc = 2;
        else if (walk_steps(&c, bound))
            rc = 3;
    }
    return free_tiles(tmp, rc);
}

static uint64_t plan_bytes(const npu_slice_plan_t *p)
{
    return p->t[0].b.bytes + p->t[1].b.bytes + p->t[2].b.bytes;
}

/* The tie-break order: cycles, then DRAM bytes, then the enumeration index. */
static int better(const npu_slice_plan_t *a, const npu_slice_plan_t *b)
{
    if (a->cycles != b->cycles)
        return a->cycles < b->cycles;
    if (plan_bytes(a) != plan_bytes(b))
        return plan_bytes(a) < plan_bytes(b);
    return a->index < b->index;
}

/* Keeps the best and the runner-up of the costed candidates. */
static void keep(npu_slice_result_t *r, const npu_slice_plan_t *c)
{
    if (r->evaluated == 0 || better(c, &r->best)) {
        if (r->evaluated)
            r->second = r->best;
        r->best = *c;
    } else if (r->evaluated == 1 || better(c, &r->second)) {
        r->second = *c;
    }
    r->evaluated++;
}

/* Per tensor axis and tile option of its dim: the sum of the tiles' ranges along the axis.
 * 0, or -1 out of memory. */
static int axis_sums(search_t *s)
{
    const npu_slice_nest_t *x = s->x;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        for (int a = 0; a < x->t[t].naxes; a++) {
            const npu_slice_axis_t *ax = &x->t[t].ax[a];
            int d = ax->dim;
            if (!(s->axsum[t][a] = calloc((size_t)s->nopt[d], sizeof *s->axsum[t][a])))
                return -1;
            for (int j = 0; j < s->nopt[d]; j++) {
                int64_t o[NPU_SLICE_DIMS] = {0}, sz[NPU_SLICE_DIMS] = {0}, lo, len, tile = s->opt[d][j];
                for (o[d] = 0; o[d] < x->ext[d]; o[d] += tile) {
                    sz[d] = tile < x->ext[d] - o[d] ? tile : x->ext[d] - o[d];
                    npu_slice_axis_range(x, ax, o, sz, &lo, &len);
                    s->axsum[t][a][j] += (uint64_t)len;
                }
            }
        }
    return 0;
}

static void search_free(search_t *s)
{
    uint64_t n;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        n = 1;
        for (int d = 0; d < s->x->nd && s->grid[t]; d++)
            n *= s->x->t[t].dep >> d & 1 ? (uint64_t)s->nopt[d] : 1u;
        for (uint64_t g = 0; s->grid[t] && g < n; g++)
            if (s->grid[t][g]) {
                free(s->grid[t][g]->tile);
                free(s->grid[t][g]);
            }
        free(s->grid[t]);
        for (int a = 0; a < 4; a++)
            free(s->axsum[t][a]);
    }
    for (int d = 0; d < NPU_SLICE_DIMS; d++) {
        free(s->opt[d]);
        free(s->ntl[d]);
    }
    free(s->lc);
}

/* The tile options per dim (largest first), the grid tables (none for a tensor with more than
 * GRIDS_MAX grids: its candidates cost their own) and the axis sums. 0; 1 when the candidates
 * exceed NPU_SLICE_MAX_CANDS; -1 out of memory. search_free in every case. */
static int search_init(search_t *s, const npu_slice_nest_t *x, const npu_slice_cost_t *k)
{
    memset(s, 0, sizeof *s);
    s->x = x;
    s->k = k;
    s->combos = 1;
    s->bands = x->kind == NPU_SLICE_GEMM ? NPU_SLICE_BANDS : 1;
    for (int d = 0; d < x->nd; d++) {
        s->nopt[d] = npu_slice_tile_opts(x->ext[d], x->unit[d], NULL, 0);
        s->opt[d] = malloc(sizeof *s->opt[d] * (size_t)s->nopt[d]);
        s->ntl[d] = malloc(sizeof *s->ntl[d] * (size_t)s->nopt[d]);
        if (!s->opt[d] || !s->ntl[d])
            return -1;
        npu_slice_tile_opts(x->ext[d], x->unit[d], s->opt[d], s->nopt[d]);
        for (int j = 0; j < s->nopt[d]; j++)
            s->ntl[d][j] = cdiv(x->ext[d], s->opt[d][j]);
        s->combos *= (uint64_t)s->nopt[d];
        if (s->combos > NPU_SLICE_MAX_CANDS / (NPU_SLICE_SPLITS * NPU_SLICE_ORDERS * (uint64_t)s->bands))
            return 1;
    }
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        uint64_t n = 1;
        for (int d = 0; d < x->nd; d++)
            n *= x->t[t].dep >> d & 1 ? (uint64_t)s->nopt[d] : 1u;
        s->grid[t] = n <= GRIDS_MAX ? calloc((size_t)n, sizeof *s->grid[t]) : NULL;
    }
    return axis_sums(s);
}

/* A fitting candidate: its enumeration index and a lower bound of its cycles. */
typedef struct cand { uint64_t i, lb; } cand_t;

static int cand_less(const cand_t *a, const cand_t *b)
{
    return a->lb != b->lb ? a->lb < b->lb : a->i < b->i;
}

/* The min-heap h of n candidates by (bound, index) below position i. */
static void sift_down(cand_t *h, uint64_t n, uint64_t i)
{
    for (;;) {
        uint64_t m = i, l = 2 * i + 1;
        if (l < n && cand_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && cand_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        cand_t c = h[i];
        h[i] = h[m];
        h[m] = c;
        i = m;
    }
}

/* Removes the top of the min-heap h of n + 1 candidates (Floyd's way: the hole goes down to a leaf
 * along the smaller children, one comparison a level, then h[n] rises from there). */
static void pop(cand_t *h, uint64_t n)
{
    uint64_t i = 0, c;
    cand_t last = h[n];
    while ((c = 2 * i + 1) < n) {
        c += c + 1 < n && cand_less(&h[c + 1], &h[c]);
        h[i] = h[c];
        i = c;
    }
    while (i > 0 && cand_less(&last, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = last;
}

/* Tile combination `combo` (dim 0 slowest): each dim's option index, tile and tile count. */
static void combo_tiles(const search_t *s, uint64_t combo, int *oi, int64_t *tile, int64_t *ntiles)
{
    uint32_t c = (uint32_t)combo; /* < NPU_SLICE_MAX_CANDS (search_init) */
    for (int d = s->x->nd - 1; d >= 0; d--) {
        oi[d] = (int)(c % (uint32_t)s->nopt[d]);
        c /= (uint32_t)s->nopt[d];
        tile[d] = s->opt[d][oi[d]];
        ntiles[d] = s->ntl[d][oi[d]];
    }
}

/* The walk's ends at these tiles: the first step's loads (each input's first tile) in ends[0],
 * ends[1], the last step's store (the output's last tile) in ends[2]. */
static void ends_of(const search_t *s, const int64_t *tile, const int64_t *ntiles, uint64_t *ends)
{
    const npu_slice_nest_t *x = s->x;
    int64_t o[NPU_SLICE_DIMS], sz[NPU_SLICE_DIMS];
    npu_bursts_t b;
    uint64_t bus;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        for (int d = 0; d < x->nd; d++) {
            o[d] = t == NPU_SLICE_OUT ? (ntiles[d] - 1) * tile[d] : 0;
            sz[d] = tile[d] < x->ext[d] - o[d] ? tile[d] : x->ext[d] - o[d];
        }
        ends[t] = tile_xfer(x, s->k, t, o, sz, &b, &bus);
    }
}

/* Each input's tiles loaded once at these tiles (its grid's cost, which a pass repeats; 0 when
 * out of memory): the candidates of the combination share them. GEMMs only: a convolution's
 * grids (strided tile views) cost more to count than the candidates they would bound out (the
 * three searches of slice_search/resnet50_layer_fast: 0.09 s of CPU without, 0.8 s with). */
static void loads_of(search_t *s, const int *oi, const int64_t *tile, const int64_t *ntiles, uint64_t *ld)
{
    npu_slice_plan_t p;
    grid_t tmp;
    ld[0] = ld[1] = 0;
    if (s->x->kind != NPU_SLICE_GEMM)
        return;
    memcpy(p.tile, tile, sizeof p.tile);
    memcpy(p.ntiles, ntiles, sizeof p.ntiles);
    memcpy(p.ext, s->x->ext, sizeof p.ext);
    for (int t = 0; t < 2; t++) {
        const grid_t *g;
        tmp.tile = NULL;
        g = grid_of(s, &p, oi, t, &tmp);
        ld[t] = g ? g->cost : 0;
        free(tmp.tile);
    }
}

/* What the walk adds to the compute sum at its ends (npu_slice_pipe_step_x, _end): T >= the
 * first step's loads and their idle latency + every step's compute + the last step's store
 * (T = L0 + x0 + sum over later steps of max(E_prev, ...) + max(E_last, ...) + D + S_last). A
 * banded input's first load (the band) and a C band's store (spread over steps) are left out. */
static uint64_t ends_bound(const npu_slice_cost_t *k, const uint64_t *ends, int band, int cband)
{
    return npu_slice_idle(k) + (band == 1 ? 0 : ends[0]) + (band == 2 ? 0 : ends[1]) + (cband ? 0 : ends[2]);
}

/* Tile combination `combo`'s candidates (index i = ((split x ORDERS + order) x bands + band) x
 * combos + combo), with each dim's option index oi, tile and tile count: none when the tiles (and
 * the band) do not fit the SPM and the OBUF, else each with a lower bound of its cycles,
 * appended to cs: the max of its compute sum (by split) plus the walk's ends (ends_bound), the
 * bus time of the bytes it moves and its loads' descriptors (lower_bound, by loop order and
 * band) and, for a GEMM, its loads' exact cost (loads_of). */
static void bound_combo(search_t *s, uint64_t combo, const int *oi, const int64_t *tile,
                        const int64_t *ntiles, cand_t *cs, uint64_t *nc)
{
    const npu_slice_nest_t *x = s->x;
    int bufs[NPU_SLICE_TENSORS], fits[NPU_SLICE_ORDERS][NPU_SLICE_BANDS], band[NPU_SLICE_ORDERS][NPU_SLICE_BANDS];
    unsigned words[NPU_SLICE_TENSORS], orows;
    uint64_t lt[NPU_SLICE_ORDERS][NPU_SLICE_BANDS], lc[NPU_SLICE_SPLITS], ends[NPU_SLICE_TENSORS], tile_ld[2];
    if (!npu_slice_fit(x, tile, ntiles, words, bufs, &orows))
        return;
    loads_of(s, oi, tile, ntiles, tile_ld);
    for (int o = 0; o < NPU_SLICE_ORDERS; o++)
        for (int b = 0; b < s->bands; b++) {
            band[o][b] = band_of(x, x->order[o], b);
            fits[o][b] = band_fits(x, tile, x->order[o], b, band[o][b]);
            lt[o][b] = fits[o][b] ? lower_bound(s, x->order[o], ntiles, oi, band[o][b]) : 0;
            /* the loads' cost, which cost_steps would find the candidate out by */
            uint64_t ld = tile_ld[0] * passes_of(x, x->order[o], ntiles, 0, band[o][b]) +
                          tile_ld[1] * passes_of(x, x->order[o], ntiles, 1, band[o][b]);
            lt[o][b] = ld > lt[o][b] ? ld : lt[o][b];
        }
    compute_sums(x, s->k, tile, ntiles, 0, NPU_SLICE_SPLITS, lc);
    if (s->lc)
        memcpy(&s->lc[combo * NPU_SLICE_SPLITS], lc, sizeof lc);
    ends_of(s, tile, ntiles, ends);
    for (int sp = 0; sp < NPU_SLICE_SPLITS; sp++)
        for (int o = 0; o < NPU_SLICE_ORDERS; o++)
            for (int b = 0; b < s->bands; b++) {
                if (!fits[o][b])
                    continue;
                uint64_t ix = ((uint64_t)sp * NPU_SLICE_ORDERS + (uint64_t)o) * (uint64_t)s->bands + (uint64_t)b;
                uint64_t lcb = lc[sp] + ends_bound(s->k, ends, band[o][b], b == NPU_SLICE_BAND_OUT);
                cs[*nc].i = ix * s->combos + combo;
                cs[(*nc)++].lb = lt[o][b] > lcb ? lt[o][b] : lcb;
            }
}

/* Every candidate is visited: the tile combinations in order (dim 0 slowest), each with its
 * splits, orders and bands (bound_combo); the fitting ones' count in *nc. */
static void bound_all(search_t *s, cand_t *cs, uint64_t *nc, npu_slice_result_t *r)
{
    const npu_slice_nest_t *x = s->x;
    int64_t tile[NPU_SLICE_DIMS], ntiles[NPU_SLICE_DIMS];
    int oi[NPU_SLICE_DIMS];
    combo_tiles(s, 0, oi, tile, ntiles);
    for (uint64_t combo = 0; combo < s->combos; combo++) {
        r->visited += NPU_SLICE_SPLITS * NPU_SLICE_ORDERS * (uint64_t)s->bands;
        bound_combo(s, combo, oi, tile, ntiles, cs, nc);
        for (int d = x->nd - 1; d >= 0; d--) { /* the next combination: the last dim fastest */
            oi[d] = oi[d] + 1 < s->nopt[d] ? oi[d] + 1 : 0;
            tile[d] = s->opt[d][oi[d]];
            ntiles[d] = s->ntl[d][oi[d]];
            if (oi[d])
                break;
        }
    }
}

/* The cycles a candidate must not exceed to be kept: the runner-up's once two are costed (the
 * best's once one is, without k->runner); UINT64_MAX before. */
static uint64_t keep_limit(const search_t *s, const npu_slice_result_t *r)
{
    if (s->k->runner)
        return r->evaluated >= 2 ? r->second.cycles : UINT64_MAX;
    return r->evaluated >= 1 ? r->best.cycles : UINT64_MAX;
}

/* The fitting candidates are costed in the order of their bound (then index), until the bound
 * exceeds keep_limit: the rest can be neither best nor (k->runner) runner-up, so the choice is
 * that of costing every candidate. A heap yields that order without sorting the tail. */
static int cost_in_order(search_t *s, cand_t *h, uint64_t n, npu_slice_result_t *r)
{
    int rc = 0;
    for (uint64_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    while (n > 0 && rc == 0) {
        cand_t c = h[0];
        npu_slice_plan_t p;
        int64_t tile[NPU_SLICE_DIMS], ntiles[NPU_SLICE_DIMS];
        int oi[NPU_SLICE_DIMS], ix = (int)(c.i / s->combos), b = ix % s->bands;
        uint64_t limit = keep_limit(s, r);
        if (c.lb > limit)
            break;
        pop(h, --n);
        combo_tiles(s, c.i % s->combos, oi, tile, ntiles);
        ix /= s->bands;
        fields(s->x, tile, ix / NPU_SLICE_ORDERS, ix % NPU_SLICE_ORDERS, b, &p); /* it fits (bound_combo) */
        p.index = c.i;
        rc = cost_steps(s, &p, oi, limit);
        if (rc == 0) {
            npu_slice_fit(s->x, p.tile, p.ntiles, p.spm_words, p.bufs, &p.obuf_rows); /* its buffers */
            keep(r, &p);
        }
        r->evaluated += rc == 3; /* walked, more cycles than keep_limit: kept by neither */
        rc = rc == 2 || rc == 3 ? 0 : rc;
    }
    return rc;
}

/* Bounds every candidate, then costs the fitting ones in bound order (cost_in_order). */
static int search(const npu_slice_nest_t *x, const npu_slice_cost_t *k, npu_slice_result_t *r)
{
    search_t s;
    cand_t *cs = NULL;
    uint64_t nc = 0;
    int rc = search_init(&s, x, k);
    memset(r, 0, sizeof *r);
    if (rc == 0 &&
        (!(cs = malloc(sizeof *cs * s.combos * NPU_SLICE_SPLITS * NPU_SLICE_ORDERS * (size_t)s.bands)) ||
         !(s.lc = malloc(sizeof *s.lc * s.combos * NPU_SLICE_SPLITS))))
        rc = -1;
    if (rc == 0) {
        bound_all(&s, cs, &nc, r);
        r->fitting = nc;
        rc = cost_in_order(&s, cs, nc, r);
    }
    free(cs);
    search_free(&s);
    return rc ? -1 : 0;
}

static int finish(int rc, const npu_slice_result_t *r, char *msg, size_t n)
{
    if (rc != 0) {
        if (n)
            snprintf(msg, n, r->visited == 0 ? "more than %d candidates" : "out of memory", NPU_SLICE_MAX_CANDS);
        return -1;
    }
    if (r->evaluated == 0) {
        if (n)
            snprintf(msg, n, "no slicing fits the SPM and the OBUF (%llu candidates)",
                     (unsigned long long)r->visited);
        return -1;
    }
    if (n)
        msg[0] = '\0';
    return 0;
}

int npu_slice_gemm(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int M, int N, int K,
                   npu_slice_result_t *r, char *msg, size_t n)
{
    npu_slice_nest_t x;
    if (npu_slice_nest_init(&x, cfg, NPU_SLICE_GEMM, NULL, M, N, K, msg, n) != 0)
        return -1;
    x.no_split_a = k->no_split_a;
    return finish(search(&x, k, r), r, msg, n);
}

int npu_slice_conv(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_conv_t *c, int kind,
                   npu_slice_result_t *r, char *msg, size_t n)
{
    npu_slice_nest_t x;
    if (kind == NPU_SLICE_GEMM || npu_slice_nest_init(&x, cfg, kind, c, 0, 0, 0, msg, n) != 0) {
        if (kind == NPU_SLICE_GEMM && n)
            snprintf(msg, n, "npu_slice_conv: a convolution kernel is needed");
        return -1;
    }
    return finish(search(&x, k, r), r, msg, n);
}

uint64_t npu_slice_count(const npu_cfg_t *cfg, int kind, const npu_conv_t *c, int M, int N, int K)
{
    npu_slice_nest_t x;
    uint64_t n = NPU_SLICE_SPLITS * NPU_SLICE_ORDERS;
    if (npu_slice_nest_init(&x, cfg, kind, c, M, N, K, NULL, 0) != 0)
        return 0;
    n *= kind == NPU_SLICE_GEMM ? NPU_SLICE_BANDS : 1;
    for (int d = 0; d < x.nd; d++)
        n *= (uint64_t)npu_slice_tile_opts(x.ext[d], x.unit[d], NULL, 0);
    return n;
}

int npu_slice_eval(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int kind, const npu_conv_t *c,
                   int M, int N, int K, const int64_t *tile, int split, int order, npu_slice_plan_t *p)
{
    return npu_slice_eval_band(cfg, k, kind, c, M, N, K, tile, split, order, NPU_SLICE_BAND_NONE, p);
}

int npu_slice_eval_band(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int kind, const npu_conv_t *c,
                        int M, int N, int K, const int64_t *tile, int split, int order, int band,
                        npu_slice_plan_t *p)
{
    npu_slice_nest_t x;
    if (npu_slice_nest_init(&x, cfg, kind, c, M, N, K, NULL, 0) != 0 || split < 0 ||
        split >= NPU_SLICE_SPLITS || order < 0 || order >= NPU_SLICE_ORDERS || band < 0 ||
        band >= (kind == NPU_SLICE_GEMM ? NPU_SLICE_BANDS : 1))
        return -1;
    x.no_split_a = k->no_split_a;
    for (int d = 0; d < x.nd; d++)
        if (tile[d] < 1 || tile[d] > x.ext[d])
            return -1;
    if (!setup(&x, tile, split, order, band, p))
        return 1;
    search_t s;
    memset(&s, 0, sizeof s);
    s.x = &x;
    s.k = k;
    return cost_steps(&s, p, NULL, UINT64_MAX);
}
