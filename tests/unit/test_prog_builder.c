/* test_prog_builder.c - the program builder (sw/prog/prog_builder.h): the first failure with its
 * context, checked append, DRAM address fields, double buffering, and the step graph: waits to
 * token flags (dropping implied waits), free pushes, links, program order, the spread of loads. */
#include <criterion/criterion.h>
#include <string.h>

#include "prog/prog_builder.h"
#include "test_cfgs.h"

static npu_insn_t sync_of(unsigned op)
{
    npu_insn_t in;
    cr_assert_eq(npu_enc_sync(&in, op), 0);
    return in;
}

/* Appends n SYNCs of op to l (placeholders of that queue). */
static void syncs(npu_pb_t *b, npu_prog_t *l, unsigned op, int n)
{
    for (int i = 0; i < n; i++) {
        npu_insn_t in = sync_of(op);
        npu_pb_put(b, l, 0, &in, 0);
    }
}

Test(prog_builder, first_failure_keeps_its_context)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t l;
    npu_insn_t in = sync_of(NPU_OP_SYNC_E);
    char msg[128];
    npu_prog_init(&l);
    npu_pb_init(&b, &c);
    npu_pb_context(&b, "op %d (dx m%d)", 7, 1);
    cr_assert_eq(npu_pb_put(&b, &l, 0, &in, NPU_TOK_POP_PREV), 0u);
    cr_assert_eq(npu_insn_tokens(&l.insn[0]), NPU_TOK_POP_PREV);
    npu_pb_put(&b, &l, -1, &in, 0); /* an encoder that rejected a field */
    npu_pb_context(&b, "later");
    npu_pb_fail(&b, "dropped");
    cr_assert_eq(l.n, 1u, "a rejected instruction is not appended");
    cr_assert_eq(npu_pb_finish(&b, msg, sizeof msg), -1);
    cr_assert_str_eq(msg, "op 7 (dx m1): a field does not fit its encoding");
    npu_pb_init(&b, &c);
    cr_assert_eq(npu_pb_finish(&b, msg, sizeof msg), 0);
    cr_assert_str_eq(msg, "");
    cr_assert_eq(npu_pb_finish(&b, NULL, 0), 0);
    npu_prog_free(&l);
}

Test(prog_builder, dram_field_range_and_alignment)
{
    npu_cfg_t c = test_cfg(2); /* B = 8 bytes */
    npu_pb_t b;
    npu_pb_init(&b, &c);
    cr_assert_eq(npu_pb_dram(&b, 0x1000), 0x1000u);
    cr_assert_eq(npu_pb_dram(&b, 0xFFFFFFF8ull), 0xFFFFFFF8u);
    cr_assert_eq(b.err, 0);
    cr_assert_eq(npu_pb_dram(&b, 0x100000000ull), 0u);
    cr_assert_eq(b.err, 1);
    npu_pb_init(&b, &c);
    cr_assert_eq(npu_pb_dram(&b, 0x1006), 0x1006u); /* any element (2-byte) address */
    cr_assert_eq(b.err, 0);
    cr_assert_eq(npu_pb_dram(&b, 0x1005), 0u);
    cr_assert(strstr(b.why, "odd") != NULL, "%s", b.why);
}

Test(prog_builder, banks_and_obuf_halves_alternate)
{
    npu_cfg_t c = test_cfg(8);
    npu_pb_t b;
    npu_pb_init(&b, &c);
    cr_assert_eq(npu_pb_bank(&b), 0u);
    cr_assert_eq(npu_pb_bank(&b), 1u);
    cr_assert_eq(npu_pb_bank(&b), 0u);
    cr_assert_eq(npu_pb_obuf_half(&b, 0), 0u);
    cr_assert_eq(npu_pb_obuf_half(&b, 3), (unsigned)c.obuf_rows);
}

