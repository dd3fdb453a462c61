/* train_residency.c - explicit SPM residency planner; see train_residency.h. */
#include "compile/train/train_residency.h"

#include <stdlib.h>
#include <string.h>

static int is_output(npu_ttensor_t t) { return t == NPU_TT_DX || t == NPU_TT_DW || t == NPU_TT_Y; }

static int tensor_prio(npu_ttensor_t t)
{
    return t == NPU_TT_DY ? 0 : is_output(t) ? 1 : t == NPU_TT_X ? 2 : 3;
}

/* Element extents of tile index i of a dim of size D with tile T (bytes mode). */
static long ext(long D, int T, int i)
{
    if (D <= 0)
        return T;
    long e = D - (long)i * T;
    return e < T ? e : T;
}

static void tile_dims(npu_ttensor_t t, long *r, long *c, int *rd, int *cd)
{
    switch (t) {
    case NPU_TT_X: case NPU_TT_DX: *rd = NPU_TD_M; *cd = NPU_TD_K; break;
    case NPU_TT_W: case NPU_TT_DW: *rd = NPU_TD_K; *cd = NPU_TD_N; break;
    default:                       *rd = NPU_TD_M; *cd = NPU_TD_N; break;
    }
    (void)r;
    (void)c;
}

static long elem_bytes(const npu_tres_cfg_t *c, npu_ttensor_t t)
{
    if (is_output(t))
        return c->acc_bytes > 0 ? c->acc_bytes : 4;
    return c->in_bytes > 0 ? c->in_bytes : 2;
}

/* Units of one tile of t at tile indices (m, n, k); full tile when m < 0. */
static long tile_units(const npu_tres_cfg_t *c, npu_ttensor_t t, int m, int n, int k)
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

long npu_tres_compulsory(int Mt, int Nt, int Kt)
{
    return (long)Mt * Nt + 2L * Mt * Kt + 2L * Kt * Nt;
}

