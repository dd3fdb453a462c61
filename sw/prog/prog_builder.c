/* prog_builder.c - the program builder of every emitter; see prog_builder.h. */
#include "prog/prog_builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void npu_pb_init(npu_pb_t *b, const npu_cfg_t *cfg)
{
    memset(b, 0, sizeof *b);
    b->cfg = cfg;
    b->B = (uint64_t)npu_cfg_word(cfg);
}

void npu_pb_context(npu_pb_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->ctx, sizeof b->ctx, fmt, ap);
    va_end(ap);
}

void npu_pb_fail(npu_pb_t *b, const char *fmt, ...)
{
    va_list ap;
    size_t l = 0;
    if (b->err)
        return;
    b->err = 1;
    if (b->ctx[0])
        l = (size_t)snprintf(b->why, sizeof b->why, "%s: ", b->ctx);
    if (l >= sizeof b->why)
        return;
    va_start(ap, fmt);
    vsnprintf(b->why + l, sizeof b->why - l, fmt, ap);
    va_end(ap);
}

int npu_pb_finish(const npu_pb_t *b, char *msg, size_t n)
{
    if (msg && n)
        snprintf(msg, n, "%s", b->err ? b->why : "");
    return b->err ? -1 : 0;
}

size_t npu_pb_put(npu_pb_t *b, npu_prog_t *l, int rc, const npu_insn_t *in, unsigned tok)
{
    npu_insn_t w;
    if (rc != 0) {
        npu_pb_fail(b, "a field does not fit its encoding");
        return 0;
    }
    if (!l->cap && (l->insn = malloc(8 * sizeof *l->insn)) != NULL)
        l->cap = 8; /* a step's groups are short: npu_prog_push would reserve 256 */
    w = *in;
    npu_insn_tok(&w, tok);
    if (npu_prog_push(l, &w) != 0)
        npu_pb_fail(b, "out of memory");
    return l->n ? l->n - 1 : 0;
}

size_t npu_pb_vec(npu_pb_t *b, npu_prog_t *l, const npu_vec_op_t *v, unsigned tok_set, unsigned tok)
{
    npu_insn_t in;
    npu_pb_put(b, l, npu_enc_vset(&in, v->alpha, v->beta, v->len, v->shift), &in, tok_set);
    return npu_pb_put(b, l, npu_enc_vec(&in, v->vop, (int)v->wide, v->rows, v->a_addr, v->a_stride,
                                        v->b_addr, v->b_stride, v->d_addr, v->d_stride), &in, tok);
}

void npu_pb_copy(npu_pb_t *b, npu_prog_t *l, const npu_insn_t *src, size_t n)
{
    for (size_t i = 0; i < n && !b->err; i++)
        npu_pb_put(b, l, 0, &src[i], 0);
}

void npu_pb_or_sync(npu_pb_t *b, npu_prog_t *l, unsigned op)
{
    npu_insn_t in;
    if (!l->n)
        npu_pb_put(b, l, npu_enc_sync(&in, op), &in, 0);
}

uint32_t npu_pb_dram(npu_pb_t *b, uint64_t a)
{
    if (a > 0xFFFFFFFFull || a % 2) {
        npu_pb_fail(b, "DRAM address 0x%llx past 32 bits or odd", (unsigned long long)a);
        return 0;
    }
    return (uint32_t)a;
}

unsigned npu_pb_bank(npu_pb_t *b)
{
    unsigned bank = b->bank;
    b->bank ^= 1u;
    return bank;
}

unsigned npu_pb_obuf_half(const npu_pb_t *b, long i)
{
    return (unsigned)(i % 2) * (unsigned)b->cfg->obuf_rows;
}

size_t npu_pb_first_op(const npu_prog_t *l, unsigned opmask)
{
    for (size_t i = 0; i < l->n; i++)
        if (opmask >> npu_insn_op(&l->insn[i]) & 1u)
            return i;
    return NPU_PB_NONE;
}