Test(prog_builder, first_and_last_op)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t l;
    npu_insn_t in;
    npu_prog_init(&l);
    npu_pb_init(&b, &c);
    syncs(&b, &l, NPU_OP_SYNC_E, 1);
    npu_pb_put(&b, &l, npu_enc_drain(&in, 1, 0, 0, 2), &in, 0);
    npu_pb_put(&b, &l, npu_enc_wave(&in, 0, NPU_MODE_FW, 0, 1, 0, 1, 1, 1, 0), &in, 0);
    npu_pb_put(&b, &l, npu_enc_drain(&in, 1, 0, 0, 2), &in, 0);
    cr_assert_eq(npu_pb_first_op(&l, NPU_PB_OP(NPU_OP_DRAIN)), 1u);
    cr_assert_eq(npu_pb_last_op(&l, NPU_PB_OP(NPU_OP_DRAIN)), 3u);
    cr_assert_eq(npu_pb_last_op(&l, NPU_PB_OP(NPU_OP_LDW) | NPU_PB_OP(NPU_OP_WAVE)), 2u);
    cr_assert_eq(npu_pb_first_op(&l, NPU_PB_OP(NPU_OP_LDW)), NPU_PB_NONE);
    npu_prog_free(&l);
}

/* n steps of one LOAD-queue, nex EXEC and one STORE instruction each (SYNCs), no waits. */
static npu_pb_step_t *bare_steps(npu_pb_t *b, int n, int nex)
{
    npu_pb_step_t *s = npu_pb_steps(b, n);
    cr_assert_not_null(s);
    for (int i = 0; i < n; i++) {
        syncs(b, &s[i].ld[0], NPU_OP_SYNC_L, 1);
        syncs(b, &s[i].ex, NPU_OP_SYNC_E, nex);
        syncs(b, &s[i].st, NPU_OP_SYNC_S, 1);
    }
    return s;
}

/* n steps of two EXEC instructions; step i's loads wait for step i-1's EXEC, its EXEC for its
 * loads, its second EXEC instruction for the STORE of step i-1, its STORE for its EXEC. */
static void chain_waits(npu_pb_t *b, npu_pb_step_t *s, int i)
{
    s->push_e2l = 0;
    s->push_e2s = 1;
    npu_pb_wait(b, s, NPU_PB_L2E, 0, 0, 0);
    if (i > 0) {
        npu_pb_wait(b, s, NPU_PB_E2L, i - 1, 0, 0);
        npu_pb_wait(b, s, NPU_PB_S2E, i - 1, 0, 1);
    }
    npu_pb_wait(b, s, NPU_PB_E2S, 0, 0, 0);
}

static npu_pb_step_t *chain(npu_pb_t *b, int n)
{
    npu_pb_step_t *s = bare_steps(b, n, 2);
    for (int i = 0; i < n; i++)
        chain_waits(b, &s[i], i);
    return s;
}

Test(prog_builder, stitch_sets_each_token_on_its_instruction)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_pb_init(&b, &c);
    npu_pb_step_t *s = chain(&b, 3);
    npu_pb_stitch(&b, s, 3);
    cr_assert_eq(b.err, 0, "%s", b.why);
    cr_assert_eq(npu_insn_tokens(&s[0].ld[0].insn[0]), NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_insn_tokens(&s[1].ld[0].insn[0]), NPU_TOK_PUSH_NEXT | NPU_TOK_POP_NEXT);
    cr_assert_eq(npu_insn_tokens(&s[0].ex.insn[0]), NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_insn_tokens(&s[2].ex.insn[0]), NPU_TOK_POP_PREV, "no one waits for step 2's EXEC");
    cr_assert_eq(npu_insn_tokens(&s[1].ex.insn[1]), NPU_TOK_POP_NEXT | NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_insn_tokens(&s[0].st.insn[0]), NPU_TOK_POP_PREV | NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_insn_tokens(&s[2].st.insn[0]), NPU_TOK_POP_PREV);
    npu_pb_steps_free(s, 3);
}

