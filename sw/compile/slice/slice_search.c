/* slice_search.c - candidate enumeration, step-by-step cost and choice of the slicing stage; see
 * slice.h. */
#include "compile/slice/slice_nest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_MAX (1 << 20) /* tiles per tensor whose transfer costs are remembered */

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

/* The transfer costs of one tensor's tiles, computed once per tile (when there are at most
 * MEMO_MAX of them): per tile its cost and its bus time (slice_cost.h). */
typedef struct memo {
    int64_t n;
    uint64_t *cost; /* 2 per tile: cost, bus */
} memo_t;

typedef struct step_ctx {
    const npu_slice_nest_t *x;
    const npu_slice_cost_t *k;
    npu_slice_plan_t *p;
    memo_t m[NPU_SLICE_TENSORS];
} step_ctx_t;

/* Tile (o, s) of tensor t: its transfers in *b (zeroed first), their cost returned, their bus
 * time in *bus. */
static uint64_t tile_xfer(const step_ctx_t *c, int t, const int64_t *o, const int64_t *s, npu_bursts_t *b,
                          uint64_t *bus)
{
    memset(b, 0, sizeof *b);
    npu_slice_tile_bursts(c->x, t, o, s, b);
    *bus = npu_slice_xfer_bus(c->k, b, c->x->B);
    return npu_slice_xfer_cost(c->k, b, c->x->B, t == NPU_SLICE_OUT);
}

/* Transfer cost (and bus time in *bus) of tensor t's tile (o, s) with linear tile index key. */
static uint64_t tile_cost(const step_ctx_t *c, int t, int64_t key, const int64_t *o, const int64_t *s,
                          uint64_t *bus)
{
    npu_bursts_t b;
    if (c->m[t].cost) {
        *bus = c->m[t].cost[2 * key + 1];
        return c->m[t].cost[2 * key];
    }
    return tile_xfer(c, t, o, s, &b, bus);
}

/* Origin and size of tile i along dim d. */
static void tile_at(const npu_slice_plan_t *p, int d, int64_t i, int64_t *o, int64_t *s)
{
    o[d] = i * p->tile[d];
    s[d] = p->tile[d] < p->ext[d] - o[d] ? p->tile[d] : p->ext[d] - o[d];
}

/* A GEMM's emitter loads both operands at every step (chunk), as its double buffers alternate;
 * the other kernels keep a tile whose index did not change. */
static int reloads(const npu_slice_nest_t *x) { return x->kind == NPU_SLICE_GEMM; }

/* Loads of tensor t over the nest: the product of the tile counts of the loop positions down to
 * the innermost one the tensor depends on with more than one tile (its index changes there), or
 * every step's (reloads). */
static uint64_t loads_of(const npu_slice_nest_t *x, const npu_slice_plan_t *p, int t)
{
    int j = -1;
    uint64_t n = 1;
    for (int pos = 0; pos < x->nd; pos++)
        if ((x->t[t].dep >> p->loop[pos] & 1) && p->ntiles[p->loop[pos]] > 1)
            j = pos;
    j = reloads(x) ? x->nd - 1 : j;
    for (int pos = 0; pos <= j; pos++)
        n *= (uint64_t)p->ntiles[p->loop[pos]];
    return n;
}

/* A lower bound of the candidate's cycles: every byte moved crosses the DRAM bus (T >= sum of
 * the transfers). Bytes per pass are separable: the product over the tensor's axes of the sum of
 * the tiles' ranges along it. */
static uint64_t lower_bound(const npu_slice_nest_t *x, const npu_slice_cost_t *k, const npu_slice_plan_t *p)
{
    uint64_t lb = 0;
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        const npu_slice_tensor_t *ts = &x->t[t];
        uint64_t bytes = ts->ebytes * (uint64_t)(ts->layout == NPU_SLICE_T_KFC ? x->T : 1), tiles = 1;
        for (int a = 0; a < ts->naxes; a++) {
            int d = ts->ax[a].dim;
            int64_t o[NPU_SLICE_DIMS] = {0}, s[NPU_SLICE_DIMS] = {0}, lo, len;
            uint64_t sum = 0;
            for (int64_t i = 0; i < p->ntiles[d]; i++) {
                tile_at(p, d, i, o, s);
                npu_slice_axis_range(x, &ts->ax[a], o, s, &lo, &len);
                sum += (uint64_t)len;
            }
            bytes *= sum;
        }
        for (int d = 0; d < x->nd; d++)
            if (ts->dep >> d & 1)
                tiles *= (uint64_t)p->ntiles[d];
        lb += bytes * (t == NPU_SLICE_OUT ? 1 : loads_of(x, p, t) / tiles) * k->byte;
    }
    return lb;
}

