/* train_residency.c - explicit SPM residency planner; see train_residency.h. */
#include "compile/train/train_residency.h"

#include <stdlib.h>
#include <string.h>

static int is_output(npu_tensor_t t) { return t == NPU_TENSOR_DX || t == NPU_TENSOR_DW || t == NPU_TENSOR_Y; }

static int tensor_prio(npu_tensor_t t)
{
    return t == NPU_TENSOR_DY ? 0 : is_output(t) ? 1 : t == NPU_TENSOR_X ? 2 : 3;
}

/* Element extents of tile index i of a dim of size D with tile T (bytes mode). */
static long ext(long D, int T, int i)
{
    if (D <= 0)
        return T;
    long e = D - (long)i * T;
    return e < T ? e : T;
}

static void tile_dims(npu_tensor_t t, long *r, long *c, int *rd, int *cd)
{
    switch (t) {
    case NPU_TENSOR_X: case NPU_TENSOR_DX: *rd = NPU_DIM_M; *cd = NPU_DIM_K; break;
    case NPU_TENSOR_W: case NPU_TENSOR_DW: *rd = NPU_DIM_K; *cd = NPU_DIM_N; break;
    default:                       *rd = NPU_DIM_M; *cd = NPU_DIM_N; break;
    }
    (void)r;
    (void)c;
}

static long elem_bytes(const npu_resid_cfg_t *c, npu_tensor_t t)
{
    if (is_output(t))
        return c->acc_bytes > 0 ? c->acc_bytes : 4;
    return c->in_bytes > 0 ? c->in_bytes : 2;
}

/* Units of one tile of t at tile indices (m, n, k); full tile when m < 0. */
static long tile_units(const npu_resid_cfg_t *c, npu_tensor_t t, int m, int n, int k)
{
    if (!c->bytes)
        return 1;
    long dims[3] = {c->M, c->N, c->K};
    int T[3] = {c->Tm, c->Tn, c->Tk}, idx[3] = {m, n, k};
    int rd, cd;
    tile_dims(t, NULL, NULL, &rd, &cd);
    long r = m < 0 ? T[rd] : ext(dims[rd], T[rd], idx[rd]);
    long cc = m < 0 ? T[cd] : ext(dims[cd], T[cd], idx[cd]);
    return r * cc * elem_bytes(c, t);
}

long npu_resid_compulsory(int Mt, int Nt, int Kt)
{
    return (long)Mt * Nt + 2L * Mt * Kt + 2L * Kt * Nt;
}

typedef struct cand {
    npu_resid_pin_t p;
    int prio;
} cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->p.saving != y->p.saving)
        return x->p.saving > y->p.saving ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio - y->prio;
    return (int)x->p.owner - (int)y->p.owner;
}

long npu_resid_stream_layout(const npu_order_sched_t *s, const npu_resid_cfg_t *cfg,
                            long off[2][NPU_TENSOR_COUNT])
{
    long at = 0;
    for (int st = 0; st < 2; st++) {
        int used_t[NPU_TENSOR_COUNT] = {0};
        if (st < s->nnests)
            for (int g = 0; g < s->nest[st].ngrads; g++) {
                npu_tensor_t o, a, b;
                npu_order_op_tensors((npu_phase_t)s->nest[st].grads[g], &o, &a, &b);
                used_t[o] = used_t[a] = used_t[b] = 1;
            }
        for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
            off[st][t] = used_t[t] ? at : -1;
            if (used_t[t])
                at += 2 * tile_units(cfg, (npu_tensor_t)t, -1, 0, 0);
        }
    }
    return at;
}

/* Reuse analysis: per nest and tensor it uses, the loop level L the tensor does not index; reused
 * across L unless L is innermost (the stream buffer keeps it then): a candidate with footprint F
 * (the tiles of the loops inside L it indexes), scope (the loops outside L) and saving (R-1)*O
 * transfers per pinned tile (twice for a partial: spill and reload). Returns the candidates. */
