/* conv_emit.c - convolution program emission: one program-builder step per unit, tokens and
 * program order, npu_conv_emit; see conv_emit.h, conv_unit.h and docs/conv.md. */
#include "compile/conv/conv_unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- assembly: one step per unit, tokens, program order ---------------------------------- */

/* The EXEC units (weight loader, wave engine, drain engine) complete out of order, and an
 * instruction pushes its tokens when it completes, so the pushes on one channel must come from
 * one in-order unit or the consumer could take a later push for an earlier event: e2l is pushed
 * only by WAVEs (or, for a band without waves, by the second of two token-only LDWs, which
 * completes after every earlier wave left the array), e2s only by DRAINs (or a token-only DRAIN
 * into the scratch words). LOAD and STORE queues complete in order. */

/* Step u's EXEC list: C(u) up to its last reader (LDW or WAVE; two token-only LDWs, banks 0 then
 * 1, when it has none but carries tokens: c_tok), then D(u) = the rest of C (all of it without a
 * reader: a dW unit whose X rows meet no dY row may still hold an early group) and the DRAINs, with
 * a token-only DRAIN of one OBUF row into the scratch words when D must push e2s (d_push) and
 * does not end in a DRAIN, or a SYNC_E when it is empty and must pop (d_pop). */
static void unit_ex(npu_cx_t *x, npu_cx_unit_t *up, int u, npu_pb_step_t *s, int c_tok, int d_pop, int d_push)
{
    size_t reader = npu_pb_last_op(&up->C, NPU_PB_OP(NPU_OP_LDW) | NPU_PB_OP(NPU_OP_WAVE)), c_end;
    npu_insn_t in;
    c_end = reader == NPU_PB_NONE ? 0 : reader + 1;
    npu_pb_copy(&x->b, &s->ex, up->C.insn, c_end);
    if (reader == NPU_PB_NONE && c_tok)
        for (unsigned b = 0; b < 2; b++)
            npu_pb_put(&x->b, &s->ex, npu_enc_ldw(&in, b, NPU_MODE_HSW, x->p->scratch, 0, 1, 1), &in, 0);
    s->push_e2l = s->ex.n - 1;
    up->dstart = s->ex.n;
    npu_pb_copy(&x->b, &s->ex, up->C.insn + c_end, up->C.n - c_end);
    npu_pb_copy(&x->b, &s->ex, up->D.insn, up->D.n);
    if (d_push && (s->ex.n == up->dstart || npu_insn_op(&s->ex.insn[s->ex.n - 1]) != NPU_OP_DRAIN))
        npu_pb_put(&x->b, &s->ex, npu_enc_drain(&in, 1, npu_pb_obuf_half(&x->b, u), x->p->scratch, 2), &in, 0);
    if (d_pop && s->ex.n == up->dstart)
        npu_pb_put(&x->b, &s->ex, npu_enc_sync(&in, NPU_OP_SYNC_E), &in, 0);
    s->push_e2s = s->ex.n - 1;
}

/* Unit u's step and its waits (conv_emit.h). Every band's L pushes l2e (a SYNC_L when it is
 * empty) and its first group's C pops it; the second part L2 of unit 0's load, when separate, is
 * popped at C's c_split. Without FO: L(b) waits (e2l) for C(b-2), D(b) for the STORE of band
 * b-2 (s2e, the same tile). With FO: D(b) pops FO(b)'s l2e; the last group's C(b) pops the
 * STORE of band b-1 (s2e), and its e2l releases FO(b+1), or else L(b+2). Every band's last C
 * pushes e2l, every STORE s2e (dW: only the last: a pass's taps are stored once, the tile is
 * never reused). band_last[b]: the unit of band b's last group. */