Test(prog_builder, implied_waits_are_dropped_and_free_pushes_made)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_pb_init(&b, &c);
    npu_pb_step_t *s = bare_steps(&b, 4, 1);
    npu_pb_wait(&b, &s[2], NPU_PB_E2L, 1, 0, 0);
    npu_pb_wait(&b, &s[3], NPU_PB_E2L, 0, 0, 0); /* implied: step 1's EXEC completed after step 0's */
    s[3].free = 1u << NPU_PB_E2L | 1u << NPU_PB_S2E;
    npu_pb_stitch(&b, s, 4);
    cr_assert_eq(b.err, 0, "%s", b.why);
    cr_assert_eq(npu_insn_tokens(&s[2].ld[0].insn[0]), NPU_TOK_POP_NEXT);
    cr_assert_eq(npu_insn_tokens(&s[3].ld[0].insn[0]), 0u);
    cr_assert_eq(npu_insn_tokens(&s[0].ex.insn[0]), 0u);
    cr_assert_eq(npu_insn_tokens(&s[1].ex.insn[0]), NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_insn_tokens(&s[3].ex.insn[0]), NPU_TOK_PUSH_PREV);
    cr_assert_eq(npu_insn_tokens(&s[3].st.insn[0]), NPU_TOK_PUSH_PREV);
    npu_pb_steps_free(s, 4);
}

Test(prog_builder, a_token_without_an_instruction_fails)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_pb_init(&b, &c);
    npu_pb_step_t *s = npu_pb_steps(&b, 1);
    syncs(&b, &s[0].ex, NPU_OP_SYNC_E, 1);
    npu_pb_wait(&b, &s[0], NPU_PB_E2S, 0, 0, 0); /* no STORE to pop it */
    npu_pb_stitch(&b, s, 1);
    cr_assert_eq(b.err, 1);
    cr_assert(strstr(b.why, "step 0") && strstr(b.why, "e2s"), "%s", b.why);
    npu_pb_init(&b, &c);
    npu_pb_wait(&b, &s[0], NPU_PB_E2L, 0, 0, 0); /* e2l from the step itself */
    npu_pb_stitch(&b, s, 1);
    cr_assert_eq(b.err, 1);
    npu_pb_steps_free(s, 1);
}

Test(prog_builder, link_sets_a_local_token)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t d, st;
    npu_prog_init(&d);
    npu_prog_init(&st);
    npu_pb_init(&b, &c);
    syncs(&b, &d, NPU_OP_SYNC_E, 2);
    syncs(&b, &st, NPU_OP_SYNC_S, 2);
    npu_pb_link(&b, NPU_PB_E2S, &d, 1, &st, 0);
    cr_assert_eq(npu_insn_tokens(&d.insn[1]), NPU_TOK_PUSH_NEXT);
    cr_assert_eq(npu_insn_tokens(&st.insn[0]), NPU_TOK_POP_PREV);
    cr_assert_eq(npu_insn_tokens(&d.insn[0]) | npu_insn_tokens(&st.insn[1]), 0u);
    npu_prog_free(&d);
    npu_prog_free(&st);
}

/* The opcode sequence of a program as a string: L, E, S per instruction's queue. */
static void queues(const npu_prog_t *p, char *buf)
{
    for (size_t i = 0; i < p->n; i++)
        buf[i] = npu_op_queue(npu_insn_op(&p->insn[i]));
    buf[p->n] = '\0';
}

Test(prog_builder, order_runs_loads_ahead)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t out;
    char q[64];
    npu_pb_init(&b, &c);
    npu_pb_step_t *s = chain(&b, 3);
    npu_prog_init(&out);
    npu_pb_order(&b, s, 3, 1, 0, &out); /* L0 | L1 E0 E0 S0 | L2 E1 E1 S1 | E2 E2 S2 */
    queues(&out, q);
    cr_assert_str_eq(q, "LLEESLEESEES");
    out.n = 0;
    npu_pb_order(&b, s, 3, 2, 1, &out); /* L0 L1 | E0 E0 S0 L2 | E1 E1 S1 | E2 E2 S2 */
    queues(&out, q);
    cr_assert_str_eq(q, "LLEESLEESEES");
    out.n = 0;
    npu_pb_order(&b, s, 3, 3, 0, &out); /* every load first */
    queues(&out, q);
    cr_assert_str_eq(q, "LLLEESEESEES");
    npu_prog_free(&out);
    npu_pb_steps_free(s, 3);
}

