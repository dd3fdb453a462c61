/* train_model.c - tile-level timing / DRAM-traffic model of a training layer; see
 * train_model.h. */
#include "model/train_model.h"

#include <stdlib.h>
#include <string.h>

void npu_tmodel_hw_from_cfg(const npu_cfg_t *cfg, npu_tmodel_hw_t *hw)
{
    memset(hw, 0, sizeof *hw);
    hw->S = cfg->s;
    hw->cores = 1;
    hw->spm_bytes = (long)cfg->spm_banks * cfg->spm_bank_words * npu_cfg_word(cfg);
    hw->dram_bw = cfg->dram_bw;
    hw->in_bytes = 2;
    hw->acc_bytes = 4;
}

static long cdivl(long a, long b) { return (a + b - 1) / b; }
static long minl(long a, long b) { return a < b ? a : b; }

typedef struct trace {
    size_t n;
    double *c, *rs, *ro, *w; /* compute, shared-tensor reads, other reads, writes (bytes) */
} trace_t;

static void trace_free(trace_t *t)
{
    free(t->c);
    free(t->rs);
    free(t->ro);
    free(t->w);
    memset(t, 0, sizeof *t);
}

typedef struct gemm_run {
    long M, N, K;
    int Tm, Tn, Tk;
    int Mt, Nt, Kt;
} gemm_run_t;

static int inb(const npu_tmodel_hw_t *hw) { return hw->in_bytes > 0 ? hw->in_bytes : 2; }
static int accb(const npu_tmodel_hw_t *hw) { return hw->acc_bytes > 0 ? hw->acc_bytes : 4; }

static long ext(long D, int T, int i)
{
    long e = D - (long)i * T;
    return e < T ? e : T;
}

static double fold_cycles(long R, long D, long C, int A)
{
    return (double)(cdivl(D, A) * cdivl(C, A)) * (double)(R > A ? R : A);
}

static long tile_bytes(const gemm_run_t *g, npu_tensor_t t, int m, int n, int k, int eb)
{
    long em = ext(g->M, g->Tm, m), en = ext(g->N, g->Tn, n), ek = ext(g->K, g->Tk, k);
    switch (t) {
    case NPU_TENSOR_X: case NPU_TENSOR_DX: return em * ek * eb;
    case NPU_TENSOR_W: case NPU_TENSOR_DW: return ek * en * eb;
    default:                       return em * en * eb;
    }
}