/* The exact sum of the steps' compute (with the drains): every dim has at most two tile sizes
 * (full and the last), so the steps fall into <= 2^nd classes of equal compute. A drain ends an
 * output tile: the classes whose reduction dims are at their last tile, once each. */
static uint64_t compute_sum(const npu_slice_nest_t *x, const npu_slice_cost_t *k, const npu_slice_plan_t *p)
{
    uint64_t sum = 0;
    for (unsigned cls = 0; cls < 1u << x->nd; cls++) {
        int64_t s[NPU_SLICE_DIMS], m, n, taps, kd, orows;
        uint64_t cnt = 1, drains = 1;
        int ok = 1;
        for (int d = 0; d < x->nd && ok; d++) {
            int64_t last = p->ext[d] - (p->ntiles[d] - 1) * p->tile[d], full = p->ntiles[d] - 1;
            if (cls >> d & 1) { /* the last tile (also the full size when the tile divides) */
                s[d] = last;
            } else { /* the full tiles before it */
                s[d] = p->tile[d];
                cnt *= (uint64_t)full;
                drains *= x->red >> d & 1 ? 0u : (uint64_t)full;
                ok = full > 0;
            }
        }
        if (!ok)
            continue;
        npu_slice_step_gemm(x, s, &m, &n, &taps, &kd, &orows);
        sum += cnt * npu_slice_compute_cost(k, x->S, p->split, m, n, taps, kd) +
               drains * (k->drain_fixed + (uint64_t)orows * k->drain_row);
    }
    return sum;
}

/* The step walk: per step the loads of the input tiles whose index changed, the compute (and the
 * drain after an output tile's last reduction step) and the store; T by the overlap formula. The
 * loads take L (one after another on the read side) and share the bus with the stores: the DMA
 * time of a step is max(L, Lb + S) (Lb: the loads' bus time). */
