/* sched.c - the tensor-granular SPM scheduler (sched.h): a residency pass (Belady) that decides
 * every load, store, drop and free, then a timing pass that places them on one DMA channel. */
#include "model/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEVER 0x7fffffff

typedef struct plan {
    const npu_sched_problem_t *p;
    npu_sched_result_t *r;
    int cap_ev;
    int *resident, *dirty, *has_dram;
    uint64_t *occ; /* bytes resident during each step */
    uint64_t used;
} plan_t;

static int uses(const npu_sched_step_t *s, int t, int outputs)
{
    for (int i = 0; i < (outputs ? s->n_out : s->n_in); i++)
        if ((outputs ? s->out : s->in)[i] == t)
            return 1;
    return 0;
}

/* The same for the step's DRAM-side reads (outputs 0) or writes. */
static int dram_uses(const npu_sched_step_t *s, int t, int outputs)
{
    for (int i = 0; i < (outputs ? s->n_dram_out : s->n_dram_in); i++)
        if ((outputs ? s->dram_out : s->dram_in)[i] == t)
            return 1;
    return 0;
}

/* The tensor's room in the SPM. */
static uint64_t room(const npu_sched_problem_t *p, int t)
{
    return p->t[t].spm_bytes ? p->t[t].spm_bytes : p->t[t].bytes;
}

/* 1 when a step >= from reads t, in the SPM or in DRAM (its value is still wanted). */
static int read_later(const npu_sched_problem_t *p, int t, int from)
{
    for (int j = from; j < p->n_steps; j++)
        if (uses(&p->s[j], t, 0) || dram_uses(&p->s[j], t, 0))
            return 1;
    return 0;
}

/* The next step >= from that reads t; NEVER when none. */
static int next_read(const npu_sched_problem_t *p, int t, int from)
{
    for (int j = from; j < p->n_steps; j++)
        if (uses(&p->s[j], t, 0))
            return j;
    return NEVER;
}

/* 1 when a step >= from writes t (its value now will not be the final one). */
static int written_later(const npu_sched_problem_t *p, int t, int from)
{
    for (int j = from; j < p->n_steps; j++)
        if (uses(&p->s[j], t, 1) || dram_uses(&p->s[j], t, 1))
            return 1;
    return 0;
}

/* The last step < before that reads (or, with writes_only, writes) t; -1 when none. */
static int last_access(const npu_sched_problem_t *p, int t, int before, int writes_only)
{
    for (int j = before - 1; j >= 0; j--)
        if ((!writes_only && uses(&p->s[j], t, 0)) || uses(&p->s[j], t, 1))
            return j;
    return -1;
}

static int add_event(plan_t *pl, int kind, int t, int step, int forced)
{
    npu_sched_result_t *r = pl->r;
    if (r->n_ev == pl->cap_ev) {
        int cap = pl->cap_ev ? 2 * pl->cap_ev : 64;
        npu_sched_event_t *e = realloc(r->ev, (size_t)cap * sizeof *e);
        if (!e)
            return -1;
        r->ev = e;
        pl->cap_ev = cap;
    }
    r->ev[r->n_ev++] = (npu_sched_event_t){kind, t, step, forced, 0, 0, 0, 0, step};
    return 0;
}

/* t leaves the SPM before `step`: a dirty tensor still wanted (read again, or a result no later
 * step overwrites) is written out, a clean one dropped (its DRAM copy is valid), one no longer wanted freed. */
static int evict(plan_t *pl, int t, int step, int forced)
{
    const npu_sched_problem_t *p = pl->p;
    int wanted = read_later(p, t, step) || (p->t[t].keep_out && !written_later(p, t, step));
    int kind = !wanted ? NPU_SCHED_FREE : pl->dirty[t] ? NPU_SCHED_STORE : NPU_SCHED_DROP;
    if (kind == NPU_SCHED_STORE)
        pl->has_dram[t] = 1;
    pl->resident[t] = pl->dirty[t] = 0;
    pl->used -= room(p, t);
    return add_event(pl, kind, t, step, forced);
}

/* The resident tensor step s does not need with the farthest next read; -1 when none. */
static int victim(const plan_t *pl, int s)
{
    const npu_sched_problem_t *p = pl->p;
    int best = -1, far = -1;
    for (int t = 0; t < p->n_tensors; t++) {
        int nr;
        if (!pl->resident[t] || uses(&p->s[s], t, 0) || uses(&p->s[s], t, 1))
            continue;
        nr = next_read(p, t, s);
        if (nr > far || (nr == far && room(p, t) > room(p, best))) {
            far = nr;
            best = t;
        }
    }
    return best;
}