static int plan_candidates(const npu_order_sched_t *s, const npu_resid_cfg_t *cfg, cand_t *c)
{
    int trips[3] = {cfg->Mt, cfg->Nt, cfg->Kt}, nc = 0;
    for (int ni = 0; ni < s->nnests; ni++) {
        const npu_order_nest_t *ne = &s->nest[ni];
        int used_t[NPU_TENSOR_COUNT] = {0};
        for (int g = 0; g < ne->ngrads; g++) {
            npu_tensor_t o, a, b;
            npu_order_op_tensors((npu_phase_t)ne->grads[g], &o, &a, &b);
            used_t[o] = used_t[a] = used_t[b] = 1;
        }
        for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
            if (!used_t[t])
                continue;
            int L = -1;
            for (int l = 0; l < 3; l++)
                if (!npu_order_tensor_uses((npu_tensor_t)t, (npu_dim_t)ne->perm[l]))
                    L = l;
            if (L < 0 || L == 2)
                continue;
            long F = 1, O = 1, R = trips[ne->perm[L]];
            for (int l = 0; l < 3; l++) {
                if (l < L)
                    O *= trips[ne->perm[l]];
                else if (l > L && npu_order_tensor_uses((npu_tensor_t)t, (npu_dim_t)ne->perm[l]))
                    F *= trips[ne->perm[l]];
            }
            if (R <= 1 || nc >= NPU_RESID_MAX_PINS)
                continue;
            cand_t *x = &c[nc++];
            memset(x, 0, sizeof *x);
            x->p.owner = (uint8_t)ni;
            x->p.tensor = (uint8_t)t;
            x->p.level = (uint8_t)L;
            x->p.partial = (uint8_t)is_output((npu_tensor_t)t);
            x->p.footprint = F;
            x->p.saving = (double)(R - 1) * (double)O * (is_output((npu_tensor_t)t) ? 2.0 : 1.0);
            x->prio = tensor_prio((npu_tensor_t)t);
        }
    }
    return nc;
}

/* seq: all of dY pinned across the pass boundary when both passes have room for it (the layer
 * pin, slot 0, replaces the passes' dY pins). */
static void plan_layer_dy(npu_resid_plan_t *plan, long rem[2])
{
    const npu_resid_cfg_t *cfg = &plan->cfg;
    long need = (long)cfg->Mt * cfg->Nt * plan->tile_unit[NPU_TENSOR_DY];
    long freed[2] = {0, 0};
    npu_resid_pin_t lp;
    int w = 0;
    for (int i = 0; i < plan->npins; i++)
        if (plan->pin[i].tensor == NPU_TENSOR_DY)
            freed[plan->pin[i].owner] += plan->pin[i].pinned * plan->tile_unit[NPU_TENSOR_DY];
    if (rem[0] + freed[0] < need || rem[1] + freed[1] < need || plan->npins >= NPU_RESID_MAX_PINS)
        return;
    for (int i = 0; i < plan->npins; i++)
        if (plan->pin[i].tensor != NPU_TENSOR_DY)
            plan->pin[w++] = plan->pin[i];
    plan->npins = w;
    for (int p = 0; p < 2; p++)
        rem[p] += freed[p] - need;
    memset(&lp, 0, sizeof lp);
    lp.owner = NPU_RESID_LAYER;
    lp.tensor = NPU_TENSOR_DY;
    lp.level = 0;
    lp.footprint = lp.pinned = (long)cfg->Mt * cfg->Nt;
    lp.saving = 1.0;
    memmove(&plan->pin[1], &plan->pin[0], (size_t)plan->npins * sizeof plan->pin[0]);
    plan->pin[0] = lp;
    plan->npins++;
}

/* Slot bases: the layer pin first, then each pass's pins (seq passes overlap in the window). */
static void plan_bases(npu_resid_plan_t *plan, int separate)
{
    long layer = 0, off[2];
    for (int i = 0; i < plan->npins; i++)
        if (plan->pin[i].owner == NPU_RESID_LAYER) {
            plan->pin[i].base = 0;
            layer += plan->pin[i].pinned * plan->tile_unit[plan->pin[i].tensor];
        }
    off[0] = off[1] = layer;
    for (int i = 0; i < plan->npins; i++) {
        npu_resid_pin_t *p = &plan->pin[i];
        if (p->owner == NPU_RESID_LAYER)
            continue;
        int pool = separate ? p->owner : 0;
        p->base = off[pool];
        off[pool] += p->pinned * plan->tile_unit[p->tensor];
    }
    plan->used[0] = off[0];
    plan->used[1] = separate ? off[1] : 0;
}

