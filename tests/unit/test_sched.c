/* test_sched.c - the tensor-granular SPM scheduler (model/sched.h): Belady against the optimum
 * by exhaustive search, forward-backward reuse of an MLP iteration, look-ahead offload (brief
 * 003 section 6 check 11), latency-aware prefetch (check 10), clean drops, refusals. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "model/sched.h"

typedef struct prob {
    npu_sched_tensor_t t[32];
    npu_sched_step_t s[64];
    npu_sched_problem_t p;
} prob_t;

static void prob_init(prob_t *b, uint64_t spm, double bw, uint64_t lat)
{
    memset(b, 0, sizeof *b);
    b->p = (npu_sched_problem_t){0, 0, b->t, b->s, spm, bw, lat, 1, 1};
}

static int tensor(prob_t *b, const char *name, uint64_t bytes, int in_dram, int keep_out)
{
    b->t[b->p.n_tensors] = (npu_sched_tensor_t){name, bytes, in_dram, keep_out, 0};
    return b->p.n_tensors++;
}

/* A step: inputs, then -1, then outputs, then -2. */
static void step(prob_t *b, const char *name, uint64_t cycles, ...)
{
    npu_sched_step_t *s = &b->s[b->p.n_steps++];
    va_list ap;
    int t, out = 0;
    s->name = name;
    s->cycles = cycles;
    va_start(ap, cycles);
    while ((t = va_arg(ap, int)) != -2) {
        if (t == -1)
            out = 1;
        else if (out)
            s->out[s->n_out++] = t;
        else
            s->in[s->n_in++] = t;
    }
    va_end(ap);
}

static npu_sched_result_t run(const prob_t *b)
{
    npu_sched_result_t r;
    cr_assert_eq(npu_sched_run(&b->p, &r), 0, "%s", r.why);
    cr_assert(r.ok, "%s", r.why);
    return r;
}

/* The fewest misses of a read-only trace of unit tensors with `cap` slots: exhaustive search
 * over every eviction choice (the optimum Belady must reach with equal sizes). */
static int opt_misses(const int *trace, int n, int i, unsigned held, int cap)
{
    int best = 1 << 30;
    if (i == n)
        return 0;
    if (held & (1u << trace[i]))
        return opt_misses(trace, n, i + 1, held, cap);
    if (__builtin_popcount(held) < cap)
        return 1 + opt_misses(trace, n, i + 1, held | 1u << trace[i], cap);
    for (int v = 0; v < 5; v++)
        if (held & (1u << v)) {
            int m = 1 + opt_misses(trace, n, i + 1, (held & ~(1u << v)) | 1u << trace[i], cap);
            best = m < best ? m : best;
        }
    return best;
}

Test(sched, belady_is_optimal_on_unit_read_only_traces)
{
    uint64_t seed = 11;
    for (int trial = 0; trial < 200; trial++) {
        prob_t b;
        int trace[12], n = 12, cap = 2 + trial % 3;
        prob_init(&b, (uint64_t)cap * 16, 4, 0);
        for (int t = 0; t < 5; t++)
            tensor(&b, "t", 16, 1, 0);
        for (int i = 0; i < n; i++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            trace[i] = (int)(seed % 5);
            step(&b, "r", 1, trace[i], -2);
        }
        npu_sched_result_t r = run(&b);
        cr_assert_eq(r.in_bytes, 16u * (uint64_t)opt_misses(trace, n, 0, 0, cap), "trial %d", trial);
        cr_assert_eq(r.out_bytes, 0u, "read-only tensors are dropped, never written");
        npu_sched_free(&r);
    }
}

/* A 3-layer MLP iteration: forward f1..f3, the loss gradient, backward b3..b1 (each dX and dW),
 * every layer's activation Y 100 bytes, weights W 50, gradients as large. Returns the step
 * count; ids in y[] and w[]. */
static void mlp(prob_t *b, uint64_t spm, int *y, int *w)
{
    int x0, dy[4], dw[4];
    prob_init(b, spm, 8, 10);
    x0 = tensor(b, "X0", 100, 1, 0);
    for (int i = 1; i <= 3; i++) {
        w[i] = tensor(b, "W", 50, 1, 0);
        y[i] = tensor(b, "Y", 100, 0, 0);
        dw[i] = tensor(b, "dW", 50, 0, 1);
        dy[i] = tensor(b, "dY", 100, 0, 0);
    }
    y[0] = x0;
    step(b, "f1", 500, x0, w[1], -1, y[1], -2);
    step(b, "f2", 500, y[1], w[2], -1, y[2], -2);
    step(b, "f3", 500, y[2], w[3], -1, y[3], -2);
    step(b, "loss", 50, y[3], -1, dy[3], -2);
    step(b, "b3", 1000, dy[3], y[2], w[3], -1, dy[2], dw[3], -2);
    step(b, "b2", 1000, dy[2], y[1], w[2], -1, dy[1], dw[2], -2);
    step(b, "b1", 1000, dy[1], x0, w[1], -1, dw[1], -2);
}