/* A step that cannot run: the reason in r->why; returns 1. */
static int infeasible(npu_sched_result_t *r, int s, const char *fmt, const char *a, unsigned long long b)
{
    snprintf(r->why, sizeof r->why, fmt, a, b);
    r->ok = 0;
    r->bad_step = s;
    return 1;
}

/* Step s's DRAM-side accesses, before it: a dirty resident input is written back and stays
 * (clean); a resident output is freed (the step overwrites its DRAM copy). 0, or -1. */
static int dram_side(plan_t *pl, int s)
{
    const npu_sched_problem_t *p = pl->p;
    const npu_sched_step_t *st = &p->s[s];
    for (int i = 0; i < st->n_dram_in; i++) {
        int t = st->dram_in[i];
        if (pl->resident[t] && pl->dirty[t]) {
            if (add_event(pl, NPU_SCHED_STORE, t, s, 1))
                return -1;
            pl->r->ev[pl->r->n_ev - 1].keep = 1;
            pl->dirty[t] = 0;
            pl->has_dram[t] = 1;
        }
    }
    for (int i = 0; i < st->n_dram_out; i++) {
        int t = st->dram_out[i];
        if (pl->resident[t]) {
            pl->resident[t] = pl->dirty[t] = 0;
            pl->used -= room(p, t);
            if (add_event(pl, NPU_SCHED_FREE, t, s, 0))
                return -1;
        }
    }
    return 0;
}

/* Residency of step s: room for its missing inputs and its outputs (evictions), its loads, its
 * outputs resident and dirty, then the frees of what is dead after it. 0, 1 when the step
 * cannot run (r->why), -1 out of memory. */
static int plan_step(plan_t *pl, int s)
{
    const npu_sched_problem_t *p = pl->p;
    const npu_sched_step_t *st = &p->s[s];
    uint64_t need = 0;
    if (dram_side(pl, s))
        return -1;
    for (int i = 0; i < st->n_in; i++)
        need += pl->resident[st->in[i]] ? 0 : room(p, st->in[i]);
    for (int i = 0; i < st->n_out; i++)
        need += pl->resident[st->out[i]] || uses(st, st->out[i], 0) ? 0 : room(p, st->out[i]);
    while (p->spm_bytes - pl->used < need) {
        int v = victim(pl, s);
        if (v < 0)
            return infeasible(pl->r, s, "step %s: its own inputs and outputs exceed the SPM by %llu "
                        "bytes", st->name, (unsigned long long)(need - (p->spm_bytes - pl->used)));
        if (evict(pl, v, s, 1))
            return -1;
    }
    for (int i = 0; i < st->n_in; i++) {
        int t = st->in[i];
        if (pl->resident[t])
            continue;
        if (!pl->has_dram[t])
            return infeasible(pl->r, s, "step %s reads tensor %llu before any step writes it", st->name,
                        (unsigned long long)t);
        if (add_event(pl, NPU_SCHED_LOAD, t, s, 0))
            return -1;
        pl->resident[t] = 1;
        pl->used += room(p, t);
    }
    for (int i = 0; i < st->n_out; i++) {
        int t = st->out[i];
        if (!pl->resident[t])
            pl->used += room(p, t);
        pl->resident[t] = pl->dirty[t] = 1;
        pl->has_dram[t] = 0;
    }
    for (int i = 0; i < st->n_dram_out; i++)
        pl->has_dram[st->dram_out[i]] = 1;
    pl->occ[s] = pl->used;
    for (int t = 0; t < p->n_tensors; t++) /* dead after s, or finished results: leave now */
        if (pl->resident[t] && (uses(st, t, 0) || uses(st, t, 1)) && next_read(p, t, s + 1) == NEVER &&
            evict(pl, t, s + 1, 0))
            return -1;
    return 0;
}

/* ---- time ---- */

static uint64_t xfer_cycles(const npu_sched_problem_t *p, uint64_t bytes)
{
    uint64_t c = (uint64_t)((double)bytes / p->bw);
    return p->latency + c + ((double)c * p->bw < (double)bytes);
}

int npu_sched_prefetch_k(const npu_sched_problem_t *p, int step, uint64_t bytes)
{
    uint64_t need = xfer_cycles(p, bytes), have = 0;
    for (int k = 1; k <= step; k++) {
        have += p->s[step - k].cycles;
        if (have >= need)
            return k;
    }
    return step;
}

/* The step at whose start an event's transfer is issued: a store right after the step that
 * last wrote the tensor (look-ahead: its value is final; later reads do not change it) or when
 * its space is needed; a load k steps early (prefetch), but only from a step on after which the
 * SPM has room for it at every step until its own (occ: the plan's bytes resident during each
 * step, the tensors it will evict included; extra: the room earlier prefetches hold). */
