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
    b->B = (uint64_t)npu_cfg_beat(cfg);
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
    w = *in;
    npu_insn_tok(&w, tok);
    if (npu_prog_push(l, &w) != 0)
        npu_pb_fail(b, "out of memory");
    return l->n ? l->n - 1 : 0;
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
    if (a > 0xFFFFFFFFull || a % b->B) {
        npu_pb_fail(b, "DRAM address 0x%llx past 32 bits or not beat-aligned", (unsigned long long)a);
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

/* One wait of step i: the consumer pops, the producer pushes; e2l and s2e waits implied by an
 * earlier one on the same channel are dropped (waited[]: the last producer step waited for). */
static void stitch_wait(npu_pb_t *b, npu_pb_step_t *s, long i, const npu_pb_wait_t *w, long *waited)
{
    npu_pb_step_t *c = &s[i], *p = w->from >= 0 && w->from <= i ? &s[w->from] : NULL;
    int grp_ok = w->grp >= 0 && w->grp < NPU_PB_LOADS;
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
        if (w->from > waited[NPU_PB_E2L]) {
            npu_pb_link(b, NPU_PB_E2L, &p->ex, p->push_e2l, &c->ld[w->grp], 0);
            waited[NPU_PB_E2L] = w->from;
        }
        return;
    case NPU_PB_S2E:
        if (!p)
            break;
        if (w->from > waited[NPU_PB_S2E]) {
            npu_pb_link(b, NPU_PB_S2E, &p->st, p->st.n - 1, &c->ex, w->at);
            waited[NPU_PB_S2E] = w->from;
        }
        return;
    default:
        break;
    }
    npu_pb_fail(b, "bad wait (channel %d, from step %ld, group %d)", w->chan, w->from, w->grp);
}

void npu_pb_stitch(npu_pb_t *b, npu_pb_step_t *s, long n)
{
    long waited[NPU_PB_NCHAN] = {-1, -1, -1, -1};
    for (long i = 0; i < n && !b->err; i++) {
        npu_pb_context(b, "token stitching, step %ld", i);
        for (int j = 0; j < s[i].nwait; j++)
            stitch_wait(b, s, i, &s[i].wait[j], waited);
        if (s[i].free >> NPU_PB_E2L & 1u)
            tok(b, &s[i].ex, s[i].push_e2l, NPU_TOK_PUSH_PREV, "e2l");
        if (s[i].free >> NPU_PB_S2E & 1u)
            tok(b, &s[i].st, s[i].st.n - 1, NPU_TOK_PUSH_PREV, "s2e");
    }
}

static void copy_loads(npu_pb_t *b, const npu_pb_step_t *s, npu_prog_t *out)
{
    for (int g = 0; g < NPU_PB_LOADS; g++)
        npu_pb_copy(b, out, s->ld[g].insn, s->ld[g].n);
}

void npu_pb_order(npu_pb_t *b, const npu_pb_step_t *s, long n, long ahead, int loads_after,
                  npu_prog_t *out)
{
    npu_pb_context(b, "program order");
    for (long i = 0; i < ahead && i < n; i++)
        copy_loads(b, &s[i], out);
    for (long i = 0; i < n && !b->err; i++) {
        if (!loads_after && i + ahead < n)
            copy_loads(b, &s[i + ahead], out);
        npu_pb_copy(b, out, s[i].ex.insn, s[i].ex.n);
        npu_pb_copy(b, out, s[i].st.insn, s[i].st.n);
        if (loads_after && i + ahead < n)
            copy_loads(b, &s[i + ahead], out);
    }
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