static void unit_step(npu_cx_t *x, npu_cx_unit_t *up, npu_pb_step_t *st, const int *band_last, int U, int u,
                      int fo)
{
    npu_cx_unit_t *cu = &up[u];
    npu_pb_step_t *s = &st[u];
    int c_pop_s = fo && cu->last_grp && cu->band >= 1;
    int d_pop = fo ? cu->first_grp && cu->FO.n : cu->tile_wait;
    unit_ex(x, cu, u, s, cu->first_grp || cu->last_grp, d_pop, cu->S.n > 0);
    if (cu->first_grp)
        npu_pb_or_sync(&x->b, &cu->L, NPU_OP_SYNC_L);
    s->ld[0] = cu->L;
    s->ld[1] = cu->L2;
    s->ld[2] = cu->FO;
    s->st = cu->S;
    npu_prog_init(&cu->L);
    npu_prog_init(&cu->L2);
    npu_prog_init(&cu->FO);
    npu_prog_init(&cu->S);
    if (cu->first_grp)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 0, 0);
    if (s->ld[1].n)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 1, cu->c_split - 1);
    if (fo && d_pop)
        npu_pb_wait(&x->b, s, NPU_PB_L2E, 0, 2, cu->dstart);
    if (!fo && cu->first_grp && cu->band >= 2)
        npu_pb_wait(&x->b, s, NPU_PB_E2L, band_last[cu->band - 2], 0, 0);
    if (!fo && cu->tile_wait)
        npu_pb_wait(&x->b, s, NPU_PB_S2E, band_last[cu->band - 2], 0, cu->dstart);
    if (c_pop_s)
        npu_pb_wait(&x->b, s, NPU_PB_S2E, band_last[cu->band - 1], 0, 0);
    if (fo && cu->last_grp && cu->nx < U) { /* the next loads wait for this band's waves */
        if (up[cu->nx].FO.n)
            npu_pb_wait(&x->b, &st[cu->nx], NPU_PB_E2L, u, 2, 0);
        else if (cu->n2 < U)
            npu_pb_wait(&x->b, &st[cu->n2], NPU_PB_E2L, u, 0, 0);
    }
    if (s->st.n)
        npu_pb_wait(&x->b, s, NPU_PB_E2S, 0, 0, 0);
    s->free = (cu->last_grp ? 1u << NPU_PB_E2L : 0) |
              (s->st.n && (x->p->kernel != NPU_CONV_DW || u == U - 1) ? 1u << NPU_PB_S2E : 0);
}

/* Program order of unit u (conv_emit.h). Without FO: L(b+1) spread over C(b) (it pops C(b-1)'s
 * e2l), after L2 one for one with C's first instructions, all of it ahead of the pop at c_split:
 * as a block ahead of C, the in-order fetcher held C until the LOAD queue took the block's tail
 * (at medium, CONV3 dW: 1k cycles more before the first wave). With FO: [L(0), FO(0), L(1)]
 * first, then per band C, H(b+1) = FO(b+1), L(b+2), D, S. */
static void unit_order(npu_cx_t *x, const npu_cx_unit_t *up, const npu_pb_step_t *st, int U, int u, int fo,
                       npu_prog_t *out)
{
    const npu_cx_unit_t *cu = &up[u];
    const npu_pb_step_t *s = &st[u];
    const npu_prog_t *l2 = &s->ld[1];
    size_t c0 = 0;
    if (u == 0) {
        npu_pb_copy(&x->b, out, s->ld[0].insn, s->ld[0].n);
        if (fo)
            npu_pb_copy(&x->b, out, s->ld[2].insn, s->ld[2].n);
        if (fo && cu->nx < U)
            npu_pb_copy(&x->b, out, st[cu->nx].ld[0].insn, st[cu->nx].ld[0].n);
    }
    if (fo) {
        npu_pb_copy(&x->b, out, s->ex.insn, cu->dstart);
        if (cu->last_grp && cu->nx < U) {
            npu_pb_copy(&x->b, out, st[cu->nx].ld[2].insn, st[cu->nx].ld[2].n);
            if (cu->n2 < U)
                npu_pb_copy(&x->b, out, st[cu->n2].ld[0].insn, st[cu->n2].ld[0].n);
        }
    } else {
        const npu_prog_t *lt = cu->first_grp && cu->nx < U ? &st[cu->nx].ld[0] : NULL;
        for (size_t i = 0; i < l2->n; i++) {
            npu_pb_put(&x->b, out, 0, &l2->insn[i], 0);
            if (c0 + 1 < cu->c_split && c0 < cu->dstart)
                npu_pb_put(&x->b, out, 0, &s->ex.insn[c0++], 0);
        }
        npu_pb_spread(&x->b, out, lt ? lt->insn : NULL, lt ? lt->n : 0, s->ex.insn + c0, cu->dstart - c0);
    }
    npu_pb_copy(&x->b, out, s->ex.insn + cu->dstart, s->ex.n - cu->dstart);
    npu_pb_copy(&x->b, out, s->st.insn, s->st.n);
}

/* The units' steps, tokens and program order. Unit 0's second load part L2 stays a group of its
 * own (popped at c_split) without FO; else it joins L. */