/* One GEMM pass (a schedule) of one part: plan, run, per-op trace. */
static int pass_trace(const npu_tmodel_hw_t *hw, int A, const gemm_run_t *g, const npu_order_sched_t *s,
                      long budget, int shared, trace_t *tr, npu_resid_counts_t *cnt)
{
    memset(tr, 0, sizeof *tr);
    npu_resid_cfg_t rc;
    memset(&rc, 0, sizeof rc);
    rc.Mt = g->Mt;
    rc.Nt = g->Nt;
    rc.Kt = g->Kt;
    rc.budget = budget;
    rc.bytes = 1;
    rc.M = g->M;
    rc.N = g->N;
    rc.K = g->K;
    rc.Tm = g->Tm;
    rc.Tn = g->Tn;
    rc.Tk = g->Tk;
    rc.in_bytes = inb(hw);
    rc.acc_bytes = accb(hw);
    npu_resid_plan_t plan;
    if (npu_resid_plan(s, &rc, &plan) != 0)
        return -1;
    size_t n = npu_order_schedule_count(s, g->Mt, g->Nt, g->Kt);
    npu_order_op_t *ops = malloc(n * sizeof *ops);
    npu_resid_action_t *act = malloc(n * sizeof *act);
    tr->c = malloc(n * sizeof(double));
    tr->rs = malloc(n * sizeof(double));
    tr->ro = malloc(n * sizeof(double));
    tr->w = malloc(n * sizeof(double));
    int rcode = -1;
    if (ops && act && tr->c && tr->rs && tr->ro && tr->w &&
        npu_order_build_ex(s, g->Mt, g->Nt, g->Kt, ops, n) == (long)n &&
        npu_resid_run(&plan, ops, n, act, cnt) == 0) {
        tr->n = n;
        for (size_t i = 0; i < n; i++) {
            const npu_order_op_t *o = &ops[i];
            long em = ext(g->M, g->Tm, o->m), en = ext(g->N, g->Tn, o->n),
                 ek = ext(g->K, g->Tk, o->k);
            tr->c[i] = o->grad == NPU_PHASE_FWD  ? fold_cycles(em, ek, en, A)
                       : o->grad == NPU_PHASE_DX ? fold_cycles(em, en, ek, A)
                                              : fold_cycles(ek, em, en, A);
            npu_tensor_t to, ta, tb;
            npu_order_op_tensors((npu_phase_t)o->grad, &to, &ta, &tb);
            double rs = 0, ro = 0;
            if (act[i].load_a) {
                double b = (double)tile_bytes(g, ta, o->m, o->n, o->k, inb(hw));
                if ((int)ta == shared) rs += b; else ro += b;
            }
            if (act[i].load_b) {
                double b = (double)tile_bytes(g, tb, o->m, o->n, o->k, inb(hw));
                if ((int)tb == shared) rs += b; else ro += b;
            }
            if (act[i].reload)
                ro += (double)tile_bytes(g, to, o->m, o->n, o->k, accb(hw));
            tr->rs[i] = rs;
            tr->ro[i] = ro;
            tr->w[i] = act[i].spill || act[i].store
                           ? (double)tile_bytes(g, to, o->m, o->n, o->k, accb(hw))
                           : 0.0;
        }
        rcode = 0;
    }
    free(ops);
    free(act);
    if (rcode)
        trace_free(tr);
    return rcode;
}

/* DRAM reads of step i over P lockstep traces: the shared operand once (multicast). */
static double step_reads(const trace_t *t, int P, size_t i)
{
    double rs = 0, ro = 0;
    for (int p = 0; p < P; p++)
        if (i < t[p].n) {
            if (t[p].rs[i] > rs)
                rs = t[p].rs[i];
            ro += t[p].ro[i];
        }
    return rs + ro;
}

/* Time of P traces in lockstep (P = 1: one pass): a 2A fill, op 0's loads exposed, then per
 * step max(compute, (next step's reads + previous step's writes) / bw), and the last writes. */
static double lockstep_time(const trace_t *t, int P, double bw, int A, double *compute)
{
    size_t n = 0;
    for (int p = 0; p < P; p++)
        if (t[p].n > n)
            n = t[p].n;
    double T = 2.0 * A + step_reads(t, P, 0) / bw, comp = 0, w_prev = 0;
    for (size_t i = 0; i < n; i++) {
        double c = 0, w = 0;
        for (int p = 0; p < P; p++)
            if (i < t[p].n) {
                if (t[p].c[i] > c)
                    c = t[p].c[i];
                w += t[p].w[i];
            }
        double dma = (step_reads(t, P, i + 1) + w_prev) / bw;
        T += c > dma ? c : dma;
        comp += c;
        w_prev = w;
    }
    T += w_prev / bw;
    if (compute)
        *compute = comp;
    return T;
}

/* ------------------------------------------------------------------ one configuration */

typedef struct cand_eval {
    double cycles, compute;
    uint64_t rd[NPU_TENSOR_COUNT], wr[NPU_TENSOR_COUNT], accum;
    long dy_loads, dy_comp;
    npu_order_t order;
    unsigned variant;
} cand_eval_t;

static void set_run(gemm_run_t *g, long M, long N, long K, int Tm, int Tn, int Tk)
{
    g->M = M;
    g->N = N;
    g->K = K;
    g->Tm = (int)minl(Tm, M);
    g->Tn = (int)minl(Tn, N);
    g->Tk = (int)minl(Tk, K);
    g->Mt = (int)cdivl(M, g->Tm);
    g->Nt = (int)cdivl(N, g->Tn);
    g->Kt = (int)cdivl(K, g->Tk);
}