int npu_resid_plan(const npu_order_sched_t *s, const npu_resid_cfg_t *cfg, npu_resid_plan_t *plan)
{
    cand_t c[NPU_RESID_MAX_PINS];
    if (!s || !cfg || !plan || cfg->Mt < 1 || cfg->Nt < 1 || cfg->Kt < 1 || cfg->budget < 0 ||
        s->nnests < 1 || s->nnests > 2)
        return -1;
    if (cfg->bytes && (cfg->Tm < 1 || cfg->Tn < 1 || cfg->Tk < 1))
        return -1;
    memset(plan, 0, sizeof *plan);
    plan->sched = *s;
    plan->cfg = *cfg;
    plan->stream_base = cfg->budget;
    for (int t = 0; t < NPU_TENSOR_COUNT; t++)
        plan->tile_unit[t] = tile_units(cfg, (npu_tensor_t)t, -1, 0, 0);
    plan->stream_units = npu_resid_stream_layout(s, cfg, plan->stream_off);
    if (cfg->no_pins)
        return 0;
    int nc = plan_candidates(s, cfg, c);
    qsort(c, (size_t)nc, sizeof c[0], cand_cmp);
    /* greedy by saving per tile; a candidate that does not fit is pinned partially */
    int separate = s->nnests == 2 && !s->zipped; /* seq: one window per pass */
    long rem[2] = {cfg->budget, cfg->budget};
    for (int i = 0; i < nc; i++) {
        npu_resid_pin_t p = c[i].p;
        int pool = separate ? p.owner : 0;
        long unit = plan->tile_unit[p.tensor];
        long want = p.footprint;
        long can = rem[pool] / unit;
        p.pinned = want < can ? want : can;
        if (p.pinned <= 0)
            continue;
        rem[pool] -= p.pinned * unit;
        plan->pin[plan->npins++] = p;
    }
    if (separate)
        plan_layer_dy(plan, rem);
    plan_bases(plan, separate);
    return 0;
}

/* The state of a run of the plan over an op sequence. */
typedef struct run {
    const npu_resid_plan_t *plan;
    const npu_resid_cfg_t *cfg;
    const npu_order_sched_t *s;
    int Mt, Nt, Kt, np;
    long *pin_ep[NPU_RESID_MAX_PINS], *pin_slot[NPU_RESID_MAX_PINS]; /* per pin and tile: its epoch, slot */
    long epoch[NPU_RESID_MAX_PINS], count[NPU_RESID_MAX_PINS], key[NPU_RESID_MAX_PINS]; /* per pin: scope */
    uint8_t *keep_next; /* per op: the next op of its stream and gradient accumulates the same tile */
    long last[2][NPU_TENSOR_COUNT];  /* per stream and tensor: the tile in its buffer */
    int parity[2][NPU_TENSOR_COUNT]; /* per stream and tensor: the buffer of the next fetch */
} run_t;

static int run_init(run_t *r, const npu_resid_plan_t *plan, size_t n)
{
    memset(r, 0, sizeof *r);
    r->plan = plan;
    r->cfg = &plan->cfg;
    r->s = &plan->sched;
    r->Mt = r->cfg->Mt;
    r->Nt = r->cfg->Nt;
    r->Kt = r->cfg->Kt;
    r->np = plan->npins;
    r->keep_next = malloc(n ? n : 1);
    if (!r->keep_next)
        return -1;
    for (int i = 0; i < r->np; i++) {
        long tc = npu_order_tile_count((npu_tensor_t)plan->pin[i].tensor, r->Mt, r->Nt, r->Kt);
        r->pin_ep[i] = malloc((size_t)tc * sizeof(long));
        r->pin_slot[i] = malloc((size_t)tc * sizeof(long));
        if (!r->pin_ep[i] || !r->pin_slot[i])
            return -1;
        for (long t = 0; t < tc; t++)
            r->pin_ep[i][t] = -1;
        r->key[i] = -1;
    }
    for (int t = 0; t < NPU_TENSOR_COUNT; t++)
        r->last[0][t] = r->last[1][t] = -1;
    return 0;
}