Test(sched, forward_backward_reuse_keeps_the_layers_nearest_the_loss)
{
    prob_t b;
    int y[4], w[4];
    /* room for every activation and weight (and the step's own temporaries): none re-fetched */
    mlp(&b, 1000, y, w);
    npu_sched_result_t r = run(&b);
    for (int i = 1; i <= 2; i++)
        cr_assert_eq(r.tensor[y[i]].in_bytes + r.tensor[y[i]].out_bytes, 0u, "Y%d moved", i);
    cr_assert_eq(r.tensor[w[1]].loads, 1);
    npu_sched_free(&r);
    /* less room: Y1 (farthest from the loss) goes out and comes back, Y2 stays */
    mlp(&b, 560, y, w);
    r = run(&b);
    cr_assert_eq(r.tensor[y[2]].in_bytes, 0u, "Y2, nearest the loss, was re-fetched");
    cr_assert(r.tensor[y[1]].in_bytes + r.tensor[y[0]].in_bytes > 100u,
              "neither Y1 nor X0 was re-fetched at 560 bytes");
    for (int i = 0; i < b.p.n_tensors; i++) /* what goes out dirty comes back once */
        cr_assert_leq(r.tensor[i].stores, 1 + b.t[i].keep_out);
    npu_sched_free(&r);
}

/* Brief 003 section 2.5, Fig. 4.2: X1 (written by step 0) is read by 2f and again only by 1b; at
 * 3f the SPM needs its space. With look-ahead it is written out during 2f (no stall at 3f);
 * without, when 3f needs the room: a stall of one transfer (latency + bytes / bw). */
static void fig42(prob_t *b, int lookahead, int *x1)
{
    int x0, x2, x3, x4, d;
    prob_init(b, 100, 4, 20);
    b->p.lookahead = lookahead;
    x0 = tensor(b, "X0", 40, 1, 0);
    *x1 = tensor(b, "X1", 40, 0, 0);
    x2 = tensor(b, "X2", 40, 0, 0);
    x3 = tensor(b, "X3", 40, 0, 0);
    x4 = tensor(b, "X4", 40, 0, 0);
    d = tensor(b, "dX1", 20, 0, 1);
    step(b, "0f", 100, x0, -1, *x1, -2);
    step(b, "2f", 100, *x1, -1, x2, -2);
    step(b, "3f", 100, x2, -1, x3, -2);
    step(b, "3b", 100, x3, -1, x4, -2);
    step(b, "1b", 100, x4, *x1, -1, d, -2);
}

Test(sched, lookahead_offload_hides_the_write)
{
    prob_t b;
    int x1;
    fig42(&b, 1, &x1);
    npu_sched_result_t r = run(&b);
    cr_assert_eq(r.tensor[x1].stores, 1);
    cr_assert_eq(r.step[2].stall, 0u, "look-ahead: 3f waited %llu cycles",
                 (unsigned long long)r.step[2].stall);
    npu_sched_free(&r);
    fig42(&b, 0, &x1);
    r = run(&b);
    cr_assert_eq(r.tensor[x1].stores, 1);
    cr_assert_eq(r.step[2].stall, 20u + 40u / 4u, "write-back at eviction: 3f waits the store");
    npu_sched_free(&r);
}

Test(sched, prefetch_distance_and_stall)
{
    prob_t b;
    int a, c, o1, o2;
    prob_init(&b, 1000, 2, 10);
    a = tensor(&b, "A", 100, 1, 0);
    c = tensor(&b, "C", 200, 1, 0);
    o1 = tensor(&b, "B", 10, 0, 1);
    o2 = tensor(&b, "D", 10, 0, 1);
    step(&b, "heavy", 60, a, -1, o1, -2);
    step(&b, "heavy2", 60, a, -1, o1, -2);
    step(&b, "light", 5, c, -1, o2, -2);
    /* C's load: 10 + 200 / 2 = 110 cycles; one heavy step (60) is not enough, two are */
    cr_assert_eq(npu_sched_prefetch_k(&b.p, 2, 200), 2);
    cr_assert_eq(npu_sched_prefetch_k(&b.p, 1, 200), 1, "only one earlier step: load at step 0");
    npu_sched_result_t r = run(&b);
    cr_assert_eq(r.step[2].stall, 0u, "prefetched: light waited %llu",
                 (unsigned long long)r.step[2].stall);
    cr_assert_eq(r.step[2].prefetch_k, 2);
    npu_sched_free(&r);
    b.p.prefetch = 0;
    r = run(&b);
    cr_assert_eq(r.step[2].stall, 110u, "on demand: the whole load");
    npu_sched_free(&r);
}