/* Step working set, double-buffered, against the stream half. */
static int fits(const npu_tmodel_hw_t *hw, int Tm, int Tn, int Tk, int P, int fwd, int seq)
{
    long ib = inb(hw), ab = accb(hw);
    long x = (long)Tm * Tk * ib, w = (long)Tk * Tn * ib, dy = (long)Tm * Tn * ib;
    long dx = (long)Tm * Tk * ab, dw = (long)Tk * Tn * ab;
    long ws = fwd ? x + w + (long)Tm * Tn * ab
              : seq ? (dy + w + dx > x + dy + dw ? dy + w + dx : x + dy + dw) /* one pass */
                    : x + w + dy + dx + dw;
    return 2 * ws <= hw->spm_bytes / 2 / P;
}

/* Backward (or forward when fwd) of the parts of pp under order o (concrete or AUTO per part)
 * and seq variant v, tiles (Tm,Tn,Tk). */
static int eval_parts(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, const npu_part_plan_t *pp,
                      npu_order_t o, unsigned v, int Tm, int Tn, int Tk, int fwd,
                      cand_eval_t *ce)
{
    int conc = hw->cores > 1;
    int A = conc ? hw->S : 2 * hw->S;
    int P = pp->nparts;
    long budget = hw->spm_bytes / 2 / (conc ? P : 1);
    trace_t tr[NPU_PART_MAX];
    memset(tr, 0, sizeof tr);
    memset(ce, 0, sizeof *ce);
    double total = 0, comp = 0;
    int rc = 0;
    for (int p = 0; p < P && rc == 0; p++) {
        const npu_part_sub_t *s = &pp->part[p];
        gemm_run_t g;
        set_run(&g, s->M, s->N, s->K, Tm, Tn, Tk);
        npu_order_sched_t sc;
        npu_order_t op = o;
        if (fwd) {
            npu_order_fwd_schedule(v, &sc);
        } else if (!L->has_dx) {
            /* first layer: the dW GEMM alone (traditional order) */
            memset(&sc, 0, sizeof sc);
            npu_order_schedule(NPU_ORDER_SEQ, v, &sc);
            sc.nnests = 1;
            sc.nest[0] = sc.nest[1];
            op = NPU_ORDER_SEQ;
        } else {
            int r = npu_order_resolve(o, s->M, s->K, s->N);
            if (r < 0 || npu_order_schedule((npu_order_t)r, v, &sc) != 0) {
                rc = -1;
                break;
            }
            op = (npu_order_t)r;
        }
        if (p == 0)
            ce->order = op;
        npu_resid_counts_t cnt;
        rc = pass_trace(hw, A, &g, &sc, budget, conc ? pp->shared : -1, &tr[p], &cnt);
        if (rc)
            break;
        for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
            ce->rd[t] += cnt.rd[t];
            ce->wr[t] += cnt.wr[t];
        }
        ce->dy_loads += cnt.loads[NPU_TENSOR_DY];
        ce->dy_comp += (long)g.Mt * g.Nt;
        if (!conc) {
            double c;
            total += lockstep_time(&tr[p], 1, hw->dram_bw, A, &c);
            comp += c;
            trace_free(&tr[p]);
        }
    }
    if (rc == 0 && conc) {
        total = lockstep_time(tr, P, hw->dram_bw, A, &comp);
        /* shared operand multicast: counted once in the bytes too */
        if (pp->shared >= 0 && P > 1) {
            uint64_t sh = ce->rd[pp->shared];
            ce->rd[pp->shared] = sh / (uint64_t)P;
        }
    }
    for (int p = 0; p < P; p++)
        trace_free(&tr[p]);
    if (rc)
        return -1;
    if (!fwd && P > 1 && pp->accum_elems > 0) {
        if (conc) {
            total += (double)pp->accum_elems / (double)(2 * hw->S);
        } else {
            ce->accum = pp->accum_dram_bytes;
            total += (double)pp->accum_dram_bytes / hw->dram_bw;
        }
    }
    ce->cycles = total;
    ce->compute = comp;
    return 0;
}