Test(prog_builder, spread_interleaves_loads_over_compute)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t l, e, out;
    char q[64];
    npu_prog_init(&l);
    npu_prog_init(&e);
    npu_prog_init(&out);
    npu_pb_init(&b, &c);
    syncs(&b, &l, NPU_OP_SYNC_L, 2);
    syncs(&b, &e, NPU_OP_SYNC_E, 9);
    npu_pb_spread(&b, &out, l.insn, l.n, e.insn, e.n); /* k = 9 / 4 = 2 */
    queues(&out, q);
    cr_assert_str_eq(q, "LEELEEEEEEE");
    out.n = 0;
    npu_pb_spread(&b, &out, NULL, 0, e.insn, 3);
    queues(&out, q);
    cr_assert_str_eq(q, "EEE");
    npu_prog_free(&l);
    npu_prog_free(&e);
    npu_prog_free(&out);
}

Test(prog_builder, or_sync_fills_only_an_empty_group)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t l;
    npu_prog_init(&l);
    npu_pb_init(&b, &c);
    npu_pb_or_sync(&b, &l, NPU_OP_SYNC_L);
    npu_pb_or_sync(&b, &l, NPU_OP_SYNC_L);
    cr_assert_eq(l.n, 1u);
    cr_assert_eq(npu_insn_op(&l.insn[0]), (unsigned)NPU_OP_SYNC_L);
    npu_prog_free(&l);
}

/* The stream gives the program of the whole graph, token for token, with a ring of span + ahead
 * + 1 steps; a wait further back than the span fails. */
Test(prog_builder, stream_equals_graph)
{
    npu_cfg_t c = test_cfg(2);
    npu_pb_t b;
    npu_prog_t g, out;
    npu_pb_stream_t st;
    npu_prog_init(&g);
    npu_prog_init(&out);
    for (int after = 0; after < 2; after++)
        for (long ahead = 0; ahead < 4; ahead++) {
            npu_pb_init(&b, &c);
            npu_pb_step_t *s = chain(&b, 7);
            npu_pb_stitch(&b, s, 7);
            g.n = out.n = 0;
            npu_pb_order(&b, s, 7, ahead, after, &g);
            npu_pb_steps_free(s, 7);
            cr_assert_eq(npu_pb_stream_init(&b, &st, 1, ahead, after, &out), 0);
            for (int i = 0; i < 7; i++) {
                npu_pb_step_t *x = npu_pb_stream_step(&st);
                syncs(&b, &x->ld[0], NPU_OP_SYNC_L, 1);
                syncs(&b, &x->ex, NPU_OP_SYNC_E, 2);
                syncs(&b, &x->st, NPU_OP_SYNC_S, 1);
                chain_waits(&b, x, i);
                npu_pb_stream_commit(&b, &st);
            }
            cr_assert_eq(npu_pb_stream_end(&b, &st), 0, "%s", b.why);
            cr_assert_eq(out.n, g.n);
            cr_assert(!memcmp(out.insn, g.insn, g.n * sizeof *g.insn), "ahead %ld after %d", ahead, after);
        }
    npu_pb_init(&b, &c);
    out.n = 0;
    cr_assert_eq(npu_pb_stream_init(&b, &st, 1, 1, 0, &out), 0);
    for (int i = 0; i < 4; i++) {
        npu_pb_step_t *x = npu_pb_stream_step(&st);
        syncs(&b, &x->ld[0], NPU_OP_SYNC_L, 1);
        syncs(&b, &x->ex, NPU_OP_SYNC_E, 1);
        if (i == 3)
            npu_pb_wait(&b, x, NPU_PB_E2L, 0, 0, 0);
        npu_pb_stream_commit(&b, &st);
    }
    cr_assert_eq(npu_pb_stream_end(&b, &st), -1);
    cr_assert(strstr(b.why, "further back") != NULL, "%s", b.why);
    npu_prog_free(&g);
    npu_prog_free(&out);
}