static void walk_steps(step_ctx_t *c)
{
    const npu_slice_nest_t *x = c->x;
    npu_slice_plan_t *p = c->p;
    int64_t idx[NPU_SLICE_DIMS] = {0}, o[NPU_SLICE_DIMS], s[NPU_SLICE_DIMS], last[2] = {-1, -1};
    uint64_t T = 0, E_prev = 0, S_prev = 0, S_prev2 = 0;
    for (uint64_t i = 0;; i++) {
        uint64_t L = 0, Lb = 0, E, S = 0, bus, dma;
        int64_t m, n, taps, kd, orows, key;
        int done = 1;
        for (int d = 0; d < x->nd; d++) {
            tile_at(p, d, idx[d], o, s);
            if (x->red >> d & 1 && idx[d] != p->ntiles[d] - 1)
                done = 0;
        }
        for (int t = 0; t < 2; t++) {
            key = 0;
            for (int d = 0; d < x->nd; d++)
                if (x->t[t].dep >> d & 1)
                    key = key * p->ntiles[d] + idx[d];
            if (key != last[t] || reloads(x)) {
                L += tile_cost(c, t, key, o, s, &bus);
                Lb += bus;
            }
            last[t] = key;
        }
        npu_slice_step_gemm(x, s, &m, &n, &taps, &kd, &orows);
        E = npu_slice_compute_cost(c->k, x->S, p->split, m, n, taps, kd);
        if (done) {
            key = 0;
            for (int d = 0; d < x->nd; d++)
                if (x->t[NPU_SLICE_OUT].dep >> d & 1)
                    key = key * p->ntiles[d] + idx[d];
            E += c->k->drain_fixed + (uint64_t)orows * c->k->drain_row;
            S = tile_cost(c, NPU_SLICE_OUT, key, o, s, &bus);
        }
        dma = L > Lb + S_prev2 ? L : Lb + S_prev2;
        T += i == 0 ? L : (E_prev > dma ? E_prev : dma);
        E_prev = E;
        S_prev2 = S_prev;
        S_prev = S;
        p->steps = i + 1;
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
    T += (E_prev > S_prev2 ? E_prev : S_prev2) + S_prev;
    p->cycles = T;
}

static void memo_free(step_ctx_t *c)
{
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        free(c->m[t].cost);
}

/* Every tile of tensor t once (its grid over the dims it depends on, the last dim fastest): the
 * memo, and the plan's totals for the tensor: each tile is moved passes = loads / tiles times
 * (every pass of the loop nest over the tensor's dims visits each of its tiles once). */
static int tensor_totals(step_ctx_t *c, int t)
{
    const npu_slice_nest_t *x = c->x;
    npu_slice_plan_t *p = c->p;
    npu_slice_tstat_t *st = &p->t[t];
    int64_t n = 1, o[NPU_SLICE_DIMS] = {0}, s[NPU_SLICE_DIMS] = {0};
    uint64_t passes;
    for (int d = 0; d < x->nd; d++)
        if (x->t[t].dep >> d & 1)
            n *= p->ntiles[d];
    if (n <= MEMO_MAX && !(c->m[t].cost = malloc(sizeof *c->m[t].cost * 2 * (size_t)n)))
        return -1;
    c->m[t].n = n;
    st->loads = t == NPU_SLICE_OUT ? (uint64_t)n : loads_of(x, p, t);
    passes = st->loads / (uint64_t)n;
    for (int64_t key = 0; key < n; key++) {
        npu_bursts_t b;
        int64_t rest = key;
        uint64_t cost, bus;
        for (int d = x->nd - 1; d >= 0; d--)
            if (x->t[t].dep >> d & 1) {
                tile_at(p, d, rest % p->ntiles[d], o, s);
                rest /= p->ntiles[d];
            }
        cost = tile_xfer(c, t, o, s, &b, &bus);
        if (c->m[t].cost) {
            c->m[t].cost[2 * key] = cost;
            c->m[t].cost[2 * key + 1] = bus;
        }
        st->b.bursts += passes * b.bursts;
        st->b.beats += passes * b.beats;
        st->b.bytes += passes * b.bytes;
        st->b.runs += passes * b.runs;
        st->b.xfers += passes * b.xfers;
        st->cost += passes * cost;
        st->bus += passes * bus;
    }
    return 0;
}

/* The candidate's dims, tiles and loop; 1 when it fits the SPM and the OBUF. */
static int setup(const npu_slice_nest_t *x, const int64_t *tile, int split, int order, npu_slice_plan_t *p)
{
    memset(p, 0, sizeof *p);
    p->kind = x->kind;
    p->split = split;
    p->order = order;
    p->nd = x->nd;
    for (int d = 0; d < x->nd; d++) {
        p->dim_name[d] = x->name[d];
        p->ext[d] = x->ext[d];
        p->tile[d] = tile[d];
        p->ntiles[d] = cdiv(x->ext[d], tile[d]);
        p->loop[d] = x->order[order][d];
    }
    return npu_slice_fit(x, p->tile, p->ntiles, p->spm_words, p->bufs, &p->obuf_rows);
}

/* Costs a fitting candidate: the totals per tensor and the compute sum, then, unless
 * max(compute, loads, loads' bus time + stores) (a lower bound of the overlapped cycles) exceeds
 * bound, the step walk.
 * 0 costed, 2 bounded out, -1 out of memory. */
static int cost_steps(const npu_slice_nest_t *x, const npu_slice_cost_t *k, npu_slice_plan_t *p, uint64_t bound)
{
    step_ctx_t c;
    int rc = 0;
    memset(&c, 0, sizeof c);
    c.x = x;
    c.k = k;
    c.p = p;
    for (int t = 0; t < NPU_SLICE_TENSORS && rc == 0; t++)
        rc = tensor_totals(&c, t);
    if (rc == 0) {
        p->compute = compute_sum(x, k, p);
        uint64_t ld = p->t[0].cost + p->t[1].cost, ldbus = p->t[0].bus + p->t[1].bus + p->t[2].cost;
        p->transfer = p->t[0].cost + p->t[1].cost + p->t[2].cost;
        ld = ld > ldbus ? ld : ldbus;
        if ((p->compute > ld ? p->compute : ld) > bound)
            rc = 2;
        else
            walk_steps(&c);
    }
    memo_free(&c);
    return rc;
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

/* Tile options per dim (largest first); returns the candidate count (0 on failure). */
static uint64_t options(const npu_slice_nest_t *x, int64_t **opt, int *nopt)
{
    uint64_t n = NPU_SLICE_SPLITS * NPU_SLICE_ORDERS;
    for (int d = 0; d < x->nd; d++) {
        nopt[d] = npu_slice_tile_opts(x->ext[d], x->unit[d], NULL, 0);
        opt[d] = malloc(sizeof **opt * (size_t)nopt[d]);
        if (!opt[d])
            return 0;
        npu_slice_tile_opts(x->ext[d], x->unit[d], opt[d], nopt[d]);
        n *= (uint64_t)nopt[d];
    }
    return n;
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

/* A fitting candidate: its enumeration index and a lower bound of its cycles. */
typedef struct cand { uint64_t i, lb; } cand_t;

static int by_bound(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->lb != y->lb)
        return x->lb < y->lb ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Candidate i in enumeration order: split, order, then the dims' tiles (dim 0 slowest). */
static void candidate(const npu_slice_nest_t *x, int64_t *const *opt, const int *nopt, uint64_t i,
                      int64_t *tile, int *split, int *order)
{
    for (int d = x->nd - 1; d >= 0; d--) {
        tile[d] = opt[d][i % (uint64_t)nopt[d]];
        i /= (uint64_t)nopt[d];
    }
    *order = (int)(i % NPU_SLICE_ORDERS);
    *split = (int)(i / NPU_SLICE_ORDERS);
}

/* Every candidate is visited and checked against the SPM and the OBUF; the fitting ones are
 * costed in the order of a lower bound (max of the compute sum and the bus time of the bytes
 * moved), until the bound exceeds the runner-up's cycles: the rest can be neither best nor
 * runner-up, so the choice is that of costing every candidate. */
static int search(const npu_slice_nest_t *x, const npu_slice_cost_t *k, npu_slice_result_t *r)
{
    int64_t *opt[NPU_SLICE_DIMS] = {0}, tile[NPU_SLICE_DIMS];
    int nopt[NPU_SLICE_DIMS], split, order, rc = 0;
    uint64_t total = options(x, opt, nopt), nc = 0;
    cand_t *cs = total && total <= NPU_SLICE_MAX_CANDS ? malloc(sizeof *cs * total) : NULL;
    npu_slice_plan_t c;
    memset(r, 0, sizeof *r);
    for (uint64_t i = 0; cs && i < total; i++) {
        r->visited++;
        candidate(x, opt, nopt, i, tile, &split, &order);
        if (setup(x, tile, split, order, &c)) {
            uint64_t lt = lower_bound(x, k, &c), lc = compute_sum(x, k, &c);
            cs[nc].i = i;
            cs[nc++].lb = lt > lc ? lt : lc;
        }
    }
    r->fitting = nc;
    if (cs)
        qsort(cs, (size_t)nc, sizeof *cs, by_bound);
    for (uint64_t j = 0; cs && j < nc && rc == 0; j++) {
        if (r->evaluated >= 2 && cs[j].lb > r->second.cycles)
            break;
        candidate(x, opt, nopt, cs[j].i, tile, &split, &order);
        setup(x, tile, split, order, &c);
        c.index = cs[j].i;
        rc = cost_steps(x, k, &c, r->evaluated >= 2 ? r->second.cycles : UINT64_MAX);
        if (rc == 0)
            keep(r, &c);
        rc = rc == 2 ? 0 : rc;
    }
    for (int d = 0; d < x->nd; d++)
        free(opt[d]);
    if (!cs)
        return -1;
    free(cs);
    return rc;
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
    for (int d = 0; d < x.nd; d++)
        n *= (uint64_t)npu_slice_tile_opts(x.ext[d], x.unit[d], NULL, 0);
    return n;
}

int npu_slice_eval(const npu_cfg_t *cfg, const npu_slice_cost_t *k, int kind, const npu_conv_t *c,
                   int M, int N, int K, const int64_t *tile, int split, int order, npu_slice_plan_t *p)
{
    npu_slice_nest_t x;
    if (npu_slice_nest_init(&x, cfg, kind, c, M, N, K, NULL, 0) != 0 || split < 0 ||
        split >= NPU_SLICE_SPLITS || order < 0 || order >= NPU_SLICE_ORDERS)
        return -1;
    for (int d = 0; d < x.nd; d++)
        if (tile[d] < 1 || tile[d] > x.ext[d])
            return -1;
    if (!setup(&x, tile, split, order, p))
        return 1;
    return cost_steps(&x, k, p, UINT64_MAX);
}