typedef struct cand {
    npu_tpin_t p;
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

long npu_tres_stream_layout(const npu_tsched_t *s, const npu_tres_cfg_t *cfg,
                            long off[2][NPU_TT_COUNT])
{
    long at = 0;
    for (int st = 0; st < 2; st++) {
        int used_t[NPU_TT_COUNT] = {0};
        if (st < s->nnests)
            for (int g = 0; g < s->nest[st].ngrads; g++) {
                npu_ttensor_t o, a, b;
                npu_train_op_tensors((npu_tgrad_t)s->nest[st].grads[g], &o, &a, &b);
                used_t[o] = used_t[a] = used_t[b] = 1;
            }
        for (int t = 0; t < NPU_TT_COUNT; t++) {
            off[st][t] = used_t[t] ? at : -1;
            if (used_t[t])
                at += 2 * tile_units(cfg, (npu_ttensor_t)t, -1, 0, 0);
        }
    }
    return at;
}

int npu_tres_plan(const npu_tsched_t *s, const npu_tres_cfg_t *cfg, npu_tres_plan_t *plan)
{
    if (!s || !cfg || !plan || cfg->Mt < 1 || cfg->Nt < 1 || cfg->Kt < 1 || cfg->budget < 0 ||
        s->nnests < 1 || s->nnests > 2)
        return -1;
    if (cfg->bytes && (cfg->Tm < 1 || cfg->Tn < 1 || cfg->Tk < 1))
        return -1;
    memset(plan, 0, sizeof *plan);
    plan->sched = *s;
    plan->cfg = *cfg;
    plan->stream_base = cfg->budget;
    for (int t = 0; t < NPU_TT_COUNT; t++)
        plan->tile_unit[t] = tile_units(cfg, (npu_ttensor_t)t, -1, 0, 0);
    plan->stream_units = npu_tres_stream_layout(s, cfg, plan->stream_off);
    if (cfg->no_pins)
        return 0;

    int trips[3] = {cfg->Mt, cfg->Nt, cfg->Kt};
    cand_t c[NPU_TRES_MAX_PINS];
    int nc = 0;
    for (int ni = 0; ni < s->nnests; ni++) {
        const npu_tnest_t *ne = &s->nest[ni];
        int used_t[NPU_TT_COUNT] = {0};
        for (int g = 0; g < ne->ngrads; g++) {
            npu_ttensor_t o, a, b;
            npu_train_op_tensors((npu_tgrad_t)ne->grads[g], &o, &a, &b);
            used_t[o] = used_t[a] = used_t[b] = 1;
        }
        for (int t = 0; t < NPU_TT_COUNT; t++) {
            if (!used_t[t])
                continue;
            int L = -1;
            for (int l = 0; l < 3; l++)
                if (!npu_train_tensor_uses((npu_ttensor_t)t, (npu_tdim_t)ne->perm[l]))
                    L = l;
            if (L < 0 || L == 2)
                continue;
            long F = 1, O = 1, R = trips[ne->perm[L]];
            for (int l = 0; l < 3; l++) {
                if (l < L)
                    O *= trips[ne->perm[l]];
                else if (l > L && npu_train_tensor_uses((npu_ttensor_t)t, (npu_tdim_t)ne->perm[l]))
                    F *= trips[ne->perm[l]];
            }
            if (R <= 1 || nc >= NPU_TRES_MAX_PINS)
                continue;
            cand_t *x = &c[nc++];
            memset(x, 0, sizeof *x);
            x->p.owner = (uint8_t)ni;
            x->p.tensor = (uint8_t)t;
            x->p.level = (uint8_t)L;
            x->p.partial = (uint8_t)is_output((npu_ttensor_t)t);
            x->p.footprint = F;
            x->p.saving = (double)(R - 1) * (double)O * (is_output((npu_ttensor_t)t) ? 2.0 : 1.0);
            x->prio = tensor_prio((npu_ttensor_t)t);
        }
    }
    qsort(c, (size_t)nc, sizeof c[0], cand_cmp);
    int separate = s->nnests == 2 && !s->zipped; /* seq: one window per pass */
    long rem[2] = {cfg->budget, cfg->budget};
    for (int i = 0; i < nc; i++) {
        npu_tpin_t p = c[i].p;
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
    /* seq: all of dY pinned across the pass boundary when both passes have room for it */
    if (separate) {
        long need = (long)cfg->Mt * cfg->Nt * plan->tile_unit[NPU_TT_DY];
        long freed[2] = {0, 0};
        for (int i = 0; i < plan->npins; i++)
            if (plan->pin[i].tensor == NPU_TT_DY)
                freed[plan->pin[i].owner] += plan->pin[i].pinned * plan->tile_unit[NPU_TT_DY];
        if (rem[0] + freed[0] >= need && rem[1] + freed[1] >= need &&
            plan->npins < NPU_TRES_MAX_PINS) {
            int w = 0;
            for (int i = 0; i < plan->npins; i++)
                if (plan->pin[i].tensor != NPU_TT_DY)
                    plan->pin[w++] = plan->pin[i];
            plan->npins = w;
            for (int p = 0; p < 2; p++)
                rem[p] += freed[p] - need;
            npu_tpin_t lp;
            memset(&lp, 0, sizeof lp);
            lp.owner = NPU_TRES_LAYER;
            lp.tensor = NPU_TT_DY;
            lp.level = 0;
            lp.footprint = lp.pinned = (long)cfg->Mt * cfg->Nt;
            lp.saving = 1.0;
            /* the layer pin goes first (slot 0) */
            memmove(&plan->pin[1], &plan->pin[0], (size_t)plan->npins * sizeof plan->pin[0]);
            plan->pin[0] = lp;
            plan->npins++;
        }
    }
    /* slot bases: layer pin first, then each pass's pins (seq passes overlap in the window) */
    long layer = 0;
    for (int i = 0; i < plan->npins; i++)
        if (plan->pin[i].owner == NPU_TRES_LAYER) {
            plan->pin[i].base = 0;
            layer += plan->pin[i].pinned * plan->tile_unit[plan->pin[i].tensor];
        }
    long off[2] = {layer, layer};
    for (int i = 0; i < plan->npins; i++) {
        npu_tpin_t *p = &plan->pin[i];
        if (p->owner == NPU_TRES_LAYER)
            continue;
        int pool = separate ? p->owner : 0;
        p->base = off[pool];
        off[pool] += p->pinned * plan->tile_unit[p->tensor];
    }
    plan->used[0] = off[0];
    plan->used[1] = separate ? off[1] : 0;
    return 0;
}

int npu_tres_run(const npu_tres_plan_t *plan, const npu_tileop_t *ops, size_t n,
                 npu_tres_action_t *act, npu_tres_counts_t *cnt)
{
    if (!plan || (!ops && n) || !cnt)
        return -1;
    const npu_tres_cfg_t *cfg = &plan->cfg;
    const npu_tsched_t *s = &plan->sched;
    int Mt = cfg->Mt, Nt = cfg->Nt, Kt = cfg->Kt;
    memset(cnt, 0, sizeof *cnt);
    int np = plan->npins;
    long *pin_ep[NPU_TRES_MAX_PINS] = {0}, *pin_slot[NPU_TRES_MAX_PINS] = {0};
    long epoch[NPU_TRES_MAX_PINS], count[NPU_TRES_MAX_PINS], key[NPU_TRES_MAX_PINS];
    uint8_t *keep_next = malloc(n ? n : 1);
    int rc = keep_next ? 0 : -1;
    for (int i = 0; i < np && rc == 0; i++) {
        long tc = npu_train_tile_count((npu_ttensor_t)plan->pin[i].tensor, Mt, Nt, Kt);
        pin_ep[i] = malloc((size_t)tc * sizeof(long));
        pin_slot[i] = malloc((size_t)tc * sizeof(long));
        if (!pin_ep[i] || !pin_slot[i]) {
            rc = -1;
            break;
        }
        for (long t = 0; t < tc; t++)
            pin_ep[i][t] = -1;
        epoch[i] = 0;
        count[i] = 0;
        key[i] = -1;
    }
    if (rc == 0) {
        /* keep_next[i]: the next op of the same stream and gradient accumulates the same tile */
        long next_tile[2][3];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 3; b++)
                next_tile[a][b] = -2;
        for (size_t i = n; i-- > 0;) {
            const npu_tileop_t *o = &ops[i];
            if (o->stream > 1 || o->grad > 2) {
                rc = -1;
                break;
            }
            npu_ttensor_t to, ta, tb;
            npu_train_op_tensors((npu_tgrad_t)o->grad, &to, &ta, &tb);
            long t = npu_train_tile_index(to, o->m, o->n, o->k, Mt, Nt, Kt);
            keep_next[i] = next_tile[o->stream][o->grad] == t;
            next_tile[o->stream][o->grad] = t;
        }
    }
    long last[2][NPU_TT_COUNT];
    int parity[2][NPU_TT_COUNT];
    for (int t = 0; t < NPU_TT_COUNT; t++) {
        last[0][t] = last[1][t] = -1;
        parity[0][t] = parity[1][t] = 0;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const npu_tileop_t *o = &ops[i];
        int st = o->stream;
        const npu_tnest_t *ne = &s->nest[st < s->nnests ? st : 0];
        int idx[3] = {o->m, o->n, o->k};
        /* scope changes of this stream's pins */
        for (int p = 0; p < np; p++) {
            if (plan->pin[p].owner != st)
                continue;
            long k2 = plan->pin[p].level == 0 ? 0 : idx[ne->perm[0]];
            if (k2 != key[p]) {
                key[p] = k2;
                epoch[p]++;
                count[p] = 0;
            }
        }
        npu_ttensor_t tt[3];
        npu_train_op_tensors((npu_tgrad_t)o->grad, &tt[2], &tt[0], &tt[1]);
        npu_tres_action_t a;
        memset(&a, 0, sizeof a);
        long slots[3];
        for (int r = 0; r < 3; r++) {
            npu_ttensor_t T = tt[r];
            long t = npu_train_tile_index(T, o->m, o->n, o->k, Mt, Nt, Kt);
            long units = tile_units(cfg, T, o->m, o->n, o->k);
            int own = 0, resident = 0;
            long slot = -1;
            for (int p = 0; p < np; p++) {
                const npu_tpin_t *pp = &plan->pin[p];
                int mine = pp->owner == st || pp->owner == NPU_TRES_LAYER;
                int valid = mine || (s->zipped && pp->owner != st);
                if (pp->tensor == T && valid && pin_ep[p][t] == epoch[p]) {
                    if (!resident || mine)
                        slot = pin_slot[p][t];
                    resident = 1;
                    own |= mine;
                }
            }
            /* stream buffers: this stream's current tile; for operands of a zipped schedule
             * also the other stream's (the interleave "T0" reuse). Separate passes (seq) do
             * not see each other's buffers. */
            int in_stream = last[st][T] == t;
            if (r != 2 && s->zipped && last[st ^ 1][T] == t)
                in_stream = 1;
            if (!resident && !in_stream && !(r == 2 && o->first)) {
                if (r == 2) {
                    a.reload = 1;
                    cnt->reloads[T]++;
                } else {
                    if (r == 0)
                        a.load_a = 1;
                    else
                        a.load_b = 1;
                    cnt->loads[T]++;
                }
                cnt->rd[T] += (uint64_t)units;
                a.rd_bytes += (uint32_t)units;
                parity[st][T] ^= 1;
            }
            if (!own) {
                /* pin it if a live pin of this stream (or the layer) has room */
                for (int p = 0; p < np; p++) {
                    const npu_tpin_t *pp = &plan->pin[p];
                    if (pp->tensor != T || !(pp->owner == st || pp->owner == NPU_TRES_LAYER))
                        continue;
                    if (count[p] < pp->pinned) {
                        pin_ep[p][t] = epoch[p];
                        pin_slot[p][t] = pp->base + count[p] * plan->tile_unit[T];
                        count[p]++;
                        resident = own = 1;
                        slot = pin_slot[p][t];
                        break;
                    }
                }
            }
            if (slot < 0) {
                if (plan->stream_off[st][T] < 0) { /* an op of a tensor its stream does not use */
                    rc = -1;
                    break;
                }
                slot = plan->stream_base + plan->stream_off[st][T] + parity[st][T] * plan->tile_unit[T];
            }
            slots[r] = slot;
            if (r == 2) {
                a.pinned_acc = (uint8_t)own;
                if (o->last) {
                    a.store = 1;
                    cnt->stores[T]++;
                    cnt->wr[T] += (uint64_t)units;
                    a.wr_bytes += (uint32_t)units;
                } else if (!own && !keep_next[i]) {
                    a.spill = 1;
                    cnt->spills[T]++;
                    cnt->wr[T] += (uint64_t)units;
                    a.wr_bytes += (uint32_t)units;
                }
                last[st][T] = a.spill ? -1 : t;
            } else {
                last[st][T] = t;
            }
        }
        if (rc != 0)
            break;
        a.slot_a = slots[0];
        a.slot_b = slots[1];
        a.slot_acc = slots[2];
        if (act)
            act[i] = a;
    }
    for (int t = 0; t < NPU_TT_COUNT; t++) {
        cnt->transfers += cnt->loads[t] + cnt->reloads[t] + cnt->spills[t] + cnt->stores[t];
        cnt->rd_total += cnt->rd[t];
        cnt->wr_total += cnt->wr[t];
    }
    for (int i = 0; i < np; i++) {
        free(pin_ep[i]);
        free(pin_slot[i]);
    }
    free(keep_next);
    return rc;
}

int npu_tres_eval(npu_torder_t o, const npu_tres_cfg_t *cfg, npu_tres_counts_t *cnt)
{
    npu_tsched_t s;
    npu_tres_plan_t plan;
    if (npu_train_sched(o, 0, &s) != 0 || npu_tres_plan(&s, cfg, &plan) != 0)
        return -1;
    size_t n = npu_train_sched_count(&s, cfg->Mt, cfg->Nt, cfg->Kt);
    npu_tileop_t *ops = malloc(n * sizeof *ops);
    if (!ops)
        return -1;
    int rc = npu_train_order_ex(&s, cfg->Mt, cfg->Nt, cfg->Kt, ops, n) == (long)n
                 ? npu_tres_run(&plan, ops, n, NULL, cnt)
                 : -1;
    free(ops);
    return rc;
}