static void assemble(npu_cx_t *x, npu_cx_unit_t *up, npu_prog_t *out)
{
    int U = x->p->units, fo = 0;
    npu_pb_step_t *st = npu_pb_steps(&x->b, U);
    int *band_last = calloc((size_t)U, sizeof *band_last); /* bands < units */
    if (!band_last)
        npu_pb_fail(&x->b, "out of memory");
    for (int u = 0; u < U && band_last; u++) {
        fo |= up[u].FO.n > 0;
        if (up[u].last_grp)
            band_last[up[u].band] = u;
    }
    for (int u = U - 1; u >= 0; u--) { /* the first units of the next two bands */
        up[u].nx = u + 1 < U && !up[u + 1].first_grp ? up[u + 1].nx : u + 1;
        up[u].n2 = up[u].nx < U ? up[up[u].nx].nx : U;
    }
    for (int u = 0; u < U && st && band_last; u++) {
        npu_cx_unit_t *cu = &up[u];
        if (!(cu->L2.n && !fo && cu->c_split > 1)) {
            npu_pb_copy(&x->b, &cu->L, cu->L2.insn, cu->L2.n);
            cu->L2.n = 0;
        }
        npu_pb_context(&x->b, "unit %d", u);
        unit_step(x, up, st, band_last, U, u, fo);
    }
    if (st && !x->b.err)
        npu_pb_stitch(&x->b, st, U);
    npu_pb_context(&x->b, "program order");
    for (int u = 0; u < U && st && !x->b.err; u++)
        unit_order(x, up, st, U, u, fo, out);
    npu_pb_steps_free(st, U);
    free(band_last);
}

static void unit_free(npu_cx_unit_t *u)
{
    npu_prog_free(&u->L);
    npu_prog_free(&u->L2);
    npu_prog_free(&u->FO);
    npu_prog_free(&u->C);
    npu_prog_free(&u->D);
    npu_prog_free(&u->S);
}

int npu_conv_emit(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a,
                  npu_prog_t *out, char *msg, size_t n)
{
    return npu_cx_emit(cfg, p, a, NULL, NULL, out, msg, n);
}

int npu_cx_emit(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a, npu_cx_hook_t hook,
                void *ctx, npu_prog_t *out, char *msg, size_t n)
{
    npu_cx_t x;
    npu_cx_unit_t *up;
    memset(&x, 0, sizeof x);
    npu_pb_init(&x.b, cfg);
    x.cfg = cfg;
    x.p = p;
    x.a = a;
    x.B = (unsigned)npu_cfg_word(cfg);
    x.S = cfg->s;
    x.L = npu_cfg_f(cfg);
    up = calloc((size_t)p->units, sizeof *up);
    x.cov = calloc(2u * (size_t)cfg->obuf_rows, 1);
    x.tap_valid = calloc((size_t)p->T, 1);
    x.tap_c = malloc(sizeof *x.tap_c * (size_t)p->T);
    x.pass_of = calloc((size_t)(p->T * p->cw), sizeof *x.pass_of);
    x.row_of = calloc((size_t)(p->T * p->cw), sizeof *x.row_of);
    if (!up || !x.cov || !x.tap_valid || !x.tap_c || !x.pass_of || !x.row_of) {
        npu_pb_fail(&x.b, "out of memory");
    } else {
        for (int t = 0; t < p->T; t++) {
            x.tap_valid[t] = (uint8_t)(p->kernel == NPU_CONV_DW ? npu_cx_dw_tap_valid(p, t) : 1);
            x.tap_c[t] = SIZE_MAX;
        }
        if (p->kernel == NPU_CONV_DW)
            npu_conv_dw_layout(p, cfg->obuf_rows, x.pass_of, x.row_of);
        for (int u = 0; u < p->units && !x.b.err; u++) {
            npu_conv_unit_t un;
            npu_conv_unit_at(p, u, &un);
            npu_pb_context(&x.b, "unit %d", u);
            npu_prog_init(&up[u].L);
            npu_prog_init(&up[u].L2);
            npu_prog_init(&up[u].FO);
            npu_prog_init(&up[u].C);
            npu_prog_init(&up[u].D);
            npu_prog_init(&up[u].S);
            up[u].first_grp = p->kernel == NPU_CONV_DW || un.grp == 0;
            up[u].last_grp = p->kernel == NPU_CONV_DW || un.grp == p->ngroups - 1;
            up[u].band = npu_cx_band(&x, &un);
            up[u].tile_wait = p->kernel != NPU_CONV_DW && !p->no_out && un.grp == 0 && up[u].band >= 2;
            if (p->kernel == NPU_CONV_FWD)
                npu_cx_unit_fwd(&x, &un, &up[u]);
            else if (p->kernel == NPU_CONV_DW)
                npu_cx_unit_dw(&x, &un, &up[u]);
            else if (p->dataflow == NPU_CONV_ZEROPAD)
                npu_cx_unit_dx_zeropad(&x, &un, &up[u]);
            else
                npu_cx_unit_dx_ecoflow(&x, &un, &up[u]);
            if (hook)
                hook(&x, &un, &up[u], ctx);
        }
        if (!x.b.err)
            assemble(&x, up, out);
    }
    if (up)
        for (int u = 0; u < p->units; u++)
            unit_free(&up[u]);
    free(up);
    free(x.cov);
    free(x.tap_valid);
    free(x.tap_c);
    free(x.pass_of);
    free(x.row_of);
    return npu_pb_finish(&x.b, msg, n);
}