static int issue_step(const npu_sched_problem_t *p, const npu_sched_result_t *r, int i,
                      const uint64_t *occ, uint64_t *extra)
{
    const npu_sched_event_t *e = &r->ev[i];
    uint64_t b = room(p, e->tensor);
    int at;
    if (e->kind == NPU_SCHED_STORE)
        return p->lookahead ? last_access(p, e->tensor, e->step, 1) + 1 : e->step; /* final */
    if (e->kind != NPU_SCHED_LOAD || !p->prefetch)
        return e->step;
    at = e->step - npu_sched_prefetch_k(p, e->step, b);
    for (int j = i - 1; j >= 0; j--) /* not before the tensor's previous stay has ended */
        if (r->ev[j].tensor == e->tensor && r->ev[j].kind != NPU_SCHED_LOAD && !r->ev[j].keep) {
            at = at > r->ev[j].step ? at : r->ev[j].step;
            break;
        }
    for (int j = e->step - 1; j >= at; j--) /* nor while a step writes its DRAM copy */
        if (dram_uses(&p->s[j], e->tensor, 1)) {
            at = j + 1;
            break;
        }
    for (int j = e->step - 1; j >= at; j--) /* deferred past a step without room */
        if (occ[j] + extra[j] + b > p->spm_bytes) {
            at = j + 1;
            break;
        }
    for (int j = at; j < e->step; j++)
        extra[j] += b;
    return at;
}

/* The order of the transfers issued at one step: the write-backs that make room, the loads the
 * step itself waits for, the other write-backs, then prefetches by the step that needs them. */
static int xfer_class(const npu_sched_event_t *e, int s)
{
    if (e->kind == NPU_SCHED_STORE)
        return e->forced ? 0 : 2;
    return e->step == s ? 1 : 3;
}

/* The DMA order of the transfers: by issue step, then class, then the step that needs them,
 * then event order (qsort context through a file-scope pointer: C99 has no qsort_r). */
static const npu_sched_event_t *g_ev;
static const int *g_issue;