static void run_free(run_t *r)
{
    for (int i = 0; i < r->np; i++) {
        free(r->pin_ep[i]);
        free(r->pin_slot[i]);
    }
    free(r->keep_next);
}

/* keep_next of every op, from the end. 0, or -1 for an op of no stream or gradient. */
static int run_keep_next(run_t *r, const npu_order_op_t *ops, size_t n)
{
    long next_tile[2][3];
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            next_tile[a][b] = -2;
    for (size_t i = n; i-- > 0;) {
        const npu_order_op_t *o = &ops[i];
        if (o->stream > 1 || o->grad > 2)
            return -1;
        npu_tensor_t to, ta, tb;
        npu_order_op_tensors((npu_phase_t)o->grad, &to, &ta, &tb);
        long t = npu_order_tile_index(to, o->m, o->n, o->k, r->Mt, r->Nt, r->Kt);
        r->keep_next[i] = next_tile[o->stream][o->grad] == t;
        next_tile[o->stream][o->grad] = t;
    }
    return 0;
}

/* Scope changes of the op's stream's pins: a pin's scope is the loops outside its level. */
static void run_scope(run_t *r, const npu_order_op_t *o)
{
    const npu_order_nest_t *ne = &r->s->nest[o->stream < r->s->nnests ? o->stream : 0];
    int idx[3] = {o->m, o->n, o->k};
    for (int p = 0; p < r->np; p++) {
        if (r->plan->pin[p].owner != o->stream)
            continue;
        long k2 = r->plan->pin[p].level == 0 ? 0 : idx[ne->perm[0]];
        if (k2 != r->key[p]) {
            r->key[p] = k2;
            r->epoch[p]++;
            r->count[p] = 0;
        }
    }
}

/* Is tile t of tensor T resident in a pin the op's stream sees (*own: its own or the layer's)?
 * Sets *slot to its pin slot (its own pin's when several hold it). */
static int run_resident(const run_t *r, int st, npu_tensor_t T, long t, int *own, long *slot)
{
    int resident = 0;
    *own = 0;
    for (int p = 0; p < r->np; p++) {
        const npu_resid_pin_t *pp = &r->plan->pin[p];
        int mine = pp->owner == st || pp->owner == NPU_RESID_LAYER;
        int valid = mine || (r->s->zipped && pp->owner != st);
        if (pp->tensor == T && valid && r->pin_ep[p][t] == r->epoch[p]) {
            if (!resident || mine)
                *slot = r->pin_slot[p][t];
            resident = 1;
            *own |= mine;
        }
    }
    return resident;
}

/* Pins tile t of T if a live pin of stream st (or the layer) has room; its slot, or -1. */
static long run_pin(run_t *r, int st, npu_tensor_t T, long t)
{
    for (int p = 0; p < r->np; p++) {
        const npu_resid_pin_t *pp = &r->plan->pin[p];
        if (pp->tensor != T || !(pp->owner == st || pp->owner == NPU_RESID_LAYER))
            continue;
        if (r->count[p] < pp->pinned) {
            r->pin_ep[p][t] = r->epoch[p];
            r->pin_slot[p][t] = pp->base + r->count[p] * r->plan->tile_unit[T];
            r->count[p]++;
            return r->pin_slot[p][t];
        }
    }
    return -1;
}

/* Tensor ri of op i (0: A, 1: B, 2: the accumulator): fetched unless resident or in a stream
 * buffer, pinned if a pin has room, else in its stream buffer; the accumulator stored after its
 * last op, spilled when it is neither pinned nor the next op's. Its slot, or -1 (an op of a
 * tensor its stream does not use). */