size_t npu_pb_last_op(const npu_prog_t *l, unsigned opmask)
{
    for (size_t i = l->n; i-- > 0;)
        if (opmask >> npu_insn_op(&l->insn[i]) & 1u)
            return i;
    return NPU_PB_NONE;
}

/* ---- the step graph ---------------------------------------------------------------------- */

npu_pb_step_t *npu_pb_steps(npu_pb_t *b, long n)
{
    npu_pb_step_t *s = calloc(n > 0 ? (size_t)n : 1, sizeof *s);
    if (!s)
        npu_pb_fail(b, "out of memory");
    return s; /* calloc: every npu_prog_t is empty (npu_prog_init's state) */
}

void npu_pb_steps_free(npu_pb_step_t *s, long n)
{
    for (long i = 0; s && i < n; i++) {
        for (int g = 0; g < NPU_PB_LOADS; g++)
            npu_prog_free(&s[i].ld[g]);
        npu_prog_free(&s[i].ex);
        npu_prog_free(&s[i].st);
    }
    free(s);
}

void npu_pb_wait_chunk(npu_pb_t *b, npu_pb_step_t *s, long i)
{
    npu_pb_wait(b, s, NPU_PB_L2E, 0, 0, 0);
    if (i >= 1)
        npu_pb_wait(b, s, NPU_PB_S2E, i - 1, 0, 0);
    if (i >= 2)
        npu_pb_wait(b, s, NPU_PB_E2L, i - 1, 0, 0);
    npu_pb_wait(b, s, NPU_PB_E2S, 0, 0, 0);
}

void npu_pb_wait(npu_pb_t *b, npu_pb_step_t *s, int chan, long from, int grp, size_t at)
{
    npu_pb_wait_t *w;
    if (s->nwait == NPU_PB_WAITS) {
        npu_pb_fail(b, "more than %d waits in one step", NPU_PB_WAITS);
        return;
    }
    w = &s->wait[s->nwait++];
    w->chan = chan;
    w->from = from;
    w->grp = grp;
    w->at = at;
}

/* The flags of a channel's producer (push) and consumer (pop). */
static const unsigned chan_push[NPU_PB_NCHAN] = {NPU_TOK_PUSH_NEXT, NPU_TOK_PUSH_PREV, NPU_TOK_PUSH_NEXT,
                                                 NPU_TOK_PUSH_PREV};
static const unsigned chan_pop[NPU_PB_NCHAN] = {NPU_TOK_POP_PREV, NPU_TOK_POP_NEXT, NPU_TOK_POP_PREV,
                                                NPU_TOK_POP_NEXT};
static const char *const chan_name[NPU_PB_NCHAN] = {"l2e", "e2l", "e2s", "s2e"};

/* ORs flag into instruction idx of l; a token with no instruction to carry it fails. */
static void tok(npu_pb_t *b, npu_prog_t *l, size_t idx, unsigned flag, const char *what)
{
    if (idx >= l->n) {
        npu_pb_fail(b, "no instruction to carry the %s token", what);
        return;
    }
    npu_insn_tok(&l->insn[idx], flag);
}

void npu_pb_link(npu_pb_t *b, int chan, npu_prog_t *prod, size_t pi, npu_prog_t *cons, size_t ci)
{
    if (chan < 0 || chan >= NPU_PB_NCHAN) {
        npu_pb_fail(b, "bad token channel %d", chan);
        return;
    }
    tok(b, prod, pi, chan_push[chan], chan_name[chan]);
    tok(b, cons, ci, chan_pop[chan], chan_name[chan]);
}

/* The steps a stitching pass sees: the whole graph (ring 0) or the stream's ring, where step k
 * is slot k % ring and only steps from lo on are still there. */
typedef struct stepv {
    npu_pb_step_t *s;
    long ring, lo;
} stepv_t;

static npu_pb_step_t *step_at(const stepv_t *v, long k)
{
    if (k < v->lo)
        return NULL;
    return &v->s[v->ring ? k % v->ring : k];
}

/* One wait of step i: the consumer pops, the producer pushes; e2l and s2e waits implied by an
 * earlier one on the same channel are dropped (waited[]: the last producer step waited for). */