Test(sched, clean_tensors_are_dropped_not_written)
{
    prob_t b;
    int w, big, o;
    prob_init(&b, 150, 8, 0);
    w = tensor(&b, "W", 100, 1, 0);
    big = tensor(&b, "T", 100, 1, 0);
    o = tensor(&b, "O", 10, 0, 1);
    step(&b, "use W", 10, w, -1, o, -2);
    step(&b, "use T", 10, big, -1, o, -2);
    step(&b, "use W again", 10, w, -1, o, -2);
    npu_sched_result_t r = run(&b);
    cr_assert_eq(r.tensor[w].loads, 2);
    cr_assert_eq(r.tensor[w].drops, 1);
    cr_assert_eq(r.tensor[w].out_bytes, 0u);
    cr_assert_eq(r.in_bytes, 300u);
    cr_assert_eq(r.out_bytes, 10u, "only the result, once, at its last write");
    npu_sched_free(&r);
}

Test(sched, refusals)
{
    prob_t b;
    npu_sched_result_t r;
    int x, y;
    prob_init(&b, 100, 8, 0);
    x = tensor(&b, "X", 80, 1, 0);
    y = tensor(&b, "Y", 80, 0, 1);
    step(&b, "too big", 10, x, -1, y, -2);
    cr_assert_eq(npu_sched_run(&b.p, &r), 0);
    cr_assert_eq(r.ok, 0);
    cr_assert(strstr(r.why, "too big: its own inputs and outputs exceed the SPM by 60") != NULL,
              "%s", r.why);
    npu_sched_free(&r);
    b.s[0].in[0] = 7; /* no such tensor */
    cr_assert_eq(npu_sched_run(&b.p, &r), -1);
    npu_sched_free(&r);
    prob_init(&b, 1000, 8, 0);
    x = tensor(&b, "X", 80, 0, 0); /* never written, not in DRAM */
    y = tensor(&b, "Y", 80, 0, 1);
    step(&b, "reads X", 10, x, -1, y, -2);
    cr_assert_eq(npu_sched_run(&b.p, &r), 0);
    cr_assert_eq(r.ok, 0);
    cr_assert(strstr(r.why, "before any step writes it") != NULL, "%s", r.why);
    npu_sched_free(&r);
}

/* DRAM-side accesses (a transposed GEMM operand, the host's logits): a dirty resident tensor read
 * from DRAM is written back first and stays resident (no reload at its next SPM read); a tensor
 * written in DRAM frees its resident copy, which the next SPM read loads again. Room in the SPM
 * (spm_bytes) is what counts against the capacity, the DRAM bytes what is moved. */
Test(sched, dram_side_accesses)
{
    prob_t b;
    prob_init(&b, 1000, 8, 10);
    int x = tensor(&b, "X", 100, 1, 0), a = tensor(&b, "A", 300, 0, 0);
    b.t[a].spm_bytes = 400;
    step(&b, "make A", 10, x, -1, a, -2);
    step(&b, "read A", 10, a, -1, -2);
    step(&b, "read A in DRAM", 10, -1, -2);
    b.s[2].dram_in[b.s[2].n_dram_in++] = a;
    step(&b, "read A again", 10, a, -1, -2);
    step(&b, "write A in DRAM", 10, -1, -2);
    b.s[4].dram_out[b.s[4].n_dram_out++] = a;
    step(&b, "read A last", 10, a, -1, -2);
    npu_sched_result_t r = run(&b);
    int keep = 0, frees = 0;
    for (int i = 0; i < r.n_ev; i++) {
        const npu_sched_event_t *e = &r.ev[i];
        if (e->tensor != a)
            continue;
        keep += e->kind == NPU_SCHED_STORE && e->keep && e->step == 2;
        frees += e->kind == NPU_SCHED_FREE && e->step == 4;
    }
    cr_assert_eq(keep, 1, "the write-back before the DRAM read, the tensor kept");
    cr_assert_eq(frees, 1, "the stale copy freed when the DRAM copy is written");
    cr_assert_eq(r.tensor[a].out_bytes, 300u);
    cr_assert_eq(r.tensor[a].loads, 1, "loaded again only after the DRAM write");
    cr_assert_eq(r.tensor[a].in_bytes, 300u);
    npu_sched_free(&r);
    b.p.spm_bytes = 450; /* X (100) and A's room (400) do not fit together */
    cr_assert_eq(npu_sched_run(&b.p, &r), 0);
    cr_assert_eq(r.ok, 0);
    cr_assert_eq(r.bad_step, 0, "the step that cannot run: %s", r.why);
    npu_sched_free(&r);
}