static int better(const cand_eval_t *a, const cand_eval_t *b)
{
    if (a->cycles != b->cycles)
        return a->cycles < b->cycles;
    uint64_t ta = 0, tb = 0;
    for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
        ta += a->rd[t] + a->wr[t];
        tb += b->rd[t] + b->wr[t];
    }
    return ta < tb;
}

/* Lower bound of eval_parts for tiles (Tm,Tn,Tk): max(compute, compulsory bytes / bw) per part
 * (summed on one core, max on cores); lets best_tiles skip hopeless candidates. */
static double lower_bound(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L,
                          const npu_part_plan_t *pp, int Tm, int Tn, int Tk, int fwd)
{
    int conc = hw->cores > 1;
    int A = conc ? hw->S : 2 * hw->S;
    double tot = 0, mx = 0, bytes = 0;
    for (int p = 0; p < pp->nparts; p++) {
        const npu_part_sub_t *s = &pp->part[p];
        gemm_run_t g;
        set_run(&g, s->M, s->N, s->K, Tm, Tn, Tk);
        double c = 0;
        for (int m = 0; m < g.Mt; m++) {
            long em = ext(g.M, g.Tm, m);
            for (int n = 0; n < g.Nt; n++) {
                long en = ext(g.N, g.Tn, n);
                for (int k = 0; k < g.Kt; k++) {
                    long ek = ext(g.K, g.Tk, k);
                    if (fwd)
                        c += fold_cycles(em, ek, en, A);
                    else {
                        c += fold_cycles(ek, em, en, A);
                        if (L->has_dx)
                            c += fold_cycles(em, en, ek, A);
                    }
                }
            }
        }
        double b = fwd ? (double)(s->M * s->K + s->K * s->N) * inb(hw) + (double)s->M * s->N * accb(hw)
                       : (double)(s->M * s->K + s->K * s->N + s->M * s->N) * inb(hw) +
                             (double)(s->M * s->K * (L->has_dx ? 1 : 0) + s->K * s->N) * accb(hw);
        bytes += b;
        double t = c > b / hw->dram_bw ? c : b / hw->dram_bw;
        tot += t;
        if (c > mx)
            mx = c;
    }
    if (conc) {
        double m2 = bytes / hw->dram_bw;
        return mx > m2 ? mx : m2;
    }
    return tot;
}

/* Best tiles (and seq variant) for a partition plan and order. */
/* The tile candidates (Tm, Tn, Tk) from cand[0..nc-1]^3 that fit, none larger than needed,
 * sorted by their lower bound (stable); returns the count. */
static int tile_candidates(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L,
                           const npu_part_plan_t *pp, const int *cand, int nc, const long *maxd,
                           int P, int fwd, int seq, int ct[27][3], double lbs[27])
{
    int ncand = 0;
    for (int a = 0; a < nc; a++)
        for (int b = 0; b < nc; b++)
            for (int c = 0; c < nc; c++) {
                int Tm = cand[a], Tn = cand[b], Tk = cand[c];
                /* skip tiles larger than needed (the smallest covering one stays) */
                if ((a > 0 && cand[a - 1] >= maxd[0]) || (b > 0 && cand[b - 1] >= maxd[1]) ||
                    (c > 0 && cand[c - 1] >= maxd[2]))
                    continue;
                if (!fits(hw, (int)minl(Tm, maxd[0]), (int)minl(Tn, maxd[1]),
                          (int)minl(Tk, maxd[2]), P, fwd, seq))
                    continue;
                double lbv = lower_bound(hw, L, pp, Tm, Tn, Tk, fwd);
                int q = ncand++;
                while (q > 0 && lbs[q - 1] > lbv) { /* insertion sort, stable */
                    lbs[q] = lbs[q - 1];
                    memcpy(ct[q], ct[q - 1], sizeof ct[q]);
                    q--;
                }
                lbs[q] = lbv;
                ct[q][0] = Tm;
                ct[q][1] = Tn;
                ct[q][2] = Tk;
            }
    return ncand;
}