static void stitch_wait(npu_pb_t *b, const stepv_t *v, long i, const npu_pb_wait_t *w, long *waited)
{
    npu_pb_step_t *c = step_at(v, i), *p = w->from >= 0 && w->from <= i ? step_at(v, w->from) : NULL;
    int grp_ok = w->grp >= 0 && w->grp < NPU_PB_LOADS;
    int implied = (w->chan == NPU_PB_E2L || w->chan == NPU_PB_S2E) && w->from <= waited[w->chan];
    if (implied && w->from >= 0 && (w->chan != NPU_PB_E2L || (grp_ok && w->from < i)))
        return;
    switch (w->chan) {
    case NPU_PB_L2E:
        if (!grp_ok)
            break;
        npu_pb_link(b, NPU_PB_L2E, &c->ld[w->grp], c->ld[w->grp].n - 1, &c->ex, w->at);
        return;
    case NPU_PB_E2S:
        npu_pb_link(b, NPU_PB_E2S, &c->ex, c->push_e2s, &c->st, 0);
        return;
    case NPU_PB_E2L:
        if (!grp_ok || !p || w->from == i)
            break;
        npu_pb_link(b, NPU_PB_E2L, &p->ex, p->push_e2l, &c->ld[w->grp], 0);
        waited[NPU_PB_E2L] = w->from;
        return;
    case NPU_PB_S2E:
        if (!p)
            break;
        npu_pb_link(b, NPU_PB_S2E, &p->st, p->st.n - 1, &c->ex, w->at);
        waited[NPU_PB_S2E] = w->from;
        return;
    default:
        break;
    }
    npu_pb_fail(b, "bad wait (channel %d, from step %ld, group %d)", w->chan, w->from, w->grp);
}

/* The waits and free pushes of step i. */
static void stitch_step(npu_pb_t *b, const stepv_t *v, long i, long *waited)
{
    npu_pb_step_t *c = step_at(v, i);
    npu_pb_context(b, "token stitching, step %ld", i);
    for (int j = 0; j < c->nwait; j++)
        stitch_wait(b, v, i, &c->wait[j], waited);
    if (c->free >> NPU_PB_E2L & 1u)
        tok(b, &c->ex, c->push_e2l, NPU_TOK_PUSH_PREV, "e2l");
    if (c->free >> NPU_PB_S2E & 1u)
        tok(b, &c->st, c->st.n - 1, NPU_TOK_PUSH_PREV, "s2e");
}

void npu_pb_stitch(npu_pb_t *b, npu_pb_step_t *s, long n)
{
    long waited[NPU_PB_NCHAN] = {-1, -1, -1, -1};
    stepv_t v = {s, 0, 0};
    for (long i = 0; i < n && !b->err; i++)
        stitch_step(b, &v, i, waited);
}

static void copy_loads(npu_pb_t *b, const npu_pb_step_t *s, npu_prog_t *out)
{
    for (int g = 0; g < NPU_PB_LOADS; g++)
        npu_pb_copy(b, out, s->ld[g].insn, s->ld[g].n);
}

/* Program position i: the loads of step i + ahead (la, NULL past the end) before step i's EXEC,
 * or after its STOREs, and step i's EXEC and STOREs. */
static void order_at(npu_pb_t *b, const npu_pb_step_t *cur, const npu_pb_step_t *la, int loads_after,
                     npu_prog_t *out)
{
    if (la && !loads_after)
        copy_loads(b, la, out);
    npu_pb_copy(b, out, cur->ex.insn, cur->ex.n);
    npu_pb_copy(b, out, cur->st.insn, cur->st.n);
    if (la && loads_after)
        copy_loads(b, la, out);
}

void npu_pb_order(npu_pb_t *b, const npu_pb_step_t *s, long n, long ahead, int loads_after,
                  npu_prog_t *out)
{
    npu_pb_context(b, "program order");
    for (long i = 0; i < ahead && i < n; i++)
        copy_loads(b, &s[i], out);
    for (long i = 0; i < n && !b->err; i++)
        order_at(b, &s[i], i + ahead < n ? &s[i + ahead] : NULL, loads_after, out);
}