static int xfer_cmp(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    int ka[4] = {g_issue[a], xfer_class(&g_ev[a], g_issue[a]), g_ev[a].step, a};
    int kb[4] = {g_issue[b], xfer_class(&g_ev[b], g_issue[b]), g_ev[b].step, b};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* The transfers (LOAD, STORE) in DMA order; *n of them. NULL when out of memory. */
static int *xfer_order(const npu_sched_result_t *r, const int *issue, int *n)
{
    int *o = malloc((size_t)(r->n_ev ? r->n_ev : 1) * sizeof *o);
    *n = 0;
    if (!o)
        return NULL;
    for (int i = 0; i < r->n_ev; i++)
        if (r->ev[i].kind == NPU_SCHED_LOAD || r->ev[i].kind == NPU_SCHED_STORE)
            o[(*n)++] = i;
    g_ev = r->ev;
    g_issue = issue;
    qsort(o, (size_t)*n, sizeof *o, xfer_cmp);
    return o;
}

static int time_plan(const npu_sched_problem_t *p, npu_sched_result_t *r, const int *issue)
{
    uint64_t now = 0, dma = 0;
    int n, next = 0, *order = xfer_order(r, issue, &n);
    if (!order)
        return -1;
    for (int s = 0; s <= p->n_steps; s++) {
        uint64_t ready = now;
        for (; next < n && issue[order[next]] == s; next++) { /* issued at the start of s */
            npu_sched_event_t *e = &r->ev[order[next]];
            e->issue = now;
            e->start = dma > now ? dma : now;
            e->end = dma = e->start + xfer_cycles(p, p->t[e->tensor].bytes);
        }
        if (s == p->n_steps)
            break;
        for (int i = 0; i < r->n_ev; i++) /* its loads, and the write-backs that make its room */
            if (r->ev[i].step == s && (r->ev[i].kind == NPU_SCHED_LOAD ||
                                       (r->ev[i].kind == NPU_SCHED_STORE && r->ev[i].forced)))
                ready = r->ev[i].end > ready ? r->ev[i].end : ready;
        r->step[s].start = ready;
        r->step[s].stall = ready - now;
        r->step[s].end = now = ready + p->s[s].cycles;
    }
    free(order);
    r->cycles = now > dma ? now : dma;
    for (int s = 0; s < p->n_steps; s++)
        r->stall += r->step[s].stall;
    return 0;
}

/* ---- the run ---- */

static int check_problem(const npu_sched_problem_t *p, npu_sched_result_t *r)
{
    if (p->n_tensors < 1 || p->n_steps < 1 || !(p->bw > 0)) {
        snprintf(r->why, sizeof r->why, "no tensors, no steps or no bandwidth");
        return -1;
    }
    for (int s = 0; s < p->n_steps; s++) {
        const npu_sched_step_t *st = &p->s[s];
        if (st->n_in < 0 || st->n_in > NPU_SCHED_MAX_IO || st->n_out < 0 || st->n_out > NPU_SCHED_MAX_IO ||
            st->n_dram_in < 0 || st->n_dram_in > NPU_SCHED_MAX_IO || st->n_dram_out < 0 ||
            st->n_dram_out > NPU_SCHED_MAX_IO) {
            snprintf(r->why, sizeof r->why, "step %d: more than %d inputs or outputs", s, NPU_SCHED_MAX_IO);
            return -1;
        }
        for (int i = 0; i < st->n_in + st->n_out + st->n_dram_in + st->n_dram_out; i++) {
            int j = i, t = j < st->n_in ? st->in[j] : (j -= st->n_in) < st->n_out ? st->out[j]
                         : (j -= st->n_out) < st->n_dram_in ? st->dram_in[j] : st->dram_out[j - st->n_dram_in];
            if (t < 0 || t >= p->n_tensors) {
                snprintf(r->why, sizeof r->why, "step %d: tensor %d does not exist", s, t);
                return -1;
            }
        }
    }
    return 0;
}

/* Per-tensor and per-step byte counts of the timed plan. */
static void tally(const npu_sched_problem_t *p, npu_sched_result_t *r)
{
    for (int i = 0; i < r->n_ev; i++) {
        const npu_sched_event_t *e = &r->ev[i];
        uint64_t b = p->t[e->tensor].bytes;
        npu_sched_tensor_stat_t *ts = &r->tensor[e->tensor];
        int at = e->kind == NPU_SCHED_STORE && !e->forced ? e->step - 1 : e->step; /* after it */
        npu_sched_step_stat_t *ss = at < p->n_steps ? &r->step[at] : NULL;
        if (e->kind == NPU_SCHED_LOAD) {
            ts->in_bytes += b, ts->loads++, r->in_bytes += b;
            if (ss)
                ss->in_bytes += b;
        } else if (e->kind == NPU_SCHED_STORE) {
            ts->out_bytes += b, ts->stores++, r->out_bytes += b;
            if (ss)
                ss->out_bytes += b;
        } else if (e->kind == NPU_SCHED_DROP) {
            ts->drops++;
        }
    }
    for (int s = 0; s < p->n_steps; s++)
        for (int i = 0; i < p->s[s].n_in; i++) {
            int k = npu_sched_prefetch_k(p, s, p->t[p->s[s].in[i]].bytes);
            r->step[s].prefetch_k = k > r->step[s].prefetch_k ? k : r->step[s].prefetch_k;
        }
}

int npu_sched_run(const npu_sched_problem_t *p, npu_sched_result_t *r)
{
    plan_t pl = {p, r, 0, NULL, NULL, NULL, NULL, 0};
    uint64_t *extra = NULL;
    int *issue = NULL, rc = -1;
    memset(r, 0, sizeof *r);
    r->ok = 1;
    if (check_problem(p, r))
        return -1;
    pl.resident = calloc((size_t)p->n_tensors, sizeof(int));
    pl.dirty = calloc((size_t)p->n_tensors, sizeof(int));
    pl.has_dram = calloc((size_t)p->n_tensors, sizeof(int));
    pl.occ = calloc((size_t)p->n_steps, sizeof(uint64_t));
    extra = calloc((size_t)p->n_steps + 1, sizeof(uint64_t));
    r->tensor = calloc((size_t)p->n_tensors, sizeof *r->tensor);
    r->step = calloc((size_t)p->n_steps, sizeof *r->step);
    if (!pl.resident || !pl.dirty || !pl.has_dram || !pl.occ || !extra || !r->tensor || !r->step)
        goto out;
    for (int t = 0; t < p->n_tensors; t++)
        pl.has_dram[t] = p->t[t].in_dram;
    for (int s = 0; s < p->n_steps && r->ok; s++)
        if (plan_step(&pl, s) < 0)
            goto out;
    if (r->ok) {
        if (r->n_ev && !(issue = malloc((size_t)r->n_ev * sizeof(int))))
            goto out;
        for (int i = 0; i < r->n_ev; i++)
            r->ev[i].at = issue[i] = issue_step(p, r, i, pl.occ, extra);
        if (time_plan(p, r, issue))
            goto out;
        tally(p, r);
    }
    rc = 0;
out:
    if (rc)
        snprintf(r->why, sizeof r->why, "out of memory");
    free(pl.resident); free(pl.dirty); free(pl.has_dram); free(pl.occ); free(extra); free(issue);
    return rc;
}

void npu_sched_free(npu_sched_result_t *r)
{
    free(r->tensor);
    free(r->step);
    free(r->ev);
    memset(r, 0, sizeof *r);
}