static long run_tensor(run_t *r, size_t i, const npu_order_op_t *o, int ri, npu_tensor_t T, npu_resid_action_t *a,
                       npu_resid_counts_t *cnt)
{
    const npu_resid_plan_t *plan = r->plan;
    int st = o->stream, own;
    long t = npu_order_tile_index(T, o->m, o->n, o->k, r->Mt, r->Nt, r->Kt);
    long units = tile_units(r->cfg, T, o->m, o->n, o->k), slot = -1;
    int resident = run_resident(r, st, T, t, &own, &slot);
    /* stream buffers: this stream's current tile; for operands of a zipped schedule also the
     * other stream's (the interleave "T0" reuse). Separate passes (seq) do not see each other's
     * buffers. */
    int in_stream = r->last[st][T] == t || (ri != 2 && r->s->zipped && r->last[st ^ 1][T] == t);
    if (!resident && !in_stream && !(ri == 2 && o->first)) {
        if (ri == 2) {
            a->reload = 1;
            cnt->reloads[T]++;
        } else {
            *(ri == 0 ? &a->load_a : &a->load_b) = 1;
            cnt->loads[T]++;
        }
        cnt->rd[T] += (uint64_t)units;
        a->rd_bytes += (uint32_t)units;
        r->parity[st][T] ^= 1;
    }
    if (!own) {
        long ps = run_pin(r, st, T, t);
        if (ps >= 0) {
            own = 1;
            slot = ps;
        }
    }
    if (slot < 0) {
        if (plan->stream_off[st][T] < 0)
            return -1;
        slot = plan->stream_base + plan->stream_off[st][T] + r->parity[st][T] * plan->tile_unit[T];
    }
    if (ri != 2) {
        r->last[st][T] = t;
        return slot;
    }
    a->pinned_acc = (uint8_t)own;
    if (o->last) {
        a->store = 1;
        cnt->stores[T]++;
    } else if (!own && !r->keep_next[i]) {
        a->spill = 1;
        cnt->spills[T]++;
    }
    if (a->store || a->spill) {
        cnt->wr[T] += (uint64_t)units;
        a->wr_bytes += (uint32_t)units;
    }
    r->last[st][T] = a->spill ? -1 : t;
    return slot;
}

int npu_resid_run(const npu_resid_plan_t *plan, const npu_order_op_t *ops, size_t n,
                 npu_resid_action_t *act, npu_resid_counts_t *cnt)
{
    run_t r;
    if (!plan || (!ops && n) || !cnt)
        return -1;
    memset(cnt, 0, sizeof *cnt);
    int rc = run_init(&r, plan, n) == 0 && run_keep_next(&r, ops, n) == 0 ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const npu_order_op_t *o = &ops[i];
        npu_tensor_t tt[3];
        npu_resid_action_t a;
        long slots[3];
        run_scope(&r, o);
        npu_order_op_tensors((npu_phase_t)o->grad, &tt[2], &tt[0], &tt[1]);
        memset(&a, 0, sizeof a);
        for (int ri = 0; ri < 3 && rc == 0; ri++)
            if ((slots[ri] = run_tensor(&r, i, o, ri, tt[ri], &a, cnt)) < 0)
                rc = -1;
        if (rc != 0)
            break;
        a.slot_a = slots[0];
        a.slot_b = slots[1];
        a.slot_acc = slots[2];
        if (act)
            act[i] = a;
    }
    for (int t = 0; t < NPU_TENSOR_COUNT; t++) {
        cnt->transfers += cnt->loads[t] + cnt->reloads[t] + cnt->spills[t] + cnt->stores[t];
        cnt->rd_total += cnt->rd[t];
        cnt->wr_total += cnt->wr[t];
    }
    run_free(&r);
    return rc;
}

int npu_resid_eval(npu_order_t o, const npu_resid_cfg_t *cfg, npu_resid_counts_t *cnt)
{
    npu_order_sched_t s;
    npu_resid_plan_t plan;
    if (npu_order_schedule(o, 0, &s) != 0 || npu_resid_plan(&s, cfg, &plan) != 0)
        return -1;
    size_t n = npu_order_schedule_count(&s, cfg->Mt, cfg->Nt, cfg->Kt);
    npu_order_op_t *ops = malloc(n * sizeof *ops);
    if (!ops)
        return -1;
    int rc = npu_order_build_ex(&s, cfg->Mt, cfg->Nt, cfg->Kt, ops, n) == (long)n
                 ? npu_resid_run(&plan, ops, n, NULL, cnt)
                 : -1;
    free(ops);
    return rc;
}