/* ---- the step graph as a stream ------------------------------------------------------------ */

int npu_pb_stream_init(npu_pb_t *b, npu_pb_stream_t *st, long span, long ahead, int loads_after,
                       npu_prog_t *out)
{
    memset(st, 0, sizeof *st);
    st->span = span > 0 ? span : 0;
    st->ahead = ahead > 0 ? ahead : 0;
    st->loads_after = loads_after;
    st->out = out;
    st->ring_n = st->span + st->ahead + 1;
    for (int c = 0; c < NPU_PB_NCHAN; c++)
        st->waited[c] = -1;
    st->ring = npu_pb_steps(b, st->ring_n);
    return st->ring ? 0 : -1;
}

npu_pb_step_t *npu_pb_stream_step(npu_pb_stream_t *st)
{
    npu_pb_step_t *s;
    if (!st->ring)
        return NULL;
    s = &st->ring[st->built % st->ring_n];
    for (int g = 0; g < NPU_PB_LOADS; g++)
        s->ld[g].n = 0; /* a recycled slot keeps its arrays */
    s->ex.n = s->st.n = 0;
    s->nwait = 0;
    s->push_e2l = s->push_e2s = 0;
    s->free = 0;
    return s;
}

/* Emits the program positions whose steps no later wait can change any more: position i needs
 * steps i and i + ahead final, and step k is final once step k + span is stitched (n: the steps
 * of a finished stream, else -1). */
static void stream_emit(npu_pb_t *b, npu_pb_stream_t *st, long n)
{
    stepv_t v = {st->ring, st->ring_n, 0};
    long final = n >= 0 ? n - 1 : st->built - 1 - st->span;
    npu_pb_context(b, "program order");
    for (; st->next < (n >= 0 ? n : st->built) && (n >= 0 || st->next + st->ahead <= final) && !b->err;
         st->next++) {
        long la = st->next + st->ahead;
        if (st->next == 0)
            for (long k = 0; k < st->ahead && k <= final; k++)
                copy_loads(b, step_at(&v, k), st->out);
        order_at(b, step_at(&v, st->next), la <= final ? step_at(&v, la) : NULL, st->loads_after, st->out);
    }
}

void npu_pb_stream_commit(npu_pb_t *b, npu_pb_stream_t *st)
{
    stepv_t v = {st->ring, st->ring_n, st->built - st->span};
    for (int j = 0; j < st->ring[st->built % st->ring_n].nwait; j++) {
        const npu_pb_wait_t *w = &st->ring[st->built % st->ring_n].wait[j];
        if (w->from < st->built - st->span && w->from > st->waited[w->chan] &&
            (w->chan == NPU_PB_E2L || w->chan == NPU_PB_S2E))
            npu_pb_fail(b, "step %ld waits for step %ld, further back than the stream's span %ld", st->built,
                        w->from, st->span);
    }
    if (!b->err)
        stitch_step(b, &v, st->built, st->waited);
    st->built++;
    if (!b->err)
        stream_emit(b, st, -1);
}

int npu_pb_stream_end(npu_pb_t *b, npu_pb_stream_t *st)
{
    if (st->ring && !b->err)
        stream_emit(b, st, st->built);
    npu_pb_steps_free(st->ring, st->ring_n);
    st->ring = NULL;
    return b->err ? -1 : 0;
}

void npu_pb_spread(npu_pb_t *b, npu_prog_t *out, const npu_insn_t *l, size_t nl, const npu_insn_t *c,
                   size_t nc)
{
    size_t k = nl ? nc / (2 * nl) : 0, i = 0, j = 0;
    if (k < 1)
        k = 1;
    while (i < nl || j < nc) {
        if (i < nl)
            npu_pb_put(b, out, 0, &l[i++], 0);
        for (size_t t = 0; t < k && j < nc; t++)
            npu_pb_put(b, out, 0, &c[j++], 0);
        if (i == nl)
            while (j < nc)
                npu_pb_put(b, out, 0, &c[j++], 0);
    }
}
