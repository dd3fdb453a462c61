/*
 * prog_builder.h - the one program builder every emitter (GEMM, convolution, training) builds
 * its programs with (docs/compiler.md "The program builder").
 *
 * It provides:
 *   - the first failure with its context: an emitter names what it is emitting (npu_pb_context,
 *     e.g. "op 12 (dx m0 n1 k0)"); the first failure is kept as "<context>: <reason>", later
 *     ones are dropped, so an emitter reports one precise error instead of a wrong program;
 *   - the checked append of an encoded instruction (the encoder's return code, token flags);
 *   - DRAM addresses: a byte address to the 32-bit field, checked for range and 2-byte alignment;
 *   - double buffering: the weight bank of the next stationary tile (LDW/WAVE pairs alternate
 *     banks so the next tile loads behind the current waves) and the OBUF half of a step;
 *   - the token stitching of a STEP GRAPH: an emitter builds its program as steps, each with
 *     its LOAD-queue groups, EXEC-queue and STORE-queue instructions and what it waits for;
 *     npu_pb_stitch turns the waits into push/pop flags on the four channels (docs/isa.md §3),
 *     npu_pb_order (or the emitter with npu_pb_copy / npu_pb_spread) interleaves the queues
 *     into program order.
 *
 * Token discipline of the step graph. A wait names the consumer (this step's instruction or load
 * group) and the producer (a step's group); the producer pushes on its push instruction, the
 * consumer pops on its instruction. On e2l and s2e a wait for a step at or before the last step
 * this channel already waited for is dropped: the channel's pushes complete in order, so the
 * later wait implies it. Pushes nobody waits for are made only on request (npu_pb_step_t.free):
 * they keep the counters of programs whose buffers cycle at a fixed distance balanced by
 * position (GEMM: every chunk frees its input buffers).
 */
#ifndef NPU_PROG_BUILDER_H
#define NPU_PROG_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "hw/isa.h"
#include "prog/prog.h"
#include "hw/npu_cfg.h"

typedef struct npu_pb {
    const npu_cfg_t *cfg;
    uint64_t B;       /* beat bytes */
    unsigned bank;    /* weight bank of the next stationary tile */
    int err;          /* a failure was recorded: the program is not valid */
    char why[256];    /* the first failure, "<context>: <reason>" */
    char ctx[96];     /* what is being emitted (npu_pb_context) */
} npu_pb_t;

void npu_pb_init(npu_pb_t *b, const npu_cfg_t *cfg);
/* Names what the emitter emits from now on (printf format; "" clears): the prefix of failures. */
void npu_pb_context(npu_pb_t *b, const char *fmt, ...);
/* Records a failure (printf format) unless one is recorded already. */
void npu_pb_fail(npu_pb_t *b, const char *fmt, ...);
/* The emission's result: 0, or -1 with the first failure in msg ("" on success; msg may be NULL
 * or n 0). */
int npu_pb_finish(const npu_pb_t *b, char *msg, size_t n);

/* Appends *in (encoded with return code rc; on rc != 0 the append fails the emission) with the
 * token flags tok ORed in to l. Returns its index in l. */
size_t npu_pb_put(npu_pb_t *b, npu_prog_t *l, int rc, const npu_insn_t *in, unsigned tok);
/* A vector operation with the VSET registers it reads (docs/isa.md "VEC"). */
typedef struct npu_vec_op {
    unsigned vop, wide, rows, len, shift;
    uint32_t alpha, beta;
    unsigned a_addr, a_stride, b_addr, b_stride, d_addr, d_stride;
} npu_vec_op_t;
/* Appends VSET (v's registers) and VEC (v's operation) to l; tok_set on the VSET (a pop waits
 * before the registers change), tok on the VEC. Returns the VEC's index. */
size_t npu_pb_vec(npu_pb_t *b, npu_prog_t *l, const npu_vec_op_t *v, unsigned tok_set, unsigned tok);
/* Appends src[0..n) to l as they are. */
void npu_pb_copy(npu_pb_t *b, npu_prog_t *l, const npu_insn_t *src, size_t n);
/* Appends a token-only SYNC of op's queue (NPU_OP_SYNC_L/E/S) to l when l is empty, so that a
 * group with no instruction can still carry its tokens. */
void npu_pb_or_sync(npu_pb_t *b, npu_prog_t *l, unsigned op);

/* The dram_addr field for byte address a: fails (returning 0) past 32 bits or odd (the DMA takes
 * any element-aligned address, docs/isa.md). */
uint32_t npu_pb_dram(npu_pb_t *b, uint64_t a);

/* The weight bank of the next stationary tile; the next call gives the other bank. */
unsigned npu_pb_bank(npu_pb_t *b);
/* The first OBUF row of half i % 2 (steps alternate halves: one fills while the other drains). */
unsigned npu_pb_obuf_half(const npu_pb_t *b, long i);

/* Index of the first / last instruction of l with opcode op (a mask of 1u << op for any of
 * several), or NPU_PB_NONE. */
#define NPU_PB_NONE ((size_t)-1)
size_t npu_pb_first_op(const npu_prog_t *l, unsigned opmask);
size_t npu_pb_last_op(const npu_prog_t *l, unsigned opmask);
#define NPU_PB_OP(op) (1u << (op))