static int best_tiles(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, const npu_part_plan_t *pp,
                      npu_order_t o, int fwd, int fixed, int canonical, cand_eval_t *best,
                      int *bt)
{
    int conc = hw->cores > 1;
    int A = conc ? hw->S : 2 * hw->S;
    int P = conc ? pp->nparts : 1;
    int cand[3] = {A, 2 * A, 4 * A};
    int nc = fixed > 0 ? 1 : 3;
    if (fixed > 0)
        cand[0] = fixed;
    long maxd[3] = {0, 0, 0}; /* largest part dims M, N, K */
    for (int p = 0; p < pp->nparts; p++) {
        if (pp->part[p].M > maxd[0]) maxd[0] = pp->part[p].M;
        if (pp->part[p].N > maxd[1]) maxd[1] = pp->part[p].N;
        if (pp->part[p].K > maxd[2]) maxd[2] = pp->part[p].K;
    }
    /* permutation variants: fwd (m,n,k)/(n,m,k); seq and interleave: each stream's two
     * output-stationary orders (interleave zips the baseline's streams); fused orders: 1 */
    npu_order_t o0 = o;
    if (!fwd && o == NPU_ORDER_AUTO) {
        int r = npu_order_resolve(o, pp->part[0].M, pp->part[0].K, pp->part[0].N);
        o0 = r < 0 ? o : (npu_order_t)r;
    }
    unsigned nv = fwd ? 2u : (o0 == NPU_ORDER_SEQ || o0 == NPU_ORDER_INTERLEAVE || !L->has_dx) ? 4u : 1u;
    if (canonical && !fwd)
        nv = 1u;
    /* candidates that fit, cheapest lower bound first; stop once the bound reaches the best */
    int ct[27][3];
    double lbs[27];
    int ncand = tile_candidates(hw, L, pp, cand, nc, maxd, P, fwd, o0 == NPU_ORDER_SEQ || !L->has_dx,
                                ct, lbs);
    /* keep the search fast: candidates with more than NPU_TMODEL_MAX_OPS tile-ops per part are
     * skipped while a coarser one exists */
    long minops = -1;
    for (int i = 0; i < ncand; i++) {
        long ops = cdivl(maxd[0], ct[i][0]) * cdivl(maxd[1], ct[i][1]) * cdivl(maxd[2], ct[i][2]);
        if (minops < 0 || ops < minops)
            minops = ops;
    }
    int found = 0;
    for (int i = 0; i < ncand; i++) {
        if (found && lbs[i] >= best->cycles)
            break;
        long ops = cdivl(maxd[0], ct[i][0]) * cdivl(maxd[1], ct[i][1]) * cdivl(maxd[2], ct[i][2]);
        if (ops > NPU_TMODEL_MAX_OPS && ops > minops)
            continue;
        for (unsigned v = 0; v < nv; v++) {
            cand_eval_t ce;
            if (eval_parts(hw, L, pp, o, v, ct[i][0], ct[i][1], ct[i][2], fwd, &ce) != 0)
                return -1;
            ce.variant = v;
            if (!found || better(&ce, best)) {
                *best = ce;
                memcpy(bt, ct[i], 3 * sizeof(int));
                found = 1;
            }
        }
    }
    return found ? 0 : -1;
}

int npu_tmodel_layer_eval(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, const npu_tmodel_opts_t *o,
                      npu_tmodel_result_t *r)
{
    if (!hw || !L || !o || !r || hw->S < 1 || (hw->cores != 1 && hw->cores != 4) ||
        hw->dram_bw <= 0 || L->M < 1 || L->N < 1 || L->K < 1)
        return -1;
    memset(r, 0, sizeof *r);
    int conc = hw->cores > 1;
    int A = conc ? hw->S : 2 * hw->S;
    int P = o->P < 1 ? 1 : o->P;
    npu_part_t part = o->part;
    if (conc) {
        P = hw->cores;
        if (part == NPU_PART_NONE)
            part = NPU_PART_M;
    }
    if (part == NPU_PART_NONE)
        P = 1;
    /* forward: M split on cores, else whole */
    npu_part_plan_t fp;
    if (npu_part_split(conc ? NPU_PART_M : NPU_PART_NONE, conc ? P : 1, L->M, L->N, L->K, A,
                        accb(hw), &fp) != 0)
        return -1;
    if (o->fwd_cycles > 0) {
        r->fwd_cycles = o->fwd_cycles;
    } else {
        cand_eval_t fe;
        int ft[3];
        if (best_tiles(hw, L, &fp, NPU_ORDER_SEQ, 1, o->fixed_tile, 0, &fe, ft) != 0)
            return -1;
        r->fwd_cycles = fe.cycles;
    }

    npu_part_plan_t pp;
    if (npu_part_split(part, P, L->M, L->N, L->K, A, accb(hw), &pp) != 0)
        return -1;
    cand_eval_t be;
    int bt[3];
    if (o->order == NPU_ORDER_ORACLE) {
        int found = 0;
        for (int oo = NPU_ORDER_INTERLEAVE; oo <= NPU_ORDER_DWMAJOR; oo++) {
            cand_eval_t ce;
            int t3[3];
            if (best_tiles(hw, L, &pp, (npu_order_t)oo, 0, o->fixed_tile, o->canonical, &ce, t3) != 0)
                return -1;
            if (!found || better(&ce, &be)) {
                be = ce;
                memcpy(bt, t3, sizeof bt);
                found = 1;
            }
        }
    } else {
        if ((unsigned)o->order >= NPU_ORDER_ORACLE)
            return -1;
        if (best_tiles(hw, L, &pp, o->order, 0, o->fixed_tile, o->canonical, &be, bt) != 0)
            return -1;
    }
    r->bwd_cycles = be.cycles;
    r->cycles = r->fwd_cycles + r->bwd_cycles;
    r->compute_cycles = be.compute;
    for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
        r->rd[t] = be.rd[t];
        r->wr[t] = be.wr[t];
        r->dram_bytes += be.rd[t] + be.wr[t];
    }
    r->accum_bytes = be.accum;
    r->dram_bytes += be.accum;
    r->dy_loads = be.dy_loads;
    r->dy_compulsory = be.dy_comp;
    r->macs = (uint64_t)L->M * (uint64_t)L->N * (uint64_t)L->K * (L->has_dx ? 2u : 1u);
    double pes = 4.0 * hw->S * hw->S;
    r->util = (double)(r->macs + (uint64_t)L->M * L->N * L->K) / (r->cycles * pes);
    r->order = be.order;
    r->variant = be.variant;
    r->Tm = bt[0];
    r->Tn = bt[1];
    r->Tk = bt[2];
    return 0;
}

int npu_tmodel_best_partition(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, npu_order_t order,
                          int *P, npu_tmodel_result_t *r)
{
    int conc = hw && hw->cores > 1;
    int best = -1, bestP = 1;
    npu_tmodel_result_t br, cur;
    memset(&br, 0, sizeof br);
    for (int sc = conc ? NPU_PART_M : NPU_PART_NONE; sc <= NPU_PART_K; sc++) {
        int ps[2] = {2, 4};
        int np = sc == NPU_PART_NONE ? 1 : conc ? 1 : 2;
        for (int i = 0; i < np; i++) {
            npu_tmodel_opts_t o;
            memset(&o, 0, sizeof o);
            o.order = order;
            o.part = (npu_part_t)sc;
            o.P = sc == NPU_PART_NONE ? 1 : conc ? hw->cores : ps[i];
            o.fwd_cycles = best >= 0 ? br.fwd_cycles : 0.0; /* the forward is the same */
            if (npu_tmodel_layer_eval(hw, L, &o, &cur) != 0)
                return -1;
            if (best < 0 || cur.cycles < br.cycles) {
                br = cur;
                best = sc;
                bestP = o.P;
            }
        }
    }
    if (P)
        *P = bestP;
    if (r)
        *r = br;
    return best;
}