/* ---- the step graph ---------------------------------------------------------------------- */

enum { NPU_PB_L2E, NPU_PB_E2L, NPU_PB_E2S, NPU_PB_S2E, NPU_PB_NCHAN }; /* docs/isa.md §3 */
#define NPU_PB_LOADS 3 /* load groups of a step */
#define NPU_PB_WAITS 6

/* One wait of a step:
 *   L2E  EXEC instruction `at` waits for this step's load group `grp` (pushed by its last);
 *   E2L  load group `grp` (its first instruction) waits for step `from`'s EXEC (push_e2l);
 *   E2S  the STOREs (the first) wait for this step's EXEC (push_e2s);
 *   S2E  EXEC instruction `at` waits for step `from`'s STOREs (pushed by the last). */
typedef struct npu_pb_wait {
    int chan;
    long from;
    int grp;
    size_t at;
} npu_pb_wait_t;

typedef struct npu_pb_step {
    npu_prog_t ld[NPU_PB_LOADS]; /* LOAD-queue groups, in LOAD-queue order */
    npu_prog_t ex, st;           /* EXEC- and STORE-queue instructions */
    npu_pb_wait_t wait[NPU_PB_WAITS];
    int nwait;                   /* waits, in the order of their consumers in each queue */
    size_t push_e2l, push_e2s;   /* the EXEC instructions signalling "inputs free" (e2l) and
                                    "results drained" (e2s) */
    unsigned free;               /* 1u << NPU_PB_E2L / NPU_PB_S2E: push even if no one waits */
} npu_pb_step_t;

/* One token inside a stretch of program order the emitter lays out itself: instruction pi of
 * prod pushes on channel chan (NPU_PB_*), instruction ci of cons pops it. */
void npu_pb_link(npu_pb_t *b, int chan, npu_prog_t *prod, size_t pi, npu_prog_t *cons, size_t ci);
/* n steps, every group empty, no waits. NULL when memory runs out (the emission fails). */
npu_pb_step_t *npu_pb_steps(npu_pb_t *b, long n);
void npu_pb_steps_free(npu_pb_step_t *s, long n);
/* Adds a wait to step s (see npu_pb_wait_t; unused arguments 0). */
void npu_pb_wait(npu_pb_t *b, npu_pb_step_t *s, int chan, long from, int grp, size_t at);
/* The waits of chunk i of a double-buffered chunk loop (vector and transpose kernels): its EXEC
 * waits for its loads (L2E) and, i >= 1, for chunk i - 1's STOREs (S2E: the last readers of the
 * buffer half chunk i + 1 reuses); its loads, i >= 2, for chunk i - 1's EXEC (E2L); its STOREs for
 * its EXEC (E2S). */
void npu_pb_wait_chunk(npu_pb_t *b, npu_pb_step_t *s, long i);
/* Sets the token flags of every wait of steps[0..n) and the free pushes. */
void npu_pb_stitch(npu_pb_t *b, npu_pb_step_t *s, long n);
/* Program order of steps whose loads run `ahead` steps early: the loads of steps 0..ahead-1,
 * then per step i the loads of step i + ahead (before its EXEC, or with loads_after after its
 * STOREs), its EXEC, its STOREs; appended to out. */
void npu_pb_order(npu_pb_t *b, const npu_pb_step_t *s, long n, long ahead, int loads_after,
                  npu_prog_t *out);
/* The step graph as a stream, for programs too long to hold as a graph: the steps are built in
 * order into a ring and stitched as they are committed; a program position is emitted as soon as
 * no later wait can change its steps. span: the farthest back (in steps) any wait reaches (the
 * ring holds span + ahead + 1 steps); ahead, loads_after: as npu_pb_order. */
typedef struct npu_pb_stream {
    npu_pb_step_t *ring;
    long ring_n, span, ahead, built, next; /* next: the next program position to emit */
    int loads_after;
    long waited[NPU_PB_NCHAN];
    npu_prog_t *out;
} npu_pb_stream_t;
int npu_pb_stream_init(npu_pb_t *b, npu_pb_stream_t *st, long span, long ahead, int loads_after,
                       npu_prog_t *out);
/* The next step (index st->built), empty; build it, then commit it. */
npu_pb_step_t *npu_pb_stream_step(npu_pb_stream_t *st);
void npu_pb_stream_commit(npu_pb_t *b, npu_pb_stream_t *st);
/* Emits the rest of the program and frees the ring. 0, or -1 after a failure. */
int npu_pb_stream_end(npu_pb_t *b, npu_pb_stream_t *st);

/* Appends l[0..nl) spread over c[0..nc): one of l, then k of c (k = nc / (2 nl), at least 1),
 * until l is done, then the rest of c. The fetcher dispatches in program order, so a block of
 * loads longer than the LOAD queue ahead of compute would hold the compute until most of them
 * had run; spread, both queues stay fed. Orders within l and within c are kept. */
void npu_pb_spread(npu_pb_t *b, npu_prog_t *out, const npu_insn_t *l, size_t nl, const npu_insn_t *c,
                   size_t nc);

#endif
